"""The kernel pool in headless Chromium (issue 17 item 2): on a cross-origin
isolated page (tools/serve.py sends COOP/COEP) the cpu backend runs split conv2d,
depthwise, GEMM/matmul, pool and pow calls on Web Workers sharing one
WebAssembly.Memory (js/src/kernel_pool.js, fast/shared.py). Every fast-path op,
on odd shapes with tile remainders, gives the same bytes with 1 and with N
threads; engineStats says how many threads run."""
import base64

import numpy as np
import pytest

pytestmark = pytest.mark.browser

THREADS = 3


def pool_checks(page, server, threads):
    page.add_init_script(f"self.WEBNN_POLYFILL_CONFIG = {{ threads: {threads} }}")
    page.set_default_timeout(300_000)
    page.goto(f"{server}/test-pages/kernel_pool.html")
    page.wait_for_function("window.ready === true")
    return page.evaluate("poolChecks()")


def test_threaded_results_equal_single_thread_bit_for_bit(browser, server):
    runs = {}
    for threads in (1, THREADS):
        context = browser.new_context()
        try:
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            runs[threads] = pool_checks(page, server, threads)
            assert not errors
        finally:
            context.close()
    one, many = runs[1], runs[THREADS]
    assert one["simd"]["detail"] == many["simd"]["detail"]  # the same kernel build
    assert one["threads"]["active"] == 1 and one["status"]["pool"] is None
    assert many["threads"]["active"] == THREADS and many["threads"]["reason"] is None, many["threads"]
    assert many["status"]["threads"] == THREADS and many["status"]["threadsReason"] is None
    assert len(one["results"]) == len(many["results"]) >= 18
    for a, b in zip(one["results"], many["results"]):
        name = a["name"]
        assert a["same"] and b["same"], name
        assert a["fastCalls"] >= 1 and b["fastCalls"] >= 1, name
        assert a["poolJobs"] == 0 and b["poolJobs"] >= 2, f"{name}: not run on the pool"
        ya = np.frombuffer(base64.b64decode(a["y"]), np.float32)
        yb = np.frombuffer(base64.b64decode(b["y"]), np.float32)
        assert ya.size > 0 and np.isfinite(ya).all(), name
        assert ya.tobytes() == yb.tobytes(), f"{name}: {THREADS} threads differ from one (max |d| {np.abs(ya - yb).max()})"
    by_name = {r["name"]: r for r in many["results"]}
    chain = by_name["fire module (in-place concat) + chain"]
    assert chain["reused"] > 0  # activations of the chain read in shared memory, not copied in
    # Two fire modules read only by pool kernels: per dispatch (two) only the graph input
    # goes in and the output comes out; every other activation stays in shared memory.
    fires = by_name["two fire modules, pool kernels only (images)"]
    assert (fires["copiedIn"], fires["copiedOut"]) == (2 * fires["inputBytes"], 2 * fires["outputBytes"]), fires
    assert fires["reused"] > 0
    # A numpy op writing a concat slice: that concat has no image, its expands' outputs and
    # the squeeze output (for the sigmoid) come out of the shared memory.
    mixed = by_name["two fire modules, a numpy op in the concat"]
    assert mixed["copiedOut"] >= 2 * 35 * 33 * (24 + 32 + 32) * 4, mixed
    # A ShuffleNet unit between the layout pass's transposes stays in the shared memory: per
    # dispatch (two) the relu'd input goes in once and the output comes out once.
    for name in ("ShuffleNet unit: group-4 1x1 convs, odd channels, shuffle, depthwise",
                 "ShuffleNet unit: depthwise stride 2"):
        unit = by_name[name]
        assert (unit["copiedIn"], unit["copiedOut"]) == (2 * unit["inputBytes"], 2 * unit["outputBytes"]), unit
        assert unit["poolJobs"] == 2 * 6, unit  # transpose, conv+relu, shuffle, depthwise, conv, transpose


THREADS_JS = """(async () => {
    const ctx = await navigator.ml.createContext();
    return { stats: webnnPolyfill.engineStats.threads, status: webnnPolyfill.engineStats.kernels.status(ctx),
             hc: navigator.hardwareConcurrency, isolated: self.crossOriginIsolated };
})()"""


def test_default_threads_follow_hardware_concurrency(page, server):
    page.set_default_timeout(180_000)
    page.goto(f"{server}/test-pages/kernel_pool.html")
    r = page.evaluate(THREADS_JS)
    assert r["isolated"] is True
    t, s = r["stats"], r["status"]
    assert (t["requested"], t["hardwareConcurrency"], t["crossOriginIsolated"]) == (r["hc"], r["hc"], True)
    if r["hc"] > 1:
        assert t["active"] == r["hc"] and t["reason"] is None, t
        assert s["threads"] == r["hc"] and s["pool"]["threads"] == r["hc"]
    else:
        assert t["active"] == 1 and "one kernel thread" in t["reason"]


