// The WebNN interfaces: ML, MLContext, MLGraphBuilder, MLOperand, MLGraph,
// MLTensor. Each method converts its arguments (WebIDL), then asks the core;
// the core owns every state check and all op validation.

import { IDL_OPS } from './idl_tables.js';
import {
  INTERNAL, NamedRecord, bytesOf, convert, convertRecord, converters, defineAttribute, defineInterface, defineOperation,
  isSharedBuffer, promiseOperation, requireArgs, toBufferSource, toUSVString,
} from './webidl.js';
import {
  ENGINE, copyFromHeap, dispatchFast, engine, heapView, py, pyReply, pyResultText, readTensorFast, ref, releasePin,
  writeTensorFast,
} from './engine.js';
import {
  SavedDOMException, SavedMessageChannel, SavedUint8Array, SavedWeakRef, defineDataProperty, hasOwn, isView, jsonParse, savedPortPostMessage, savedSetTimeout,
  typedArrayBuffer, typedArrayByteLength, typedArraySet,
} from './intrinsics.js';
import { ENGINE_STATS } from './config.js';
import { defaultBackendOptions } from './simd.js';
import { GpuRunner, defaultGpuDevice, isGPUDevice } from './webgpu.js';
import { timelineClient } from './timeline.js';

// Internal slots of every interface instance: object -> {kind, handle, ...}.
export const slots = new WeakMap();

function brand(obj, kind, what) {
  const s = obj !== null && (typeof obj === 'object' || typeof obj === 'function') ? slots.get(obj) : undefined;
  if (!s || s.kind !== kind) throw new TypeError(`${what}: 'this' is not an ${kind}`);
  return s;
}

export function slotOf(value, kind, what) {
  const s = value !== null && typeof value === 'object' ? slots.get(value) : undefined;
  if (!s || s.kind !== kind) throw new TypeError(`${what} is not an ${kind}`);
  return s;
}

function illegalConstructor(token) {
  if (token !== INTERNAL) throw new TypeError('Illegal constructor');
}

converters.operand = (v, what) => ref(slotOf(v, 'MLOperand', what).handle);

// Handles of objects JS no longer references are released in the core (a
// tensor's or graph's arrays are freed then). Raw handles: the object is gone.
// A remote object (timeline worker) is released there too: `remote` is its context's
// {client, key}; a context's own entry also closes it in the worker.
export const released = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry(([method, handle, remote, isContext]) => {
    if (ENGINE) py(method, [handle]);
    if (remote && isContext) {
      if (remote.client.contexts.has(remote.key)) {  // not destroyed or lost before
        remote.client.post(['destroyContext', 0, remote.key]);
        remote.client.closeContext(remote.key);
      }
    } else if (remote) {
      remote.client.post(['release', 0, handle]);
    }
  })
  : { register() {} };

// Element types each data type accepts as a constant's ArrayBufferView.
const VIEW_TYPES = {
  float32: ['Float32Array'], float16: ['Float16Array', 'Uint16Array'], int32: ['Int32Array'],
  uint32: ['Uint32Array'], int64: ['BigInt64Array'], uint64: ['BigUint64Array'], int8: ['Int8Array'],
  uint8: ['Uint8Array'], int4: ['Uint8Array', 'Int8Array'], uint4: ['Uint8Array'],
};

function viewTypeName(view) {
  return Object.prototype.toString.call(view).slice(8, -1);
}

// Promises the timeline settles run in a task of their own, in call order: a
// MessageChannel message, not a zero-delay timer (nested timers are clamped
// to >= 4 ms, which would put a floor under every readTensor).
const settleQueue = [];
let settleHead = 0;
let settlePort = null;

function queueSettle(fn) {
  settleQueue[settleQueue.length] = fn;
  if (!SavedMessageChannel) {
    savedSetTimeout(runSettle, 0);
    return;
  }
  if (!settlePort) {
    const channel = new SavedMessageChannel();
    channel.port1.onmessage = runSettle;
    settlePort = channel.port2;
  }
  savedPortPostMessage(settlePort, null);
}

function runSettle() {
  const fn = settleQueue[settleHead];
  settleQueue[settleHead++] = undefined;
  if (settleHead === settleQueue.length) settleQueue.length = settleHead = 0;
  if (fn) fn();
}

function frozenShape(shape) {
  return Object.freeze(shape.slice());
}

// ---------------------------------------------------------------------------- ML
export class ML { constructor(token) { illegalConstructor(token); slots.set(this, { kind: 'ML' }); } }
defineInterface(ML, 'ML', 0);

