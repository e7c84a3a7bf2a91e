"""The wasm SIMD fast paths in headless Chromium: the kernel module attaches to
Pyodide's memory, every fast path takes its calls, and the results match the
numpy kernels (bit for bit with the plain simd128 build, which does the same
float32 operations in the same order; within float tolerance with the
relaxed-SIMD build, whose multiply-adds may be fused). Switching fast paths
off, or losing the module, falls back to numpy with the reason visible."""
import pytest

pytestmark = pytest.mark.browser

CASES = 14


def load(page, server, query=""):
    page.set_default_timeout(180_000)
    page.goto(f"{server}/test-pages/simd.html{query}")
    page.wait_for_function("window.ready === true")


def test_fast_paths_active_and_match_numpy(page, server):
    load(page, server)
    out = page.evaluate("kernelChecks()")
    status = out["status"]
    assert status["backend"] == "wasm", status
    assert status["enabled"] and status["reason"] is None
    assert len(out["results"]) == CASES
    for r in out["results"]:
        assert r["fastCalls"] >= 1 and r["refFastCalls"] == 0, r
        assert r["maxAbs"] < 1e-4, r
        if "Pool" in r["name"]:
            assert r["maxUlp"] == 0, r  # max is exact; average sums in float64 like numpy
    assert not page.errors


def test_plain_simd128_build_is_bit_identical_to_numpy(page, server):
    load(page, server, "?fastpaths=simd128")
    out = page.evaluate("kernelChecks()")
    assert out["status"]["backend"] == "wasm" and "simd128" in out["status"]["detail"], out["status"]
    for r in out["results"]:
        assert r["fastCalls"] >= 1, r
        assert r["maxUlp"] == 0, r


def test_query_switches_fast_paths_off(page, server):
    load(page, server, "?fastpaths=0")
    status = page.evaluate("(async () => { await navigator.ml.createContext(); return webnnPolyfill.engineStats.simd; })()")
    assert status["backend"] == "wasm" and status["enabled"] is False  # attached, but not used
    r = page.evaluate("""(async () => {
        const k = webnnPolyfill.engineStats.kernels;
        const ctx = await navigator.ml.createContext();
        const b = new MLGraphBuilder(ctx);
        const x = b.input('x', { dataType: 'float32', shape: [1, 8, 8, 4] });
        const w = b.constant({ dataType: 'float32', shape: [4, 3, 3, 4] }, new Float32Array(144).fill(0.5));
        const g = await b.build({ y: b.relu(b.conv2d(x, w, { inputLayout: 'nhwc', filterLayout: 'ohwi' })) });
        k.resetProfile(ctx); k.setProfiling(ctx, true);
        const r = await ctx.compute(g, { x: new Float32Array(256).fill(1) }, { y: new Float32Array(144) });
        k.setProfiling(ctx, false);
        return { y0: r.outputs.y[0], profile: k.profile(ctx), status: k.status(ctx) };
    })()""")
    assert r["y0"] == 18.0
    assert r["status"]["enabled"] is False  # the context was created with the page's setting
    assert set(r["profile"]) == {"conv2d", "relu"}  # not compiled: no fusion
    assert all(v["fast_calls"] == 0 for v in r["profile"].values())


def test_missing_module_falls_back_to_numpy_with_a_reason(page, server):
    page.route("**/webnn-kernels*.wasm*", lambda route: route.fulfill(status=404, body="gone"))
    load(page, server)
    out = page.evaluate("kernelChecks()")
    status = out["status"]
    assert status["backend"] is None
    assert "webnn-kernels.wasm: HTTP 404" in status["reason"], status
    for r in out["results"]:
        assert r["fastCalls"] == 0 and r["maxUlp"] == 0, r


def test_two_contexts_in_one_page_keep_their_own_fast_path_switch(page, server):
    """Each MLContext owns its backend: turning one context's fast paths off
    (before building) leaves the other's on, and their profiles stay apart."""
    load(page, server)
    r = page.evaluate("""(async () => {
        const fast = await navigator.ml.createContext();
        const ref = await navigator.ml.createContext();
        const k = webnnPolyfill.engineStats.kernels;
        k.setFastPaths(ref, false);
        const run = async (ctx) => {
            const b = new MLGraphBuilder(ctx);
            const x = b.input('x', { dataType: 'float32', shape: [1, 8, 8, 4] });
            const w = b.constant({ dataType: 'float32', shape: [4, 3, 3, 4] }, new Float32Array(144).fill(0.5));
            const g = await b.build({ y: b.relu(b.conv2d(x, w, { inputLayout: 'nhwc', filterLayout: 'ohwi' })) });
            k.resetProfile(ctx); k.setProfiling(ctx, true);
            const out = await ctx.compute(g, { x: new Float32Array(256).fill(1) }, { y: new Float32Array(144) });
            k.setProfiling(ctx, false);
            return out.outputs.y[0];
        };
        const yFast = await run(fast);
        const yRef = await run(ref);
        return { yFast, yRef, fast: k.profile(fast), ref: k.profile(ref),
                 fastOn: k.status(fast).enabled, refOn: k.status(ref).enabled,
                 limitsEqual: JSON.stringify(fast.opSupportLimits()) === JSON.stringify(ref.opSupportLimits()) };
    })()""")
    assert r["yFast"] == r["yRef"] == 18.0
    assert r["fastOn"] is True and r["refOn"] is False
    assert r["fast"]["conv2d+relu"]["fast_calls"] == 1  # compiled and run on the SIMD kernels
    assert set(r["ref"]) == {"conv2d", "relu"} and all(v["fast_calls"] == 0 for v in r["ref"].values())
    assert r["limitsEqual"]


# Kernel threads (engineStats.threads, the kernel pool): tests/browser/test_kernel_pool_browser.py
