// ORT-web benchmark page (driven by tools/bench_ort.py). One configuration per
// page load, because ORT reads its thread count once:
//   ?ep=wasm&threads=N    ORT's own wasm EP (MLAS) on N threads
//   ?ep=webnn             ORT's WebNN EP (deviceType cpu) on navigator.ml = the polyfill
//   ?ep=standin           ORT's WebNN EP on a zero-cost stand-in (standin.js): per model one
//                         create on the polyfill records the tape; then the first create on
//                         ORT's wasm EP and on the stand-in, then createRuns creates each on
//                         the three, interleaved; ORT on 1 thread; no session.run
//   &layout=nchw|nhwc     ... with the polyfill's opSupportLimits().preferredInputLayout reported
//                         as this (an experiment: which layout ORT builds its graphs in)
//   &pthreads=N           ... with the polyfill's kernels on N threads (its `threads` config;
//                         default navigator.hardwareConcurrency)
// window.runBench(models, runs, budgetSeconds, warmupSeconds) -> {models: {name: {createMs, firstMs, runsMs,
// medianMs, minMs, warmupRuns, output: first values, checksum, callsPerRun (WebNN EP: writeTensor, dispatch and
// readTensor calls per session.run)}}, crossOriginIsolated, hardwareConcurrency}.
'use strict';
const params = new URLSearchParams(location.search);
const EP = params.get('ep') || 'wasm';
const THREADS = Number(params.get('threads') || 1);
const POLYFILL_THREADS = Number(params.get('pthreads')) || null;
const PREFERRED_LAYOUT = params.get('layout');

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = src; s.onload = resolve; s.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.append(s);
  });
}

// A fixed pseudo-random input (the same on every page): xorshift32 in [-1, 1).
function input(n, seed) {
  const out = new Float32Array(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    out[i] = x / 2 ** 31 - 1;
  }
  return out;
}

// Where the WebNN EP's session create goes: wall time inside every call ORT
// makes into the polyfill (measurement only; wraps the bench page's own
// interfaces): navigator.ml.createContext (ORT makes a context per session),
// new MLGraphBuilder, constant()/input(), the op calls, build() (until its
// promise settles), MLContext calls (opSupportLimits, createTensor, destroy,
// ...), MLGraph/MLTensor calls and MLOperand attribute reads. Only the
// outermost call counts (no call is counted twice). `engine`: the part of it
// spent in the engine's bridge calls (engineStats.engine: Python and the
// crossing, not the JS conversions).
const builderMs = { constant: 0, ops: 0, build: 0, constants: 0, opCalls: 0 };
// Each call's ms too: their medians show the typical call where a loaded machine
// adds pauses (the process descheduled) to a few of them.
const callMs = { constant: [], ops: [] };
let contextMs = {};  // 'ML.createContext', 'MLContext.opSupportLimits', 'MLGraphBuilder()', ... -> {ms, calls}
let depth = 0;

function timed(fn, add) {
  return function (...args) {
    if (depth > 0) return fn.apply(this, args);
    const t = performance.now();
    depth++;
    let out;
    try { out = fn.apply(this, args); } catch (e) { depth--; add(performance.now() - t); throw e; }
    depth--;
    if (out && typeof out.then === 'function') {  // until it settles (ORT awaits each one)
      return out.finally(() => add(performance.now() - t));
    }
    add(performance.now() - t);
    return out;
  };
}

function addTo(name) {
  return (ms) => { const e = contextMs[name] ??= { ms: 0, calls: 0 }; e.ms += ms; e.calls++; };
}

function timeBuilderCalls() {
  const proto = MLGraphBuilder.prototype;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (name === 'constructor' || typeof d.value !== 'function') continue;
    const add = name === 'build' ? (ms) => { builderMs.build += ms; }
      : name === 'constant' || name === 'input' ? (ms) => { builderMs.constant += ms; builderMs.constants++; callMs.constant.push(ms); }
        : (ms) => { builderMs.ops += ms; builderMs.opCalls++; callMs.ops.push(ms); };
    Object.defineProperty(proto, name, { ...d, value: timed(d.value, add) });
  }
  // Everything else ORT calls, by interface and name.
  for (const [iface, cls] of [['ML', ML], ['MLContext', MLContext], ['MLGraph', MLGraph], ['MLTensor', MLTensor],
    ['MLOperand', MLOperand]]) {
    const p = cls.prototype;
    for (const name of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (name === 'constructor') continue;
      if (typeof d.value === 'function') {
        Object.defineProperty(p, name, { ...d, value: timed(d.value, addTo(`${iface}.${name}`)) });
      } else if (typeof d.get === 'function') {
        Object.defineProperty(p, name, { ...d, get: timed(d.get, addTo(`${iface}.${name}`)) });
      }
    }
  }
  // new MLGraphBuilder(context): the global constructor, proxied (same prototype).
  const Builder = MLGraphBuilder;
  const addNew = addTo('new MLGraphBuilder');
  self.MLGraphBuilder = new Proxy(Builder, { construct: timed((target, args, newTarget) => Reflect.construct(target, args, newTarget), addNew) });
}

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

