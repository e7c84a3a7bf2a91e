"""NNEF containers (spec §5.1): a folder, a `.tar`, a `.tgz`/`.tar.gz`, or an
in-memory mapping of relative paths to bytes - all with `graph.nnef`, optional
`graph.quant` and one `.dat` per variable label (label 'conv1/filter' ->
'conv1/filter.dat'). Archives that wrap everything in one top-level folder
work too: the folder holding `graph.nnef` is the root.
"""
from __future__ import annotations

import gzip
import io
import os
import tarfile

from .errors import NNEFDataError


class Container:
    """Files of one model, by path relative to the folder of graph.nnef."""

    def __init__(self, files: dict, name: str = "<memory>"):
        self.name = name
        entries = {}
        for path, data in files.items():
            p = _norm(path)
            if p:
                entries[p] = data
        graphs = sorted((p for p in entries if p == "graph.nnef" or p.endswith("/graph.nnef")),
                        key=lambda p: (p.count("/"), p))
        if not graphs:
            raise NNEFDataError(f"{name}: no graph.nnef found")
        root = graphs[0][: -len("graph.nnef")]
        self.root = root
        self.files = {p[len(root):]: d for p, d in entries.items() if p.startswith(root)}
        self._lower = {}
        for p in self.files:
            self._lower.setdefault(p.lower(), p)

    def read(self, path: str) -> bytes:
        data = self.files[path]
        if callable(data):
            data = data()
            self.files[path] = data
        return bytes(data) if not isinstance(data, bytes) else data

    def find(self, path: str):
        """The stored path for `path`, matched exactly or case-insensitively, or None."""
        path = _norm(path)
        if path in self.files:
            return path
        return self._lower.get(path.lower())

    def text(self, path: str) -> str:
        try:
            return self.read(path).decode("utf-8")
        except UnicodeDecodeError as e:
            raise NNEFDataError(f"{self.name}/{path}: not UTF-8 text ({e})") from None

    def label_path(self, label: str):
        return self.find(label.lstrip("/") + ".dat")

    def display(self, path: str) -> str:
        return f"{self.name}/{path}" if self.name not in ("<memory>", "") else path


def _norm(path: str) -> str:
    path = str(path).replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def _from_tar_bytes(data: bytes, name: str) -> Container:
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            files = {}
            for member in tar.getmembers():
                if member.isfile():
                    f = tar.extractfile(member)
                    files[member.name] = f.read() if f is not None else b""
    except (tarfile.TarError, OSError, EOFError) as e:
        raise NNEFDataError(f"{name}: not a readable tar archive ({e})") from None
    return Container(files, name)


def open_container(source) -> Container:
    """A `Container` from a folder path, an archive path (.tar, .tgz, .tar.gz),
    a graph.nnef path, archive bytes, or a dict {relative path: bytes}."""
    if isinstance(source, Container):
        return source
    if isinstance(source, dict):
        return Container(source)
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        if data[:2] == b"\x1f\x8b" or data[257:262] == b"ustar":
            return _from_tar_bytes(data, "<archive>")
        return Container({"graph.nnef": data})
    path = os.fspath(source)
    if os.path.isdir(path):
        files = {}
        for dirpath, _, names in os.walk(path):
            for n in names:
                full = os.path.join(dirpath, n)
                rel = os.path.relpath(full, path)
                files[rel] = (lambda f=full: _read(f))
        return Container(files, path)
    if not os.path.exists(path):
        raise NNEFDataError(f"{path}: no such file or folder")
    if path.endswith(".nnef"):
        folder = os.path.dirname(path) or "."
        files = {}
        for n in os.listdir(folder):
            full = os.path.join(folder, n)
            if os.path.isdir(full):
                for dirpath, _, names in os.walk(full):
                    for m in names:
                        f = os.path.join(dirpath, m)
                        files[os.path.relpath(f, folder)] = (lambda f=f: _read(f))
            elif n.endswith((".dat", ".quant")):
                files[n] = (lambda f=full: _read(f))
        files = {k: v for k, v in files.items() if not k.endswith("graph.nnef")}
        files["graph.nnef"] = _read(path)
        return Container(files, folder)
    return _from_tar_bytes(_read(path), path)


def _read(path):
    with open(path, "rb") as f:
        return f.read()
