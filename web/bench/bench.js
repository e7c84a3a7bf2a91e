// Benchmark page: times one engine (the WebNN polyfill, or TF.js with one
// backend) on SqueezeNet and MobileNetV2, plus single ops. tools/bench.py
// loads it in headless Chromium and reads `window.benchResult`.
//
// Query: engine=polyfill|tfjs, backend=cpu|wasm|webgl|webgpu (tfjs), device=cpu|gpu
// (polyfill: the models' context; gpu runs on WebGPU where there is an adapter), models=a,b,
// runs=N, ops=1 (single-op timings), profile=1 (polyfill per-op breakdown
// inside the models), startOnly=1 (engine start only), fast=0 (polyfill),
// threads=0 (TF.js wasm: its single-threaded build), warmup=S (untimed model runs, at least 1, for S seconds before the timed ones),
// budget=S (stop repeating a measurement after S seconds, once it has 3 runs:
// TF.js's cpu backend takes tens of seconds per SqueezeNet inference),
// timeline=worker (polyfill: WEBNN_POLYFILL_CONFIG.timeline, the timeline worker),
// respond=S (per model: S seconds of inferences back to back while the page counts its
// requestAnimationFrame frames: page-thread time per inference, frame rate, longest gap),
// timelineAB=N (polyfill: per model, one context in the page and one in the timeline worker,
// N pairs of inferences alternating between them: a latency ratio that drifts of the
// machine's speed affect alike).
import { MODELS, createClassifier, median, yieldTask, warmUp, INPUT_SHAPE } from '../lib/models.js';
import { imageToTensor, topK, fetchLabels } from '../lib/image.js';
import { resolveWeights } from '../lib/weights.js';
import { seededRandom } from '../lib/mobilenetv2.js';
import { TF_MODELS } from '../lib/tfjs-models.js';
import { $, Status, fmtMs, showError, carryQuery, loadScript } from '../lib/ui.js';

const cfg = self.GALLERY_CONFIG;
const q = new URLSearchParams(location.search);
const ENGINE = q.get('engine');
const BACKEND = q.get('backend') || 'cpu';
const DEVICE = q.get('device') === 'gpu' ? 'gpu' : 'cpu';
const MODEL_IDS = (q.get('models') || 'squeezenet,mobilenetv2').split(',').filter((m) => MODELS[m]);
const RUNS = cfg.runs;
const BUDGET_MS = (parseFloat(q.get('budget')) || Infinity) * 1000;
const MIN_RUNS = 3;
// Untimed model runs (>= 1) after the first and before the timed ones (seconds).
const WARMUP_MS = (parseFloat(q.get('warmup')) || 0) * 1000;
const overBudget = (t0, done) => done >= Math.min(MIN_RUNS, RUNS) && now() - t0 > BUDGET_MS;
const VENDOR = '/vendor/@tensorflow/';
const now = () => performance.now();
const TIMELINE = q.get('timeline') === 'worker' ? 'worker' : 'page';
const RESPOND_MS = (parseFloat(q.get('respond')) || 0) * 1000;
// Always explicit (the polyfill's default in a window is 'worker'): without timeline=worker
// the polyfill row executes in the page, as its profile mode (the page's engine) needs.
self.WEBNN_POLYFILL_CONFIG = { ...(self.WEBNN_POLYFILL_CONFIG || {}), timeline: TIMELINE };

// Inferences back to back for `ms`, as a page's camera loop would run them (no yield of
// its own between them), while requestAnimationFrame counts the frames the page draws.
// pageThreadMs: the synchronous part of each inference call, the time it holds the page's
// thread before it awaits its result (polyfill: writeTensor + dispatch + readTensor;
// TF.js: the input tensor + predict); inferenceMs: call to result.
async function responsiveness(infer, ms) {
  await infer();
  const frames = [];
  let on = true;
  const tick = () => { frames.push(now()); if (on) requestAnimationFrame(tick); };
  await new Promise((resolve) => requestAnimationFrame(() => { tick(); resolve(); }));
  const held = [];
  const took = [];
  const t0 = now();
  while (now() - t0 < ms) {
    const a = now();
    const pending = infer();
    held.push(now() - a);
    await pending;
    took.push(now() - a);
  }
  const t1 = now();
  on = false;
  const inside = [t0, ...frames.filter((f) => f > t0 && f < t1), t1];
  let longestGapMs = 0;
  for (let i = 1; i < inside.length; i++) longestGapMs = Math.max(longestGapMs, inside[i] - inside[i - 1]);
  return { seconds: (t1 - t0) / 1000, inferences: took.length, pageThreadMs: median(held), inferenceMs: median(took),
    fps: (inside.length - 2) / ((t1 - t0) / 1000), longestGapMs };
}

