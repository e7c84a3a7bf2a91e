"""A small threaded HTTP server that serves a WPT tree the way WPT's own
server does for testharness.js tests (generated ``.any``/``.window`` wrappers,
``.headers`` files), plus the polyfill under ``/_webnn_polyfill/`` and the
runner's own ``/resources/testharnessreport.js``.

It listens on 127.0.0.1 (a secure context, so COOP/COEP, SharedArrayBuffer
and service workers all work over plain HTTP).
"""

from __future__ import annotations

import os
import posixpath
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

from . import wrappers
from .manifest import parse_meta

STATIC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".idl": "text/plain; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".py": "text/plain; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".wasm": "application/wasm",
    ".zip": "application/zip",
    ".whl": "application/zip",
    ".tar": "application/x-tar",
    ".gz": "application/gzip",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".map": "application/json",
}

# Generated wrapper suffix -> (suffix of the source it derives from, kind)
GENERATED = (
    (".any.worker.html", ".any.js", "dedicatedworker"),
    (".any.sharedworker.html", ".any.js", "sharedworker"),
    (".any.serviceworker.html", ".any.js", "serviceworker"),
    (".any.worker.js", ".any.js", "workerjs"),
    (".any.html", ".any.js", "window"),
    (".window.html", ".window.js", "window"),
)

