"""An NNEF model runs in the browser through the polyfill's own entry point
`webnnPolyfill.loadNNEF` (Pyodide), and matches the CPython run of the same core.

One page load: the width-reduced AlexNet is loaded from a .tgz URL and from a
graph.nnef URL (its .dat files fetched beside it), dispatched, exported back with
`exportNNEF`; a malformed model rejects with a positioned SyntaxError. The same
model converted to NNEF 2.0 (SkriptND) loads from a main.sknd URL and a folder
URL, and exports/re-imports as 2.0.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import page_result

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "py"))

pytestmark = [pytest.mark.browser]

PAGE = """<!doctype html><meta charset=utf-8><title>nnef</title>
<script src="/dist/webnn-polyfill.js"></script>
<script>
window.result = (async () => {
  const out = {};
  const ctx = await navigator.ml.createContext({ deviceType: 'cpu' });
  const input = new Float32Array(await (await fetch('/nnef-test/input.bin')).arrayBuffer());
  async function run(model) {
    const tIn = await ctx.createTensor({ ...model.inputs.input, writable: true });
    const tOut = await ctx.createTensor({ ...model.outputs.output, readable: true });
    ctx.writeTensor(tIn, input);
    ctx.dispatch(model.graph, { input: tIn }, { output: tOut });
    return Array.from(new Float32Array(await ctx.readTensor(tOut)));
  }
  const fromTgz = await webnnPolyfill.loadNNEF(ctx, '/nnef-test/alexnet.tgz');
  out.name = fromTgz.name;
  out.inputs = fromTgz.inputs;
  out.outputs = fromTgz.outputs;
  out.isGraph = fromTgz.graph instanceof MLGraph;
  out.tgz = await run(fromTgz);
  const fromFolder = await webnnPolyfill.loadNNEF(ctx, '/nnef-test/alexnet/graph.nnef');
  out.folder = await run(fromFolder);
  const exported = await webnnPolyfill.exportNNEF(fromTgz.graph, { name: 'AlexNet' });
  out.exportedHead = exported.text.slice(0, 40);
  const again = await webnnPolyfill.loadNNEF(ctx, exported.archive);
  out.reimported = await run(again);
  // a graph built with MLGraphBuilder, exported and loaded back
  const b = new MLGraphBuilder(ctx);
  const x = b.input('x', { dataType: 'float32', shape: [1, 2, 4, 4] });
  const w = b.constant({ dataType: 'float32', shape: [3, 2, 3, 3] }, new Float32Array(54).map((_, i) => (i % 7) / 7 - 0.4));
  const built = await b.build({ y: b.relu(b.conv2d(x, w, { padding: [1, 1, 1, 1] })) });
  const exp2 = await webnnPolyfill.exportNNEF(built);
  const back = await webnnPolyfill.loadNNEF(ctx, exp2.archive);
  const xin = new Float32Array(32).map((_, i) => Math.sin(i));
  async function runXY(graph) {
    const tIn = await ctx.createTensor({ dataType: 'float32', shape: [1, 2, 4, 4], writable: true });
    const tOut = await ctx.createTensor({ dataType: 'float32', shape: [1, 3, 4, 4], readable: true });
    ctx.writeTensor(tIn, xin);
    ctx.dispatch(graph, { x: tIn }, { y: tOut });
    return new Float32Array(await ctx.readTensor(tOut));
  }
  const y1 = await runXY(built), y2 = await runXY(back.graph);
  out.builderRoundTrip = y1.every((v, i) => v === y2[i]) && y1.some((v) => v !== 0);
  try {
    await webnnPolyfill.loadNNEF(ctx, { 'graph.nnef': 'version 1.0;\\ngraph G( x ) -> ( y )\\n{\\n  x = external(shape = [2]);\\n  y = relu(x;\\n}\\n' });
    out.error = null;
  } catch (e) {
    out.error = { name: e.name, message: e.message };
  }
  // NNEF 2.0 (SkriptND): the same model converted; from a main.sknd URL, a folder URL, and an exported archive
  const v2File = await webnnPolyfill.loadNNEF(ctx, '/nnef-test/alexnet2/main.sknd');
  out.v2version = v2File.version;
  out.v2file = await run(v2File);
  out.v2folder = await run(await webnnPolyfill.loadNNEF(ctx, '/nnef-test/alexnet2/'));
  const exported2 = await webnnPolyfill.exportNNEF(fromTgz.graph, { name: 'AlexNet', version: '2.0' });
  out.exported2Head = exported2.text.split('\\n').find((l) => l.startsWith('graph'));
  out.v2reimported = await run(await webnnPolyfill.loadNNEF(ctx, exported2.archive));
  try {
    await webnnPolyfill.loadNNEF(ctx, { 'main.sknd': 'import nn;\\ngraph G {\\n  @input { x: real[2]; }\\n  @compose { y = nn.relu(x; }\\n}\\n' });
    out.error2 = null;
  } catch (e) {
    out.error2 = { name: e.name, message: e.message };
  }
  out.hasNavigatorLoad = 'loadNNEF' in navigator.ml;
  return out;
})().catch((e) => ({ fatal: String(e), stack: e.stack }));
</script>
"""


@pytest.fixture(scope="module")
def nnef_site(tmp_path_factory):
    from webnn_core.nnef import load_model, samples
    from webnn_core.nnef.export import write_files

    site = tmp_path_factory.mktemp("nnef-site")
    files = samples.alexnet_files(divisor=16, image=195, seed=3)
    write_files(files, str(site / "alexnet"))
    (site / "alexnet.tgz").write_bytes(samples.to_tgz(files, prefix="alexnet/"))
    x = np.random.default_rng(7).standard_normal((1, 3, 195, 195)).astype(np.float32)
    (site / "input.bin").write_bytes(x.tobytes())
    from webnn_core.nnef2 import convert

    convert(str(site / "alexnet"), str(site / "alexnet2"))
    (site / "index.html").write_text(PAGE)
    expected = load_model(files).run({"input": x})["output"]
    return site, expected


def test_load_nnef_in_browser(nnef_site, engine_browser):
    import serve

    site, expected = nnef_site
    srv = serve.start(mounts={**serve.default_mounts(), "/nnef-test/": site})
    try:
        result = page_result(engine_browser, f"http://127.0.0.1:{srv.server_address[1]}/nnef-test/index.html",
                             timeout=240)
    finally:
        srv.shutdown()
    assert "fatal" not in result, result
    assert result["name"] == "AlexNet"
    assert result["isGraph"] is True
    assert result["inputs"] == {"input": {"dataType": "float32", "shape": [1, 3, 195, 195]}}
    assert result["outputs"] == {"output": {"dataType": "float32", "shape": [1, 62, 1, 1]}}
    want = expected.reshape(-1)
    for key in ("tgz", "folder", "reimported", "v2file", "v2folder", "v2reimported"):
        got = np.asarray(result[key], np.float32)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=key)
    assert result["exportedHead"].startswith("version 1.0;")
    assert result["error"]["name"] == "SyntaxError"
    assert result["error"]["message"].startswith("graph.nnef:5:13:"), result["error"]
    assert result["v2version"] == "2.0" and result["exported2Head"] == "graph AlexNet {"
    assert result["error2"]["name"] == "SyntaxError"
    assert result["error2"]["message"].startswith("main.sknd:4:27:"), result["error2"]
    assert result["hasNavigatorLoad"] is False
    assert result["builderRoundTrip"] is True