// The biggest ops of the two models (and a GEMM the models do not have), as single-op graphs.
export const OP_CASES = [
  { id: 'conv2d 7x7/2, 224x224x3 -> 96 (SqueezeNet conv1)', kind: 'conv', input: [1, 224, 224, 3], filter: [96, 7, 7, 3], stride: 2, padding: [2, 3, 2, 3] },
  { id: 'conv2d 3x3, 55x55x32 -> 128 (SqueezeNet fire4/e3x3)', kind: 'conv', input: [1, 55, 55, 32], filter: [128, 3, 3, 32], stride: 1, padding: [1, 1, 1, 1] },
  { id: 'conv2d 1x1, 112x112x16 -> 96 (MobileNetV2 block 1 expand)', kind: 'conv', input: [1, 112, 112, 16], filter: [96, 1, 1, 16], stride: 1, padding: [0, 0, 0, 0] },
  { id: 'depthwise 3x3, 56x56x144 (MobileNetV2 block 2)', kind: 'dw', input: [1, 56, 56, 144], filter: [1, 3, 3, 144], stride: 1, padding: [1, 1, 1, 1] },
  { id: 'depthwise 3x3/2, 112x112x96 (MobileNetV2 block 1)', kind: 'dw', input: [1, 112, 112, 96], filter: [1, 3, 3, 96], stride: 2, padding: [0, 1, 0, 1] },
  { id: 'matmul 1x1280 * 1280x1001 (logits as GEMV)', kind: 'matmul', a: [1, 1280], b: [1280, 1001] },
  { id: 'matmul 256x256 * 256x256', kind: 'matmul', a: [256, 256], b: [256, 256] },
];

function macs(c) {
  if (c.kind === 'matmul') return c.a[0] * c.a[1] * c.b[1];
  const [, h, w] = c.input;
  const [o, kh, kw, i] = c.filter;
  const oh = Math.floor((h + c.padding[0] + c.padding[1] - kh) / c.stride) + 1;
  const ow = Math.floor((w + c.padding[2] + c.padding[3] - kw) / c.stride) + 1;
  return c.kind === 'dw' ? oh * ow * kh * kw * c.filter[3] : oh * ow * o * kh * kw * i;
}

function randomData(shape, seed) {
  const rand = seededRandom(seed);
  const a = new Float32Array(shape.reduce((x, y) => x * y, 1));
  for (let i = 0; i < a.length; i++) a[i] = rand() * 2 - 1;
  return a;
}

function summary(times) {
  return { medianMs: median(times), minMs: Math.min(...times), n: times.length };
}

// The WebGPU adapter this browser gives a page (both engines get the same one: Chromium's
// --use-webgpu-adapter picks it), named as the polyfill's engineStats.webgpu names it.
async function webgpuAdapter() {
  if (!navigator.gpu) return { name: null, reason: 'no navigator.gpu' };
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) return { name: null, reason: 'navigator.gpu.requestAdapter() found no adapter' };
  const info = adapter.info || {};
  const name = [info.vendor, info.architecture, info.device, info.description].filter((x) => x).join(' ') || 'unknown adapter';
  return { name, isFallbackAdapter: !!(info.isFallbackAdapter || adapter.isFallbackAdapter) };
}

// ------------------------------------------------------------------ polyfill
async function polyfillStart() {
  const t0 = now();
  await loadScript(cfg.polyfillUrl);
  const scriptMs = now() - t0;
  const context = await navigator.ml.createContext({ deviceType: 'cpu' });
  const stats = webnnPolyfill.engineStats;
  return { context, start: { scriptMs, readyMs: now() - t0, engineMs: stats.startMs, sinceNavigationMs: now(),
    snapshot: stats.snapshot, phases: { ...stats.phases } } };
}

