// Page-side checks of issue 15's defects (tests/browser/test_reliability.py runs
// each by name). Every check returns plain data the test compares with what
// the spec says; none of them compares the polyfill with itself.
const F32 = 'float32';
const errName = (e) => (e && e.name) || String(e);
const errInfo = (e) => ({ name: errName(e), message: e && e.message });

async function outcome(fn) {
  try {
    const value = await fn();
    return { ok: value === undefined ? null : value };
  } catch (e) {
    return { error: errName(e), message: e && e.message };
  }
}

function heapBytes() {
  return webnnPolyfill.pyodide()._module.HEAPU8.length;
}

async function addGraph(ctx, inNames, outNames) {
  // out_k = in_0 + ... + in_n + k  (one add chain per output)
  const b = new MLGraphBuilder(ctx);
  const ins = inNames.map((n) => b.input(n, { dataType: F32, shape: [2] }));
  const sum = ins.slice(1).reduce((a, x) => b.add(a, x), ins[0]);
  const outs = {};
  outNames.forEach((n, k) => {
    Object.defineProperty(outs, n, {
      value: b.add(sum, b.constant({ dataType: F32, shape: [2] }, new Float32Array([k, k]))),
      enumerable: true, configurable: true, writable: true,
    });
  });
  return b.build(outs);
}

