// Engine start-up: fetching and verifying the runtime, load progress, and the
// engine snapshot.
//
// - Every runtime file (Pyodide's scripts, wasm, stdlib and lock file, the
//   numpy and core wheels, the build-time snapshot) is checked against the
//   sha256 baked into this script by tools/build.py (RUNTIME_MANIFEST) before
//   it runs; a mismatch fails createContext() naming the file.
// - The fetches start when this script loads (CONFIG.prefetch: false waits
//   for the first createContext()), and their progress is reported to pages
//   (webnnPolyfill.addEventListener('progress', ...) / CONFIG.onProgress).
// - Python's initialisation and numpy's import are most of a start. The
//   engine's memory is snapshotted after numpy and webnn_core are imported and
//   kept in Cache Storage; later starts restore it (docs/performance.md). A
//   snapshot made at build time beside the runtime serves first visits. Any
//   failure or mismatch falls back to a normal start.
//
// Pyodide cannot snapshot loaded packages (their wasm code and function-table
// slots are not in linear memory). Emscripten 3.1.58 (Pyodide 0.27.x) records
// a side module's memory and table bases in its dlopen handle, which lives in
// linear memory, and re-instantiates at those bases when the handle is marked
// loaded. So numpy's .so files are loaded here with handles we allocate, and a
// restore re-instantiates each at its recorded bases before any Python runs,
// puts back its data (instantiation re-applies its data segments), and
// re-registers it with the dynamic linker; the function-table length is
// checked after each, and any difference falls back to a normal start.

import { POLYFILL_VERSION, PYODIDE_VERSION, RUNTIME_MANIFEST } from './build_info.js';
import { CONFIG, ENGINE_STATS, IS_CLASSIC_WORKER, IS_SERVICE_WORKER, RUNTIME_BASE } from './config.js';
import { checkZeroPages, elideZeroPages, restoreZeroPages } from './snapshot_pages.js';
import { storedZipMembers } from './stored_zip.js';
// The page may have replaced JSON (or added toJSON to prototypes): never use its.
import { jsonParse, savedWebAssembly } from './intrinsics.js';
import { encodeJson } from './webidl.js';

// bump when what a snapshot holds changes (3: zero pages elided; 4: its objects
// frozen; 5: no package files: they come from the site-packages archive)
const SNAPSHOT_FORMAT = 5;
const SNAPSHOT_MAGIC = 0x534e4e57;  // 'WNNS'
const SNAPSHOT_CACHE = 'webnn-polyfill-engine';
const SITE_PACKAGES = '/lib/python3.12/site-packages';
const SO_FLAGS = { loadAsync: false, nodelete: true, allowUndefined: true, global: false };
// Intrinsics taken at script load: the page may replace its globals later.
const WA = savedWebAssembly;
const EMPTY_WASM_MODULE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);

// Whether this page's Content-Security-Policy lets it compile and instantiate
// WebAssembly (engine.js); WebKit compiles under such a policy and refuses only
// the instantiation.
export function wasmCompileAllowed() {
  return WA.instantiate.call(WebAssembly, EMPTY_WASM_MODULE).then(() => true, () => false);
}
const SUBTLE = globalThis.crypto && globalThis.crypto.subtle;
const SavedXHR = typeof XMLHttpRequest === 'function' ? XMLHttpRequest : null;
// The first-visit archives (tools/start_archives.py): the stdlib modules and the
// site-packages files (numpy's and the core's) a start needs; the rest on demand.
const START = RUNTIME_MANIFEST.start || { libraries: [], onDemand: [] };  // none: a build without the runtime
const savedFetch = globalThis.fetch.bind(globalThis);
const UTF8 = { encoder: new TextEncoder(), decoder: new TextDecoder() };

export class RuntimeIntegrityError extends Error {}

// ---------------------------------------------------------------- progress

export const PROGRESS_EVENTS = new EventTarget();
export const PROGRESS = { phase: 'idle', loaded: 0, total: 0, fraction: 0 };
// When each phase began, in ms after this script ran (webnnPolyfill.engineStats.phases).
const SCRIPT_RAN_AT = performance.now();
const PHASE_TIMES = {};
ENGINE_STATS.phases = PHASE_TIMES;
// Rough share of the start each phase takes once its bytes are in (for bars).
const PHASE_FRACTION = { fetch: 0, compile: 0.55, restore: 0.75, init: 0.6, packages: 0.75, import: 0.85, snapshot: 0.95, ready: 1 };

export function markTime(name) {
  if (!(name in PHASE_TIMES)) PHASE_TIMES[name] = Math.round(performance.now() - SCRIPT_RAN_AT);
}

export function reportProgress(phase, bytes) {
  if (bytes) PROGRESS.loaded += bytes;
  if (phase) markTime(phase);
  if (phase) PROGRESS.phase = phase;
  const byBytes = PROGRESS.total ? 0.5 * Math.min(1, PROGRESS.loaded / PROGRESS.total) : 0;
  PROGRESS.fraction = Math.max(PROGRESS.fraction, byBytes, PHASE_FRACTION[PROGRESS.phase] || 0);
  const detail = { ...PROGRESS };
  try {
    if (typeof CONFIG.onProgress === 'function') CONFIG.onProgress(detail);
  } catch (e) { /* a page's callback must not break the start */ }
  const event = new Event('progress');
  Object.defineProperty(event, 'detail', { value: Object.freeze(detail) });
  PROGRESS_EVENTS.dispatchEvent(event);
}

// ---------------------------------------------------------------- verified fetches

function hex(buffer) {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, '0')).join('');
}

async function sha256Hex(bytes) {
  return hex(await SUBTLE.digest('SHA-256', bytes));
}

async function verifyBytes(name, bytes) {
  const expected = RUNTIME_MANIFEST.files[name] && RUNTIME_MANIFEST.files[name].sha256;
  if (!expected) throw new RuntimeIntegrityError(`webnn-polyfill: runtime file ${name} has no hash in this build of the polyfill; refusing to run it`);
  const got = await sha256Hex(bytes);
  if (got !== expected) {
    throw new RuntimeIntegrityError(`webnn-polyfill: runtime file ${name} failed verification: its sha256 is ${got}, `
      + `this build of the polyfill expects ${expected}; refusing to run it`);
  }
  return bytes;
}

