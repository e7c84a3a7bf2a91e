// The timeline worker, page side (docs/architecture.md, "The timeline worker").
//
// On a window's main thread with CONFIG.timeline === 'worker', each context's graphs,
// tensors and their contents live in a dedicated worker running this very script in
// its "timeline host" mode (js/src/timeline_host.js). The page keeps its own engine
// for MLGraphBuilder and for every check a call makes (a shadow context in the core:
// webnn_core.context.Context.shadow), so errors are thrown as before, synchronously;
// then the call is posted to the worker, in call order: dispatch(), writeTensor()
// and destroy() return at once, readTensor(), createTensor() and build() settle when
// the worker answers.
//
// Messages are arrays [op, requestId, ...args] (requestId 0: no answer wanted), and
// the worker answers ['reply', requestId, ok, value]. Keys: a context's is negative
// (this module numbers them), a tensor's or graph's is the page engine's handle of
// its shadow.

import { CONFIG, ENGINE_STATS, HARDWARE_CONCURRENCY, IS_WINDOW, OWN_SCRIPT, TIMELINE_HOST_NAME } from './config.js';
import { runtimeForWorker } from './startup.js';
import { SavedDOMException, jsonParse, now, savedQueueMicrotask, savedSetTimeout } from './intrinsics.js';
import { Spinner, spinWindowMs } from './spin.js';
import { encodeJson } from './webidl.js';
import { addWorkerGraphs } from './webgpu.js';

const SavedWorker = typeof Worker === 'function' ? Worker : null;

// engineStats.timeline: where contexts execute, the worker's state and its start-up.
export const TIMELINE_STATS = {
  mode: null,  // the mode of the last context created: 'worker' or 'page'
  reason: null,  // why contexts run in the page when 'worker' was asked for
  worker: null,  // null, 'starting', 'ready', 'failed', 'terminated'
  workerStats: null,  // the worker's own engineStats (start, snapshot, simd, threads) once ready
  startedMs: null, readyMs: null,
  runtimeHandedMs: null,  // worker spawned -> the page's runtime posted to it
  contexts: 0,  // contexts executing in the worker now
  workersStarted: 0,
  errors: [],  // failures of enqueued calls the worker reported (no promise to reject)
  // The worker's last dispatches (tests, benchmarks): a promise of [[start, end], ...],
  // ms since the epoch (performance.timeOrigin + performance.now() in the worker).
  dispatchTimes: () => (liveClient() ? liveClient().request(['times', 0]) : Promise.resolve([])),
  // The size of the worker engine's wasm heap in bytes (it only grows: what a page frees is
  // reused), a promise; 0 before the engine is up, null when no worker runs.
  workerHeapBytes: () => (liveClient() ? liveClient().request(['heap', 0]) : Promise.resolve(null)),
  // How the waits for the worker went (js/src/spin.js): a promise of {page, worker}, each
  // {windowMs, waits, spun, caught}; worker null when no worker runs.
  spins: () => {
    const c = liveClient();
    if (!c) return Promise.resolve({ page: null, worker: null });
    const page = c.spinner.report();
    return c.request(['spins', 0]).then((worker) => ({ page, worker }));
  },
};
ENGINE_STATS.timeline = TIMELINE_STATS;

// How long the worker outlives its last context, waiting for the next one: a page that
// destroys one model's context and makes the next (the bench page, a model switcher)
// keeps the worker's engine instead of starting another (0.7-3 s on two cores, all of it
// in the next build()). A worker whose engine failed a call with UnknownError (out of
// memory, typically) ends at once, with its heap.
const KEEP_ALIVE_MS = 5000;

let sharedClient = null;
// The worker's client while it runs (engineStats.timeline's requests), else null.
const liveClient = () => (sharedClient && !sharedClient.dead ? sharedClient : null);
let brokenReason = null;  // the worker could not run here: every later context in the page

// Why contexts created now run in the page ('' when they go to the worker).
export function pageReason() {
  if (CONFIG.timeline !== 'worker') return "WEBNN_POLYFILL_CONFIG.timeline is not 'worker'";
  if (!IS_WINDOW) return "not a window's main thread (the polyfill runs in this thread)";
  if (!SavedWorker) return 'this global has no Worker';
  if (!OWN_SCRIPT) return "the polyfill's script URL is unknown (loaded inline or bundled; set WEBNN_POLYFILL_CONFIG.timelineScript)";
  if (brokenReason) return brokenReason;
  return '';
}

// Whether the page's engine is only a validator (its kernel pool need not start).
export function pageEngineValidatesOnly() {
  return CONFIG.timeline === 'worker' && !pageReason();
}

