// The gpu device's executor: runs the commands the core's webgpu backend
// queues (py/webnn_core/backends/webgpu/backend.py) on one context's
// GPUDevice. No op semantics here: shaders, buffer sizes, bindings and
// workgroup counts all come from the core's plan; this file only creates
// buffers and pipelines (once per plan, at build(), cached by WGSL text),
// encodes and submits the plan's passes, and maps staging buffers for reads.

import { CONFIG, ENGINE_STATS } from './config.js';
import { SavedDOMException, SavedUint8Array, objectDefineProperty } from './intrinsics.js';

// GPUBufferUsage / GPUMapMode values (WebGPU spec), not read from the page's globals.
const STORAGE = 0x80;
const COPY_SRC = 0x04;
const COPY_DST = 0x08;
const MAP_READ = 0x01;
const MAP_MODE_READ = 0x01;

const savedGpu = typeof navigator !== 'undefined' && navigator.gpu ? navigator.gpu : null;
const SavedGPUDevice = typeof GPUDevice === 'undefined' ? null : GPUDevice;
const savedBufferDestroy = typeof GPUBuffer === 'undefined' ? null : GPUBuffer.prototype.destroy;

// Runners by token (the core names its context's runner in every command list).
const RUNNERS = new Map();
let nextToken = 0;

// engineStats.webgpu: what gpu contexts run on; `runners`, the GPU runners alive
// (one per context on WebGPU until it is destroyed, lost or collected); and
// `graphs`, where this global's gpu-context graphs ran, over all its contexts (a
// context's own counts: engineStats.kernels.backend(ctx)): built on the GPU or
// placed on the cpu fallback (with the reasons), and dispatches of each. The
// core says so in its commands ('plan'/'run' for the GPU, 'cpu_plan'/'cpu_run').
const GRAPHS = { gpu: 0, cpu: 0, dispatchesGpu: 0, dispatchesCpu: 0, reasons: {} };

function setWebgpuStats(stats) {
  ENGINE_STATS.webgpu = objectDefineProperty({ ...stats, graphs: GRAPHS }, 'runners',
    { get: () => RUNNERS.size, enumerable: true });
}
setWebgpuStats({ available: null, adapter: null, reason: null });

function align4(n) {
  return Math.max(4, (n + 3) & ~3);
}

export function isGPUDevice(value) {
  return SavedGPUDevice !== null && value instanceof SavedGPUDevice;
}

// One device for every {deviceType: 'gpu'} context of this global (a context
// given a GPUDevice uses that one). null: no WebGPU; the reason is recorded.
let sharedDevice = null;

function adapterName(adapter) {
  const info = adapter && adapter.info;
  if (!info) return 'unknown adapter';
  return [info.vendor, info.architecture, info.device, info.description].filter((x) => x).join(' ') || 'unknown adapter';
}

function withTimeout(promise, ms, what) {
  return Promise.race([promise, new Promise((_, reject) => setTimeout(() => reject(new Error(`${what} timed out`)), ms))]);
}

async function openDevice() {
  if (CONFIG.webgpu === false) throw new Error('WebGPU is switched off (webnnPolyfill config webgpu: false)');
  if (!savedGpu) throw new Error('this browser has no navigator.gpu');
  const adapter = await withTimeout(savedGpu.requestAdapter(), 5000, 'requestAdapter()');
  if (!adapter) throw new Error('navigator.gpu.requestAdapter() found no adapter');
  // The adapter's largest buffers, not the defaults (128 MiB bindings): big tensors stay on the GPU.
  const requiredLimits = {};
  for (const name of ['maxStorageBufferBindingSize', 'maxBufferSize']) requiredLimits[name] = adapter.limits[name];
  const device = await withTimeout(adapter.requestDevice({ requiredLimits }), 5000, 'requestDevice()');
  return { device, adapter: adapterName(adapter) };
}

