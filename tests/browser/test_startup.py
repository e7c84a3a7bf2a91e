"""Engine start-up (js/src/startup.js): the engine snapshot gives the same
engine as a normal start, a damaged snapshot falls back to a normal start, a
tampered runtime file is refused, and pages see the load progress."""
import json
import shutil
import urllib.parse

import numpy as np
import pytest

from conftest import MODELS, ROOT, launch_engine

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Run in the engine and natively (CPython + numpy 2.0.2): the same numbers.
BATTERY = r"""
import json, numpy as np
rng = np.random.default_rng(20261123)
a = rng.standard_normal((6, 6))
b = rng.integers(-1000, 1000, size=64).astype(np.int32)
x = np.linspace(-3, 3, 25)
out = {
    "normal": a.ravel().tolist(),
    "integers": b.tolist(),
    "matmul": (a @ a.T).ravel().tolist(),
    "inv": np.linalg.inv(a).ravel().tolist(),
    "svd": np.linalg.svd(a, compute_uv=False).tolist(),
    "det": float(np.linalg.det(a)),
    "fft": np.abs(np.fft.fft(a[0])).tolist(),
    "sort": np.sort(b)[::7].tolist(),
    "cumsum32": np.cumsum(b * b, dtype=np.int32).tolist()[-5:],
    "transcendental": np.concatenate([np.exp(x), np.tanh(x), np.log1p(np.abs(x)), np.sin(x)]).tolist(),
    "float32": (a.astype(np.float32) * np.float32(1.1)).sum(axis=0).tolist(),
    "einsum": np.einsum("ij,jk->ik", a[:3], a[:, :2]).ravel().tolist(),
    "percentile": np.percentile(a, [5, 50, 95]).tolist(),
    "unique": np.unique(b % 17).tolist(),
    "text": np.array2string(a[:2, :3], precision=5),
    "dates": str(np.datetime64("2026-11-23") + np.arange(3)),
}
json.dumps(out)
"""


def run_start(context, server, config=None, squeezenet=False, wait=0):
    """One start in a new page of `context`; returns what startup.html saw."""
    query = {"config": json.dumps(config or {}), "battery": BATTERY}
    if squeezenet:
        query["squeezenet"] = "1"
    if wait:
        query["wait"] = str(wait)
    page = context.new_page()
    page.set_default_timeout(300_000)
    console = []  # with {"debug": true} in the config, why a start went the way it did
    page.on("console", lambda message: console.append(f"{message.type}: {message.text}"))
    try:
        page.goto(f"{server}/test-pages/startup.html?{urllib.parse.urlencode(query)}")
        result = page.evaluate("window.result")
    finally:
        page.close()
    assert "error" not in result, (result, console)
    result["console"] = console
    return result


# The build-time snapshot whatever the connection (by default a start fetches it
# only where it pays: js/src/startup.js buildSnapshotPays).
WITH_BUILD_SNAPSHOT = {"buildSnapshot": True}


def cold_start_served_by(browser, srv, config=None):
    """One start on a fresh profile from the server `srv`, which is shut down after."""
    context = browser.new_context()
    try:
        return run_start(context, f"http://127.0.0.1:{srv.server_address[1]}", config or WITH_BUILD_SNAPSHOT)
    finally:
        context.close()
        srv.shutdown()


def native_battery():
    scope = {}
    exec(compile(BATTERY.replace("json.dumps(out)", "result = json.dumps(out)"), "battery", "exec"), scope)
    return json.loads(scope["result"])


def assert_battery_matches_numpy(battery):
    expected = native_battery()
    assert battery.keys() == expected.keys()
    for key, want in expected.items():
        got = battery[key]
        if isinstance(want, (str, int)) or (isinstance(want, list) and want and isinstance(want[0], int)):
            assert got == want, key
        else:  # libm differs between wasm and the host in the last bits
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=key)


def lesser_panda_index():
    labels = (MODELS / "labels1001.txt").read_text().splitlines()
    return next(i for i, label in enumerate(labels) if label.split(",")[0].strip() == "lesser panda")


