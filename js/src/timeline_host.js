// The timeline worker, worker side: this script, started by a page in a dedicated
// worker named TIMELINE_HOST_NAME (js/src/timeline.js), runs the page's contexts.
// Its engine starts from the runtime the page fetched and verified (startup.js
// provideRuntime), and every call arrives checked already by the page's shadow
// context: the worker's own context, given the same calls in the same order, runs them
// with the same backends (cpu with its kernel pool, or webgpu on this worker's device).
//
// Calls run in arrival order; only createContext (the engine, a GPU device) and a GPU
// graph's build (its pipelines) hold back the calls after them.

import { ML, hostCreateTensor, hostLoadGraph, slots } from './api.js';
import { CONFIG, ENGINE_STATS } from './config.js';
import { ENGINE, copyFromHeap, dispatchFast, engine, py, readTensorFast, ref, writeTensorFast } from './engine.js';
import { provideRuntime } from './startup.js';
import { INTERNAL, encodeJson } from './webidl.js';
import { SavedUint8Array, savedQueueMicrotask } from './intrinsics.js';
import { Spinner } from './spin.js';
import { graphsTally, onGraphsTally } from './webgpu.js';

// When the last dispatches ran here (engineStats.timeline.dispatchTimes()).
const TIMES = new Array(64);
let timesAt = 0;
const epochNow = () => performance.timeOrigin + performance.now();

const objects = new Map();  // the page's keys -> this worker's MLContext / MLTensor / MLGraph
const queue = [];
let busy = false;
let ml = null;
// The page's runtime ('init') arrived: until then every call waits in the queue, so
// nothing here starts an engine of its own (it would fetch the runtime again and
// miss the page's snapshot). 'init' itself never queues (it may arrive after calls).
let runtimeGiven = false;
// Out of calls, the worker waits for the page's next message: briefly spun where the
// last one came quickly (a page's loop of small graphs), not slept (js/src/spin.js).
const spinner = new Spinner(CONFIG.timelineSpinMs, () => queue.length === 0);

// The gpu-context graphs' tally (engineStats.webgpu.graphs) is the page's: it goes
// out after each change, before any later message (a read's answer) leaves.
let graphsChanged = false;
function postGraphs() {
  if (!graphsChanged) return;
  graphsChanged = false;
  globalThis.postMessage(['graphs', 0, 0, graphsTally()]);
}
onGraphsTally(() => {
  if (graphsChanged) return;
  graphsChanged = true;
  savedQueueMicrotask(postGraphs);
});

function toPage(message, transfer) {
  if (graphsChanged) postGraphs();
  globalThis.postMessage(message, transfer || []);
}

function errorOf(e) {
  if (e instanceof TypeError || e instanceof DOMException) return [e.name, e.message];
  return ['UnknownError', `the timeline worker: ${e && e.message ? e.message : e}`];
}

function reply(id, value, transfer) {
  if (id) toPage(['reply', id, 1, value], transfer);
}

function replyError(id, e) {
  if (id) toPage(['reply', id, 0, errorOf(e)]);
  else toPage(['error', 0, 0, errorOf(e)]);
}

function slotOfKey(key) {
  const obj = objects.get(key);
  const s = obj === undefined ? undefined : slots.get(obj);
  if (!s) throw new DOMException('the timeline worker has no such object (its creation failed)', 'InvalidStateError');
  return s;
}

function destroy(key) {
  const obj = objects.get(key);
  objects.delete(key);
  if (obj) obj.destroy();
}

