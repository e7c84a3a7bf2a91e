"""The first-visit archives (tools/start_archives.py) against independent facts:
what native CPython + numpy 2.0.2 import for the engine, its lazy importers and
numpy (every such module that Pyodide's stdlib / numpy wheel has must be in them),
and Python's zipfile for js/src/stored_zip.js (run in Node)."""
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
NODE = shutil.which("node")


def archive(prefix):
    found = sorted(DIST.glob(f"{prefix}-*.zip"))
    if not found:
        pytest.skip(f"no {prefix}-*.zip in dist/ (run ./dev build)")
    return found[-1]


def module_names(names):
    sys.path.insert(0, str(ROOT / "tools"))
    import start_archives

    return {start_archives.module_name(n) for n in names} - {None}


# The engine's start, its lazy importers, and what the JS side runs in Python.
NATIVE_IMPORTS = """
import importlib, json, sys
for name in ["numpy", "webnn_core.bridge", "webnn_core.ops", "webnn_core.backends.cpu.backend",
             "webnn_core.backends.cpu.compile", "webnn_core.backends.cpu.reference", "webnn_core.backends.webgpu",
             "webnn_core.nnef.jsapi", "webnn_core.nnef2.jsapi", "webnn_core.xla", "lark", "zipfile", "sysconfig"]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def native_modules():
    out = subprocess.run([sys.executable, "-c", NATIVE_IMPORTS], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(ROOT / "py"), "PATH": "/usr/bin:/bin"})
    return set(json.loads(out.stdout))


def test_the_stdlib_archive_holds_what_the_engine_imports_natively():
    full = module_names(zipfile.ZipFile(DIST / "python_stdlib.zip").namelist())
    kept = module_names(zipfile.ZipFile(archive("python_stdlib-start")).namelist())
    wanted = {m for m in native_modules() if m in full}
    assert len(wanted) > 80
    assert sorted(wanted - kept) == []
    assert len(kept) < len(full) / 2


def test_the_site_archive_holds_what_import_numpy_loads_natively():
    wheel = next(DIST.glob("numpy-*.whl"))
    full = module_names(zipfile.ZipFile(wheel).namelist())
    kept = module_names(zipfile.ZipFile(archive("webnn-site-start")).namelist())
    loaded = {m for m in native_modules() if m.startswith("numpy") and m in full}
    assert "numpy._core._multiarray_umath" in loaded
    assert sorted(loaded - kept) == []
    assert {"numpy.fft", "numpy.random.mtrand"}.isdisjoint(kept)


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_stored_zip_reader_matches_zipfile():
    path = archive("webnn-site-start")
    driver = r"""
const fs = require('fs');
const crypto = require('crypto');
(async () => {
  const src = fs.readFileSync(process.argv[1], 'utf8');
  const m = await import('data:text/javascript;base64,' + Buffer.from(src).toString('base64'));
  const members = m.storedZipMembers(new Uint8Array(fs.readFileSync(process.argv[2])));
  const out = {};
  for (const [name, bytes] of members) out[name] = crypto.createHash('sha256').update(bytes).digest('hex');
  process.stdout.write(JSON.stringify(out));
})();
"""
    got = json.loads(subprocess.run([NODE, "-e", driver, str(ROOT / "js" / "src" / "stored_zip.js"), str(path)],
                                    capture_output=True, text=True, check=True).stdout)
    import hashlib

    with zipfile.ZipFile(path) as z:
        want = {i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in z.infolist() if not i.is_dir()}
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
    assert got == want
    # A deflated archive (a wheel) is refused, not misread.
    wheel = next(DIST.glob("webnn_polyfill-*.whl"))
    bad = subprocess.run([NODE, "-e", driver, str(ROOT / "js" / "src" / "stored_zip.js"), str(wheel)],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "compressed" in bad.stderr


# What a start imports by name (js/src/startup.js ENGINE_MODULES, WARM_MODULES; the on-demand
# finder and json), run in native CPython without site (-S: no .pth imports of its own).
START_IMPORTS = """
import importlib, json, sys
for name in ["numpy", "webnn_core.bridge", "webnn_core.ops", "webnn_core.backends.cpu",
             "webnn_core.backends.cpu.backend", "webnn_core.backends.cpu.compile",
             "webnn_core.backends.cpu.reference", "webnn_core.backends.webgpu", "webnn_core.ondemand", "json"]:
    importlib.import_module(name)
print(json.dumps(sorted(sys.modules)))
"""


def native_start_modules():
    import numpy

    site = Path(numpy.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-S", "-c", START_IMPORTS], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": f"{ROOT / 'py'}:{site}", "PATH": "/usr/bin:/bin"})
    return set(json.loads(out.stdout))


def sources_of(prefix):
    """{member.py: source} of the full files a start archive is cut from."""
    if prefix == "python_stdlib-start":
        with zipfile.ZipFile(DIST / "python_stdlib.zip") as z:
            return {n: z.read(n) for n in z.namelist() if n.endswith(".py")}
    out = {}
    for wheel in [next(DIST.glob("numpy-*.whl")), next(DIST.glob("webnn_polyfill-*.whl"))]:
        with zipfile.ZipFile(wheel) as z:
            out.update({n: z.read(n) for n in z.namelist() if n.endswith(".py")})
    return out


# CPython 3.12's importlib.util.MAGIC_NUMBER (3531: Lib/importlib/_bootstrap_external.py),
# what Pyodide 0.27.7's Python loads; PEP 552 flags 0b01: hash-based, unchecked.
CPYTHON_312_MAGIC = (3531).to_bytes(2, "little") + b"\r\n"


@pytest.mark.parametrize("prefix", ["python_stdlib-start", "webnn-site-start"])
def test_the_modules_a_start_imports_are_bytecode_of_their_sources(prefix):
    import _imp

    with zipfile.ZipFile(archive(prefix)) as z:
        members = {n: z.read(n) for n in z.namelist()}
    pyc = {n for n in members if n.endswith(".pyc")}
    assert len(pyc) > 100
    sources = sources_of(prefix)
    for name in pyc:
        data = members[name]
        assert data[:4] == CPYTHON_312_MAGIC, (name, data[:4])
        assert int.from_bytes(data[4:8], "little") == 0b01, name
        source = sources[name[:-1]]  # the one the full file holds, byte for byte
        assert data[8:16] == _imp.source_hash(int.from_bytes(CPYTHON_312_MAGIC, "little"), source), name
        assert name[:-1] not in members, f"{name} and its source both"  # sourceless: no bytes twice
    # Every module of the archive that a start imports (native CPython's start, without the
    # modules Python freezes into the interpreter) is bytecode; the rest (lazy paths) is source.
    # (CPython 3.11+ names its frozen modules; 3.12 freezes the same set)
    frozen = set(getattr(_imp, "_frozen_module_names", lambda: [])()) | {
        "importlib._bootstrap", "importlib._bootstrap_external", "_collections_abc", "_sitebuiltins", "abc", "codecs",
        "genericpath", "importlib.machinery", "importlib.util", "io", "ntpath", "os", "posixpath", "site", "stat",
        "zipimport"}
    as_source = {module_names([n]).pop(): n for n in members if n.endswith(".py")}
    started = native_start_modules()
    assert {"numpy", "webnn_core.bridge", "json.decoder"} & started
    assert sorted(m for m in started & set(as_source) if m not in frozen) == []
    assert all(n.endswith(".py") for n in as_source.values())
