"""A small static server for the gallery, the tests and the benchmark.

Mounts (URL prefix -> folder): / -> web/, /dist/ -> dist/, /models/ ->
$WEBNN_MODELS or ../shared/models (absent on a fresh clone: the gallery then uses
the public copy of the weights, web/config.js), /generated/ -> .cache/gallery
(the models tools/build.py trains), /vendor/ -> .cache/node/node_modules
(TensorFlow.js for the benchmark page; tools/bench.py installs it). Serves
.wasm as application/wasm (for streaming compilation), sends COOP/COEP so
pages are cross-origin isolated (SharedArrayBuffer), and CORP so workers may
load the runtime.

Compression as a CDN does it (tools/precompress.py): a file with precompressed
copies beside it (dist/NAME.zst, .br, .gz, written by tools/build.py) is sent as the
smallest copy the request's Accept-Encoding accepts (brotli or zstd, else gzip), with
Content-Encoding and `Vary: Accept-Encoding`; other text, script, JSON and wasm files
(web/, TF.js and ONNX Runtime Web for the benchmarks) are compressed on the fly: at a
fast level at first, at the build's levels once those are made (in the background, cached
in .cache/precompressed/, as a CDN's cache fills). Archives (zip, wheels, the
gzipped snapshot) go as they are. Caching: a URL that names one content is immutable for
a year: a content hash in the file name (dist/webnn-engine-HASH.snapshot.gz), or a `?v=`
query that is the start of the file's sha256 (the polyfill asks for every runtime file
so); everything else is revalidated (`no-cache` with an ETag: a 304 costs a round trip, no
bytes), since a new build changes files under the same names.

    python tools/serve.py [--port 8000] [--host 127.0.0.1]
"""
from __future__ import annotations

import argparse
import email.utils
import functools
import http.server
import io
import os
import re
import socketserver
import sys
import threading
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import precompress  # noqa: E402

# A content hash in the file name (webnn-engine-14e279d87b1ff474.snapshot.gz): the URL
# names one content forever.
HASHED_NAME = re.compile(r"[-.][0-9a-f]{16,}\.")
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# Smaller than this is not worth compressing on the fly.
MIN_COMPRESS = 1024


def cache_control(url: str, path: Path | None = None) -> str:
    """Cache-Control for a request URL (of the file `path`): immutable when the URL names one
    content: a content hash in the file name, or a `v=` query that is the start of the file's
    sha256 (js/src/startup.js asks for each runtime file so); else revalidate (the entry
    script, and runtime files a new build changes under one name)."""
    parts = urllib.parse.urlsplit(url)
    if HASHED_NAME.search(parts.path.rsplit("/", 1)[-1]):
        return IMMUTABLE
    version = urllib.parse.parse_qs(parts.query).get("v", [""])[0].lower()
    if path is not None and len(version) >= 16:
        st = path.stat()
        if _sha256(str(path), st.st_mtime_ns, st.st_size).startswith(version):
            return IMMUTABLE
    return REVALIDATE


@functools.lru_cache(maxsize=256)
def _sha256(path: str, mtime_ns: int, size: int) -> str:
    import hashlib

    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


@functools.lru_cache(maxsize=64)
def _best(path: str, mtime: float, size: int, encoding: str) -> bytes | None:
    return precompress.cached(Path(path).read_bytes(), encoding)


_COMPRESSING: set = set()
_COMPRESSING_LOCK = threading.Lock()


def _compressed(path: str, mtime: float, size: int, encoding: str) -> bytes:
    """A file without precompressed copies, compressed as a CDN does: at the build's levels
    once that result is in .cache/precompressed/ (made in the background after the first
    request, as a CDN's cache fills), until then at a fast level (no request waits on
    brotli -11 of a 10 MB wasm)."""
    best = _best(path, mtime, size, encoding)
    if best is not None:
        return best
    data = Path(path).read_bytes()
    key = (path, mtime, size, encoding)
    with _COMPRESSING_LOCK:
        start = key not in _COMPRESSING
        _COMPRESSING.add(key)
    if start:
        def fill():
            precompress.compressed_cached(data, encoding)
            _best.cache_clear()
        threading.Thread(target=fill, daemon=True).start()
    return precompress.compress(data, encoding, fast=True)


def default_mounts() -> dict:
    models = Path(os.environ.get("WEBNN_MODELS", ROOT.parent / "shared" / "models"))
    mounts = {"/dist/": ROOT / "dist", "/models/": models, "/generated/": ROOT / ".cache" / "gallery",
              "/vendor/": ROOT / ".cache" / "node" / "node_modules", "/": ROOT / "web"}
    # onnxruntime-web for the gallery's ONNX Runtime Web card: the newest one tools/ort_web.py
    # installed (./dev serve asks it to); without one, the card says how to get it.
    orts = sorted((ROOT / ".cache" / "node-ort").glob("*/node_modules/onnxruntime-web/dist"),
                  key=lambda d: tuple(int(x) for x in d.parents[2].name.split(".") if x.isdigit()))
    if orts:
        mounts["/ort/"] = orts[-1]
    return mounts


