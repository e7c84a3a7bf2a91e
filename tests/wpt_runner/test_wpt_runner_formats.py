"""wptreport.json, the HTML report, sharding and merged chunks, standard timeouts
(server side) - no browser needed."""

import json
import os
import subprocess
import sys
import types

import pytest

from conftest import FIXTURE, PROJECT_ROOT
from wpt_runner import manifest, report, results, wptreport
from wpt_runner.manifest import Run
from wpt_runner.results import FileResult
from wpt_runner.server import Site

# A bare WPT git (the March-2025 snapshot's mirror) holds wptrunner's own formatter.
WPT_GIT = os.environ.get("WPT_GIT", "/work/.mirror/BruceDai+wpt/repo")
FORMATTER = "tools/wptrunner/wptrunner/formatters/wptreport.py"


def fr(source, scope, variant, subtests, status="OK", message=None, duration=1.5):
    return FileResult(Run(source, scope, variant, False), status, message,
                      [{"name": n, "status": s, "message": m} for n, s, m in subtests], [], duration)


A = "webnn/conformance_tests/add.https.any.js"
B = "webnn/idlharness.https.any.js"


def sample():
    return [fr(A, "window", "?cpu", [("a1", "PASS", None), ("a2", "FAIL", "assert_equals: 1 != 2"),
                                      ("a3", "PASS", None)]),
            fr(B, "dedicatedworker", "", [("b1", "TIMEOUT", "Test timed out")], status="TIMEOUT",
               message="the page did not complete within 60s", duration=60.25)]


EXPECTED = {"/webnn/conformance_tests/add.https.any.html?cpu": ["a1", "a2"],
            "/webnn/idlharness.https.any.worker.html": ["b1"]}
META = {"browser": "firefox 153.7.0esr", "time_start": 1_700_000_000_000, "time_end": 1_700_000_061_750,
        "commit": "0556bbc", "variants": "cpu"}


def test_wptreport_shape():
    doc = wptreport.build(sample(), META, EXPECTED)
    assert set(doc) == {"run_info", "time_start", "time_end", "results", "subsuites"}
    assert doc["run_info"]["product"] == "firefox" and doc["run_info"]["browser_version"] == "153.7.0esr"
    assert (doc["time_start"], doc["time_end"]) == (META["time_start"], META["time_end"])
    add, idl = doc["results"]
    assert add == {"test": "/webnn/conformance_tests/add.https.any.html?cpu", "subsuite": "",
                   "status": "OK", "message": None, "duration": 1500,
                   "subtests": [{"name": "a1", "status": "PASS", "message": None},
                                {"name": "a2", "status": "FAIL", "message": "assert_equals: 1 != 2",
                                 "expected": "PASS"},
                                {"name": "a3", "status": "PASS", "message": None}]}
    assert idl["status"] == "TIMEOUT" and idl["expected"] == "OK" and idl["duration"] == 60250
    assert idl["subtests"][0]["expected"] == "PASS"
    json.dumps(doc)


