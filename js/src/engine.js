// The engine: Pyodide + numpy + the webnn_core wheel. Its files are fetched
// from script load (startup.js; `prefetch: false` defers that to the first
// createContext()); it starts at the first createContext(). Service workers
// import Pyodide's scripts during their first evaluation, as they cannot
// importScripts() later.

import { CONFIG, ENGINE_STATS, IS_SERVICE_WORKER, RUNTIME_BASE } from './config.js';
import { simdAttach } from './simd.js';
import { engineReady, forgetPrefetch, markTime, reportProgress, startRuntime, wasmCompileAllowed } from './startup.js';
import {
  SavedDOMException, SavedUint8Array, charCodeAt, decodeUtf8, encodeInto, jsonParse, now, reflectApply, stringIndexOf,
  stringSlice, typedArrayBuffer, typedArrayByteLength, typedArraySet,
} from './intrinsics.js';
import { encodeJson } from './webidl.js';
import { runDeviceCommands } from './webgpu.js';

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

// A page whose Content-Security-Policy forbids compiling WebAssembly would make
// Pyodide's start wait forever (a failed instantiation is only logged): fail
// at once, saying what the policy needs. The probe instantiates, as the start
// does: WebKit lets compiling (`new WebAssembly.Module`, `WebAssembly.compile`)
// through under such a policy and refuses only the instantiation.
async function checkWasmAllowed() {
  if (!(await wasmCompileAllowed())) {
    throw new Error("this page may not compile WebAssembly: its Content-Security-Policy must allow 'wasm-unsafe-eval' "
      + "(e.g. script-src 'self' 'wasm-unsafe-eval')");
  }
}

async function startEngine() {
  const started = performance.now();
  await checkWasmAllowed();
  const pyodide = await startRuntime();
  const bridge = pyodide.pyimport('webnn_core.bridge');
  const module = pyodide._module;
  // Bytes into the engine: one copy from the page's buffer into the wasm heap,
  // at the address the engine asks for (HEAPU8 is replaced when the heap
  // grows: always take the current one).
  bridge.set_heap_writer((address) => typedArraySet(module.HEAPU8, pendingSource, address));
  // A long payload: its UTF-8 bytes straight into the array the engine allocated (bridge.call_text).
  bridge.set_text_writer((address, length) => {
    encodeInto(pendingText, new SavedUint8Array(typedArrayBuffer(module.HEAPU8), address, length));
  });
  markTime('bridge');
  await simdAttach(pyodide);
  markTime('simd');
  bridge.freeze_startup_objects();  // after everything the engine keeps for its lifetime
  ENGINE_STATS.startMs = performance.now() - started;
  reportProgress('ready');
  engineReady();  // now the snapshot may be stored
  return {
    pyodide, call: bridge.call, callText: bridge.call_text, heap: () => module.HEAPU8,
    // The hot calls with numbers only (bridge.write_fast, dispatch_fast, read_fast, release).
    writeFast: bridge.write_fast, dispatchFast: bridge.dispatch_fast, runFast: bridge.run_fast, readFast: bridge.read_fast,
    releaseFast: bridge.release,
    readReply: bridge.read_reply_address(),
  };
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

// The bytes of the call in progress (pyReply's `data`). Only their length
// crosses into the engine; once it has checked the size and allocated the
// array that keeps them, it calls the heap writer with that array's address.
// No proxy of the page's array is made (each costs far more than a copy of a
// small tensor).
let pendingSource = null;

function toJsError([name, message, detail]) {
  if (detail && CONFIG.debug) console.error(detail);
  if (name === 'TypeError') return new TypeError(message);
  return new SavedDOMException(message, name);
}

// The long payload of the call in progress (bridge.call_text), written by the text writer.
let pendingText = null;
// Payloads longer than this (characters) cross as UTF-8 bytes in the heap (bridge.LONG_TEXT):
// Pyodide's string conversion fails past ~2**27 code points (a RangeError: it makes an array
// of them) and is slow long before. Shorter payloads are ASCII (webidl.js RAW_JSON_STRING).
const LONG_TEXT = 1 << 14;

function utf8Length(text) {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = charCodeAt(text, i);
    if (c >= 0x80) n += c < 0x800 || (c >= 0xd800 && c <= 0xdfff) ? 1 : 2;  // a surrogate pair: 4 bytes
  }
  return n;
}

// A failure of the crossing itself, not an error the engine replied with: Pyodide's
// conversions or a JS allocation running out of memory (a RangeError, a PythonError
// wrapping one). The page gets the spec's UnknownError, never Python's text.
function crossingFailed(method, e) {
  if (e && CONFIG.debug) console.error(e);
  const what = e && typeof e.name === 'string' && e.name !== 'PythonError' ? ` (${e.name})` : '';
  return new SavedDOMException(`${method}: the call could not cross into the WebNN engine, most likely for lack of memory${what}`,
    'UnknownError');
}

// ENGINE.call with the JSON text of the arguments and, with `data`, the length of
// the bytes the engine copies during the call; a long payload through the heap.
function engineCall(method, args, data) {
  let payload;
  try {
    payload = encodeJson(args);
    pendingSource = data === undefined || data === null ? null : data;
    const nbytes = pendingSource === null ? undefined : typedArrayByteLength(data);
    if (payload.length <= LONG_TEXT) return ENGINE.call(method, payload, nbytes);
    pendingText = payload;
    return ENGINE.callText(method, utf8Length(payload), nbytes);
  } catch (e) {
    throw crossingFailed(method, e);
  } finally {
    pendingSource = null;
    pendingText = null;
  }
}

