"""The timeline worker (issue 32, docs/architecture.md "The timeline worker"): with
WEBNN_POLYFILL_CONFIG.timeline = 'worker' (the default in a window), a window's contexts execute in a dedicated
worker; dispatch() returns before the graph has run, the builder's errors stay as they
are, results are bit-identical to in-page execution, the timeline keeps its order,
errors from the worker are the spec's, and the worker ends with its last context.

One page holds both kinds of context: `webnnPolyfill.config.timeline` is read at each
createContext(), so flipping it to 'page' makes an in-page context to compare with."""
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, ROOT

WEBGPU_ARGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"]  # as tests/browser/test_webgpu.py

PAGE = "/test-pages/timeline.html"


@pytest.fixture(scope="module")
def tpage(browser, server):
    context = browser.new_context()
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.goto(server + PAGE)
    page.evaluate("""async () => {
      window.makeContext = async (where, options) => {
        webnnPolyfill.config.timeline = where;
        try { return await navigator.ml.createContext(options); } finally { webnnPolyfill.config.timeline = 'worker'; }
      };
    }""")
    yield page
    context.close()


def test_contexts_execute_in_the_worker_and_engine_stats_say_where(tpage):
    r = tpage.evaluate("""async () => {
      const w = await makeContext('worker');
      const p = await makeContext('page');
      const s = webnnPolyfill.engineStats;
      const out = { worker: s.kernels.location(w), page: s.kernels.location(p), mode: s.timeline.worker,
                    backend: (await s.kernels.backend(w)).backend || null };
      w.destroy(); p.destroy();
      return out;
    }""")
    assert r["worker"] == "worker" and r["page"] == "page"
    assert r["mode"] in ("starting", "ready")


# A long graph: 24 chained 256x256 matmuls (tens of ms on the cpu kernels, or more).
# Long enough (~0.1-0.3 s here) that the page's own dispatch() cost, a few ms that a
# garbage collection can stretch to ~10, stays a small fraction of the run.
LONG_GRAPH = """
  const b = new MLGraphBuilder(ctx);
  const x = b.input('x', {dataType: 'float32', shape: [512, 512]});
  const w = b.constant({dataType: 'float32', shape: [512, 512]}, new Float32Array(262144).fill(1 / 512));
  let y = x;
  for (let i = 0; i < 24; i++) y = b.matmul(y, w);
  const g = await b.build({y});
  const xt = await ctx.createTensor({dataType: 'float32', shape: [512, 512], writable: true});
  const yt = await ctx.createTensor({dataType: 'float32', shape: [512, 512], readable: true});
  ctx.writeTensor(xt, new Float32Array(262144).fill(1));
"""


def test_dispatch_returns_before_the_graph_has_run(tpage):
    r = tpage.evaluate("""async () => {
      const ctx = await makeContext('worker');
      """ + LONG_GRAPH + """
      ctx.dispatch(g, {x: xt}, {y: yt});  // warm-up (the worker's first dispatch)
      await ctx.readTensor(yt);
      const epoch = () => performance.timeOrigin + performance.now();
      const called = epoch();
      ctx.dispatch(g, {x: xt}, {y: yt});
      const returned = epoch();
      const out = new Float32Array(await ctx.readTensor(yt));
      const times = await webnnPolyfill.engineStats.timeline.dispatchTimes();
      const [start, end] = times[times.length - 1];
      ctx.destroy();
      return {called, returned, start, end, first: out[0]};
    }""")
    assert r["first"] == 1.0
    run = r["end"] - r["start"]
    assert run > 5, r  # the worker really ran a long graph
    assert r["returned"] < r["end"], r  # dispatch() returned before the graph had finished
    assert r["returned"] - r["called"] < run / 4, r



def test_the_graph_runs_while_the_page_finishes_its_turn(tpage):
    """A frame that dispatches and then draws (synchronous work in the same task): the
    worker starts the graph at once, not when the page's turn ends (native WebNN sends
    the dispatch over IPC at the call)."""
    r = tpage.evaluate("""async () => {
      const ctx = await makeContext('worker');
      """ + LONG_GRAPH + """
      ctx.dispatch(g, {x: xt}, {y: yt});  // warm-up (the worker's first dispatch)
      await ctx.readTensor(yt);
      const epoch = () => performance.timeOrigin + performance.now();
      ctx.dispatch(g, {x: xt}, {y: yt});
      const busyFrom = epoch();
      while (epoch() - busyFrom < 150) {}  // the frame's drawing
      const busyTo = epoch();
      await ctx.readTensor(yt);
      const times = await webnnPolyfill.engineStats.timeline.dispatchTimes();
      const [start, end] = times[times.length - 1];
      ctx.destroy();
      return {busyFrom, busyTo, start, end};
    }""")
    assert r["start"] < r["busyTo"] - 50, r  # the graph began well before the page's turn ended