const CHECKS = {
  // #1: destroyed graphs / contexts give their memory back at once.
  async memoryCycles({ cycles, mib }) {
    const ctx = await navigator.ml.createContext();
    const elements = (mib * 1024 * 1024) / 4;
    const data = new Float32Array(elements).fill(1);
    const run = async (destroyContext) => {
      const c = destroyContext ? await navigator.ml.createContext() : ctx;
      const b = new MLGraphBuilder(c);
      const x = b.input('x', { dataType: F32, shape: [elements] });
      const g = await b.build({ y: b.add(x, b.constant({ dataType: F32, shape: [elements] }, data)) });
      const t = await c.createTensor({ dataType: F32, shape: [elements], readable: true, writable: true });
      if (destroyContext) c.destroy();
      else { g.destroy(); t.destroy(); }
    };
    await run(false);  // warm: the engine's own first allocations
    const start = heapBytes();
    for (let i = 0; i < cycles; i++) await run(false);
    const afterGraphs = heapBytes();
    for (let i = 0; i < cycles; i++) await run(true);
    return { start, growthGraphs: afterGraphs - start, growthContexts: heapBytes() - start };
  },

  // #3: any name the IDL allows round-trips, tags and __proto__ included.
  async bridgeNames() {
    const names = ['$o', '$n', '$i', '$r', '__proto__', 'constructor', 'toString', 'x'];
    const ctx = await navigator.ml.createContext();
    const g = await addGraph(ctx, names, names);
    const record = (make) => {
      const r = {};
      for (const n of names) Object.defineProperty(r, n, { value: make(n), enumerable: true, configurable: true, writable: true });
      return r;
    };
    const ins = {}; const outs = {};
    for (let i = 0; i < names.length; i++) {
      ins[i] = await ctx.createTensor({ dataType: F32, shape: [2], writable: true });
      ctx.writeTensor(ins[i], new Float32Array([i, 1]));
      outs[i] = await ctx.createTensor({ dataType: F32, shape: [2], readable: true });
    }
    ctx.dispatch(g, record((n) => ins[names.indexOf(n)]), record((n) => outs[names.indexOf(n)]));
    const dispatched = [];
    for (let i = 0; i < names.length; i++) dispatched.push(Array.from(new Float32Array(await ctx.readTensor(outs[i]))));
    const r = await ctx.compute(g, record((n) => new Float32Array([names.indexOf(n), 1])), record(() => new Float32Array(2)));
    const computed = names.map((n) => Object.prototype.hasOwnProperty.call(r.outputs, n) && Array.from(r.outputs[n]));
    // A tag-looking label comes back as text, and no message shows an address.
    const b = new MLGraphBuilder(ctx);
    const x = b.input('x', { dataType: F32, shape: [2] });
    let labelMessage = null;
    try { b.softmax(x, 7, { label: '{"$o": 1}' }); } catch (e) { labelMessage = e.message; }
    return { names, dispatched, computed, labelMessage };
  },

  // #4: readable / writable are enforced.
  async readableWritable() {
    const ctx = await navigator.ml.createContext();
    const plain = await ctx.createTensor({ dataType: F32, shape: [2] });
    return {
      read: await outcome(() => ctx.readTensor(plain)),
      readByob: await outcome(() => ctx.readTensor(plain, new Float32Array(2))),
      write: await outcome(() => ctx.writeTensor(plain, new Float32Array(2))),
    };
  },

  // #5: sizes checked before copying; no Python text in any message.
  async allocationErrors() {
    const ctx = await navigator.ml.createContext();
    const b = new MLGraphBuilder(ctx);
    const big = 2.5 * 2 ** 30;  // lazily zeroed: never touched unless copied
    const t0 = performance.now();
    const constant = await outcome(() => b.constant({ dataType: 'uint8', shape: [big] }, new Uint8Array(big)));
    const constantMs = performance.now() - t0;
    const mismatch = await outcome(() => b.constant({ dataType: F32, shape: [2] }, new Uint8Array(12)));
    return { constant, constantMs, mismatch };
  },

  // #9: destroyed tensors are TypeErrors; a pending read still rejects.
  async destroyedTensors() {
    const ctx = await navigator.ml.createContext();
    const t = await ctx.createTensor({ dataType: F32, shape: [2], readable: true, writable: true });
    const pending = ctx.readTensor(t).then(() => 'resolved', errName);
    t.destroy();
    return {
      pending: await pending,
      read: await outcome(() => ctx.readTensor(t)),
      write: await outcome(() => ctx.writeTensor(t, new Float32Array(2))),
    };
  },

  // #9: BigInt objects are TypeErrors for double, float and unsigned long.
  async bigintObjects() {
    const ctx = await navigator.ml.createContext();
    const b = new MLGraphBuilder(ctx);
    const x = b.input('x', { dataType: F32, shape: [2, 2] });
    const values = { object: Object(1n), valueOf: { valueOf: () => 1n } };
    const out = {};
    for (const [k, v] of Object.entries(values)) {
      out[k] = {
        double: (await outcome(() => { b.elu(x, { alpha: v }); })).error || 'no error',
        floatSeq: (await outcome(() => { b.resample2d(x, { scales: [v, 1], axes: [0, 1] }); })).error || 'no error',
        unsignedLong: (await outcome(() => { b.cumulativeSum(x, v); })).error || 'no error',
        enforceRange: (await outcome(() => { b.input(`y${k}`, { dataType: F32, shape: [v] }); })).error || 'no error',
      };
    }
    out.plainNumberStillWorks = (await outcome(() => { b.cumulativeSum(x, { valueOf: () => 1 }); })).error || 'no error';
    return out;
  },

  // Issue 33 #2: input() accepts a name the builder already has (as Chromium does and
  // WPT's validateSingleInputOperation needs); build() throws a TypeError naming it when
  // the outputs depend on two inputs of that name. Inputs the outputs do not use don't count.
  async duplicateInputNames() {
    const ctx = await navigator.ml.createContext();
    const b = new MLGraphBuilder(ctx);
    const shapes = [[], [2], [2, 3], [2, 3, 4]];
    const wptPattern = await outcome(() => shapes.map((shape) => {  // WPT's helper, one builder
      const y = b.relu(b.input('input', { dataType: F32, shape }));
      return [y.dataType, Array.from(y.shape)];
    }));
    const x1 = b.input('x', { dataType: F32, shape: [2] });
    const x2 = b.input('x', { dataType: F32, shape: [2] });
    const both = await outcome(() => b.build({ y: b.add(x1, x2) }));
    const twoOutputs = await outcome(() => b.build({ y1: b.relu(x1), y2: b.relu(x2) }));
    b.relu(b.input('x', { dataType: F32, shape: [4] }));  // reaches no output
    const graph = await b.build({ y: b.relu(x1) });
    const r = await ctx.compute(graph, { x: new Float32Array([-1, 2]) }, { y: new Float32Array(2) });
    return {
      wptPattern: wptPattern.error ? `${wptPattern.error}: ${wptPattern.message}` : wptPattern.ok,
      both: both.error, bothMessage: both.message, twoOutputs: twoOutputs.error,
      twoOutputsMessage: twoOutputs.message, y: Array.from(r.outputs.y),
    };
  },

  // #9: compute() with a SharedArrayBuffer view fails first, touching nothing.
  async computeShared() {
    // WebKitGTK has no SharedArrayBuffer even when cross-origin isolated (README "Browsers").
    if (typeof SharedArrayBuffer === 'undefined') return { skipped: 'this engine has no SharedArrayBuffer' };
    const ctx = await navigator.ml.createContext();
    const g = await addGraph(ctx, ['a'], ['y']);
    const input = new Float32Array([1, 2]);
    const shared = new Float32Array(new SharedArrayBuffer(8));
    shared.set([5, 5]);
    const other = new Float32Array([9, 9]);
    const r1 = await outcome(() => ctx.compute(g, { a: input }, { y: shared }));
    const output = new Float32Array([7, 7]);
    const sharedIn = new Float32Array(new SharedArrayBuffer(8));
    const r2 = await outcome(() => ctx.compute(g, { a: sharedIn }, { y: output }));
    return {
      r1: r1.error || 'no error', r2: r2.error || 'no error',
      inputIntact: input.byteLength === 8, sharedUnwritten: Array.from(shared), outputUnwritten: Array.from(output),
      outputIntact: output.byteLength === 8, otherIntact: other.byteLength === 8,
    };
  },

  // #9: the page replacing JSON and adding toJSON does not break the polyfill.
  async replacedIntrinsics() {
    const saved = { stringify: JSON.stringify, parse: JSON.parse };
    JSON.stringify = () => { throw new Error('page stringify'); };
    JSON.parse = () => { throw new Error('page parse'); };
    Object.prototype.toJSON = function () { return 'hijacked'; };
    Array.prototype.toJSON = function () { return 'hijacked'; };
    try {
      const ctx = await navigator.ml.createContext();
      const g = await addGraph(ctx, ['a', 'b'], ['y']);
      const r = await ctx.compute(g, { a: new Float32Array([1, 2]), b: new Float32Array([3, 4]) }, { y: new Float32Array(2) });
      const limits = ctx.opSupportLimits();
      return { y: Array.from(r.outputs.y), limits: typeof limits.maxTensorByteLength };
    } finally {
      JSON.stringify = saved.stringify;
      JSON.parse = saved.parse;
      delete Object.prototype.toJSON;
      delete Array.prototype.toJSON;
    }
  },

  // engineStats.engine counts the general bridge calls (not the hot write/dispatch/read)
  // with the polyfill's saved clock: a page replacing performance.now is never called.
  async engineCalls() {
    const stats = webnnPolyfill.engineStats;
    const before = { ...stats.engine };
    const savedNow = performance.now;
    let pageClockCalls = 0;
    performance.now = () => { pageClockCalls++; return 0; };
    try {
      const ctx = await navigator.ml.createContext();
      const b = new MLGraphBuilder(ctx);
      const g = await b.build({ y: b.relu(b.input('x', { dataType: F32, shape: [2] })) });
      const built = { ...stats.engine };
      const x = await ctx.createTensor({ dataType: F32, shape: [2], writable: true });
      const y = await ctx.createTensor({ dataType: F32, shape: [2], readable: true });
      const tensorsMade = { ...stats.engine };
      ctx.writeTensor(x, new Float32Array([-1, 2]));
      ctx.dispatch(g, { x }, { y });
      const out = Array.from(new Float32Array(await ctx.readTensor(y)));
      return { built: built.calls - before.calls, tensors: tensorsMade.calls - built.calls,
               hot: stats.engine.calls - tensorsMade.calls, msGrew: built.ms > before.ms, out, pageClockCalls };
    } finally {
      performance.now = savedNow;
    }
  },

  // The engine's start-up objects are frozen out of the cyclic collector's generations:
  // a full collection then traverses only what was made since (bridge.freeze_startup_objects).
  async collectorScope() {
    await navigator.ml.createContext();
    const py = webnnPolyfill.pyodide();
    return py.runPython(`
import gc, time
frozen = gc.get_freeze_count()
t = time.perf_counter(); gc.collect(); full_ms = (time.perf_counter() - t) * 1e3
[frozen, len(gc.get_objects()), full_ms]`).toJs();
  },

  // #10: resample2d as the ED computes it (the test has the expected indices).
  async resample({ inSize, outSize, values }) {
    const ctx = await navigator.ml.createContext();
    const b = new MLGraphBuilder(ctx);
    const x = b.input('x', { dataType: F32, shape: [1, 1, 1, inSize] });
    const g = await b.build({ y: b.resample2d(x, { sizes: [1, outSize] }) });
    const r = await ctx.compute(g, { x: new Float32Array(values) }, { y: new Float32Array(outSize) });
    return Array.from(r.outputs.y);
  },

  // #17: a read settles in an unclamped task: before a zero-delay timer that a
  // deeply nested timer chain queued just before the read.
  async settleOrder() {
    const ctx = await navigator.ml.createContext();
    const t = await ctx.createTensor({ dataType: F32, shape: [1], readable: true });
    const nested = (depth) => new Promise((resolve) => {
      const step = (n) => (n === 0 ? resolve() : setTimeout(() => step(n - 1), 0));
      step(depth);
    });
    await nested(1);
    const order = [];
    await new Promise((done) => {
      // Timers nested deeper than 5 (HTML, Chromium, Firefox) or 10 (WebKit: measured
      // 0 ms up to the 10th level, 4.1 ms from the 11th) are clamped to >= 4 ms.
      let n = 14;
      const step = () => {
        if (--n > 0) { setTimeout(step, 0); return; }
        setTimeout(() => { order.push('timer'); if (order.length === 2) done(); }, 0);
        ctx.readTensor(t).then(() => { order.push('read'); if (order.length === 2) done(); });
      };
      setTimeout(step, 0);
    });
    // And reads still settle in call order.
    const seq = [];
    await Promise.all([0, 1, 2, 3].map((i) => ctx.readTensor(t).then(() => seq.push(i))));
    return { order, seq };
  },

  // #17 item 1: createTensor() and build() resolve in a task the timeline queues, like
  // readTensor(): after the microtasks queued with them, and after a read issued before them.
  async timelineSettles() {
    const ctx = await navigator.ml.createContext();
    const t = await ctx.createTensor({ dataType: F32, shape: [1], readable: true });
    const b = new MLGraphBuilder(ctx);
    const y = b.relu(b.input('x', { dataType: F32, shape: [1] }));
    const order = [];
    const microtasks = (name, depth) => {
      let p = Promise.resolve();
      for (let i = 0; i < depth; i++) p = p.then(() => {});
      return p.then(() => order.push(name));
    };
    await Promise.all([
      ctx.readTensor(t).then(() => order.push('read')),
      ctx.createTensor({ dataType: F32, shape: [2] }).then(() => order.push('createTensor')),
      b.build({ y }).then(() => order.push('build')),
      microtasks('microtasks', 50),
    ]);
    return order;
  },
};