// Call into webnn_core.bridge and return its whole reply ({ok} or, for byte
// results, {bytes: [address, length], pin?}). `args` are JSON-able (objects
// with handles are passed as {$o: handle}, records as NamedRecord); `data` an
// optional Uint8Array the engine copies once, during this call. Throws the mapped error.
export function pyReply(method, args, data) {
  const started = now();
  const text = engineCall(method, args, data);
  countEngineCall(started);
  return replyOf(text, method);
}

// engineStats.engine: calls through the general bridge (builder calls, build,
// createContext, ...; not the hot write/dispatch/read calls) and the wall time
// spent inside them (Python and the crossing, not the JS conversions around
// them), for benchmarks that split a client's time (tools/bench_ort).
const ENGINE_CALLS = { calls: 0, ms: 0 };
ENGINE_STATS.engine = ENGINE_CALLS;

function countEngineCall(started) {
  ENGINE_CALLS.calls++;
  ENGINE_CALLS.ms += now() - started;
}

// A call whose result the engine formats as JSON text itself (bridge._Json, e.g.
// op_support_limits): that text, unparsed, for a caller that keeps it and parses
// its own copies. Any other reply (an error, device commands) is handled as
// pyReply does and its result encoded again.
export function pyResultText(method, args) {
  const started = now();
  const text = replyText(engineCall(method, args), method);
  countEngineCall(started);
  if (stringSlice(text, 0, 6) === '{"ok":') return stringSlice(text, 6, -1);  // bridge.call's direct form
  return encodeJson(replyOf(text, method).ok);
}

// The reply's JSON text: a long one ("@address,length", bridge._long_reply) decoded
// from the engine's heap now, before the next call frees it.
function replyText(text, method) {
  if (charCodeAt(text, 0) !== 0x40) return text;
  try {
    const comma = stringIndexOf(text, ',');
    return decodeUtf8(heapView([+stringSlice(text, 1, comma), +stringSlice(text, comma + 1)]));
  } catch (e) {
    throw crossingFailed(method, e);
  }
}

function replyOf(raw, method) {
  const text = replyText(raw, method);
  let reply;
  try {
    reply = jsonParse(text);
  } catch (e) {  // only a reply too large for this page's memory
    throw crossingFailed(method, e);
  }
  // Device commands (webgpu contexts) run now, before the next call reuses the memory they point into.
  if (reply.gpu) runDeviceCommands(reply.gpu, ENGINE.heap);
  if (reply.error) throw toJsError(reply.error);
  return reply;
}

// The hot calls, with handles and lengths as numbers (no JSON either way): the
// engine answers nothing when done, else the reply `pyReply` would have had
// (an error is thrown the same way, device commands run the same way).
export function writeTensorFast(contextHandle, tensorHandle, data) {
  let text;
  pendingSource = data;
  try {
    text = ENGINE.writeFast(contextHandle, tensorHandle, typedArrayByteLength(data));
  } catch (e) {
    throw crossingFailed('writeTensor', e);
  } finally {
    pendingSource = null;
  }
  if (text !== undefined) replyOf(text, 'writeTensor');
}

// `handles`: the bound tensors in the order of the graph's inputNames, then outputNames.
// `checked`: the call was checked already, by the page's shadow context (the timeline
// worker: bridge.run_fast).
export function dispatchFast(contextHandle, graphHandle, handles, checked = false) {
  const args = [contextHandle, graphHandle];
  for (let i = 0; i < handles.length; i++) args[i + 2] = handles[i];
  let text;
  try {
    text = reflectApply(checked ? ENGINE.runFast : ENGINE.dispatchFast, undefined, args);
  } catch (e) {
    throw crossingFailed('dispatch', e);
  }
  if (text !== undefined) replyOf(text, 'dispatch');
}

// A read: the reply `pyReply` gives, {bytes: [address, length]} taken from the
// engine's READ_REPLY words when the engine answered nothing. `pin` (a read into
// the page's buffer, copied when it settles): the bytes stay in the engine under
// the reply's `pin` handle until releasePin(pin).
export function readTensorFast(contextHandle, tensorHandle, pin) {
  let text;
  try {
    text = ENGINE.readFast(contextHandle, tensorHandle, pin ? 1 : 0);
  } catch (e) {
    throw crossingFailed('readTensor', e);
  }
  if (text !== undefined) return replyOf(text, 'readTensor');
  const heap = ENGINE.heap();
  const p = ENGINE.readReply;
  const reply = { ok: null, bytes: [u32(heap, p), u32(heap, p + 8)] };
  if (pin) reply.pin = u32(heap, p + 16);
  return reply;
}

export function releasePin(pin) {
  ENGINE.releaseFast(pin);
}

function u32(heap, p) {
  return (heap[p] | (heap[p + 1] << 8) | (heap[p + 2] << 16) | (heap[p + 3] << 24)) >>> 0;
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
  let out;
  try {
    out = new SavedUint8Array(location[1]);
  } catch (e) {  // the page's memory is exhausted: the spec's UnknownError, not a RangeError
    throw new SavedDOMException(`could not allocate ${location[1]} bytes for the result`, 'UnknownError');
  }
  typedArraySet(out, heapView(location));
  return out;
}

export function ref(handle) {
  return { $o: handle };
}
