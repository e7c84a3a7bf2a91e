"""The cross-engine smoke set: Chromium, Firefox ESR and WebKitGTK all run the
README's quick start, the MLTensor timeline (dispatch/readTensor), a dedicated
worker, SqueezeNet top-1 and the start-up snapshot (created on the first start
in a profile, restored on the second).  Always all three engines (marker
``all_engines``), whatever ``--browser`` says; an engine missing here skips."""
import re
import time

import numpy as np
import pytest

from conftest import MODELS, ROOT, launch_engine
from test_polyfill_scopes import check

pytestmark = [pytest.mark.browser, pytest.mark.all_engines]
START_S = 240   # a cold start on a loaded 2-core machine, WebKit being the slowest


def readme_quick_start() -> str:
    """The module script of README's quick start, its console.log() turned into a return."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    code = re.search(r'<script type="module">\n(.*?)</script>', section, re.S).group(1)
    assert code.count("console.log(") == 1, code
    return code.replace("console.log(", "return (")


def test_quick_start(epage, server):
    code = readme_quick_start()
    epage.goto(f"{server}/test-pages/blank.html")
    got = epage.evaluate(f"(async () => {{ const r = await (async () => {{ {code} }})(); return Array.from(r); }})()",
                         timeout=START_S)
    x = np.array([-3, -1, 0, 2], np.float32)
    assert got == np.maximum(x + 1, 0).tolist()


def test_tensor_timeline(epage, server):
    epage.goto(f"{server}/test-pages/window.html")
    check(epage.evaluate("window.result", timeout=START_S))
    assert epage.evaluate("window.syncInstalled")   # the interfaces exist at script load


def test_dedicated_worker(epage, server):
    epage.goto(f"{server}/test-pages/workers.html?kind=dedicated")
    result = epage.evaluate("window.result", timeout=START_S)
    check(result)
    assert result["scope"] == "DedicatedWorkerGlobalScope"


@pytest.mark.slow
def test_squeezenet_top1(epage, server):
    if not (MODELS / "squeezenet1.0_nhwc" / "weights" / "conv1_kernel.npy").exists():
        pytest.skip(f"SqueezeNet weights not found under {MODELS}")
    epage.goto(f"{server}/test-pages/squeezenet.html")
    result = epage.evaluate("window.result", timeout=2 * START_S)
    assert "error" not in result, result
    assert result["top5"][0]["label"] == "lesser panda", result["top5"]


def test_snapshot_created_then_restored(engine, request, server):
    """A new profile without the build-time snapshot: the first start creates
    the engine snapshot in Cache Storage, the second restores it, and the
    engine works the same."""
    browser = launch_engine(engine, request)
    try:
        seen = []
        for _ in range(2):
            page = browser.new_page()
            page.goto(f"{server}/test-pages/window.html?config=" + '{"buildSnapshot":false}')
            result = page.evaluate("window.result", timeout=START_S)
            check(result)
            if not seen:  # the snapshot is stored after the engine is up
                deadline = time.monotonic() + 60
                while not page.evaluate("webnnPolyfill.engineStats.snapshotStored === true"):
                    assert time.monotonic() < deadline, "the engine snapshot was never stored"
                    time.sleep(0.2)
            seen.append(result["snapshot"])
            page.close()
    finally:
        browser.close()
    assert seen == ["created", "restored"]


def test_build_time_snapshot(engine, request, server):
    """The first start in a new profile restores the snapshot served beside the
    runtime (made at build time in Chromium): "built", not a normal start.  One
    snapshot serves every engine because js/src/startup.js lays the function
    table out alike everywhere (exportsAsInTable; WebKitGTK used to refuse it).
    Then the engine must work: the page's checks run on the restored engine."""
    browser = launch_engine(engine, request)
    try:
        page = browser.new_page()
        # buildSnapshot: true, whatever the connection (by default only where it pays)
        page.goto(f"{server}/test-pages/window.html?config=" + '{"buildSnapshot":true}')
        result = page.evaluate("window.result", timeout=START_S)
        check(result)
        assert result["snapshot"] == "built", result["snapshot"]
    finally:
        browser.close()
