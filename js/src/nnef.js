// NNEF models on the polyfill's own namespace (not on navigator.ml):
//
//   const {graph, inputs, outputs} = await webnnPolyfill.loadNNEF(context, source, options);
//   const {text, archive} = await webnnPolyfill.exportNNEF(graph, {name: 'G'});
//   const {text, archive} = await webnnPolyfill.exportNNEF(graph, {name: 'G', version: '2.0'});  // SkriptND
//
// `source`: a URL (string or URL) of a .tgz/.tar archive, of a graph.nnef (its
// .dat files are fetched from beside it) or of a folder ending in '/'; an
// ArrayBuffer / typed array / Blob holding an archive (or graph.nnef text); a
// FileList or array of File (a folder picked with webkitdirectory); or an object
// {relativePath: ArrayBuffer | typed array | Blob | string}.
// `options`: {gelu: 'nnef' | 'exact', variables: 'auto' | 'constant' | 'state',
// quantization: boolean}; for NNEF 2.0 (SkriptND: main.sknd, told apart from 1.0 by
// content in the core) also {graph: name, attrs: {name: value}}. The result's `graph` is an MLGraph for
// `context.dispatch()`; `inputs`/`outputs` map names to {dataType, shape}.
// Errors reject with the core's typed errors: SyntaxError (grammar), DataError
// (semantics, tensor files) and NotSupportedError (operations WebNN cannot express),
// each message starting with file:line:column.

import { INTERNAL, encodeJson } from './webidl.js';
import { jsonParse } from './intrinsics.js';
import { py, ref } from './engine.js';
import { MLGraph, released, sendGraph, slotOf, slots } from './api.js';

const NNEF_ARCHIVE = /\.(tgz|tar\.gz|tar)$/i;

async function nnefBytes(value) {
  if (typeof value === 'string') return new TextEncoder().encode(value);
  if (typeof Blob !== 'undefined' && value instanceof Blob) return new Uint8Array(await value.arrayBuffer());
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError('loadNNEF: a file must be an ArrayBuffer, a typed array, a Blob or a string');
}

async function nnefFetch(url, optional) {
  const response = await fetch(url);
  if (!response.ok) {
    if (optional) return null;
    throw new DOMException(`loadNNEF: fetching ${url} failed (HTTP ${response.status})`, 'NetworkError');
  }
  return new Uint8Array(await response.arrayBuffer());
}

// -> [[path, Uint8Array], ...]
async function nnefCollect(source) {
  if (typeof source === 'string' || (typeof URL !== 'undefined' && source instanceof URL)) {
    const url = new URL(String(source), globalThis.location ? globalThis.location.href : undefined);
    if (NNEF_ARCHIVE.test(url.pathname)) return [[url.pathname.split('/').pop(), await nnefFetch(url.href)]];
    const base = url.pathname.endsWith('/') ? url.href : new URL('./', url.href).href;
    const folder = url.pathname.endsWith('/');
    // a folder holds graph.nnef (NNEF 1.0) or main.sknd (NNEF 2.0)
    let mainName = url.pathname.endsWith('.sknd') ? 'main.sknd' : 'graph.nnef';
    let graphBytes = await nnefFetch(folder ? new URL('graph.nnef', base).href : url.href, folder);
    if (graphBytes === null) {
      mainName = 'main.sknd';
      graphBytes = await nnefFetch(new URL('main.sknd', base).href);
    }
    const needed = py('nnef_required_files', [new TextDecoder().decode(graphBytes)]);
    const entries = [[mainName, graphBytes]];
    const fetched = await Promise.all(needed.map((p) => nnefFetch(new URL(p, base).href)));
    needed.forEach((p, i) => entries.push([p, fetched[i]]));
    const quant = await nnefFetch(new URL('graph.quant', base).href, true);
    if (quant) entries.push(['graph.quant', quant]);
    return entries;
  }
  const isFileList = typeof FileList !== 'undefined' && source instanceof FileList;
  if (isFileList || Array.isArray(source)) {
    const files = Array.from(source);
    return Promise.all(files.map(async (f) => [f.webkitRelativePath || f.name, await nnefBytes(f)]));
  }
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source) || (typeof Blob !== 'undefined' && source instanceof Blob)) {
    const name = (typeof File !== 'undefined' && source instanceof File) ? source.name : 'model.tgz';
    return [[name, await nnefBytes(source)]];
  }
  if (source !== null && typeof source === 'object') {
    return Promise.all(Object.entries(source).map(async ([p, v]) => [p, await nnefBytes(v)]));
  }
  throw new TypeError('loadNNEF: source must be a URL, an archive, a FileList or a {path: data} object');
}