// The first result after a start (startOnly): a one-op graph built, its tensors created,
// written, dispatched and read, as a page's first inference would be; ms since the script was
// inserted (with the timeline worker this waits for the worker's engine, createContext() not).
async function polyfillFirstResult(context, readyMs) {
  const t = now();
  const b = new MLGraphBuilder(context);
  const graph = await b.build({ y: b.relu(b.input('x', { dataType: 'float32', shape: [4] })) });
  const x = await context.createTensor({ dataType: 'float32', shape: [4], writable: true });
  const y = await context.createTensor({ dataType: 'float32', shape: [4], readable: true });
  context.writeTensor(x, new Float32Array([-1, 0, 1, 2]));
  context.dispatch(graph, { x }, { y });
  const got = Array.from(new Float32Array(await context.readTensor(y)));
  if (got.join() !== '0,0,1,2') throw new Error(`relu gave ${got}`);
  return readyMs + now() - t;
}

const PROFILE_SETUP = `
import time
from webnn_core import bridge
_wb = globals().setdefault('_webnn_bench', {'prof': {}, 'backend': None})

def _wb_label(node):
    name = node.op.name
    if name.startswith('conv2d'):
        try:
            a = node.attrs
            if a.get('groups', 1) > 1:
                return name + ' (depthwise)'
            perm = a.get('filter_perm')
            shape = node.inputs[1].shape
            return name + ' (%dx%d)' % (shape[perm[1]], shape[perm[2]])
        except Exception:
            return name
    return name

def _wb_start(handle):
    # The context's own cpu backend (a webgpu context's cpu fallback); only it is timed.
    backend = bridge._objects[handle].backend
    backend = getattr(backend, 'fallback', backend)
    profiled = type(backend).run_node_profiled

    def run(node, args):
        t = time.perf_counter()
        out = profiled(backend, node, args)
        e = _wb['prof'].setdefault(_wb_label(node), [0, 0.0])
        e[0] += 1
        e[1] += time.perf_counter() - t
        return out

    backend.run_node_profiled = run
    _wb['backend'] = backend
    _wb['prof'].clear()
    backend.reset_profile()
    backend.set_profiling(True)

def _wb_stop():
    import json
    backend = _wb['backend']
    backend.__dict__.pop('run_node_profiled', None)
    backend.set_profiling(False)
    ops = {k: {'calls': c, 'ms': s * 1e3} for k, (c, s) in _wb['prof'].items()}
    return json.dumps({'ops': ops, 'kernels_profile': backend.profile(),
                       'fallback_reasons': {k: str(v) for k, v in backend.fallback_reasons.items()}})
`;

async function polyfillProfile(classifier, input, runs) {
  const py = webnnPolyfill.pyodide();
  if (!py) return { error: 'webnnPolyfill.pyodide() is not available' };
  try {
    py.runPython(PROFILE_SETUP);
    py.runPython(`_wb_start(${webnnPolyfill.engineStats.kernels.handle(classifier.context)})`);
    const t0 = now();
    for (let i = 0; i < runs; i++) { await yieldTask(); await classifier.infer(input); }
    const wallMs = (now() - t0) / runs;
    const r = JSON.parse(py.runPython('_wb_stop()'));
    for (const v of Object.values(r.ops)) { v.msPerInference = v.ms / runs; v.callsPerInference = v.calls / runs; }
    for (const v of Object.values(r.kernels_profile)) { v.msPerInference = v.ms / runs; v.callsPerInference = v.calls / runs; }
    return { runs, wallMsPerInference: wallMs, ...r };
  } catch (e) {
    try { py.runPython('_wb_stop()'); } catch (e2) { /* ignore */ }
    return { error: String(e) };
  }
}

