"""StableHLO in the browser: `webnnPolyfill.loadStableHLO` (Pyodide + the lark
wheel shipped beside the runtime) runs the gallery's JAX digit classifier and
matches the probabilities JAX itself computed (web/xla/samples.json, written by
tools/train_jax_digits.py); typed errors reach the page; the gallery page works."""
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

pytestmark = [pytest.mark.browser]
XLA = ROOT / "web" / "xla"
ENGINE_TIMEOUT = 300_000

PAGE = """<!doctype html><meta charset=utf-8><title>xla</title>
<script>self.WEBNN_POLYFILL_CONFIG = { timeline: new URLSearchParams(location.search).get('timeline') || 'page' };</script>
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
  out.location = webnnPolyfill.engineStats.kernels.location(ctx);
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
  // an empty output; a custom_call after an `index` constant the importer cannot read
  const emptyOut = 'func.func public @main(%arg0: tensor<3xf32>) -> tensor<0xf32> {\\n' +
    '  %0 = stablehlo.slice %arg0 [0:0] : (tensor<3xf32>) -> tensor<0xf32>\\n  return %0 : tensor<0xf32>\\n}\\n';
  const customCall = 'func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {\\n' +
    '  %c = stablehlo.constant dense<[0]> : tensor<1xindex>\\n' +
    '  %0 = stablehlo.custom_call @lapack_spotrf_ffi(%arg0, %c) : (tensor<3xf32>, tensor<1xindex>) -> tensor<3xf32>\\n' +
    '  return %0 : tensor<3xf32>\\n}\\n';
  for (const bad of [small.replace('%arg0, %arg1', '%arg0 ? %arg1'), small.replace('stablehlo.multiply', 'stablehlo.atan2'),
                     emptyOut, customCall]) {
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


# timeline=worker: the loaded graph executes in the timeline worker (js/src/timeline.js).
@pytest.mark.parametrize("timeline", ["page", "worker"])
def test_load_stablehlo_in_browser_matches_jax(site, browser, timeline):
    import serve

    srv = serve.start(mounts={**serve.default_mounts(), "/xla-test/": site, "/xla/": XLA})
    try:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(ENGINE_TIMEOUT)
        page.goto(f"http://127.0.0.1:{srv.server_address[1]}/xla-test/index.html?timeline={timeline}")
        result = page.evaluate("window.result")
        context.close()
    finally:
        srv.shutdown()
    assert "fatal" not in result, result
    assert result["isGraph"] is True
    assert result["location"] == timeline
    assert result["inputs"] == {"arg0": {"dataType": "float32", "shape": [1, 8, 8]}}
    assert result["outputs"] == {"result0": {"dataType": "float32", "shape": [1, 10]},
                                 "result1": {"dataType": "int32", "shape": [1]}}
    samples = json.loads((XLA / "samples.json").read_text())["samples"]
    np.testing.assert_allclose(np.array(result["probs"], np.float32),
                               np.array([s["jaxProbabilities"] for s in samples], np.float32), rtol=1e-5, atol=1e-6)
    assert result["labels"] == [s["jaxLabel"] for s in samples]
    assert result["smallInputs"] == ["arg0"]
    assert result["small"] == [2, -3, 2]
    syntax, unsupported, empty_out, custom_call = result["errors"]
    assert syntax["name"] == "SyntaxError" and syntax["message"].startswith("3:"), syntax
    assert unsupported["name"] == "NotSupportedError" and "stablehlo.atan2" in unsupported["message"], unsupported
    assert empty_out["name"] == "NotSupportedError" and "'result0'" in empty_out["message"] \
        and "no elements" in empty_out["message"], empty_out
    assert custom_call["name"] == "NotSupportedError" and custom_call["message"].startswith("3:") \
        and "stablehlo.custom_call" in custom_call["message"] and "@lapack_spotrf_ffi" in custom_call["message"], custom_call
    assert not any("Traceback" in e["message"] for e in result["errors"])


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


CASES_PAGE = """<!doctype html><meta charset=utf-8><title>xla cases</title>
<script src="/dist/webnn-polyfill.js"></script>
<script>
const b64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const s64 = (buf) => { let s = ''; new Uint8Array(buf).forEach((x) => { s += String.fromCharCode(x); }); return btoa(s); };
window.result = (async () => {
  const ctx = await navigator.ml.createContext({ deviceType: 'cpu' });
  const cases = await (await fetch('cases.json')).json();
  const out = {};
  for (const c of cases) {
    try {
      const m = await webnnPolyfill.loadStableHLO(ctx, c.text);
      const ins = {}, outs = {};
      for (const [name, d] of Object.entries(m.inputs)) {
        ins[name] = await ctx.createTensor({ ...d, writable: true });
        ctx.writeTensor(ins[name], b64(c.inputs[name]));
      }
      for (const [name, d] of Object.entries(m.outputs)) outs[name] = await ctx.createTensor({ ...d, readable: true });
      ctx.dispatch(m.graph, ins, outs);
      const r = {};
      for (const name of Object.keys(outs)) r[name] = s64(await ctx.readTensor(outs[name]));
      out[c.name] = r;
    } catch (e) { out[c.name] = { error: `${e.name}: ${e.message}` }; }
  }
  return out;
})().catch((e) => ({ fatal: String(e), stack: e.stack }));
</script>
"""


def test_jax_programs_in_browser(tmp_path, browser):
    """Every JAX op case and whole model of tests/xla, exported by JAX, imported and
    run by the polyfill in Chromium, against JAX's own outputs."""
    import base64

    jax = pytest.importorskip("jax", reason="jax is a test-only dev dependency (pip install jax==0.10.2 jaxlib==0.10.2)")
    import serve
    from tests.xla import jax_cases
    from tests.xla.test_stablehlo_jax import MODELS, export, jax_outputs

    programs = [(name, f, args) for name, f, args in jax_cases.cases()]
    programs += [(f"model_{name}", f, args) for name, (f, args) in MODELS.items()]
    cases, expected = [], {}
    for name, f, args in programs:
        inputs = {f"arg{i}": base64.b64encode(np.ascontiguousarray(np.asarray(a).astype(
            np.uint8 if np.asarray(a).dtype == np.bool_ else np.asarray(a).dtype)).tobytes()).decode()
            for i, a in enumerate(args)}
        cases.append({"name": name, "text": export(f, args), "inputs": inputs})
        expected[name] = jax_outputs(f, args)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    (tmp_path / "index.html").write_text(CASES_PAGE)
    srv = serve.start(mounts={**serve.default_mounts(), "/xla-cases/": tmp_path})
    try:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(ENGINE_TIMEOUT)
        page.goto(f"http://127.0.0.1:{srv.server_address[1]}/xla-cases/index.html")
        result = page.evaluate("window.result")
        context.close()
    finally:
        srv.shutdown()
    assert "fatal" not in result, result
    failures = []
    for name, outs in expected.items():
        got = result[name]
        if "error" in got:
            failures.append(f"{name}: {got['error']}")
            continue
        for i, e in enumerate(outs):
            raw = base64.b64decode(got[f"result{i}"])
            g = np.frombuffer(raw, np.uint8 if e.dtype == np.bool_ else e.dtype).reshape(e.shape)
            if e.dtype.kind in "biu":
                ok = np.array_equal(g.astype(e.dtype), e)
            else:
                ok = np.allclose(g, e, rtol=2e-5, atol=2e-5, equal_nan=True)  # NaN where JAX has NaN
            if not ok:
                failures.append(f"{name} result{i}: {g} != {e}")
    assert not failures, "\n".join(failures)


