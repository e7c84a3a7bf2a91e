"""The first-visit archives: only the Python files a start needs (issue 34).

A first visit used to fetch the whole standard library (python_stdlib.zip) and the
whole numpy wheel (19 compiled modules, of which a start loads 3). Built here from
those two verified files and the core wheel:

- `python_stdlib-start-<hash>.zip`: the standard-library modules that Pyodide's own
  bootstrap, numpy's import, the engine (webnn_core, every module but the
  CPython-only command-line tools) and the grammar library of the StableHLO
  importer (lark) import, found by reading their import statements (the engine's
  and lark's anywhere in a module, functions included: those are its lazy paths;
  the standard library's and numpy's at module level). Pyodide mounts it where it
  mounts the whole one (/lib/python312.zip, read by zipimport).
- `webnn-site-start-<hash>.zip`: numpy's modules that `import numpy` and the engine
  load at start (their Python files and 3 of the 19 compiled modules), and the core
  wheel's files. js/src/startup.js unpacks it into site-packages in JS (nothing of
  it passes through the engine's memory, so none of it ends up in a snapshot).

Both are stored uncompressed (ZIP_STORED): a server's brotli/zstd/gzip of the whole
archive is 20-40 % smaller than the per-file deflate inside a wheel, and unpacking
is slicing. The modules a start imports are there as bytecode, sourceless
`name.pyc` in place of `name.py` (zipimport and site-packages' FileFinder load those
as they are): Pyodide's stdlib and the wheels ship source only, and compiling it was
~1.4 s of a start's CPU. The bytecode is made by Pyodide itself under Node
(tools/compile_pyc.mjs: CPython 3.12 of the verified runtime, which imports what a
start imports and compiles exactly those), cached in .cache/pyc/ by the hash of its
inputs; the other modules (lazy paths: importers, tools) stay source, which is
smaller on the wire than bytecode (docs/performance.md, "Bytecode in the
first-visit archives"). Anything outside them is fetched on demand from the full files, which
stay in dist/ (py/webnn_core/ondemand.py; the module names it covers are returned
here and baked into the script).
"""
from __future__ import annotations

import ast
import hashlib
import io
import json
import re
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path, PurePosixPath

# Pyodide's bootstrap (pyodide.asm.js / _pyodide) and its codec lookups: always there.
STDLIB_ROOTS = ["encodings", "encodings.aliases", "encodings.utf_8", "encodings.utf_8_sig",
                "encodings.ascii", "encodings.latin_1", "encodings.cp437", "encodings.utf_16", "encodings.utf_16_le",
                "encodings.utf_16_be", "encodings.utf_32", "encodings.raw_unicode_escape",
                "encodings.unicode_escape", "encodings.idna", "encodings.punycode", "site", "sysconfig",
                "_sysconfigdata__emscripten_wasm32-emscripten", "sitecustomize",
                # What the Python that js/src runs imports (startup.js, xla.js).
                "importlib", "gc", "json", "random", "sysconfig", "zipfile", "hashlib",
                # What numpy's compiled modules import: datetime (numpy's C API, at start),
                # secrets (numpy.random's bit generators).
                "datetime", "secrets",
                # What importlib imports inside its functions when a package's data is read
                # (lark's grammar files through pkgutil.get_data / importlib.resources).
                "importlib.readers", "importlib.resources.readers"]