class Handler(http.server.SimpleHTTPRequestHandler):
    mounts: dict = {}
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
                      ".json": "application/json", ".whl": "application/octet-stream", ".npy": "application/octet-stream"}

    def translate_path(self, path):
        path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
        for prefix in sorted(self.mounts, key=len, reverse=True):
            if path.startswith(prefix):
                rel = path[len(prefix):]
                base = Path(self.mounts[prefix]).resolve()
                target = (base / rel).resolve()
                if target != base and base not in target.parents:
                    return str(base / "__forbidden__")
                return str(target)
        return str(Path(self.mounts["/"]) / "__missing__")

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("Cache-Control", getattr(self, "cache_header", None) or cache_control(self.path))
        super().end_headers()

    def representation(self, path: Path, ctype: str):
        """(Content-Encoding or None, body bytes or file path, whether it varies by
        Accept-Encoding) for a file: its precompressed copy the request prefers, else
        compressed on the fly when its type compresses, else the file itself."""
        accept = self.headers.get("Accept-Encoding")
        sibs = precompress.siblings(path)
        if sibs:
            sizes = {coding: sib.stat().st_size for coding, sib in sibs.items()}
            encoding = precompress.negotiate(accept, tuple(sibs), sizes)
            return encoding, sibs[encoding] if encoding else path, True
        st = path.stat()
        if st.st_size < MIN_COMPRESS or not ctype.startswith(precompress.COMPRESSIBLE_TYPES):
            return None, path, False
        # The build-level copies made so far (as a CDN's cache fills) say which is smallest.
        made = {coding: _best(str(path), st.st_mtime, st.st_size, coding) for coding in precompress.PREFERENCE}
        encoding = precompress.negotiate(accept, sizes={c: len(b) for c, b in made.items() if b is not None})
        if not encoding:
            return None, path, True
        try:
            return encoding, _compressed(str(path), st.st_mtime, st.st_size, encoding), True
        except precompress.MissingLibrary:
            return None, path, False

    def send_head(self):
        """GET/HEAD of a file with content negotiation and revalidation (ETag,
        If-None-Match, If-Modified-Since); directories and errors as the stdlib does."""
        path = Path(self.translate_path(self.path))
        if not path.is_file():
            return super().send_head()
        ctype = self.guess_type(str(path))
        self.cache_header = cache_control(self.path, path)
        encoding, body, varies = self.representation(path, ctype)
        st = path.stat()
        etag = f'"{int(st.st_mtime_ns):x}-{st.st_size:x}{"-" + encoding if encoding else ""}"'
        fresh = False
        if "If-None-Match" in self.headers:
            fresh = etag in [t.strip() for t in self.headers["If-None-Match"].split(",")] or self.headers["If-None-Match"].strip() == "*"
        elif "If-Modified-Since" in self.headers:
            try:
                since = email.utils.parsedate_to_datetime(self.headers["If-Modified-Since"])
                fresh = int(st.st_mtime) <= since.timestamp()
            except (TypeError, ValueError, IndexError, OverflowError):
                pass
        if fresh:
            self.send_response(304)
            self.send_header("ETag", etag)
            if varies:
                self.send_header("Vary", "Accept-Encoding")
            self.end_headers()
            return None
        data = body if isinstance(body, bytes) else body.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        if encoding:
            self.send_header("Content-Encoding", encoding)
        if varies:
            self.send_header("Vary", "Accept-Encoding")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Last-Modified", self.date_time_string(st.st_mtime))
        self.send_header("ETag", etag)
        self.end_headers()
        return io.BytesIO(data)

    def log_message(self, fmt, *args):
        if os.environ.get("WEBNN_SERVE_LOG"):
            super().log_message(fmt, *args)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def start(port: int = 0, host: str = "127.0.0.1", mounts: dict | None = None) -> Server:
    """Start in a background thread; returns the server (server.server_address)."""
    handler = type("MountedHandler", (Handler,), {"mounts": mounts or default_mounts()})
    server = Server((host, port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--host", default="127.0.0.1")
    args = p.parse_args(argv)
    handler = type("MountedHandler", (Handler,), {"mounts": default_mounts()})
    with Server((args.host, args.port), handler) as server:
        print(f"Serving the WebNN polyfill gallery at http://{args.host}:{server.server_address[1]}/", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
