"""Build dist/: the polyfill script (classic + ES module), the core as a pure
wheel, and the verified runtime files beside them.

    python tools/build.py [--no-runtime]
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import shutil
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_kernels  # noqa: E402
import engine_snapshot  # noqa: E402
import runtime  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
CORE = ROOT / "py" / "webnn_core"
JS_SOURCES = ["idl_tables.js", "webidl.js", "simd.js", "startup.js", "engine.js", "api.js", "nnef.js", "install.js"]


def core_version() -> str:
    for line in (CORE / "__init__.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split("=")[1].strip().strip("\"'")
    raise SystemExit("no __version__ in webnn_core/__init__.py")


def build_wheel(dest: Path) -> str:
    """A pure-Python wheel of webnn_core, written directly (no build backend needed)."""
    version = core_version()
    name = f"webnn_core-{version}-py3-none-any.whl"
    dist_info = f"webnn_core-{version}.dist-info"
    files = {}
    for path in sorted(CORE.rglob("*.py")):
        files[f"webnn_core/{path.relative_to(CORE).as_posix()}"] = path.read_bytes()
    files[f"{dist_info}/METADATA"] = f"Metadata-Version: 2.1\nName: webnn_core\nVersion: {version}\nRequires-Dist: numpy\n".encode()
    files[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: webnn-polyfill tools/build.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{dist_info}/top_level.txt"] = b"webnn_core\n"
    record = []
    for arcname, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(dest / name, "w", zipfile.ZIP_DEFLATED) as z:
        for arcname, data in files.items():
            info = zipfile.ZipInfo(arcname, date_time=(2024, 1, 1, 0, 0, 0))  # reproducible
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return name


RUNTIME_FILES = ["pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
                 "pyodide-lock.json"]


def file_entry(path: Path) -> dict:
    return {"sha256": runtime.sha256(path), "size": path.stat().st_size}


def runtime_manifest(runtime_dir: Path, wheel: str) -> dict:
    """What the built script verifies every runtime file against (js/src/startup.js)."""
    files = {name: file_entry(runtime_dir / name) for name in RUNTIME_FILES}
    numpy = runtime.numpy_entry(runtime_dir / "pyodide-lock.json")
    files[numpy["file_name"]] = {"sha256": numpy["sha256"], "size": (runtime_dir / numpy["file_name"]).stat().st_size}
    files[wheel] = file_entry(DIST / wheel)
    return {"files": files, "numpyWheel": numpy["file_name"], "snapshot": None}


def js_body(wheel: str, manifest: dict) -> str:
    parts = [f"const POLYFILL_VERSION = {core_version()!r};\nconst CORE_WHEEL = {wheel!r};\n"
             f"const PYODIDE_VERSION = {runtime.VERSION!r};\n"
             f"const RUNTIME_MANIFEST = {json.dumps(manifest, indent=1, sort_keys=True)};\n"]
    for src in JS_SOURCES:
        parts.append(f"// ---- js/src/{src}\n" + (ROOT / "js" / "src" / src).read_text())
    return "\n".join(parts)


def write_scripts(wheel: str, manifest: dict) -> None:
    body = js_body(wheel, manifest)
    header = "// WebNN polyfill: the W3C WebNN API backed by a Python + numpy engine in Pyodide.\n"
    (DIST / "webnn-polyfill.js").write_text(f"{header}(function () {{\n'use strict';\n{body}\n}})();\n")
    (DIST / "webnn-polyfill.mjs").write_text(
        f"{header}// ES-module entry: importing it installs navigator.ml like the classic script.\n"
        f"const SCRIPT_URL_OVERRIDE = import.meta.url;\n{body}\n"
        "export const ml = globalThis.navigator ? globalThis.navigator.ml : undefined;\n"
        "export default globalThis.webnnPolyfill;\n")


def build(with_runtime: bool = True, with_snapshot: bool = True) -> Path:
    DIST.mkdir(exist_ok=True)
    for old in DIST.glob("webnn_core-*.whl"):
        old.unlink()
    wheel = build_wheel(DIST)
    src = runtime.assemble() if with_runtime else runtime.DEFAULT_DEST
    manifest = runtime_manifest(src, wheel)
    write_scripts(wheel, manifest)
    # SIMD microkernels (csrc/): dist/webnn-kernels.wasm, and the native twin for tests.
    # Without clang/wasm-ld this only warns: the polyfill then runs numpy-only.
    build_kernels.build()
    if with_runtime:
        for f in src.iterdir():
            target = DIST / f.name
            if not target.exists() or target.stat().st_size != f.stat().st_size:
                shutil.copy2(f, target)
        # The engine snapshot for first visits (needs headless Chromium; without
        # it the polyfill starts normally). Its hash goes into the script.
        snapshot = engine_snapshot.build(DIST, manifest, core_version(), wheel) if with_snapshot else None
        for old in DIST.glob("webnn-engine-*.snapshot.gz"):
            if snapshot is None or old.name != snapshot["file"]:
                old.unlink()
        if snapshot:
            manifest["files"][snapshot["file"]] = {"sha256": snapshot["sha256"], "size": snapshot["size"]}
            manifest["snapshot"] = {"file": snapshot["file"], "key": snapshot["key"]}
            write_scripts(wheel, manifest)
    print(f"build: dist/ ready ({wheel})", file=sys.stderr)
    return DIST


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-runtime", action="store_true", help="skip assembling the Pyodide runtime")
    p.add_argument("--no-snapshot", action="store_true",
                   help="skip the build-time engine snapshot (also: WEBNN_NO_BUILD_SNAPSHOT=1)")
    args = p.parse_args(argv)
    try:
        build(with_runtime=not args.no_runtime,
              with_snapshot=not (args.no_snapshot or os.environ.get("WEBNN_NO_BUILD_SNAPSHOT")))
    except runtime.RuntimeError_ as e:
        print(f"build: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
