// The engine: Pyodide + numpy + the webnn_core wheel, loaded lazily (never at
// script load, except in service workers, where Pyodide's scripts can only be
// imported synchronously during the worker's first evaluation).

import { CORE_WHEEL, PYODIDE_VERSION } from './build_info.js';
import { CONFIG, ENGINE_STATS, IS_CLASSIC_WORKER, IS_SERVICE_WORKER, RUNTIME_BASE } from './config.js';
import { simdAttach } from './simd.js';
import {
  SavedDOMException, SavedUint8Array, jsonParse, typedArrayBuffer, typedArraySet,
} from './intrinsics.js';
import { encodeJson } from './webidl.js';

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

// A page whose Content-Security-Policy forbids compiling WebAssembly would make
// Pyodide's start wait forever (it only logs the failed instantiation): fail
// at once, saying what the policy needs.
const EMPTY_WASM_MODULE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);

function checkWasmAllowed() {
  try {
    new WebAssembly.Module(EMPTY_WASM_MODULE);
  } catch (e) {
    throw new Error("this page may not compile WebAssembly: its Content-Security-Policy must allow 'wasm-unsafe-eval' "
      + "(e.g. script-src 'self' 'wasm-unsafe-eval')");
  }
}

async function startEngine() {
  const started = performance.now();
  checkWasmAllowed();
  if (typeof globalThis.loadPyodide !== 'function') {
    const url = RUNTIME_BASE + 'pyodide.js';
    if (typeof document !== 'undefined') await loadScriptTag(url);
    else if (IS_CLASSIC_WORKER) importScripts(url);
    else globalThis.loadPyodide = (await import(RUNTIME_BASE + 'pyodide.mjs')).loadPyodide;
  }
  const pyodide = await loadInterpreter();
  const quiet = CONFIG.debug ? console.log : () => {};
  await pyodide.loadPackage(['numpy', RUNTIME_BASE + CORE_WHEEL], { messageCallback: quiet, errorCallback: console.error });
  const bridge = pyodide.pyimport('webnn_core.bridge');
  const module = pyodide._module;
  // Bytes into the engine: one copy from the page's buffer into the wasm heap
  // (HEAPU8 is replaced when the heap grows: always take the current one).
  bridge.set_heap_writer((source, address) => typedArraySet(module.HEAPU8, source, address));
  await simdAttach(pyodide);
  ENGINE_STATS.startMs = performance.now() - started;
  return { pyodide, call: bridge.call, heap: () => module.HEAPU8 };
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
  return new SavedDOMException(message, name);
}

// Call into webnn_core.bridge and return its whole reply ({ok} or, for byte
// results, {bytes: [address, length], pin?}). `args` are JSON-able (objects
// with handles are passed as {$o: handle}, records as NamedRecord); `data` an
// optional Uint8Array the engine copies once. Throws the mapped error.
export function pyReply(method, args, data) {
  const reply = jsonParse(ENGINE.call(method, encodeJson(args), data));
  if (reply.error) throw toJsError(reply.error);
  return reply;
}

// The same, returning the result: for byte results a Uint8Array copy.
export function py(method, args, data) {
  const reply = pyReply(method, args, data);
  return reply.bytes ? copyFromHeap(reply.bytes) : reply.ok;
}

// The engine's bytes at [address, address + length) of the wasm heap. Addresses
// are unsigned JS numbers: right anywhere in a 4 GiB heap.
export function heapView([address, length]) {
  return new SavedUint8Array(typedArrayBuffer(ENGINE.heap()), address, length);
}

export function copyFromHeap(location) {
  const out = new SavedUint8Array(location[1]);
  typedArraySet(out, heapView(location));
  return out;
}

export function ref(handle) {
  return { $o: handle };
}
