"""Run the schema generator (tools/idl_schema.mjs, Node + npm `webidl2`) from Python.

    python tools/idl_schema.py [--idl 2026-09|2025-03|FILE]

Installs the npm build dependencies with `npm ci` the first time (and again when
package-lock.json changes), then writes py/webnn_core/idl_schema.json. Called by
tools/build.py and by the test suite's conftest, so it is cheap when nothing changed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "py" / "webnn_core" / "idl_schema.json"
GENERATOR = ROOT / "tools" / "idl_schema.mjs"
LOCK = ROOT / "package-lock.json"
STAMP = ROOT / "node_modules" / ".installed-lock.json"


class SchemaError(Exception):
    pass


def npm_ci() -> None:
    """`npm ci` unless node_modules matches package-lock.json (the same stamp ./dev setup keeps)."""
    if STAMP.is_file() and STAMP.read_bytes() == LOCK.read_bytes():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SchemaError("npm is missing (Debian: apt-get install nodejs npm; ./dev setup does it)")
    print("idl_schema: npm ci (build-time dependencies: webidl2, esbuild)", file=sys.stderr)
    proc = subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=ROOT)
    if proc.returncode != 0:
        raise SchemaError("npm ci failed")
    shutil.copyfile(LOCK, STAMP)


def generate(idl: str | None = None, out: Path = SCHEMA) -> Path:
    """Write the schema for `idl` (a version name or a file; default $WEBNN_IDL or 2026-09)."""
    npm_ci()
    node = shutil.which("node")
    if node is None:
        raise SchemaError("node is missing (Debian: apt-get install nodejs)")
    cmd = [node, str(GENERATOR), "--out", str(out)]
    if idl:
        cmd += ["--idl", idl]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SchemaError(f"tools/idl_schema.mjs failed:\n{proc.stderr}")
    return out


def ensure() -> Path:
    """Generate the schema if it is missing or older than its inputs, keeping the IDL it
    was built from (the test suite calls this, so a fresh clone's pytest needs no build)."""
    inputs = [GENERATOR, ROOT / "spec" / "extensions.json", LOCK, *sorted((ROOT / "spec").glob("*.idl"))]
    if SCHEMA.is_file():
        built = SCHEMA.stat().st_mtime
        if all(p.stat().st_mtime <= built for p in inputs):
            return SCHEMA
        idl_file = ROOT / "spec" / json.loads(SCHEMA.read_text()).get("idl", "")
        return generate(str(idl_file) if idl_file.is_file() else None)
    return generate()


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--idl", default=os.environ.get("WEBNN_IDL"))
    args = p.parse_args(argv)
    try:
        print(generate(args.idl))
    except SchemaError as e:
        print(f"idl_schema: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
