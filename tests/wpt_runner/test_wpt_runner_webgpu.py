"""--webgpu: the Chromium switches, the refusal on other engines, and the run
report's per-page count of graphs run on the WebGPU backend vs its cpu
fallback (FileResult.backend, from the page wrapper) - no browser needed."""

import os

from conftest import FIXTURE, FIXTURE_POLYFILL
from wpt_runner import browser, cli, report, results
from wpt_runner.manifest import Run
from wpt_runner.results import FileResult

ADD = "webnn/conformance_tests/add.https.any.js"
CUMSUM = "webnn/conformance_tests/cumulative_sum.https.any.js"


def page(source, backend, passed=2):
    subtests = [{"name": f"t{k}", "status": "PASS", "message": None} for k in range(passed)]
    return FileResult(Run(source, "window", "?gpu", False), "OK", None, subtests, [], 1.0, backend)


def tally(gpu, cpu, reasons=None, available=True):
    return {"available": available, "adapter": "Google SwiftShader", "reason": None, "gpu": gpu, "cpu": cpu,
            "dispatchesGpu": gpu, "dispatchesCpu": cpu, "reasons": reasons or {}}


def sample():
    return [page(ADD, tally(12, 0)),
            page(CUMSUM, tally(1, 3, {"cumulativeSum has no WGSL kernel": 3})),
            # A page of another variant or a worker page: nothing reported.
            FileResult(Run(ADD, "dedicatedworker", "?cpu", False), "OK", None,
                       [{"name": "w", "status": "PASS", "message": None}], [], 1.0)]


def test_backend_totals_sum_pages_and_reasons():
    t = results.backend_totals(sample())
    assert t == {"pages": 2, "gpu": 13, "cpu": 3, "dispatchesGpu": 13, "dispatchesCpu": 3, "pages_with_cpu": 1,
                 "reasons": {"cumulativeSum has no WGSL kernel": 3}}
    assert results.backend_totals(sample()[2:]) is None  # no page reported a tally


def test_markdown_report_counts_gpu_and_fallback_graphs_per_page():
    text = report.render(sample(), {"webgpu": " ".join(browser.WEBGPU_ARGS)})
    assert "- webgpu: `--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader`" in text
    assert ("graphs built on the WebGPU backend 13, on the cpu fallback 3; dispatches on the GPU 13, "
            "on the cpu fallback 3; pages with a cpu-fallback graph 1/2") in text
    assert "| cumulativeSum has no WGSL kernel | 3 |" in text
    rows = {line.split("|")[1].strip(): line for line in text.splitlines() if line.startswith("| `")}
    assert rows["`/webnn/conformance_tests/add.https.any.html?gpu`"].split("|")[5].strip() == "12/0"
    assert rows["`/webnn/conformance_tests/cumulative_sum.https.any.html?gpu`"].split("|")[5].strip() == "1/3"
    assert rows["`/webnn/conformance_tests/add.https.any.worker.html?cpu`"].split("|")[5].strip() == "-"


def test_report_without_tallies_keeps_its_old_columns():
    text = report.render(sample()[2:])
    assert "graphs GPU/cpu" not in text and "gpu contexts" not in text
    assert "| test | result | harness | subtests passing | notes |" in text


def test_page_without_webgpu_says_so():
    r = page(ADD, tally(0, 4, {"no WebGPU device": 4}, available=False))
    assert report.page_backend(r) == "0/4 (no WebGPU)"


def test_html_report_has_the_column_and_the_reasons():
    html = report.render_html(sample())
    assert "<th>graphs GPU/cpu</th>" in html
    assert "<td class=n>1/3</td>" in html and "cumulativeSum has no WGSL kernel (3)" in html


def test_backend_survives_the_results_json(tmp_path):
    path = tmp_path / "r.json"
    results.write_json(str(path), sample(), {})
    back = {r.url: r for r in results.read_json(str(path))}
    assert back["/webnn/conformance_tests/cumulative_sum.https.any.html?gpu"].backend == sample()[1].backend
    assert back["/webnn/conformance_tests/add.https.any.worker.html?cpu"].backend is None
    import json
    assert json.loads(path.read_text())["backend"]["cpu"] == 3


def test_webgpu_switch_is_chromium_only(capsys):
    rc = cli.main(["--wpt", FIXTURE, "--browser", "firefox", "--webgpu", "--polyfill", FIXTURE_POLYFILL])
    err = capsys.readouterr().err
    assert rc == 2 and "--webgpu is not available with --browser firefox" in err
    assert browser.WEBGPU_ARGS == ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"]


def test_page_wrapper_collects_the_polyfill_tally():
    hook = open(os.path.join(os.path.dirname(browser.__file__), "static", "report-hook.js")).read()
    # Read after the tests ran (the completion callback), from the polyfill's engineStats.
    assert "state.backend = gpuGraphs();" in hook and "engineStats.webgpu" in hook
