"""StableHLO in the browser: `webnnPolyfill.loadStableHLO` (Pyodide + the lark
wheel shipped beside the runtime) runs the gallery's JAX digit classifier and
matches the probabilities JAX itself computed (web/xla/samples.json, written by
tools/train_jax_digits.py); typed errors reach the page; the gallery page works."""
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

pytestmark = [pytest.mark.browser]
XLA = ROOT / "web" / "xla"
ENGINE_TIMEOUT = 300_000

PAGE = """<!doctype html><meta charset=utf-8><title>xla</title>
<script src="/dist/webnn-polyfill.js"></script>
<script>
window.result = (async () => {
  const out = {};
  const ctx = await navigator.ml.createContext({ deviceType: 'cpu' });
  const text = await (await fetch('/xla/digits.mlir')).text();
  const { samples } = await (await fetch('/xla/samples.json')).json();
  const model = await webnnPolyfill.loadStableHLO(ctx, text, { weights: '/xla/weights.npz' });
  out.inputs = model.inputs;
  out.outputs = model.outputs;
  out.isGraph = model.graph instanceof MLGraph;
  const tIn = await ctx.createTensor({ ...model.inputs.arg0, writable: true });
  const tP = await ctx.createTensor({ ...model.outputs.result0, readable: true });
  const tL = await ctx.createTensor({ ...model.outputs.result1, readable: true });
  out.probs = []; out.labels = [];
  for (const s of samples) {
    ctx.writeTensor(tIn, new Float32Array(s.image.flat()));
    ctx.dispatch(model.graph, { arg0: tIn }, { result0: tP, result1: tL });
    out.probs.push(Array.from(new Float32Array(await ctx.readTensor(tP))));
    out.labels.push(new Int32Array(await ctx.readTensor(tL))[0]);
  }
  // weights as typed arrays; the image itself as a weight: no graph inputs left
  const small = 'module @m {\\n  func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32> {\\n' +
    '    %0 = stablehlo.multiply %arg0, %arg1 : tensor<3xf32>\\n    return %0 : tensor<3xf32>\\n  }\\n}\\n';
  const m2 = await webnnPolyfill.loadStableHLO(ctx, small, { weights: { arg1: { shape: [3], data: new Float32Array([2, 3, 4]) } } });
  out.smallInputs = Object.keys(m2.inputs);
  const a = await ctx.createTensor({ dataType: 'float32', shape: [3], writable: true });
  const r = await ctx.createTensor({ dataType: 'float32', shape: [3], readable: true });
  ctx.writeTensor(a, new Float32Array([1, -1, 0.5]));
  ctx.dispatch(m2.graph, { arg0: a }, { result0: r });
  out.small = Array.from(new Float32Array(await ctx.readTensor(r)));
  out.errors = [];
  for (const bad of [small.replace('%arg0, %arg1', '%arg0 ? %arg1'), small.replace('stablehlo.multiply', 'stablehlo.atan2')]) {
    try { await webnnPolyfill.loadStableHLO(ctx, bad); out.errors.push(null); }
    catch (e) { out.errors.push({ name: e.name, message: e.message, isError: e instanceof Error || e instanceof DOMException }); }
  }
  return out;
})().catch((e) => ({ fatal: String(e), stack: e.stack }));
</script>
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    d = tmp_path_factory.mktemp("xla-site")
    (d / "index.html").write_text(PAGE)
    return d


def test_load_stablehlo_in_browser_matches_jax(site, browser):
    import serve

    srv = serve.start(mounts={**serve.default_mounts(), "/xla-test/": site, "/xla/": XLA})
    try:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(ENGINE_TIMEOUT)
        page.goto(f"http://127.0.0.1:{srv.server_address[1]}/xla-test/index.html")
        result = page.evaluate("window.result")
        context.close()
    finally:
        srv.shutdown()
    assert "fatal" not in result, result
    assert result["isGraph"] is True
    assert result["inputs"] == {"arg0": {"dataType": "float32", "shape": [1, 8, 8]}}
    assert result["outputs"] == {"result0": {"dataType": "float32", "shape": [1, 10]},
                                 "result1": {"dataType": "int32", "shape": [1]}}
    samples = json.loads((XLA / "samples.json").read_text())["samples"]
    np.testing.assert_allclose(np.array(result["probs"], np.float32),
                               np.array([s["jaxProbabilities"] for s in samples], np.float32), rtol=1e-5, atol=1e-6)
    assert result["labels"] == [s["jaxLabel"] for s in samples]
    assert result["smallInputs"] == ["arg0"]
    assert result["small"] == [2, -3, 2]
    syntax, unsupported = result["errors"]
    assert syntax["name"] == "SyntaxError" and syntax["message"].startswith("3:"), syntax
    assert unsupported["name"] == "NotSupportedError" and "stablehlo.atan2" in unsupported["message"], unsupported
    assert "Traceback" not in syntax["message"] + unsupported["message"]


def test_gallery_jax_digits_page(server, browser):
    from test_gallery import assert_layout, shot, wait_state

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{server}/jax-digits.html")
        assert wait_state(page) == "done", page.locator("#error").inner_text()
        samples = json.loads((XLA / "samples.json").read_text())["samples"]
        assert page.locator("#samples button").count() == len(samples)
        assert page.locator("#status").get_attribute("data-label") == str(samples[0]["jaxLabel"])
        assert float(page.locator("#compare").get_attribute("data-max-diff")) < 1e-5
        page.locator("#samples button").nth(3).click()
        page.wait_for_function("document.body.dataset.state === 'done'")
        assert page.locator("#status").get_attribute("data-label") == str(samples[3]["jaxLabel"])
        assert "stablehlo.dot_general" in page.locator("#mlir").inner_text()
        assert "def predict" in page.locator("#py").inner_text()
        assert_layout(page, ["#pad", "#samples", "#bars", "#mlir", "#py"], "jax-digits")
        shot(page, "jax-digits")
        assert not errors, errors
    finally:
        context.close()
