"""tools/serve.py compresses as a CDN does (tools/precompress.py): content negotiation by
Accept-Encoding (RFC 9110), precompressed copies preferred, Content-Encoding / Vary /
Cache-Control / revalidation headers, and bodies that decode to the file's own bytes
(decoded here with the stdlib's gzip and PyPI brotli / zstandard's decoders)."""
import gzip
import http.client
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import precompress  # noqa: E402
import serve  # noqa: E402

brotli = pytest.importorskip("brotli", reason="PyPI brotli (requirements-dev.txt)")
zstandard = pytest.importorskip("zstandard", reason="PyPI zstandard (requirements-dev.txt)")

# What Chromium sends (since M123 with zstd), Firefox ESR 128 and Safari 17.
CHROMIUM = "gzip, deflate, br, zstd"
FIREFOX = "gzip, deflate, br"


@pytest.mark.parametrize("header,expected", [
    (CHROMIUM, "zstd"), (FIREFOX, "br"), ("gzip, deflate", "gzip"), ("", None), (None, None),
    ("identity", None), ("br;q=0, gzip", "gzip"), ("zstd;q=0, br;q=0.5, gzip;q=1", "br"),
    ("*", "zstd"), ("zstd;q=0, *", "br"), ("*;q=0", None), ("GZIP", "gzip"), ("br; q=0.0", None),
    ("gzip;q=0, *;q=0.1", "zstd"),
])
def test_negotiation(header, expected):
    assert precompress.negotiate(header) == expected


def test_negotiation_among_the_copies_there_are():
    assert precompress.negotiate(CHROMIUM, ("gzip",)) == "gzip"
    assert precompress.negotiate("br", ("zstd", "gzip")) is None


def test_negotiation_sends_the_smallest_accepted_copy():
    sizes = {"zstd": 2_435_523, "br": 2_271_591, "gzip": 3_137_600}  # pyodide.asm.wasm's copies
    assert precompress.negotiate(CHROMIUM, tuple(sizes), sizes) == "br"
    assert precompress.negotiate("zstd, gzip", tuple(sizes), sizes) == "zstd"
    assert precompress.negotiate("gzip", tuple(sizes), sizes) == "gzip"
    assert precompress.negotiate("br;q=0, zstd, gzip", tuple(sizes), sizes) == "zstd"
    assert precompress.negotiate(CHROMIUM, tuple(sizes), {"zstd": 10, "br": 10}) == "zstd"  # a tie: preference
    assert precompress.negotiate(CHROMIUM, tuple(sizes), {"gzip": 1}) == "gzip"


DECODE = {"gzip": gzip.decompress, "br": brotli.decompress,
          "zstd": lambda b: zstandard.ZstdDecompressor().decompressobj().decompress(b)}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("site")
    dist, web = base / "dist", base / "web"
    dist.mkdir()
    web.mkdir()
    text = ("const weights = [" + ", ".join(str(i % 97) for i in range(20000)) + "];\n").encode()
    (dist / "webnn-polyfill.js").write_bytes(text)
    (dist / "runtime.wasm").write_bytes(b"\0asm\1\0\0\0" + bytes(range(256)) * 200)
    (dist / "python_stdlib.zip").write_bytes(os.urandom(50_000))  # incompressible, like a zip
    (dist / "webnn-engine-0123456789abcdef.snapshot.gz").write_bytes(gzip.compress(text))
    (dist / "tiny.json").write_bytes(b"{}")
    (web / "page.js").write_bytes(text)
    written = precompress.precompress(dist, cache=base / "cache")
    srv = serve.start(mounts={"/dist/": dist, "/": web})
    yield {"port": srv.server_address[1], "dist": dist, "web": web, "text": text, "written": written}
    srv.shutdown()