BAD_BUILDER_CALLS = """
  const calls = [
    () => b.input('x', {dataType: 'float32', shape: [2, -1]}),
    () => b.add(b.input('a', {dataType: 'float32', shape: [2, 3]}), b.input('c', {dataType: 'float32', shape: [4, 3]}), {label: 'myAdd'}),
    () => b.conv2d(b.input('i', {dataType: 'float32', shape: [1, 1, 4, 4]}), b.input('f', {dataType: 'int32', shape: [1, 1, 2, 2]})),
    () => b.constant({dataType: 'float32', shape: [3]}, new Float32Array(2)),
    () => b.reshape(b.input('r', {dataType: 'float32', shape: [6]}), [4], {label: 'shapeLabel'}),
    () => b.softmax(b.input('s', {dataType: 'float32', shape: [2, 3]}), 5),
  ];
  const errors = [];
  for (const call of calls) {
    try { call(); errors.push(null); } catch (e) { errors.push([e.constructor.name, e.name, e.message]); }
  }
"""


def test_the_builders_errors_are_unchanged(tpage):
    r = tpage.evaluate("""async () => {
      const out = {};
      for (const where of ['page', 'worker']) {
        const ctx = await makeContext(where);
        const b = new MLGraphBuilder(ctx);
        """ + BAD_BUILDER_CALLS + """
        out[where] = errors;
        ctx.destroy();
      }
      return out;
    }""")
    assert r["worker"] == r["page"]
    assert all(e is not None and e[0] == "TypeError" for e in r["page"]), r["page"]
    assert "myAdd" in r["page"][1][2] and "shapeLabel" in r["page"][4][2]


def test_results_are_bit_identical_to_in_page_execution(tpage):
    r = tpage.evaluate("""async () => {
      let seed = 7;
      const rand = (n) => Float32Array.from({length: n}, () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1);
      const input = rand(1 * 8 * 16 * 16), filter = rand(16 * 8 * 3 * 3), bias = rand(16), w2 = rand(16 * 10);
      const run = async (where) => {
        const ctx = await makeContext(where);
        const b = new MLGraphBuilder(ctx);
        const x = b.input('x', {dataType: 'float32', shape: [1, 8, 16, 16]});
        let y = b.conv2d(x, b.constant({dataType: 'float32', shape: [16, 8, 3, 3]}, filter),
                         {padding: [1, 1, 1, 1], bias: b.constant({dataType: 'float32', shape: [16]}, bias)});
        y = b.relu(y);
        y = b.averagePool2d(y, {windowDimensions: [16, 16]});
        y = b.reshape(y, [1, 16]);
        y = b.softmax(b.matmul(y, b.constant({dataType: 'float32', shape: [16, 10]}, w2)), 1);
        const g = await b.build({y});
        const xt = await ctx.createTensor({dataType: 'float32', shape: [1, 8, 16, 16], writable: true});
        const yt = await ctx.createTensor({dataType: 'float32', shape: [1, 10], readable: true});
        ctx.writeTensor(xt, input);
        ctx.dispatch(g, {x: xt}, {y: yt});
        const bytes = Array.from(new Uint8Array(await ctx.readTensor(yt)));
        const computed = await ctx.compute(g, {x: input.slice()}, {y: new Float32Array(10)});
        ctx.destroy();
        return {bytes, computed: Array.from(new Uint8Array(computed.outputs.y.buffer))};
      };
      return {page: await run('page'), worker: await run('worker')};
    }""")
    assert r["worker"]["bytes"] == r["page"]["bytes"]
    assert r["worker"]["computed"] == r["page"]["bytes"]
    assert r["page"]["computed"] == r["page"]["bytes"]


