// One engine's start for tools/bench.py's network mode (start.html). Sets window.startResult:
// {readyMs, ...} (readyMs: first <script> inserted -> engine ready) or {error}.
'use strict';
(function () {
  const q = new URLSearchParams(location.search);
  const engine = q.get('engine');
  const now = () => performance.now();
  const load = (url) => new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`could not load ${url}`));
    document.head.appendChild(s);
  });
  const starts = {
    // navigator.ml.createContext() resolved: Pyodide, numpy and the core started.
    async polyfill() {
      self.WEBNN_POLYFILL_CONFIG = JSON.parse(q.get('config') || '{}');
      await load('/dist/webnn-polyfill.js');
      await navigator.ml.createContext({ deviceType: 'cpu' });
      const stats = webnnPolyfill.engineStats;
      return { snapshot: stats.snapshot, phases: { ...stats.phases } };
    },
    // TF.js 4.22 wasm, single-threaded as in any page that is not cross-origin isolated.
    async 'tfjs-wasm'() {
      await load('/vendor/@tensorflow/tfjs-core/dist/tf-core.min.js');
      await load('/vendor/@tensorflow/tfjs-backend-wasm/dist/tf-backend-wasm.min.js');
      tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      tf.wasm.setWasmPaths('/vendor/@tensorflow/tfjs-backend-wasm/dist/');
      if (!await tf.setBackend('wasm')) throw new Error("tf.setBackend('wasm') failed");
      await tf.ready();
      return { threads: tf.env().getBool('WASM_HAS_MULTITHREAD_SUPPORT') };
    },
    // ONNX Runtime Web's wasm EP (ort.wasm.min.js), one thread, a one-node session created.
    async 'ort-wasm'() {
      await load('/ort/ort.wasm.min.js');
      ort.env.wasm.numThreads = 1;
      const model = Uint8Array.from(atob(q.get('model')), (c) => c.charCodeAt(0));
      const session = await ort.InferenceSession.create(model, { executionProviders: ['wasm'] });
      return { inputs: session.inputNames, version: ort.env.versions && ort.env.versions.web };
    },
  };
  addEventListener('load', async () => {
    const t0 = now();
    try {
      if (!starts[engine]) throw new Error(`unknown engine ${engine}`);
      const detail = await starts[engine]();
      self.startResult = { readyMs: now() - t0, ...detail };
    } catch (e) {
      self.startResult = { error: String(e && e.stack || e) };
    }
    document.getElementById('status').textContent = JSON.stringify(self.startResult);
  });
}());
