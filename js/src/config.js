// The polyfill's configuration (page-set WEBNN_POLYFILL_CONFIG over defaults),
// where the runtime files are, what kind of global this is, and the engine's
// start-up statistics (shown as webnnPolyfill.engineStats).

import { SCRIPT_URL } from './build_info.js';

// The timeline worker (js/src/timeline.js) is this script, started by a page in a
// dedicated worker of this name; the page's configuration rides in the name (a
// worker has no WEBNN_POLYFILL_CONFIG of its own, and the name is there before any
// message).
export const TIMELINE_HOST_NAME = 'webnn-polyfill-timeline';
export const IS_TIMELINE_HOST = typeof DedicatedWorkerGlobalScope !== 'undefined'
  && globalThis instanceof DedicatedWorkerGlobalScope && typeof globalThis.name === 'string'
  && globalThis.name.startsWith(`${TIMELINE_HOST_NAME} `);

function hostConfig() {
  try {
    return JSON.parse(globalThis.name.slice(TIMELINE_HOST_NAME.length + 1));
  } catch (e) {
    return {};
  }
}

export const CONFIG = Object.assign(
  { runtimeBase: null, replaceNative: false, debug: false, fastPaths: true,
    // Kernel threads of the cpu backend (null: navigator.hardwareConcurrency); more
    // than one needs a cross-origin isolated page (engineStats.threads says what runs).
    threads: null,
    // webgpu: false keeps gpu contexts on the cpu kernels even where WebGPU works.
    webgpu: true,
    // webgpuConv2d: the webgpu planner's conv2d kernel, 'auto' (tiled implicit GEMM for
    // groups of >= 16 output channels, else direct), 'tiled' or 'direct' (benchmarks).
    webgpuConv2d: 'auto',
    // startup.js: engine snapshots (Cache Storage; buildSnapshot: the one served
    // beside the runtime: 'auto' fetches it where the connection makes it pay,
    // true always, false never), fetching the runtime at script load, progress callback.
    snapshot: true, buildSnapshot: 'auto', prefetch: true, onProgress: null,
    // timeline: where a window's contexts execute. 'worker': graphs, tensors and their
    // data live in a dedicated worker this script starts (dispatch() and writeTensor()
    // return at once; the page keeps building and validating); 'page': on the page's
    // own thread, as in a worker scope (docs/architecture.md, "The timeline worker").
    timeline: 'worker',
    // How long a thread waiting for the other side of the timeline worker may spin
    // instead of sleeping, where its last such wait was shorter (js/src/spin.js); 0: never.
    timelineSpinMs: 0.5 },
  globalThis.WEBNN_POLYFILL_CONFIG || {}, IS_TIMELINE_HOST ? hostConfig() : {});

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

// This script's own URL, for the timeline worker: the ES-module build knows it; a
// classic script is document.currentScript while it runs. Only a file named like the
// polyfill's: a page's own bundle that includes the polyfill must not run in a worker.
function ownScript() {
  if (CONFIG.timelineScript) return { url: new URL(CONFIG.timelineScript, globalThis.location.href).href, type: SCRIPT_URL ? 'module' : 'classic' };
  const polyfillFile = /\/webnn-polyfill[^/]*\.m?js(\?[^#]*)?(#.*)?$/;
  if (SCRIPT_URL) return polyfillFile.test(SCRIPT_URL) ? { url: SCRIPT_URL, type: 'module' } : null;
  const current = typeof document !== 'undefined' && document.currentScript && document.currentScript.src;
  return current && polyfillFile.test(current) ? { url: current, type: 'classic' } : null;
}
export const OWN_SCRIPT = ownScript();
export const IS_WINDOW = typeof Window !== 'undefined' && globalThis instanceof Window && typeof document !== 'undefined';
export const IS_SERVICE_WORKER = typeof ServiceWorkerGlobalScope !== 'undefined' && globalThis instanceof ServiceWorkerGlobalScope;
// A module worker has importScripts too (it throws there): the ES-module build (it knows
// its own URL) in a worker is in a module worker, e.g. the timeline worker it starts.
export const IS_CLASSIC_WORKER = typeof WorkerGlobalScope !== 'undefined' && typeof importScripts === 'function' && !SCRIPT_URL;

// Read once at script load (never the page's later globals).
export const HARDWARE_CONCURRENCY = Math.max(1, Number(globalThis.navigator && globalThis.navigator.hardwareConcurrency) || 1);
const CROSS_ORIGIN_ISOLATED = globalThis.crossOriginIsolated === true;

// Kernel threads: what the configuration asks for, what runs, and why not more.
// simd.js fills in `active` and `reason` when it starts (or cannot start) the
// kernel pool (js/src/kernel_pool.js, docs/threads.md).
function threadStats() {
  const requested = Number.isInteger(CONFIG.threads) && CONFIG.threads > 0 ? CONFIG.threads : HARDWARE_CONCURRENCY;
  const reason = 'single-threaded: the engine has not started';
  return { requested, active: 1, crossOriginIsolated: CROSS_ORIGIN_ISOLATED, hardwareConcurrency: HARDWARE_CONCURRENCY, reason };
}

// Filled in while the engine starts (engine.js, simd.js).
export const ENGINE_STATS = { startMs: null, snapshot: null, threads: threadStats() };