def test_the_timeline_keeps_its_order(tpage):
    r = tpage.evaluate("""async () => {
      const run = async (where) => {
        const ctx = await makeContext(where);
        const order = [];
        const b = new MLGraphBuilder(ctx);
        const x = b.input('x', {dataType: 'float32', shape: [2]});
        const g = await b.build({y: b.mul(x, b.constant({dataType: 'float32', shape: [2]}, new Float32Array([10, 100])))});
        const a = await ctx.createTensor({dataType: 'float32', shape: [2], writable: true, readable: true});
        const y = await ctx.createTensor({dataType: 'float32', shape: [2], readable: true});
        const z = await ctx.createTensor({dataType: 'float32', shape: [2], readable: true});
        const src = new Float32Array([1, 2]);
        ctx.writeTensor(a, src);
        src[0] = 99;  // writeTensor copied the bytes at the call
        ctx.dispatch(g, {x: a}, {y});
        const r1 = ctx.readTensor(y).then((v) => { order.push('r1'); return Array.from(new Float32Array(v)); });
        ctx.writeTensor(a, new Float32Array([3, 4]));
        const ra = ctx.readTensor(a).then((v) => { order.push('ra'); return Array.from(new Float32Array(v)); });
        ctx.dispatch(g, {x: a}, {y: z});
        const into = new Float32Array(2);
        const r2 = ctx.readTensor(z, into).then(() => { order.push('r2'); return Array.from(into); },
          (e) => { order.push('r2'); return e.name; });
        const t3 = ctx.createTensor({dataType: 'float32', shape: [2], readable: true}).then((t) => { order.push('create'); return t; });
        const r3 = ctx.readTensor(z).then(() => 'resolved', (e) => { order.push('r3'); return e.name; });
        z.destroy();  // destroyed before its reads completed: they reject
        let afterDestroy = null;
        try { ctx.dispatch(g, {x: a}, {y: z}); } catch (e) { afterDestroy = e.name; }
        const values = await Promise.all([r1, ra, r2, t3, r3]);
        ctx.dispatch(g, {x: a}, {y});
        a.destroy();  // after the dispatch that reads it: the dispatch saw its contents
        const again = Array.from(new Float32Array(await ctx.readTensor(y)));
        const fresh = Array.from(new Float32Array(await ctx.readTensor(values[3])));
        ctx.destroy();
        return {values: values.slice(0, 3), r3: values[4], order, afterDestroy, fresh, again};
      };
      return {page: await run('page'), worker: await run('worker')};
    }""")
    w = r["worker"]
    assert w["values"] == [[10, 200], [3, 4], "InvalidStateError"]
    assert w["r3"] == "InvalidStateError"
    assert w["order"] == ["r1", "ra", "r2", "create", "r3"]
    assert w["afterDestroy"] == "TypeError"
    assert w["fresh"] == [0, 0] and w["again"] == [30, 400]
    assert w == r["page"]


def test_calls_are_checked_again_after_one_passed(tpage):
    """The page keeps the shadow's verdict on a writeTensor/dispatch/readTensor per tensor
    and graph (js/src/api.js shadowPassed): a later call with other arguments, or after
    a tensor, graph or the context was destroyed, is checked again and throws what the
    in-page context throws (the spec's MLContext steps: TypeError for a wrong byte
    length, a destroyed tensor or a tensor bound twice; InvalidStateError for a
    destroyed graph or context)."""
    r = tpage.evaluate("""async () => {
      const run = async (where) => {
        const ctx = await makeContext(where);
        const b = new MLGraphBuilder(ctx);
        const g = await b.build({y: b.relu(b.input('x', {dataType: 'float32', shape: [2]}))});
        const desc = {dataType: 'float32', shape: [2], readable: true, writable: true};
        const a = await ctx.createTensor(desc), y = await ctx.createTensor(desc), z = await ctx.createTensor(desc);
        const steps = [];
        const step = (f) => { try { f(); steps.push(null); } catch (e) { steps.push([e.name, e.message]); } };
        const read = async (t) => { try { return Array.from(new Float32Array(await ctx.readTensor(t))); } catch (e) { return [e.name, e.message]; } };
        step(() => ctx.writeTensor(a, new Float32Array([-1, 2])));
        step(() => ctx.writeTensor(a, new Float32Array([1, 2, 3])));  // another length
        step(() => ctx.writeTensor(a, new Float32Array([3, -4])));
        step(() => ctx.dispatch(g, {x: a}, {y}));
        step(() => ctx.dispatch(g, {x: a}, {y: a}));  // one tensor bound as input and output
        step(() => ctx.dispatch(g, {x: a}, {y}));
        const first = await read(y);
        z.destroy();  // another tensor of the context: the kept verdicts are checked again, still pass
        step(() => ctx.dispatch(g, {x: a}, {y}));
        y.destroy();
        step(() => ctx.dispatch(g, {x: a}, {y}));
        step(() => ctx.writeTensor(y, new Float32Array([5, 6])));
        const destroyedRead = await read(y);
        const second = await read(a);
        g.destroy();
        step(() => ctx.dispatch(g, {x: a}, {y: z}));
        ctx.destroy();
        step(() => ctx.writeTensor(a, new Float32Array([7, 8])));
        const lostRead = await read(a);
        return {steps, first, destroyedRead, second, lostRead};
      };
      return {page: await run('page'), worker: await run('worker')};
    }""")
    w = r["worker"]
    assert w == r["page"]
    names = [s and s[0] for s in w["steps"]]
    assert names == [None, "TypeError", None, None, "TypeError", None, None, "TypeError", "TypeError",
                     "InvalidStateError", "InvalidStateError"], w["steps"]
    assert w["first"] == [3, 0]  # relu of the last write before the dispatch
    assert w["destroyedRead"][0] == "TypeError"
    assert w["second"] == [3, -4]
    assert w["lostRead"][0] == "InvalidStateError"


