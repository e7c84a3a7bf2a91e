"""A small static server for the gallery, the tests and the benchmark.

Mounts (URL prefix -> folder): / -> web/, /dist/ -> dist/, /models/ ->
$WEBNN_MODELS or ../shared/models (absent on a fresh clone: the gallery then uses
the public copy of the weights, web/config.js), /generated/ -> .cache/gallery
(the models tools/build.py trains), /vendor/ -> .cache/node/node_modules
(TensorFlow.js for the benchmark page; tools/bench.py installs it). Serves
.wasm as application/wasm (for streaming compilation), sends COOP/COEP so
pages are cross-origin isolated (SharedArrayBuffer), and CORP so workers may
load the runtime.

    python tools/serve.py [--port 8000] [--host 127.0.0.1]
"""
from __future__ import annotations

import argparse
import functools
import http.server
import os
import socketserver
import sys
import threading
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
        if self.path.startswith("/dist/") and not self.path.endswith((".js", ".mjs")):
            self.send_header("Cache-Control", "max-age=3600")
        else:
            self.send_header("Cache-Control", "no-cache")
        super().end_headers()

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
