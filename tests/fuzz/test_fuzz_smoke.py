"""A short seeded fuzz run (about a minute) as part of ./dev test; longer runs:
./dev fuzz --minutes N --seed S (tests/fuzz/runner.py)."""
import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser

SMOKE_SECONDS = 50
SMOKE_SEED = 20261125


def test_fuzz_smoke(page, fuzz_server):
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    import runner

    report = runner.run_on_page(page, fuzz_server, SMOKE_SECONDS, SMOKE_SEED, cycles=60, mib=16)
    print(runner.describe(report))
    assert not report["failures"], runner.describe(report)
    counts = report["counts"]
    assert counts.get("graphs", 0) >= 10 and counts.get("timelines", 0) >= 3 and counts.get("memory_cycles") == 60
    if "webidl" not in report["skipped"]:
        assert counts.get("calls", 0) >= 100


def test_fuzz_smoke_through_the_timeline_worker(page, fuzz_server):
    """The same campaigns with the contexts in the timeline worker, a window's default: the
    shadow's checks in the page, the calls posted, the graphs replayed and run in the worker,
    the reads answered from there; the memory cycles bound the worker's heap too."""
    import sys

    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    import runner

    report = runner.run_on_page(page, fuzz_server, 30, SMOKE_SEED + 1, cycles=30, mib=16, timeline="worker")
    print(runner.describe(report))
    assert not report["failures"], runner.describe(report)
    assert page.evaluate("webnnPolyfill.engineStats.timeline.mode") == "worker"
    counts = report["counts"]
    assert counts.get("graphs", 0) >= 5 and counts.get("timelines", 0) >= 2, counts
    assert counts.get("memory_cycles") == 30 and report["memory"]["workerPeakGrowthBytes"] is not None, report["memory"]
    if "webidl" not in report["skipped"]:
        assert counts.get("calls", 0) >= 50


def test_a_page_that_never_answers_is_a_hang_not_a_stuck_run(page, fuzz_server):
    """The fuzz runners' page.evaluate with a deadline (tests/fuzz/differential.py evaluate):
    Playwright's own waits for ever on a promise that never settles."""
    import sys
    import time

    sys.path.insert(0, str(ROOT / "tests" / "fuzz"))
    from differential import PageHang, evaluate

    page.goto(f"{fuzz_server}/fuzz/fuzz.html")
    assert evaluate(page, "([a, b]) => Promise.resolve(a + b)", [2, 3], 5) == 5
    started = time.monotonic()
    with pytest.raises(PageHang, match="no answer after 1 s"):
        evaluate(page, "() => new Promise(() => {})", None, 1)
    assert time.monotonic() - started < 30
    with pytest.raises(Exception, match="boom"):  # a page error is not a hang
        evaluate(page, "() => Promise.reject(new Error('boom'))", None, 5)