def test_write_tensor_copies_its_data_at_the_call(tpage):
    """writeTensor() copies the caller's bytes at the call (the worker gets a copy moved
    to it, never the caller's buffer): changing or transferring the source afterwards
    changes nothing, and the bytes read back are the ones written, bit for bit."""
    r = tpage.evaluate("""async () => {
      const n = 1 << 16;
      const ctx = await makeContext('worker');
      const t = await ctx.createTensor({dataType: 'float32', shape: [n], readable: true, writable: true});
      const src = Float32Array.from({length: n}, (_, i) => Math.fround(Math.sin(i) * 1e3));
      const expected = Array.from(new Uint8Array(src.buffer.slice(0)));
      ctx.writeTensor(t, src);
      src.fill(-7);  // after the call, before the turn ends (the worker has not seen the write yet)
      const first = new Uint8Array(await ctx.readTensor(t));
      const nan = new Uint32Array([0x7fc00001, 0xffffffff, 0x00000001, 0x80000000]);  // payload NaNs, a denormal, -0
      const t4 = await ctx.createTensor({dataType: 'float32', shape: [4], readable: true, writable: true});
      ctx.writeTensor(t4, nan);
      const moved = nan.buffer.transfer ? (nan.buffer.transfer(), 'transferred') : 'kept';
      const back = Array.from(new Uint32Array(await ctx.readTensor(t4)));
      ctx.destroy();
      return {same: first.length === expected.length && first.every((v, i) => v === expected[i]), back, moved,
              sourceAfter: src[0]};
    }""")
    assert r["same"]
    assert r["back"] == [0x7FC00001, 0xFFFFFFFF, 0x00000001, 0x80000000]
    assert r["sourceAfter"] == -7


def test_errors_from_the_worker_are_the_specs(tpage):
    # Tensors of 2 GiB - 4 bytes pass every check (maxTensorByteLength), so the page's
    # shadow accepts them; the worker's 32-bit engine cannot hold two: its failure
    # reaches createTensor() as the spec's UnknownError, without Python's text. The
    # worker ends with the context, and its memory with it.
    r = tpage.evaluate("""async () => {
      const ctx = await makeContext('worker');
      const made = [];
      let error = null;
      for (let i = 0; i < 3 && !error; i++) {
        try {
          made.push(await ctx.createTensor({dataType: 'float32', shape: [536870911], readable: true}));
        } catch (e) {
          error = [e.constructor.name, e.name, e.message];
        }
      }
      ctx.destroy();
      return {error, made: made.length, worker: webnnPolyfill.engineStats.timeline.worker};
    }""")
    assert r["error"] is not None, r
    kind, name, message = r["error"]
    assert (kind, name) == ("DOMException", "UnknownError"), r
    assert message.startswith("createTensor:"), message
    assert "Traceback" not in message and 'File "' not in message and "MemoryError" not in message
    assert r["worker"] == "terminated"


def test_the_worker_ends_with_its_last_context(tpage):
    """The worker ends a few seconds (timeline.js KEEP_ALIVE_MS) after its last context
    is destroyed, and every byte it held with it; a context made before that keeps it
    (no second engine start for a page that switches models)."""
    r = tpage.evaluate("""async () => {
      const s = webnnPolyfill.engineStats.timeline;
      const started = s.workersStarted;
      const a = await makeContext('worker');
      const c = await makeContext('worker');
      const t = await a.createTensor({dataType: 'float32', shape: [4], readable: true});
      a.destroy();
      const afterOne = {worker: s.worker, contexts: s.contexts};
      const pending = c.createTensor({dataType: 'float32', shape: [4], readable: true}).then(() => 'ok');
      await pending;
      c.destroy();
      const lost = await c.lost;
      const afterAll = {worker: s.worker, contexts: s.contexts};
      // Another context right away: the same worker, its engine kept.
      const e = await makeContext('worker');
      const et = await e.createTensor({dataType: 'float32', shape: [2], writable: true, readable: true});
      e.writeTensor(et, new Float32Array([1, 2]));
      const kept = {back: Array.from(new Float32Array(await e.readTensor(et))), workers: s.workersStarted - started};
      e.destroy();
      const t0 = performance.now();
      while (s.worker !== 'terminated' && performance.now() - t0 < 20000) await new Promise((r) => setTimeout(r, 50));
      const ended = {worker: s.worker, contexts: s.contexts, afterMs: performance.now() - t0};
      // A new context starts a new worker (from the page's runtime again).
      const d = await makeContext('worker');
      const dt = await d.createTensor({dataType: 'float32', shape: [2], writable: true, readable: true});
      d.writeTensor(dt, new Float32Array([5, 6]));
      const back = Array.from(new Float32Array(await d.readTensor(dt)));
      d.destroy();
      return {afterOne, afterAll, lost: lost.message, kept, ended, workers: s.workersStarted - started, back};
    }""")
    assert r["afterOne"]["contexts"] == 1 and r["afterOne"]["worker"] in ("starting", "ready")
    assert r["afterAll"]["contexts"] == 0 and r["afterAll"]["worker"] in ("starting", "ready")
    assert r["kept"] == {"back": [1, 2], "workers": r["kept"]["workers"]} and r["kept"]["workers"] <= 1
    assert r["ended"]["worker"] == "terminated" and r["ended"]["contexts"] == 0
    assert r["ended"]["afterMs"] > 1000  # not at once: it waited for another context
    assert r["back"] == [5, 6]
    assert r["workers"] == r["kept"]["workers"] + 1


