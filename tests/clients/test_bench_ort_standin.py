"""tools/bench_ort.py --standin: ORT's session create and session.run on a zero-cost WebNN
stand-in (tools/bench_ort/standin.js), the measurement of ORT's own share of both on its WebNN
EP. The stand-in must answer ORT's calls with what the polyfill would (so ORT does the same
work), settle its promises in a queued task as the spec obliges every implementation, and never
reach the polyfill (so what is timed is ORT's alone)."""
from types import SimpleNamespace

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
    mlp = {"name": "mlp", **info["mlp"]}
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=bench_ort.STANDIN_ARGS)
    try:
        with bench_ort.bench_server() as base:
            page = browser.new_page()
            page.goto(f"{base}?ep=standin", timeout=300_000)
            result = page.evaluate("([m, n]) => runBench(m, n, 0, 0, 2)", [[mlp], RUNS])
            surface = page.evaluate(SURFACE)
            settling = page.evaluate(SETTLING)
            tape = page.evaluate("webnnStandin.tape()")
            args = SimpleNamespace(preferred_layout=None, first_runs=1, page_timeout=300)
            first = bench_ort.first_creates(playwright, base, [mlp], info["mlp"], result, args)
        yield result, surface, tape, first, settling
    finally:
        browser.close()


RUNS = 4  # timed session.run rounds in the fixture's stand-in page


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
    try { out.dispatch = ctx.dispatch() === undefined ? 'returned' : 'a value'; } catch (e) { out.dispatch = e.name; }
  });
  const after = await navigator.ml.createContext({ deviceType: 'cpu' });
  out.afterIsMLContext = after instanceof MLContext;
  return out;
}"""


# The stand-in's run API by hand: when its promises settle, against microtasks and each other.
SETTLING = """async () => {
  const out = {};
  await webnnStandin.withStandin(async () => {
    const ctx = await navigator.ml.createContext({ deviceType: 'cpu' });
    const order = [];
    // A microtask chain 200 deep, started after each call: a promise settled in a
    // microtask lands inside it, one settled in a queued task after all of it.
    const chain = (tag) => { let p = Promise.resolve(); for (let i = 0; i < 200; i++) p = p.then(() => {}); return p.then(() => order.push(tag)); };
    const created = ctx.createTensor({ dataType: 'float32', shape: [2, 3], readable: true, writable: true })
      .then((t) => { order.push('createTensor'); return t; });
    chain('microtasks after createTensor');
    const t = await created;
    const data = new Float32Array([1, 2, 3, 4, 5, 6]);
    ctx.writeTensor(t, data);
    data.fill(9);  // the write took its snapshot at the call
    try { ctx.writeTensor(t, new Float32Array(5)); out.shortWrite = 'returned'; } catch (e) { out.shortWrite = e.name; }
    const into = new Float32Array(6).fill(-1);
    const reads = [
      ctx.readTensor(t).then((b) => { order.push('read'); out.bytes = b instanceof ArrayBuffer ? b.byteLength : String(b); out.read = Array.from(new Float32Array(b)); }),
      ctx.readTensor(t, into).then((v) => { order.push('read into'); out.into = v === undefined ? 'undefined' : String(v); out.readInto = Array.from(into); }),
    ];
    out.intoBeforeSettle = Array.from(into);
    chain('microtasks after the reads');
    await Promise.all(reads);
    out.tooSmall = await ctx.readTensor(t, new Float32Array(5)).then(() => 'resolved', (e) => e.name);
    out.order = order;
    const int64 = await ctx.createTensor({ dataType: 'int64', shape: [3], readable: true, writable: true });
    out.int64Bytes = (await ctx.readTensor(int64)).byteLength;
  });
  return out;
}"""


def test_the_standins_promises_settle_in_a_task_in_call_order(standin_run):
    """The spec queues an ML task to settle createTensor and readTensor: never a microtask,
    and the reads in the order they were called."""
    *_, settling = standin_run
    assert settling["order"] == ["microtasks after createTensor", "createTensor",
                                 "microtasks after the reads", "read", "read into"]
    assert settling["bytes"] == 2 * 3 * 4 and settling["into"] == "undefined" and settling["int64Bytes"] == 3 * 8
    assert settling["tooSmall"] == "TypeError"  # outputData shorter than the tensor
    # the bytes move as the spec says: written at the call, copied into outputData when the read settles
    assert settling["read"] == settling["readInto"] == [1, 2, 3, 4, 5, 6]
    assert settling["intoBeforeSettle"] == [-1] * 6 and settling["shortWrite"] == "TypeError"


def test_an_ort_session_runs_on_the_standin(standin_run):
    """ORT's WebNN EP runs the MLP on the stand-in: outputs of the ONNX graph's shape, the same
    writeTensor/dispatch/readTensor calls per run as on the polyfill, one task hop per promise,
    nothing reaching the polyfill's engine."""
    result, *_ = standin_run
    m = result["models"]["mlp"]
    assert not m.get("error"), m
    run = m["run"]
    model = ort_models.build("mlp")
    out = model.graph.output[0]
    dims = [d.dim_value for d in out.type.tensor_type.shape.dim]
    for engine in ("wasm", "polyfill", "standin"):
        assert run["outputs"][engine] == {out.name: {"dims": dims, "length": dims[0] * dims[1]}}, engine
        assert len(run["runsMs"][engine]) == RUNS and all(ms > 0 for ms in run["runsMs"][engine])
    st, poly = run["standinPerRun"], run["polyfillCallsPerRun"]
    assert (st["write"], st["dispatch"], st["read"] + st["readInto"], st["createTensor"]) == \
        (poly["writeCalls"], poly["dispatchCalls"], poly["readCalls"], poly["createTensorCalls"]) == (1, 1, 1, 0)
    assert st["hops"] == st["read"] + st["readInto"] + st["createTensor"]
    assert st["settleMs"] > 0 and poly["readSettle"] > 0
    assert (st["writeBytes"], st["readBytes"]) == (4 * 64 * 4, 4 * dims[1] * 4)  # float32 input [4, 64], output
    assert m["runStandinCreate"]["contexts"] == 1  # its own stand-in context, not the polyfill's session's
    assert run["standinPolyfillUse"]["api"] == 0  # no call into the polyfill's interfaces