window.ready = (async () => {
  if (EP === 'webnn' || EP === 'polyfill' || EP === 'standin') {  // ep=polyfill: only the polyfill (tools/profile_build.py)
    // The polyfill first, then ORT: the WebNN EP finds navigator.ml. Start its engine
    // before any timing (the first createContext() boots Pyodide).
    self.WEBNN_POLYFILL_CONFIG = { threads: POLYFILL_THREADS };
    await loadScript('/dist/webnn-polyfill.js');
    const t0 = performance.now();
    await navigator.ml.createContext({ deviceType: 'cpu' });
    window.engineStartMs = performance.now() - t0;
    if (EP === 'polyfill') return;
    if (PREFERRED_LAYOUT) {
      const limits = MLContext.prototype.opSupportLimits;
      Object.defineProperty(MLContext.prototype, 'opSupportLimits', {
        value: function () { return { ...limits.call(this), preferredInputLayout: PREFERRED_LAYOUT }; },
        writable: true, configurable: true,
      });
    }
    if (EP === 'standin') {  // after the layout switch: the stand-in reports the same table
      await loadScript('standin.js');
      await webnnStandin.init();
    }
    if (EP === 'webnn') timeBuilderCalls();
  }
  await loadScript('/ortdist/ort.min.js');
  ort.env.wasm.wasmPaths = '/ortdist/';
  ort.env.wasm.numThreads = EP === 'wasm' ? THREADS : 1;
  ort.env.logLevel = 'error';
})();

// ORT's create on the polyfill and on the stand-in, interleaved `createRuns` times
// per model after one untimed create that records the stand-in's tape.
async function runStandin(models, createRuns) {
  const ep = { name: 'webnn', deviceType: 'cpu' };
  const opts = { executionProviders: [ep], graphOptimizationLevel: 'all' };
  const out = { ep: EP, threads: 1, crossOriginIsolated: self.crossOriginIsolated, engineStartMs: window.engineStartMs,
                hardwareConcurrency: navigator.hardwareConcurrency, ortVersion: ort.env.versions?.web, models: {} };
  const wasmOpts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const create = async (bytes, o = opts) => {
    const t = performance.now();
    const s = await ort.InferenceSession.create(bytes, o);
    const ms = performance.now() - t;
    await s.release();
    return ms;
  };
  const engineCalls = () => webnnPolyfill.engineStats.engine.calls;
  // ORT compiles and instantiates its wasm on the first session: not part of any model's create time.
  await create(new Uint8Array(await (await fetch(`/ortmodels/${models[0].file}`)).arrayBuffer()), wasmOpts);
  for (const m of models) {
    const r = out.models[m.name] = { wasmCreateMs: [], polyfillCreateMs: [], standinCreateMs: [], standinEngineCalls: 0 };
    try {
      const bytes = new Uint8Array(await (await fetch(`/ortmodels/${m.file}`)).arrayBuffer());
      // The first create of each: the polyfill's records the stand-in's tape.
      let ms;
      r.tapeLength = await webnnStandin.recordTape(async () => { ms = await create(bytes); });
      r.firstCreateMs = { polyfill: ms, wasm: await create(bytes, wasmOpts) };
      await webnnStandin.withStandin(async () => { r.firstCreateMs.standin = await create(bytes); });
      for (let i = 0; i < createRuns; i++) {  // the three interleaved, same page, ORT on 1 thread
        r.wasmCreateMs.push(await create(bytes, wasmOpts));
        r.polyfillCreateMs.push(await create(bytes));
        const calls = engineCalls();
        r.standin = await webnnStandin.withStandin(async () => { ms = await create(bytes); });
        r.standinEngineCalls += engineCalls() - calls;  // 0: the stand-in never reaches the polyfill
        r.standinCreateMs.push(ms);
      }
      r.wasmMedianMs = median(r.wasmCreateMs);
      r.polyfillMedianMs = median(r.polyfillCreateMs);
      r.standinMedianMs = median(r.standinCreateMs);
    } catch (e) {
      r.error = `${e?.name || 'Error'}: ${e?.message || e}`;
    }
  }
  return out;
}

