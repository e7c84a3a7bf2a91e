// The kernel pool (issue 17 item 2, docs/threads.md): the threads build of the
// SIMD kernels (dist/webnn-kernels-threads*.wasm: wasm atomics + bulk memory,
// an imported shared memory) instantiated on ONE WebAssembly.Memory({shared:
// true}) in this thread and in `threads - 1` Web Workers. Pyodide's own memory
// is not shared (0.27), so the pool's memory is separate: the Python core
// (webnn_core/backends/cpu/fast/shared.py) allocates in it, keeps constants and
// chained activations there, decides the tiles and writes each job's table; this
// file only runs the pool. It is the "port" that shared.py describes:
//   threads, size(), grow(n), put(dst, src, n), get(src, dst, n), run(fn, nargs, ntiles, table)
//
// A job: control words at the start of the shared memory, then its table (one
// row of int32 argument words per tile; f32 arguments as their bits):
//   [0] generation (workers Atomics.wait on it)  [1] next tile, tagged with the
//   generation's low 15 bits (so a late worker can never take a tile of the next
//   job)  [2] tiles done  [3] kernel index  [4] words per row  [5] tile count
//   [6] set when a tile threw  [7] workers asleep in Atomics.wait  [8] how long
//   (microseconds) an idle worker watches [0] before it sleeps  [9] tiles workers took
//   [10] watches cut short because the worker was descheduled  [11] how long a gap between two
//   looks at the clock counts as descheduled (microseconds; see the worker's loop)
//   [12] bumped by each setSpin (a worker then drops a pause of its watch)
// Every thread takes tiles with a compare-exchange on [1] until none are left.
// The calling thread takes its share, then spins until [2] counts every tile: a
// window's main thread may not Atomics.wait, and the tiles left are the ones
// other threads are finishing, so the spin is short.
// A worker that finished a job can watch [0] for a short while ([8]; off by
// default, SPIN_US below says why) before it sleeps: the next job of the same dispatch (a few tens of
// microseconds later) then finds it awake, instead of paying a futex wake-up
// (tens to hundreds of microseconds on a VM, as long as a ShuffleNet-sized
// tile). An idle pool sleeps: between dispatches no worker burns a core. The
// caller notifies only when [7] says a worker sleeps (Dekker-style with
// sequentially consistent atomics: a worker counts itself in [7] before its
// Atomics.wait re-checks [0], the caller writes [0] before it reads [7]).

import { ENGINE_MEMORY } from './startup.js';
import { typedArraySet } from './intrinsics.js';

// Saved at script load: the page's later globals are never trusted.
const G = globalThis;
const SavedWorker = typeof G.Worker === 'function' ? G.Worker : null;
const SavedBlob = typeof G.Blob === 'function' ? G.Blob : null;
const createObjectURL = G.URL && G.URL.createObjectURL;
const revokeObjectURL = G.URL && G.URL.revokeObjectURL;
const SavedAtomics = G.Atomics;
// The Atomics functions, saved (they do not use `this`).
const A = SavedAtomics && { load: SavedAtomics.load, store: SavedAtomics.store, add: SavedAtomics.add,
  compareExchange: SavedAtomics.compareExchange, notify: SavedAtomics.notify };
const WasmMemory = G.WebAssembly && G.WebAssembly.Memory;
const wasmInstantiate = G.WebAssembly && G.WebAssembly.instantiate;
const SavedUint8Array = Uint8Array;
const SavedInt32Array = Int32Array;
const SavedFloat32Array = Float32Array;
const SavedPromise = Promise;
const savedSetTimeout = setTimeout;
const savedClearTimeout = clearTimeout;

const PAGE = 65536;
const MAX_PAGES = 32768;       // 2 GiB: the threads build's --max-memory
const INITIAL_PAGES = 256;     // 16 MiB; grown on demand by the core's allocator
const RESERVED = 65536;        // control words + job table (shared.py RESERVED)
const TABLE = 16;              // first word of the job table
const READY_TIMEOUT_MS = 20000;
// How long an idle worker watches for the next job before it sleeps (see above): off by
// default. ShuffleNet's steps between two pool jobs of one dispatch take ~20-150 us, and a
// 200 us watch gained ~3 % there on a quiet 2-core machine, but on a busy one (load 6-9)
// it cost 20-25 %: the watching worker takes the core the caller needs (docs/threads.md).
// port.setSpin(us) turns it on for measurements.
const SPIN_US = 0;
const DESCHEDULED_US = 100;
const CALM_MS = 100;

