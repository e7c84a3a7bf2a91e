"""Browser-driven tests: the whole runner (CLI) on the fixture tree in
headless Chromium.  Skipped when Chromium is absent."""

import json
import os
import subprocess
import sys

import pytest

from conftest import PROJECT_ROOT, chromium_missing_reason

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "fixture")
POLYFILL = os.path.join(FIXTURE, "polyfill")

_reason = chromium_missing_reason()
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(_reason is not None, reason=_reason or "")]

SCOPES = ("window", "worker", "sharedworker", "serviceworker")
MAIN_FILTER = "webnn/scopes*,webnn/isolated*,webnn/errors,webnn/window_only*"
MAIN_TIMEOUT = "30"
SHORT_TIMEOUT = "3"   # long.https.any.js needs 4 s: passes only with timeout=long x5


def wrapper(scope):
    return {"window": ".any.html", "worker": ".any.worker.html",
            "sharedworker": ".any.sharedworker.html",
            "serviceworker": ".any.serviceworker.html"}[scope]


def run_cli(*args, timeout=MAIN_TIMEOUT):
    cmd = [sys.executable, "-m", "wpt_runner", "--wpt", FIXTURE, "--polyfill", POLYFILL,
           "--polyfill-config", '{"fixture": "extra"}', "--timeout", timeout, "--jobs", "2",
           *args]
    return subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """One run over the fixture tree (cpu and gpu variants), with expectations."""
    tmp = tmp_path_factory.mktemp("full")
    exp = tmp / "expectations.json"
    exp.write_text(json.dumps({
        "/webnn/scopes.https.any.html?cpu": ["polyfill injected", "failing subtest"],
        "/webnn/window_only.window.html": ["window.js runs in a window with the polyfill"],
        "/webnn/not/run.https.any.html": ["whatever"],
    }))
    proc = run_cli("--variants", "cpu,gpu", "--filter", MAIN_FILTER,
                   "--out", str(tmp / "r.json"), "--report", str(tmp / "r.md"),
                   "--expectations", str(exp))
    doc = json.loads((tmp / "r.json").read_text())
    return proc, doc["results"], (tmp / "r.md").read_text()


@pytest.fixture(scope="module")
def timeout_run(tmp_path_factory):
    """The pages under webnn/timeout/, with a short per-page timeout."""
    tmp = tmp_path_factory.mktemp("timeouts")
    proc = run_cli("--filter", "webnn/timeout", "--out", str(tmp / "r.json"),
                   timeout=SHORT_TIMEOUT)
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp / "r.json").read_text())["results"]


def subtests(res):
    return {s["name"]: s for s in res["subtests"]}


def test_all_wrappers_ran(full_run):
    _, results, _ = full_run
    expected = {f"/webnn/scopes.https{wrapper(s)}?{v}" for s in SCOPES for v in ("cpu", "gpu")}
    expected |= {f"/webnn/isolated.https{wrapper(s)}" for s in SCOPES}
    expected |= {"/webnn/errors/uncaught.https.any.html",
                 "/webnn/window_only.window.html"}
    assert set(results) == expected   # ?npu variants were not selected


@pytest.mark.parametrize("scope", SCOPES)
@pytest.mark.parametrize("variant", ["cpu", "gpu"])
def test_scopes_polyfill_meta_and_results(full_run, scope, variant):
    _, results, _ = full_run
    res = results[f"/webnn/scopes.https{wrapper(scope)}?{variant}"]
    assert res["status"] == "OK", res
    st = subtests(res)
    for name in ("polyfill injected", "polyfill config", "META script loaded", "META title",
                 "variant in location.search", "GLOBAL", "promise test", "async test"):
        assert st[name]["status"] == "PASS", (name, st[name])
    failing = st["failing subtest"]
    assert failing["status"] == "FAIL"
    assert "deliberate failure" in failing["message"]
    assert res["passed"] == 8 and res["total"] == 9


@pytest.mark.parametrize("scope", ["window", "worker", "serviceworker"])
def test_headers_make_cross_origin_isolated(full_run, scope):
    # Chromium does not make shared workers cross-origin isolated, so those
    # are only checked for the headers by the server tests.
    _, results, _ = full_run
    res = results[f"/webnn/isolated.https{wrapper(scope)}"]
    st = subtests(res)
    assert st["crossOriginIsolated"]["status"] == "PASS", st
    assert st["SharedArrayBuffer"]["status"] == "PASS", st


def test_never_completing_page_is_a_timeout(timeout_run):
    results = timeout_run
    res = results["/webnn/timeout/never_done.https.any.html"]
    assert res["status"] == "TIMEOUT"
    assert "did not complete" in res["message"]
    # the subtest that did finish is kept
    assert subtests(res)["finishes"]["status"] == "PASS"


def test_hung_page_is_a_timeout(timeout_run):
    results = timeout_run
    res = results["/webnn/timeout/hang.https.any.html"]
    assert res["status"] == "TIMEOUT"
    assert "stopped responding" in res["message"]
    assert subtests(res)["finishes first"]["status"] == "PASS"


def test_long_timeout_multiplies(timeout_run):
    results = timeout_run
    res = results["/webnn/timeout/long.https.any.html"]
    assert res["status"] == "OK", res
    assert res["passed"] == 1
    assert res["duration"] > float(SHORT_TIMEOUT)


def test_uncaught_error_is_reported(full_run):
    _, results, _ = full_run
    res = results["/webnn/errors/uncaught.https.any.html"]
    assert res["status"] == "ERROR"
    assert any("fixture uncaught boom" in e for e in res["errors"]), res["errors"]
    assert subtests(res)["before the error"]["status"] == "PASS"


def test_window_js(full_run):
    _, results, _ = full_run
    res = results["/webnn/window_only.window.html"]
    assert res["status"] == "OK" and res["passed"] == res["total"] == 1


def test_progress_report_and_expectation_gating(full_run):
    proc, _, md = full_run
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr
    assert "[14/14]" not in err and "[1/14]" not in err   # no progress lines off a terminal
    assert "subtests passing" in err
    assert "Regressions (expected PASS, ran and did not pass): 1" in err
    assert "/webnn/scopes.https.any.html?cpu :: failing subtest" in err
    assert "Newly passing" in err
    assert "/webnn/scopes.https.any.html?cpu :: META script loaded" in err
    assert "/webnn/not/run" not in err
    assert "| webnn (idlharness/other) | cpu | sharedworker | 0/1 | 8/9 |" in md
    assert "| errors | default | window | 0/1 | 1/1 |" in md


def test_verbose_prints_a_line_per_page():
    proc = run_cli("--filter", "webnn/window_only.window.js", "-v")
    assert proc.returncode == 0, proc.stderr
    assert "[1/1]" in proc.stderr and "/webnn/window_only.window.html" in proc.stderr


def test_timeout_totals(timeout_run):
    assert {r["status"] for r in timeout_run.values()} == {"OK", "TIMEOUT"}
    assert len(timeout_run) == 3


def test_update_expectations_then_pass(tmp_path):
    exp = tmp_path / "exp.json"
    exp.write_text(json.dumps({"/webnn/elsewhere.https.any.html": ["kept"],
                               "/webnn/window_only.window.html": ["stale name"]}))
    args = ("--filter", "webnn/window_only.window.js", "--expectations", str(exp))
    proc = run_cli(*args, "--update-expectations")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(exp.read_text()) == {
        "/webnn/elsewhere.https.any.html": ["kept"],
        "/webnn/window_only.window.html": ["window.js runs in a window with the polyfill"],
    }
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert "all expected-passing subtests passed" in proc.stderr
