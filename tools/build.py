"""Build dist/: the polyfill script (classic + ES module), the core as a pure
wheel, and the verified runtime files beside them.

    python tools/build.py [--no-runtime]
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import shutil
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_kernels  # noqa: E402
import runtime  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
CORE = ROOT / "py" / "webnn_core"
JS_SOURCES = ["idl_tables.js", "webidl.js", "simd.js", "engine.js", "api.js", "nnef.js", "xla.js", "install.js"]


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


def js_body(wheel: str) -> str:
    parts = [f"const POLYFILL_VERSION = {core_version()!r};\nconst CORE_WHEEL = {wheel!r};\n"
             f"const PYODIDE_VERSION = {runtime.VERSION!r};\n"
             f"const LARK_WHEEL = {next(iter(runtime.MANIFEST['wheels']))!r};  // js/src/xla.js loads it on first use\n"]
    for src in JS_SOURCES:
        parts.append(f"// ---- js/src/{src}\n" + (ROOT / "js" / "src" / src).read_text())
    return "\n".join(parts)


def build(with_runtime: bool = True) -> Path:
    DIST.mkdir(exist_ok=True)
    for old in DIST.glob("webnn_core-*.whl"):
        old.unlink()
    wheel = build_wheel(DIST)
    body = js_body(wheel)
    header = "// WebNN polyfill: the W3C WebNN API backed by a Python + numpy engine in Pyodide.\n"
    (DIST / "webnn-polyfill.js").write_text(f"{header}(function () {{\n'use strict';\n{body}\n}})();\n")
    (DIST / "webnn-polyfill.mjs").write_text(
        f"{header}// ES-module entry: importing it installs navigator.ml like the classic script.\n"
        f"const SCRIPT_URL_OVERRIDE = import.meta.url;\n{body}\n"
        "export const ml = globalThis.navigator ? globalThis.navigator.ml : undefined;\n"
        "export default globalThis.webnnPolyfill;\n")
    # SIMD microkernels (csrc/): dist/webnn-kernels.wasm, and the native twin for tests.
    # Without clang/wasm-ld this only warns: the polyfill then runs numpy-only.
    build_kernels.build()
    if with_runtime:
        src = runtime.assemble()
        for f in src.iterdir():
            target = DIST / f.name
            if not target.exists() or target.stat().st_size != f.stat().st_size:
                shutil.copy2(f, target)
    print(f"build: dist/ ready ({wheel})", file=sys.stderr)
    return DIST


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--no-runtime", action="store_true", help="skip assembling the Pyodide runtime")
    args = p.parse_args(argv)
    try:
        build(with_runtime=not args.no_runtime)
    except runtime.RuntimeError_ as e:
        print(f"build: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
