// The page side of the fuzz suite (driven by tests/fuzz/runner.py): seeded
// campaigns run as a hostile page would. Each returns counts and failures;
// every failure carries a reproducer (the call as JS text, or the sequence).
'use strict';

// Python internals a page must never see.
const PYTHON_TEXT = /Traceback|File "|\.py\b|webnn_core|0x[0-9a-f]{6,}|<[a-z_.]+ object|\b(KeyError|ValueError|AttributeError|IndexError|SystemError|MemoryError|ZeroDivisionError|OverflowError|AssertionError|RecursionError|JsException|PythonError)\b/;
const HANG_MS = 15000;

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(Object.assign(new Error(`hang: ${what}`), { hang: true })), ms); }),
  ]);
}

// An outcome is acceptable when it is a value, a TypeError or a DOMException
// without Python text; an OperationError saying "internal error" is an engine bug.
function badOutcome(e) {
  if (e && e.hang) return 'hang';
  const typeOk = e instanceof TypeError || e instanceof DOMException;
  if (!typeOk) return `unexpected ${e && e.constructor ? e.constructor.name : typeof e}: ${e && e.message}`;
  if (PYTHON_TEXT.test(String(e.message))) return `Python text in a message: ${e.name}: ${e.message}`;
  if (/internal error/.test(String(e.message))) return `engine bug: ${e.name}: ${e.message}`;
  return null;
}

// ------------------------------------------------------------------ WebIDL calls
class IdlFuzzer {
  constructor(idl, seed) {
    this.idl = idl;
    this.rng = mulberry32(seed);
    this.pools = { MLOperand: [], MLTensor: [], MLGraph: [], MLContext: [] };
    this.names = new Map();  // object -> its name in reproducers
    this.counts = { calls: 0, values: 0, typeErrors: 0, domExceptions: 0 };
    this.failures = [];
  }

  r() { return this.rng(); }
  int(n) { return Math.floor(this.r() * n); }
  pick(a) { return a[this.int(a.length)]; }
  chance(p) { return this.r() < p; }

  keep(kind, obj, name) {
    const pool = this.pools[kind];
    if (pool.length >= 40) pool.splice(this.int(pool.length), 1);
    pool.push(obj);
    this.names.set(obj, name || `${kind.slice(2).toLowerCase()}${this.counts.calls}`);
  }

  // A value of an IDL type, with its reproducer text.
  edge() {
    const EDGES = [
      [undefined, 'undefined'], [null, 'null'], [true, 'true'], ['', "''"], ['x', "'x'"], ['$o', "'$o'"],
      ['__proto__', "'__proto__'"], [NaN, 'NaN'], [-0, '-0'], [Infinity, 'Infinity'], [-1, '-1'], [2 ** 32, '2 ** 32'],
      [1n, '1n'], [Object(1n), 'Object(1n)'], [{ valueOf: () => 1n }, '{valueOf: () => 1n}'], [Symbol('s'), "Symbol('s')"],
      [{}, '{}'], [[], '[]'], [() => 1, '() => 1'], [new Float32Array(3), 'new Float32Array(3)'],
    ];
    return this.pick(EDGES);
  }

  number(integral) {
    if (this.chance(0.7)) { const v = this.int(5); return [v, `${v}`]; }
    const EDGE_NUMBERS = [[0.5, '0.5'], [1.5, '1.5'], [NaN, 'NaN'], [-0, '-0'], [Infinity, 'Infinity'], [-Infinity, '-Infinity'],
      [2 ** 31, '2 ** 31'], [2 ** 32 - 1, '2 ** 32 - 1'], [2 ** 32, '2 ** 32'], [2 ** 53, '2 ** 53'], [-1, '-1'], [-(2 ** 31) - 1, '-(2 ** 31) - 1'], [1e308, '1e308'], ['3', "'3'"]];
    return integral && this.chance(0.3) ? [this.int(8), '7'] : this.pick(EDGE_NUMBERS);
  }

  name() {
    const NAMES = ['x', 'y', 'a', 'b', '$o', '$n', '$i', '$r', '__proto__', 'constructor', '\u00e9t\u00e9', '\u{1F600}', 'x'.repeat(300), '\uD800'];
    const n = this.pick(NAMES);
    return [n, JSON.stringify(n)];
  }

