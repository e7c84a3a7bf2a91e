"""The browser slice of the differential test (tests/fuzz/differential.py): client-shaped
random nets on the fuzz page under four polyfill configurations, the numpy kernels in
Pyodide, the plain wasm SIMD build on one thread, the same build on a 3-thread kernel
pool (Web Workers on a shared memory) and that pool in the timeline worker: each within
tolerance of float64 numpy, the SIMD build bit for bit equal to the numpy kernels, the
pool equal to one thread, and the timeline worker equal to the page. The long
run: ./dev fuzz --differential --minutes N --seed S."""
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser

SEED = 20261128
GRAPHS = 12


def test_client_nets_agree_across_page_configurations(browser, fuzz_server):
    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    import differential

    pages = differential.open_pages(browser, fuzz_server, ("numpy", "simd128", "simd128-pool", "worker"))
    try:
        threads = pages["simd128-pool"].evaluate("webnnPolyfill.engineStats.threads")
        assert threads["active"] == 3, threads  # the pool runs (the fuzz page is cross-origin isolated)
        batch = [(i, *differential.make(SEED, i)) for i in range(GRAPHS)]
        found = differential.browser_check(pages, batch)
        timeline = pages["worker"].evaluate("webnnPolyfill.engineStats.timeline")
        assert timeline["mode"] == "worker", timeline  # the graphs ran in the timeline worker, on its pool
        assert timeline["workerStats"]["threads"]["active"] == 3, timeline["workerStats"]
    finally:
        differential.close_pages(pages)
    assert not found, "\n".join(f"graph {SEED}:{i}: " + "; ".join(p) for i, p in found)