export function defaultGpuDevice() {
  if (!sharedDevice) {
    sharedDevice = openDevice().then((found) => {
      setWebgpuStats({ available: true, adapter: found.adapter, reason: null });
      found.device.lost.then(() => { sharedDevice = null; });
      return found;
    }, (e) => {
      setWebgpuStats({ available: false, adapter: null,
        reason: `${e && e.message}: gpu contexts run the cpu kernels (so their accelerated is false)` });
      return null;
    });
  }
  return sharedDevice;
}

export class GpuRunner {
  constructor(device, adapter) {
    this.device = device;
    this.adapter = adapter;
    this.token = ++nextToken;
    this.buffers = new Map();
    this.plans = new Map();
    this.pipelines = new Map();  // WGSL text -> Promise<GPUComputePipeline> (resolved value kept on the plan)
    this.pending = [];  // pipeline creations build() waits for
    this.lost = null;
    this.failure = null;  // the first error the device reported for this runner's work
    this.checked = Promise.resolve();  // settles once the last dispatch's error scopes popped
    this.exports = new Set();  // tensors rented to the page (exportBuffer), ended with the runner
    RUNNERS.set(this.token, this);
  }

  // What the planner must respect (the core declines plans that exceed them), and the
  // page's kernel choices (plannerOptions; CONFIG.webgpuConv2d, read at createContext).
  limits() {
    const l = this.device.limits;
    return { maxStorageBufferBindingSize: l.maxStorageBufferBindingSize, maxBufferSize: l.maxBufferSize,
             maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
             maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension,
             plannerOptions: { conv2d: String(CONFIG.webgpuConv2d || 'auto') } };
  }

  // The context is destroyed or lost: the core freed its buffers (or the device is gone).
  forget() {
    RUNNERS.delete(this.token);
    for (const rented of [...this.exports]) rented.end();
  }

  // The context was collected without destroy(): nothing can reach its buffers any more.
  dispose() {
    this.forget();
    for (const buffer of this.buffers.values()) buffer.destroy();
    this.buffers.clear();
    this.plans.clear();
    this.pipelines.clear();
  }

  // exportToGPU: the page's GPUBuffer for the tensor in buffer `id`. It gets the tensor's
  // contents by a copy on this device's queue, after every write and dispatch issued
  // before; the page's own work on it is queued after that. Its destroy() copies the
  // contents back into the tensor (queued before anything WebNN does next), then destroys
  // it and calls giveBack(). end(): the tensor or context went away; destroy, no copy.
  exportBuffer(id, nbytes, giveBack) {
    const size = align4(nbytes);
    const buffer = this.device.createBuffer({ size, usage: STORAGE | COPY_SRC | COPY_DST });
    this.copy(this.buffers.get(id), buffer, size);
    const rented = {
      buffer,
      end: () => {
        this.exports.delete(rented);
        savedBufferDestroy.call(buffer);
      },
    };
    this.exports.add(rented);
    // An own property of this one object (never GPUBuffer.prototype): the spec rents the
    // tensor "until the returned GPUBuffer is destroyed".
    objectDefineProperty(buffer, 'destroy', {
      configurable: true, writable: true, enumerable: false,
      value: function destroy() {
        if (!this.exports.has(rented)) {
          savedBufferDestroy.call(buffer);
          return;
        }
        const target = this.buffers.get(id);
        if (target && !this.lost) this.copy(buffer, target, size);
        rented.end();
        giveBack();
      }.bind(this),
    });
    return rented;
  }

  copy(from, to, size) {
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(from, 0, to, 0, size);
    this.device.queue.submit([encoder.finish()]);
  }