  buffer(length) {
    const n = length === undefined ? this.pick([0, 1, 2, 4, 8, 16, 24, 64]) : length;
    const kinds = ['Float32Array', 'Uint8Array', 'Int32Array', 'Uint16Array', 'BigInt64Array', 'ArrayBuffer', 'DataView'];
    const kind = this.pick(kinds);
    const shared = this.chance(0.1);
    const detached = this.chance(0.05);
    const bytes = n * 8;
    const backing = shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes);
    let text = `${shared ? 'new SharedArrayBuffer' : 'new ArrayBuffer'}(${bytes})`;
    let value;
    if (kind === 'ArrayBuffer') value = backing;
    else if (kind === 'DataView') { value = new DataView(backing); text = `new DataView(${text})`; }
    else { value = new globalThis[kind](backing, 0, n); text = `new ${kind}(${text}, 0, ${n})`; }
    if (detached && !shared) { backing.transfer(); text = `(detached) ${text}`; }
    return [value, text];
  }

  value(type, depth = 0) {
    if (this.chance(0.06) || depth > 3) return this.edge();
    if (type.union) return this.value(this.pick(type.union), depth);
    if (type.generic === 'sequence' || type.generic === 'FrozenArray') {
      if (this.chance(0.05)) return this.edge();
      const n = this.pick([0, 1, 2, 2, 3, 4, 4, 5]);
      const items = Array.from({ length: n }, () => this.value(type.of[0], depth + 1));
      return [items.map((i) => i[0]), `[${items.map((i) => i[1]).join(', ')}]`];
    }
    if (type.generic === 'record') {
      const out = {}; const text = [];
      for (let i = this.int(3) + 1; i > 0; i--) {
        const [k, kt] = this.name();
        const [v, vt] = this.value(type.of[1], depth + 1);
        Object.defineProperty(out, k, { value: v, enumerable: true, configurable: true, writable: true });
        text.push(`${kt}: ${vt}`);
      }
      return [out, `{${text.join(', ')}}`];
    }
    if (type.generic === 'Promise') return this.edge();
    const name = type.name;
    if (this.idl.typedefs[name]) return this.value(this.idl.typedefs[name], depth);
    if (this.idl.enums[name]) return this.chance(0.9) ? (() => { const v = this.pick(this.idl.enums[name]); return [v, `'${v}'`]; })() : ['bogus', "'bogus'"];
    if (this.idl.dictionaries[name]) return this.dictionary(name, depth);
    if (this.pools[name]) {
      const pool = this.pools[name];
      if (!pool.length || this.chance(0.05)) return this.edge();
      const obj = this.pick(pool);
      return [obj, this.names.get(obj)];
    }
    switch (name) {
      case 'boolean': return this.chance(0.5) ? [true, 'true'] : [false, 'false'];
      case 'DOMString': case 'USVString': case 'ByteString': return this.name();
      case 'bigint': return this.pick([[1n, '1n'], [-1n, '-1n'], [2n ** 64n, '2n ** 64n'], [0n, '0n']]);
      case 'byte': case 'octet': case 'short': case 'unsigned short': case 'long': case 'unsigned long':
      case 'long long': case 'unsigned long long': return this.number(true);
      case 'float': case 'double': case 'unrestricted float': case 'unrestricted double': return this.number(false);
      case 'AllowSharedBufferSource': case 'ArrayBufferView': case 'BufferSource': case 'ArrayBuffer': return this.buffer();
      default: return this.edge();  // GPUDevice, any, object, ...
    }
  }

  dictionary(name, depth) {
    const members = [];
    for (let d = this.idl.dictionaries[name]; d; d = this.idl.dictionaries[d.inherits]) members.push(...d.members);
    const out = {}; const text = [];
    for (const m of members) {
      if (!m.required && this.chance(0.55)) continue;
      if (m.required && this.chance(0.03)) continue;
      let v;
      if (m.name === 'shape' || m.name === 'dimensions') {
        v = this.chance(0.85) ? (() => { const s = Array.from({ length: this.int(4) + 1 }, () => this.int(4) + 1); return [s, `[${s}]`]; })() : this.value(m.type, depth + 1);
      } else {
        v = this.value(m.type, depth + 1);
      }
      out[m.name] = v[0];
      text.push(`${m.name}: ${v[1]}`);
    }
    return [out, `{${text.join(', ')}}`];
  }

  async call(target, targetName, op, args) {
    const values = []; const texts = [];
    for (const a of args) {
      if (a.optional && this.chance(0.3)) break;
      const [v, t] = this.value(a.type);
      values.push(v); texts.push(t);
    }
    const repro = `${targetName}.${op}(${texts.join(', ')})`;
    this.counts.calls++;
    try {
      let result = target[op](...values);
      if (result && typeof result.then === 'function') result = await withTimeout(result, HANG_MS, repro);
      this.counts.values++;
      this.adopt(result, op);
    } catch (e) {
      const bad = badOutcome(e);
      if (bad) this.failures.push({ kind: 'webidl', problem: bad, reproducer: repro });
      else if (e instanceof TypeError) this.counts.typeErrors++;
      else this.counts.domExceptions++;
    }
  }

  adopt(result, op) {
    const kind = (o) => (o instanceof MLOperand ? 'MLOperand' : o instanceof MLTensor ? 'MLTensor' : o instanceof MLGraph ? 'MLGraph' : o instanceof MLContext ? 'MLContext' : null);
    const items = Array.isArray(result) ? result : [result];
    for (const o of items) if (o && kind(o)) this.keep(kind(o), o, `${kind(o).slice(2).toLowerCase()}${this.counts.calls}`);
  }

  async run(ms) {
    const end = performance.now() + ms;
    const ctx = await navigator.ml.createContext();
    this.keep('MLContext', ctx, 'ctx');
    let builder = null;
    const ops = (iface) => this.idl.interfaces[iface].operations;
    let step = 0;
    while (performance.now() < end) {
      if (!builder || this.chance(0.02)) {
        try {
          builder = new MLGraphBuilder(this.pick(this.pools.MLContext));
        } catch (e) {  // a destroyed context: the fuzz goes on with a fresh one
          const fresh = await navigator.ml.createContext();
          this.keep('MLContext', fresh, `ctx${step}`);
          builder = new MLGraphBuilder(fresh);
        }
        this.names.set(builder, 'builder');
        // A few well-formed operands to work with.
        for (const [n, shape] of [['x', [2, 3]], ['y', [2, 3]], ['z', [1, 2, 3, 4]]]) {
          try { this.keep('MLOperand', builder.input(`${n}${step}`, { dataType: 'float32', shape }), `${n}`); } catch (e) { /* built or lost */ }
        }
      }
      const roll = this.r();
      let target; let name; let op;
      if (roll < 0.75) { target = builder; name = 'builder'; op = this.pick(ops('MLGraphBuilder')); }
      else if (roll < 0.97) {
        const ctxs = this.pools.MLContext;
        target = this.pick(ctxs); name = this.names.get(target);
        op = this.pick(ops('MLContext').filter((o) => o.name !== 'destroy' || this.chance(0.05)));
      } else if (roll < 0.985) { target = navigator.ml; name = 'navigator.ml'; op = this.pick(ops('ML')); }
      else {
        const kind = this.pick(['MLTensor', 'MLGraph']);
        if (!this.pools[kind].length) continue;
        target = this.pick(this.pools[kind]); name = this.names.get(target); op = { name: 'destroy', args: [] };
      }
      await this.call(target, name, op.name, op.args);
      if (++step % 150 === 0) {
        const health = await healthy();
        if (health !== true) { this.failures.push({ kind: 'webidl', problem: `page no longer usable: ${health}`, reproducer: `after ${step} calls (seed as given)` }); break; }
        if (this.pools.MLContext.every((c) => { try { return c.opSupportLimits() && false; } catch (e) { return true; } })) {
          this.keep('MLContext', await navigator.ml.createContext(), 'ctx');
        }
      }
    }
    return { counts: this.counts, failures: this.failures.slice(0, 50) };
  }
}