window.runBench = async (models, runs, budget, warmup = 0, createRuns = 5) => {
  await window.ready;
  if (EP === 'standin') return runStandin(models, createRuns);
  const out = { ep: EP, threads: EP === 'webnn' ? 1 : THREADS, crossOriginIsolated: self.crossOriginIsolated,
                hardwareConcurrency: navigator.hardwareConcurrency, ortVersion: ort.env.versions?.web,
                engineStartMs: window.engineStartMs, models: {},
                polyfillThreads: self.webnnPolyfill ? { ...webnnPolyfill.engineStats.threads } : null };
  // ORT compiles and instantiates its wasm on the first session: not part of any model's create time.
  const warm = await ort.InferenceSession.create(
    new Uint8Array(await (await fetch(`/ortmodels/${models[0].file}`)).arrayBuffer()),
    { executionProviders: [EP === 'webnn' ? { name: 'webnn', deviceType: 'cpu' } : 'wasm'] });
  await warm.release();
  for (const m of models) {
    const r = out.models[m.name] = {};
    try {
      const bytes = new Uint8Array(await (await fetch(`/ortmodels/${m.file}`)).arrayBuffer());
      const ep = EP === 'webnn' ? { name: 'webnn', deviceType: 'cpu' } : 'wasm';
      Object.keys(builderMs).forEach((k) => { builderMs[k] = 0; });
      callMs.constant = [];
      callMs.ops = [];
      contextMs = {};
      const engine0 = self.webnnPolyfill ? { ...webnnPolyfill.engineStats.engine } : null;
      let t = performance.now();
      const session = await ort.InferenceSession.create(bytes, { executionProviders: [ep], graphOptimizationLevel: 'all' });
      r.createMs = performance.now() - t;
      if (EP === 'webnn') {
        const e = webnnPolyfill.engineStats.engine;
        r.builder = { ...builderMs, context: structuredClone(contextMs),
                      constantMedianMs: callMs.constant.length ? median(callMs.constant) : null,
                      opMedianMs: callMs.ops.length ? median(callMs.ops) : null,
                      engine: e && engine0 ? { ms: e.ms - engine0.ms, calls: e.calls - engine0.calls } : null };
      }
      const feeds = {};
      m.inputs.forEach(([name, shape], i) => {
        feeds[name] = new ort.Tensor('float32', input(shape.reduce((a, b) => a * b, 1), 12345 + i), shape);
      });
      t = performance.now();
      let res = await session.run(feeds);
      r.firstMs = performance.now() - t;
      // Untimed warm-up: V8 runs wasm on its baseline tier first and tiers hot
      // functions up in the background (seconds for ORT's large module).
      const warmUntil = performance.now() + warmup * 1000;
      r.warmupRuns = 0;
      while (r.warmupRuns < 3 || performance.now() < warmUntil) {
        res = await session.run(feeds);
        r.warmupRuns++;
      }
      r.runsMs = [];
      const callsBefore = structuredClone(contextMs);
      const start = performance.now();
      while (r.runsMs.length < runs && (r.runsMs.length < 3 || performance.now() - start < budget * 1000)) {
        t = performance.now();
        res = await session.run(feeds);
        r.runsMs.push(performance.now() - t);
      }
      if (EP === 'webnn') {  // ORT's partitions: the MLContext calls of one session.run
        const per = (name) => ((contextMs[name]?.calls ?? 0) - (callsBefore[name]?.calls ?? 0)) / r.runsMs.length;
        r.callsPerRun = { write: per('MLContext.writeTensor'), dispatch: per('MLContext.dispatch'), read: per('MLContext.readTensor') };
      }
      r.medianMs = median(r.runsMs);
      r.minMs = Math.min(...r.runsMs);
      const y = res[session.outputNames[0]].data;
      r.output = Array.from(y.slice(0, 64));
      r.outputLength = y.length;
      await session.release();
    } catch (e) {
      r.error = `${e?.name || 'Error'}: ${e?.message || e}`;
    }
  }
  return out;
};