def test_no_page_errors(tpage):
    assert tpage.errors == []


def test_gpu_contexts_run_on_webgpu_in_the_worker(browser, server, playwright):
    """A gpu context in the worker runs on the worker's own WebGPU device (SwiftShader
    here) with the results of an in-page gpu context; createContext(gpuDevice) stays in
    the page, where that device lives."""

    gpu_browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + WEBGPU_ARGS)
    try:
        page = gpu_browser.new_page()
        page.goto(server + PAGE)
        r = page.evaluate("""async () => {
          if (!navigator.gpu || !(await navigator.gpu.requestAdapter())) return {skip: 'no WebGPU adapter in this Chromium'};
          const run = async (where, device) => {
            webnnPolyfill.config.timeline = where;
            const ctx = await navigator.ml.createContext(device || {deviceType: 'gpu'});
            webnnPolyfill.config.timeline = 'worker';
            const b = new MLGraphBuilder(ctx);
            const x = b.input('x', {dataType: 'float32', shape: [2, 8]});
            const w = b.constant({dataType: 'float32', shape: [8, 3]}, Float32Array.from({length: 24}, (_, i) => (i % 7) / 7 - 0.4));
            const g = await b.build({y: b.sigmoid(b.matmul(x, w))});
            const xt = await ctx.createTensor({dataType: 'float32', shape: [2, 8], writable: true});
            const yt = await ctx.createTensor({dataType: 'float32', shape: [2, 3], readable: true});
            ctx.writeTensor(xt, Float32Array.from({length: 16}, (_, i) => i / 8 - 1));
            ctx.dispatch(g, {x: xt}, {y: yt});
            const bytes = Array.from(new Uint8Array(await ctx.readTensor(yt)));
            const backend = await webnnPolyfill.engineStats.kernels.backend(ctx);
            const out = {bytes, location: webnnPolyfill.engineStats.kernels.location(ctx), webgpu: !!backend.webgpu,
                         accelerated: ctx.accelerated};
            ctx.destroy();
            return out;
          };
          const device = await (await navigator.gpu.requestAdapter()).requestDevice();
          const worker = await run('worker');
          // The page's engineStats.webgpu counts the worker's gpu-context graphs (the WPT
          // runner's gpu summary reads it): one graph built and one dispatch on the GPU.
          const tally = {...webnnPolyfill.engineStats.webgpu.graphs, available: webnnPolyfill.engineStats.webgpu.available};
          return {worker, tally, page: await run('page'), own: await run('worker', device)};
        }""")
    finally:
        gpu_browser.close()
    if r.get("skip"):
        pytest.skip(r["skip"])
    assert r["worker"]["location"] == "worker" and r["worker"]["webgpu"] and r["worker"]["accelerated"]
    assert r["page"]["location"] == "page" and r["page"]["webgpu"]
    assert r["own"]["location"] == "page" and r["own"]["webgpu"]
    assert r["worker"]["bytes"] == r["page"]["bytes"] == r["own"]["bytes"]
    t = r["tally"]
    assert t["available"] is True and (t["gpu"], t["dispatchesGpu"], t["cpu"], t["dispatchesCpu"]) == (1, 1, 0, 0), t