// The page is still usable: a fresh context computes relu([-1, 2]) = [0, 2].
async function healthy() {
  try {
    const ctx = await withTimeout(navigator.ml.createContext(), HANG_MS, 'createContext');
    const b = new MLGraphBuilder(ctx);
    const g = await b.build({ y: b.relu(b.input('x', { dataType: 'float32', shape: [2] })) });
    const r = await withTimeout(ctx.compute(g, { x: new Float32Array([-1, 2]) }, { y: new Float32Array(2) }), HANG_MS, 'compute');
    ctx.destroy();
    const y = Array.from(r.outputs.y);
    return y[0] === 0 && y[1] === 2 ? true : `relu gave ${y}`;
  } catch (e) {
    return `${e && e.name}: ${e && e.message}`;
  }
}

// ------------------------------------------------------------- random graphs
// spec (from runner.py): {inputs: [{id, shape, data}], constants: [...], nodes: [{id, op, args, options}], outputs: [id]}
// args: {ref: id} for operands, anything else literally.
async function runGraph(spec, ctx) {
  const b = new MLGraphBuilder(ctx);
  const v = new Map();
  const arg = (a) => (a && typeof a === 'object' && 'ref' in a ? v.get(a.ref) : a);
  for (const c of spec.constants) v.set(c.id, b.constant({ dataType: 'float32', shape: c.shape }, new Float32Array(c.data)));
  for (const i of spec.inputs) v.set(i.id, b.input(i.id, { dataType: 'float32', shape: i.shape }));
  for (const n of spec.nodes) {
    const args = n.args.map((a) => (Array.isArray(a) && a.length && a[0] && typeof a[0] === 'object' && 'ref' in a[0] ? a.map(arg) : arg(a)));
    const options = {};
    for (const [k, val] of Object.entries(n.options || {})) options[k] = arg(val);
    const out = b[n.op](...args, options);
    v.set(n.id, 'index' in n ? out[n.index] : out); // one output of split
  }
  const outs = {};
  for (const id of spec.outputs) outs[id] = v.get(id);
  const graph = await b.build(outs);
  // Through tensors (dispatch + readTensor), the path real clients use.
  const feeds = {}; const fetches = {};
  for (const i of spec.inputs) {
    feeds[i.id] = await ctx.createTensor({ dataType: 'float32', shape: i.shape, writable: true });
    ctx.writeTensor(feeds[i.id], new Float32Array(i.data));
  }
  for (const id of spec.outputs) fetches[id] = await ctx.createTensor({ dataType: 'float32', shape: outs[id].shape, readable: true });
  ctx.dispatch(graph, feeds, fetches);
  const result = {};
  for (const id of spec.outputs) result[id] = { shape: Array.from(outs[id].shape), data: Array.from(new Float32Array(await ctx.readTensor(fetches[id]))) };
  graph.destroy();
  for (const t of [...Object.values(feeds), ...Object.values(fetches)]) t.destroy();
  return result;
}