// `onChunk` (optional) sees each chunk as it arrives.
async function readAll(response, onChunk = null) {
  if (!response.body || !response.body.getReader) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    reportProgress(null, bytes.length);
    if (onChunk) onChunk(bytes);
    return bytes;
  }
  const reader = response.body.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.length;
    reportProgress(null, value.length);
    if (onChunk) onChunk(value);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) { out.set(c, at); at += c.length; }
  return out;
}

// A runtime file's URL names its content: the first 16 hex digits of the sha256
// this script pins, in the query (?v=...). A static host ignores the query; a
// server or CDN may cache such URLs for good (tools/serve.py: immutable), so a
// returning visitor's start sends no request for them, not even to revalidate.
// Not pyodide.asm.wasm: loadPyodide() itself starts a fetch of
// `${indexURL}pyodide.asm.wasm` (unused: we instantiate our verified module),
// which must find that very URL in the HTTP cache, or a start downloads 2.4 MB twice.
const PLAIN_URLS = ['pyodide.asm.wasm'];

function runtimeUrl(name) {
  const entry = RUNTIME_MANIFEST.files[name];
  return RUNTIME_BASE + name + (entry && !PLAIN_URLS.includes(name) ? `?v=${entry.sha256.slice(0, 16)}` : '');
}

async function fetchResponse(name) {
  let response;
  try {
    response = await savedFetch(runtimeUrl(name), { credentials: 'same-origin' });
  } catch (e) {
    throw new Error(`could not fetch ${RUNTIME_BASE + name}: ${e && e.message}`);
  }
  if (!response.ok) throw new Error(`could not fetch ${RUNTIME_BASE + name}: HTTP ${response.status}`);
  return response;
}

export async function fetchVerified(name) {
  return verifyBytes(name, await readAll(await fetchResponse(name)));
}

// A file that downloads while Python's start holds this thread (seconds, in one
// synchronous block): its body is drained into a Blob by the browser, not read
// chunk by chunk here (Chromium registers a response's data pipe with its blob
// registry in the browser process; a body read here stalls once the pipe is full,
// 2 MB of the decoded bytes). `begun()` is called once the body is draining.
async function fetchVerifiedInBackground(name, begun) {
  let response;
  try {
    response = await fetchResponse(name);
  } finally {
    begun();
  }
  const blob = await response.blob();  // called in the task that begun() resolved: before Python's start
  markTime('siteDownloaded');
  const bytes = new Uint8Array(await blob.arrayBuffer());
  reportProgress(null, bytes.length);
  await verifyBytes(name, bytes);
  markTime('siteVerified');
  return bytes;
}

// pyodide.asm.wasm: compiled while it streams in (Chromium caches the code of
// streamed modules), hashed from a copy of the same response; only a verified
// module is ever instantiated.
async function fetchWasmModule(name) {
  const response = await fetchResponse(name);
  const copy = response.clone();
  const verified = readAll(copy).then((bytes) => verifyBytes(name, bytes));
  let compiled;
  if (typeof WA.compileStreaming === 'function') {
    compiled = WA.compileStreaming.call(WebAssembly, response).catch(async () => WA.compile.call(WebAssembly, await verified));
  } else {
    compiled = verified.then((bytes) => WA.compile.call(WebAssembly, bytes));
  }
  compiled.catch(() => {});
  await verified;
  const module = await compiled;
  reportProgress('compile');
  return module;
}

function sriFor(name) {
  const digest = RUNTIME_MANIFEST.files[name].sha256;
  const bin = digest.match(/../g).map((h) => String.fromCharCode(parseInt(h, 16))).join('');
  return `sha256-${btoa(bin)}`;
}

// Why a script did not load: its bytes, when they can be fetched, say whether
// it was tampered with.
async function diagnoseScript(name) {
  let bytes;
  try {
    bytes = await readAll(await fetchResponse(name));
  } catch (e) {
    return e;
  }
  try {
    await verifyBytes(name, bytes);
  } catch (e) {
    return e;
  }
  return new Error(`failed to load ${RUNTIME_BASE + name}`);
}

function loadScriptTag(name) {
  return new Promise((resolve, reject) => {
    const s = document.createElement('script');
    const url = new URL(runtimeUrl(name));
    s.src = url.href;
    s.integrity = sriFor(name);  // the browser refuses to run anything else
    if (url.origin !== globalThis.location.origin) s.crossOrigin = 'anonymous';
    s.onload = resolve;
    s.onerror = () => diagnoseScript(name).then(reject);
    document.head.appendChild(s);
  });
}

// Pyodide's two scripts, verified: by SRI in windows; in workers, fetched and
// hashed first (the HTTP cache then serves importScripts/import the same bytes).
async function loadRuntimeScripts() {
  const scripts = [['pyodide.js', () => typeof globalThis.loadPyodide === 'function'],
    ['pyodide.asm.js', () => typeof globalThis._createPyodideModule === 'function']];
  if (typeof document !== 'undefined') {
    // Both tags at once: neither script needs the other to evaluate (one round trip, not two).
    await Promise.all(scripts.filter(([, present]) => !present()).map(async ([name]) => {
      await loadScriptTag(name);
      reportProgress(null, RUNTIME_MANIFEST.files[name].size);
    }));
    return;
  }
  for (const [name, present] of scripts) {
    if (present()) {
      if (IS_SERVICE_WORKER) await fetchVerified(name);  // imported at install (below): check it now
      continue;
    }
    await fetchVerified(name);
    if (IS_CLASSIC_WORKER) importScripts(runtimeUrl(name));
    else if (name === 'pyodide.js') globalThis.loadPyodide = (await import(runtimeUrl('pyodide.mjs'))).loadPyodide;
    else await import(runtimeUrl(name));
    reportProgress(null, RUNTIME_MANIFEST.files[name].size);
  }
}

// ---------------------------------------------------------------- snapshot blobs
// [magic u32][metaLength u32][meta JSON][pad to 16][payload]; meta.payloadSha256
// covers the payload: Pyodide's memory snapshot without its zero pages (the
// package files come from the site-packages archive, fetched on every start) (meta.memoryPages: its length and the zero
// pages' runs, snapshot_pages.js).