defineOperation(ML.prototype, 'createContext', 0, promiseOperation(function (options) {
  brand(this, 'ML', 'ML.createContext');
  let deviceType = 'cpu';
  let powerPreference = 'default';
  let accelerated = true;
  let gpuDevice = null;
  if (isGPUDevice(options)) {
    gpuDevice = options;
    deviceType = 'gpu';
  } else {
    // deviceType is an extension (spec/extensions.json): browsers and WPT still pass it.
    const o = convert('MLContextOptions', options, 'createContext: options');
    deviceType = o.deviceType;
    powerPreference = o.powerPreference;
    accelerated = o.accelerated !== undefined ? o.accelerated : true;
  }
  // A gpu context runs on WebGPU: the GPUDevice it was given, else this
  // global's own device when an adapter exists; otherwise on the cpu kernels,
  // with the reason in engineStats.backend(context) and engineStats.webgpu.
  // On a window's main thread the context may execute in the timeline worker
  // (js/src/timeline.js); a GPUDevice the page gave stays where it lives, in the page.
  const started = engine();
  const timeline = gpuDevice ? null : timelineClient(started);
  const device = deviceType !== 'gpu' || timeline ? null
    : gpuDevice ? { device: gpuDevice, adapter: 'the GPUDevice given to createContext()' } : defaultGpuDevice();
  return Promise.all([started, device, timeline]).then(([, found, client]) => {
    if (client) return remoteContext(client, deviceType, powerPreference, accelerated);
    if (timeline && deviceType === 'gpu') {  // the worker could not start: the page's own device
      return Promise.resolve(defaultGpuDevice()).then((dev) => pageContext(dev, deviceType, powerPreference, accelerated, gpuDevice));
    }
    return pageContext(found, deviceType, powerPreference, accelerated, gpuDevice);
  });
}));

function pageContext(found, deviceType, powerPreference, accelerated, gpuDevice) {
  const options = defaultBackendOptions();
  let runner = null;
  if (found) {
    runner = new GpuRunner(found.device, found.adapter);
    options.webgpu = { token: runner.token, adapter: found.adapter, limits: runner.limits() };
  } else if (deviceType === 'gpu') {
    // The context's processing type ([[accelerated]]) is CPU: the platform's attempt at
    // massively parallel acceleration found no WebGPU (engineStats says why).
    accelerated = false;
    options.webgpu = { reason: ENGINE_STATS.webgpu.reason };
  }
  let handle;
  try {
    handle = py('create_context', [deviceType, powerPreference, options]);
  } catch (e) {
    if (runner) runner.forget();
    throw e;
  }
  return newContext(handle, deviceType, gpuDevice, accelerated, runner);
}

// A context executing in the timeline worker: the page holds its shadow (every check,
// no contents). A cpu context does not wait for the worker (its first answer does); a
// gpu one does: the worker's adapter decides what the context can run.
function remoteContext(client, deviceType, powerPreference, accelerated) {
  let state = null;
  const key = client.openContext((message) => {
    if (state) loseContext(state, message);
  });
  const made = (webgpu) => {
    const options = defaultBackendOptions();
    options.shadow = true;
    if (webgpu) options.webgpu = webgpu;
    let handle;
    try {
      handle = py('create_context', [deviceType, powerPreference, options]);
    } catch (e) {
      client.closeContext(key);
      throw e;
    }
    const ctx = newContext(handle, deviceType, null, accelerated, null, { client, key });
    state = slots.get(ctx);
    return ctx;
  };
  if (deviceType !== 'gpu') {
    client.post(['context', 0, key, deviceType, powerPreference]);
    return made(null);
  }
  return client.request(['context', 0, key, deviceType, powerPreference]).then((info) => {
    if (!info.webgpu.token) accelerated = false;  // no WebGPU in the worker: the cpu kernels
    return made(info.webgpu);
  }, (e) => {
    client.closeContext(key);
    throw e;
  });
}

// The worker lost the context (its device was lost, or the worker ended).
function loseContext(s, message) {
  if (s.destroyed) return;
  s.destroyed = true;
  try { py('destroy_context', [ref(s.handle)]); } catch (e) { /* engine gone */ }
  s.remote.client.closeContext(s.remote.key);
  s.resolveLost({ message });
}

// ----------------------------------------------------------------------- MLContext
export class MLContext { constructor(token) { illegalConstructor(token); } }
defineInterface(MLContext, 'MLContext', 0);

// A context collected without destroy() hands its GPU runner's buffers back (the core
// forgets the context through `released`; nothing can reach its buffers any more).
const collectedRunners = typeof FinalizationRegistry === 'function'
  ? new FinalizationRegistry((runner) => runner.dispose())
  : { register() {}, unregister() {} };

function newContext(handle, deviceType, gpuDevice, accelerated, gpu, remote = null) {
  const ctx = new MLContext(INTERNAL);
  let resolveLost;
  const lost = new Promise((r) => { resolveLost = r; });
  const s = {
    kind: 'MLContext', handle, deviceType, gpuDevice, accelerated, destroyed: false, lost, resolveLost, gpu, remote,
    tensorsDestroyed: 0,
  };
  slots.set(ctx, s);
  released.register(ctx, ['release', handle, remote, true]);
  if (gpu) {
    collectedRunners.register(ctx, gpu, s);
    // Device loss loses the context: pending reads reject, the context is destroyed. The
    // handler holds the context's state weakly: a shared device outlives its contexts.
    const weak = SavedWeakRef ? new SavedWeakRef(s) : { deref: () => s };
    gpu.device.lost.then((info) => {
      const state = weak.deref();
      if (!state) return;
      state.gpu.lost = `the GPU device was lost: ${info && info.message}`;
      if (state.destroyed) return;
      state.destroyed = true;
      try { py('destroy_context', [ref(state.handle)]); } catch (e) { /* engine gone */ }
      state.gpu.forget();
      collectedRunners.unregister(state);
      state.resolveLost({ message: state.gpu.lost });
    });
  }
  return ctx;
}