def run_result(standin_ms, polyfill_ms, wasm1_ms, calls):
    write, dispatch, read = calls
    return {"runsMs": {"standin": [standin_ms] * 30}, "medianMs": {"wasm": wasm1_ms, "polyfill": polyfill_ms,
                                                                   "standin": standin_ms},
            "minMs": {"wasm": wasm1_ms, "polyfill": polyfill_ms, "standin": standin_ms},
            "polyfillCallsPerRun": {"write": write, "dispatch": dispatch, "read": read, "readSettle": 2.25},
            "standinPerRun": {"write": 14, "dispatch": 14, "read": 1, "readInto": 26, "createTensor": 0, "hops": 27,
                              "settleMs": 1.5, "writeBytes": 600_000, "readBytes": 2_200_000}}


def test_the_run_table_puts_the_standin_floor_and_the_polyfills_calls_against_wasm_n_threads():
    res = {"standin": {"label": "stand-in", "models": {"shufflenet": {"run": run_result(3.0, 17.0, 15.0, (1.0, 8.0, 2.0))}}},
           "wasmN": {"label": "ORT wasm, 2 threads", "threads": 2, "models": {"shufflenet": {"medianMs": 12.0, "minMs": 11.5}}}}
    text = bench_ort.standin_run_table(res, ["shufflenet"])
    assert "30 rounds" in text
    header = [line for line in text.splitlines() if line.startswith("| model")][0]
    row = [line for line in text.splitlines() if line.startswith("| ShuffleNet")][0]
    cell = dict(zip([c.strip() for c in header.strip("|").split("|")], [c.strip() for c in row.strip("|").split("|")]))
    assert cell["ORT wasm, 2 threads"] == "12.0 (11.5)"
    assert cell["WebNN EP on the stand-in = ORT's floor"] == "3.00 (3.00)"
    assert cell["floor ÷ wasm 2 threads"] == "0.25×"
    assert cell["floor + polyfill's calls"] == "14.0" and cell["÷ wasm 2 threads"] == "1.17×"  # 3 + 1 + 8 + 2
    assert cell["rest"] == "3.00"  # 17 - 14
    assert cell["stand-in calls per run: write / dispatch / read (into) / createTensor; MB written / read"] == \
        "14 / 14 / 27 (26) / 0; 0.60 / 2.20"
    assert cell["task hops per run (ms: stand-in / polyfill)"] == "27 (1.50 / 2.25)"