function snapshotKey() {
  const f = RUNTIME_MANIFEST.files;
  const part = (name) => f[name].sha256.slice(0, 16);
  return [`f${SNAPSHOT_FORMAT}`, POLYFILL_VERSION, PYODIDE_VERSION, part('pyodide.asm.wasm'), part('pyodide.asm.js'),
    part(START.stdlib), part(START.site)].join('-');
}

// The payload is Pyodide's memory snapshot without its zero pages (format 5 holds no
// package files: they come from the site-packages archive on every start).
function packSnapshot(meta, memory) {
  const { kept, zeroRuns } = elideZeroPages(memory);
  meta.memory = [0, kept.length];
  meta.memoryPages = { length: memory.length, zeroRuns };
  return { meta, payload: kept };
}

async function serializeSnapshot(meta, payload) {
  meta.payloadSha256 = await sha256Hex(payload);
  const metaBytes = UTF8.encoder.encode(encodeJson(meta));
  const head = Math.ceil((8 + metaBytes.length) / 16) * 16;
  const out = new Uint8Array(head + payload.length);
  const words = new DataView(out.buffer);
  words.setUint32(0, SNAPSHOT_MAGIC, true);
  words.setUint32(4, metaBytes.length, true);
  out.set(metaBytes, 8);
  out.set(payload, head);
  return out;
}

// A snapshot's meta and where its payload starts; null while `bytes` (its
// beginning) are too few to tell. Throws on anything unexpected.
function snapshotHead(bytes) {
  if (bytes.length < 16) return null;
  if (bytes.byteOffset % 16) throw new Error('snapshot misaligned');
  const words = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (words.getUint32(0, true) !== SNAPSHOT_MAGIC) throw new Error('not an engine snapshot');
  const metaLength = words.getUint32(4, true);
  if (8 + metaLength > bytes.length) return null;
  const meta = jsonParse(UTF8.decoder.decode(bytes.subarray(8, 8 + metaLength)));
  if (meta.format !== SNAPSHOT_FORMAT || meta.key !== snapshotKey()) throw new Error('snapshot made for another runtime build');
  return { meta, payloadStart: Math.ceil((8 + metaLength) / 16) * 16 };
}

// Parses a stored snapshot; throws on anything unexpected. `verified` settles
// when its bytes are known good: the payload's sha256 (computed meanwhile), or
// the integrity check of the file it came from. A restore awaits it before any
// of those bytes run.
function parseSnapshot(bytes, verified = null) {
  const head = snapshotHead(bytes);
  if (!head) throw new Error('snapshot truncated');
  const { meta } = head;
  const payload = bytes.subarray(head.payloadStart);
  const [memoryOffset, memoryLength] = meta.memory;
  if (memoryOffset + memoryLength !== payload.length) throw new Error('snapshot truncated');
  if (!verified) {
    verified = sha256Hex(payload).then((digest) => {
      if (digest !== meta.payloadSha256) throw new Error('snapshot corrupted (payload hash differs)');
    });
  }
  verified.then(() => markTime('snapshotVerified'), () => {});
  // Pyodide's memory snapshot: its kept pages and where the zero pages go. A
  // restore writes it straight into Pyodide's memory (startFromSnapshot), the
  // zero pages too, so what the runtime wrote there before does not survive.
  const { length, zeroRuns } = meta.memoryPages;
  const kept = payload.subarray(memoryOffset, memoryOffset + memoryLength);
  checkZeroPages(kept.length, zeroRuns, length);
  const memory = { kept, zeroRuns, length };
  return { meta, verified, memory };
}

// The build-time snapshot inflated while it downloads, into one buffer of its
// recorded raw size. write() each gzip chunk, then close().
function inflating(rawSize) {
  const raw = new Uint8Array(rawSize);
  let received = 0;
  const inflate = new DecompressionStream('gzip');
  const writer = inflate.writable.getWriter();
  const reader = inflate.readable.getReader();
  const done = (async () => {
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      if (received + value.length > raw.length) throw new Error('snapshot larger than its recorded size');
      raw.set(value, received);
      received += value.length;
    }
    if (received !== raw.length) throw new Error('snapshot truncated');
    return raw;
  })();
  done.catch((e) => reader.cancel(e).catch(() => {}));  // stop inflating what is of no use
  const quietly = (p) => p.catch(() => {});  // a failure surfaces through `done`
  return {
    write: (chunk) => quietly(writer.write(chunk)),
    close: () => quietly(writer.close()),
    abort: (e) => quietly(writer.abort(e)),
    done: () => done,
  };
}

async function openSnapshotCache() {
  if (!CONFIG.snapshot || typeof caches === 'undefined') return null;
  try {
    return await caches.open(SNAPSHOT_CACHE);
  } catch (e) {
    return null;  // an opaque origin, storage disabled, ...
  }
}

const cacheUrl = () => `${RUNTIME_BASE}webnn-engine.snapshot?key=${snapshotKey()}`;

