// window.ortRun(job): run one ONNX model in ONNX Runtime Web on one execution provider and
// report outputs (raw bytes, base64) with the WebNN calls it made and ORT's own log lines.
'use strict';
(() => {
  const params = new URLSearchParams(location.search);
  ort.env.wasm.wasmPaths = '/ort/dist/';
  ort.env.wasm.numThreads = Number(params.get('threads') || 1);
  ort.env.wasm.proxy = false;
  const logLines = [];
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const original = console[level].bind(console);
    // ORT's own log lines are kept for the driver but not passed on: at verbose level they are
    // hundreds per session, and each would cross to the driver as a console event.
    console[level] = (...args) => {
      const line = args.map(String).join(' ');
      logLines.push(line);
      if (!/\[[VIWEF]:onnxruntime/.test(line)) original(...args);
    };
  }

  const TYPED = {
    float32: Float32Array, float16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
    int64: BigInt64Array, uint64: BigUint64Array, int8: Int8Array, uint8: Uint8Array,
    int16: Int16Array, uint16: Uint16Array, bool: Uint8Array, float64: Float64Array,
    int4: Uint8Array, uint4: Uint8Array,  // packed two per byte, as ORT takes them
  };
  const fromB64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
  const toB64 = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  };
  const tensorOf = ({ type, dims, data }) => {
    const bytes = fromB64(data);
    const T = TYPED[type];
    if (!T) throw new Error(`input type ${type} not handled by the page`);
    return new ort.Tensor(type, new T(bytes.buffer, 0, bytes.length / T.BYTES_PER_ELEMENT), dims);
  };

  // One case; a case that takes longer than job.timeoutMs answers an error (the driver then
  // starts a fresh tab) instead of hanging the run.
  window.ortRun = (job) => {
    let timer;
    const timeout = new Promise((resolve) => {
      timer = setTimeout(() => resolve({ error: `timed out after ${job.timeoutMs} ms`,
        builds: 0, dispatches: 0, log: [] }), job.timeoutMs || 60000);
    });
    return Promise.race([runJob(job), timeout]).finally(() => clearTimeout(timer));
  };

  const runJob = async (job) => {
    const counts = globalThis.webnnCounts;
    const before = { builds: counts.builds, dispatches: counts.dispatches, computes: counts.computes };
    logLines.length = 0;
    const ep = job.ep === 'webnn' ? { name: 'webnn', deviceType: job.deviceType } : job.ep;
    const result = { stage: 'create' };
    let session;
    try {
      const model = job.modelUrl ? new Uint8Array(await (await fetch(job.modelUrl)).arrayBuffer()) : fromB64(job.model);
      session = await ort.InferenceSession.create(model, {
        executionProviders: [ep], logSeverityLevel: job.verbose ? 0 : 2, logVerbosityLevel: 0,
        graphOptimizationLevel: job.optimization || 'all',
      });
      result.stage = 'run';
      const feeds = {};
      for (const [name, t] of Object.entries(job.feeds)) feeds[name] = tensorOf(t);
      const out = await session.run(feeds);
      result.outputs = {};
      for (const [name, t] of Object.entries(out)) {
        const data = t.type === 'bool' ? new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.length) : t.data;
        result.outputs[name] = { type: t.type, dims: Array.from(t.dims), data: toB64(data) };
      }
      result.stage = 'done';
    } catch (e) {
      result.error = `${e && e.name}: ${e && e.message}`.slice(0, 2000);
    } finally {
      if (session) { try { await session.release(); } catch (e) { /* the outputs are what count */ } }
    }
    result.builds = counts.builds - before.builds;
    result.dispatches = counts.dispatches - before.dispatches + counts.computes - before.computes;
    // ORT's verbose log is long (every graph transformer): keep what the driver reads — the WebNN
    // EP's lines (GetCapability, why a node was refused), the node placements, errors.
    const wanted = job.verbose ? /webnn|VerifyEachNodeIsAssignedToAnEp|supported|error|warn/i : /error|warn/i;
    result.log = logLines.filter((l) => wanted.test(l)).slice(0, 2000);
    return result;
  };
  window.ortReady = true;
})();