async function polyfillOps(context, runs) {
  const out = [];
  for (const c of OP_CASES) {
    const b = new MLGraphBuilder(context);
    let x; let y; let xData; let xShape;
    if (c.kind === 'matmul') {
      xShape = c.a;
      x = b.input('x', { dataType: 'float32', shape: c.a });
      y = b.matmul(x, b.constant({ dataType: 'float32', shape: c.b }, randomData(c.b, 2)));
    } else {
      xShape = c.input;
      const o = c.kind === 'dw' ? c.filter[3] : c.filter[0];
      x = b.input('x', { dataType: 'float32', shape: c.input });
      y = b.conv2d(x, b.constant({ dataType: 'float32', shape: c.filter }, randomData(c.filter, 2)), {
        inputLayout: 'nhwc', filterLayout: c.kind === 'dw' ? 'ihwo' : 'ohwi', strides: [c.stride, c.stride], padding: c.padding,
        groups: c.kind === 'dw' ? c.filter[3] : 1, bias: b.constant({ dataType: 'float32', shape: [o] }, randomData([o], 3)),
      });
    }
    xData = randomData(xShape, 1);
    const graph = await b.build({ y });
    const tIn = await context.createTensor({ dataType: 'float32', shape: xShape, writable: true });
    const tOut = await context.createTensor({ dataType: 'float32', shape: y.shape, readable: true });
    context.writeTensor(tIn, xData);
    context.dispatch(graph, { x: tIn }, { y: tOut });  // warm-up
    const times = [];
    const n = Math.max(MIN_RUNS, runs);
    const tStart = now();
    for (let i = 0; i < n && !overBudget(tStart, i); i++) {
      const t0 = now();
      context.dispatch(graph, { x: tIn }, { y: tOut });  // synchronous in the polyfill: the op runs here
      times.push(now() - t0);
    }
    await context.readTensor(tOut);
    graph.destroy(); tIn.destroy(); tOut.destroy();
    out.push({ id: c.id, kind: c.kind, macs: macs(c), ...summary(times) });
    await yieldTask();
  }
  return out;
}

// The same model in a context of each timeline, inferences alternating (which goes first
// alternates too), after WARMUP_MS (at least 3 pairs) of untimed ones.
async function timelineAB(id, input, pairs) {
  const make = async (where) => {
    webnnPolyfill.config.timeline = where;
    try {
      return await createClassifier(id, { deviceType: DEVICE, weights: await resolveWeights(cfg, MODELS[id].probe) });
    } finally {
      webnnPolyfill.config.timeline = TIMELINE;
    }
  };
  const sides = { page: await make('page'), worker: await make('worker') };
  const location = { page: webnnPolyfill.engineStats.kernels.location(sides.page.context),
    worker: webnnPolyfill.engineStats.kernels.location(sides.worker.context) };
  const kernels = { page: await webnnPolyfill.engineStats.kernels.backend(sides.page.context),
    worker: await webnnPolyfill.engineStats.kernels.backend(sides.worker.context) };
  // Each inference's span in epoch ms (the worker's dispatch times are in those units).
  const timed = async (c) => {
    await yieldTask();
    const t0 = now();
    await c.infer(input);
    const t1 = now();
    return { ms: t1 - t0, span: [performance.timeOrigin + t0, performance.timeOrigin + t1] };
  };
  const t0 = now();
  for (let i = 0; i < 3 || now() - t0 < WARMUP_MS; i++) { await timed(sides.page); await timed(sides.worker); }
  const ms = { page: [], worker: [] };
  const ratios = [];
  // Where the worker's time goes: its dispatch (engineStats.timeline.dispatchTimes(), the
  // last 64, fetched between pairs) against the whole call; the rest is the page's checks,
  // the messages and the read.
  const spans = [];
  const dispatches = new Map();
  const collect = async () => { for (const t of await webnnPolyfill.engineStats.timeline.dispatchTimes()) dispatches.set(t[0], t); };
  for (let i = 0; i < pairs; i++) {
    const order = i % 2 ? ['worker', 'page'] : ['page', 'worker'];
    const got = {};
    for (const where of order) {
      const r = await timed(sides[where]);
      got[where] = r.ms;
      if (where === 'worker') spans.push(r.span);
    }
    ms.page.push(got.page);
    ms.worker.push(got.worker);
    ratios.push(got.worker / got.page);
    if (i % 32 === 31) await collect();
  }
  await collect();
  const inside = [];
  const outside = [];
  for (const [a, b] of spans) {
    const d = [...dispatches.values()].filter(([s, e]) => s >= a && e <= b);
    if (d.length !== 1) continue;
    inside.push(d[0][1] - d[0][0]);
    outside.push(b - a - (d[0][1] - d[0][0]));
  }
  sides.page.destroy();
  sides.worker.destroy();
  return { location, kernels, pageMs: median(ms.page), workerMs: median(ms.worker), pageMinMs: Math.min(...ms.page),
    workerMinMs: Math.min(...ms.worker), ratioOfMedians: median(ms.worker) / median(ms.page), medianRatio: median(ratios), pairs,
    workerDispatchMs: inside.length ? median(inside) : null, workerOutsideMs: outside.length ? median(outside) : null,
    workerDispatchesMatched: inside.length };
}

