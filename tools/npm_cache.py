"""Pinned npm packages for the benchmarks, installed once into an ignored
folder under .cache/ (never committed, never bundled): TF.js for
tools/bench.py; onnxruntime-web (through tools/ort_web.ensure_ort, one folder per
version) for the ORT client suite, the gallery's ORT card and tools/bench_ort.py.

    from npm_cache import ensure
    problem = ensure(ROOT / ".cache" / "node", {"@tensorflow/tfjs-core": "4.22.0"}, "TF.js for tools/bench.py")

Each folder gets its own package.json listing exactly its packages, so two
benchmarks never prune each other's installs.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


def installed(folder: Path, packages: dict) -> bool:
    for pkg, version in packages.items():
        meta = folder / "node_modules" / pkg / "package.json"
        if not meta.exists() or json.loads(meta.read_text()).get("version") != version:
            return False
    return True


def ensure(folder: Path, packages: dict, purpose: str, npm_args=(), timeout: float = 900) -> str | None:
    """Install `packages` ({name: exact version}) into folder/node_modules unless
    they are there; None when ready, else a sentence saying why not. `npm_args`:
    extra npm flags (short fetch timeouts where an unreachable registry must be a
    quick, clear skip)."""
    if installed(folder, packages):
        return None
    npm = shutil.which("npm")
    if not npm:
        return f"npm not found ({purpose} could not be installed)"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(json.dumps({
        "name": "webnn-polyfill-" + folder.name.replace(".", ""), "private": True,
        "description": f"{purpose} (installed by tools/npm_cache.py; not committed)",
        "dependencies": packages}, indent=2) + "\n")
    print(f"npm_cache: installing {', '.join(f'{k}@{v}' for k, v in packages.items())} into {folder} (npm)",
          file=sys.stderr, flush=True)
    try:
        proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *npm_args], cwd=folder,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f"npm install timed out after {timeout:g} s (is the npm registry reachable?)"
    if proc.returncode != 0 or not installed(folder, packages):
        return f"npm install failed: {(proc.stderr or proc.stdout).strip()[-500:]}"
    return None
