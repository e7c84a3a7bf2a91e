"""The build-time engine snapshot (js/src/startup.js): headless Chromium starts
the freshly built polyfill once, with numpy and webnn_core imported, and
exports the engine's memory snapshot; it is served gzipped beside the runtime
so that a first visit restores it instead of initialising Python. The one made
in Chromium restores in Firefox and WebKit too: js/src/startup.js lays out the
function table alike in every engine (exportsAsInTable), and a restore checks it.

Kept in .cache/snapshots/ under the key of everything it depends on (snapshot
format, polyfill version, Pyodide build, the first-visit stdlib and site-packages archives): a
rebuild with the same inputs reuses it. Without Chromium/Playwright the build
goes on without one (the polyfill then starts normally).

Called by tools/build.py (`--no-snapshot` or WEBNN_NO_BUILD_SNAPSHOT=1 skip it).
"""
from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "snapshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def snapshot_format() -> int:
    text = (ROOT / "js" / "src" / "startup.js").read_text()
    return int(re.search(r"const SNAPSHOT_FORMAT = (\d+);", text).group(1))


def key(manifest: dict, polyfill_version: str, pyodide_version: str, core_wheel: str) -> str:
    """The same key as snapshotKey() in js/src/startup.js."""
    files = manifest["files"]
    part = lambda name: files[name]["sha256"][:16]  # noqa: E731
    start = manifest["start"]
    return "-".join([f"f{snapshot_format()}", polyfill_version, pyodide_version, part("pyodide.asm.wasm"),
                     part("pyodide.asm.js"), part(start["stdlib"]), part(start["site"])])


def export_in_chromium(dist: Path) -> bytes:
    """Start the built polyfill in headless Chromium; return the raw snapshot."""
    import serve
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "index.html").write_text(
            "<!doctype html><meta charset=utf-8><script>window.WEBNN_POLYFILL_CONFIG = "
            "{snapshotTooling: true, buildSnapshot: false};</script>"
            "<script src=/dist/webnn-polyfill.js></script>")
        server = serve.start(mounts={"/dist/": dist, "/": Path(tmp)})
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                try:
                    page = browser.new_page()
                    page.set_default_timeout(300_000)
                    page.goto(f"http://127.0.0.1:{server.server_address[1]}/index.html")
                    b64 = page.evaluate("""async () => {
                      const bytes = await webnnPolyfill._exportEngineSnapshot();
                      const blob = new Blob([bytes]);
                      const url = await new Promise((ok) => { const r = new FileReader(); r.onload = () => ok(r.result); r.readAsDataURL(blob); });
                      return url.slice(url.indexOf(',') + 1);
                    }""")
                finally:
                    browser.close()
        finally:
            server.shutdown()
    return base64.b64decode(b64)


def build(dist: Path, manifest: dict, polyfill_version: str, core_wheel: str) -> dict | None:
    """Put the snapshot for `manifest` into dist/; returns its manifest entry or None."""
    import runtime

    k = key(manifest, polyfill_version, runtime.VERSION, core_wheel)
    name = f"webnn-engine-{hashlib.sha256(k.encode()).hexdigest()[:16]}.snapshot.gz"
    cached = CACHE / name
    if not cached.is_file():
        if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
            print("engine_snapshot: no Chromium, so no build-time snapshot (first visits start normally)", file=sys.stderr)
            return None
        print("engine_snapshot: building the engine snapshot in headless Chromium", file=sys.stderr)
        try:
            raw = export_in_chromium(dist)
        except Exception as e:  # noqa: BLE001 - a build without a snapshot still works
            print(f"engine_snapshot: could not build it ({e}); first visits start normally", file=sys.stderr)
            return None
        CACHE.mkdir(parents=True, exist_ok=True)
        for old in CACHE.glob("webnn-engine-*.snapshot.gz"):
            old.unlink()
        tmp = cached.with_suffix(".tmp")
        with open(tmp, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", compresslevel=6, mtime=0) as gz:
            gz.write(raw)
        tmp.replace(cached)
    target = dist / name
    if not target.is_file() or target.stat().st_size != cached.stat().st_size:
        shutil.copy2(cached, target)
    gz = cached.read_bytes()
    raw = gzip.decompress(gz)
    # Both hashes: a server may send a .gz with Content-Encoding: gzip, and fetch() then decodes it.
    return {"file": name, "key": k, "sha256": hashlib.sha256(gz).hexdigest(), "size": len(gz),
            "rawSha256": hashlib.sha256(raw).hexdigest(), "rawSize": len(raw)}