// Each context answers for its own backend: cached per context, never shared.
defineOperation(MLContext.prototype, 'opSupportLimits', 0, function () {
  const s = brand(this, 'MLContext', 'MLContext.opSupportLimits');
  if (s.limitsJson === undefined) s.limitsJson = pyResultText('op_support_limits', [ref(s.handle)]);
  return jsonParse(s.limitsJson);  // a fresh dictionary per call
});

// A small handle for benchmarks and debugging (webnnPolyfill.engineStats.kernels):
// the switches and profile of one context's cpu kernels (each context owns its own).
// A context in the timeline worker answers from there: a promise.
function kernelDebug(ctx, action, ...args) {
  const s = slotOf(ctx, 'MLContext', `engineStats.kernels.${action}: context`);
  if (s.remote) return s.remote.client.request(['debug', 0, s.remote.key, 'kernel_debug', [action, ...args]]);
  return py('kernel_debug', [ref(s.handle), action, ...args]);
}

ENGINE_STATS.kernels = {
  status: (ctx) => kernelDebug(ctx, 'status'),
  // Graphs are compiled (fusion, packing) at build(): build after switching.
  setFastPaths: (ctx, on) => kernelDebug(ctx, 'set_fast_paths', !!on),
  setLayoutPass: (ctx, on) => kernelDebug(ctx, 'set_layout_pass', !!on),
  setProfiling: (ctx, on) => kernelDebug(ctx, 'set_profiling', !!on),
  resetProfile: (ctx) => kernelDebug(ctx, 'reset_profile'),
  // The context's backend: cpu, or webgpu (adapter, graphs on the GPU / on the cpu fallback
  // with the reason, dispatches, uploads, readbacks, op census of what the GPU ran).
  backend: (ctx) => {
    const s = slotOf(ctx, 'MLContext', 'engineStats.kernels.backend: context');
    if (s.remote) return s.remote.client.request(['debug', 0, s.remote.key, 'backend_status', []]);
    return py('backend_status', [ref(s.handle)]);
  },
  // Where the context's graphs run: 'worker' (the timeline worker) or 'page' (this thread).
  location: (ctx) => (slotOf(ctx, 'MLContext', 'engineStats.kernels.location: context').remote ? 'worker' : 'page'),
  profile: (ctx) => kernelDebug(ctx, 'profile'),
  fallbackReasons: (ctx) => kernelDebug(ctx, 'fallback_reasons'),
  // The core's handle of a context (for Python run in the engine by benchmarks).
  handle: (ctx) => slotOf(ctx, 'MLContext', 'engineStats.kernels.handle: context').handle,
};

defineOperation(MLContext.prototype, 'destroy', 0, function () {
  const s = brand(this, 'MLContext', 'MLContext.destroy');
  if (s.destroyed) return;
  s.destroyed = true;
  py('destroy_context', [ref(s.handle)]);
  if (s.remote) {
    s.remote.client.post(['destroyContext', 0, s.remote.key]);
    s.remote.client.closeContext(s.remote.key);
  }
  if (s.gpu) {
    s.gpu.forget();
    collectedRunners.unregister(s);
  }
  s.resolveLost({ message: 'The context was destroyed.' });
});

defineAttribute(MLContext.prototype, 'lost', function () {
  try {
    return brand(this, 'MLContext', 'MLContext.lost').lost;
  } catch (e) {
    return Promise.reject(e);
  }
});

defineAttribute(MLContext.prototype, 'accelerated', function () {
  return brand(this, 'MLContext', 'MLContext.accelerated').accelerated;
});

function newTensor(handle, context, desc, constant) {
  const tensor = new MLTensor(INTERNAL);
  slots.set(tensor, {
    kind: 'MLTensor', handle, context, dataType: desc.dataType, shape: frozenShape(desc.shape),
    readable: !!desc.readable, writable: !!desc.writable, constant, destroyed: false,
  });
  released.register(tensor, ['release', handle, context.remote]);
  return tensor;
}

defineOperation(MLContext.prototype, 'createTensor', 1, promiseOperation(function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.createTensor');
  requireArgs(args, 1, 'MLContext.createTensor');
  const desc = convert('MLTensorDescriptor', args[0], 'createTensor: descriptor');
  const tensor = newTensor(py('create_tensor', [ref(s.handle), desc]), s, desc, false);
  if (!s.remote) return resolveInTask(s, tensor);
  // Settles once the worker has allocated it (its out-of-memory is this promise's error).
  const handle = slots.get(tensor).handle;
  return resolveInTask(s, s.remote.client.request(['tensor', 0, s.remote.key, handle, desc]).then(() => tensor));
}));

// A tensor that is neither readable nor writable, filled once, for constant(MLTensor).
defineOperation(MLContext.prototype, 'createConstantTensor', 2, promiseOperation(function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.createConstantTensor');
  requireArgs(args, 2, 'MLContext.createConstantTensor');
  const desc = convert('MLOperandDescriptor', args[0], 'createConstantTensor: descriptor');
  const source = toBufferSource(args[1], 'createConstantTensor: inputData');
  const handle = py('create_constant_tensor', [ref(s.handle), desc], bytesOf(source));  // one copy, after the size check
  return resolveInTask(s, newTensor(handle, s, desc, true));
}));