async function runPolyfill(input, labels) {
  const result = { engine: 'polyfill', backend: cfg.fastPaths ? 'fast paths' : 'numpy only', fastPaths: cfg.fastPaths, device: DEVICE, timeline: TIMELINE };
  if (DEVICE === 'gpu') result.backend = 'gpu device';
  status.show('Starting the polyfill engine…');
  const { context, start } = await polyfillStart();
  result.start = start;
  if (q.get('startOnly')) {
    start.firstResultMs = await polyfillFirstResult(context, start.readyMs);
    return result;
  }
  if (q.get('timelineAB')) {
    result.timelineAB = {};
    for (const id of MODEL_IDS) {
      status.timing(`${MODELS[id].title}: page vs timeline worker, alternating…`);
      result.timelineAB[id] = await timelineAB(id, input, parseInt(q.get('timelineAB'), 10));
    }
    return result;
  }
  if (DEVICE === 'gpu') {
    result.adapter = await webgpuAdapter();
    result.webgpu = { ...webnnPolyfill.engineStats.webgpu };
  }
  result.models = {};
  result.profile = {};
  for (const id of MODEL_IDS) {
    status.show(`${MODELS[id].title}: weights + build…`);
    const c = await createClassifier(id, { deviceType: DEVICE, weights: await resolveWeights(cfg, MODELS[id].probe) });
    status.timing(`${MODELS[id].title}: ${RUNS} inferences…`);
    const r = await c.run(input, RUNS, () => {}, BUDGET_MS, WARMUP_MS);
    result.models[id] = {
      weightsMs: c.timings.weightsMs, buildMs: c.timings.buildMs, firstMs: r.firstMs,
      medianMs: r.medianMs, minMs: r.minMs, runsMs: r.runsMs,
      top5: topK(r.probabilities, labels, 5), probabilities: Array.from(r.probabilities),
    };
    if (DEVICE === 'gpu') {
      // Which backend ran the graph (WebGPU, or the cpu fallback and why), and its partitions.
      const b = await webnnPolyfill.engineStats.kernels.backend(c.context);  // a promise for a context in the timeline worker
      result.models[id].backend = { webgpu: b.webgpu, adapter: b.adapter, reason: b.reason, partitions: b.partitions, counts: b.counts };
    }
    result.models[id].location = webnnPolyfill.engineStats.kernels.location(c.context);
    if (RESPOND_MS) {
      status.timing(`${MODELS[id].title}: inferences back to back, counting frames…`);
      result.models[id].responsive = await responsiveness(() => c.infer(input), RESPOND_MS);
    }
    if (q.get('profile') && TIMELINE === 'page') {  // the profile hooks the page's engine
      status.timing(`${MODELS[id].title}: per-op profile…`);
      result.profile[id] = await polyfillProfile(c, input, Math.min(RUNS, 5));
    }
    c.destroy();
  }
  if (q.get('ops')) {
    status.timing('Single ops…');
    const context = await navigator.ml.createContext({ deviceType: 'cpu' });
    result.ops = await polyfillOps(context, RUNS);
  }
  return result;
}