  run(commands, heap) {
    for (const c of commands) {
      switch (c[0]) {
        case 'buffer':
          this.buffers.set(c[1], this.device.createBuffer({ size: align4(c[2]), usage: STORAGE | COPY_SRC | COPY_DST }));
          break;
        case 'free': {
          const b = this.buffers.get(c[1]);
          if (b) b.destroy();
          this.buffers.delete(c[1]);
          break;
        }
        case 'write':
          if (c[3] > 0) this.device.queue.writeBuffer(this.buffers.get(c[1]), 0, heap(), c[2], c[3]);
          break;
        case 'plan':
          this.createPlan(c[1], c[2]);
          break;
        case 'run':
          this.runPlan(c[1], c[2]);
          break;
        case 'drop':
          this.plans.delete(c[1]);
          break;
        case 'cpu_plan':
        case 'cpu_run':
          break;  // counted by tally()
        default:
          throw new Error(`webgpu: unknown command ${c[0]}`);
      }
    }
  }

  pipeline(code) {
    let p = this.pipelines.get(code);
    if (!p) {
      const module = this.device.createShaderModule({ code });
      p = this.device.createComputePipelineAsync({ layout: 'auto', compute: { module, entryPoint: 'main' } })
        .catch(async (e) => {  // say what the compiler said: a rejected kernel is an engine bug
          const info = await module.getCompilationInfo().catch(() => null);
          const first = info && info.messages.find((m) => m.type === 'error');
          throw new Error(first ? `line ${first.lineNum}: ${first.message}` : (e && e.message));
        });
      this.pipelines.set(code, p);
    }
    return p;
  }

  createPlan(id, plan) {
    const entry = { plan, pipelines: null, bindCache: new Map() };
    this.plans.set(id, entry);
    const ready = Promise.all(plan.shaders.map((code) => this.pipeline(code))).then((pipelines) => {
      entry.pipelines = pipelines;
    });
    this.pending.push(ready);
  }

  // build() resolves once its pipelines exist; a shader the device rejects is an engine bug.
  async settled() {
    const pending = this.pending;
    this.pending = [];
    try {
      await Promise.all(pending);
    } catch (e) {
      throw new SavedDOMException(`build: the GPU rejected a kernel of the plan (${e && e.message})`, 'OperationError');
    }
  }

  bindGroups(entry, io) {
    const key = io.join(',');
    let groups = entry.bindCache.get(key);
    if (groups) return groups;
    const { plan } = entry;
    const bufferOf = (slot) => {
      const id = plan.slots[slot];
      return this.buffers.get(id < 0 ? io[-1 - id] : id);
    };
    groups = plan.steps.map(([shader, bindings]) => this.device.createBindGroup({
      layout: entry.pipelines[shader].getBindGroupLayout(0),
      entries: bindings.map((slot, i) => ({ binding: i, resource: { buffer: bufferOf(slot) } })),
    }));
    if (entry.bindCache.size >= 8) entry.bindCache.clear();
    entry.bindCache.set(key, groups);
    return groups;
  }

  // Encode every step of the plan in one compute pass and submit; nothing waits.
  runPlan(id, io) {
    const entry = this.plans.get(id);
    // A dispatch the device rejects must not pass for a result: reads after it reject.
    this.device.pushErrorScope('out-of-memory');
    this.device.pushErrorScope('validation');
    try {
      this.encode(entry, io);
    } finally {
      const scopes = [this.device.popErrorScope(), this.device.popErrorScope()];
      this.checked = Promise.all(scopes).then((errors) => {
        const error = errors.find((e) => e);
        if (error && !this.failure) {
          this.failure = `the GPU rejected a dispatch (${error.message})`;
          ENGINE_STATS.webgpu.failure = this.failure;
        }
      }, () => {});
    }
  }

  encode(entry, io) {
    const groups = this.bindGroups(entry, io);
    const encoder = this.device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    entry.plan.steps.forEach(([shader, , dispatch], i) => {
      pass.setPipeline(entry.pipelines[shader]);
      pass.setBindGroup(0, groups[i]);
      pass.dispatchWorkgroups(dispatch[0], dispatch[1], dispatch[2]);
    });
    pass.end();
    this.device.queue.submit([encoder.finish()]);
  }

