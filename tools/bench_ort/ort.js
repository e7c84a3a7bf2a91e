// ORT-web benchmark page (driven by tools/bench_ort.py). One configuration per
// page load, because ORT reads its thread count once:
//   ?ep=wasm&threads=N    ORT's own wasm EP (MLAS) on N threads
//   ?ep=webnn             ORT's WebNN EP (deviceType cpu) on navigator.ml = the polyfill
//   ?ep=standin           ORT's WebNN EP on a zero-cost stand-in (standin.js): per model one
//                         create on the polyfill records the tape; then the first create on
//                         ORT's wasm EP and on the stand-in, then createRuns creates each on
//                         the three, interleaved; ORT on 1 thread. Then (runs > 0) one session
//                         on each of the three runs: warm-up rounds, then `runs` timed rounds of
//                         one session.run each, interleaved (runStandinRuns)
//   ?ep=standinalone      the same stand-in without the polyfill in the page (runFirst)
//   &first=1              runFirst: an untimed create of a warm-up model on the page's EP,
//                         then one timed create of one model: its first create in a fresh
//                         page (ep=wasm, webnn or standinalone)
//   &layout=nchw|nhwc     ... with the polyfill's opSupportLimits().preferredInputLayout reported
//                         as this (an experiment: which layout ORT builds its graphs in)
//   &layout=ab            ... reported as window.reportedLayout: runLayoutAB creates one WebNN EP
//                         session per layout (ORT reads the field at each session create)
//   &pthreads=N           ... with the polyfill's kernels on N threads (its `threads` config;
//                         default navigator.hardwareConcurrency)
// window.runBench(models, runs, budgetSeconds, warmupSeconds) -> {models: {name: {createMs, firstMs, runsMs,
// medianMs, minMs, warmupRuns, output: first values, outputs: every output whole, checksum, callsPerRun (WebNN EP: writeTensor, dispatch and
// readTensor calls per session.run)}}, crossOriginIsolated, hardwareConcurrency}.
'use strict';
const params = new URLSearchParams(location.search);
const EP = params.get('ep') || 'wasm';
const THREADS = Number(params.get('threads') || 1);
const POLYFILL_THREADS = Number(params.get('pthreads')) || null;
const PREFERRED_LAYOUT = params.get('layout');
const FIRST = params.get('first') === '1';

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
const modelBytes = async (file) => new Uint8Array(await (await fetch(`/ortmodels/${file}`)).arrayBuffer());
const errorText = (e) => `${e?.name || 'Error'}: ${e?.message || e}`;

window.ready = (async () => {
  if (EP === 'webnn' || EP === 'polyfill' || EP === 'standin') {  // ep=polyfill: only the polyfill (tools/profile_build.py)
    // The polyfill first, then ORT: the WebNN EP finds navigator.ml. Start its engine
    // before any timing (the first createContext() boots Pyodide).
    // In the page (timeline: 'page', not the window's default timeline worker): the split
    // of ORT's time by engineStats.engine, tools/profile_build.py, profile_run.py and
    // bench_ort/graph_check.py run Python in the engine that executes the graphs.
    self.WEBNN_POLYFILL_CONFIG = { threads: POLYFILL_THREADS, timeline: 'page' };
    await loadScript('/dist/webnn-polyfill.js');
    const t0 = performance.now();
    const context = await navigator.ml.createContext({ deviceType: 'cpu' });
    window.engineStartMs = performance.now() - t0;
    window.polyfillLayout = context.opSupportLimits().preferredInputLayout;  // before any override
    if (EP === 'polyfill') return;
    if (PREFERRED_LAYOUT) {
      const limits = MLContext.prototype.opSupportLimits;
      Object.defineProperty(MLContext.prototype, 'opSupportLimits', {
        value: function () {
          // layout=ab: whatever runLayoutAB set for the session being created
          return { ...limits.call(this), preferredInputLayout: PREFERRED_LAYOUT === 'ab' ? window.reportedLayout : PREFERRED_LAYOUT };
        },
        writable: true, configurable: true,
      });
    }
    if (EP === 'standin') {  // after the layout switch: the stand-in reports the same table
      countPolyfillApiCalls();
      await loadScript('standin.js');
      await webnnStandin.installOverPolyfill();
      timePolyfillRunCalls();
    }
    if (EP === 'webnn' && !FIRST) timeBuilderCalls();
  }
  if (EP === 'standinalone') await loadScript('standin.js');
  await loadScript('/ortdist/ort.min.js');
  ort.env.wasm.wasmPaths = '/ortdist/';
  ort.env.wasm.numThreads = EP === 'wasm' ? THREADS : 1;
  ort.env.logLevel = 'error';
})();

