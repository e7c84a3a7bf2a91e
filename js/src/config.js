// The polyfill's configuration (page-set WEBNN_POLYFILL_CONFIG over defaults),
// where the runtime files are, what kind of global this is, and the engine's
// start-up statistics (shown as webnnPolyfill.engineStats).

import { SCRIPT_URL } from './build_info.js';

export const CONFIG = Object.assign(
  { runtimeBase: null, replaceNative: false, debug: false, fastPaths: true,
    // webgpu: false keeps gpu contexts on the cpu kernels even where WebGPU works.
    webgpu: true,
    // startup.js: engine snapshots (Cache Storage; buildSnapshot: the one served
    // beside the runtime), fetching the runtime at script load, progress callback.
    snapshot: true, buildSnapshot: true, prefetch: true, onProgress: null },
  globalThis.WEBNN_POLYFILL_CONFIG || {});

// Where this script was loaded from: the runtime files sit beside it by default.
function scriptBase() {
  if (CONFIG.runtimeBase) return new URL(CONFIG.runtimeBase, globalThis.location.href).href;
  if (SCRIPT_URL) return new URL('./', SCRIPT_URL).href;
  if (typeof document !== 'undefined' && document.currentScript && document.currentScript.src) {
    return new URL('./', document.currentScript.src).href;
  }
  // Workers: importScripts() gives no currentScript; the stack names this file.
  const stack = String(new Error().stack || '');
  const match = stack.match(/(https?:\/\/[^\s()]+?\/)[^/\s()]*webnn-polyfill[^/\s()]*\.m?js/);
  if (match) return match[1];
  return new URL('./', globalThis.location.href).href;
}

export const RUNTIME_BASE = scriptBase();
export const IS_SERVICE_WORKER = typeof ServiceWorkerGlobalScope !== 'undefined' && globalThis instanceof ServiceWorkerGlobalScope;
export const IS_CLASSIC_WORKER = typeof WorkerGlobalScope !== 'undefined' && typeof importScripts === 'function';

// Filled in while the engine starts (engine.js, simd.js).
export const ENGINE_STATS = { startMs: null, snapshot: null };