// #2: with the wasm heap past 2 GiB, every transfer is still right (and a
// tensor written before stays right).
CHECKS.bigHeap = async function bigHeap() {
  const ctx = await navigator.ml.createContext();
  const pattern = (n, k) => {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) a[i] = ((i * 7 + k) % 251) - 125;
    return a;
  };
  const early = await ctx.createTensor({ dataType: F32, shape: [16], readable: true, writable: true });
  ctx.writeTensor(early, pattern(16, 3));
  const hogs = [];
  while (heapBytes() <= 2 ** 31 + 2 ** 28 && hogs.length < 4) {
    hogs.push(await ctx.createTensor({ dataType: F32, shape: [2 ** 28], readable: true }));  // 1 GiB each
  }
  const out = { heapGiB: heapBytes() / 2 ** 30 };
  const sample = (a, step) => Array.from({ length: Math.floor(a.length / step) }, (_, i) => a[i * step]);
  // 16 MiB written and read back (new buffer and BYOB).
  const n16 = 2 ** 22;
  const t16 = await ctx.createTensor({ dataType: F32, shape: [n16], readable: true, writable: true });
  const p16 = pattern(n16, 1);
  ctx.writeTensor(t16, p16);
  const back = new Float32Array(await ctx.readTensor(t16));
  const byob = new Float32Array(n16);
  await ctx.readTensor(t16, byob);
  out.write16 = back.length === n16 && back.every((v, i) => v === p16[i]) && byob.every((v, i) => v === p16[i]);
  // A 128 MiB dispatch output.
  const n128 = 2 ** 25;
  const b = new MLGraphBuilder(ctx);
  const x = b.input('x', { dataType: F32, shape: [n128] });
  const g = await b.build({ y: b.add(x, b.constant({ dataType: F32, shape: [1] }, new Float32Array([1]))) });
  const tx = await ctx.createTensor({ dataType: F32, shape: [n128], writable: true });
  const ty = await ctx.createTensor({ dataType: F32, shape: [n128], readable: true });
  const px = pattern(n128, 5);
  ctx.writeTensor(tx, px);
  ctx.dispatch(g, { x: tx }, { y: ty });
  const y = new Float32Array(await ctx.readTensor(ty));
  out.dispatch128 = y.length === n128 && sample(y, 4099).every((v, i) => v === px[i * 4099] + 1) && y[n128 - 1] === px[n128 - 1] + 1;
  out.early = Array.from(new Float32Array(await ctx.readTensor(early))).join() === Array.from(pattern(16, 3)).join();
  // Long non-ASCII text both ways: a label in an error, names of inputs and outputs.
  const label = '\u00e9\u4e2d\u{1F600}'.repeat(20000);
  try { new MLGraphBuilder(ctx).softmax(new MLGraphBuilder(ctx).input('z', { dataType: F32, shape: [2] }), 7, { label }); } catch (e) {
    out.labelKept = e.name === 'TypeError' && e.message.includes(label);
  }
  const nb = new MLGraphBuilder(ctx);
  const inName = '\u00f1\u00e4m\u00e9-' + '\u4e2d'.repeat(5000);
  const ng = await nb.build({ ['\u00fc' + inName]: nb.relu(nb.input(inName, { dataType: F32, shape: [2] })) });
  const r = await ctx.compute(ng, { [inName]: new Float32Array([-1, 3]) }, { ['\u00fc' + inName]: new Float32Array(2) });
  out.names = Array.from(r.outputs['\u00fc' + inName]).join() === '0,3';
  for (const t of [...hogs, t16, tx, ty, early]) t.destroy();
  g.destroy();
  out.heapAfterGiB = heapBytes() / 2 ** 30;
  return out;
};


