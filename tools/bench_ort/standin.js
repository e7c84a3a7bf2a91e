// A zero-cost WebNN for the ORT benchmark page (tools/bench_ort/ort.js, ?ep=standin):
// measures ORT's own share of InferenceSession.create and of session.run on its
// WebNN EP directly, not as "time minus the polyfill's calls". Measurement only:
// it computes nothing and is not part of the polyfill.
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
// as `offTape` so a run whose stand-in diverged says so. installAlone: the same
// stand-in in a page without the polyfill (given the limits and the tape), for
// a session create that is the first of a fresh page.
//
// Running: createTensor, writeTensor, dispatch and readTensor cost nothing
// beyond what the spec obliges every implementation to do. Each promise
// (createContext, build, createTensor, readTensor) settles in a queued task
// ("queue an ML task"), one MessageChannel message per settle in call order,
// as js/src/api.js settles readTensor; readTensor(tensor) resolves with a new
// ArrayBuffer of the tensor's byte length (zeros), readTensor(tensor, out)
// checks out's length and leaves its bytes as they are. writeTensor and
// dispatch only count. So the outputs are zeros: a stand-in session's results
// must never be checked. runStats counts what ORT called in a run and the task
// hops (settles) it waited for.
'use strict';

(() => {
  const state = {
    active: false,   // createContext/new MLGraphBuilder answer with the stand-in
    recording: null, // the tape being written by a real create, or null
    tape: [], pos: 0,
    limits: null,
    stats: null,
  };
  const freshStats = () => ({ calls: 0, offTape: 0, builders: 0, contexts: 0, builds: 0, operandReads: 0, other: {} });
  // What a stand-in context was asked while running (counted outside withStandin too:
  // a stand-in session keeps its stand-in context). hops: settles queued as tasks;
  // settleMs: call-to-settle time summed over them.
  const freshRunStats = () => ({ createTensor: 0, write: 0, dispatch: 0, read: 0, readInto: 0, destroyTensor: 0,
                                 hops: 0, settleMs: 0 });
  let runStats = freshRunStats();

  // Settle in a task of its own, in call order: one MessageChannel message per
  // settle (js/src/api.js queueSettle), never a microtask and never a clamped timer.
  const settleQueue = [];
  let settleHead = 0;
  let settlePort = null;
  function inTask(fn) {
    const t = performance.now();
    runStats.hops++;
    settleQueue.push(() => { runStats.settleMs += performance.now() - t; fn(); });
    if (!settlePort) {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => {
        const f = settleQueue[settleHead];
        settleQueue[settleHead++] = undefined;
        if (settleHead === settleQueue.length) settleQueue.length = settleHead = 0;
        f();
      };
      settlePort = channel.port2;
    }
    settlePort.postMessage(null);
  }
  const settled = (value) => new Promise((resolve) => inTask(() => resolve(value)));
  const rejected = (error) => new Promise((_, reject) => inTask(() => reject(error)));

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
    build() { state.stats.builds++; return settled(new StandinGraph()); }
  }

  const BYTES = { float32: 4, float16: 2, int32: 4, uint32: 4, int64: 8, uint64: 8, int8: 1, uint8: 1 };
  class StandinTensor {
    #dataType; #shape; #readable; #writable; #destroyed = false;
    constructor(desc) {
      this.#dataType = desc.dataType;
      this.#shape = (desc.shape ?? desc.dimensions ?? []).slice();
      this.#readable = !!desc.readable;
      this.#writable = !!desc.writable;
    }
    get dataType() { return this.#dataType; }
    get shape() { return this.#shape.slice(); }
    get readable() { return this.#readable; }
    get writable() { return this.#writable; }
    get constant() { return false; }
    get byteLength() {
      const n = this.#shape.reduce((a, b) => a * b, 1);
      return this.#dataType === 'int4' || this.#dataType === 'uint4' ? Math.ceil(n / 2) : n * (BYTES[this.#dataType] ?? 4);
    }
    destroy() { if (!this.#destroyed) runStats.destroyTensor++; this.#destroyed = true; }
  }
  const viewBytes = (d) => (d instanceof ArrayBuffer || d instanceof SharedArrayBuffer ? d.byteLength : d?.byteLength ?? -1);
  function defineBuilderMethods(names) {
    for (const name of names) {
      if (name === 'build') continue;
      Object.defineProperty(StandinBuilder.prototype, name, {
        value: function () { return fromTape(name); }, writable: true, configurable: true,
      });
    }
  }

  const never = new Promise(() => {});
  function other(name, result) {
    return function (...args) { const o = state.stats.other; o[name] = (o[name] || 0) + 1; return result(...args); };
  }
  class StandinContext {
    constructor() { state.stats.contexts++; }
    get lost() { return never; }
    get accelerated() { return false; }
  }
  Object.assign(StandinContext.prototype, {
    opSupportLimits: other('opSupportLimits', () => state.limits),
    destroy: other('destroy', () => undefined),
    createTensor(desc) { runStats.createTensor++; return settled(new StandinTensor(desc)); },
    createConstantTensor: other('createConstantTensor', (desc) => settled(new StandinTensor(desc))),
    writeTensor() { runStats.write++; },
    dispatch() { runStats.dispatch++; },
    readTensor(tensor, out) {
      if (out === undefined) {
        runStats.read++;
        return settled(new ArrayBuffer(tensor.byteLength));
      }
      runStats.readInto++;
      const n = viewBytes(out);
      if (n < tensor.byteLength) return rejected(new TypeError(`readTensor: outputData has ${n} bytes, the tensor has ${tensor.byteLength}`));
      return settled(undefined);
    },
  });

  const api = {
    builderMethods: [],
    tape: () => state.tape,
    limits: () => state.limits,
    // The run-time calls on stand-in contexts since the last reset (see freshRunStats).
    runStats: () => ({ ...runStats }),
    resetRunStats() { runStats = freshRunStats(); },
    // Run fn (a create) on the stand-in; returns what ORT called.
    async withStandin(fn) {
      state.active = true;
      state.pos = 0;
      state.stats = freshStats();
      try { await fn(); } finally { state.active = false; }
      return { ...state.stats, tapeLength: state.tape.length, tapeUsed: state.pos };
    },
  };
  window.webnnStandin = api;

  // Over the polyfill: navigator.ml.createContext and the MLGraphBuilder global
  // answer with the stand-in while it is active (the page's own interfaces; ORT
  // reads both at every session create); the tape records the polyfill's answers.
  api.installOverPolyfill = async () => {
    const realCreateContext = ML.prototype.createContext;
    const RealBuilder = MLGraphBuilder;
    api.builderMethods = Object.getOwnPropertyNames(RealBuilder.prototype)
      .filter((n) => n !== 'constructor' && typeof Object.getOwnPropertyDescriptor(RealBuilder.prototype, n).value === 'function');
    defineBuilderMethods(api.builderMethods);
    Object.defineProperty(ML.prototype, 'createContext', {
      value: function (...args) {
        return state.active ? settled(new StandinContext()) : realCreateContext.apply(this, args);
      },
      writable: true, configurable: true,
    });
    self.MLGraphBuilder = new Proxy(RealBuilder, {
      construct(target, args, newTarget) {
        return args[0] instanceof StandinContext ? new StandinBuilder() : Reflect.construct(target, args, newTarget);
      },
    });
    const desc = (op) => ({ shape: op.shape, dataType: op.dataType });
    for (const name of api.builderMethods) {
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
    // The polyfill's opSupportLimits, read once (the stand-in hands ORT this object).
    const ctx = await realCreateContext.call(navigator.ml, { deviceType: 'cpu' });
    state.limits = ctx.opSupportLimits();
  };

  // Run fn (a real create on the polyfill) and keep its builder calls as the tape.
  api.recordTape = async (fn) => {
    state.recording = [];
    try { await fn(); } finally { state.tape = state.recording; state.recording = null; }
    return state.tape.length;
  };

  // Alone, in a page without the polyfill (a first create in a fresh page): the
  // stand-in is navigator.ml and MLGraphBuilder, with the limits, builder method
  // names and tape a page with the polyfill recorded.
  api.useTape = (tape) => { state.tape = tape; };
  api.installAlone = ({ limits, builderMethods, tape }) => {
    state.limits = limits;
    state.tape = tape;
    api.builderMethods = builderMethods;
    defineBuilderMethods(builderMethods);
    const ml = { createContext: () => settled(new StandinContext()) };
    Object.defineProperty(navigator, 'ml', { value: ml, configurable: true });
    self.MLGraphBuilder = function MLGraphBuilder(context) {
      if (!(context instanceof StandinContext)) throw new TypeError('MLGraphBuilder: not a stand-in context');
      return new StandinBuilder();
    };
    state.stats = freshStats();
  };
})();