TAMPER_PAGE = """<!doctype html><meta charset=utf-8><title>xla tamper</title>
<script src="/dist-tampered/webnn-polyfill.js"></script>
<script>
window.result = (async () => {
  const ctx = await navigator.ml.createContext({ deviceType: 'cpu' });
  const text = 'module @m {\\n  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\\n' +
    '    %0 = stablehlo.negate %arg0 : tensor<2xf32>\\n    return %0 : tensor<2xf32>\\n  }\\n}\\n';
  try { await webnnPolyfill.loadStableHLO(ctx, text); return { loaded: true }; }
  catch (e) { return { name: e.name, message: e.message }; }
})().catch((e) => ({ fatal: String(e) }));
</script>
"""


def test_tampered_lark_wheel_is_refused(tmp_path, browser):
    """The grammar wheel is verified against the sha256 baked into the build, like
    every runtime file: a modified copy is refused, never run."""
    import serve

    dist = ROOT / "dist"
    tampered = tmp_path / "dist"
    tampered.mkdir()
    for f in dist.iterdir():
        if f.is_file():
            shutil.copyfile(f, tampered / f.name)
    lark = next(dist.glob("lark-*.whl"))
    data = bytearray(lark.read_bytes())
    data[len(data) // 2] ^= 0xFF  # one flipped byte
    (tampered / lark.name).write_bytes(bytes(data))
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text(TAMPER_PAGE)
    srv = serve.start(mounts={**serve.default_mounts(), "/dist-tampered/": tampered, "/xla-tamper/": site})
    try:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(ENGINE_TIMEOUT)
        page.goto(f"http://127.0.0.1:{srv.server_address[1]}/xla-tamper/index.html")
        result = page.evaluate("window.result")
        context.close()
    finally:
        srv.shutdown()
    assert result.get("name") == "NotSupportedError", result
    assert lark.name in result["message"] and "failed verification" in result["message"], result