// WebGPU interop: a tensor made by createExportableTensor(descriptor, gpuDevice) can be
// rented to gpuDevice with exportToGPU(). The polyfill shares buffers only with the
// GPUDevice the context itself runs on (createContext(gpuDevice)); the exported
// GPUBuffer gets the tensor's contents by a copy on that device's queue (no host copy),
// and gives them back the same way when the page destroys it (webgpu.js exportBuffer).
defineOperation(MLContext.prototype, 'createExportableTensor', 2, promiseOperation(function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.createExportableTensor');
  requireArgs(args, 2, 'MLContext.createExportableTensor');
  const desc = convert('MLTensorDescriptor', args[0], 'createExportableTensor: descriptor');
  const gpuDevice = args[1];
  if (!isGPUDevice(gpuDevice)) throw new TypeError('createExportableTensor: gpuDevice is not a GPUDevice');
  let problem = null;
  if (s.remote) {
    problem = "this context executes in the polyfill's timeline worker; create the context from this GPUDevice "
      + '(navigator.ml.createContext(gpuDevice)) to share tensors with it';
  } else if (!s.gpu) {
    problem = s.deviceType === 'gpu'
      ? 'this gpu context runs without WebGPU (see webnnPolyfill.engineStats.webgpu)'
      : `a ${s.deviceType} context keeps its tensors in the engine's memory; create the context from this GPUDevice (navigator.ml.createContext(gpuDevice)) to share tensors with it`;
  } else if (s.gpu.device !== gpuDevice) {
    problem = 'the polyfill shares tensors only with the GPUDevice its context runs on; create the context from this GPUDevice (navigator.ml.createContext(gpuDevice))';
  }
  const handle = py('create_exportable_tensor', [ref(s.handle), desc, problem]);
  const tensor = newTensor(handle, s, desc, false);
  slots.get(tensor).gpuDevice = gpuDevice;
  return resolveInTask(s, tensor);
}));

defineOperation(MLContext.prototype, 'exportToGPU', 1, function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.exportToGPU');
  requireArgs(args, 1, 'MLContext.exportToGPU');
  const t = slotOf(args[0], 'MLTensor', 'exportToGPU: tensor');
  // The core checks the tensor as every tensor method does (context, destroyed, lost), then
  // that it is exportable and not exported already.
  const { buffer, bytes } = py('export_tensor', [ref(s.handle), ref(t.handle)]);
  t.exported = s.gpu.exportBuffer(buffer, bytes, () => {
    t.exported = null;
    if (!s.destroyed) py('return_tensor', [ref(s.handle), ref(t.handle)]);
  });
  return t.exported.buffer;
});

// A context in the timeline worker: the shadow's verdict on a call (its checks passed)
// is kept on the tensor or graph for the same arguments. Everything the shadow checks
// there is fixed at creation (context, data type, shape, usage, the graph's bindings)
// except whether the context, tensor or graph is destroyed or lost, which the page
// tracks here and rechecks at each call; any other call goes to the shadow, whose error
// is the one the page would throw.
function shadowPassed(s, o, same) {
  return same && o.context === s && !s.destroyed && !o.destroyed;
}

defineOperation(MLContext.prototype, 'writeTensor', 2, function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.writeTensor');
  requireArgs(args, 2, 'MLContext.writeTensor');
  const t = slotOf(args[0], 'MLTensor', 'writeTensor: tensor');
  const source = toBufferSource(args[1], 'writeTensor: inputData');
  const bytes = bytesOf(source);
  if (!s.remote) {
    writeTensorFast(s.handle, t.handle, bytes);  // the engine copies once, now
    return;
  }
  const length = typedArrayByteLength(bytes);
  if (!shadowPassed(s, t, t.writeChecked === length)) {
    writeTensorFast(s.handle, t.handle, bytes);  // the shadow checks (it throws what the page would)
    t.writeChecked = length;
  }
  // The bytes as of now, moved to the worker (its engine copies them in).
  const copy = new SavedUint8Array(length);
  typedArraySet(copy, bytes);
  const buffer = typedArrayBuffer(copy);
  s.remote.client.post(['write', 0, s.remote.key, t.handle, buffer], [buffer]);
});

defineOperation(MLContext.prototype, 'readTensor', 1, promiseOperation(function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.readTensor');
  requireArgs(args, 1, 'MLContext.readTensor');
  const t = slotOf(args[0], 'MLTensor', 'readTensor: tensor');
  const target = args.length > 1 ? toBufferSource(args[1], 'readTensor: outputData') : null;
  // Snapshot now: the read sees exactly the writes and dispatches issued before
  // it. One copy: out of the heap now, or (BYOB) straight into outputData when
  // the read settles, the snapshot pinned in the engine until then.
  if (s.remote) {
    // Checked by the shadow; the worker takes the snapshot when it reaches this call.
    if (!shadowPassed(s, t, t.readChecked !== undefined)) {
      t.readChecked = readTensorFast(s.handle, t.handle, false).ok.gpuRead.remote;
    }
    return readRemote(s, t, target, t.readChecked);
  }
  const reply = readTensorFast(s.handle, t.handle, target !== null);
  if (reply.ok && reply.ok.gpuRead) return readFromGpu(s, t, target, reply.ok.gpuRead);
  const length = reply.bytes[1];
  const snapshot = target ? null : copyFromHeap(reply.bytes);
  const unpin = () => { if (reply.pin) releasePin(reply.pin); };
  if (target && bytesOf(target).byteLength < length) {
    unpin();
    throw new TypeError(`readTensor: outputData has ${bytesOf(target).byteLength} bytes, the tensor has ${length}`);
  }
  // Settle later, rechecking: destroying the tensor or context meanwhile rejects.
  return new Promise((resolve, reject) => {
    afterEarlierReads(s, null, () => {
      try {
        settle();
      } catch (e) {
        reject(e);  // never leave a read pending
      } finally {
        unpin();
      }
    });
    function settle() {  // the pinned heap bytes are read only here, still pinned
      finishRead(s, t, target, length, target ? heapView(reply.bytes) : snapshot, null, resolve, reject);
    }
  });
}));

