// The engine: Pyodide + numpy + the webnn_core wheel. Its files are fetched
// from script load (js/src/startup.js; `prefetch: false` defers that to the
// first createContext()); it starts at the first createContext(). Service
// workers import Pyodide's scripts during their first evaluation, as they
// cannot importScripts() later.

const CONFIG = Object.assign(
  { runtimeBase: null, replaceNative: false, debug: false, fastPaths: true,
    snapshot: true, buildSnapshot: true, prefetch: true, onProgress: null },
  globalThis.WEBNN_POLYFILL_CONFIG || {});

// Where this script was loaded from: the runtime files sit beside it by default.
function scriptBase() {
  if (CONFIG.runtimeBase) return new URL(CONFIG.runtimeBase, globalThis.location.href).href;
  if (typeof SCRIPT_URL_OVERRIDE === 'string') return new URL('./', SCRIPT_URL_OVERRIDE).href;
  if (typeof document !== 'undefined' && document.currentScript && document.currentScript.src) {
    return new URL('./', document.currentScript.src).href;
  }
  // Workers: importScripts() gives no currentScript; the stack names this file.
  const stack = String(new Error().stack || '');
  const match = stack.match(/(https?:\/\/[^\s()]+?\/)[^/\s()]*webnn-polyfill[^/\s()]*\.m?js/);
  if (match) return match[1];
  return new URL('./', globalThis.location.href).href;
}

const RUNTIME_BASE = scriptBase();
const IS_SERVICE_WORKER = typeof ServiceWorkerGlobalScope !== 'undefined' && globalThis instanceof ServiceWorkerGlobalScope;
const IS_CLASSIC_WORKER = typeof WorkerGlobalScope !== 'undefined' && typeof importScripts === 'function';

if (IS_SERVICE_WORKER && typeof globalThis.loadPyodide !== 'function') {
  // Service workers cannot importScripts() after installation, and Pyodide
  // would otherwise import pyodide.asm.js lazily: take both now.
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
  const pyodide = await startRuntime();  // js/src/startup.js
  const bridge = pyodide.pyimport('webnn_core.bridge');
  const kernels = pyodide.pyimport('webnn_core.kernels');
  kernels.set_fast_paths(!!CONFIG.fastPaths);
  markTime('bridge');
  await simdAttach(pyodide);
  markTime('simd');
  ENGINE_STATS.startMs = performance.now() - started;
  reportProgress('ready');
  return { pyodide, call: bridge.call };
}

function engine() {
  if (!enginePromise) {
    enginePromise = startEngine().catch((e) => {
      enginePromise = null;  // allow a retry, e.g. after the network comes back
      PREFETCH = null;
      throw new DOMException(`webnn-polyfill: the engine failed to start: ${e && e.message}`, 'NotSupportedError');
    });
  }
  return enginePromise;
}

const ENGINE_STATS = { startMs: null, snapshot: null, phases: PHASE_TIMES };
let ENGINE = null;  // set once started; builder calls are synchronous after createContext

function toJsError([name, message, detail]) {
  if (detail && CONFIG.debug) console.error(detail);
  if (name === 'TypeError') return new TypeError(message);
  return new DOMException(message, name);
}

// Call into webnn_core.bridge. `args` are JSON-able (objects with handles are
// passed as {$o: handle}); `data` an optional Uint8Array. Throws the mapped error.
function py(method, args, data) {
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

function ref(handle) {
  return { $o: handle };
}
