"""Unit tests: expectations logic, results JSON and the Markdown report."""

import json

from wpt_runner import expectations, report, results
from wpt_runner.manifest import Run
from wpt_runner.results import FileResult


def fr(source, scope, variant, subtests, status="OK"):
    return FileResult(Run(source, scope, variant, False), status, None,
                      [{"name": n, "status": s, "message": None} for n, s in subtests])


A = "webnn/conformance_tests/add.https.any.js"
B = "webnn/idlharness.https.any.js"
URL_A = "/webnn/conformance_tests/add.https.any.html?cpu"
URL_B = "/webnn/idlharness.https.any.worker.html"


def sample():
    return [fr(A, "window", "?cpu", [("a1", "PASS"), ("a2", "FAIL"), ("a3", "PASS")]),
            fr(B, "dedicatedworker", "", [("b1", "TIMEOUT")], status="TIMEOUT")]


def test_compare_regressions_missing_and_newly_passing():
    exp = {URL_A: ["a1", "a2", "gone"], URL_B: ["b1"], "/webnn/not/run.html": ["x"]}
    cmp = expectations.compare(exp, sample())
    assert cmp.failed
    assert sorted(cmp.regressions) == [(URL_A, "a2"), (URL_B, "b1")]
    assert cmp.missing == [(URL_A, "gone")]   # expected, but the page never registered it
    assert cmp.newly_passing == [(URL_A, "a3")]
    text = expectations.describe(cmp)
    assert "Regressions" in text and f"{URL_A} :: a2" in text
    assert "Not registered" in text and f"{URL_A} :: gone" in text
    assert "Newly passing" in text and f"{URL_A} :: a3" in text


def test_compare_missing_alone_fails():
    cmp = expectations.compare({URL_A: ["a1", "sab"]}, sample())
    assert cmp.failed and cmp.regressions == [] and cmp.missing == [(URL_A, "sab")]


def test_compare_clean():
    cmp = expectations.compare({URL_A: ["a1", "a3"]}, sample())
    assert not cmp.failed and cmp.newly_passing == [] and cmp.missing == []
    assert expectations.describe(cmp) == ""


def test_update_merges_only_run_files():
    old = {URL_A: ["zzz"], URL_B: ["b1"], "/webnn/other.html": ["o"]}
    new = expectations.updated(old, sample())
    assert new == {URL_A: ["a1", "a3"], "/webnn/other.html": ["o"]}


def test_load_dump_roundtrip(tmp_path):
    path = str(tmp_path / "exp.json")
    assert expectations.load(path) == {}
    expectations.dump(path, {URL_B: ["b", "a", "a"], URL_A: ["x"]})
    text = open(path).read()
    assert list(json.loads(text)) == [URL_A, URL_B]
    assert expectations.load(path) == {URL_A: ["x"], URL_B: ["a", "b"]}


def test_results_json_roundtrip(tmp_path):
    path = str(tmp_path / "r.json")
    results.write_json(path, sample(), {"wpt": "/x"})
    doc = json.load(open(path))
    assert doc["totals"]["passed"] == 2 and doc["totals"]["subtests"] == 4
    assert doc["results"][URL_A]["global"] == "window"
    back = results.read_json(path)
    assert [r.url for r in back] == [URL_A, URL_B]
    assert back[0].passing_names() == {"a1", "a3"}


def test_file_ok():
    ok = fr(A, "window", "?cpu", [("a", "PASS")])
    assert ok.ok
    assert not fr(A, "window", "?cpu", []).ok
    assert not fr(A, "window", "?cpu", [("a", "PASS")], status="ERROR").ok


def test_report_tables():
    text = report.render(sample(), {"wpt": "/tree"})
    assert "| conformance_tests | cpu | window | 0/1 | 2/3 | 66.7% |" in text
    assert "| webnn (idlharness/other) | default | dedicatedworker | 0/1 | 0/1 | 0.0% |" in text
    assert f"| `{URL_B}` | FAIL | TIMEOUT | 0/1 |" in text
    assert "subtests: 2/4 passing" in text


def test_cli_from_results_gates_and_updates(tmp_path, capsys):
    from wpt_runner import cli
    res = str(tmp_path / "r.json")
    results.write_json(res, sample(), {})
    exp = str(tmp_path / "exp.json")
    expectations.dump(exp, {URL_A: ["a1", "a2"], "/webnn/other.html": ["o"]})

    assert cli.main(["--from-results", res, "--expectations", exp]) == 1
    err = capsys.readouterr().err
    assert f"{URL_A} :: a2" in err and f"{URL_A} :: a3" in err

    md = str(tmp_path / "r.md")
    assert cli.main(["--from-results", res, "--expectations", exp,
                     "--update-expectations", "--report", md]) == 0
    assert expectations.load(exp) == {URL_A: ["a1", "a3"], "/webnn/other.html": ["o"]}
    assert "| conformance_tests | cpu | window |" in open(md).read()
    assert cli.main(["--from-results", res, "--expectations", exp]) == 0
    assert cli.main(["--from-results", str(tmp_path / "missing.json")]) == 2