def test_starts_from_a_snapshot_match_a_normal_start(browser, server):
    """Normal start (which makes the snapshot), restored start, and a first
    visit using the build-time snapshot: the same numpy results (equal to
    native numpy), the same SqueezeNet probabilities, fresh random seeds."""
    with_model = (MODELS / "squeezenet1.0_nhwc" / "weights" / "conv1_kernel.npy").exists()
    context = browser.new_context()
    try:
        fresh = run_start(context, server, {"buildSnapshot": False}, squeezenet=with_model)
        restored = run_start(context, server, {"buildSnapshot": False}, squeezenet=with_model)
    finally:
        context.close()
    context = browser.new_context()
    try:
        built = run_start(context, server, WITH_BUILD_SNAPSHOT)
        after_built = run_start(context, server, WITH_BUILD_SNAPSHOT)  # the built snapshot was copied into Cache Storage
    finally:
        context.close()
    assert (fresh["snapshot"], restored["snapshot"], built["snapshot"]) == ("created", "restored", "built")
    assert built["snapshotStored"] and after_built["snapshot"] == "restored"
    assert after_built["battery"] == fresh["battery"]
    assert fresh["snapshotStored"]
    assert_battery_matches_numpy(fresh["battery"])
    assert restored["battery"] == fresh["battery"] and built["battery"] == fresh["battery"]
    # Each restore draws new seeds: no two starts share "random" numbers.
    draws = [tuple(r["random"]) for r in (fresh, restored, built)]
    assert len(set(draws)) == 3, draws
    if not with_model:
        pytest.skip(f"SqueezeNet weights not found under {MODELS}: numpy battery checked, SqueezeNet not")
    assert restored["squeezenet"] == fresh["squeezenet"]
    assert int(np.argmax(fresh["squeezenet"])) == lesser_panda_index()



@pytest.mark.all_engines
def test_build_time_snapshot_in_every_engine(engine, request, server):
    """A cold profile in each engine restores the one build-time snapshot (made
    in Chromium): "built", the numpy battery equal to native numpy; the next
    start in that profile restores the copy it stored ("restored"), same
    numbers, fresh random draws.  WebKitGTK used to refuse it (its function
    table came out 1154 entries longer; js/src/startup.js exportsAsInTable).
    The SIMD kernels attach in each, and the relaxed-SIMD build exactly where the
    engine validates it (js/src/simd.js decides by a probe at script load)."""
    if not list((ROOT / "dist").glob("webnn-engine-*.snapshot.gz")):
        pytest.skip("no build-time snapshot in dist/ (Chromium missing at build time?)")
    url = f"{server}/test-pages/startup.html?" + urllib.parse.urlencode({"config": json.dumps(WITH_BUILD_SNAPSHOT),
                                                                         "battery": BATTERY})
    browser = launch_engine(engine, request)
    try:
        runs = []
        for _ in range(2):
            page = browser.new_page()
            try:
                page.goto(url)
                runs.append(page.evaluate("window.result", timeout=300))
            finally:
                page.close()
    finally:
        browser.close()
    for run in runs:
        assert "error" not in run, run
    built, restored = runs
    assert (built["snapshot"], restored["snapshot"]) == ("built", "restored")
    assert built["snapshotStored"]
    assert_battery_matches_numpy(built["battery"])
    assert restored["battery"] == built["battery"]
    assert built["random"] != restored["random"]
    for run in runs:
        assert run["simd"]["backend"], run["simd"]
        assert ("relaxed" in run["simd"]["detail"]) == run["relaxedValidates"], (engine, run["simd"])

CORRUPT = r"""async (kind) => {
  const cache = await caches.open('webnn-polyfill-engine');
  const keys = (await cache.keys()).filter((r) => r.url.includes('webnn-engine.snapshot'));
  if (keys.length !== 1) return 'expected one stored snapshot, found ' + keys.length;
  let bytes = new Uint8Array(await (await cache.match(keys[0])).arrayBuffer());
  if (kind === 'flip') {
    bytes[bytes.length - 1234567] ^= 0x5a;  // inside the memory image
  } else if (kind === 'truncate') {
    bytes = bytes.slice(0, bytes.length >> 1);
  } else if (kind === 'tables') {
    // Intact bytes and hash, but a library that no longer fits where it was:
    // fails only while restoring, after Pyodide has copied the memory in.
    const view = new DataView(bytes.buffer);
    const metaLength = view.getUint32(4, true);
    const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + metaLength)));
    const payload = bytes.subarray(Math.ceil((8 + metaLength) / 16) * 16);
    meta.libs[0].tableLength += 1;
    const metaBytes = new TextEncoder().encode(JSON.stringify(meta));
    const head = Math.ceil((8 + metaBytes.length) / 16) * 16;
    const out = new Uint8Array(head + payload.length);
    new DataView(out.buffer).setUint32(0, view.getUint32(0, true), true);
    new DataView(out.buffer).setUint32(4, metaBytes.length, true);
    out.set(metaBytes, 8);
    out.set(payload, head);
    bytes = out;
  }
  await cache.put(keys[0], new Response(bytes));
  return 'ok';
}"""


