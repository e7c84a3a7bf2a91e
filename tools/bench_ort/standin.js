// A zero-cost WebNN for the ORT benchmark page (tools/bench_ort/ort.js, ?ep=standin):
// measures ORT's own share of InferenceSession.create on its WebNN EP directly,
// not as "create minus the polyfill's calls". Measurement only: it never runs a
// graph and is not part of the polyfill.
//
// The stand-in has the surface ORT touches while it creates a session:
// navigator.ml.createContext() -> a context whose opSupportLimits() is the
// polyfill's own table (read once, before timing), new MLGraphBuilder(context)
// -> a builder with every method of the polyfill's MLGraphBuilder, each
// returning at once a dummy operand (or a list of them) with the shape and
// dataType the polyfill gave for the same call, and build() resolving at once.
// Those descriptors come from a "tape": one real create on the polyfill just
// before (recordTape), call by call in ORT's (deterministic) call order. A
// call that does not match the tape (another method at that position, or
// past its end) still answers, with an empty-shaped operand, and is counted
// as `offTape` so a run whose stand-in diverged says so.
'use strict';

(() => {
  const realCreateContext = ML.prototype.createContext;
  const RealBuilder = MLGraphBuilder;
  const builderMethods = Object.getOwnPropertyNames(RealBuilder.prototype)
    .filter((n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(RealBuilder.prototype, n).value === 'function');

  const state = {
    active: false,   // createContext/new MLGraphBuilder answer with the stand-in
    recording: null, // the tape being written by a real create, or null
    tape: [], pos: 0,
    limits: null,
    stats: null,
  };
  const freshStats = () => ({ calls: 0, offTape: 0, builders: 0, contexts: 0, builds: 0, operandReads: 0, other: {} });

  class StandinOperand {
    #shape; #dataType;
    constructor(desc) { this.#shape = desc.shape; this.#dataType = desc.dataType; }
    get shape() { state.stats.operandReads++; return this.#shape.slice(); }
    get dataType() { state.stats.operandReads++; return this.#dataType; }
  }
  const operandOf = (out) => (Array.isArray(out) ? out.map((d) => new StandinOperand(d)) : new StandinOperand(out));
  const noTape = { shape: [], dataType: 'float32' };

  function fromTape(method) {
    const s = state.stats;
    s.calls++;
    const e = state.tape[state.pos];
    if (!e || e.method !== method) { s.offTape++; return new StandinOperand(noTape); }
    state.pos++;
    return operandOf(e.out);
  }

  class StandinGraph { destroy() {} }
  class StandinBuilder {
    constructor() { state.stats.builders++; }
    build() { state.stats.builds++; return Promise.resolve(new StandinGraph()); }
  }
  for (const name of builderMethods) {
    if (name === 'build') continue;
    Object.defineProperty(StandinBuilder.prototype, name, {
      value: function () { return fromTape(name); }, writable: true, configurable: true,
    });
  }

  const never = new Promise(() => {});
  function other(name, result) {
    return function () { const o = state.stats.other; o[name] = (o[name] || 0) + 1; return result(); };
  }
  const noRun = () => Promise.reject(new DOMException('the WebNN stand-in never runs a graph', 'NotSupportedError'));
  class StandinContext {
    constructor() { state.stats.contexts++; }
    get lost() { return never; }
    get accelerated() { return false; }
  }
  Object.assign(StandinContext.prototype, {
    opSupportLimits: other('opSupportLimits', () => state.limits),
    destroy: other('destroy', () => undefined),
    createTensor: other('createTensor', noRun),
    createConstantTensor: other('createConstantTensor', noRun),
    dispatch: other('dispatch', () => { throw new DOMException('the WebNN stand-in never runs a graph', 'NotSupportedError'); }),
    readTensor: other('readTensor', noRun),
    writeTensor: other('writeTensor', () => undefined),
  });

  // navigator.ml.createContext and the MLGraphBuilder global answer with the
  // stand-in while it is active (the page's own interfaces; ORT reads both at
  // every session create).
  Object.defineProperty(ML.prototype, 'createContext', {
    value: function (...args) {
      return state.active ? Promise.resolve(new StandinContext()) : realCreateContext.apply(this, args);
    },
    writable: true, configurable: true,
  });
  self.MLGraphBuilder = new Proxy(RealBuilder, {
    construct(target, args, newTarget) {
      return args[0] instanceof StandinContext ? new StandinBuilder() : Reflect.construct(target, args, newTarget);
    },
  });

  // The tape: every builder call of a real create, with its result's descriptor(s).
  const desc = (op) => ({ shape: op.shape, dataType: op.dataType });
  for (const name of builderMethods) {
    if (name === 'build') continue;
    const d = Object.getOwnPropertyDescriptor(RealBuilder.prototype, name);
    const fn = d.value;
    Object.defineProperty(RealBuilder.prototype, name, {
      ...d,
      value: function (...args) {
        const out = fn.apply(this, args);
        if (state.recording) state.recording.push({ method: name, out: Array.isArray(out) ? out.map(desc) : desc(out) });
        return out;
      },
    });
  }

  window.webnnStandin = {
    builderMethods,
    tape: () => state.tape,
    // Read the polyfill's opSupportLimits once (the stand-in hands ORT this object).
    async init() {
      const ctx = await realCreateContext.call(navigator.ml, { deviceType: 'cpu' });
      state.limits = ctx.opSupportLimits();
    },
    // Run fn (a real create on the polyfill) and keep its builder calls as the tape.
    async recordTape(fn) {
      state.recording = [];
      try { await fn(); } finally { state.tape = state.recording; state.recording = null; }
      return state.tape.length;
    },
    // Run fn (a create) on the stand-in; returns what ORT called.
    async withStandin(fn) {
      state.active = true;
      state.pos = 0;
      state.stats = freshStats();
      try { await fn(); } finally { state.active = false; }
      return { ...state.stats, tapeLength: state.tape.length, tapeUsed: state.pos };
    },
  };
})();