// A snapshot to restore: this profile's own (Cache Storage), else the one
// built beside the runtime. null when there is none to use.
// `willRestore()` is called once it is known that a snapshot is to be restored (found in
// the cache, or the build's is to be fetched), before its bytes are read.
async function findSnapshot(cache, willRestore = () => {}) {
  if (cache) {
    try {
      const hit = await cache.match(cacheUrl());
      if (hit) {
        willRestore();
        const bytes = new Uint8Array(await hit.arrayBuffer());
        markTime('snapshotRead');
        const parsed = parseSnapshot(bytes);
        markTime('snapshotParsed');
        return { source: 'cache', ...parsed };
      }
    } catch (e) {
      if (CONFIG.debug) console.warn('webnn-polyfill: stored engine snapshot unusable, not using it:', e);
      await cache.delete(cacheUrl()).catch(() => {});
    }
  }
  const built = RUNTIME_MANIFEST.snapshot;
  if (CONFIG.snapshot && CONFIG.buildSnapshot !== false && built && built.key === snapshotKey()
      && typeof DecompressionStream === 'function' && (CONFIG.buildSnapshot === true || await buildSnapshotPays(built))) {
    PROGRESS.total += RUNTIME_MANIFEST.files[built.file].size;
    willRestore();
    let inflater;  // decided by the first chunk: gzip, or decoded already
    let got;
    try {
      got = await readAll(await fetchResponse(built.file), (chunk) => {
        if (inflater === undefined) {
          inflater = chunk.length >= 2 && chunk[0] === 0x1f && chunk[1] === 0x8b && built.rawSize ? inflating(built.rawSize) : null;
        }
        if (inflater) inflater.write(chunk);
      });
    } catch (e) {
      // Not downloaded (offline, the connection cut mid-body, a 404): the build's
      // snapshot is only a shortcut, so this is a normal start that still makes
      // and stores its own snapshot.
      if (inflater) inflater.abort(e);
      if (CONFIG.debug) console.warn('webnn-polyfill: built engine snapshot not downloaded, starting normally:', e);
      return null;
    }
    if (inflater) inflater.close();
    markTime('snapshotFetched');
    // A server may have decoded it already (Content-Encoding: gzip): then the
    // raw snapshot's hash applies.
    const gzipped = got[0] === 0x1f && got[1] === 0x8b;
    // Hashed while it is decompressed; a tampered file is an error, not a fallback.
    const integrity = (gzipped ? verifyBytes(built.file, got) : sha256Hex(got).then((digest) => {
      if (digest !== built.rawSha256) {
        throw new RuntimeIntegrityError(`webnn-polyfill: runtime file ${built.file} failed verification: the decoded `
          + `snapshot's sha256 is ${digest}, this build of the polyfill expects ${built.rawSha256}; refusing to run it`);
      }
    })).then(() => {});
    integrity.catch(() => {});
    try {
      let bytes = got;
      if (inflater) {
        bytes = await inflater.done();
      } else if (gzipped) {
        const stream = new Blob([got]).stream().pipeThrough(new DecompressionStream('gzip'));
        bytes = new Uint8Array(await new Response(stream).arrayBuffer());
      }
      markTime('snapshotRead');
      return { source: 'build', bytes, ...parseSnapshot(bytes, integrity) };
    } catch (e) {
      await integrity;
      if (CONFIG.debug) console.warn('webnn-polyfill: built engine snapshot unusable, starting normally:', e);
    }
  }
  return null;
}

// Whether fetching the build-time snapshot saves time on this connection: it
// spares Python's initialisation and numpy's import (about SNAPSHOT_SAVES_MS of
// CPU) and costs its bytes. Decided once the runtime's first SNAPSHOT_PROBE_BYTES
// (decoded) are in, by the rate they came at since the fetches began: the snapshot's raw size at that
// rate (its compression is like theirs) against what it saves. Localhost and
// fast links fetch it; at 10 Mbit/s it would cost seconds to save one.
const SNAPSHOT_SAVES_MS = 1500;  // cold start 2.35 s without it, 0.87 s with it (issue 34, a quiet machine)
const SNAPSHOT_PROBE_BYTES = 4e6;

function buildSnapshotPays(built) {
  return new Promise((resolve) => {
    const decide = () => {
      if (PROGRESS.loaded < SNAPSHOT_PROBE_BYTES) return false;
      const ms = Math.max(1, performance.now() - SCRIPT_RAN_AT - (PHASE_TIMES.fetch || 0));
      const rate = PROGRESS.loaded / ms;  // decoded bytes per ms
      const costMs = Math.round(built.rawSize / rate);
      ENGINE_STATS.buildSnapshotChoice = { probeBytes: PROGRESS.loaded, probeMs: Math.round(ms), costMs,
        savesMs: SNAPSHOT_SAVES_MS, fetched: costMs < SNAPSHOT_SAVES_MS };
      PROGRESS_EVENTS.removeEventListener('progress', decide);
      resolve(costMs < SNAPSHOT_SAVES_MS);
      return true;
    };
    if (!decide()) PROGRESS_EVENTS.addEventListener('progress', decide);
  });
}

async function storeSnapshot(cache, bytes) {
  await cache.put(cacheUrl(), new Response(bytes, { headers: { 'Content-Type': 'application/octet-stream' } }));
  ENGINE_STATS.snapshotStored = true;  // the next start in this profile can restore it
  for (const request of await cache.keys()) {  // one snapshot per runtime base: drop older builds'
    if (request.url !== cacheUrl() && request.url.startsWith(`${RUNTIME_BASE}webnn-engine.snapshot?`)) await cache.delete(request);
  }
}

// ---------------------------------------------------------------- prefetch

let PREFETCH = null;
// Other files every start needs, fetched from the same moment (simd.js: the kernels).
const PREFETCH_ALSO = [];

export function prefetchAlso(start) {
  PREFETCH_ALSO.push(start);
}

// After a failed start: the next one fetches afresh (the network may be back).
export function forgetPrefetch() {
  PREFETCH = null;
  AFTER_READY = [];
  if (CREATED_SNAPSHOT) CREATED_SNAPSHOT.settle.reject(new Error('the start failed'));
  CREATED_SNAPSHOT = null;
}