def test_a_damaged_snapshot_falls_back_to_a_normal_start(browser, server):
    context = browser.new_context()
    try:
        first = run_start(context, server, {"buildSnapshot": False})
        assert first["snapshot"] == "created" and first["snapshotStored"]
        for kind in ("flip", "tables", "truncate"):
            page = context.new_page()
            page.goto(f"{server}/test-pages/checks.js")  # any page of the origin
            assert page.evaluate(CORRUPT, kind) == "ok"
            page.close()
            again = run_start(context, server, {"buildSnapshot": False})
            assert again["snapshot"] == "created", (kind, again["snapshot"])  # fell back, made a new one
            assert again["battery"] == first["battery"], kind
        last = run_start(context, server, {"buildSnapshot": False})
        assert last["snapshot"] == "restored" and last["battery"] == first["battery"]
    finally:
        context.close()


@pytest.mark.parametrize("delta", [-4096, 4096])
def test_a_build_snapshot_of_another_size_falls_back_to_a_normal_start(browser, tmp_path, delta):
    """The build-time snapshot is inflated while it downloads into a buffer of
    its recorded raw size (js/src/startup.js inflating): inflating to more or to
    fewer bytes than recorded is no restore but a normal start."""
    import re
    import serve

    if not list((ROOT / "dist").glob("webnn-engine-*.snapshot.gz")):
        pytest.skip("no build-time snapshot in dist/")
    dist = tmp_path / "dist"
    shutil.copytree(ROOT / "dist", dist)
    script = dist / "webnn-polyfill.js"
    text, count = re.subn(r"rawSize: (\d+)", lambda m: f"rawSize: {int(m.group(1)) + delta}", script.read_text())
    assert count == 1
    script.write_text(text)
    mounts = {**serve.default_mounts(), "/dist/": dist, "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    srv = serve.start(mounts=mounts)
    result = cold_start_served_by(browser, srv, {**WITH_BUILD_SNAPSHOT, "debug": True})
    assert result["snapshot"] == "created", (result["snapshot"], result["console"])
    assert_battery_matches_numpy(result["battery"])



@pytest.mark.parametrize("failure", ["connectionreset", "404"])
def test_a_build_snapshot_that_does_not_download_falls_back_to_a_normal_start(browser, server, failure):
    """The build-time snapshot is a shortcut: when its download fails, the start is
    a normal one that still makes (and stores) this profile's own snapshot."""
    context = browser.new_context()
    try:
        if failure == "404":
            context.route("**/*.snapshot.gz*", lambda route: route.fulfill(status=404, body="gone"))
        else:
            context.route("**/*.snapshot.gz*", lambda route: route.abort(failure))
        result = run_start(context, server, {**WITH_BUILD_SNAPSHOT, "debug": True})
        assert result["snapshot"] == "created", (result["snapshot"], result["console"])
        assert_battery_matches_numpy(result["battery"])
    finally:
        context.close()

def tampered_dist(tmp_path, pick):
    dist = tmp_path / "dist"
    shutil.copytree(ROOT / "dist", dist)
    name = pick(dist)
    target = dist / name
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0x01
    target.write_bytes(bytes(data))
    return name


@pytest.mark.parametrize("which,config", [
    ("pyodide.asm.js", {}),
    ("pyodide.asm.wasm", {}),
    ("stdlib start archive", {}),
    ("pyodide-lock.json", {}),
    ("site start archive", {"snapshot": False}),
    ("build snapshot", WITH_BUILD_SNAPSHOT),
    ("webnn-kernels-relaxed.wasm", {}),
    ("webnn-kernels-threads-relaxed.wasm", {}),
    ("webnn-kernels.wasm", {"fastPaths": "simd128"}),
    ("webnn-kernels-threads.wasm", {"fastPaths": "simd128"}),
])
def test_a_tampered_runtime_file_is_refused(browser, tmp_path, which, config):
    import serve

    picks = {
        "stdlib start archive": lambda d: next(d.glob("python_stdlib-start-*.zip")).name,
        "site start archive": lambda d: next(d.glob("webnn-site-start-*.zip")).name,
        "build snapshot": lambda d: next(iter(d.glob("webnn-engine-*.snapshot.gz")), None).name
        if list(d.glob("webnn-engine-*.snapshot.gz")) else pytest.skip("no build-time snapshot in dist/"),
    }
    name = tampered_dist(tmp_path, picks.get(which, lambda d: which))
    mounts = {**serve.default_mounts(), "/dist/": tmp_path / "dist", "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    srv = serve.start(mounts=mounts)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(f"http://127.0.0.1:{srv.server_address[1]}/test-pages/startup.html?config="
                  + urllib.parse.quote(json.dumps(config)))
        result = page.evaluate("window.result")
    finally:
        context.close()
        srv.shutdown()
    assert result.get("name") == "NotSupportedError", result
    assert name in result["error"] and "verification" in result["error"], result["error"]


def test_progress_events_and_prefetch(browser, server):
    context = browser.new_context()
    try:
        # Prefetch (the default): the runtime is on its way before createContext().
        early = run_start(context, server, wait=1500)
        late = run_start(context, server, {"prefetch": False}, wait=1500)
    finally:
        context.close()
    assert "pyodide.asm.wasm" in early["beforeCreate"]
    assert "pyodide.asm.wasm" not in late["beforeCreate"]
    # The SIMD kernels too (js/src/simd.js): the one-thread build and, on this
    # cross-origin isolated page, the kernel pool's threads build.
    kernels = {"webnn-kernels-relaxed.wasm", "webnn-kernels.wasm"}
    threads = {"webnn-kernels-threads-relaxed.wasm", "webnn-kernels-threads.wasm"}
    assert kernels & set(early["beforeCreate"]) and threads & set(early["beforeCreate"]), early["beforeCreate"]
    assert not (kernels | threads) & set(late["beforeCreate"]), late["beforeCreate"]
    for result in (early, late):
        events = result["progress"]
        phases = [e["phase"] for e in events]
        assert phases[0] == "fetch" and phases[-1] == "ready", phases
        assert events[-1]["fraction"] == 1 and result["lastProgress"]["phase"] == "ready"
        fractions = [e["fraction"] for e in events]
        assert fractions == sorted(fractions)
        loaded = [e["loaded"] for e in events]
        assert loaded == sorted(loaded) and loaded[-1] > 10_000_000  # Pyodide's wasm alone is ~10 MB


def test_without_the_relaxed_simd_builds_the_simd128_builds_run(browser, server):
    """The relaxed-SIMD kernel files missing (404), not tampered with: the start
    falls back to the simd128 builds, single-thread and pool alike."""
    context = browser.new_context()
    try:
        context.route("**/webnn-kernels*-relaxed.wasm*", lambda route: route.fulfill(status=404, body="gone"))
        # In the page (timeline: 'page'): its engine runs the kernel pool whose threads are counted here.
        fallback = run_start(context, server, {"timeline": "page"})
    finally:
        context.close()
    assert fallback["simd"]["backend"] and "relaxed" not in fallback["simd"]["detail"], fallback["simd"]
    if fallback["threads"]["requested"] > 1:
        assert fallback["threads"]["active"] > 1 and fallback["threads"]["reason"] is None, fallback["threads"]
    assert_battery_matches_numpy(fallback["battery"])


def test_build_snapshot_sent_with_content_encoding_gzip(browser):
    """Some servers send a .gz with Content-Encoding: gzip (fetch() then hands
    over the decoded bytes): the raw snapshot's hash applies and it restores."""
    import serve

    if not list((ROOT / "dist").glob("webnn-engine-*.snapshot.gz")):
        pytest.skip("no build-time snapshot in dist/")

    class Encoding(serve.Handler):
        def end_headers(self):
            if self.path.endswith(".snapshot.gz"):
                self.send_header("Content-Encoding", "gzip")
            super().end_headers()

    mounts = {**serve.default_mounts(), "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    handler = type("EncodingHandler", (Encoding,), {"mounts": mounts})
    srv = serve.Server(("127.0.0.1", 0), handler)
    import threading
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    result = cold_start_served_by(browser, srv)
    assert result["snapshot"] == "built"
    assert_battery_matches_numpy(result["battery"])
