"""ONNX Runtime Web (npm onnxruntime-web, tools/ort_web.ORT_VERSION) through its WebNN execution
provider on the polyfill (issue 18): a CNN and a transformer block built with the onnx package run
on WebNN — ORT's own logs place every node on the WebNN EP and the page sees the polyfill's
build()/dispatch() — and give ORT's own wasm EP's outputs within ORT's test tolerances; the
SqueezeNet benchmark net does so on both pinned versions, 1.22.0 and 1.30.0 (issue 33).
`./dev clients ort` runs the full suite (ORT's op tests, the ONNX node tests, all networks, both versions)."""
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, browser_unavailable

pytestmark = pytest.mark.browser
onnx = pytest.importorskip("onnx", reason="the onnx package builds the models (pip install -r requirements-dev.txt)")

import ort_cases  # noqa: E402  (tools/, on sys.path through conftest)
import ort_web  # noqa: E402


@pytest.fixture(scope="module")
def ort_pages(playwright):
    """version -> an ort_web.OrtPage of that onnxruntime-web (one browser; each page opened on first use)."""
    why = browser_unavailable()
    if why:
        pytest.skip(why)
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + [
        "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"])
    pages = {}

    def page_of(version):
        if version not in pages:
            why = ort_web.ensure_ort(version)
            if why:
                pytest.skip(f"onnxruntime-web {version} unavailable: {why}")
            pages[version] = ort_web.OrtPage(browser, version=version)
        return pages[version]

    yield page_of
    for page in pages.values():
        page.close()
    browser.close()


@pytest.fixture(scope="module")
def ort_page(ort_pages):
    return ort_pages(ort_web.ORT_VERSION)


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


@pytest.mark.parametrize("version", ort_web.ORT_VERSIONS)
def test_squeezenet_runs_on_webnn_and_matches_ort_wasm(ort_pages, version):
    """Issue 33: the ONNX SqueezeNet light net (opset 9, seeded weights; tools/bench_ort/models.py) on
    the polyfill's default cpu context, ORT's WebNN EP against ORT's wasm EP. onnxruntime-web 1.22 takes
    its NHWC path when opSupportLimits().preferredInputLayout is "nhwc"; its transpose optimizer then
    moves the opset-9 Softmax (coerce to 2-D at axis 1) behind the NHWC transpose, and its Softmax
    builder calls softmax(axis 1) on [1, 1, 1, 1000]: every probability 1.0 (docs/clients.md)."""
    [case] = ort_web.net_cases(["squeezenet"])
    page = ort_pages(version)
    wasm = page.run(case, "wasm")
    assert not wasm.get("error") and wasm["builds"] == 0, wasm
    webnn = page.run(case, "webnn", "cpu")
    verdict = ort_web.judge(case, "cpu", webnn, wasm["outputs"], "wasm")
    assert verdict.ran and verdict.matched, verdict.why  # ran: every node placed on the WebNN EP