def _wptrunner_formatter():
    """wptrunner's WptreportFormatter, read from the WPT git at test time (its mozlog base
    class and server-stripping helper stubbed: the formatter uses neither for testharness tests)."""
    try:
        src = subprocess.run(["git", "--git-dir", WPT_GIT, "show", f"HEAD:{FORMATTER}"],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip(f"no WPT git with {FORMATTER} at {WPT_GIT} (set WPT_GIT)")
    src = src.replace("from mozlog.structured.formatters.base import BaseFormatter",
                      "BaseFormatter = object")
    src = src.replace("from ..executors.base import strip_server", "strip_server = lambda url: url")
    mod = types.ModuleType("wptreport_upstream")
    exec(compile(src, FORMATTER, "exec"), mod.__dict__)
    return mod.WptreportFormatter


def test_wptreport_equals_what_wptrunner_writes():
    """Feed wptrunner's formatter the mozlog events wptrunner would log for the same
    run; its JSON must equal ours (run_info aside, which is the caller's)."""
    Formatter = _wptrunner_formatter()
    f = Formatter()
    ours = wptreport.build(sample(), META, EXPECTED)
    f.suite_start({"time": META["time_start"], "run_info": ours["run_info"]})
    t = META["time_start"]
    for r in sorted(sample(), key=lambda r: r.url):
        f.test_start({"test": r.url, "time": t})
        want = set(EXPECTED.get(r.url, ()))
        for s in r.subtests:
            ev = {"test": r.url, "subtest": s["name"], "status": s["status"]}
            if s["message"] is not None:
                ev["message"] = s["message"]
            if s["name"] in want and s["status"] != "PASS":
                ev["expected"] = "PASS"
            f.test_status(ev)
        t += int(round(r.duration * 1000))
        end = {"test": r.url, "status": r.status, "time": t}
        if r.message is not None:
            end["message"] = r.message
        if r.status != "OK":
            end["expected"] = "OK"
        f.test_end(end)
    upstream = json.loads(f.suite_end({"time": META["time_end"]}))
    # mozlog leaves out a message that is None; we always write the key (null), as the
    # formatter does for subtests it creates.
    for res in upstream["results"]:
        res.setdefault("message", None)
        for s in res["subtests"]:
            s.setdefault("message", None)
    assert upstream == ours


def test_html_report_lists_failures_with_messages_and_a_filter():
    html = report.render_html(sample(), {"browser": "webkit 2.50.6"})
    assert "<input id=filter" in html and "addEventListener('input'" in html
    assert "webkit 2.50.6" in html
    assert "assert_equals: 1 != 2" in html and "a2" in html
    assert html.count("<tr class=fail>") == 2 and "1 not passing" in html
    assert "2/3" in html and "0/1" in html
    assert "&lt;" in report.render_html([fr(A, "window", "", [("x<y", "FAIL", "<b>")])])


def _fixture_runs():
    sources = manifest.discover_sources(FIXTURE, ["webnn"])
    return manifest.expand_runs(FIXTURE, sources, manifest.parse_scope_list("window,worker"), None, [])


def test_chunks_split_like_wptrunner():
    runs = _fixture_runs()
    assert len(runs) > 10
    import hashlib
    for total in (1, 2, 3, 5):
        chunks = [manifest.select_chunk(runs, n, total) for n in range(1, total + 1)]
        assert sorted(r.url for c in chunks for r in c) == sorted(r.url for r in runs)  # a partition
        for n, chunk in enumerate(chunks, 1):
            for r in chunk:   # wptrunner's PathHashChunker, by hand
                assert int(hashlib.md5(r.source.encode()).hexdigest(), 16) % total == n - 1
        # every page of one test file lands in the same chunk
        owner = {}
        for n, chunk in enumerate(chunks):
            for r in chunk:
                assert owner.setdefault(r.source, n) == n
    by_id = manifest.select_chunk(runs, 1, 2, "id_hash") + manifest.select_chunk(runs, 2, 2, "id_hash")
    assert sorted(r.url for r in by_id) == sorted(r.url for r in runs)
    with pytest.raises(ValueError):
        manifest.select_chunk(runs, 3, 2)


def test_list_with_chunks_and_merged_reports_equal_an_unsharded_run(tmp_path):
    def cli(*args):
        proc = subprocess.run([sys.executable, "-m", "wpt_runner", "--wpt", FIXTURE, *args],
                              cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    everything = cli("--list")
    parts = [cli("--list", "--this-chunk", str(n), "--total-chunks", "3") for n in (1, 2, 3)]
    assert sorted(sum(parts, [])) == sorted(everything)
    assert all(parts)

    # Results of an "unsharded run" split by chunk, written as chunk files, merged back.
    runs = _fixture_runs()
    full = [fr(r.source, r.scope, r.variant, [("t", "PASS" if i % 3 else "FAIL", None)])
            for i, r in enumerate(runs)]
    by_url = {r.url: r for r in full}
    files = []
    for n in (1, 2, 3):
        chunk = [by_url[r.url] for r in manifest.select_chunk(runs, n, 3)]
        path = tmp_path / f"chunk{n}.json"
        results.write_json(str(path), chunk, {"browser": "chromium", "duration_s": 1.0})
        files += ["--from-results", str(path)]
    merged_md, merged_rep = tmp_path / "merged.md", tmp_path / "merged.json"
    proc = subprocess.run([sys.executable, "-m", "wpt_runner", *files, "--report", str(merged_md),
                           "--wptreport", str(merged_rep)],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "merged.html").exists()
    meta = {"browser": "chromium", "duration_s": 3.0}
    # the report body (everything below the run's facts) equals the unsharded one
    body = lambda text: text[text.index("- files:"):]  # noqa: E731
    assert body(merged_md.read_text()) == body(report.render(full, meta))
    assert [r["test"] for r in json.loads(merged_rep.read_text())["results"]] == sorted(by_url)


def test_standard_timeouts_leave_testharness_its_own():
    plain = Site(FIXTURE, None, None)
    std = Site(FIXTURE, None, None, standard_timeouts=True)
    _, _, body = plain.resolve("/resources/testharnessreport.js")
    _, _, body_std = std.resolve("/resources/testharnessreport.js")
    assert not body.startswith(b"self.__wptRunnerStandardTimeouts")
    assert body_std.startswith(b"self.__wptRunnerStandardTimeouts = true;\n") and body_std.endswith(body)
    from wpt_runner.browser import STANDARD_EXTRA_S, page_limit
    normal, long = Run("a.any.js", "window", "", False), Run("a.any.js", "window", "", True)
    assert page_limit(normal, 60, True) == 10 + STANDARD_EXTRA_S
    assert page_limit(long, 60, True) == 60 + STANDARD_EXTRA_S
    assert page_limit(normal, 60, False) == 60 and page_limit(long, 60, False) == 300
