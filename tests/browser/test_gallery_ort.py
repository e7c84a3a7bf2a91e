"""The gallery's ONNX Runtime Web card (web/ort.html, issue 18 item 3): onnxruntime-web runs the
gallery's digit classifier (its ONNX export, tools/train_digits.py) through the WebNN EP on the
polyfill. Checked against scikit-learn's own predictions (held-out digits in digits-mlp.json) and
against ORT's wasm EP on the same page; the card must say WebNN ran the model (graphs built and
dispatched), and must explain itself when onnxruntime-web is not there."""
import json

import pytest

from conftest import ROOT

pytestmark = pytest.mark.browser

import ort_web  # noqa: E402  (tools/, on sys.path through conftest)
import serve  # noqa: E402

DATA = ROOT / ".cache" / "gallery" / "digits-mlp.json"


def _open(browser, base, query=""):
    page = browser.new_page()
    page.goto(f"{base}/ort.html{query}")
    page.wait_for_function("document.body.dataset.state !== 'busy'", timeout=240_000)
    return page, page.evaluate("window.result")


@pytest.mark.parametrize("device", ["cpu"])
def test_ort_card_runs_the_digits_on_the_webnn_ep(browser, device):
    pytest.importorskip("onnx", reason="the ONNX export of the digit model needs the onnx package")
    why = ort_web.ensure_ort()
    if why:
        pytest.skip(f"onnxruntime-web {ort_web.ORT_VERSION} unavailable: {why}")
    if not (ROOT / ".cache" / "gallery" / "digits-mlp.onnx").exists():
        pytest.skip("the digit model is not built (tools/build.py)")
    srv = serve.start()  # default mounts, /ort/ included now that ORT is installed
    try:
        page, r = _open(browser, f"http://127.0.0.1:{srv.server_address[1]}", f"?device={device}")
        page.close()
    finally:
        srv.shutdown()
    assert "rows" in r, r
    assert r["ranOn"] == "webnn" and r["builds"] >= 1 and r["dispatches"] >= len(r["rows"]), r
    samples = json.loads(DATA.read_text())["samples"]
    for row, sample, probs in zip(r["rows"], samples, r["webnnProbabilities"]):
        assert row["webnn"] == sample["sklearnLabel"] == row["wasm"]
        assert max(abs(a - b) for a, b in zip(probs, sample["sklearnProbabilities"])) < 1e-4


def test_ort_card_says_what_is_missing(browser, tmp_path):
    mounts = {k: v for k, v in serve.default_mounts().items() if k != "/ort/"}
    srv = serve.start(mounts=mounts)
    try:
        page, r = _open(browser, f"http://127.0.0.1:{srv.server_address[1]}")
        error = page.inner_text("#error")
        page.close()
    finally:
        srv.shutdown()
    assert "onnxruntime-web is not installed" in r["unavailable"]
    assert "./dev serve" in error
