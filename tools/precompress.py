"""Compression as a CDN does it, shared by the build (precompressed files in dist/),
the server (tools/serve.py) and the byte report and budget (tools/build.py).

- `negotiate(accept_encoding, available, sizes)`: the Content-Encoding to send for a
  request's Accept-Encoding header (RFC 9110 q-values): the smallest of the accepted
  copies where their sizes are known (a static host with precompressed files), else
  zstd, then brotli, then gzip, as CDNs do (Cloudflare serves zstd to browsers that
  accept it, else brotli, else gzip).
- `precompress(folder)`: writes `NAME.zst`, `NAME.br` and `NAME.gz` beside each wasm,
  script, JSON or text file of `folder` that compression shrinks by at least MIN_SAVING
  (not the zip archives and wheels, which are deflated already, nor the gzipped snapshot). The
  compressed bytes are cached by the sha256 of their input in .cache/precompressed/, so
  a rebuild with unchanged files is instant (brotli -11 takes about a minute on
  pyodide.asm.wasm).
- `compress(data, encoding)`: one encoding at the build's levels (zstd -19, brotli -11,
  gzip -9): the server uses it, cached, for files that have no precompressed siblings.

The libraries (requirements-dev.txt): PyPI `brotli` (Google's reference encoder) and
`zstandard` (the python-zstandard bindings of Meta's libzstd); gzip is the stdlib's.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "precompressed"
# Content-Encoding -> file suffix of a precompressed sibling, in the order a server prefers them.
SUFFIXES = {"zstd": ".zst", "br": ".br", "gzip": ".gz"}
PREFERENCE = tuple(SUFFIXES)
# Keep a precompressed sibling only when it saves at least this share of the file.
MIN_SAVING = 0.10
# Files of these kinds are compressed on the fly by tools/serve.py when they have no
# precompressed siblings (CDNs compress text, scripts, JSON and wasm by Content-Type; they
# leave archives and octet streams alone).
COMPRESSIBLE_TYPES = ("text/", "application/javascript", "application/json", "application/wasm",
                      "image/svg+xml", "application/xml")


# Extensions of the files that get precompressed siblings (stale ones are removed by these).
# .zip: the first-visit archives are stored uncompressed (tools/start_archives.py) so that
# these compress them whole; a deflated zip (python_stdlib.zip) saves too little to get any.
SIBLING_OF = (".js", ".mjs", ".wasm", ".json", ".ts", ".md", ".txt", ".html", ".css", ".svg", ".zip")


class MissingLibrary(RuntimeError):
    pass


def _brotli():
    try:
        import brotli
    except ImportError as e:
        raise MissingLibrary("PyPI brotli is not installed (./dev setup installs requirements-dev.txt)") from e
    return brotli


def _zstd():
    try:
        import zstandard
    except ImportError as e:
        raise MissingLibrary("PyPI zstandard is not installed (./dev setup installs requirements-dev.txt)") from e
    return zstandard


def compress(data: bytes, encoding: str, fast: bool = False) -> bytes:
    """`data` in one Content-Encoding, at the highest levels a build can afford (zstd -19,
    brotli -11, gzip -9), or with `fast` at the levels CDNs use on the fly (3, 5, 6)."""
    if encoding == "gzip":
        return gzip.compress(data, 6 if fast else 9, mtime=0)
    if encoding == "br":
        return _brotli().compress(data, quality=5 if fast else 11, lgwin=22 if fast else 24)
    if encoding == "zstd":
        # The zstd content-encoding (RFC 8878) limits the window to 8 MB for decoders.
        params = _zstd().ZstdCompressionParameters.from_level(3 if fast else 19, window_log=23, write_content_size=True)
        return _zstd().ZstdCompressor(compression_params=params).compress(data)
    raise ValueError(f"unknown encoding {encoding!r}")


def cached(data: bytes, encoding: str, cache: Path = CACHE) -> bytes | None:
    """compressed_cached()'s result if it is on disk already, else None."""
    try:
        return (cache / f"{hashlib.sha256(data).hexdigest()}{SUFFIXES[encoding]}").read_bytes()
    except OSError:
        return None


def decompress(data: bytes, encoding: str) -> bytes:
    if encoding == "gzip":
        return gzip.decompress(data)
    if encoding == "br":
        return _brotli().decompress(data)
    if encoding == "zstd":
        return _zstd().ZstdDecompressor().decompress(data)
    raise ValueError(f"unknown encoding {encoding!r}")


