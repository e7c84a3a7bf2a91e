// The engine: Pyodide + numpy + the webnn_core wheel. Its files are fetched
// from script load (startup.js; `prefetch: false` defers that to the first
// createContext()); it starts at the first createContext(). Service workers
// import Pyodide's scripts during their first evaluation, as they cannot
// importScripts() later.

import { CONFIG, ENGINE_STATS, IS_SERVICE_WORKER, RUNTIME_BASE } from './config.js';
import { simdAttach, simdBeforeEngineLoad } from './simd.js';
import { forgetPrefetch, markTime, reportProgress, startRuntime } from './startup.js';

if (IS_SERVICE_WORKER && typeof globalThis.loadPyodide !== 'function') {
  // Service workers cannot importScripts() after installation, and Pyodide
  // would otherwise import pyodide.asm.js lazily: take both now (startup.js
  // checks their hashes before the engine starts).
  try {
    importScripts(RUNTIME_BASE + 'pyodide.js', RUNTIME_BASE + 'pyodide.asm.js');
  } catch (e) {
    console.error('webnn-polyfill: could not import Pyodide in the service worker:', e);
  }
}

let enginePromise = null;

async function startEngine() {
  const started = performance.now();
  simdBeforeEngineLoad();
  const pyodide = await startRuntime();
  const bridge = pyodide.pyimport('webnn_core.bridge');
  markTime('bridge');
  await simdAttach(pyodide);
  markTime('simd');
  ENGINE_STATS.startMs = performance.now() - started;
  reportProgress('ready');
  return { pyodide, call: bridge.call };
}

export function engine() {
  if (!enginePromise) {
    enginePromise = startEngine().then((started) => {
      ENGINE = started;
      return started;
    }, (e) => {
      enginePromise = null;  // allow a retry, e.g. after the network comes back
      forgetPrefetch();
      throw new DOMException(`webnn-polyfill: the engine failed to start: ${e && e.message}`, 'NotSupportedError');
    });
  }
  return enginePromise;
}

export let ENGINE = null;  // set once started; builder calls are synchronous after createContext resolves

function toJsError([name, message, detail]) {
  if (detail && CONFIG.debug) console.error(detail);
  if (name === 'TypeError') return new TypeError(message);
  return new DOMException(message, name);
}

// Call into webnn_core.bridge. `args` are JSON-able (objects with handles are
// passed as {$o: handle}); `data` an optional Uint8Array. Throws the mapped error.
export function py(method, args, data) {
  const result = ENGINE.call(method, JSON.stringify(args), data);
  if (typeof result === 'string') {
    const parsed = JSON.parse(result);
    if (parsed.error) throw toJsError(parsed.error);
    return parsed.ok;
  }
  try {
    return result.toJs();  // bytes -> Uint8Array (a copy)
  } finally {
    result.destroy();
  }
}

export function ref(handle) {
  return { $o: handle };
}