// Everything a start needs, fetched (and verified); idempotent. In two waves where
// that is sooner: Python's start needs the wasm, the stdlib and the lock file, and
// site-packages (numpy, the core) only after it. A start that restores a snapshot
// needs them all at once, so the site archive is fetched beside the rest; a normal
// start (a first visit on a slow link: the build's snapshot does not pay there)
// fetches it once the stdlib and the lock file are in, while the wasm (the largest
// file) finishes: the wasm gets most of the link (bandwidth is shared between
// requests), Python starts while the site archive downloads, and the two finish
// together (at 10 Mbit/s / 40 ms, docs/performance.md: ready 5.1-5.4 s, against
// 5.5 s with the site after the wasm and 7.1 s with everything at once).
export function prefetchRuntime() {
  if (PREFETCH) return PREFETCH;
  const files = RUNTIME_MANIFEST.files;
  PROGRESS.total = ['pyodide.js', 'pyodide.asm.js', 'pyodide.asm.wasm', START.stdlib, START.site, 'pyodide-lock.json']
    .reduce((n, name) => n + files[name].size, 0);
  reportProgress('fetch');
  blobUrlsFetchable();
  const quiet = (p) => { p.catch(() => {}); return p; };
  let restoring;
  const willRestore = new Promise((resolve) => { restoring = resolve; });
  const snapshot = quiet(openSnapshotCache().then(async (cache) => ({ cache, found: await findSnapshot(cache, restoring) })));
  const wasm = quiet(fetchWasmModule('pyodide.asm.wasm'));
  const stdlib = quiet(fetchVerified(START.stdlib));
  const lock = quiet(fetchVerified('pyodide-lock.json'));
  const firstWave = Promise.all([stdlib, lock, snapshot]).catch(() => {});  // the wasm's tail overlaps the site's start
  let begun;
  const siteDraining = new Promise((resolve) => { begun = resolve; });
  const site = quiet(Promise.race([willRestore, firstWave]).then(() => {
    markTime('siteRequested');
    return fetchVerifiedInBackground(START.site, begun);
  }).then(storedZipMembers));
  PREFETCH = {
    scripts: quiet(loadRuntimeScripts()),
    wasm,
    stdlib,
    lock,
    snapshot,
    // site-packages' files (path under it -> bytes), and numpy's compiled
    // modules compiled as soon as they are in (path -> WebAssembly.Module).
    site,
    siteDraining,
    libraries: quiet(site.then((members) => Promise.all(START.libraries.map(async (path) => {
      if (!members.has(path)) throw new Error(`${START.site} lacks ${path}`);
      return [`${SITE_PACKAGES}/${path}`, await WA.compile.call(WebAssembly, members.get(path))];
    })).then((pairs) => new Map(pairs)))),
  };
  for (const start of PREFETCH_ALSO) start();
  return PREFETCH;
}

// ---------------------------------------------------------------- the timeline worker
// (js/src/timeline.js) starts from what this page fetched and verified: no second
// download of the wasm, the stdlib or the snapshot, and no second compilation of
// the wasm or of numpy's side modules (compiled modules are posted as they are).

// The snapshot this page's engine made at its start (no stored or build-time one to
// restore): its bytes once packed, for a timeline worker started after that engine.
let CREATED_SNAPSHOT = null;

// The page's side: its verified runtime, the start archive's files, numpy's compiled
// modules and the raw engine snapshot (none where the page starts without one). A
// worker handed the runtime after the page's engine started (two cores or fewer)
// restores the snapshot that start made (a first visit that did not fetch the
// build-time one) instead of initialising Python and importing numpy again.
export async function runtimeForWorker() {
  const fetches = prefetchRuntime();
  const [wasm, stdlib, lock, site, libraries] = await Promise.all(
    [fetches.wasm, fetches.stdlib, fetches.lock, fetches.site, fetches.libraries]);
  let snapshot = null;
  try {
    const { cache, found } = await fetches.snapshot;
    if (found) {
      await found.verified;
      let bytes = found.bytes;
      if (!bytes && cache) {
        const hit = await cache.match(cacheUrl());
        bytes = hit ? new Uint8Array(await hit.arrayBuffer()) : null;
      }
      snapshot = bytes || null;
    } else if (CREATED_SNAPSHOT) {
      snapshot = await CREATED_SNAPSHOT;
    }
  } catch (e) {
    snapshot = null;  // the worker starts without one, as the page would
  }
  // The SIMD kernel builds this page compiled (simd.js: the threads build for the
  // worker's kernel pool among them); one that failed here the worker tries itself.
  const kernels = [];
  for (const [key, load] of fetches.kernelLoads || []) {
    try { kernels.push([key, await load]); } catch (e) { /* not handed over */ }
  }
  return { wasm, stdlib, lock, site, libraries, snapshot, kernels };
}

// The worker's side: the prefetch round is what the page gave (Pyodide's two scripts
// still load here: importScripts/import, verified, from the HTTP cache).
export function provideRuntime(given) {
  const files = RUNTIME_MANIFEST.files;
  PROGRESS.total = ['pyodide.js', 'pyodide.asm.js'].reduce((n, name) => n + files[name].size, 0);
  let found = null;
  if (given.snapshot) {
    try {
      found = { source: 'page', ...parseSnapshot(given.snapshot, Promise.resolve()) };
    } catch (e) {
      found = null;
    }
  }
  const quiet = (p) => { p.catch(() => {}); return p; };
  PREFETCH = {
    scripts: quiet(loadRuntimeScripts()),
    wasm: Promise.resolve(given.wasm),
    stdlib: Promise.resolve(given.stdlib),
    lock: Promise.resolve(given.lock),
    snapshot: Promise.resolve({ cache: null, found }),
    site: Promise.resolve(given.site),
    siteDraining: Promise.resolve(),
    libraries: Promise.resolve(given.libraries),
    kernelLoads: new Map((given.kernels || []).map(([key, build]) => [key, Promise.resolve(build)])),
  };
  for (const start of PREFETCH_ALSO) start();
  return PREFETCH;
}

// ---------------------------------------------------------------- Pyodide hooks

// Pyodide's WebAssembly.Memory (it does not expose it): the SIMD kernels share it.
export const ENGINE_MEMORY = { memory: null };

// Emscripten's dynamic linker finds a function's table slot by object identity
// (addFunction -> getFunctionAddress), and gives a GOT entry whose function is
// "not in the table" a new slot. WebKit (JSC) hands out another function object
// from table.get() than from the instance's exports for the same wasm function
// (Chromium and Firefox hand out one), so there the main module's GOT took 1154
// duplicate slots: the function table ended up larger than in the engine that
// made the build-time snapshot, whose side-module bases then did not fit. Pyodide
// gets exports that are the table's own objects (matched by function index, the
// `name` of every exported wasm function; the last slot wins, as in
// updateTableMap), so the table is laid out alike in every engine.
function exportsAsInTable(instance, table) {
  if (!(table instanceof WebAssembly.Table)) return instance;
  const inTable = new Map();
  for (let slot = 0; slot < table.length; slot++) {
    const fn = table.get(slot);
    if (typeof fn === 'function' && /^\d+$/.test(fn.name)) inTable.set(fn.name, fn);
  }
  let swapped = 0;
  const exports = {};
  for (const [name, value] of Object.entries(instance.exports)) {
    const same = typeof value === 'function' ? inTable.get(value.name) : undefined;
    exports[name] = same || value;
    if (same && same !== value) swapped++;
  }
  return swapped ? { exports } : instance;  // receiveInstance reads only .exports
}