def test_the_worker_starts_from_the_pages_runtime_and_the_page_keeps_no_constants(tpage):
    r = tpage.evaluate("""async () => {
      const ctx = await makeContext('worker');
      const b = new MLGraphBuilder(ctx);
      const x = b.input('x', {dataType: 'float32', shape: [64, 64]});
      const g = await b.build({y: b.matmul(x, b.constant({dataType: 'float32', shape: [64, 64]}, new Float32Array(4096).fill(0.5)))});
      const s = webnnPolyfill.engineStats.timeline;
      for (let i = 0; i < 600 && s.worker !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
      // The page's engine: its shadow graphs hold no constant values once built.
      const kept = webnnPolyfill.pyodide().runPython(`
from webnn_core import bridge
from webnn_core.graph import Graph
kept = 0
for obj in list(bridge._objects.values()):
    if isinstance(obj, Graph) and obj.context.shadow:
        for node in obj.nodes:
            kept += sum(1 for o in node.inputs if o is not None and o.kind == 'constant' and o.value is not None)
kept`);
      const out = {worker: s.worker, snapshot: s.workerStats && s.workerStats.snapshot, kept, pageThreads: webnnPolyfill.engineStats.threads.reason};
      g.destroy();
      ctx.destroy();
      return out;
    }""")
    assert r["worker"] == "ready"
    assert r["snapshot"] == "from the page"  # restored from the snapshot the page fetched, not fetched again
    assert r["kept"] == 0
    assert "timeline worker" in r["pageThreads"]


def test_workers_keep_executing_in_thread(tpage):
    """A dedicated worker is not a page's main thread: its contexts execute in it, and
    engineStats says so and why, even with timeline: 'worker'."""
    r = tpage.evaluate("""async () => {
      const script = new URL('/dist/webnn-polyfill.js', location.href).href;
      const source = `self.WEBNN_POLYFILL_CONFIG = {timeline: 'worker'}; importScripts(${JSON.stringify(script)});
        navigator.ml.createContext().then((ctx) => postMessage({location: webnnPolyfill.engineStats.kernels.location(ctx),
          reason: webnnPolyfill.engineStats.timeline.reason}), (e) => postMessage({error: String(e)}));`;
      const w = new Worker(URL.createObjectURL(new Blob([source], {type: 'text/javascript'})));
      const answer = await new Promise((resolve) => { w.onmessage = (e) => resolve(e.data); w.onerror = (e) => resolve({error: e.message}); });
      w.terminate();
      return answer;
    }""")
    assert r.get("location") == "page", r
    assert "main thread" in r["reason"]


# The default (no WEBNN_POLYFILL_CONFIG.timeline): a window's contexts execute in the
# timeline worker, and its engine restores the snapshot the page's engine restored
# (engineStats.timeline.workerStats.snapshot 'from the page'), never one of its own:
# the page's first calls (a context, a tensor, a build) reach the worker before the
# page hands it the runtime wherever the hand-over waits for the page's engine (two
# cores or fewer), and the worker must hold them until it has the runtime (before the
# fix it started its own engine: 'built', the build-time snapshot fetched again).
# No timeline setting; the build-time snapshot on every cold start (by default a start
# fetches it only where the connection makes it pay, which a loaded machine can tip).
DEFAULT_PAGE = PAGE + "?config=%7B%22buildSnapshot%22%3Atrue%7D"
FIRST_USE = """async () => {
  const t0 = performance.now();
  const ctx = await navigator.ml.createContext();
  const b = new MLGraphBuilder(ctx);
  const x = b.input('x', {dataType: 'float32', shape: [4]});
  const g = await b.build({y: b.add(x, b.constant({dataType: 'float32', shape: [4]}, new Float32Array([1, 2, 3, 4])))});
  const xt = await ctx.createTensor({dataType: 'float32', shape: [4], writable: true});
  const yt = await ctx.createTensor({dataType: 'float32', shape: [4], readable: true});
  ctx.writeTensor(xt, new Float32Array([10, 20, 30, 40]));
  ctx.dispatch(g, {x: xt}, {y: yt});
  const y = Array.from(new Float32Array(await ctx.readTensor(yt)));
  const s = webnnPolyfill.engineStats;
  for (let i = 0; i < 600 && s.timeline.worker !== 'ready'; i++) await new Promise((r) => setTimeout(r, 100));
  return { y, location: s.kernels.location(ctx), mode: s.timeline.mode, worker: s.timeline.worker,
           page: s.snapshot, inWorker: s.timeline.workerStats && s.timeline.workerStats.snapshot,
           config: webnnPolyfill.config.timeline, stored: !!s.snapshotStored,
           workerThreads: s.timeline.workerStats && s.timeline.workerStats.threads, isolated: crossOriginIsolated };
}"""