// ------------------------------------------------------------------ TF.js
async function tfStart(backend) {
  const t0 = now();
  await loadScript(`${VENDOR}tfjs-core/dist/tf-core.min.js`);
  const file = { cpu: 'tfjs-backend-cpu/dist/tf-backend-cpu.min.js', wasm: 'tfjs-backend-wasm/dist/tf-backend-wasm.min.js',
    webgl: 'tfjs-backend-webgl/dist/tf-backend-webgl.min.js', webgpu: 'tfjs-backend-webgpu/dist/tf-backend-webgpu.min.js' }[backend];
  if (!file) throw new Error(`unknown TF.js backend ${backend}`);
  await loadScript(VENDOR + file);
  const scriptMs = now() - t0;
  if (backend === 'wasm') tf.wasm.setWasmPaths(`${VENDOR}tfjs-backend-wasm/dist/`);
  // threads=0: the single-threaded build, which any page that is not cross-origin isolated
  // gets (this page is isolated, so TF.js would pick its threaded build and a worker pool).
  if (backend === 'wasm' && q.get('threads') === '0') tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
  let ok = false;
  let reason = '';
  try {
    ok = await tf.setBackend(backend);
    await tf.ready();
  } catch (e) {
    reason = String(e && e.message || e);
  }
  if (!ok || tf.getBackend() !== backend) {
    return { unavailable: reason || `tf.setBackend('${backend}') failed (see the console)` };
  }
  const start = { scriptMs, readyMs: now() - t0, sinceNavigationMs: now() };
  if (backend === 'webgl') {
    try {
      const gl = tf.backend().gpgpu.gl;
      const ext = gl.getExtension('WEBGL_debug_renderer_info');
      start.renderer = ext ? gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);
      start.webglVersion = tf.env().getNumber('WEBGL_VERSION');
    } catch (e) { /* informative only */ }
  }
  if (backend === 'wasm') {
    try {
      start.simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
      start.threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
    } catch (e) { /* informative only */ }
  }
  return { start };
}

async function tfOps(runs) {
  const out = [];
  for (const c of OP_CASES) {
    const keep = [];
    let op;
    if (c.kind === 'matmul') {
      const a = tf.tensor(randomData(c.a, 1), c.a);
      const b = tf.tensor(randomData(c.b, 2), c.b);
      keep.push(a, b);
      op = () => tf.matMul(a, b);
    } else {
      const x = tf.tensor(randomData(c.input, 1), c.input);
      const o = c.kind === 'dw' ? c.filter[3] : c.filter[0];
      const filter = tf.tidy(() => tf.transpose(tf.tensor(randomData(c.filter, 2), c.filter), [1, 2, 3, 0]));
      const bias = tf.tensor(randomData([o], 3), [o]);
      keep.push(x, filter, bias);
      const pad = [[0, 0], [c.padding[0], c.padding[1]], [c.padding[2], c.padding[3]], [0, 0]];
      op = c.kind === 'dw'
        ? () => tf.fused.depthwiseConv2d({ x, filter, bias, strides: c.stride, pad })
        : () => tf.fused.conv2d({ x, filter, bias, strides: c.stride, pad });
    }
    const once = () => { const y = op(); y.dataSync(); y.dispose(); };
    once();  // warm-up (shader compile on webgl)
    const times = [];
    const n = Math.max(MIN_RUNS, runs);
    const tStart = now();
    for (let i = 0; i < n && !overBudget(tStart, i); i++) {
      const t0 = now();
      once();
      times.push(now() - t0);
    }
    keep.forEach((t) => t.dispose());
    out.push({ id: c.id, kind: c.kind, macs: macs(c), ...summary(times) });
    await yieldTask();
  }
  return out;
}

