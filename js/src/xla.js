// XLA / StableHLO programs on the polyfill's own namespace (like loadNNEF):
//
//   const {graph, inputs, outputs} = await webnnPolyfill.loadStableHLO(context, text, {weights});
//
// `text`: the MLIR text JAX prints (`jax.jit(f).lower(*args).as_text()`, pretty or
// generic form) as a string, an ArrayBuffer / typed array / Blob of it, or a URL
// object to fetch it from. `options.weights` (optional) turns parameters into
// constants: an .npz file (ArrayBuffer / typed array / Blob, or a URL object or
// URL string ending in .npz) whose keys are arg<i>, or an object
// {arg<i>: {shape, data: TypedArray, dataType?}}.
// Inputs are positional: parameter i of @main is the graph input `arg<i>`; result i
// is the output `result<i>`. `graph` is an MLGraph for `context.dispatch()`;
// `inputs`/`outputs` map names to {dataType, shape}. Errors reject with the core's
// typed errors: SyntaxError (malformed text), DataError (an invalid program or
// weights) and NotSupportedError (operations WebNN cannot express), each message
// starting with line:column. The grammar library (lark, a verified wheel beside
// the runtime) is loaded on the first call.

import { INTERNAL, encodeJson } from './webidl.js';
import { LARK_WHEEL } from './build_info.js';
import { ENGINE, py, ref } from './engine.js';
import { fetchVerified } from './startup.js';
import { MLGraph, released, sendGraph, slotOf, slots } from './api.js';

const XLA_TYPED = [
  ['float32', Float32Array], ['int32', Int32Array], ['uint32', Uint32Array], ['int8', Int8Array],
  ['uint8', Uint8Array], ['float64', Float64Array],
];
let larkLoaded = null;

async function xlaBytes(value, what) {
  if (typeof Blob !== 'undefined' && value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  if ((typeof URL !== 'undefined' && value instanceof URL) || typeof value === 'string') {
    const url = new URL(String(value), globalThis.location ? globalThis.location.href : undefined);
    const response = await fetch(url.href);
    if (!response.ok) throw new DOMException(`loadStableHLO: fetching ${url.href} failed (HTTP ${response.status})`, 'NetworkError');
    return new Uint8Array(await response.arrayBuffer());
  }
  throw new TypeError(`loadStableHLO: ${what} must be an ArrayBuffer, a typed array, a Blob or a URL`);
}

// -> [kind, manifest, bytes]: kind 'npz' (one buffer) or 'arrays' ([[name, dataType, shape, offset, length]])
async function xlaWeights(weights) {
  if (weights === undefined || weights === null) return ['none', [], new Uint8Array(0)];
  const isUrlString = typeof weights === 'string';
  if (isUrlString || weights instanceof ArrayBuffer || ArrayBuffer.isView(weights) ||
      (typeof Blob !== 'undefined' && weights instanceof Blob) || (typeof URL !== 'undefined' && weights instanceof URL)) {
    return ['npz', [], await xlaBytes(weights, 'options.weights')];
  }
  if (typeof weights !== 'object') throw new TypeError('loadStableHLO: options.weights must be an .npz or an object');
  const manifest = [];
  const parts = [];
  let total = 0;
  for (const [name, entry] of Object.entries(weights)) {
    if (!entry || !ArrayBuffer.isView(entry.data) || !Array.isArray(entry.shape)) {
      throw new TypeError(`loadStableHLO: weights.${name} must be {shape, data: TypedArray}`);
    }
    const match = XLA_TYPED.find(([, T]) => entry.data instanceof T);
    const dataType = entry.dataType !== undefined ? String(entry.dataType) : (match ? match[0] : null);
    if (!dataType) throw new TypeError(`loadStableHLO: weights.${name}: unsupported typed array`);
    const bytes = new Uint8Array(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength);
    manifest.push([name, dataType, entry.shape.map(Number), total, bytes.byteLength]);
    parts.push(bytes);
    total += bytes.byteLength;
  }
  const data = new Uint8Array(total);
  let offset = 0;
  for (const p of parts) { data.set(p, offset); offset += p.byteLength; }
  return ['arrays', manifest, data];
}

// The grammar library: fetched beside the runtime, checked against the sha256 this
// build baked in (like every runtime file), unpacked into site-packages once.
async function loadLark() {
  let bytes;
  try {
    bytes = await fetchVerified(LARK_WHEEL);
  } catch (e) {
    throw new DOMException(`loadStableHLO: ${e && e.message}`, 'NotSupportedError');
  }
  const pyodide = ENGINE.pyodide;
  const path = `/tmp/${LARK_WHEEL}`;
  pyodide.FS.writeFile(path, bytes);
  // (invalidate_path_caches: importlib.invalidate_caches() without its import of
  // importlib.metadata, which is not in the first-visit stdlib archive.)
  pyodide.runPython(`import sysconfig, zipfile
from webnn_core.ondemand import invalidate_path_caches
with zipfile.ZipFile(${encodeJson(path)}) as z:
    z.extractall(sysconfig.get_paths()["purelib"])
invalidate_path_caches()`);
  pyodide.FS.unlink(path);
}

export async function loadStableHLO(context, text, options) {
  const c = slotOf(context, 'MLContext', 'loadStableHLO: context');
  if (c.destroyed) throw new DOMException('loadStableHLO: the context is destroyed', 'InvalidStateError');
  if (options !== undefined && options !== null && typeof options !== 'object') {
    throw new TypeError('loadStableHLO: options must be an object');
  }
  const source = typeof text === 'string' ? text : new TextDecoder().decode(await xlaBytes(text, 'text'));
  const [kind, manifest, data] = await xlaWeights(options ? options.weights : undefined);
  if (!larkLoaded) larkLoaded = loadLark().catch((e) => { larkLoaded = null; throw e; });
  await larkLoaded;
  const r = py('xla_load', [ref(c.handle), source, kind, manifest], data);
  const graph = new MLGraph(INTERNAL);
  slots.set(graph, { kind: 'MLGraph', handle: r.graph, context: c, inputs: r.allInputs, outputs: r.outputs, destroyed: false });
  released.register(graph, ['release', r.graph, c.remote]);
  if (c.remote) await sendGraph(c, slots.get(graph));  // a context in the timeline worker (js/src/timeline.js)
  return { graph, inputs: r.inputs, outputs: r.outputs };
}