def counting_server():
    """A server of this checkout that records each file it sends in full (a 200: not a
    304 revalidation, not a hit in the browser's HTTP cache)."""
    import threading

    import serve

    sent = []

    class Counting(serve.Handler):
        def send_response(self, code, message=None):
            if code == 200:
                sent.append(self.path.split("?")[0].rsplit("/", 1)[-1])
            super().send_response(code, message)

    mounts = {**serve.default_mounts(), "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    srv = serve.Server(("127.0.0.1", 0), type("CountingHandler", (Counting,), {"mounts": mounts}))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}", sent


@pytest.mark.parametrize("cores", [2, 8])
def test_by_default_the_worker_restores_the_pages_snapshot_cold_and_warm(browser, cores):
    # navigator.hardwareConcurrency decides whether the worker starts beside the page's
    # engine or after it (js/src/timeline.js); both orders, whatever this machine has.
    srv, base, sent = counting_server()
    context = browser.new_context()
    context.add_init_script(f"Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', {{get: () => {cores}}})")
    page = context.new_page()
    try:
        for start in ("cold", "warm", "warm"):
            sent.clear()
            page.goto(base + DEFAULT_PAGE)
            r = page.evaluate(FIRST_USE)
            assert r["y"] == [11, 22, 33, 44]
            assert r["config"] == "worker" and r["mode"] == "worker" and r["location"] == "worker", r
            assert r["worker"] == "ready", r
            assert r["page"] == ("built" if start == "cold" else "restored"), (start, r)
            assert r["inWorker"] == "from the page", (start, r)
            # Nothing downloaded twice: the wasm, the archives, the kernels (the worker's pool's
            # threads build too) and the snapshot at most once per visit, all by the page.
            twice = {name for name in sent if sent.count(name) > 1}
            assert not twice, (start, sorted(sent))
            if r["isolated"]:  # the kernel pool runs in the worker, on the threads build the page handed over
                assert r["workerThreads"]["active"] > 1 or r["workerThreads"]["requested"] == 1, r["workerThreads"]
            if start == "cold":  # the next visit restores the profile's own snapshot
                page.wait_for_function("webnnPolyfill.engineStats.snapshotStored === true", timeout=120_000)
    finally:
        context.close()
        srv.shutdown()


def test_timeline_page_executes_in_the_page(browser, server):
    """The switch for pages that want the old behaviour: no worker, in-page execution."""
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(server + PAGE + "?config=" + '{"timeline":"page"}')
        r = page.evaluate("""async () => {
          const ctx = await navigator.ml.createContext();
          const s = webnnPolyfill.engineStats;
          const b = new MLGraphBuilder(ctx);
          const x = b.input('x', {dataType: 'float32', shape: [2]});
          const g = await b.build({y: b.mul(x, x)});
          const xt = await ctx.createTensor({dataType: 'float32', shape: [2], writable: true});
          const yt = await ctx.createTensor({dataType: 'float32', shape: [2], readable: true});
          ctx.writeTensor(xt, new Float32Array([3, -4]));
          ctx.dispatch(g, {x: xt}, {y: yt});
          const y = Array.from(new Float32Array(await ctx.readTensor(yt)));
          return { y, location: s.kernels.location(ctx), mode: s.timeline.mode, worker: s.timeline.worker,
                   started: s.timeline.workersStarted, pageThreads: s.threads.reason,
                   // the page's own kernels answer synchronously
                   status: typeof s.kernels.status(ctx).then };
        }""")
        assert r["y"] == [9, 16]
        assert r["location"] == "page" and r["mode"] == "page"
        assert r["worker"] is None and r["started"] == 0  # no worker was ever spawned
        assert r["status"] == "undefined"
        assert "timeline worker" not in (r["pageThreads"] or "")
    finally:
        context.close()


def test_the_default_is_worker_in_a_window_and_in_thread_in_a_dedicated_worker(browser, server):
    context = browser.new_context()
    page = context.new_page()
    try:
        page.goto(server + DEFAULT_PAGE)
        r = page.evaluate("""async () => {
          const inWindow = { config: webnnPolyfill.config.timeline };
          const ctx = await navigator.ml.createContext();
          inWindow.location = webnnPolyfill.engineStats.kernels.location(ctx);
          const script = new URL('/dist/webnn-polyfill.js', location.href).href;
          const source = `importScripts(${JSON.stringify(script)});
            navigator.ml.createContext().then((ctx) => postMessage({config: webnnPolyfill.config.timeline,
              location: webnnPolyfill.engineStats.kernels.location(ctx), mode: webnnPolyfill.engineStats.timeline.mode,
              reason: webnnPolyfill.engineStats.timeline.reason}), (e) => postMessage({error: String(e)}));`;
          const w = new Worker(URL.createObjectURL(new Blob([source], {type: 'text/javascript'})));
          const inWorker = await new Promise((resolve) => { w.onmessage = (e) => resolve(e.data); w.onerror = (e) => resolve({error: e.message}); });
          w.terminate();
          return { inWindow, inWorker };
        }""")
        assert r["inWindow"] == {"config": "worker", "location": "worker"}
        assert r["inWorker"].get("location") == "page" and r["inWorker"]["mode"] == "page", r
        assert "main thread" in r["inWorker"]["reason"]
    finally:
        context.close()


def test_a_first_visit_without_the_build_snapshot_hands_the_worker_the_one_the_page_made(browser, server):
    """buildSnapshot: false (as a slow first visit decides): the page's engine starts from
    scratch and makes a snapshot; the worker, started after it (two cores), restores that
    snapshot's bytes rather than initialising Python and importing numpy again."""
    context = browser.new_context()
    context.add_init_script("Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', {get: () => 2})")
    page = context.new_page()
    try:
        page.goto(server + PAGE + "?config=" + '{"buildSnapshot":false}')
        r = page.evaluate(FIRST_USE)
        assert r["y"] == [11, 22, 33, 44] and r["location"] == "worker", r
        assert r["page"] == "created" and r["inWorker"] == "from the page", r
    finally:
        context.close()


# A page's loop of a one-op graph (js/src/spin.js): `pauseMs` between iterations, for
# `seconds`; each result checked against max(x, 0).
SMALL_GRAPH_LOOP = """async ([pauseMs, seconds]) => {
  const ctx = await navigator.ml.createContext();
  const b = new MLGraphBuilder(ctx);
  const g = await b.build({y: b.relu(b.input('x', {dataType: 'float32', shape: [1]}))});
  const xt = await ctx.createTensor({dataType: 'float32', shape: [1], writable: true});
  const yt = await ctx.createTensor({dataType: 'float32', shape: [1], readable: true});
  const before = await webnnPolyfill.engineStats.timeline.spins();
  const wrong = [];
  let n = 0;
  for (const t0 = performance.now(); performance.now() - t0 < seconds * 1000; n++) {
    const x = (n % 7) - 3;
    ctx.writeTensor(xt, new Float32Array([x]));
    ctx.dispatch(g, {x: xt}, {y: yt});
    const y = new Float32Array(await ctx.readTensor(yt))[0];
    if (y !== Math.max(x, 0)) wrong.push([x, y]);
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
  const after = await webnnPolyfill.engineStats.timeline.spins();
  const location = webnnPolyfill.engineStats.kernels.location(ctx);
  ctx.destroy();
  const delta = (side) => Object.fromEntries(['waits', 'spun', 'caught'].map((k) => [k, after[side][k] - before[side][k]]));
  return {n, wrong, location, page: {...delta('page'), windowMs: after.page.windowMs},
          worker: {...delta('worker'), windowMs: after.worker.windowMs}};
}"""


def small_graph_loop(browser, server, pause_ms, seconds, config=None, cores=None):
    context = browser.new_context()
    if cores:
        context.add_init_script(f"Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', {{get: () => {cores}}})")
    page = context.new_page()
    try:
        page.goto(server + PAGE + ("?config=" + config if config else ""))
        r = page.evaluate(SMALL_GRAPH_LOOP, [pause_ms, seconds])
    finally:
        context.close()
    assert r["location"] == "worker" and r["wrong"] == [], r
    return r


def test_a_loop_of_small_graphs_spins_where_it_waits_for_the_worker(browser, server):
    """Back to back, the page's reads and the worker's waits for the page's next call
    spin instead of sleeping, once the loop has gone on for a second (spin.js
    SPIN_AFTER_MS), and the spins catch what they wait for. (A window of 5 ms, not the default
    0.5: a slower machine's waits may all be longer than 0.5 ms; the bench measures the default.)"""
    r = small_graph_loop(browser, server, 0, 3, config='{"timeline":"worker","timelineSpinMs":5}')
    for side in ("page", "worker"):
        s = r[side]
        assert s["windowMs"] == 5, r
        assert 0 < s["spun"] < s["waits"], r  # spun, but not in the loop's first second
        assert 0 < s["caught"] <= s["spun"], r


def test_a_loop_with_pauses_never_spins(browser, server):
    """A loop that pauses (a page's frames, a timer) sleeps between its calls: no spin on
    either side, however short its calls are."""
    r = small_graph_loop(browser, server, 60, 2)
    assert r["n"] >= 10, r
    assert r["page"]["windowMs"] == 0.5 and r["worker"]["windowMs"] == 0.5, r  # the default
    assert r["page"]["spun"] == 0 and r["worker"]["spun"] == 0, r


@pytest.mark.parametrize("how", ["timelineSpinMs: 0", "one core"])
def test_spinning_is_off_with_timeline_spin_ms_0_or_on_one_core(browser, server, how):
    if how == "one core":
        r = small_graph_loop(browser, server, 0, 2, cores=1)
    else:
        r = small_graph_loop(browser, server, 0, 2, config='{"timeline":"worker","timelineSpinMs":0}')
    for side in ("page", "worker"):
        assert r[side]["windowMs"] == 0 and r[side]["spun"] == 0, r
        assert r[side]["waits"] > 100, r