const HANDLERS = {
  init(id, runtime) {
    if (runtimeGiven) return;
    runtimeGiven = true;
    provideRuntime(runtime);
    engine().then(() => {
      const { startMs, snapshot, threads, simd, phases, webgpu } = ENGINE_STATS;
      let stats = null;
      try { stats = encodeJson({ startMs, snapshot, threads, simd, phases, webgpu }); } catch (e) { stats = 'null'; }
      toPage(['ready', stats]);
    }, (e) => toPage(['failed', e && e.message ? e.message : String(e)]));
  },
  context(id, key, deviceType, powerPreference) {
    return ml.createContext({ deviceType, powerPreference }).then((ctx) => {
      objects.set(key, ctx);
      const s = slots.get(ctx);
      ctx.lost.then((info) => { if (!s.closedByPage) toPage(['lost', key, info.message]); });
      const webgpu = s.gpu ? { token: s.gpu.token, adapter: s.gpu.adapter, limits: s.gpu.limits() }
        : { reason: ENGINE_STATS.webgpu ? ENGINE_STATS.webgpu.reason : null };
      reply(id, { webgpu });
    }, (e) => {
      if (id) replyError(id, e);
      else toPage(['lost', key, `the timeline worker could not create the context: ${errorOf(e)[1]}`]);
    });
  },
  tensor(id, key, handle, desc) {
    objects.set(handle, hostCreateTensor(objects.get(key), desc));
    reply(id, null);
  },
  write(id, key, handle, buffer) {
    writeTensorFast(slotOfKey(key).handle, slotOfKey(handle).handle, new SavedUint8Array(buffer));
  },
  dispatch(id, key, graph, handles) {
    const tensors = handles.map((h) => slotOfKey(h).handle);
    const started = epochNow();
    dispatchFast(slotOfKey(key).handle, slotOfKey(graph).handle, tensors, true);  // the page's shadow checked it
    TIMES[timesAt++ % TIMES.length] = [started, epochNow()];
  },
  spins(id) { reply(id, spinner.report()); },
  heap(id) { reply(id, ENGINE ? ENGINE.heap().length : 0); },
  times(id) {
    const out = [];
    for (let i = Math.max(0, timesAt - TIMES.length); i < timesAt; i++) out.push(TIMES[i % TIMES.length]);
    reply(id, out);
  },
  read(id, key, handle) {
    const cs = slotOfKey(key);
    const answer = readTensorFast(cs.handle, slotOfKey(handle).handle, false);
    if (answer.ok && answer.ok.gpuRead) {
      const { buffer, bytes } = answer.ok.gpuRead;
      cs.gpu.read(buffer, bytes).then((data) => {
        const out = data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data : data.slice();
        reply(id, out.buffer, [out.buffer]);
      }, (e) => replyError(id, e));
      return;
    }
    const out = copyFromHeap(answer.bytes);
    reply(id, out.buffer, [out.buffer]);
  },
  build(id, key, handle, document, sizes, constants) {
    const graph = hostLoadGraph(objects.get(key), document, sizes, new SavedUint8Array(constants));
    const names = (g) => ({ inputNames: slots.get(g).inputNames, outputNames: slots.get(g).outputNames });
    if (!graph || typeof graph.then !== 'function') {
      objects.set(handle, graph);
      reply(id, names(graph));
      return null;
    }
    return graph.then((g) => {
      objects.set(handle, g);
      reply(id, names(g));
    }, (e) => replyError(id, e));
  },
  destroyTensor(id, handle) { destroy(handle); },
  destroyGraph(id, handle) { destroy(handle); },
  release(id, handle) { destroy(handle); },
  destroyContext(id, key) {
    const ctx = objects.get(key);
    if (ctx) slots.get(ctx).closedByPage = true;
    destroy(key);
  },
  // engineStats.kernels.* of a context here: kernel_debug or backend_status.
  debug(id, key, method, args) {
    reply(id, py(method, [ref(slotOfKey(key).handle), ...args]));
  },
};

function pump() {
  while (runtimeGiven && !busy && queue.length) {
    const message = queue.shift();
    const [op, id] = message;
    let result;
    try {
      result = HANDLERS[op](...message.slice(1));
    } catch (e) {
      replyError(id, e);
      continue;
    }
    if (result && typeof result.then === 'function') {
      busy = true;
      result.catch((e) => replyError(id, e)).then(() => {
        busy = false;
        pump();
      });
    }
  }
  if (runtimeGiven && !busy && !queue.length) spinner.begin();
}

export function startTimelineHost() {
  ml = new ML(INTERNAL);
  globalThis.addEventListener('message', (e) => {
    const message = e.data;
    spinner.end();
    if (message[0] === 'init') HANDLERS.init(...message.slice(1));
    else if (message[0] === 'batch') for (const m of message[2]) queue.push(m);
    else queue.push(message);
    pump();
  });
  toPage(['hello']);
}
