"""Build dist/: the polyfill script (classic + ES module), the core as a pure
wheel, and the verified runtime files beside them.

    python tools/build.py [--no-runtime] [--no-snapshot] [--idl 2026-09|2025-03|FILE]

The scripts are bundled from the ES modules in js/src/ by esbuild (npm, see
package.json; `./dev setup` runs `npm ci`); the wheel is built from
pyproject.toml by the standard PEP 517 front end `build` with the hatchling
back end. One version for both: __version__ in py/webnn_core/__init__.py.

The WebIDL schema (py/webnn_core/idl_schema.json) is generated first from the
chosen IDL file (--idl 2026-09|2025-03|FILE, default $WEBNN_IDL or the 2026
IDL) by tools/idl_schema.mjs; the JS shim bundles it and the wheel carries it
for the Python core.

Last, the gallery's default model (a digit classifier, tools/train_digits.py) is
trained into .cache/gallery/ unless it is already there.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_kernels  # noqa: E402
import engine_snapshot  # noqa: E402
import idl_schema  # noqa: E402
import precompress  # noqa: E402
import runtime  # noqa: E402
import start_archives  # noqa: E402
import train_digits  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
CORE = ROOT / "py" / "webnn_core"
JS_SRC = ROOT / "js" / "src"
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
HEADER = "// WebNN polyfill: the W3C WebNN API backed by a Python + numpy engine in Pyodide."
# Entry points in js/src/ -> bundles in dist/ (format, whether it is the ES-module build).
BUNDLES = {"webnn-polyfill.js": ("install.js", "iife", False), "webnn-polyfill.mjs": ("module.js", "esm", True)}


PACKAGE = ROOT / "js" / "package"  # the npm package's package.json template and README
SCRIPTS = list(BUNDLES)
TYPES = "webnn-polyfill.d.ts"


class BuildError(Exception):
    pass


def core_version() -> str:
    for line in (CORE / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split("=")[1].strip().strip("\"'")
    raise BuildError("no __version__ in webnn_core/__init__.py")


def build_wheel(dest: Path) -> str:
    """The pure-Python wheel from pyproject.toml (PEP 517: `python -m build`), into dest."""
    with tempfile.TemporaryDirectory() as tmp:
        # Reproducible archive timestamps (hatchling honours SOURCE_DATE_EPOCH).
        env = {**os.environ, "SOURCE_DATE_EPOCH": os.environ.get("SOURCE_DATE_EPOCH", "1704067200")}
        proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", tmp, str(ROOT)],
                              capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            raise BuildError(f"wheel build failed (python -m build; ./dev setup installs it):\n{proc.stdout}{proc.stderr}")
        (wheel,) = Path(tmp).glob("*.whl")
        shutil.copyfile(wheel, dest / wheel.name)
        return wheel.name


# Runtime files besides the wheels, each verified in the browser (js/src/startup.js).
RUNTIME_FILES = ["pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json"]
KERNEL_FILES = ["webnn-kernels.wasm", "webnn-kernels-relaxed.wasm", "webnn-kernels-threads.wasm",
                "webnn-kernels-threads-relaxed.wasm"]


def file_entry(path: Path) -> dict:
    return {"sha256": runtime.sha256(path), "size": path.stat().st_size}


def runtime_manifest(runtime_dir: Path, wheel: str) -> dict:
    """sha256 and size of every file the built script loads (baked into it)."""
    files = {name: file_entry(runtime_dir / name) for name in RUNTIME_FILES if (runtime_dir / name).is_file()}
    lock = runtime_dir / "pyodide-lock.json"
    numpy = runtime.numpy_entry(lock) if lock.is_file() else None
    if numpy:
        files[numpy["file_name"]] = {"sha256": numpy["sha256"], "size": (runtime_dir / numpy["file_name"]).stat().st_size}
    for name in [wheel, *KERNEL_FILES]:
        if (DIST / name).is_file():
            files[name] = file_entry(DIST / name)
    for name in runtime.MANIFEST.get("wheels", {}):  # extra pure-Python wheels (lark, for js/src/xla.js)
        if (runtime_dir / name).is_file():
            files[name] = file_entry(runtime_dir / name)
    manifest = {"files": files, "numpyWheel": numpy and numpy["file_name"], "snapshot": None}
    manifest["firstVisit"] = first_visit(manifest, wheel)
    return manifest


def first_visit(manifest: dict, wheel: str) -> list:
    """The runtime files a first visit fetches (besides the script itself), in the order the page
    starts them (js/src/startup.js, js/src/simd.js). The one list of them: baked into the script
    (RUNTIME_MANIFEST.firstVisit), written into dist/package.json (webnnPolyfill.firstVisit), the
    size report and byte budget below count it, and tests/browser/test_first_visit.py checks it
    against the requests of a real first visit. An entry that is a list: the page fetches one of
    them (the SIMD kernels, by what the browser supports; the report counts the largest; the
    threads build only in cross-origin isolated pages, counted too)."""
    files = manifest["files"]
    start = manifest.get("start")
    if start:  # the first-visit archives (tools/start_archives.py); the full stdlib / numpy on demand
        out = [name for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", start["stdlib"],
                                 "pyodide-lock.json", start["site"]) if name in files]
        # The build-time snapshot only where it pays (js/src/startup.js buildSnapshotPays):
        # not on a first visit over a real network (10 Mbit/s), which this list counts.
    else:
        out = [name for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
                                 "pyodide-lock.json") if name in files]
        if manifest.get("snapshot"):
            out.append(manifest["snapshot"]["file"])  # restored: the wheels are not fetched
        else:
            out += [name for name in (manifest.get("numpyWheel"), wheel) if name in files]
    # The SIMD kernels (js/src/simd.js): the relaxed-SIMD build where the browser has it, else
    # the simd128 one; and in a cross-origin isolated page also the kernel pool's threads build.
    for group in (["webnn-kernels-relaxed.wasm", "webnn-kernels.wasm"],
                  ["webnn-kernels-threads-relaxed.wasm", "webnn-kernels-threads.wasm"]):
        if any(name in files for name in group):
            out.append([name for name in group if name in files])
    return out


# The byte budget of a first visit (tests/dist/test_byte_budget.py holds it).
BUDGET = ROOT / "tools" / "byte-budget.toml"
ENTRY_SCRIPT = "webnn-polyfill.js"


def first_visit_sizes(dist: Path, entries: list) -> list:
    """[(name, raw, gzip, brotli, zstd)] of the entry script and each first-visit entry, as
    tools/serve.py (or a static host with dist/'s precompressed files) sends them: a
    file's .gz / .br sibling when it has one, else the file itself."""
    rows = []
    for entry in [ENTRY_SCRIPT, *entries]:
        options = []
        for name in ([entry] if isinstance(entry, str) else entry):
            path = dist / name
            raw = path.stat().st_size
            sibs = precompress.siblings(path)
            options.append((name, raw, *(sibs[e].stat().st_size if e in sibs else raw for e in ("gzip", "br", "zstd"))))
        name, *sizes = max(options, key=lambda r: r[3])
        if len(options) > 1:
            name = f"{name} (largest of {len(options)})"
        rows.append((name, *sizes))
    return rows


def size_report(rows: list) -> str:
    lines = ["build: a first visit fetches (bytes; gzip / brotli / zstd: as ./dev serve sends them, precompressed in dist/;"
             f" budget: {BUDGET.relative_to(ROOT)}):",
             f"  {'file':<58} {'raw':>11} {'gzip':>11} {'brotli':>11} {'zstd':>11}"]
    for row in [*rows, ("total", *(sum(r[i] for r in rows) for i in (1, 2, 3, 4)))]:
        lines.append(f"  {row[0]:<58} " + " ".join(f"{n:>11,}" for n in row[1:]))
    return "\n".join(lines)


def add_start_archives(manifest: dict, runtime_dir: Path, wheel: str) -> None:
    """The first-visit archives (tools/start_archives.py) into dist/ and the manifest:
    `start` names them, the compiled modules a start loads, and which module names
    the full stdlib / numpy wheel provide on demand (py/webnn_core/ondemand.py)."""
    numpy = manifest["numpyWheel"]
    needed = [runtime_dir / "python_stdlib.zip", runtime_dir / (numpy or "-"), DIST / wheel]
    if not all(p.is_file() for p in needed):
        return
    try:
        info = start_archives.build(DIST, *needed, sorted(runtime_dir.glob("lark-*.whl")), runtime_dir=runtime_dir)
    except start_archives.CompileError as e:  # no silent source-only archives
        raise BuildError(f"the first-visit archives' bytecode: {e}") from e
    for name in (info["stdlib"], info["site"]):
        manifest["files"][name] = file_entry(DIST / name)
    manifest["start"] = {
        "stdlib": info["stdlib"], "site": info["site"], "libraries": info["libraries"],
        "onDemand": [{"file": "python_stdlib.zip", "into": "stdlib", "modules": info["stdlibOnDemand"]},
                     {"file": numpy, "into": "site", "modules": info["numpyOnDemand"]},
                     {"file": wheel, "into": "site", "modules": info["coreOnDemand"]}],
    }


def bundle(entry: str, out: Path, fmt: str, es_module: bool, wheel: str, manifest: dict) -> None:
    """One esbuild bundle of js/src/<entry>, with the build facts of js/src/build_info.js defined."""
    if not ESBUILD.exists():
        raise BuildError(f"{ESBUILD.relative_to(ROOT)} is missing (run ./dev setup, which runs npm ci)")
    defines = {"__WEBNN_POLYFILL_VERSION__": json.dumps(core_version()), "__WEBNN_CORE_WHEEL__": json.dumps(wheel),
               "__WEBNN_PYODIDE_VERSION__": json.dumps(runtime.VERSION), "__WEBNN_MODULE_URL__": "import.meta.url" if es_module else "null",
               "__WEBNN_RUNTIME_MANIFEST__": json.dumps(manifest, sort_keys=True),
               "__WEBNN_LARK_WHEEL__": json.dumps(next(iter(runtime.MANIFEST["wheels"])))}
    banner = HEADER + ("\n// ES-module entry: importing it installs navigator.ml like the classic script." if es_module
                       else "\n'use strict';")
    cmd = [str(ESBUILD), str(JS_SRC / entry), "--bundle", f"--format={fmt}", "--charset=utf8",
           f"--outfile={out}", f"--banner:js={banner}", "--log-level=warning",
           *[f"--define:{k}={v}" for k, v in defines.items()]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or proc.stderr.strip():
        raise BuildError(f"esbuild {entry}: {proc.stderr.strip()}")


def write_types(dest: Path, idl: str | None = None) -> None:
    """dest/webnn-polyfill.d.ts from the same IDL as the schema, the polyfill's
    namespace (js/webnn-polyfill.idl) and spec/extensions.json (tools/idl_dts.mjs)."""
    proc = subprocess.run(["node", str(ROOT / "tools" / "idl_dts.mjs"), "--out", str(dest / TYPES),
                           *(["--idl", idl] if idl else [])], capture_output=True, text=True, cwd=ROOT)
    if proc.returncode != 0:
        raise BuildError(f"tools/idl_dts.mjs failed (./dev setup installs webidl2):\n{proc.stderr}")


def write_package(dest: Path, first_visit_files: list | None = None) -> dict:
    """dest/package.json (npm package `webnn-polyfill`) from js/package/package.json,
    with the shared version and the file lists filled in from what dest holds. The
    precompressed copies (NAME.br, ...) stay out of the package: they are for a static
    host serving dist/ (CDNs that serve npm packages compress on their own)."""
    meta = json.loads((PACKAGE / "package.json").read_text())
    meta["version"] = core_version()
    own = {*SCRIPTS, TYPES, "package.json", "README.md"}
    runtime_files = sorted(f.name for f in dest.iterdir() if f.is_file() and f.name not in own
                           and not f.name.endswith(".tgz") and not precompress.is_sibling(f))
    if not (dest / TYPES).exists():  # declarations not generated (yet): do not promise them
        meta.pop("types")
        for target in meta["exports"].values():
            if isinstance(target, dict):
                target.pop("types", None)
    meta["files"] = [*SCRIPTS, *([TYPES] if (dest / TYPES).exists() else []), *runtime_files]
    meta["webnnPolyfill"]["runtime"] = runtime_files
    if first_visit_files is not None:
        meta["webnnPolyfill"]["firstVisit"] = first_visit_files
    shutil.copyfile(PACKAGE / "README.md", dest / "README.md")
    (dest / "package.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def build(with_runtime: bool = True, with_snapshot: bool = True, idl: str | None = None) -> Path:
    idl_schema.generate(idl)
    DIST.mkdir(exist_ok=True)
    for old in [*DIST.glob("webnn_core-*.whl"), *DIST.glob("webnn_polyfill-*.whl")]:
        old.unlink()
    wheel = build_wheel(DIST)
    # SIMD microkernels (csrc/): dist/webnn-kernels.wasm, and the native twin for tests.
    # Without clang/wasm-ld this only warns: the polyfill then runs numpy-only.
    build_kernels.build()
    src = runtime.assemble() if with_runtime else runtime.DEFAULT_DEST
    manifest = runtime_manifest(src, wheel)
    add_start_archives(manifest, src, wheel)
    manifest["firstVisit"] = first_visit(manifest, wheel)

    def bundles():
        for name, (entry, fmt, es_module) in BUNDLES.items():
            bundle(entry, DIST / name, fmt, es_module, wheel, manifest)

    bundles()
    if with_runtime:
        for f in src.iterdir():
            target = DIST / f.name
            if not target.exists() or target.stat().st_size != f.stat().st_size:
                shutil.copy2(f, target)
        # The engine snapshot for first visits (made in headless Chromium; without
        # it the polyfill starts normally). Its hash then goes into the scripts.
        snapshot = engine_snapshot.build(DIST, manifest, core_version(), wheel) if with_snapshot else None
        for old in DIST.glob("webnn-engine-*.snapshot.gz"):
            if snapshot is None or old.name != snapshot["file"]:
                old.unlink()
        if snapshot:
            manifest["files"][snapshot["file"]] = {"sha256": snapshot["sha256"], "size": snapshot["size"]}
            manifest["snapshot"] = {"file": snapshot["file"], "key": snapshot["key"],
                                    "rawSha256": snapshot["rawSha256"], "rawSize": snapshot["rawSize"]}
            manifest["firstVisit"] = first_visit(manifest, wheel)
            bundles()
    write_types(DIST, idl)
    write_package(DIST, manifest["firstVisit"])  # after the runtime files are in place: it lists them
    # Precompressed copies (NAME.zst / .br / .gz) for servers that send them as they are
    # (tools/serve.py; README "Serving"): only where they save at least 10 %. Last, so that no
    # file is rewritten after its copies (a host that does not compare dates, nginx's
    # gzip_static for one, would send a stale package.json.gz).
    try:
        precompress.precompress(DIST)
    except precompress.MissingLibrary as e:
        print(f"build: warning: no precompressed files in dist/ ({e})", file=sys.stderr)
    print(size_report(first_visit_sizes(DIST, manifest["firstVisit"])), file=sys.stderr)
    print(f"build: dist/ ready ({wheel})", file=sys.stderr)
    gallery_models()
    return DIST


def gallery_models() -> None:
    """The gallery's default model, trained here so that it needs no download (.cache/gallery/)."""
    try:
        train_digits.build()
    except ImportError as e:  # the digits page then says what is missing
        print(f"build: warning: no digit classifier for the gallery ({e}; pip install scikit-learn)", file=sys.stderr)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-runtime", action="store_true", help="skip assembling the Pyodide runtime")
    p.add_argument("--no-snapshot", action="store_true",
                   help="skip the build-time engine snapshot (also: WEBNN_NO_BUILD_SNAPSHOT=1)")
    p.add_argument("--idl", default=None, help="IDL version (2026-09, 2025-03) or file; default: $WEBNN_IDL or 2026-09")
    args = p.parse_args(argv)
    try:
        build(with_runtime=not args.no_runtime,
              with_snapshot=not (args.no_snapshot or os.environ.get("WEBNN_NO_BUILD_SNAPSHOT")), idl=args.idl)
    except (runtime.RuntimeError_, BuildError, idl_schema.SchemaError) as e:
        print(f"build: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