// loadPyodide() with our verified wasm module and, optionally, a hook that
// runs right after Pyodide copies a snapshot into memory (before any Python).
// Pyodide offers no option for either, so its module factory (a global that
// pyodide.asm.js, loaded by us, defined) is wrapped for this one call.
async function loadPyodideWith(options, { wasmModule, beforeRestore, afterRestore, image }) {
  const factory = globalThis._createPyodideModule;
  if (typeof factory !== 'function') throw new Error('pyodide.asm.js did not load');
  globalThis._createPyodideModule = async (settings) => {
    globalThis._createPyodideModule = factory;
    settings.instantiateWasm = (imports, receive) => {
      WA.instantiate.call(WebAssembly, wasmModule, imports).then((instance) => {
        if (imports.env && imports.env.memory instanceof WA.Memory) ENGINE_MEMORY.memory = imports.env.memory;
        receive(exportsAsInTable(instance, imports.env && imports.env.__indirect_function_table), wasmModule);
      }, (e) => console.error('webnn-polyfill: pyodide.asm.wasm failed to instantiate:', e));
      return {};
    };
    const Module = await factory(settings);
    markTime('moduleReady');
    if (afterRestore) {
      if (beforeRestore) await beforeRestore(Module);
      const API = settings.API;
      const restore = API.restoreSnapshot;
      API.restoreSnapshot = (bytes) => {
        // With `image`: Pyodide reads only its header (checks and metadata); the
        // image goes into memory from its kept pages (no image-sized copy between).
        const result = restore(image ? image.header : bytes);
        if (image) image.write(Module.HEAP8);
        afterRestore(Module);
        return result;
      };
    }
    return Module;
  };
  try {
    return await globalThis.loadPyodide(options);
  } finally {
    globalThis._createPyodideModule = factory;
  }
}

// A URL for Pyodide to fetch a file we already fetched and verified: a blob:
// URL of those very bytes, else (service workers have no blob URLs; a CSP
// connect-src may refuse them) the file's own URL, which the HTTP cache then
// serves from the fetch that was verified. Whether this page may fetch blob:
// URLs is probed once, with an empty blob, while the runtime downloads (not
// after it: that cost a start two fetches on its critical path).
let BLOB_URLS_FETCHABLE = null;

function blobUrlsFetchable() {
  if (!BLOB_URLS_FETCHABLE) {
    BLOB_URLS_FETCHABLE = (async () => {
      if (typeof URL.createObjectURL !== 'function') return false;
      const url = URL.createObjectURL(new Blob([]));
      try {
        const probe = await savedFetch(url);
        if (probe.body) await probe.body.cancel();
        return true;
      } catch (e) {
        return false;
      } finally {
        URL.revokeObjectURL(url);
      }
    })();
  }
  return BLOB_URLS_FETCHABLE;
}

async function verifiedUrl(name, bytes, type) {
  if (!(await blobUrlsFetchable())) return runtimeUrl(name);
  return URL.createObjectURL(new Blob([bytes], { type }));
}

async function runtimeParts(fetches) {
  const [wasm, stdlib, lock] = await Promise.all([fetches.wasm, fetches.stdlib, fetches.lock]);
  markTime('runtimeFetched');
  const [stdLibURL, lockFileURL] = await Promise.all([verifiedUrl(START.stdlib, stdlib, 'application/zip'),
    verifiedUrl('pyodide-lock.json', lock, 'application/json')]);
  markTime('blobUrls');
  return {
    wasm,
    options: { indexURL: RUNTIME_BASE, fullStdLib: false, stdLibURL, lockFileURL },
    release: () => [stdLibURL, lockFileURL].forEach((u) => u.startsWith('blob:') && URL.revokeObjectURL(u)),
  };
}

// ---------------------------------------------------------------- side modules

function basename(path) {
  return path.slice(path.lastIndexOf('/') + 1);
}

function registerLibrary(Module, path, handle, exports) {
  const dso = Module.newDSO(path, handle, exports);
  dso.global = false;
  dso.refcount = Infinity;
  if (!Module.LDSO.loadedLibsByName[basename(path)]) Module.LDSO.loadedLibsByName[basename(path)] = dso;
  return dso;
}

// First start: load each .so (compiled already: path -> module) with a handle
// of ours (see the top of this file).
function loadSideModules(Module, compiled) {
  const paths = [...compiled.keys()].sort();
  const modules = paths.map((path) => compiled.get(path));
  const libs = [];
  paths.forEach((path, i) => {
    const handle = Module.getMemory(64);  // zeroed: "not loaded yet"
    const exports = Module.loadWebAssemblyModule(modules[i], SO_FLAGS, path, {}, handle);
    registerLibrary(Module, path, handle, exports);
    const u32 = Module.HEAPU32;
    libs.push({ path, handle, memoryBase: u32[(handle + 12) >>> 2], memorySize: u32[(handle + 16) >>> 2],
      tableLength: Module.wasmTable.length });
  });
  return libs;
}

// Restore: the same loads, at the recorded bases, in the same order.
function reloadSideModules(Module, meta, modules) {
  if (Module.wasmTable.length !== meta.tableStart) {
    throw new Error(`function table has ${Module.wasmTable.length} entries, the snapshot expects ${meta.tableStart}`);
  }
  const dsos = new Map();
  meta.libs.forEach((lib, i) => {
    const u8 = Module.HEAPU8;
    if (!u8[lib.handle + 8]) throw new Error(`${lib.path}: its handle is not marked loaded`);
    const live = u8.slice(lib.memoryBase, lib.memoryBase + lib.memorySize);
    const exports = Module.loadWebAssemblyModule(modules[i], SO_FLAGS, lib.path, {}, lib.handle);
    Module.HEAPU8.set(live, lib.memoryBase);  // undo the data segments' re-initialisation
    dsos.set(lib.path, registerLibrary(Module, lib.path, lib.handle, exports));
    if (Module.wasmTable.length !== lib.tableLength) {
      throw new Error(`${lib.path}: function table has ${Module.wasmTable.length} entries, expected ${lib.tableLength}`);
    }
  });
  for (const [slot, path, name] of meta.extraSlots) {
    if (slot >= Module.wasmTable.length) Module.wasmTable.grow(slot + 1 - Module.wasmTable.length);
    Module.setWasmTableEntry(slot, dsos.get(path).exports[name]);
  }
  if (Module.wasmTable.length !== meta.tableEnd) throw new Error('function table differs from the snapshot');
  for (const [handle, path] of meta.handles) Module.LDSO.loadedLibsByHandle[handle] = dsos.get(path);
}