// The polyfill's MLContext calls during session.run on the stand-in page: ms inside
// each call (not until a read settles: the settle is a task hop the stand-in pays
// too), counted only while `polyfillCalls.on`; readSettle: ms from the end of each
// readTensor call to its promise settling (the hop, and the settle's own work).
const polyfillCalls = { on: false, write: [], dispatch: [], read: [], createTensor: [], current: null };
function timePolyfillRunCalls() {
  const p = MLContext.prototype;
  for (const [name, key] of [['writeTensor', 'write'], ['dispatch', 'dispatch'], ['readTensor', 'read'],
    ['createTensor', 'createTensor']]) {
    const d = Object.getOwnPropertyDescriptor(p, name);
    const fn = d.value;
    Object.defineProperty(p, name, {
      ...d,
      value: function (...args) {
        if (!polyfillCalls.on) return fn.apply(this, args);
        const c = polyfillCalls.current;
        const t = performance.now();
        const out = fn.apply(this, args);
        const t1 = performance.now();
        c[key] += t1 - t;
        c[`${key}Calls`]++;
        if (key === 'read') out.then(() => { c.readSettle += performance.now() - t1; }, () => {});
        return out;
      },
    });
  }
}
// Calls into the polyfill's WebNN interfaces (methods and attribute getters of ML,
// MLContext, MLGraphBuilder, MLGraph, MLTensor, MLOperand) on the stand-in page: none
// may happen while ORT works on the stand-in. The engine's own calls are counted apart:
// the polyfill's background work (its FinalizationRegistry releasing what an earlier
// polyfill session left) may run in a task hop of a stand-in create or run; its ms is
// reported, not hidden.
let polyfillApiCalls = 0;
function countPolyfillApiCalls() {
  for (const cls of [ML, MLContext, MLGraphBuilder, MLGraph, MLTensor, MLOperand]) {
    const p = cls.prototype;
    for (const name of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, name);
      if (name === 'constructor') continue;
      if (typeof d.value === 'function') {
        const fn = d.value;
        Object.defineProperty(p, name, { ...d, value: function (...args) { polyfillApiCalls++; return fn.apply(this, args); } });
      } else if (typeof d.get === 'function') {
        const get = d.get;
        Object.defineProperty(p, name, { ...d, get() { polyfillApiCalls++; return get.call(this); } });
      }
    }
  }
}
const polyfillUse = () => ({ api: polyfillApiCalls, engineCalls: webnnPolyfill.engineStats.engine.calls,
                             engineMs: webnnPolyfill.engineStats.engine.ms });
function addPolyfillUse(into, before) {
  const now = polyfillUse();
  for (const k of Object.keys(now)) into[k] = (into[k] ?? 0) + now[k] - before[k];
}

const freshCallMs = () => ({ write: 0, dispatch: 0, read: 0, createTensor: 0, writeCalls: 0, dispatchCalls: 0, readCalls: 0,
                             createTensorCalls: 0, readSettle: 0 });

