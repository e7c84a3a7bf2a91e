"""Build dist/: the polyfill script (classic + ES module), the core as a pure
wheel, and the verified runtime files beside them.

    python tools/build.py [--no-runtime]

The scripts are bundled from the ES modules in js/src/ by esbuild (npm, see
package.json; `./dev setup` runs `npm ci`); the wheel is built from
pyproject.toml by the standard PEP 517 front end `build` with the hatchling
back end. One version for both: __version__ in py/webnn_core/__init__.py.
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
import runtime  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "dist"
CORE = ROOT / "py" / "webnn_core"
JS_SRC = ROOT / "js" / "src"
ESBUILD = ROOT / "node_modules" / ".bin" / "esbuild"
HEADER = "// WebNN polyfill: the W3C WebNN API backed by a Python + numpy engine in Pyodide."
# Entry points in js/src/ -> bundles in dist/ (format, whether it is the ES-module build).
BUNDLES = {"webnn-polyfill.js": ("install.js", "iife", False), "webnn-polyfill.mjs": ("module.js", "esm", True)}


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


def bundle(entry: str, out: Path, fmt: str, es_module: bool, wheel: str) -> None:
    """One esbuild bundle of js/src/<entry>, with the build facts of js/src/build_info.js defined."""
    if not ESBUILD.exists():
        raise BuildError(f"{ESBUILD.relative_to(ROOT)} is missing (run ./dev setup, which runs npm ci)")
    defines = {"__WEBNN_POLYFILL_VERSION__": json.dumps(core_version()), "__WEBNN_CORE_WHEEL__": json.dumps(wheel),
               "__WEBNN_PYODIDE_VERSION__": json.dumps(runtime.VERSION), "__WEBNN_MODULE_URL__": "import.meta.url" if es_module else "null"}
    banner = HEADER + ("\n// ES-module entry: importing it installs navigator.ml like the classic script." if es_module
                       else "\n'use strict';")
    cmd = [str(ESBUILD), str(JS_SRC / entry), "--bundle", f"--format={fmt}", "--charset=utf8",
           f"--outfile={out}", f"--banner:js={banner}", "--log-level=warning",
           *[f"--define:{k}={v}" for k, v in defines.items()]]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0 or proc.stderr.strip():
        raise BuildError(f"esbuild {entry}: {proc.stderr.strip()}")


def build(with_runtime: bool = True) -> Path:
    DIST.mkdir(exist_ok=True)
    for old in [*DIST.glob("webnn_core-*.whl"), *DIST.glob("webnn_polyfill-*.whl")]:
        old.unlink()
    wheel = build_wheel(DIST)
    for name, (entry, fmt, es_module) in BUNDLES.items():
        bundle(entry, DIST / name, fmt, es_module, wheel)
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
    except (runtime.RuntimeError_, BuildError) as e:
        print(f"build: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