// A tensor whose contents are on the GPU: the copy to a staging buffer is
// submitted now (after every write and dispatch issued before), the promise
// settles once it is mapped, rechecking destroyed state like any read.
function readFromGpu(s, t, target, { buffer, bytes }) {
  return readLater(s, t, target, bytes, () => s.gpu.read(buffer, bytes));
}

// A read whose bytes arrive later (`fetch()`: a promise of a Uint8Array of them): from
// the GPU, or from the timeline worker.
function readLater(s, t, target, bytes, fetch) {
  if (target && bytesOf(target).byteLength < bytes) {
    throw new TypeError(`readTensor: outputData has ${bytesOf(target).byteLength} bytes, the tensor has ${bytes}`);
  }
  const mapped = fetch();
  return new Promise((resolve, reject) => {
    let data;
    afterEarlierReads(s, mapped.then((d) => { data = d; }), (failure) => {
      finishRead(s, t, target, bytes, data, failure, resolve, reject);
    });
  });
}

// A read's bytes have arrived (`data`, a Uint8Array) or it failed: settle it, rechecking
// destroyed state and outputData.
function finishRead(s, t, target, bytes, data, failure, resolve, reject) {
  if (failure) {
    reject(failure);
    return;
  }
  if (s.destroyed || t.destroyed) {
    reject(new SavedDOMException('readTensor: the tensor or its context was destroyed before the read completed', 'InvalidStateError'));
    return;
  }
  if (!target) {
    resolve(typedArrayBuffer(data));
    return;
  }
  const view = bytesOf(target);
  if (view.byteLength < bytes) {
    reject(new TypeError('readTensor: outputData was detached or shrunk before the read completed'));
    return;
  }
  typedArraySet(view, data);
  resolve(undefined);
}

// A read of a context in the timeline worker. The worker's answer arrives in a task of
// its own (a message event): with no read or creation of this context still pending,
// nothing is ahead of it and the read settles right there; else after those, in order.
function readRemote(s, t, target, bytes) {
  const { client, key } = s.remote;
  const message = ['read', 0, key, t.handle];
  if (s.readTail) {
    return readLater(s, t, target, bytes, () => client.request(message).then((buffer) => new SavedUint8Array(buffer)));
  }
  if (target && bytesOf(target).byteLength < bytes) {
    throw new TypeError(`readTensor: outputData has ${bytesOf(target).byteLength} bytes, the tensor has ${bytes}`);
  }
  let done;
  const tail = new Promise((d) => { done = d; });
  s.readTail = tail;
  tail.then(() => { if (s.readTail === tail) s.readTail = null; });
  return new Promise((resolve, reject) => {
    const settle = (data, failure) => {
      try {
        finishRead(s, t, target, bytes, data, failure, resolve, reject);
      } catch (e) {
        reject(e);  // never leave a read pending
      } finally {
        done();
      }
    };
    client.call(message, null, (buffer) => settle(new SavedUint8Array(buffer), null), (e) => settle(null, e));
  });
}

// Reads settle in call order: a read waits for the GPU reads issued before it
// (`ready`: its own mapping, if it has one). Without GPU reads in flight, a
// read settles in the next settle task, as on the cpu device.
function afterEarlierReads(s, ready, settle) {
  const earlier = s.readTail;
  if (!earlier && !ready) {
    queueSettle(() => settle(null));
    return;
  }
  if (!earlier && s.remote) {
    // The timeline worker's answer arrives in a task of its own (a message event):
    // nothing is ahead of it, so it settles there, without another task's wait.
    let failure = null;
    const tail = ready.catch((e) => { failure = e; }).then(() => settle(failure));
    s.readTail = tail;
    tail.then(() => { if (s.readTail === tail) s.readTail = null; });
    return;
  }
  let failure = null;
  const mine = ready ? ready.catch((e) => { failure = e; }) : null;
  const tail = Promise.all([earlier, mine]).then(() => new Promise((done) => {
    queueSettle(() => {
      try {
        settle(failure);
      } finally {
        done();
      }
    });
  }));
  s.readTail = tail;
  tail.then(() => { if (s.readTail === tail) s.readTail = null; });
}

// createTensor() and build() resolve in a task the context's timeline queues ("queue an ML
// task"), in order with the reads issued before them: a promise resolved at once would settle
// in a microtask and overtake an earlier readTensor(). `value` may be a promise (a GPU graph's
// pipelines): it settles once that does.
function resolveInTask(s, value) {
  const ready = value && typeof value.then === 'function' ? value : null;
  return new Promise((resolve, reject) => {
    afterEarlierReads(s, ready, (failure) => (failure ? reject(failure) : resolve(value)));
  });
}

