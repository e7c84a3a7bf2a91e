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
