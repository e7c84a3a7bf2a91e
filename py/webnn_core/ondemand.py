"""Modules outside the first-visit archives, fetched when first imported (Pyodide only).

A first visit fetches only the standard-library modules, the numpy files and the
engine's modules a start needs (tools/start_archives.py, issue 34). Any other module of
the standard library, numpy or the engine (its NNEF and StableHLO importers) still
imports: the first import of one fetches the full file it comes from (python_stdlib.zip,
the numpy wheel, the core wheel, all kept beside the runtime), checks its sha256
against the one the polyfill's build baked in, and puts it in place; the import then
proceeds as usual. Where that cannot be done (no synchronous fetch in a service
worker, the network gone, a file that fails verification) the import fails with an
ImportError naming the module and the reason.

js/src/startup.js installs the finder (`install()`, before the start's imports, so that
a snapshot holds it) and connects it to a fetch function and the file list of its
build (`connect()`), disconnecting it while it takes a snapshot (a snapshot may hold
no reference to a JS object). Native CPython never installs it.
"""
from __future__ import annotations

import sys

STDLIB_ARCHIVE = f"/lib/python{sys.version_info[0]}{sys.version_info[1]}.zip"


class OnDemandFinder:
    """A sys.meta_path entry after the usual ones: consulted only for names they miss."""

    def __init__(self):
        self.fetch = None     # JS: (file name, module name) -> the file's bytes (Uint8Array), synchronously
        self.sources = []     # [{"file", "sha256", "into": "stdlib" | "site", "modules": {...}}]
        self.site_packages = None
        self.fetched = []     # the files fetched so far (engineStats.onDemand)
        self.failed = {}      # file -> why, so that every later import says the same

    def find_spec(self, name, path=None, target=None):
        source = next((s for s in self.sources if name in s["modules"]), None)
        if source is None or source["file"] in self.fetched:
            return None
        self._install(source, name)
        import importlib.machinery

        invalidate_path_caches()
        return importlib.machinery.PathFinder.find_spec(name, path, target)

    def _install(self, source, name):
        file = source["file"]
        why = self.failed.get(file)
        if why is None:
            try:
                data = self._fetch_verified(source, name)
                if source["into"] == "stdlib":
                    self._replace_stdlib(data)
                else:
                    self._unpack_missing(data)
                self.fetched.append(file)
                return
            except Exception as e:  # noqa: BLE001 - every failure becomes the import's error
                why = self.failed[file] = str(e) or type(e).__name__
        raise ImportError(f"webnn-polyfill: module {name!r} is not in the start-up archive and could not be "
                          f"loaded from {file}: {why}", name=name)

    def _fetch_verified(self, source, name):
        import hashlib

        if self.fetch is None:
            raise RuntimeError("the engine cannot fetch files here (not connected)")
        data = bytes(self.fetch(source["file"], name).to_py())
        digest = hashlib.sha256(data).hexdigest()
        if digest != source["sha256"]:
            raise RuntimeError(f"runtime file {source['file']} failed verification: its sha256 is {digest}, "
                               f"this build of the polyfill expects {source['sha256']}")
        return data

    @staticmethod
    def _replace_stdlib(data):
        # The full archive holds every module of the start-up one (the same files):
        # zipimport re-reads its directory on invalidate_caches(), so the packages
        # already imported from it (their __path__ points into it) find the rest too.
        with open(STDLIB_ARCHIVE, "wb") as f:
            f.write(data)

    def _unpack_missing(self, data):
        import io
        import os
        import zipfile

        with zipfile.ZipFile(io.BytesIO(data)) as z:
            for info in z.infolist():
                target = os.path.join(self.site_packages, info.filename)
                # Not a module's source beside the start archive's bytecode of it (`name.pyc`).
                if target.endswith(".py") and os.path.exists(target + "c"):
                    continue
                if not info.is_dir() and not os.path.exists(target):
                    os.makedirs(os.path.dirname(target), exist_ok=True)
                    with z.open(info) as src, open(target, "wb") as dst:
                        dst.write(src.read())


def invalidate_path_caches() -> None:
    """What importlib.invalidate_caches() does for files on sys.path (zipimport re-reads its
    archive's directory, a FileFinder its folder), without the rest of it: in Python 3.12
    that imports importlib.metadata, which a start does not otherwise need."""
    for finder in list(sys.path_importer_cache.values()):
        if finder is not None and hasattr(finder, "invalidate_caches"):
            finder.invalidate_caches()


def _finder():
    return next((f for f in sys.meta_path if isinstance(f, OnDemandFinder)), None)


def install(site_packages: str) -> None:
    """Add the finder (once) at the end of sys.meta_path."""
    finder = _finder()
    if finder is None:
        finder = OnDemandFinder()
        sys.meta_path.append(finder)
    finder.site_packages = site_packages


def connect(fetch, sources_json: str | None = None) -> None:
    """Give the finder its fetch function and the files of this build (None: disconnect)."""
    import json

    finder = _finder()
    if finder is None:
        return
    finder.fetch = fetch
    if sources_json is not None:
        finder.sources = [{**s, "modules": frozenset(s["modules"])} for s in json.loads(sources_json)]


def fetched() -> list:
    finder = _finder()
    return list(finder.fetched) if finder else []