STDLIB_PACKAGES = ("_pyodide", "pyodide")  # every module of these: Pyodide's bootstrap imports them from C
# numpy modules a start imports by name at run time: add_newdoc() imports the
# module it documents; numpy._core._internal imports numpy.dtypes in a function
# `import numpy` calls.
NUMPY_TOOLS = re.compile(r"/(tests|testing|f2py|distutils|_pyinstaller|typing|_typing)/|conftest|testutils|_pytesttester")
NUMPY_ROOTS = {"numpy", "numpy._core._multiarray_tests", "numpy.dtypes"}
# Engine modules that run only in CPython (command-line tools), and standard-library
# modules the engine imports only on CPython-only paths (the native kernels' ctypes
# loader; a thread pool Pyodide cannot start).
ENGINE_EXCLUDED = re.compile(r"(^|\.)__main__$")
CPYTHON_ONLY = {"argparse"}
# A file of a package that a start loads: not C headers, stubs, Cython sources or tests.
NOT_RUNTIME = re.compile(r"\.(h|pyi|pxd|c|cpp)$|/(tests|include)/")
SO_SUFFIX = ".cpython-312-wasm32-emscripten.so"
# The engine's packages a start does not import (the NNEF and StableHLO importers, front
# ends a page may never use): left out of the site archive, fetched with the core wheel
# on their first import (py/webnn_core/ondemand.py). 0.14 MB brotli of a first visit.
# (Were a start to import one, tools/compile_pyc.mjs's start would fail the build.)
LAZY_CORE = ("webnn_core/nnef/", "webnn_core/nnef2/", "webnn_core/xla/")


def module_name(path: str) -> str | None:
    """'a/b/c.py' -> 'a.b.c', 'a/b/__init__.py' -> 'a.b', bytecode (.pyc) and extension modules alike."""
    if path.endswith(SO_SUFFIX):
        path = path[: -len(SO_SUFFIX)]
    elif path.endswith(".py"):
        path = path[:-3]
    elif path.endswith(".pyc"):
        path = path[:-4]
    else:
        return None
    parts = path.split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts) if parts else None


class Tree:
    """Modules of one zip (name -> member path) and their sources."""

    def __init__(self, zf: zipfile.ZipFile, prefix: str = ""):
        self.zf = zf
        self.files = {}
        for name in zf.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                mod = module_name(name[len(prefix):])
                if mod and (mod not in self.files or name.endswith(".py")):
                    self.files[mod] = name
        self.packages = {m for m, f in self.files.items() if f.endswith("__init__.py")}

    def source(self, mod: str) -> str | None:
        f = self.files.get(mod)
        return self.zf.read(f).decode("utf-8", "replace") if f and f.endswith(".py") else None


def _is_main_guard(test) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__")