// One session each on ORT's wasm EP (1 thread: this page's ORT), the WebNN EP on the
// polyfill and the WebNN EP on the stand-in, run in interleaved rounds (one
// session.run of each per round, the order rotating): warm-up rounds (>= 3, and
// `warmup` seconds), then `runs` timed rounds. Per run on the stand-in: what ORT
// called (writes, dispatches, reads, task hops); on the polyfill: ms inside its
// write / dispatch / read calls.
async function runStandinRuns(m, bytes, opts, wasmOpts, runs, warmup, r) {
  const sessions = {
    wasm: await ort.InferenceSession.create(bytes, wasmOpts),
    polyfill: await ort.InferenceSession.create(bytes, opts),
  };
  // ORT shares one MLContext among live sessions whose context options are equal: other
  // options (the stand-in ignores them) keep the stand-in session off the polyfill's context.
  const standinOpts = { ...opts, executionProviders: [{ ...opts.executionProviders[0], powerPreference: 'low-power' }] };
  r.runStandinCreate = await webnnStandin.withStandin(async () => {
    sessions.standin = await ort.InferenceSession.create(bytes, standinOpts);
  });
  const engines = Object.keys(sessions);
  try {
    const feeds = {};
    m.inputs.forEach(([name, shape], i) => {
      feeds[name] = new ort.Tensor('float32', input(shape.reduce((a, b) => a * b, 1), 12345 + i), shape);
    });
    const out = r.run = { runsMs: {}, medianMs: {}, minMs: {}, outputs: {}, warmupRounds: 0 };
    let calls = null;      // the polyfill's calls, per timed run
    let standinRuns = null;  // the stand-in's runStats, per timed run
    out.standinPolyfillUse = {};  // during the timed stand-in runs (polyfillUse)
    const one = async (e, timed) => {
      polyfillCalls.on = timed && e === 'polyfill';
      polyfillCalls.current = freshCallMs();
      const use0 = polyfillUse();
      webnnStandin.resetRunStats();
      const t = performance.now();
      const res = await sessions[e].run(feeds);
      const ms = performance.now() - t;
      polyfillCalls.on = false;
      if (timed && e === 'standin') addPolyfillUse(out.standinPolyfillUse, use0);
      if (timed) {
        out.runsMs[e].push(ms);
        if (e === 'polyfill') calls.push(polyfillCalls.current);
        if (e === 'standin') standinRuns.push(webnnStandin.runStats());
      }
      return res;
    };
    for (const e of engines) {  // the first run of each, and the output shapes
      const res = await one(e, false);
      out.outputs[e] = Object.fromEntries(Object.entries(res).map(([k, v]) => [k, { dims: [...v.dims], length: v.data.length }]));
    }
    const warmUntil = performance.now() + warmup * 1000;
    while (out.warmupRounds < 3 || performance.now() < warmUntil) {
      for (const e of engines) await one(e, false);
      out.warmupRounds++;
    }
    engines.forEach((e) => { out.runsMs[e] = []; });
    calls = [];
    standinRuns = [];
    for (let i = 0; i < runs; i++) {
      for (let j = 0; j < engines.length; j++) await one(engines[(i + j) % engines.length], true);
    }
    const perRun = (list) => Object.fromEntries(Object.keys(list[0]).map((k) => [k, median(list.map((c) => c[k]))]));
    out.standinPerRun = perRun(standinRuns);  // medians over the timed runs
    out.polyfillCallsPerRun = perRun(calls);
    for (const e of engines) {
      out.medianMs[e] = median(out.runsMs[e]);
      out.minMs[e] = Math.min(...out.runsMs[e]);
    }
  } finally {
    for (const s of Object.values(sessions)) await s.release();
  }
}

