// Bytecode for the first-visit archives, made by the very Python the polyfill runs:
// Pyodide (CPython 3.12 in wasm) from the verified runtime files, under Node. Called by
// tools/start_archives.py (issue 34): with the archives' .pyc files a start does not
// compile the Python it imports.
//
//   node tools/compile_pyc.mjs RUNTIME_DIR STDLIB_START.zip SITE_START.zip MODULES_JSON OUT.zip
//
// It starts Pyodide the way js/src/startup.js does — the start stdlib archive (source) as
// its standard library, the site archive's files written into site-packages — imports
// MODULES_JSON (a JSON list of module names; an ImportError is skipped, as startup.js
// does for its warm modules), and compiles every module of the two archives that this
// start imported: the set is what the runtime loads, not a guess. OUT.zip (stored):
// `stdlib/<member>c` and `site/<member>c` for each such `<member>.py` of the archives, an
// unchecked hash-based pyc (PEP 552: the source's hash in the header, never checked; a
// sourceless .pyc is loaded as it is) of the code compile() makes with optimize=0
// (docstrings and asserts stay) and without column positions (PYTHONNODEBUGRANGES:
// tracebacks lose their ^^^ markers, nothing else; the files shrink by a quarter), named
// by the path the source has at run time (what a traceback names). stdout: one JSON
// line with the interpreter's version, importlib.util.MAGIC_NUMBER (hex), cache tag and
// the compiled members.
import { createRequire } from 'module';
import fs from 'fs';
import path from 'path';

const [runtimeDir, stdlibZip, siteZip, modulesJson, outZip] = process.argv.slice(2);
if (!outZip) {
  process.stderr.write('usage: node tools/compile_pyc.mjs RUNTIME_DIR STDLIB_START.zip SITE_START.zip MODULES_JSON OUT.zip\n');
  process.exit(2);
}
const indexURL = path.resolve(runtimeDir) + path.sep;
const require = createRequire(import.meta.url);
const { loadPyodide } = require(indexURL + 'pyodide.js');
const pyodide = await loadPyodide({
  indexURL, stdLibURL: path.resolve(stdlibZip), fullStdLib: false,
  env: { PYTHONNODEBUGRANGES: '1' },
  stdout: (s) => process.stderr.write(s + '\n'),  // stdout carries the report only
});
// The start, as js/src/startup.js makes it: site-packages' files written from JS, then the
// imports, before this script's own Python imports anything (what it imports would
// otherwise count as the start's).
const SITE_PACKAGES = '/lib/python3.12/site-packages';
const { storedZipMembers } = await import(new URL('../js/src/stored_zip.js', import.meta.url));
for (const [name, bytes] of storedZipMembers(new Uint8Array(fs.readFileSync(siteZip)))) {
  const full = `${SITE_PACKAGES}/${name}`;
  pyodide.FS.mkdirTree(full.slice(0, full.lastIndexOf('/')));
  pyodide.FS.writeFile(full, bytes);
}
pyodide.FS.writeFile('/tmp/site-start.zip', fs.readFileSync(siteZip));
const modules = JSON.parse(fs.readFileSync(modulesJson, 'utf8'));
let report;
try {
  pyodide.runPython(`import importlib, sys
for name in ${JSON.stringify(modules)}:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
_started = sorted((name, getattr(getattr(module, "__spec__", None), "origin", None) or "")
                  for name, module in list(sys.modules.items()))`);
  report = pyodide.runPython(`
import importlib.util, json, sys, zipfile
from importlib._bootstrap_external import _code_to_hash_pyc

if "numpy" not in dict(_started):
    raise SystemExit("compile_pyc: the start did not import numpy")
SITE = "${SITE_PACKAGES}"
STDLIB = next(p for p in sys.path if p.endswith(".zip"))

# Column positions off (PYTHONNODEBUGRANGES) or the files are a quarter larger.
if any(col is not None for _, _, col, _ in compile("x = 1", "<check>", "exec").co_positions()):
    raise SystemExit("compile_pyc: PYTHONNODEBUGRANGES did not take effect")

compiled = set()
with zipfile.ZipFile(STDLIB) as zstd, zipfile.ZipFile("/tmp/site-start.zip") as zsite, \\
        zipfile.ZipFile("/tmp/out.zip", "w", zipfile.ZIP_STORED) as zout:
    archives = {"stdlib": (zstd, STDLIB + "/"), "site": (zsite, SITE + "/")}
    for name, where in _started:
        for key, (z, prefix) in archives.items():
            if where.startswith(prefix) and where.endswith(".py"):
                member = where[len(prefix):]
                if f"{key}/{member}" in compiled:
                    continue
                source = z.read(member)
                # A new string held here while marshal runs: marshal flags an object for
                # back-references by its reference count, so a name shared with the
                # module's spec or a temporary one would make the bytes depend on state.
                filename = "".join((prefix, member))
                code = compile(source, filename, "exec", dont_inherit=True, optimize=0)
                data = _code_to_hash_pyc(code, importlib.util.source_hash(source), False)
                info = zipfile.ZipInfo(f"{key}/{member}c", date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                zout.writestr(info, data)
                del code, filename
                compiled.add(f"{key}/{member}")
json.dumps({"version": list(sys.version_info[:3]), "implementation": sys.implementation.name,
            "magic": importlib.util.MAGIC_NUMBER.hex(), "cacheTag": sys.implementation.cache_tag,
            "compiled": sorted(compiled)})
`);
} catch (e) {  // the Python traceback only, not Pyodide's whole minified source
  process.stderr.write(`compile_pyc: ${e.message || e}\n`);
  process.exit(1);
}
fs.writeFileSync(outZip, pyodide.FS.readFile('/tmp/out.zip'));
process.stdout.write(report + '\n');
process.exit(0);