def _is_windows_test(test) -> bool:
    """`sys.platform == 'win32'` / `os.name == 'nt'` (Pyodide's are 'emscripten' / 'posix')."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)
            and isinstance(test.comparators[0], ast.Constant)):
        return False
    left, value = ast.unparse(test.left), test.comparators[0].value
    return (left, value) in {("sys.platform", "win32"), ("os.name", "nt"), ("_os.name", "nt")}


def _imports(source: str, package: str, deep: bool) -> set[str]:
    """Absolute names a module's import statements name (module level only unless `deep`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # newer syntax than this Python's: fall back to the statements' text
        names = set(re.findall(r"^\s*import\s+([\w.]+)", source, re.M))
        names |= set(re.findall(r"^\s*from\s+([\w.]+)\s+import", source, re.M))
        return {n for n in names if not n.startswith(".")}
    out = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                out.update(a.name for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                out.add(mod)
                out.update(f"{mod}.{a.name}" for a in child.names if a.name != "*")
            if isinstance(child, ast.If) and _is_main_guard(child.test):
                continue  # `if __name__ == "__main__":` runs only as a script
            if isinstance(child, ast.If) and _is_windows_test(child.test):
                for node in child.orelse:  # Pyodide is not Windows: only the else branch runs
                    visit(ast.Module(body=[node], type_ignores=[]))
                continue
            if deep or not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                visit(child)

    visit(tree)
    return out


def closure(trees: list[Tree], roots: set[str], deep_prefixes: tuple = (), excluded: set = frozenset()) -> set[str]:
    """Every module of `trees` that `roots` import, transitively (with their parent packages)."""
    found: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if not name or name in found or name.split(".")[0] in excluded:
            continue
        tree = next((t for t in trees if name in t.files), None)
        if tree is None:
            continue
        found.add(name)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        src = tree.source(name)
        if src is not None:
            package = name if name in tree.packages else ".".join(parts[:-1])
            todo.extend(_imports(src, package, name.startswith(deep_prefixes)))
    return found


ROOT = Path(__file__).resolve().parent.parent
PYC_CACHE = ROOT / ".cache" / "pyc"
COMPILE_PYC = Path(__file__).resolve().parent / "compile_pyc.mjs"
STARTUP_JS = ROOT / "js" / "src" / "startup.js"
# CPython 3.12's importlib.util.MAGIC_NUMBER (3531, Lib/importlib/_bootstrap_external.py): every .pyc must carry
# it, and the runtime must report it. Another Pyodide (another Python) fails the build here
# until this and SO_SUFFIX are updated together.
PYC_MAGIC = bytes.fromhex("cb0d0d0a")
PYC_VERSION = (3, 12)
PYC_FLAGS = 0b01  # PEP 552: hash-based, never checked against a source (there is none)


class CompileError(RuntimeError):
    pass


def start_modules(startup_js: Path = STARTUP_JS) -> list[str]:
    """What a start imports by name (js/src/startup.js ENGINE_MODULES and WARM_MODULES), the
    finder it installs first and what its connect() imports."""
    text = startup_js.read_text()
    names = []
    for const in ("ENGINE_MODULES", "WARM_MODULES"):
        m = re.search(rf"const {const} = \[(.*?)\];", text, re.S)
        if not m:
            raise CompileError(f"no `const {const} = [...]` in {startup_js}: tools/start_archives.py reads the "
                               "modules a start imports from it")
        names += re.findall(r"'([\w.]+)'", m.group(1))
    return ["webnn_core.ondemand", "json", *names]


def _runtime_key(runtime_dir: Path) -> str:
    h = hashlib.sha256()
    for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm"):
        h.update(hashlib.sha256((runtime_dir / name).read_bytes()).digest())
    return h.hexdigest()


def check_pyc(name: str, data: bytes, source: bytes | None = None) -> None:
    """A .pyc the runtime loads: CPython 3.12's magic, an unchecked hash-based header and
    (given the source) its hash, the SipHash-1-3 that CPython keys with the magic."""
    import _imp

    if data[:4] != PYC_MAGIC:
        raise CompileError(f"{name}: magic {data[:4].hex()}, not CPython {PYC_VERSION[0]}.{PYC_VERSION[1]}'s "
                           f"{PYC_MAGIC.hex()}")
    if int.from_bytes(data[4:8], "little") != PYC_FLAGS:
        raise CompileError(f"{name}: pyc flags {data[4:8].hex()}, not an unchecked hash-based pyc")
    if source is not None and hasattr(_imp, "source_hash"):
        want = _imp.source_hash(int.from_bytes(PYC_MAGIC, "little"), source)
        if data[8:16] != want:
            raise CompileError(f"{name}: the pyc's source hash is not its source's")


def compile_start(runtime_dir: Path, std_zip: bytes, site_zip: bytes, modules: list[str]) -> dict:
    """{("stdlib" | "site", member.py): .pyc bytes} for every module of the two (source)
    archives that a start imports, made by tools/compile_pyc.mjs in Pyodide under Node;
    cached in .cache/pyc/ by the hash of everything it depends on."""
    key = hashlib.sha256()
    for part in (COMPILE_PYC.read_bytes(), _runtime_key(runtime_dir).encode(), std_zip, site_zip,
                 json.dumps(modules).encode()):
        key.update(hashlib.sha256(part).digest())
    cached = PYC_CACHE / f"{key.hexdigest()[:32]}.zip"
    if not cached.is_file():
        node = shutil.which("node")
        if node is None:
            raise CompileError("node is not on PATH: the first-visit archives' bytecode is compiled by Pyodide "
                               "under Node (tools/compile_pyc.mjs; ./dev setup needs Node 18+ for npm anyway)")
        with tempfile.TemporaryDirectory() as tmp:
            tmp = Path(tmp)
            (tmp / "std.zip").write_bytes(std_zip)
            (tmp / "site.zip").write_bytes(site_zip)
            (tmp / "modules.json").write_text(json.dumps(modules))
            proc = subprocess.run([node, str(COMPILE_PYC), str(runtime_dir), str(tmp / "std.zip"), str(tmp / "site.zip"),
                                   str(tmp / "modules.json"), str(tmp / "out.zip")], capture_output=True, text=True)
            if proc.returncode != 0:
                raise CompileError(f"tools/compile_pyc.mjs failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
            try:
                report = json.loads(proc.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                raise CompileError(f"tools/compile_pyc.mjs printed no report:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
            if (tuple(report["version"][:2]) != PYC_VERSION or report["implementation"] != "cpython"
                    or report["magic"] != PYC_MAGIC.hex() or report["cacheTag"] != "cpython-312"):
                raise CompileError(f"the runtime's Python is not the one these archives are built for "
                                   f"(CPython {PYC_VERSION}, magic {PYC_MAGIC.hex()}): {report}")
            if not report["compiled"]:
                raise CompileError("tools/compile_pyc.mjs compiled nothing: the start it ran imported no module "
                                   "of the archives")
            PYC_CACHE.mkdir(parents=True, exist_ok=True)
            for old in PYC_CACHE.glob("*.zip"):
                old.unlink()
            shutil.copyfile(tmp / "out.zip", cached)
    out = {}
    with zipfile.ZipFile(cached) as z, zipfile.ZipFile(io.BytesIO(std_zip)) as zs, \
            zipfile.ZipFile(io.BytesIO(site_zip)) as zp:
        for name in z.namelist():
            where, member = name.split("/", 1)
            source = member[:-1]
            data = z.read(name)
            check_pyc(name, data, (zs if where == "stdlib" else zp).read(source))
            out[(where, source)] = data
    return out


def with_bytecode(members: list[tuple[str, bytes]], pyc: dict, where: str) -> list[tuple[str, bytes]]:
    """`members` with each compiled module's `.py` replaced by its `.pyc`."""
    return [(n + "c", pyc[where, n]) if (where, n) in pyc else (n, d) for n, d in members]


def _stored_zip(members: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in sorted(members):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
    return out.getvalue()


def _write(dest: Path, stem: str, data: bytes) -> str:
    name = f"{stem}-{hashlib.sha256(data).hexdigest()[:16]}.zip"
    for old in dest.glob(f"{stem}-*.zip"):
        if old.name != name:
            old.unlink()
    target = dest / name
    if not target.is_file() or target.read_bytes() != data:
        target.write_bytes(data)
    return name


def build(dest: Path, stdlib_zip: Path, numpy_wheel: Path, core_wheel: Path, extra_wheels: list[Path],
          runtime_dir: Path | None = None) -> dict:
    """Write both archives into `dest`; returns their names and what each leaves to on demand.
    `runtime_dir`: the verified Pyodide that compiles the bytecode (default: stdlib_zip's folder)."""
    with zipfile.ZipFile(stdlib_zip) as sz, zipfile.ZipFile(numpy_wheel) as nz, zipfile.ZipFile(core_wheel) as cz:
        std, npy, core = Tree(sz), Tree(nz), Tree(cz)
        extras = [Tree(zipfile.ZipFile(w)) for w in extra_wheels]
        engine = {m for m in core.files if m.startswith("webnn_core") and not ENGINE_EXCLUDED.search(m)}
        # numpy at start: `import numpy` and the numpy modules the engine names, module level.
        numpy_roots = NUMPY_ROOTS | {n for m in engine for n in _imports(core.source(m) or "", m, True)
                                    if n.startswith("numpy.")}
        numpy_mods = closure([npy], numpy_roots)
        # The standard library: Pyodide's bootstrap, numpy's start, the engine and lark anywhere.
        lark = {m for t in extras for m in t.files}
        pyodide = {m for m in std.files if m.split(".")[0] in STDLIB_PACKAGES}
        # numpy's on-demand modules too (numpy.random needs secrets, hmac, ...): one
        # on-demand fetch for them, not two.
        numpy_all = {m for m, f in npy.files.items() if not NUMPY_TOOLS.search(f)}
        std_mods = closure([std, npy, core, *extras], set(STDLIB_ROOTS) | pyodide | numpy_all | engine | lark,
                           deep_prefixes=("webnn_core", "lark"), excluded=CPYTHON_ONLY)
        std_keep = {std.files[m] for m in std_mods if m in std.files}
        # A package's data files (e.g. pyodide's py.typed) travel with it; so do non-module files at the top.
        std_members = []
        for info in sz.infolist():
            n = info.filename
            if n.endswith("/"):
                continue
            top_pkg = module_name(n.rsplit("/", 1)[0] + "/__init__.py") if "/" in n else None
            if n in std_keep or (not n.endswith(".py") and top_pkg in std_mods):
                std_members.append((n, sz.read(info)))
        npy_keep = {npy.files[m] for m in numpy_mods if m in npy.files}
        site_members = [(n, nz.read(n)) for n in sorted(npy_keep) if not NOT_RUNTIME.search(n)]
        site_members += [(i.filename, cz.read(i)) for i in cz.infolist()
                         if not i.filename.endswith("/") and ".dist-info/" not in i.filename
                         and not i.filename.startswith(LAZY_CORE)]
        # The modules a start imports as bytecode, compiled by the runtime's own Python.
        std_source, site_source = _stored_zip(std_members), _stored_zip(site_members)
        pyc = compile_start(runtime_dir or stdlib_zip.parent, std_source, site_source, start_modules())
        std_name = _write(dest, "python_stdlib-start", _stored_zip(with_bytecode(std_members, pyc, "stdlib")))
        site_name = _write(dest, "webnn-site-start", _stored_zip(with_bytecode(site_members, pyc, "site")))
        kept_std = {module_name(n) for n, _ in std_members} - {None}
        kept_npy = {module_name(n) for n, _ in site_members} - {None}
        return {
            "stdlib": std_name,
            "site": site_name,
            "libraries": sorted(n for n, _ in site_members if n.endswith(".so")),
            "compiled": len(pyc),
            # Module names the start archives leave out, by the full file that has them.
            "stdlibOnDemand": sorted(set(std.files) - kept_std),
            "numpyOnDemand": sorted(m for m in set(npy.files) - kept_npy
                                    if not NOT_RUNTIME.search(npy.files[m])),
            "coreOnDemand": sorted(m for m in core.files if core.files[m].startswith(LAZY_CORE)),
        }


if __name__ == "__main__":
    import json
    import sys
    import tempfile

    root = Path(__file__).resolve().parent.parent
    dist = root / "dist"
    with tempfile.TemporaryDirectory() as tmp:
        info = build(Path(tmp), dist / "python_stdlib.zip", next(dist.glob("numpy-*.whl")),
                     next(dist.glob("webnn_polyfill-*.whl")), list(dist.glob("lark-*.whl")))
        for key in ("stdlib", "site"):
            size = (Path(tmp) / info[key]).stat().st_size
            print(key, info[key], size, file=sys.stderr)
        print(json.dumps({k: (len(v) if isinstance(v, list) else v) for k, v in info.items()}))
        if "-v" in sys.argv:
            with zipfile.ZipFile(Path(tmp) / info["stdlib"]) as z:
                print(sorted({module_name(n) for n in z.namelist()} - {None}))
            print(info["libraries"])