// Table slots added after the .so loads (dlsym, GOT entries): each must be a
// function some library exports, so that a restore can put it back.
function describeExtraSlots(Module, libs) {
  const start = libs.length ? libs[libs.length - 1].tableLength : Module.wasmTable.length;
  const exportsOf = libs.map((lib) => [lib.path, Module.LDSO.loadedLibsByName[lib.path].exports]);
  const slots = [];
  for (let slot = start; slot < Module.wasmTable.length; slot++) {
    const fn = Module.wasmTable.get(slot);
    if (fn === null) continue;
    let found = null;
    for (const [path, exports] of exportsOf) {
      for (const name of Object.keys(exports)) {
        if (exports[name] === fn) { found = [slot, path, name]; break; }
      }
      if (found) break;
    }
    if (!found) throw new Error(`function table slot ${slot} holds a function no library exports`);
    slots.push(found);
  }
  return slots;
}

// ---------------------------------------------------------------- the start

// Imported before the snapshot: what every start needs, and (when present:
// module names move) what the first createContext() and build() would
// otherwise import.
const ENGINE_MODULES = ['numpy', 'webnn_core.bridge'];
const WARM_MODULES = ['webnn_core.ops', 'webnn_core.backends.cpu', 'webnn_core.backends.cpu.backend',
  'webnn_core.backends.cpu.compile', 'webnn_core.backends.cpu.reference', 'webnn_core.backends.cpu.fast',
  'webnn_core.backends.cpu.fast.library', 'webnn_core.backends.cpu.fast.pack', 'webnn_core.backends.webgpu'];

// site-packages' files, written into Pyodide's file system from JS: none of
// them passes through the engine's memory (so none ends up in a snapshot).
function writeSiteFiles(FS, members) {
  const dirs = new Set();
  for (const [path, bytes] of members) {
    const full = `${SITE_PACKAGES}/${path}`;
    const dir = full.slice(0, full.lastIndexOf('/'));
    if (!dirs.has(dir)) { FS.mkdirTree(dir); dirs.add(dir); }
    FS.writeFile(full, bytes);
  }
}

// ---------------------------------------------------------------- on demand
// A module outside the first-visit archives imports all the same: the engine's
// finder (py/webnn_core/ondemand.py) fetches the full file it is in with this
// (synchronously: an import cannot wait) and checks its sha256. Service workers
// have no synchronous fetch: there such an import fails naming the module.

function fetchRuntimeFileSync(name, forModule) {
  if (!SavedXHR) throw new Error('no synchronous fetch in this scope (a service worker?)');
  const xhr = new SavedXHR();
  xhr.open('GET', runtimeUrl(name), false);
  const binary = typeof document === 'undefined';  // a window's synchronous requests cannot ask for bytes
  if (binary) xhr.responseType = 'arraybuffer';
  else xhr.overrideMimeType('text/plain; charset=x-user-defined');
  xhr.send();
  if (xhr.status !== 200) throw new Error(`could not fetch ${runtimeUrl(name)}: HTTP ${xhr.status}`);
  (ENGINE_STATS.onDemand = ENGINE_STATS.onDemand || []).push(`${name} (${forModule})`);
  if (binary) return new Uint8Array(xhr.response);
  const text = xhr.responseText;
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);  // x-user-defined: 0xF780 + byte
  return bytes;
}

const ON_DEMAND_SOURCES = encodeJson((START.onDemand || []).map((source) => ({ ...source,
  sha256: RUNTIME_MANIFEST.files[source.file] && RUNTIME_MANIFEST.files[source.file].sha256 })));

// `on`: connect the finder (installing it first when asked), else disconnect it
// (a snapshot may hold no reference to a JS object).
function onDemand(pyodide, on, installFirst = false) {
  const mod = pyodide.pyimport('webnn_core.ondemand');
  try {
    if (installFirst) mod.install(SITE_PACKAGES);
    if (on) mod.connect(fetchRuntimeFileSync, ON_DEMAND_SOURCES);
    else mod.connect(null);
  } finally {
    mod.destroy();
  }
}

async function startFresh(parts, { makeSnapshot }) {
  // Python starts while the site archive may still download (prefetchRuntime).
  const fetches = prefetchRuntime();
  await fetches.siteDraining;  // its download goes on during Python's start
  reportProgress('init');
  const pyodide = await loadPyodideWith({ ...parts.options, _makeSnapshot: makeSnapshot }, { wasmModule: parts.wasm });
  markTime('pythonReady');
  const members = await fetches.site;
  reportProgress('packages');
  writeSiteFiles(pyodide.FS, members);
  const Module = pyodide._module;
  const tableStart = Module.wasmTable.length;
  const libs = loadSideModules(Module, await fetches.libraries);
  reportProgress('import');
  onDemand(pyodide, true, true);
  // Frozen out of the collector's generations (gc.freeze) before the snapshot: a start that
  // restores it then finds them frozen already, and bridge.freeze_startup_objects() (engine.js)
  // no longer traverses the ~33 000 start-up objects in a full collection on every later visit.
  pyodide.runPython(`import importlib, gc
for name in ${encodeJson(ENGINE_MODULES)}:
    importlib.import_module(name)
for name in ${encodeJson(WARM_MODULES)}:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
gc.collect()
gc.freeze()`);
  let snapshot = null;
  if (makeSnapshot) {
    reportProgress('snapshot');
    onDemand(pyodide, false);
    pyodide.runPython('import gc; gc.collect()');
    try {
      const handles = [];
      for (const [handle, dso] of Object.entries(Module.LDSO.loadedLibsByHandle)) {
        if (libs.some((lib) => lib.path === dso.name)) handles.push([Number(handle), dso.name]);
      }
      const meta = { format: SNAPSHOT_FORMAT, key: snapshotKey(), tableStart, libs, handles,
        extraSlots: describeExtraSlots(Module, libs), tableEnd: Module.wasmTable.length };
      // Packed (its zero pages elided: a scan of the whole image) once the engine is up.
      snapshot = { meta, memory: pyodide.makeMemorySnapshot() };
    } catch (e) {
      if (CONFIG.debug) console.warn('webnn-polyfill: the engine cannot be snapshotted here:', e);
    }
    onDemand(pyodide, true);
  }
  return { pyodide, snapshot };
}