function tensorRecord(value, what) {
  return convertRecord(value, what, (v, w) => ref(slotOf(v, 'MLTensor', w).handle));
}

defineOperation(MLContext.prototype, 'dispatch', 3, function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.dispatch');
  requireArgs(args, 3, 'MLContext.dispatch');
  const g = slotOf(args[0], 'MLGraph', 'dispatch: graph');
  const inputs = tensorRecord(args[1], 'dispatch: inputs');
  const outputs = tensorRecord(args[2], 'dispatch: outputs');
  const handles = boundHandles(g, inputs, outputs);
  if (!s.remote) {
    if (handles) dispatchFast(s.handle, g.handle, handles);
    else py('dispatch', [ref(s.handle), ref(g.handle), inputs, outputs]);  // the engine says what does not match
    return;
  }
  // Checked by the shadow (or these tensors passed its checks before and none of the
  // context's tensors was destroyed since): the worker runs it when it gets there;
  // dispatch() returns now.
  const key = handles ? `${s.tensorsDestroyed}:${handles.join(',')}` : null;
  if (!shadowPassed(s, g, key !== null && g.dispatchChecked === key)) {
    if (handles) dispatchFast(s.handle, g.handle, handles);
    else py('dispatch', [ref(s.handle), ref(g.handle), inputs, outputs]);
    if (!handles) throw new SavedDOMException('dispatch: the graph is not known to the timeline worker', 'InvalidStateError');
    g.dispatchChecked = key;
  }
  s.remote.client.post(['dispatch', 0, s.remote.key, g.handle, handles]);
  s.remote.client.flush();  // the worker starts on it while this turn goes on
});

// The bound tensors' handles in the order of the graph's input names, then its
// output names, or null when the records' names are not exactly the graph's.
function boundHandles(g, inputs, outputs) {
  const out = [];
  const names = [g.inputNames, g.outputNames];
  const records = [inputs.entries, outputs.entries];
  for (let k = 0; k < 2; k++) {
    const want = names[k];
    const entries = records[k];
    if (!want || entries.length !== want.length) return null;
    for (let i = 0; i < want.length; i++) {
      let j = 0;
      while (j < entries.length && entries[j][0] !== want[i]) j++;
      if (j === entries.length) return null;
      out[out.length] = entries[j][1].$o;
    }
  }
  return out;
}

// Deprecated (CRD 2024-11-15): compute(graph, inputs, outputs) with
// ArrayBufferViews; transfers every view and resolves {inputs, outputs} with
// new views over the same memory.
defineOperation(MLContext.prototype, 'compute', 3, promiseOperation(function (...args) {
  const s = brand(this, 'MLContext', 'MLContext.compute');
  requireArgs(args, 3, 'MLContext.compute');
  const g = slotOf(args[0], 'MLGraph', 'compute: graph');
  // MLNamedArrayBufferViews has no [AllowShared]: a view on a SharedArrayBuffer
  // is the IDL's TypeError, before anything is computed, written or detached.
  const viewRecord = (v, w) => convertRecord(v, w, (x, ww) => {
    if (!isView(x)) throw new TypeError(`${ww} is not an ArrayBufferView`);
    if (isSharedBuffer(x.buffer)) throw new TypeError(`${ww} is a view on a SharedArrayBuffer`);
    return x;
  });
  const inputs = viewRecord(args[1], 'compute: inputs');
  const outputs = viewRecord(args[2], 'compute: outputs');
  const temp = [];
  const gpuReads = [];  // [view, promise of its bytes] for outputs left on the GPU
  const bind = (views, descriptors, kind) => {
    const bound = new NamedRecord();
    for (const [name, view] of views.entries) {
      const desc = hasOwn(descriptors, name) ? descriptors[name] : undefined;
      if (!desc) throw new TypeError(`compute: the graph has no ${kind} named '${name}'`);
      const tdesc = { dataType: desc.dataType, shape: desc.shape, readable: true, writable: true };
      const h = py('create_tensor', [ref(s.handle), tdesc]);
      temp[temp.length] = h;
      bound.entries[bound.entries.length] = [name, ref(h)];
      if (s.remote) s.remote.client.post(['tensor', 0, s.remote.key, h, tdesc]);
      if (kind === 'input') {
        py('write_tensor', [ref(s.handle), ref(h)], bytesOf(view));
        if (s.remote) {
          const copy = new SavedUint8Array(view.byteLength);
          typedArraySet(copy, bytesOf(view));
          s.remote.client.post(['write', 0, s.remote.key, h, typedArrayBuffer(copy)], [typedArrayBuffer(copy)]);
        }
      }
    }
    return bound;
  };
  try {
    const inBound = bind(inputs, g.inputs, 'input');
    const outBound = bind(outputs, g.outputs, 'output');
    py('dispatch', [ref(s.handle), ref(g.handle), inBound, outBound]);
    if (s.remote) s.remote.client.post(['dispatch', 0, s.remote.key, g.handle, boundHandles(g, inBound, outBound)]);
    for (const [name, view] of outputs.entries) {
      const reply = pyReply('read_tensor', [ref(s.handle), outBound.get(name)]);
      const gpuRead = reply.ok && reply.ok.gpuRead;
      const length = gpuRead ? (s.remote ? gpuRead.remote : gpuRead.bytes) : reply.bytes[1];
      if (length !== view.byteLength) throw new TypeError(`compute: output '${name}' has the wrong byte length`);
      if (gpuRead && s.remote) {
        gpuReads[gpuReads.length] = [name, s.remote.client.request(['read', 0, s.remote.key, outBound.get(name).$o])
          .then((buffer) => new SavedUint8Array(buffer))];
      } else if (gpuRead) gpuReads[gpuReads.length] = [name, s.gpu.read(gpuRead.buffer, length)];
      else typedArraySet(bytesOf(view), heapView(reply.bytes));
    }
  } finally {
    py('release', temp);
    if (s.remote) for (const h of temp) s.remote.client.post(['release', 0, h]);
  }
  const transfer = (views) => {
    const out = {};
    for (const [name, view] of views.entries) {
      const { byteOffset, constructor: Ctor } = view;
      const length = view.length === undefined ? view.byteLength : view.length;  // read before detaching
      const moved = typeof view.buffer.transfer === 'function' ? view.buffer.transfer()
        : structuredClone(view.buffer, { transfer: [view.buffer] });
      // CreateDataProperty: a name such as "__proto__" stays an own property.
      defineDataProperty(out, name, new Ctor(moved, byteOffset, length));
    }
    return out;
  };
  const result = { graph: args[0], inputs: transfer(inputs), outputs: transfer(outputs) };
  if (!gpuReads.length) return result;
  // Outputs on the GPU land in the transferred views once mapped.
  return Promise.all(gpuReads.map(([name, read]) => read.then((data) => {
    const view = result.outputs[name];
    typedArraySet(new SavedUint8Array(view.buffer, view.byteOffset, view.byteLength), data);
  }))).then(() => result);
}));

