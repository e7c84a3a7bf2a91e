"""ONNX Runtime Web (npm onnxruntime-web, tools/ort_web.ORT_VERSION) through its WebNN execution
provider on the polyfill (issue 18): a CNN and a transformer block built with the onnx package run
on WebNN — ORT's own logs place every node on the WebNN EP and the page sees the polyfill's
build()/dispatch() — and give ORT's own wasm EP's outputs within ORT's test tolerances.
`./dev clients ort` runs the full suite (ORT's op tests, the ONNX node tests, all networks)."""
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, browser_unavailable

pytestmark = pytest.mark.browser
onnx = pytest.importorskip("onnx", reason="the onnx package builds the models (pip install -r requirements-dev.txt)")

import ort_cases  # noqa: E402  (tools/, on sys.path through conftest)
import ort_web  # noqa: E402


@pytest.fixture(scope="module")
def ort_page(playwright):
    why = browser_unavailable() or ort_web.ensure_ort()
    if why:
        pytest.skip(f"onnxruntime-web {ort_web.ORT_VERSION} unavailable: {why}")
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + [
        "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"])
    page = ort_web.OrtPage(browser)
    yield page
    page.close()
    browser.close()


_references = {}  # network -> (case, ORT's wasm EP run): one reference for both devices


def _reference(page, network):
    if network not in _references:
        [case] = ort_cases.model_cases([network])
        _references[network] = case, page.run(case, "wasm")
    return _references[network]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("network", ["cnn", "transformer"])
def test_network_runs_on_webnn_and_matches_ort_wasm(ort_page, network, device):
    case, wasm = _reference(ort_page, network)
    assert not wasm.get("error") and wasm["builds"] == 0, wasm  # the reference never touches WebNN
    webnn = ort_page.run(case, "webnn", device)
    verdict = ort_web.judge(case, device, webnn, wasm["outputs"], "wasm")
    assert verdict.accepted, verdict.why
    assert ort_web.placements(webnn["log"]) == {"WebNNExecutionProvider": 1}, webnn["log"][-5:]
    assert webnn["builds"] >= 1 and webnn["dispatches"] >= 1
    assert verdict.ran and verdict.matched, verdict.why


def test_a_node_the_ep_refuses_is_not_counted_as_webnn(ort_page):
    """The detector can fail: Hardmax has no WebNN op builder in ORT, so ORT runs it on its own
    kernels — same answer, but no WebNN graph and not 'ran on WebNN'."""
    from onnx import TensorProto, helper
    import numpy as np

    graph = helper.make_graph([helper.make_node("Hardmax", ["x"], ["y"])], "hardmax",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = ort_cases.IR_VERSION
    x = np.array([[1, 3, 2], [-1, -2, 0]], np.float32)
    case = ort_cases.Case("hardmax", "models", model.SerializeToString(),
                          feeds={"x": ort_cases.Feed("float32", [2, 3], x)})
    webnn = ort_page.run(case, "webnn", "cpu")
    verdict = ort_web.judge(case, "cpu", webnn, webnn.get("outputs"), "self")
    assert not webnn.get("error"), webnn["error"]
    assert ort_web.tensors_equal(webnn["outputs"]["y"], ort_cases.Feed("float32", [2, 3], np.array(
        [[0, 1, 0], [0, 0, 1]], np.float32))) is None
    assert (webnn["builds"], verdict.accepted, verdict.ran) == (0, False, False), verdict