def get(site, path, headers=None, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", site["port"], timeout=30)
    try:
        conn.request(method, path, headers=headers or {})
        r = conn.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        conn.close()


def test_the_build_writes_copies_only_where_they_pay(site):
    assert set(site["written"]) == {"webnn-polyfill.js", "runtime.wasm"}
    for name in site["written"]:
        for suffix in (".zst", ".br", ".gz"):
            assert (site["dist"] / (name + suffix)).is_file()
    assert not list(site["dist"].glob("python_stdlib.zip.*")) and not list(site["dist"].glob("*.snapshot.gz.*"))


@pytest.mark.parametrize("accept,encoding", [(CHROMIUM, ("zstd", "br")), (FIREFOX, "br"), ("gzip", "gzip"), ("", None)])
@pytest.mark.parametrize("path", ["/dist/webnn-polyfill.js", "/dist/runtime.wasm", "/page.js"])
def test_each_encoding_decodes_to_the_file(site, path, accept, encoding):
    status, headers, body = get(site, path, {"Accept-Encoding": accept})
    assert status == 200
    if isinstance(encoding, tuple):  # the smaller of two accepted copies
        assert headers.get("content-encoding") in encoding
        encoding = headers["content-encoding"]
    assert headers.get("content-encoding") == encoding
    assert headers["vary"] == "Accept-Encoding"
    assert int(headers["content-length"]) == len(body)
    raw = (site["web"] / "page.js" if path == "/page.js" else site["dist"] / path.rsplit("/", 1)[1]).read_bytes()
    assert (DECODE[encoding](body) if encoding else body) == raw
    if encoding:
        assert len(body) < len(raw) / 2


def test_precompressed_copy_is_sent_as_it_is(site):
    _, headers, body = get(site, "/dist/webnn-polyfill.js", {"Accept-Encoding": FIREFOX})
    assert headers["content-encoding"] == "br" and body == (site["dist"] / "webnn-polyfill.js.br").read_bytes()


def test_the_smallest_accepted_copy_is_sent(site):
    """Chromium accepts zstd and brotli: it gets whichever copy is smaller, byte for byte."""
    for name in site["written"]:
        copies = {c: (site["dist"] / (name + s)).read_bytes() for c, s in precompress.SUFFIXES.items()}
        smallest = min(("zstd", "br"), key=lambda c: (len(copies[c]), c != "zstd"))
        _, headers, body = get(site, f"/dist/{name}", {"Accept-Encoding": CHROMIUM})
        assert headers["content-encoding"] == smallest and body == copies[smallest], name


def test_on_the_fly_fast_then_the_builds_levels(site, tmp_path):
    """A file without copies: compressed at a fast level at once, at the build's levels (made
    in the background, as a CDN's cache fills) once those are there."""
    import time

    (site["web"] / "fresh.js").write_bytes(site["text"] + os.urandom(8).hex().encode())
    raw = (site["web"] / "fresh.js").read_bytes()
    best = precompress.compress(raw, "br")
    deadline = time.monotonic() + 60
    bodies = []
    while time.monotonic() < deadline:
        _, headers, body = get(site, "/fresh.js", {"Accept-Encoding": FIREFOX})
        assert headers["content-encoding"] == "br" and DECODE["br"](body) == raw
        bodies.append(body)
        if body == best:
            break
        time.sleep(0.2)
    assert bodies[-1] == best, "the build's level never arrived"


def test_archives_and_small_files_go_as_they_are(site):
    for path in ("/dist/python_stdlib.zip", "/dist/webnn-engine-0123456789abcdef.snapshot.gz", "/dist/tiny.json"):
        status, headers, body = get(site, path, {"Accept-Encoding": CHROMIUM})
        assert status == 200 and "content-encoding" not in headers, path
        assert body == (site["dist"] / path.rsplit("/", 1)[1]).read_bytes()


def test_a_stale_copy_is_not_sent(site, tmp_path):
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "a.js").write_bytes(site["text"])
    precompress.precompress(dist, cache=tmp_path / "cache")
    changed = site["text"].replace(b"weights", b"changed")
    (dist / "a.js").write_bytes(changed)
    st = (dist / "a.js.zst").stat()
    os.utime(dist / "a.js", (st.st_atime, st.st_mtime + 5))  # newer than its copies
    srv = serve.start(mounts={"/dist/": dist, "/": tmp_path})
    try:
        _, headers, body = get({"port": srv.server_address[1]}, "/dist/a.js", {"Accept-Encoding": CHROMIUM})
    finally:
        srv.shutdown()
    # compressed afresh from the file, not the stale copy
    assert headers["content-encoding"] in ("zstd", "br") and DECODE[headers["content-encoding"]](body) == changed