// Run by every thread of the pool (its source is also the workers' code); returns
// how many tiles this thread took.
function takeTiles(A, i32, f32, fns, sigs) {
  const gen = A.load(i32, 0);
  const tag = (gen & 0x7fff) << 16;
  const fnIndex = A.load(i32, 3);
  const nargs = A.load(i32, 4);
  const ntiles = A.load(i32, 5);
  const fn = fns[fnIndex];
  const sig = sigs[fnIndex];
  const args = new Array(nargs);
  let taken = 0;
  for (;;) {
    const cur = A.load(i32, 1);
    if ((cur & 0x7fff0000) !== tag) return taken;  // a newer job: not ours to take
    const t = cur & 0xffff;
    if (t >= ntiles) return taken;
    if (A.compareExchange(i32, 1, cur, cur + 1) !== cur) continue;
    const row = 16 + t * nargs;
    for (let k = 0; k < nargs; k++) args[k] = sig.charCodeAt(k) === 102 ? f32[row + k] : i32[row + k];
    try {
      fn(...args);
    } catch (e) {
      A.store(i32, 6, 1);
    }
    A.add(i32, 2, 1);
    taken++;
  }
}

const WORKER_SOURCE = `'use strict';
const takeTiles = ${takeTiles.toString()};
self.onmessage = (e) => {
  const { module, memory, names, sigs } = e.data;
  let exports;
  try {
    exports = new WebAssembly.Instance(module, { env: { memory } }).exports;
  } catch (err) {
    self.postMessage({ error: String(err && err.message || err) });
    return;
  }
  const fns = names.map((n) => exports[n]);
  const i32 = new Int32Array(memory.buffer, 0, ${RESERVED / 4});
  const f32 = new Float32Array(memory.buffer, 0, ${RESERVED / 4});
  self.postMessage({ ready: true });
  const now = performance.now.bind(performance);
  let seen = Atomics.load(i32, 0);
  let calmUntil = 0;  // no watch before this time (this thread was descheduled in one)
  let settings = Atomics.load(i32, 12);
  for (;;) {
    if (Atomics.load(i32, 12) !== settings) {  // setSpin: new settings, no pause left
      settings = Atomics.load(i32, 12);
      calmUntil = 0;
    }
    // Watch for the next job a little while (the next one of a dispatch comes soon), then
    // sleep. A watch interrupted by the scheduler (a gap of over [11] microseconds between two
    // looks at the clock) means the machine has no core to spare: it ends at once, and for
    // the next ${CALM_MS} ms idle periods sleep without one, so the watch does not take a core
    // the calling thread needs.
    let last = now();
    const until = last < calmUntil ? last : last + Atomics.load(i32, 8) / 1000;
    let spins = 0;
    while (Atomics.load(i32, 0) === seen) {
      if ((++spins & 255) === 0) {
        const t = now();
        if (t - last > Atomics.load(i32, 11) / 1000) {
          calmUntil = t + ${CALM_MS};
          Atomics.add(i32, 10, 1);
        } else if (t < until) {
          last = t;
          continue;
        }
        Atomics.add(i32, 7, 1);
        Atomics.wait(i32, 0, seen);
        Atomics.sub(i32, 7, 1);
        last = now();
      }
    }
    seen = Atomics.load(i32, 0);
    const n = takeTiles(Atomics, i32, f32, fns, sigs);
    if (n) Atomics.add(i32, 9, n);
  }
};`;

// Why no pool can run here (null: it can).
export function poolUnavailableReason(threads) {
  if (threads <= 1) return 'one kernel thread was asked for';
  if (G.crossOriginIsolated !== true) {
    return 'the page is not cross-origin isolated (no COOP/COEP headers), so no shared memory';
  }
  if (!SavedWorker || !SavedBlob || !createObjectURL) return 'this global cannot start Web Workers';
  if (!SavedAtomics || !WasmMemory) return 'no Atomics / WebAssembly.Memory here';
  return null;
}

class KernelPort {
  constructor(memory, exports, names, sigs) {
    this.memory = memory;
    this.names = names;
    this.fns = names.map((n) => exports[n]);
    this.sigs = sigs;
    this.i32 = new SavedInt32Array(memory.buffer, 0, RESERVED / 4);
    this.f32 = new SavedFloat32Array(memory.buffer, 0, RESERVED / 4);
    this.workers = [];
    this.gen = 0;
    this.threads = 1;
    this.busy = false;
    this.jobs = 0;
    this.callerTiles = 0;
    this.notifies = 0;
    this.setSpin(SPIN_US, DESCHEDULED_US);
  }

  // How long (microseconds) an idle worker watches for the next job before it
  // sleeps (0: at once, as before the watch), and how long a gap in its watch
  // means it was descheduled (then it stops watching for a while; tests and benchmarks).
  setSpin(us, descheduledUs = DESCHEDULED_US) {
    A.store(this.i32, 11, Math.max(0, Math.min(1e7, descheduledUs | 0)));
    A.store(this.i32, 8, Math.max(0, Math.min(1e7, us | 0)));
    A.add(this.i32, 12, 1);
  }

  // Counters since the pool started: jobs, tiles the calling thread and the workers
  // took, how many jobs had to wake a sleeping worker, workers asleep now.
  stats() {
    const i32 = this.i32;
    return { jobs: this.jobs, callerTiles: this.callerTiles, workerTiles: A.load(i32, 9),
      notifies: this.notifies, asleep: A.load(i32, 7), workers: this.workers.length, spinUs: A.load(i32, 8),
      watchesCut: A.load(i32, 10) };
  }