async function startFromSnapshot(parts, found) {
  const { meta, verified, memory } = found;
  const fetches = prefetchRuntime();
  let modules = null;
  reportProgress('restore');
  // Pyodide's snapshot is [its header: magic, the image's offset, ...][the memory
  // image]. Pyodide sizes its memory by the snapshot's length: it gets a zeroed
  // stand-in of that length (never written, so it costs no memory), then at the
  // restore only the header, and the image is written into its memory from the
  // kept pages.
  const { kept, zeroRuns, length } = memory;
  const head = restoreZeroPages(kept, zeroRuns, length, { to: Math.min(16, length) });
  const imageStart = head.length >= 8 ? new DataView(head.buffer).getUint32(4, true) : length + 1;
  if (imageStart > length) throw new Error('snapshot memory image has no header');
  const image = {
    header: restoreZeroPages(kept, zeroRuns, length, { to: Math.min(length, Math.ceil(imageStart / 4) * 4) }),
    write: (heap) => restoreZeroPages(kept, zeroRuns, length, { into: heap, from: imageStart }),
  };
  const pyodide = await loadPyodideWith({ ...parts.options, _loadSnapshot: new Uint8Array(length) }, {
    image,
    wasmModule: parts.wasm,
    beforeRestore: async () => {
      await verified;  // nothing of the snapshot runs before its bytes are known good
      const compiled = await fetches.libraries;
      modules = meta.libs.map((lib) => {
        if (!compiled.has(lib.path)) throw new Error(`the snapshot lists ${lib.path}, which this build does not load`);
        return compiled.get(lib.path);
      });
      markTime('librariesCompiled');
    },
    afterRestore: (Module) => { markTime('memoryRestored'); reloadSideModules(Module, meta, modules); markTime('librariesRestored'); },
  });
  markTime('pyodideReady');
  writeSiteFiles(pyodide.FS, await fetches.site);
  markTime('filesWritten');
  onDemand(pyodide, true);
  // Every restore starts from the same state: draw fresh seeds.
  pyodide.runPython(`import sys
for name in ('random', 'numpy.random'):
    if name in sys.modules:
        sys.modules[name].seed()`);
  markTime('reseeded');
  return pyodide;
}

// Work that must not compete with the start (storing snapshots): run after
// engineReady() (engine.js calls it once createContext() can resolve).
let AFTER_READY = [];

function whenReady(task) {
  AFTER_READY.push(task);
}

export function engineReady() {
  const tasks = AFTER_READY;
  AFTER_READY = [];
  setTimeout(() => {
    for (const task of tasks) {
      Promise.resolve().then(task).catch((e) => {
        if (CONFIG.debug) console.warn('webnn-polyfill: could not store the engine snapshot:', e);
      });
    }
  }, 0);
}

// Pyodide with numpy and webnn_core imported, by the fastest way available.
export async function startRuntime() {
  const fetches = prefetchRuntime();
  await fetches.scripts;
  markTime('scripts');
  const parts = await runtimeParts(fetches);
  let snapshotState = { cache: null, found: null };
  try {
    snapshotState = await fetches.snapshot;
  } catch (e) {
    if (e instanceof RuntimeIntegrityError) throw e;
    if (CONFIG.debug) console.warn('webnn-polyfill: no engine snapshot:', e);
  }
  const { cache, found } = snapshotState;
  try {
    if (found) {
      try {
        const pyodide = await startFromSnapshot(parts, found);
        ENGINE_STATS.snapshot = { cache: 'restored', build: 'built', page: 'from the page' }[found.source];
        if (found.source === 'build' && cache) whenReady(() => storeSnapshot(cache, found.bytes));
        return pyodide;
      } catch (e) {
        if (e instanceof RuntimeIntegrityError) throw e;
        if (CONFIG.debug) console.warn('webnn-polyfill: engine snapshot did not restore, starting normally:', e);
        if (cache) await cache.delete(cacheUrl()).catch(() => {});
      }
    }
    const { pyodide, snapshot } = await startFresh(parts, { makeSnapshot: !!cache });
    ENGINE_STATS.snapshot = cache ? (snapshot ? 'created' : 'failed') : 'off';
    if (snapshot) {
      // Off the critical path: hash, pack and store once the engine is up (the
      // timeline worker, started after this engine, restores these bytes).
      let settle = null;
      CREATED_SNAPSHOT = new Promise((resolve, reject) => { settle = { resolve, reject }; });
      CREATED_SNAPSHOT.catch(() => {});
      CREATED_SNAPSHOT.settle = settle;  // forgetPrefetch() rejects it (the task below never runs then)
      whenReady(() => Promise.resolve().then(() => packSnapshot(snapshot.meta, snapshot.memory))
        .then(({ meta, payload }) => serializeSnapshot(meta, payload))
        .then((b) => { settle.resolve(b); return storeSnapshot(cache, b); }, (e) => { settle.reject(e); throw e; }));
    }
    return pyodide;
  } finally {
    parts.release();
  }
}

// A test/tooling hook (tools/build.py): a fresh engine's snapshot as bytes.
export async function exportEngineSnapshot() {
  const fetches = prefetchRuntime();
  await fetches.scripts;
  const parts = await runtimeParts(fetches);
  const { snapshot } = await startFresh(parts, { makeSnapshot: true });
  if (!snapshot) throw new Error('the engine could not be snapshotted');
  const { meta, payload } = packSnapshot(snapshot.meta, snapshot.memory);
  return serializeSnapshot(meta, payload);
}