POLYFILL_HEADERS = (
    ("Cache-Control", "max-age=3600"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    # Lets the polyfill start its own (dedicated) workers from its files even
    # inside COEP: require-corp pages; ignored on non-worker responses.
    ("Cross-Origin-Embedder-Policy", "require-corp"),
)
DEFAULT_CACHE = ("Cache-Control", "max-age=3600")


def content_type(path: str) -> str:
    return CONTENT_TYPES.get(os.path.splitext(path)[1].lower(), "application/octet-stream")


def read_headers_file(path: str) -> list:
    """Parse a WPT ``.headers`` file: one ``Name: value`` per line."""
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\r\n")
                if not line.strip() or ":" not in line:
                    continue
                name, value = line.split(":", 1)
                out.append((name.strip(), value.strip()))
    except FileNotFoundError:
        pass
    return out


def headers_for(fs_path: str) -> list:
    """Headers from ``__dir__.headers`` in the file's directory, then ``FILE.headers``."""
    return (read_headers_file(os.path.join(os.path.dirname(fs_path), "__dir__.headers"))
            + read_headers_file(fs_path + ".headers"))


class Site:
    """What the server serves; shared by all handler threads."""

    def __init__(self, root: str, polyfill_dir: str | None, polyfill_config: dict | None,
                 idl: str | None = None, standard_timeouts: bool = False):
        self.root = os.path.abspath(root)
        # --standard-timeouts: the report hook leaves testharness.js its own timeouts
        self.standard_timeouts = standard_timeouts
        # --idl: served as /interfaces/webnn.idl instead of the tree's (idlharness reads it).
        self.idl = os.path.abspath(idl) if idl else None
        self.polyfill_dir = os.path.abspath(polyfill_dir) if polyfill_dir else None
        # None means "no injection"
        self.polyfill_config = polyfill_config if polyfill_dir else None

    def fs_path(self, base: str, rel: str) -> str | None:
        """Map a URL path below ``base`` to a file path, refusing escapes."""
        rel = posixpath.normpath("/" + rel).lstrip("/")
        if rel in ("", ".") or rel.startswith(".."):
            return None
        return os.path.join(base, *rel.split("/"))

    def resolve(self, url_path: str, query: str = ""):
        """Return (status, headers, body) for a GET of ``url_path?query``."""
        if url_path == "/favicon.ico":
            return 204, [], b""
        if url_path == "/resources/testharnessreport.js":
            status, hdrs, body = self._file(os.path.join(STATIC_DIR, "report-hook.js"),
                                            extra=[("Cache-Control", "no-cache")], headers_files=False)
            if self.standard_timeouts and status == 200:
                body = b"self.__wptRunnerStandardTimeouts = true;\n" + body
            return status, hdrs, body
        if url_path.startswith(wrappers.POLYFILL_MOUNT):
            if not self.polyfill_dir:
                return self._not_found()
            p = self.fs_path(self.polyfill_dir, url_path[len(wrappers.POLYFILL_MOUNT):])
            if p is None or not os.path.isfile(p):
                return self._not_found()
            return self._file(p, extra=list(POLYFILL_HEADERS), headers_files=False)
        if url_path == "/interfaces/webnn.idl" and self.idl:
            return self._file(self.idl, extra=[("Cache-Control", "no-cache")], headers_files=False)
        if url_path == "/resources/WebIDLParser.js":
            url_path = "/resources/webidl2/lib/webidl2.js"

        p = self.fs_path(self.root, url_path)
        if p is None:
            return self._not_found()
        if os.path.isfile(p):
            return self._file(p, extra=[DEFAULT_CACHE])
        gen = self._generated(url_path, p, query)
        if gen is not None:
            return gen
        return self._not_found()

    def _generated(self, url_path: str, fs_path: str, query: str):
        for suffix, src_suffix, kind in GENERATED:
            if not url_path.endswith(suffix):
                continue
            src_url = url_path[: -len(suffix)] + src_suffix
            src_fs = fs_path[: -len(suffix)] + src_suffix
            if not os.path.isfile(src_fs):
                return None
            with open(src_fs, encoding="utf-8", errors="replace") as f:
                meta = parse_meta(f.read())
            cache = DEFAULT_CACHE
            if kind == "window":
                body, ctype = wrappers.window_html(src_url, meta, self.polyfill_config), ".html"
            elif kind == "workerjs":
                body, ctype = wrappers.worker_js(src_url, meta, self.polyfill_config), ".js"
            else:
                # The page passes its own query (the variant) on to the worker.
                variant = ("?" + query) if query else ""
                body, ctype = wrappers.worker_html(src_url, meta, kind, variant), ".html"
                cache = ("Cache-Control", "no-cache")
            hdrs = [("Content-Type", CONTENT_TYPES[ctype]), cache]
            return 200, _merge(hdrs, headers_for(src_fs)), body.encode("utf-8")
        return None

    def _file(self, path: str, extra=(), headers_files=True):
        try:
            with open(path, "rb") as f:
                body = f.read()
        except OSError:
            return self._not_found()
        hdrs = [("Content-Type", content_type(path))] + list(extra)
        if headers_files:
            hdrs = _merge(hdrs, headers_for(path))
        return 200, hdrs, body

    @staticmethod
    def _not_found():
        return 404, [("Content-Type", "text/plain; charset=utf-8")], b"404 Not Found\n"


def _merge(base: list, override: list) -> list:
    """Headers in ``override`` replace same-named ones in ``base``."""
    names = {n.lower() for n, _ in override}
    return [(n, v) for n, v in base if n.lower() not in names] + list(override)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "wpt_runner"
    site: Site  # set on the subclass made by serve()

    def log_message(self, format, *args):  # silence
        pass

    def do_GET(self):
        self._respond(send_body=True)

    def do_HEAD(self):
        self._respond(send_body=False)

    def _respond(self, send_body: bool):
        parts = urlsplit(self.path)
        url_path = unquote(parts.path)
        try:
            status, hdrs, body = self.site.resolve(url_path, parts.query)
        except Exception as e:  # pragma: no cover - defensive
            status, hdrs, body = 500, [("Content-Type", "text/plain")], f"{e!r}\n".encode()
        self.send_response(status)
        for name, value in hdrs:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if send_body and body:
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass


class Server:
    """Runs the HTTP server on a background thread: ``with Server(...) as s: s.url``."""

    def __init__(self, root: str, polyfill_dir: str | None = None,
                 polyfill_config: dict | None = None, port: int = 0, idl: str | None = None,
                 standard_timeouts: bool = False):
        self.site = Site(root, polyfill_dir, polyfill_config, idl, standard_timeouts)
        handler = type("BoundHandler", (Handler,), {"site": self.site})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                       daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