async function runGraphs(specs) {
  const ctx = await navigator.ml.createContext();
  const out = [];
  for (const spec of specs) {
    try {
      out.push({ ok: await withTimeout(runGraph(spec, ctx), HANG_MS, 'graph') });
    } catch (e) {
      out.push({ error: `${e && e.name}: ${e && e.message}` });
    }
  }
  ctx.destroy();
  return out;
}

// ------------------------------------------------------------------ timelines
// Interleaved writeTensor / dispatch / readTensor on four tensors of y = 2x + 1,
// checked against a model of the tensors' contents and for settle order.
async function runTimelines(seed, ms) {
  const rng = mulberry32(seed);
  const int = (n) => Math.floor(rng() * n);
  const ctx = await navigator.ml.createContext();
  const b = new MLGraphBuilder(ctx);
  const x = b.input('x', { dataType: 'float32', shape: [4] });
  const graph = await b.build({
    y: b.add(b.mul(x, b.constant({ dataType: 'float32', shape: [4] }, new Float32Array([2, 2, 2, 2]))),
      b.constant({ dataType: 'float32', shape: [4] }, new Float32Array([1, 1, 1, 1]))),
  });
  const counts = { timelines: 0, operations: 0 };
  const failures = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const tensors = [];
    for (let i = 0; i < 4; i++) tensors.push(await ctx.createTensor({ dataType: 'float32', shape: [4], readable: true, writable: true }));
    const model = tensors.map(() => [0, 0, 0, 0]);
    const log = []; const settled = []; const pending = [];
    for (let k = 0, n = 5 + int(40); k < n; k++) {
      const roll = rng();
      const i = int(4);
      if (roll < 0.35) {
        const data = [int(9) - 4, int(9) - 4, int(9) - 4, int(9) - 4];
        ctx.writeTensor(tensors[i], new Float32Array(data));
        model[i] = data;
        log.push(`write(t${i}, [${data}])`);
      } else if (roll < 0.65) {
        let j = int(4);
        if (j === i) j = (j + 1) % 4;
        ctx.dispatch(graph, { x: tensors[i] }, { y: tensors[j] });
        model[j] = model[i].map((v) => 2 * v + 1);
        log.push(`dispatch(t${i} -> t${j})`);
      } else {
        const expected = model[i].slice();
        const seq = pending.length;
        const byob = rng() < 0.3;
        log.push(`read${byob ? 'Into' : ''}(t${i}) #${seq}`);
        const target = byob ? new Float32Array(4) : null;
        const p = (byob ? ctx.readTensor(tensors[i], target).then(() => target) : ctx.readTensor(tensors[i]).then((buf) => new Float32Array(buf)))
          .then((got) => {
            settled.push(seq);
            if (Array.from(got).join() !== expected.join()) failures.push({ kind: 'timeline', problem: `read #${seq} gave [${Array.from(got)}], expected [${expected}]`, reproducer: log.join('; ') });
          });
        pending.push(withTimeout(p, HANG_MS, `read #${seq}`).catch((e) => failures.push({ kind: 'timeline', problem: `read #${seq}: ${e.name}: ${e.message}`, reproducer: log.join('; ') })));
      }
      counts.operations++;
    }
    await Promise.all(pending);
    if (settled.join() !== settled.slice().sort((a, b) => a - b).join()) failures.push({ kind: 'timeline', problem: `reads settled out of order: ${settled}`, reproducer: log.join('; ') });
    for (const t of tensors) t.destroy();
    counts.timelines++;
    if (failures.length > 20) break;
  }
  ctx.destroy();
  return { counts, failures };
}

