"""A first visit fetches exactly the files the build lists (RUNTIME_MANIFEST.firstVisit, which
the byte budget counts: tests/dist/test_byte_budget.py), each as tools/serve.py sends it
compressed (the smaller of zstd and brotli to Chromium, precompressed in dist/), and the polyfill's sha256 checks apply
to the decoded bytes: a precompressed copy that decodes to other bytes is refused."""
import json
import os
import shutil
import sys
import urllib.parse

import pytest

from conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]
zstandard = pytest.importorskip("zstandard", reason="PyPI zstandard (requirements-dev.txt)")


def first_visit_list():
    return json.loads((ROOT / "dist" / "package.json").read_text())["webnnPolyfill"]["firstVisit"]


def visit(browser, base, config=None):
    """A new profile's start of the polyfill on web/bench/start.html: (result, {file: Content-Encoding})."""
    context = browser.new_context()
    fetched, responses = {}, []

    def seen(response):
        path = urllib.parse.urlsplit(response.url).path
        if path.startswith("/dist/"):
            fetched[path[len("/dist/"):]] = response.headers.get("content-encoding")
            responses.append((path[len("/dist/"):], response))

    context.on("response", seen)
    try:
        page = context.new_page()
        page.goto(f"{base}/bench/start.html?engine=polyfill&config=" + urllib.parse.quote(json.dumps(config or {})))
        page.wait_for_function("window.startResult", timeout=300_000)
        result = page.evaluate("window.startResult")
        # Bodies that came over the network, per file (a revalidation or a cache hit: ~0).
        bodies = {}
        for name, response in responses:
            bodies.setdefault(name, []).append(response.request.sizes()["responseBodySize"])
        result["bodies"] = bodies
        return result, fetched
    finally:
        context.close()


def test_a_first_visit_fetches_the_listed_files(browser, server):
    listed = first_visit_list()
    # The build-time snapshot is fetched only where it pays (not on a real network's first
    # visit, which the list describes); on localhost it would be: not asked for here.
    result, fetched = visit(browser, server, {"buildSnapshot": False})
    assert "error" not in result, result
    wanted = {"webnn-polyfill.js"}
    for entry in listed:
        if isinstance(entry, str):
            wanted.add(entry)
        else:  # one of these, by what the browser supports (this page is cross-origin isolated)
            got = [name for name in entry if name in fetched]
            assert len(got) == 1, (entry, sorted(fetched))
            wanted.add(got[0])
    assert set(fetched) == wanted, f"fetched {sorted(fetched)}, listed {listed}"
    # Served precompressed (tools/precompress.py), each as the smallest copy Chromium accepts
    # (zstd or brotli; for these, brotli -11 beats zstd -19).
    dist = ROOT / "dist"

    def smallest(name):
        return min(("zstd", "br"), key=lambda c: ((dist / (name + {"zstd": ".zst", "br": ".br"}[c])).stat().st_size, c))

    stdlib = next(name for name in fetched if name.startswith("python_stdlib-start-"))
    for name in ("pyodide.asm.wasm", "pyodide.asm.js", stdlib):  # the archive: stored, so the server's compression does the work
        assert fetched[name] == smallest(name), (name, fetched)
    # Each file's bytes come over once (loadPyodide's own fetch of pyodide.asm.wasm must find
    # the one the polyfill made in the HTTP cache: js/src/startup.js runtimeUrl).
    twice = {name: sizes for name, sizes in result["bodies"].items() if sum(1 for n in sizes if n > 1000) > 1}
    assert not twice, twice
    if result.get("snapshot") is not None:
        assert result["snapshot"] in ("built", "created"), result


def test_a_precompressed_copy_is_verified_after_decoding(browser, tmp_path):
    """pyodide-lock.json.zst replaced by the zstd of other bytes (newer than the file, and its
    brotli copy removed, so the server sends it): the polyfill hashes what the browser decoded
    and refuses it."""
    sys.path.insert(0, str(ROOT / "tools"))
    import precompress
    import serve

    dist = tmp_path / "dist"
    shutil.copytree(ROOT / "dist", dist)
    name = "pyodide-lock.json"
    if not (dist / f"{name}.zst").exists():
        pytest.skip("no precompressed copies in dist/ (./dev build with PyPI zstandard)")
    changed = (dist / name).read_bytes().replace(b'"version"', b'"Version"', 1)
    (dist / f"{name}.zst").write_bytes(precompress.compress(changed, "zstd"))
    (dist / f"{name}.br").unlink(missing_ok=True)  # else the smaller brotli copy is sent
    st = (dist / name).stat()
    os.utime(dist / f"{name}.zst", (st.st_atime, st.st_mtime + 10))
    srv = serve.start(mounts={**serve.default_mounts(), "/dist/": dist})
    try:
        result, fetched = visit(browser, f"http://127.0.0.1:{srv.server_address[1]}")
    finally:
        srv.shutdown()
    assert fetched.get(name) == "zstd", fetched
    assert name in result.get("error", "") and "verification" in result["error"], result