async function runTfjs(input, labels) {
  const result = { engine: 'tfjs', backend: BACKEND };
  status.show(`Starting TF.js (${BACKEND})…`);
  let s;
  try {
    s = await tfStart(BACKEND);
  } catch (e) {
    s = { unavailable: String(e && e.message || e) };
  }
  if (s.unavailable) return { ...result, unavailable: s.unavailable };
  result.start = s.start;
  result.tfjsVersion = tf.version_core;
  if (BACKEND === 'webgpu') result.adapter = await webgpuAdapter();
  if (q.get('startOnly')) {  // its first result: relu of 4 values read back, as the polyfill's
    const t = now();
    const x = tf.tensor([-1, 0, 1, 2]);
    const y = tf.relu(x);
    const got = Array.from(await y.data());
    x.dispose(); y.dispose();
    if (got.join() !== '0,0,1,2') throw new Error(`relu gave ${got}`);
    result.start.firstResultMs = result.start.readyMs + now() - t;
    return result;
  }
  result.models = {};
  for (const id of MODEL_IDS) {
    status.show(`${MODELS[id].title}: weights…`);
    let t = now();
    const weights = await MODELS[id].load((await resolveWeights(cfg, MODELS[id].probe)).url(MODELS[id].dir));
    const weightsMs = now() - t;
    t = now();
    const model = TF_MODELS[id](tf, weights);
    const buildMs = now() - t;
    const infer = async () => {
      const x = tf.tensor(input, INPUT_SHAPE, 'float32');
      const y = tf.tidy(() => model.predict(x));
      const data = await y.data();
      x.dispose(); y.dispose();
      return data;
    };
    status.timing(`${MODELS[id].title}: ${RUNS} inferences…`);
    t = now();
    const probabilities = await infer();
    const firstMs = now() - t;
    await warmUp(infer, WARMUP_MS);
    const runsMs = [];
    const tStart = now();
    for (let i = 0; i < RUNS && !overBudget(tStart, i); i++) {
      await yieldTask();
      t = now();
      await infer();
      runsMs.push(now() - t);
    }
    const responsive = RESPOND_MS ? await responsiveness(infer, RESPOND_MS) : undefined;
    model.dispose();
    result.models[id] = {
      weightsMs, buildMs, firstMs, ...summary(runsMs), runsMs, responsive,
      top5: topK(probabilities, labels, 5), probabilities: Array.from(probabilities),
    };
  }
  if (q.get('ops')) {
    status.timing('Single ops…');
    result.ops = await tfOps(RUNS);
  }
  result.numTensors = tf.memory().numTensors;
  return result;
}

// ------------------------------------------------------------------ page
const status = new Status($('#status'));
carryQuery();

function render(r) {
  $('#results').hidden = false;
  $('#results-title').textContent = r.engine === 'polyfill' ? `WebNN polyfill (${r.backend})` : `TF.js ${r.backend}`;
  const rows = [];
  if (r.unavailable) rows.push(['unavailable', r.unavailable]);
  if (r.start) rows.push(['start: script load → ready', fmtMs(r.start.readyMs)]);
  for (const [id, m] of Object.entries(r.models || {})) {
    rows.push([`${MODELS[id].title}: weights / build / first`, `${fmtMs(m.weightsMs)} / ${fmtMs(m.buildMs)} / ${fmtMs(m.firstMs)}`]);
    rows.push([`${MODELS[id].title}: median (min) of ${m.runsMs.length}`, `${fmtMs(m.medianMs)} (${fmtMs(m.minMs)})`]);
  }
  for (const o of r.ops || []) rows.push([o.id, `${fmtMs(o.medianMs)} · ${(2 * o.macs / o.medianMs / 1e6).toFixed(2)} GFLOP/s`]);
  const table = $('#results-table');
  table.innerHTML = '';
  for (const [k, v] of rows) {
    const tr = table.insertRow();
    tr.insertCell().textContent = k;
    const td = tr.insertCell();
    td.className = 'num';
    td.textContent = v;
  }
  const brief = JSON.parse(JSON.stringify(r, (k, v) => (k === 'probabilities' ? undefined : v)));
  $('#results-json').textContent = JSON.stringify(brief, null, 1);
}

if (ENGINE) {
  window.benchResult = (async () => {
    const source = await resolveWeights(cfg, MODELS.squeezenet.probe);  // /models/, else the public copy
    const input = await imageToTensor(await (await source.fetch('test.jpg')).blob());
    const labels = await fetchLabels(source.url('labels1001.txt'));
    const r = ENGINE === 'polyfill' ? await runPolyfill(input, labels) : await runTfjs(input, labels);
    r.userAgent = navigator.userAgent;
    r.hardwareConcurrency = navigator.hardwareConcurrency;
    r.runs = RUNS;
    return r;
  })().then((r) => {
    status.done(r.unavailable ? `unavailable: ${r.unavailable}` : 'Done');
    render(r);
    return r;
  }, (e) => {
    status.fail();
    showError($('#error'), e, 'The benchmark failed');
    return { engine: ENGINE, backend: BACKEND, error: String(e && e.stack || e) };
  });
} else {
  document.body.dataset.state = 'done';
  document.body.dataset.ready = 'true';
}