def test_cache_headers(site):
    hashed = get(site, "/dist/webnn-engine-0123456789abcdef.snapshot.gz")[1]
    assert "immutable" in hashed["cache-control"] and "max-age=31536000" in hashed["cache-control"]
    for path in ("/dist/webnn-polyfill.js", "/dist/runtime.wasm", "/page.js"):
        assert get(site, path)[1]["cache-control"] == "no-cache", path


def test_a_url_naming_the_content_is_immutable(site):
    """js/src/startup.js asks for runtime files as NAME?v=<first 16 hex of their sha256>."""
    import hashlib

    digest = hashlib.sha256((site["dist"] / "runtime.wasm").read_bytes()).hexdigest()
    assert "immutable" in get(site, f"/dist/runtime.wasm?v={digest[:16]}")[1]["cache-control"]
    wrong = ("0" if digest[0] != "0" else "1") + digest[1:16]
    assert get(site, f"/dist/runtime.wasm?v={wrong}")[1]["cache-control"] == "no-cache"
    assert get(site, "/dist/runtime.wasm?v=abc")[1]["cache-control"] == "no-cache"


def test_revalidation(site):
    _, first, _ = get(site, "/dist/webnn-polyfill.js", {"Accept-Encoding": CHROMIUM})
    _, other, _ = get(site, "/dist/webnn-polyfill.js", {"Accept-Encoding": "gzip"})
    assert first["etag"] != other["etag"]  # one ETag per representation
    status, headers, body = get(site, "/dist/webnn-polyfill.js",
                                {"Accept-Encoding": CHROMIUM, "If-None-Match": first["etag"]})
    assert status == 304 and body == b"" and headers["vary"] == "Accept-Encoding"
    status, _, _ = get(site, "/dist/webnn-polyfill.js", {"Accept-Encoding": CHROMIUM, "If-None-Match": other["etag"]})
    assert status == 200
    status, _, _ = get(site, "/dist/webnn-polyfill.js", {"If-Modified-Since": first["last-modified"]})
    assert status == 304


def test_head_sends_the_headers_of_get(site):
    status, headers, body = get(site, "/dist/runtime.wasm", {"Accept-Encoding": CHROMIUM}, method="HEAD")
    assert status == 200 and body == b"" and headers["content-encoding"] in ("zstd", "br")
    assert headers["content-type"] == "application/wasm"
    suffix = precompress.SUFFIXES[headers["content-encoding"]]
    assert int(headers["content-length"]) == (site["dist"] / f"runtime.wasm{suffix}").stat().st_size


def test_missing_files_and_directories_as_before(site):
    assert get(site, "/dist/nothing.js")[0] == 404
    (site["web"] / "sub").mkdir(exist_ok=True)
    assert get(site, "/sub")[0] == 301  # a folder without its slash: redirected


def test_every_copy_in_the_built_dist_is_its_files_bytes():
    """dist/ goes to static hosts as it is, and some send a NAME.gz without comparing dates
    (nginx's gzip_static): no file may be rewritten after its copies (tools/build.py writes
    package.json and README.md before it precompresses)."""
    dist = ROOT / "dist"
    if not (dist / "package.json").exists():
        pytest.skip("no build in dist/ (./dev build)")
    checked, stale = 0, []
    for path in sorted(dist.iterdir()):
        if not path.is_file() or precompress.is_sibling(path):
            continue
        for encoding, suffix in precompress.SUFFIXES.items():  # every copy there is, whatever its date
            sibling = path.with_name(path.name + suffix)
            if sibling.exists():
                checked += 1
                if DECODE[encoding](sibling.read_bytes()) != path.read_bytes():
                    stale.append(sibling.name)
    assert checked and not stale, stale