  size() { return this.memory.buffer.byteLength; }

  grow(nbytes) {
    const have = this.memory.buffer.byteLength;
    if (nbytes <= have) return;
    // Grow by at least a quarter, so a growing model does not grow page by page.
    const want = Math.max(Math.ceil(nbytes / PAGE), Math.ceil(have / PAGE * 1.25));
    const pages = Math.min(MAX_PAGES, want) - have / PAGE;
    if (have / PAGE + pages < Math.ceil(nbytes / PAGE)) throw new RangeError(`the kernel pool's memory would exceed ${MAX_PAGES * PAGE} bytes`);
    this.memory.grow(pages);
  }

  // Copies between Pyodide's memory (numpy buffers) and the shared memory.
  put(dst, src, nbytes) {
    typedArraySet(new SavedUint8Array(this.memory.buffer, dst, nbytes),
      new SavedUint8Array(ENGINE_MEMORY.memory.buffer, src, nbytes));
  }

  get(src, dst, nbytes) {
    typedArraySet(new SavedUint8Array(ENGINE_MEMORY.memory.buffer, dst, nbytes),
      new SavedUint8Array(this.memory.buffer, src, nbytes));
  }

  run(fnIndex, nargs, ntiles, table) {
    const words = nargs * ntiles;
    if (TABLE + words > RESERVED / 4 || ntiles > 0xffff) throw new RangeError(`kernel pool job too large (${ntiles} tiles)`);
    if (this.busy) throw new Error('kernel pool re-entered');
    this.busy = true;
    const i32 = this.i32;
    try {
      this.gen = (this.gen + 1) | 0;
      // The tagged tile counter first: a worker still in the last job can no longer take a tile.
      A.store(i32, 1, (this.gen & 0x7fff) << 16);
      A.store(i32, 2, 0);
      A.store(i32, 6, 0);
      typedArraySet(new SavedInt32Array(this.memory.buffer, TABLE * 4, words),
        new SavedInt32Array(ENGINE_MEMORY.memory.buffer, table, words));
      A.store(i32, 3, fnIndex);
      A.store(i32, 4, nargs);
      A.store(i32, 5, ntiles);
      A.store(i32, 0, this.gen);
      // One tile (a small call whose input is already here): the calling thread takes
      // it; waking a worker would only take CPU from it. A sleeping worker sees the
      // new generation at the next notify and takes only that job's tiles.
      // (a worker awake, still watching [0], takes its tiles without a notify)
      if (ntiles > 1 && A.load(i32, 7) > 0) {
        A.notify(i32, 0);
        this.notifies++;
      }
      this.jobs++;
      this.callerTiles += takeTiles(A, i32, this.f32, this.fns, this.sigs);
      while (A.load(i32, 2) < ntiles) { /* the others' last tiles (see above) */ }
      if (A.load(i32, 6)) throw new Error(`a tile of ${this.names[fnIndex]} failed in the kernel pool`);
    } finally {
      this.busy = false;
    }
  }

  close() {
    for (const w of this.workers) w.terminate();
    this.workers = [];
    this.threads = 1;
  }
}

// Starts the pool: instantiates the threads build (`module`, compiled by
// simd.js while the runtime loads) here and in `threads - 1` workers on one
// shared memory, and resolves when the workers that could start are ready (a
// worker that fails is left out; none: throws).
export async function startKernelPool(module, threads, names, sigs) {
  const memory = new WasmMemory({ initial: INITIAL_PAGES, maximum: MAX_PAGES, shared: true });
  const instance = await wasmInstantiate(module, { env: { memory } });
  const port = new KernelPort(memory, instance.exports, names, sigs);
  const url = createObjectURL(new SavedBlob([WORKER_SOURCE], { type: 'text/javascript' }));
  const errors = [];
  try {
    const started = [];
    for (let i = 1; i < threads; i++) {
      started.push(new SavedPromise((resolve) => {
        let worker;
        const timer = savedSetTimeout(() => { errors.push('a worker did not start in time'); resolve(null); }, READY_TIMEOUT_MS);
        const done = (ok, why) => {
          savedClearTimeout(timer);
          if (!ok) {
            errors.push(why);
            if (worker) worker.terminate();
          }
          resolve(ok ? worker : null);
        };
        try {
          worker = new SavedWorker(url, { name: `webnn-kernels-${i}` });
        } catch (e) {
          done(false, `a worker could not start: ${e && e.message}`);
          return;
        }
        worker.onmessage = (e) => done(!!(e.data && e.data.ready), e.data && e.data.error);
        worker.onerror = (e) => { e.preventDefault(); done(false, `a worker failed: ${e.message}`); };
        worker.postMessage({ module, memory, names, sigs });
      }));
    }
    port.workers = (await SavedPromise.all(started)).filter((w) => w);
  } finally {
    revokeObjectURL(url);
  }
  if (threads > 1 && port.workers.length === 0) {
    throw new Error(`no kernel worker started: ${errors[0] || 'unknown'}`);
  }
  port.threads = 1 + port.workers.length;
  port.startErrors = errors;
  return port;
}
