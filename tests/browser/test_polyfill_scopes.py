"""The script-tag polyfill in a window, a dedicated, a shared and a service
worker, and the ES-module entry: a graph runs through dispatch/readTensor and
through the deprecated compute().  In the engines that --browser selects
(default chromium); test_engines.py has the part that always runs in all three."""
import pytest

pytestmark = pytest.mark.browser

EXPECTED = {
    "dispatch": [1.0, 2.0, 3.0, 4.0],       # relu([[1,-1],[0,1]] @ [[1,2],[3,4]]) = relu([[-2,-2],[3,4]])
    "compute": [2.0, 4.0, 6.0, 8.0],        # [[2,0],[0,2]] @ w
}


def check(result):
    assert "error" not in result, result
    assert result["hasML"]
    assert result["toString"] == "[object MLContext]"
    assert result["shapeFrozen"]
    assert result["dispatch"] == [0.0, 0.0, 3.0, 4.0]
    assert result["byob"] == [7.0, 0.0, 0.0, 3.0, 4.0]
    assert result["compute"] == EXPECTED["compute"]
    assert result["computeDetached"]
    assert result["afterBuild"] == "InvalidStateError"
    assert result["lost"]


START_S = 240


def test_window(epage, server):
    epage.goto(f"{server}/test-pages/window.html")
    assert epage.evaluate("window.syncInstalled")  # interfaces exist at script load
    check(epage.evaluate("window.result", timeout=START_S))
    assert not [e for e in epage.errors if e.startswith("uncaught:")]


@pytest.mark.parametrize("kind", ["dedicated", "shared", "service"])
def test_workers(epage, server, kind):
    epage.goto(f"{server}/test-pages/workers.html?kind={kind}")
    result = epage.evaluate("window.result", timeout=START_S)
    check(result)
    assert result["snapshot"] in ("built", "restored"), result["snapshot"]  # the engine snapshot works in workers
    assert result["scope"] == {"dedicated": "DedicatedWorkerGlobalScope", "shared": "SharedWorkerGlobalScope",
                               "service": "ServiceWorkerGlobalScope"}[kind]


def test_es_module_entry(epage, server):
    epage.goto(f"{server}/test-pages/module.html")
    assert epage.evaluate("window.result", timeout=START_S) == {"same": True, "y": [1.0, 2.0, 3.0]}


def test_engine_snapshot_is_created_then_restored(browser, server):
    """Without the build-time snapshot, the first start in a browser profile
    makes an engine snapshot and the second restores it from Cache Storage;
    the engine works the same."""
    context = browser.new_context()
    try:
        seen = []
        for _ in range(2):
            pg = context.new_page()
            pg.goto(f"{server}/test-pages/window.html?config=" + '{"buildSnapshot":false}')
            result = pg.evaluate("window.result")
            check(result)
            if not seen:  # the snapshot is stored after the engine is up
                pg.wait_for_function("webnnPolyfill.engineStats.snapshotStored === true")
            seen.append(result["snapshot"])
            pg.close()
    finally:
        context.close()
    assert seen == ["created", "restored"]