// ------------------------------------------------------------------------ MLTensor
export class MLTensor { constructor(token) { illegalConstructor(token); } }
defineInterface(MLTensor, 'MLTensor', 0);
for (const attr of ['dataType', 'shape', 'readable', 'writable', 'constant']) {
  defineAttribute(MLTensor.prototype, attr, function () { return brand(this, 'MLTensor', `MLTensor.${attr}`)[attr]; });
}
defineOperation(MLTensor.prototype, 'destroy', 0, function () {
  const t = brand(this, 'MLTensor', 'MLTensor.destroy');
  if (t.destroyed) return;
  t.destroyed = true;
  t.context.tensorsDestroyed++;  // dispatch()'s kept verdicts (shadowPassed) no longer hold
  py('destroy_tensor', [ref(t.handle)]);
  if (t.context.remote && !t.constant) t.context.remote.client.post(['destroyTensor', 0, t.handle]);
  if (t.exported) t.exported.end();  // the GPUBuffer it was rented out as is destroyed with it
});

// ------------------------------------------------------------------------- MLGraph
export class MLGraph { constructor(token) { illegalConstructor(token); } }
defineInterface(MLGraph, 'MLGraph', 0);
defineOperation(MLGraph.prototype, 'destroy', 0, function () {
  const g = brand(this, 'MLGraph', 'MLGraph.destroy');
  if (g.destroyed) return;
  g.destroyed = true;
  py('destroy_graph', [ref(g.handle)]);
  if (g.context.remote) g.context.remote.client.post(['destroyGraph', 0, g.handle]);
});

// ----------------------------------------------------------------------- MLOperand
export class MLOperand { constructor(token) { illegalConstructor(token); } }
defineInterface(MLOperand, 'MLOperand', 0);
for (const attr of ['dataType', 'shape']) {
  defineAttribute(MLOperand.prototype, attr, function () { return brand(this, 'MLOperand', `MLOperand.${attr}`)[attr]; });
}

function newOperand([handle, dataType, shape]) {
  const operand = new MLOperand(INTERNAL);
  slots.set(operand, { kind: 'MLOperand', handle, dataType, shape: frozenShape(shape) });
  return operand;
}

// ------------------------------------------------------------------ MLGraphBuilder
export class MLGraphBuilder {
  constructor(...args) {
    requireArgs(args, 1, "Failed to construct 'MLGraphBuilder'");
    const c = slotOf(args[0], 'MLContext', 'MLGraphBuilder: context');
    const handle = py('new_builder', [ref(c.handle)]);
    slots.set(this, { kind: 'MLGraphBuilder', handle, context: c });
    released.register(this, ['release_builder', handle]);
  }
}
defineInterface(MLGraphBuilder, 'MLGraphBuilder', 1);
const builderProto = MLGraphBuilder.prototype;

defineOperation(builderProto, 'input', 2, function (...args) {
  const s = brand(this, 'MLGraphBuilder', 'MLGraphBuilder.input');
  requireArgs(args, 2, 'MLGraphBuilder.input');
  const name = toUSVString(args[0], 'input: name');
  const desc = convert('MLOperandDescriptor', args[1], 'input: descriptor');
  return newOperand(py('builder_input', [ref(s.handle), name, desc]));
});

