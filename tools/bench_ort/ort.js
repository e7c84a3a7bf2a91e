// ORT-web benchmark page (driven by tools/bench_ort.py). One configuration per
// page load, because ORT reads its thread count once:
//   ?ep=wasm&threads=N    ORT's own wasm EP (MLAS) on N threads
//   ?ep=webnn             ORT's WebNN EP (deviceType cpu) on navigator.ml = the polyfill
//   &pthreads=N           ... with the polyfill's kernels on N threads (its `threads` config;
//                         default navigator.hardwareConcurrency)
// window.runBench(models, runs, budgetSeconds, warmupSeconds) -> {models: {name: {createMs, firstMs, runsMs,
// medianMs, minMs, warmupRuns, output: first values, checksum}}, crossOriginIsolated, hardwareConcurrency}.
'use strict';
const params = new URLSearchParams(location.search);
const EP = params.get('ep') || 'wasm';
const THREADS = Number(params.get('threads') || 1);
const POLYFILL_THREADS = Number(params.get('pthreads')) || null;

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

// Where the WebNN EP's session create goes: time spent inside the builder's
// constant() calls, its op calls and build() (until its promise settles), summed
// per model. Wraps the bench page's own MLGraphBuilder.prototype (measurement only).
const builderMs = { constant: 0, ops: 0, build: 0, constants: 0, opCalls: 0 };
function timeBuilderCalls() {
  const proto = MLGraphBuilder.prototype;
  for (const name of Object.getOwnPropertyNames(proto)) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (name === 'constructor' || typeof d.value !== 'function') continue;
    const fn = d.value;
    const wrapped = name === 'build'
      ? async function (...args) { const t = performance.now(); try { return await fn.apply(this, args); } finally { builderMs.build += performance.now() - t; } }
      : function (...args) {
        const t = performance.now();
        try { return fn.apply(this, args); } finally {
          const dt = performance.now() - t;
          if (name === 'constant' || name === 'input') { builderMs.constant += dt; builderMs.constants++; } else { builderMs.ops += dt; builderMs.opCalls++; }
        }
      };
    Object.defineProperty(proto, name, { ...d, value: wrapped });
  }
  // And the context's calls (opSupportLimits, createTensor, ...), by name.
  const cproto = MLContext.prototype;
  for (const name of Object.getOwnPropertyNames(cproto)) {
    const d = Object.getOwnPropertyDescriptor(cproto, name);
    if (name === 'constructor' || typeof d.value !== 'function') continue;
    const fn = d.value;
    Object.defineProperty(cproto, name, { ...d, value: function (...args) {
      const t = performance.now();
      const add = () => { const e = contextMs[name] ??= { ms: 0, calls: 0 }; e.ms += performance.now() - t; e.calls++; };
      let out;
      try { out = fn.apply(this, args); } catch (e) { add(); throw e; }
      if (out && typeof out.then === 'function') return out.finally(add);
      add();
      return out;
    } });
  }
}
let contextMs = {};

const median = (v) => { const s = [...v].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };

window.ready = (async () => {
  if (EP === 'webnn' || EP === 'polyfill') {  // ep=polyfill: only the polyfill (tools/profile_build.py)
    // The polyfill first, then ORT: the WebNN EP finds navigator.ml. Start its engine
    // before any timing (the first createContext() boots Pyodide).
    self.WEBNN_POLYFILL_CONFIG = { threads: POLYFILL_THREADS };
    await loadScript('/dist/webnn-polyfill.js');
    const t0 = performance.now();
    await navigator.ml.createContext({ deviceType: 'cpu' });
    window.engineStartMs = performance.now() - t0;
    if (EP === 'polyfill') return;
    timeBuilderCalls();
  }
  await loadScript('/ortdist/ort.min.js');
  ort.env.wasm.wasmPaths = '/ortdist/';
  ort.env.wasm.numThreads = EP === 'webnn' ? 1 : THREADS;
  ort.env.logLevel = 'error';
})();

window.runBench = async (models, runs, budget, warmup = 0) => {
  await window.ready;
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
      contextMs = {};
      let t = performance.now();
      const session = await ort.InferenceSession.create(bytes, { executionProviders: [ep], graphOptimizationLevel: 'all' });
      r.createMs = performance.now() - t;
      if (EP === 'webnn') r.builder = { ...builderMs, context: structuredClone(contextMs) };
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
      const start = performance.now();
      while (r.runsMs.length < runs && (r.runsMs.length < 3 || performance.now() - start < budget * 1000)) {
        t = performance.now();
        res = await session.run(feeds);
        r.runsMs.push(performance.now() - t);
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