export async function loadNNEF(context, source, options) {
  const c = slotOf(context, 'MLContext', 'loadNNEF: context');
  if (c.destroyed) throw new DOMException('loadNNEF: the context is destroyed', 'InvalidStateError');
  const opts = {};
  if (options !== undefined && options !== null) {
    if (typeof options !== 'object') throw new TypeError('loadNNEF: options must be an object');
    for (const key of ['gelu', 'variables']) if (options[key] !== undefined) opts[key] = String(options[key]);
    if (options.quantization !== undefined) opts.quantization = !!options.quantization;
    if (options.graph !== undefined) opts.graph = String(options.graph);
    if (options.attrs !== undefined && options.attrs !== null) {
      if (typeof options.attrs !== 'object') throw new TypeError('loadNNEF: options.attrs must be an object');
      opts.attrs = jsonParse(encodeJson(options.attrs));  // a plain copy, without the page's JSON or toJSON
    }
  }
  const entries = await nnefCollect(source);
  let total = 0;
  const manifest = entries.map(([path, bytes]) => {
    const item = [path, total, bytes.byteLength];
    total += bytes.byteLength;
    return item;
  });
  const data = new Uint8Array(total);
  for (const [i, [, bytes]] of entries.entries()) data.set(bytes, manifest[i][1]);
  const r = py('nnef_load', [ref(c.handle), manifest, opts], data);
  const graph = new MLGraph(INTERNAL);
  slots.set(graph, { kind: 'MLGraph', handle: r.graph, context: c, inputs: r.allInputs, outputs: r.outputs, destroyed: false });
  released.register(graph, ['release', r.graph, c.remote]);
  if (c.remote) await sendGraph(c, slots.get(graph));  // a context in the timeline worker (js/src/timeline.js)
  return { graph, name: r.name, version: r.version || '1.0', inputs: r.inputs, outputs: r.outputs, state: r.state };
}

export async function exportNNEF(graph, options) {
  const g = slotOf(graph, 'MLGraph', 'exportNNEF: graph');
  if (g.destroyed) throw new DOMException('exportNNEF: the graph is destroyed', 'InvalidStateError');
  const name = options && options.name !== undefined ? String(options.name) : 'G';
  const version = options && options.version !== undefined ? String(options.version) : '1.0';
  if (version !== '1.0' && version !== '2.0') throw new TypeError(`exportNNEF: version must be '1.0' or '2.0', got '${version}'`);
  const remote = g.context && g.context.remote;
  if (remote) {
    // A graph of a context in the timeline worker: the page's copy holds no constants
    // (js/src/timeline.js); the worker's graph, the same graph, exports them.
    const ask = (method) => remote.client.request(['debug', 0, g.handle, method, [name, version]]);
    const info = await ask('nnef_export');
    const archive = await ask('nnef_export_archive');
    return { text: info.text, files: info.files, names: info.mapping, archive };
  }
  const info = py('nnef_export', [ref(g.handle), name, version]);
  const archive = py('nnef_export_archive', [ref(g.handle), name, version]);
  return { text: info.text, files: info.files, names: info.mapping, archive };
}
