"""tools/bench_ort.py --standin: ORT's session create on a zero-cost WebNN stand-in
(tools/bench_ort/standin.js), the measurement of ORT's own share of create on its WebNN EP.
The stand-in must answer ORT's calls with what the polyfill would (so ORT does the same
work) and never reach the polyfill (so what is timed is ORT's alone)."""
import pytest

from conftest import CHROMIUM, browser_unavailable

pytestmark = pytest.mark.browser
onnx = pytest.importorskip("onnx", reason="the onnx package builds the models (pip install -r requirements-dev.txt)")

import bench_ort  # noqa: E402  (tools/, on sys.path through conftest)
import ort_web  # noqa: E402

ort_models = bench_ort.ort_models


@pytest.fixture(scope="module")
def standin_run(playwright):
    why = browser_unavailable() or ort_web.ensure_ort(bench_ort.ORT_WEB_VERSION)
    if why:
        pytest.skip(f"onnxruntime-web {bench_ort.ORT_WEB_VERSION} unavailable: {why}")
    if not (bench_ort.ROOT / "dist" / "webnn-polyfill.js").exists():
        pytest.skip("dist/ is not built (./dev build)")
    info = ort_models.ensure(bench_ort.MODEL_DIR, ["mlp"])
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=bench_ort.ARGS)
    try:
        with bench_ort.bench_server() as base:
            page = browser.new_page()
            page.goto(f"{base}?ep=standin", timeout=300_000)
            result = page.evaluate("([m]) => runBench(m, 0, 0, 0, 2)", [[{"name": "mlp", **info["mlp"]}]])
            surface = page.evaluate(SURFACE)
            tape = page.evaluate("webnnStandin.tape()")
        yield result, surface, tape
    finally:
        browser.close()


# The stand-in's surface, driven by hand in the bench page.
SURFACE = """async () => {
  const real = await navigator.ml.createContext({ deviceType: 'cpu' });
  const out = { realIsMLContext: real instanceof MLContext };
  out.stats = await webnnStandin.withStandin(async () => {
    const ctx = await navigator.ml.createContext({ deviceType: 'cpu' });
    out.standinIsMLContext = ctx instanceof MLContext;
    out.limitsEqual = JSON.stringify(ctx.opSupportLimits()) === JSON.stringify(real.opSupportLimits());
    const b = new MLGraphBuilder(ctx);
    out.missing = webnnStandin.builderMethods.filter((n) => typeof b[n] !== 'function');
    const x = b.relu(b.relu(null));  // not the tape's first call (input): answered, counted off tape
    out.offTapeShape = x.shape;
    out.graph = typeof (await b.build({ y: x })).destroy;
    try { ctx.dispatch(); out.dispatch = 'returned'; } catch (e) { out.dispatch = e.name; }
  });
  const after = await navigator.ml.createContext({ deviceType: 'cpu' });
  out.afterIsMLContext = after instanceof MLContext;
  return out;
}"""


def test_the_tape_holds_what_the_polyfill_built_for_orts_calls(standin_run):
    _, _, tape = standin_run
    model = ort_models.build("mlp")
    inputs = [e["out"] for e in tape if e["method"] == "input"]
    constants = sorted(tuple(e["out"]["shape"]) for e in tape if e["method"] == "constant")
    assert inputs == [{"shape": [4, 64], "dataType": "float32"}]  # the ONNX graph's input
    assert constants == sorted(tuple(t.dims) for t in model.graph.initializer)
    out_dims = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert tape[-1]["out"] == {"shape": out_dims, "dataType": "float32"}


def test_orts_create_on_the_standin_follows_the_tape_and_never_reaches_the_polyfill(standin_run):
    result, _, tape = standin_run
    m = result["models"]["mlp"]
    assert not m.get("error"), m
    s = m["standin"]
    assert (s["calls"], s["tapeUsed"], s["offTape"]) == (len(tape), len(tape), 0), s
    assert s["builds"] == 1 and s["contexts"] == 1, s
    assert m["standinEngineCalls"] == 0  # no bridge call into the polyfill's engine
    assert len(m["standinCreateMs"]) == len(m["polyfillCreateMs"]) == len(m["wasmCreateMs"]) == 2
    assert all(ms > 0 for ms in m["standinCreateMs"] + [m["firstCreateMs"]["standin"]])


def test_the_standin_has_the_polyfills_surface_and_runs_nothing(standin_run):
    _, surface, _ = standin_run
    assert surface["realIsMLContext"] and surface["afterIsMLContext"]  # only inside withStandin
    assert not surface["standinIsMLContext"]
    assert surface["limitsEqual"] and surface["missing"] == []
    assert surface["stats"]["offTape"] == 2 and surface["offTapeShape"] == []
    assert surface["graph"] == "function" and surface["dispatch"] == "NotSupportedError"


@pytest.mark.parametrize("standin_ms, wasm_ms, over", [(16.0, 10.0, True), (14.0, 10.0, False), (15.0, 10.0, False)])
def test_the_table_says_when_orts_own_create_alone_is_over_the_target(standin_ms, wasm_ms, over):
    res = {"standin": {"label": "stand-in", "models": {"mlp": {
        "wasmCreateMs": [wasm_ms], "polyfillCreateMs": [30.0], "standinCreateMs": [standin_ms],
        "wasmMedianMs": wasm_ms, "polyfillMedianMs": 30.0, "standinMedianMs": standin_ms,
        "standin": {"calls": 8, "offTape": 0}}}}}
    row = [line for line in bench_ort.standin_table(res, ["mlp"]).splitlines() if line.startswith("| 2-layer")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert ("over the target" in cells[4]) is over
    assert cells[7] == ("none (out of reach)" if 1.5 * wasm_ms - standin_ms <= 0 else f"{1.5 * wasm_ms - standin_ms:.2f}")