// Before each timed create on the stand-in page: collect garbage and give the
// polyfill's FinalizationRegistry releases (queued after a collection) their tasks,
// so that what one create left is not released inside the next one's timing (a
// stand-in create's task hops would give it a place to run: ~10 ms per SqueezeNet
// create in a loaded run). gc() needs Chromium's --js-flags=--expose-gc (bench_ort.py
// STANDIN_ARGS); without it, nothing. ORT keeps the last WebNN session's MLContext
// (its `currentContext`) until the next WebNN create replaces it, so after each create
// on the polyfill runStandin makes an untimed one on the stand-in (`letGo`).
async function settleHeap() {
  if (typeof gc !== 'function') return;
  gc();
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

// ORT's create on the polyfill and on the stand-in, interleaved `createRuns` times
// per model after one untimed create that records the stand-in's tape; then
// (runs > 0) session.run on each (runStandinRuns).
async function runStandin(models, createRuns, runs = 0, warmup = 0) {
  const ep = { name: 'webnn', deviceType: 'cpu' };
  const opts = { executionProviders: [ep], graphOptimizationLevel: 'all' };
  const out = { ep: EP, threads: 1, crossOriginIsolated: self.crossOriginIsolated, engineStartMs: window.engineStartMs,
                hardwareConcurrency: navigator.hardwareConcurrency, ortVersion: ort.env.versions?.web, models: {} };
  const wasmOpts = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  out.heapSettled = typeof gc === 'function';
  const create = async (bytes, o = opts) => {
    await settleHeap();
    const t = performance.now();
    const s = await ort.InferenceSession.create(bytes, o);
    const ms = performance.now() - t;
    await s.release();
    return ms;
  };
  // ORT compiles and instantiates its wasm on the first session: not part of any model's create time.
  await create(await modelBytes(models[0].file), wasmOpts);
  for (const m of models) {
    const r = out.models[m.name] = { wasmCreateMs: [], polyfillCreateMs: [], standinCreateMs: [], standinPolyfillUse: {} };
    try {
      const bytes = await modelBytes(m.file);
      // The first create of each: the polyfill's records the stand-in's tape.
      let ms;
      r.tapeLength = await webnnStandin.recordTape(async () => { ms = await create(bytes); });
      r.tape = webnnStandin.tape();
      // An untimed create on the stand-in: ORT lets go of the polyfill's context it held since
      // the create on the polyfill, so it is collected before the next timed create (settleHeap).
      const letGo = () => webnnStandin.withStandin(() => create(bytes));
      await letGo();
      r.firstCreateMs = { polyfill: ms, wasm: await create(bytes, wasmOpts) };
      await webnnStandin.withStandin(async () => { r.firstCreateMs.standin = await create(bytes); });
      for (let i = 0; i < createRuns; i++) {  // the three interleaved, same page, ORT on 1 thread
        r.wasmCreateMs.push(await create(bytes, wasmOpts));
        r.polyfillCreateMs.push(await create(bytes));
        await letGo();
        const use0 = polyfillUse();
        r.standin = await webnnStandin.withStandin(async () => { ms = await create(bytes); });
        addPolyfillUse(r.standinPolyfillUse, use0);  // api 0: the stand-in never reaches the polyfill
        r.standinCreateMs.push(ms);
      }
      r.wasmMedianMs = median(r.wasmCreateMs);
      r.polyfillMedianMs = median(r.polyfillCreateMs);
      r.standinMedianMs = median(r.standinCreateMs);
      if (runs > 0) {
        try {
          await runStandinRuns(m, bytes, opts, wasmOpts, runs, warmup, r);
        } catch (e) {  // the create measurement above still stands
          r.run = { error: errorText(e) };
        }
      }
    } catch (e) {
      r.error = errorText(e);
    }
  }
  return out;
}

// The first create of a model in a fresh page: `warm` (a small model) is created
// untimed first on this page's EP (ORT compiles its wasm and sets its EP up, as
// the bench pages' warm-up session does), then `m` once, timed. `setup`
// (ep=standinalone): the limits and builder method names, the tape of `warm`
// (warmTape) and of `m` (tape).
async function runFirst(m, warm, setup) {
  if (EP === 'standinalone') webnnStandin.installAlone({ ...setup, tape: setup.warmTape });
  const out = { ep: EP, crossOriginIsolated: self.crossOriginIsolated, engineStartMs: window.engineStartMs, models: {} };
  const r = out.models[m.name] = {};
  try {
    const ep = EP === 'wasm' ? 'wasm' : { name: 'webnn', deviceType: 'cpu' };
    const opts = { executionProviders: [ep], graphOptimizationLevel: 'all' };
    const warmBytes = await modelBytes(warm.file);
    const bytes = await modelBytes(m.file);
    let session;
    const create = async (b) => {
      const t = performance.now();
      session = await ort.InferenceSession.create(b, opts);
      return performance.now() - t;
    };
    if (EP === 'standinalone') {
      r.warm = await webnnStandin.withStandin(() => create(warmBytes));
      await session.release();
      webnnStandin.useTape(setup.tape);
      r.standin = await webnnStandin.withStandin(async () => { r.createMs = await create(bytes); });
    } else {
      await create(warmBytes);
      await session.release();
      r.createMs = await create(bytes);
    }
    await session.release();
  } catch (e) {
    r.error = errorText(e);
  }
  return out;
}

window.runBench = async (models, runs, budget, warmup = 0, createRuns = 5) => {
  await window.ready;
  if (EP === 'standin') {
    const out = await runStandin(models, createRuns, runs, warmup);
    out.limits = webnnStandin.limits();
    out.builderMethods = webnnStandin.builderMethods;
    return out;
  }
  const out = { ep: EP, threads: EP === 'webnn' ? 1 : THREADS, crossOriginIsolated: self.crossOriginIsolated,
                hardwareConcurrency: navigator.hardwareConcurrency, ortVersion: ort.env.versions?.web,
                engineStartMs: window.engineStartMs, models: {},
                polyfillThreads: self.webnnPolyfill ? { ...webnnPolyfill.engineStats.threads } : null };
  // ORT compiles and instantiates its wasm on the first session: not part of any model's create time.
  const warm = await ort.InferenceSession.create(
    await modelBytes(models[0].file),
    { executionProviders: [EP === 'webnn' ? { name: 'webnn', deviceType: 'cpu' } : 'wasm'] });
  await warm.release();
  for (const m of models) {
    const r = out.models[m.name] = {};
    try {
      const bytes = await modelBytes(m.file);
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
      // every output whole: the driver compares the WebNN EP's with ORT's wasm EP's (a mismatch fails the run)
      r.outputs = {};
      for (const name of session.outputNames) {
        r.outputs[name] = { dims: Array.from(res[name].dims, Number), data: Array.from(res[name].data, Number) };
      }
      await session.release();
    } catch (e) {
      r.error = errorText(e);
    }
  }
  return out;
};

// layout=ab: per model one WebNN EP session per reported preferredInputLayout (`layouts`) and one on ORT's
// wasm EP (the reference), all in this page; warm-up rounds, then `rounds` rounds of one session.run each,
// interleaved (the order reversed every other round): per engine the run times and the first run's outputs.
window.runLayoutAB = async (models, rounds, warmup, layouts) => {
  await window.ready;
  const out = { layouts, models: {}, ortVersion: ort.env.versions?.web, polyfillLayout: window.polyfillLayout, polyfillThreads: { ...webnnPolyfill.engineStats.threads } };
  for (const m of models) {
    const r = out.models[m.name] = { runsMs: {}, outputs: {}, createMs: {} };
    const sessions = {};
    try {
      const bytes = await modelBytes(m.file);
      const feeds = {};
      m.inputs.forEach(([name, shape], i) => {
        feeds[name] = new ort.Tensor('float32', input(shape.reduce((a, b) => a * b, 1), 12345 + i), shape);
      });
      for (const engine of [...layouts, 'wasm']) {
        window.reportedLayout = engine;
        const t = performance.now();
        sessions[engine] = await ort.InferenceSession.create(bytes, {
          executionProviders: [engine === 'wasm' ? 'wasm' : { name: 'webnn', deviceType: 'cpu' }], graphOptimizationLevel: 'all' });
        r.createMs[engine] = performance.now() - t;
        const res = await sessions[engine].run(feeds);
        r.outputs[engine] = {};
        for (const name of sessions[engine].outputNames) {
          r.outputs[engine][name] = { dims: Array.from(res[name].dims, Number), data: Array.from(res[name].data, Number) };
        }
        r.runsMs[engine] = [];
      }
      const engines = Object.keys(sessions);
      const until = performance.now() + warmup * 1000;
      for (let w = 0; w < 3 || performance.now() < until; w++) {
        for (const e of engines) await sessions[e].run(feeds);
      }
      for (let i = 0; i < rounds; i++) {
        for (const e of (i % 2 ? [...engines].reverse() : engines)) {
          const t = performance.now();
          await sessions[e].run(feeds);
          r.runsMs[e].push(performance.now() - t);
        }
      }
    } catch (e) {
      r.error = errorText(e);
    } finally {
      for (const s of Object.values(sessions)) await s.release();
    }
  }
  return out;
};
