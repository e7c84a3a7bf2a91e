// The engine: Pyodide + numpy + the webnn_core wheel, loaded lazily (never at
// script load, except in service workers, where Pyodide's scripts can only be
// imported synchronously during the worker's first evaluation).

import { CORE_WHEEL, PYODIDE_VERSION } from './build_info.js';
import { CONFIG, ENGINE_STATS, IS_CLASSIC_WORKER, IS_SERVICE_WORKER, RUNTIME_BASE } from './config.js';
import { simdAttach, simdBeforeEngineLoad } from './simd.js';

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

function loadScriptTag(url) {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = url;
    s.onload = resolve;
    s.onerror = () => reject(new Error(`webnn-polyfill: failed to load ${url}`));
    document.head.appendChild(s);
  });
}

async function startEngine() {
  const started = performance.now();
  if (typeof globalThis.loadPyodide !== 'function') {
    const url = RUNTIME_BASE + 'pyodide.js';
    if (typeof document !== 'undefined') await loadScriptTag(url);
    else if (IS_CLASSIC_WORKER) importScripts(url);
    else globalThis.loadPyodide = (await import(RUNTIME_BASE + 'pyodide.mjs')).loadPyodide;
  }
  simdBeforeEngineLoad();
  const pyodide = await loadInterpreter();
  const quiet = CONFIG.debug ? console.log : () => {};
  await pyodide.loadPackage(['numpy', RUNTIME_BASE + CORE_WHEEL], { messageCallback: quiet, errorCallback: console.error });
  const bridge = pyodide.pyimport('webnn_core.bridge');
  await simdAttach(pyodide);
  ENGINE_STATS.startMs = performance.now() - started;
  return { pyodide, call: bridge.call };
}

// Python's own start-up is the slowest part of the engine start. After the
// first start in a browser profile, the freshly initialised interpreter's
// memory is kept in Cache Storage and later starts restore it (Pyodide's
// memory snapshots; taken before any package loads, as Pyodide requires).
// Anything unusual (no Cache Storage, quota, a snapshot from another build)
// falls back to a normal start. `snapshot: false` in the config turns it off.
const SNAPSHOT_CACHE = 'webnn-polyfill-engine';
const SNAPSHOT_KEY = () => `${RUNTIME_BASE}interpreter-${PYODIDE_VERSION}.snapshot`;

async function snapshotCache() {
  if (!CONFIG.snapshot || typeof caches === 'undefined') return null;
  try {
    return await caches.open(SNAPSHOT_CACHE);
  } catch (e) {
    return null;  // e.g. an opaque origin or storage disabled
  }
}

async function loadInterpreter() {
  const options = { indexURL: RUNTIME_BASE, fullStdLib: false };
  const cache = await snapshotCache();
  if (cache) {
    try {
      const hit = await cache.match(SNAPSHOT_KEY());
      if (hit) {
        const pyodide = await globalThis.loadPyodide({ ...options, _loadSnapshot: new Uint8Array(await hit.arrayBuffer()) });
        ENGINE_STATS.snapshot = 'restored';
        return pyodide;
      }
    } catch (e) {
      if (CONFIG.debug) console.warn('webnn-polyfill: engine snapshot unusable, starting normally:', e);
      await cache.delete(SNAPSHOT_KEY()).catch(() => {});
    }
  }
  const pyodide = await globalThis.loadPyodide({ ...options, _makeSnapshot: !!cache });
  ENGINE_STATS.snapshot = cache ? 'created' : 'off';
  if (cache) {
    try {
      await cache.put(SNAPSHOT_KEY(), new Response(pyodide.makeMemorySnapshot()));
    } catch (e) {
      ENGINE_STATS.snapshot = 'failed';
      if (CONFIG.debug) console.warn('webnn-polyfill: could not store the engine snapshot:', e);
    }
  }
  return pyodide;
}

export function engine() {
  if (!enginePromise) {
    enginePromise = startEngine().then((started) => {
      ENGINE = started;
      return started;
    }, (e) => {
      enginePromise = null;  // allow a retry, e.g. after the network comes back
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