// Three overloads (WebIDL overload resolution): constant(MLTensor) for one argument;
// with two, a string picks (MLOperandDataType dataType, MLNumber value), anything
// else (MLOperandDescriptor, AllowSharedBufferSource).
defineOperation(builderProto, 'constant', 1, function (...args) {
  const s = brand(this, 'MLGraphBuilder', 'MLGraphBuilder.constant');
  requireArgs(args, 1, 'MLGraphBuilder.constant');
  if (args.length === 1) {
    const t = slotOf(args[0], 'MLTensor', 'constant: tensor');
    return newOperand(py('builder_constant_tensor', [ref(s.handle), ref(t.handle)]));
  }
  if (args[0] !== null && args[0] !== undefined && typeof args[0] !== 'object') {
    const dataType = convert('MLOperandDataType', args[0], 'constant: dataType');
    const value = convert('number', args[1], 'constant: value');
    return newOperand(py('builder_constant_scalar', [ref(s.handle), dataType, value]));
  }
  const desc = convert('MLOperandDescriptor', args[0], 'constant: descriptor');
  const buffer = toBufferSource(args[1], 'constant: buffer');
  if (ArrayBuffer.isView(buffer) && !(buffer instanceof DataView)) {
    const accepted = VIEW_TYPES[desc.dataType] || [];
    if (!accepted.includes(viewTypeName(buffer))) {
      throw new TypeError(`constant: a ${viewTypeName(buffer)} cannot hold ${desc.dataType} data`);
    }
  }
  // The engine checks the size first, then copies once (never a copy of an oversized buffer).
  return newOperand(py('builder_constant', [ref(s.handle), desc], bytesOf(buffer)));
});

defineOperation(builderProto, 'build', 1, promiseOperation(function (...args) {
  const s = brand(this, 'MLGraphBuilder', 'MLGraphBuilder.build');
  requireArgs(args, 1, 'MLGraphBuilder.build');
  const outputs = convertRecord(args[0], 'build: outputs', (v, w) => converters.operand(v, w));
  const built = py('builder_build', [ref(s.handle), outputs]);
  const graph = newGraph(built, s.context);
  const remote = s.context.remote;
  released.register(graph, ['release', built.graph, remote]);
  if (remote) return resolveInTask(s.context, sendGraph(s.context, slots.get(graph)).then(() => graph));
  // A graph planned for the GPU is ready once its pipelines are.
  return resolveInTask(s.context, s.context.gpu ? s.context.gpu.settled().then(() => graph) : graph);
}));

// A graph of a context in the timeline worker: the worker builds its own from the
// normalised IR and the constants' bytes (moved, not copied: the page's graph drops its
// constants now). Resolves when the worker's graph is ready (a GPU graph's pipelines),
// with the graph's input and output names in its order (dispatch's handles follow it).
// Also for graphs the model loaders made (js/src/nnef.js, xla.js).
export function sendGraph(context, g) {
  const { remote } = context;
  const { document, sizes } = py('graph_export', [ref(g.handle)]);
  const constants = typedArrayBuffer(py('graph_constants', [ref(g.handle)]));
  return remote.client.request(['build', 0, remote.key, g.handle, document, sizes, constants], [constants]).then((names) => {
    g.inputNames = names.inputNames;
    g.outputNames = names.outputNames;
  });
}

function newGraph(built, context) {
  const graph = new MLGraph(INTERNAL);
  slots.set(graph, {
    kind: 'MLGraph', handle: built.graph, context, inputs: built.inputs, outputs: built.outputs,
    inputNames: built.inputNames, outputNames: built.outputNames, destroyed: false,
  });
  return graph;
}

// The timeline worker's side (js/src/timeline_host.js): a tensor made at once (the
// page's createTensor() settles on the answer), and a graph loaded from the page's
// export (webnn_core.bridge.load_graph); a GPU graph is ready once its pipelines are.
export function hostCreateTensor(ctx, desc) {
  const s = slots.get(ctx);
  return newTensor(py('create_tensor', [ref(s.handle), desc]), s, desc, false);
}

export function hostLoadGraph(ctx, document, sizes, constants) {
  const s = slots.get(ctx);
  const built = py('load_graph', [ref(s.handle), document, sizes], constants);
  const graph = newGraph(built, s);
  released.register(graph, ['release', built.graph]);
  return s.gpu ? s.gpu.settled().then(() => graph) : graph;
}

// Every op method, generated from its WebIDL signature.
for (const [name, { params, options: optionsType, returnsSequence }] of Object.entries(IDL_OPS)) {
  const what = `MLGraphBuilder.${name}`;
  defineOperation(builderProto, name, params.length, function (...args) {
    const s = brand(this, 'MLGraphBuilder', what);
    let positional = params;
    let optionsArg = args[params.length];
    if (name === 'softmax' && args.length >= 1 && (args.length < 2 || (args[1] !== null && typeof args[1] === 'object'))) {
      // Legacy softmax(input[, options]): 2-D input, axis 1 (the core checks the rank).
      positional = params.slice(0, 1);
      optionsArg = args[1];
    } else {
      requireArgs(args, params.length, what);
    }
    const converted = positional.map(([pname, type], i) => convert(type, args[i], `${name}: ${pname}`));
    if (positional !== params) converted.push(null);
    const options = convert(optionsType, optionsArg, `${name}: options`);
    const result = py('builder_op', [ref(s.handle), name, converted, options]);
    return returnsSequence ? result.map(newOperand) : newOperand(result);
  });
}