function toError([name, message]) {
  if (name === 'TypeError') return new TypeError(message);
  return new SavedDOMException(message, name);
}

// The worker's configuration: the page's settings that are plain data.
function configForWorker() {
  const out = {};
  for (const [k, v] of Object.entries(CONFIG)) {
    if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) out[k] = v;
  }
  out.prefetch = false;
  out.timeline = 'page';
  out.timelineSpinMs = spinWindowMs(CONFIG.timelineSpinMs);  // the page's cores decide
  return out;
}

class TimelineClient {
  constructor() {
    this.nextRequest = 1;
    this.nextContext = 1;
    this.pending = new Map();
    this.contexts = new Map();  // key -> callback(message) when the worker loses that context
    this.live = 0;
    this.idle = 0;  // counts opens and last closes: a scheduled end checks it is still the latest
    this.failedCall = false;
    this.dead = null;
    this.graphsSeen = null;  // the worker's last tally of its gpu-context graphs
    TIMELINE_STATS.worker = 'starting';
    TIMELINE_STATS.startedMs = now();
    TIMELINE_STATS.workersStarted++;
    const name = `${TIMELINE_HOST_NAME} ${encodeJson(configForWorker())}`;
    this.worker = new SavedWorker(OWN_SCRIPT.url, OWN_SCRIPT.type === 'module' ? { name, type: 'module' } : { name });
    this.hello = new Promise((resolve) => { this.sayHello = resolve; });
    this.worker.onmessage = (e) => this.receive(e.data);
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.fail(`the timeline worker failed: ${e.message || 'it could not load the polyfill script'}`);
    };
    this.initialised = false;
    this.outbox = [];
    this.transfers = [];
    this.flushQueued = false;
    this.flushLater = () => {
      this.flushQueued = false;
      this.flush();
    };
    // While a request is unanswered the page waits for the worker: briefly spun where
    // the last answer came quickly (a small graph's read), not slept (js/src/spin.js).
    this.spinner = new Spinner(CONFIG.timelineSpinMs, () => this.pending.size > 0 && !this.dead);
  }

  // The worker's engine starts at the first createContext(), from the files the page
  // fetched and verified, restoring the same snapshot: beside the page's engine where
  // there are cores for both, else once the page's is up (two starts at once on two
  // cores slowed the page's createContext() from 2.0 to 6.1 s, load ~20; docs/performance.md).
  start(pageEngine) {
    if (this.initialised) return;
    this.initialised = true;
    const after = HARDWARE_CONCURRENCY > 2 ? Promise.resolve() : pageEngine.catch(() => {});
    after.then(() => runtimeForWorker()).then((runtime) => {
      TIMELINE_STATS.runtimeHandedMs = now() - TIMELINE_STATS.startedMs;
      if (!this.dead) this.worker.postMessage(['init', 0, runtime]);  // the worker's calls wait for it
    }).catch((e) => this.fail(`the runtime could not be handed to the timeline worker: ${e && e.message}`));
  }

  // Calls go out in batches: those posted in one turn of the page's event loop travel
  // as one message, at the end of the turn (a microtask), except that dispatch() sends
  // what is waiting at once (api.js): the graph runs while the page goes on with the
  // rest of its turn (a frame's drawing), as a native implementation's IPC would. A
  // frame's writeTensor() + dispatch() so travel together, its readTensor() after.
  post(message, transfer) {
    if (this.dead) return;
    this.outbox.push(message);
    if (transfer) for (const t of transfer) this.transfers.push(t);
    if (!this.flushQueued) {
      this.flushQueued = true;
      savedQueueMicrotask(this.flushLater);
    }
  }

  flush() {
    if (this.dead || !this.outbox.length) return;
    const batch = this.outbox;
    const transfers = this.transfers;
    this.outbox = [];
    this.transfers = [];
    this.worker.postMessage(batch.length === 1 ? batch[0] : ['batch', 0, batch], transfers);
  }

  // A request: its answer's value, or the mapped error.
  request(message, transfer) {
    return new Promise((resolve, reject) => this.call(message, transfer, resolve, reject));
  }

  // The same with callbacks, run in the task of the worker's answer (a read settles
  // there, without the promise hops in between).
  call(message, transfer, resolve, reject) {
    if (this.dead) {
      reject(new SavedDOMException(this.dead, 'InvalidStateError'));
      return;
    }
    const id = this.nextRequest++;
    message[1] = id;
    this.pending.set(id, { resolve, reject });
    this.post(message, transfer);
    this.spinner.begin();
  }

  receive(message) {
    const [op, id, ok, value] = message;
    if (op === 'reply') {
      const p = this.pending.get(id);
      this.pending.delete(id);
      this.spinner.end();  // before the answer's callbacks, which may ask again
      if (this.pending.size) this.spinner.begin();
      if (!ok && value[0] === 'UnknownError') this.failedCall = true;
      if (p) (ok ? p.resolve(value) : p.reject(toError(value)));
    } else if (op === 'hello') {
      this.sayHello(true);
    } else if (op === 'ready') {
      TIMELINE_STATS.worker = 'ready';
      TIMELINE_STATS.readyMs = now() - TIMELINE_STATS.startedMs;
      TIMELINE_STATS.workerStats = jsonParse(id);
    } else if (op === 'failed') {
      this.fail(`the engine in the timeline worker failed to start: ${id}`);
    } else if (op === 'lost') {
      const lose = this.contexts.get(id);
      if (lose) lose(ok);
    } else if (op === 'graphs') {
      // The worker's gpu-context graphs count as the page's (engineStats.webgpu.graphs).
      addWorkerGraphs(this.graphsSeen, value);
      this.graphsSeen = value;
    } else if (op === 'error') {
      // A posted call the page had checked failed in the worker (e.g. out of memory).
      if (value[0] === 'UnknownError') this.failedCall = true;
      TIMELINE_STATS.errors.push(value);
      if (TIMELINE_STATS.errors.length > 20) TIMELINE_STATS.errors.shift();
      console.warn(`webnn-polyfill: ${value[0]}: ${value[1]}`);
    }
  }

  // The worker cannot go on: every pending request rejects, every context is lost.
  fail(reason) {
    if (this.dead) return;
    this.dead = reason;
    TIMELINE_STATS.worker = 'failed';
    if (!TIMELINE_STATS.readyMs) brokenReason = reason;  // it never started: later contexts stay in the page
    this.sayHello(false);
    this.shutDown(reason, 'UnknownError');
  }

  shutDown(reason, name) {
    this.worker.terminate();
    if (sharedClient === this) sharedClient = null;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(new SavedDOMException(reason, name));
    const lose = [...this.contexts.values()];
    this.contexts.clear();
    for (const f of lose) f(reason);
  }

  // A context of this worker: `onLost(message)` when the worker loses it.
  openContext(onLost) {
    const key = -(this.nextContext++);
    this.contexts.set(key, onLost);
    this.live++;
    this.idle++;  // a pending end (closeContext) no longer applies
    TIMELINE_STATS.contexts = this.live;
    return key;
  }

  // The context is gone (destroyed, lost or collected); KEEP_ALIVE_MS after the last
  // one, unless another came meanwhile, the worker ends and with it every byte it held.
  closeContext(key) {
    if (!this.contexts.delete(key)) return;
    this.live--;
    TIMELINE_STATS.contexts = this.live;
    if (this.live !== 0 || this.dead) return;
    const end = () => {
      if (this.live !== 0 || this.dead || this.idle !== idle) return;
      this.dead = 'the timeline worker was terminated (its last context was destroyed)';
      TIMELINE_STATS.worker = 'terminated';
      this.shutDown(this.dead, 'InvalidStateError');
    };
    const idle = ++this.idle;
    if (this.failedCall) end();
    else savedSetTimeout(end, KEEP_ALIVE_MS);
  }
}

function spawn() {
  if (!sharedClient || sharedClient.dead) {
    try {
      sharedClient = new TimelineClient();
    } catch (e) {  // a Content-Security-Policy without worker-src for this script, ...
      brokenReason = `the timeline worker could not start: ${e && e.message}`;
      return null;
    }
  }
  return sharedClient;
}

// At script load (with the runtime's prefetch): the worker loads this script meanwhile;
// its engine waits for the first createContext().
export function prespawnTimelineWorker() {
  if (pageEngineValidatesOnly()) spawn();
}

// The worker for a new context: a promise of the client, or null (run in the page).
export function timelineClient(pageEngine) {
  const why = pageReason();
  TIMELINE_STATS.mode = why ? 'page' : 'worker';
  TIMELINE_STATS.reason = CONFIG.timeline === 'worker' ? why || null : null;
  if (why) return null;
  const c = spawn();
  if (!c) {
    TIMELINE_STATS.mode = 'page';
    TIMELINE_STATS.reason = brokenReason;
    return null;
  }
  c.start(pageEngine);
  return c.hello.then((alive) => {
    if (alive) return c;
    TIMELINE_STATS.mode = 'page';
    TIMELINE_STATS.reason = brokenReason || c.dead;
    return null;
  });
}