// Issue 33 #3: with the wasm heap past 2 GiB, an op given a label of 24M code points
// (ASCII, BMP, astral) that fails validation throws its labelled TypeError, the label
// intact; never Python's text (Pyodide's string conversion used to fail with
// "PythonError: pyodide.ffi.JsException: RangeError: Invalid array length").
CHECKS.hugeLabels = async function hugeLabels({ codePoints }) {
  const ctx = await navigator.ml.createContext();
  const hogs = [];
  while (heapBytes() <= 2 ** 31 + 2 ** 28 && hogs.length < 4) {
    hogs.push(await ctx.createTensor({ dataType: F32, shape: [2 ** 28], readable: true }));  // 1 GiB each
  }
  const out = { heapGiB: heapBytes() / 2 ** 30 };
  const b = new MLGraphBuilder(ctx);
  const x = b.input('x', { dataType: F32, shape: [2] });
  for (const [kind, unit] of [['ascii', 'a'], ['bmp', '\u4e2d'], ['astral', '\u{1F600}']]) {
    let label = unit.repeat(codePoints);
    const r = await outcome(() => { b.softmax(x, 7, { label }); });
    out[kind] = {
      error: r.error || 'no error',
      labelled: typeof r.message === 'string' && r.message.startsWith(`[${label}] `),
      head: typeof r.message === 'string' ? r.message.slice(0, 200) : null,
    };
    label = null;
  }
  for (const t of hogs) t.destroy();
  return out;
};

window.runCheck = (name, args) => CHECKS[name](args || {});