def test_the_run_table_says_which_model_failed_to_run():
    res = {"standin": {"label": "stand-in", "models": {
        "mlp": {"run": run_result(0.1, 0.3, 0.05, (0.05, 0.1, 0.05))},
        "shufflenet": {"standinMedianMs": 50.0, "run": {"error": "Error: no session"}}}}}
    rows = [line for line in bench_ort.standin_run_table(res, ["mlp", "shufflenet"]).splitlines() if line.startswith("| ")]
    assert "error: Error: no session" in rows[-1] and rows[-1].count("|") == rows[-2].count("|")


def test_the_run_table_is_left_out_without_runs():
    res = {"standin": {"label": "stand-in", "models": {"mlp": {"standinMedianMs": 1.0}}}}
    assert bench_ort.standin_run_table(res, ["mlp"]) == ""
    # a stand-in-only bench (its wasm N threads page alone) prints no main table
    assert bench_ort.table({"wasmN": {"label": "ORT wasm, 2 threads", "models": {}}}, ["mlp"]) == ""


def test_the_tape_holds_what_the_polyfill_built_for_orts_calls(standin_run):
    _, _, tape, _, _ = standin_run
    model = ort_models.build("mlp")
    inputs = [e["out"] for e in tape if e["method"] == "input"]
    constants = sorted(tuple(e["out"]["shape"]) for e in tape if e["method"] == "constant")
    assert inputs == [{"shape": [4, 64], "dataType": "float32"}]  # the ONNX graph's input
    assert constants == sorted(tuple(t.dims) for t in model.graph.initializer)
    out_dims = [d.dim_value for d in model.graph.output[0].type.tensor_type.shape.dim]
    assert tape[-1]["out"] == {"shape": out_dims, "dataType": "float32"}


def test_orts_create_on_the_standin_follows_the_tape_and_never_reaches_the_polyfill(standin_run):
    result, _, tape, _, _ = standin_run
    m = result["models"]["mlp"]
    assert not m.get("error"), m
    s = m["standin"]
    assert (s["calls"], s["tapeUsed"], s["offTape"]) == (len(tape), len(tape), 0), s
    assert s["builds"] == 1 and s["contexts"] == 1, s
    assert result["heapSettled"]  # garbage collected before each timed create
    # no call into the polyfill's interfaces (its engine may run its own background releases
    # in the stand-in's task hops: reported apart, standinPolyfillUse.engineCalls/engineMs)
    assert m["standinPolyfillUse"]["api"] == 0
    assert len(m["standinCreateMs"]) == len(m["polyfillCreateMs"]) == len(m["wasmCreateMs"]) == 2
    assert all(ms > 0 for ms in m["standinCreateMs"] + [m["firstCreateMs"]["standin"]])


def test_the_standin_has_the_polyfills_surface_and_computes_nothing(standin_run):
    _, surface, _, _, _ = standin_run
    assert surface["realIsMLContext"] and surface["afterIsMLContext"]  # only inside withStandin
    assert not surface["standinIsMLContext"]
    assert surface["limitsEqual"] and surface["missing"] == []
    assert surface["stats"]["offTape"] == 2 and surface["offTapeShape"] == []
    assert surface["graph"] == "function" and surface["dispatch"] == "returned"


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


def test_a_first_create_in_a_fresh_page_runs_on_each_engine(standin_run):
    """The stand-in alone (no polyfill in the page) answers ORT from the recorded tape."""
    result, _, tape, first, _ = standin_run
    f = first["mlp"]
    assert not f.get("errors"), f["errors"]
    assert all(len(f[k]) == 1 and f[k][0] > 0 for k in ("wasm", "polyfill", "standin")), f
    s = f["standinStats"]
    assert (s["calls"], s["offTape"], s["builds"]) == (len(tape), 0, 1), s