def test_not_isolated_runs_single_threaded_and_says_why(page, server):
    def strip_isolation(route):
        response = route.fetch()
        headers = {k: v for k, v in response.headers.items()
                   if k.lower() not in ("cross-origin-opener-policy", "cross-origin-embedder-policy")}
        route.fulfill(response=response, headers=headers)

    page.add_init_script("self.WEBNN_POLYFILL_CONFIG = { threads: 4 }")
    page.route("**/test-pages/kernel_pool.html*", strip_isolation)
    page.set_default_timeout(180_000)
    page.goto(f"{server}/test-pages/kernel_pool.html")
    r = page.evaluate(THREADS_JS)
    assert r["isolated"] is False
    t, s = r["stats"], r["status"]
    assert (t["requested"], t["active"], t["crossOriginIsolated"]) == (4, 1, False)
    assert "not cross-origin isolated" in t["reason"]
    assert s["threads"] == 1 and s["threadsRequested"] == 4 and "not cross-origin isolated" in s["threadsReason"]
    assert s["pool"] is None


# Three chained convolutions split on the pool, dispatched back to back, with the workers'
# watch set long (and never cut), short, and cut at once. Waits are polls: on a loaded
# machine a worker may get a core late, but the counters say what it did.
SPIN_JS = """(async () => {
    const c = await navigator.ml.createContext();
    const py = webnnPolyfill.pyodide();
    py.runPython('from webnn_core.backends.cpu.fast import tiles; tiles.POOL_MIN_WORK = 0');
    py.runPython('from webnn_core.backends.cpu import fast; port = fast.pool().port');
    const spinUs = py.runPython('port.stats().spinUs');
    const k = webnnPolyfill.engineStats.kernels;
    const stats = () => k.status(c).pool.port;
    const until = async (what) => {
      for (let i = 0; i < 500 && !what(stats()); i++) await new Promise((r) => setTimeout(r, 10));
      return stats();
    };
    const b = new MLGraphBuilder(c);
    const shape = [1, 33, 31, 24];
    const x = b.input('x', { dataType: 'float32', shape });
    let y = x;
    for (let i = 0; i < 3; i++) {
      const w = b.constant({ dataType: 'float32', shape: [24, 1, 1, 24] }, new Float32Array(24 * 24).fill(0.01 * (i + 1)));
      y = b.relu(b.conv2d(y, w, { inputLayout: 'nhwc', filterLayout: 'ohwi' }));
    }
    const g = await b.build({ y });
    const tx = await c.createTensor({ dataType: 'float32', shape, writable: true });
    c.writeTensor(tx, new Float32Array(33 * 31 * 24).fill(1));
    const ty = await c.createTensor({ dataType: 'float32', shape, readable: true });
    const dispatches = async (n) => {
      for (let i = 0; i < n; i++) c.dispatch(g, { x: tx }, { y: ty });
      await c.readTensor(ty);
    };
    // A watch cut short (as a loaded machine may cut one while the page starts) pauses the
    // watches for 100 ms; new settings end the pause.
    py.runPython('port.setSpin(200, 0)');
    await dispatches(1);
    const paused = await until((s) => s.asleep === 1 && s.watchesCut > 0);
    // A 5 s watch that is never cut: once the worker is awake, jobs need no wake-up.
    py.runPython('port.setSpin(5000000, 10000000)');
    await new Promise((r) => setTimeout(r, 150));  // (and past any pause: CALM_MS)
    await dispatches(1);
    const before = await until((s) => s.asleep === 0);
    await dispatches(20);
    const busy = stats();
    // The default watch: the idle worker falls asleep and stays asleep.
    py.runPython(`port.setSpin(${spinUs})`);
    await dispatches(1);
    await until((s) => s.asleep === 1);
    await new Promise((r) => setTimeout(r, 300));
    const idle = stats();
    // Every watch counts as descheduled (a gap of over 0 us between two looks at the clock):
    // it is cut short, so even a 5 s watch ends in sleep at once.
    py.runPython('port.setSpin(5000000, 0)');
    await dispatches(1);
    const cut = await until((s) => s.asleep === 1 && s.watchesCut > idle.watchesCut);
    return { spinUs, paused, before, busy, idle, cut };
})()"""


def test_idle_workers_sleep_and_busy_ones_take_the_next_job_awake(page, server):
    """A worker that finished a job watches for the next one a short while
    (js/src/kernel_pool.js SPIN_US) before it sleeps in Atomics.wait: jobs that follow
    each other while it watches need no wake-up (the caller notifies only a sleeping
    worker), an idle page's workers are all asleep (no core burnt between dispatches),
    and a worker descheduled during its watch (no core to spare) stops watching."""
    page.add_init_script("self.WEBNN_POLYFILL_CONFIG = { threads: 2 }")
    page.set_default_timeout(180_000)
    page.goto(f"{server}/test-pages/kernel_pool.html")
    r = page.evaluate(SPIN_JS)
    before, busy, idle, cut = r["before"], r["busy"], r["idle"], r["cut"]
    assert r["paused"]["watchesCut"] > 0, r["paused"]
    assert r["spinUs"] == 0 and busy["workers"] == 1  # off by default (kernel_pool.js SPIN_US says why)
    assert before["asleep"] == 0, before
    jobs = busy["jobs"] - before["jobs"]
    assert jobs == 20 * 3, (before, busy)
    assert busy["callerTiles"] + busy["workerTiles"] - before["callerTiles"] - before["workerTiles"] >= 2 * jobs
    assert busy["notifies"] == before["notifies"], (before, busy)  # the worker was awake for every job
    assert idle["asleep"] == idle["workers"] == 1 and idle["spinUs"] == r["spinUs"], idle
    assert cut["asleep"] == 1 and cut["watchesCut"] > idle["watchesCut"], cut
