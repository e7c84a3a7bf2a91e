// Counts the WebNN calls ONNX Runtime makes (graphs built, dispatches), so the driver can tell
// a graph that ran on WebNN from one that ORT quietly ran on its own wasm kernels. This is the
// test page instrumenting its own view of the API, not the polyfill patching anything.
'use strict';
(() => {
  const counts = { contexts: 0, builds: 0, dispatches: 0, computes: 0, deviceTypes: [] };
  const wrap = (proto, name, key, before) => {
    const original = proto[name];
    if (typeof original !== 'function') return;
    Object.defineProperty(proto, name, {
      configurable: true, writable: true, enumerable: false,
      value: function (...args) { counts[key] += 1; if (before) before(...args); return original.apply(this, args); },
    });
  };
  wrap(ML.prototype, 'createContext', 'contexts', (options) => counts.deviceTypes.push(options && options.deviceType));
  wrap(MLGraphBuilder.prototype, 'build', 'builds');
  wrap(MLContext.prototype, 'dispatch', 'dispatches');
  wrap(MLContext.prototype, 'compute', 'computes');
  globalThis.webnnCounts = counts;
})();