def compressed_cached(data: bytes, encoding: str, cache: Path = CACHE) -> bytes:
    """compress(), cached on disk by the input's sha256 (the server's and the build's cache)."""
    path = cache / f"{hashlib.sha256(data).hexdigest()}{SUFFIXES[encoding]}"
    try:
        return path.read_bytes()
    except OSError:
        pass
    out = compress(data, encoding)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache, delete=False) as tmp:
            tmp.write(out)
        os.replace(tmp.name, path)
    except OSError:
        pass  # a read-only checkout: compress again next time
    return out


def parse_accept_encoding(header: str | None) -> dict:
    """{coding: q} of an Accept-Encoding header (lower-cased codings; `*` kept)."""
    out = {}
    for part in (header or "").split(","):
        fields = [f.strip() for f in part.split(";")]
        coding = fields[0].lower()
        if not coding:
            continue
        q = 1.0
        for f in fields[1:]:
            if f.lower().startswith("q="):
                try:
                    q = float(f[2:])
                except ValueError:
                    q = 0.0
        out[coding] = q
    return out


def negotiate(accept_encoding: str | None, available=PREFERENCE, sizes: dict | None = None) -> str | None:
    """The Content-Encoding to answer with (None: identity), among `available`, for a
    request's Accept-Encoding: of the codings the client accepts with q > 0 (explicitly
    or through `*`), the smallest by `sizes` ({coding: bytes}, where known) -- a static
    host with precompressed copies sends the one that costs the fewest bytes (brotli -11
    beats zstd -19 by ~7 % on pyodide.asm.wasm) -- else the first of PREFERENCE."""
    accepted = parse_accept_encoding(accept_encoding)
    star = accepted.get("*", 0.0)
    candidates = [c for c in PREFERENCE if c in available and accepted.get(c, star) > 0]
    if not candidates:
        return None
    if sizes:
        known = [c for c in candidates if c in sizes]
        if known:
            return min(known, key=lambda c: (sizes[c], candidates.index(c)))
    return candidates[0]


def is_sibling(path: Path) -> bool:
    """Whether `path` is a precompressed copy of a file beside it (NAME.br next to NAME)."""
    return path.suffix in SUFFIXES.values() and path.with_suffix("").is_file()


def siblings(path: Path) -> dict:
    """{encoding: path} of the precompressed copies beside `path` that are up to date."""
    out = {}
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return out
    for encoding, suffix in SUFFIXES.items():
        p = path.with_name(path.name + suffix)
        try:
            if p.stat().st_mtime >= mtime:
                out[encoding] = p
        except OSError:
            pass
    return out


def precompress(folder: Path, names=None, cache: Path = CACHE) -> dict:
    """Write the precompressed siblings of the files in `folder` (or of `names` there) that
    compression shrinks by MIN_SAVING; remove stale ones. Returns {name: {encoding: size}}."""
    written = {}
    for path in sorted(folder.iterdir()):
        if (not path.is_file() or path.suffix not in SIBLING_OF or is_sibling(path)
                or (names is not None and path.name not in names)):
            continue  # archives (zip, wheels, the gzipped snapshot) are compressed already
        data = path.read_bytes()
        # gzip -9 decides (fast): a file that gzip cannot shrink by 10 % is an archive.
        gz = compressed_cached(data, "gzip", cache)
        keep = len(gz) <= (1 - MIN_SAVING) * len(data)
        sizes = {}
        for encoding, suffix in SUFFIXES.items():
            sib = path.with_name(path.name + suffix)
            if not keep:
                sib.unlink(missing_ok=True)
                continue
            out = gz if encoding == "gzip" else compressed_cached(data, encoding, cache)
            if not (sib.is_file() and sib.read_bytes() == out):
                sib.write_bytes(out)
            st = path.stat()
            os.utime(sib, (st.st_atime, max(st.st_mtime, sib.stat().st_mtime)))
            sizes[encoding] = len(out)
        if sizes:
            written[path.name] = sizes
    # Siblings of files that are gone (NAME.js.br without NAME.js; not the gzipped snapshot,
    # NAME.snapshot.gz, which is a file of its own).
    for path in folder.iterdir():
        if (path.suffix in SUFFIXES.values() and path.with_suffix("").suffix in SIBLING_OF
                and path.is_file() and not path.with_suffix("").exists()):
            path.unlink()
    return written