// -------------------------------------------------------------- memory cycles
async function runMemory(cycles, mib) {
  const heap = () => webnnPolyfill.pyodide()._module.HEAPU8.length;
  // Contexts in the timeline worker: its engine's heap, where the tensors and plans live.
  const workerHeap = () => webnnPolyfill.engineStats.timeline.workerHeapBytes();
  const elements = (mib * 1024 * 1024) / 4;
  const data = new Float32Array(elements).fill(0.5);
  const one = async (i) => {
    const destroyContext = i % 2 === 1;
    const ctx = await navigator.ml.createContext();
    const b = new MLGraphBuilder(ctx);
    const x = b.input('x', { dataType: 'float32', shape: [elements] });
    const g = await b.build({ y: b.add(x, b.constant({ dataType: 'float32', shape: [elements] }, data)) });
    const t = await ctx.createTensor({ dataType: 'float32', shape: [elements], readable: true, writable: true });
    if (destroyContext) ctx.destroy();
    else { g.destroy(); t.destroy(); ctx.destroy(); }
  };
  await one(0);
  const start = heap();
  let peak = start;
  const inWorker = webnnPolyfill.engineStats.timeline.mode === 'worker';
  const workerStart = inWorker ? await workerHeap() : null;
  let workerPeak = workerStart;
  for (let i = 0; i < cycles; i++) {
    await one(i);
    peak = Math.max(peak, heap());
    if (inWorker) workerPeak = Math.max(workerPeak, await workerHeap());
  }
  return { cycles, mib, startBytes: start, peakGrowthBytes: peak - start,
    workerStartBytes: workerStart, workerPeakGrowthBytes: inWorker ? workerPeak - workerStart : null };
}

window.fuzz = {
  idl: (idl, seed, ms) => new IdlFuzzer(idl, seed).run(ms),
  graphs: runGraphs,
  timelines: runTimelines,
  memory: runMemory,
  healthy,
  ready: () => webnnPolyfill.ready(),
};