  // Copy the buffer to a staging buffer now (in queue order), map it later.
  read(id, nbytes) {
    const size = align4(nbytes);
    const staging = this.device.createBuffer({ size, usage: MAP_READ | COPY_DST });
    const encoder = this.device.createCommandEncoder();
    encoder.copyBufferToBuffer(this.buffers.get(id), 0, staging, 0, size);
    this.device.queue.submit([encoder.finish()]);
    return Promise.all([staging.mapAsync(MAP_MODE_READ), this.checked]).then(() => {
      if (this.failure) throw new Error(this.failure);
      const out = new SavedUint8Array(nbytes);
      out.set(new SavedUint8Array(staging.getMappedRange(), 0, nbytes));
      staging.destroy();
      return out;
    }).catch((e) => {
      staging.destroy();
      if (this.lost) throw new SavedDOMException(`readTensor: ${this.lost}`, 'InvalidStateError');
      throw new SavedDOMException(`readTensor: ${this.failure || `the GPU read failed (${e && e.message})`}`, 'OperationError');
    });
  }
}

// A timeline worker's tally belongs to its page (js/src/timeline_host.js posts it,
// js/src/timeline.js adds it to the page's): `listener` runs after each change.
let tallyListener = null;
export function onGraphsTally(listener) {
  tallyListener = listener;
}

// This global's tally, with the device it ran on (plain data, for a message).
export function graphsTally() {
  const { available, adapter, reason } = ENGINE_STATS.webgpu;
  return { gpu: GRAPHS.gpu, cpu: GRAPHS.cpu, dispatchesGpu: GRAPHS.dispatchesGpu, dispatchesCpu: GRAPHS.dispatchesCpu,
    reasons: { ...GRAPHS.reasons }, available, adapter, reason };
}

// The page's side: a worker's tally (cumulative) over `seen` (its last one) is
// added to the page's; the worker's device describes gpu contexts where the page
// never looked for one of its own (its gpu contexts execute in that worker).
export function addWorkerGraphs(seen, tally) {
  for (const k of ['gpu', 'cpu', 'dispatchesGpu', 'dispatchesCpu']) GRAPHS[k] += tally[k] - ((seen && seen[k]) || 0);
  for (const [reason, n] of Object.entries(tally.reasons)) {
    const add = n - ((seen && seen.reasons[reason]) || 0);
    if (add && (reason in GRAPHS.reasons || Object.keys(GRAPHS.reasons).length < 64)) GRAPHS.reasons[reason] = (GRAPHS.reasons[reason] || 0) + add;
  }
  if (ENGINE_STATS.webgpu.available === null && tally.available !== null) {
    setWebgpuStats({ available: tally.available, adapter: tally.adapter, reason: tally.reason });
  }
}

function tally(commands) {
  const before = GRAPHS.gpu + GRAPHS.cpu + GRAPHS.dispatchesGpu + GRAPHS.dispatchesCpu;
  for (const c of commands) {
    if (c[0] === 'plan') GRAPHS.gpu += 1;
    else if (c[0] === 'run') GRAPHS.dispatchesGpu += 1;
    else if (c[0] === 'cpu_plan') {
      GRAPHS.cpu += 1;
      const reason = String(c[1]);
      if (reason in GRAPHS.reasons || Object.keys(GRAPHS.reasons).length < 64) GRAPHS.reasons[reason] = (GRAPHS.reasons[reason] || 0) + 1;
    } else if (c[0] === 'cpu_run') GRAPHS.dispatchesCpu += 1;
  }
  if (tallyListener && GRAPHS.gpu + GRAPHS.cpu + GRAPHS.dispatchesGpu + GRAPHS.dispatchesCpu !== before) tallyListener();
}

// The core's device commands of one reply: [[token, commands], ...] (token
// null: a gpu context without WebGPU, whose commands are only counted).
export function runDeviceCommands(list, heap) {
  for (const [token, commands] of list) {
    tally(commands);
    const runner = RUNNERS.get(token);
    if (runner) runner.run(commands, heap);
  }
}
