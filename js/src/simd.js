// SIMD microkernels: a standalone wasm32+simd128 module (dist/webnn-kernels.wasm,
// built from csrc/) that shares Pyodide's linear memory and works in place on
// numpy buffers: Python passes array addresses, the module reads and writes
// them directly (no copies). Pyodide 0.27 does not expose its
// WebAssembly.Memory: startup.js instantiates pyodide.asm.wasm itself (its
// instantiateWasm hook) and keeps the memory from that import object, so it is
// Pyodide's by construction. Nothing global (WebAssembly.instantiate) is ever
// wrapped: a page's own wasm modules are none of our business.
//
// Two builds of the same kernels: webnn-kernels-relaxed.wasm (relaxed SIMD:
// f32x4.relaxed_madd, a fused multiply-add on CPUs with one) where the
// engine has relaxed SIMD (RELAXED_PROBE validates) and compiles that build,
// else webnn-kernels.wasm (plain simd128).
//
// The kernel pool (js/src/kernel_pool.js): on a cross-origin isolated page with
// threads > 1, the threads build of the same variant (relaxed or not, so N
// threads give the one-thread result bit for bit) runs split calls on workers
// sharing one WebAssembly.Memory; engineStats.threads says how many threads run
// and, when fewer than asked, why.
//
// Switches: CONFIG.fastPaths (false: numpy kernels only; 'simd128': never the
// relaxed build) and, on any page, the query parameter ?fastpaths=0|1|simd128
// which overrides it. CONFIG.debug logs
// whether the fast path is active and, if not, why. Anything failing here
// leaves the engine on its numpy kernels, with the reason in
// webnnPolyfill.engineStats.simd.

import { CONFIG, ENGINE_STATS } from './config.js';
import { ENGINE_MEMORY, RuntimeIntegrityError, fetchVerified, prefetchAlso, prefetchRuntime } from './startup.js';
import { poolUnavailableReason, startKernelPool } from './kernel_pool.js';
import { savedWebAssembly } from './intrinsics.js';
import { pageEngineValidatesOnly } from './timeline.js';

// fastPaths: the setting every new context's cpu backend starts with (each
// context owns its switch; engineStats.kernels.setFastPaths(ctx, on) flips one).
const SIMD = { fastPaths: true };

// The backend options a new context gets from the page's settings.
export function defaultBackendOptions() {
  return { fastPaths: SIMD.fastPaths, threads: ENGINE_STATS.threads.requested };
}

// A minimal module using v128 (i32.const 0; i8x16.splat; i8x16.popcnt).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);
// The same with f32x4.relaxed_madd (three splats, then the fused multiply-add).
const RELAXED_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 19, 1, 17, 0, 65, 0, 253, 15, 65, 0, 253, 15, 65, 0, 253, 15, 253, 133, 2, 11]);
// Intrinsics taken at script load: the page may replace its globals later.
const WA = savedWebAssembly;

function validates(bytes) {
  try {
    return !!WA && WA.validate.call(WebAssembly, bytes);
  } catch (e) {
    return false;
  }
}

// Probed when this script loads, never during a start: WebKit (JSC) validates
// synchronously behind the compilations it has queued, and once Pyodide's 10 MB
// module was tiering up, validating the 31-byte probe blocked the page for
// 0.4-1.5 s (cold profile, 2 cores). Knowing the build to use at once also lets
// its fetch and compilation start with the runtime's own files.
const HAS_SIMD = validates(SIMD_PROBE);
const HAS_RELAXED = HAS_SIMD && validates(RELAXED_PROBE);

// The effective setting: false (numpy only), 'simd128' or true (best build).
function simdSetting() {
  let value = CONFIG.fastPaths;
  try {
    const search = globalThis.location ? globalThis.location.search : '';
    const q = new URLSearchParams(search).get('fastpaths');
    if (q !== null) value = q.toLowerCase();
  } catch (e) { /* no location */ }
  if (value === false || ['0', 'false', 'off', 'no'].includes(value)) return false;
  if (value === 'simd128' || value === 'simd') return 'simd128';
  return true;
}

function pyToJs(value) {
  if (value && typeof value.toJs === 'function') {
    try {
      return value.toJs({ dict_converter: Object.fromEntries });
    } finally {
      value.destroy();
    }
  }
  return value;
}

// ---------------------------------------------------------------- loading
// The kernel files are fetched, verified (they are runtime files: the build's
// sha256) and compiled from the moment the runtime's own files are
// (startup.js prefetchRuntime), so a start only instantiates them. Each is
// fetched once per prefetch round: after a failed start, the next fetches afresh.
// The loads live on the round (`kernelLoads`): startup.js runtimeForWorker hands the
// compiled builds to the timeline worker, whose round starts with them (provideRuntime).
function once(key, load) {
  const round = prefetchRuntime();
  if (!round.kernelLoads) round.kernelLoads = new Map();
  const loads = round.kernelLoads;
  if (!loads.has(key)) {
    const promise = load();
    promise.catch(() => {});  // reported by whoever awaits it
    loads.set(key, promise);
  }
  return loads.get(key);
}

// A kernel build, compiled: {module, relaxed}. Relaxed SIMD where allowed and
// the engine has it, else (or if that build does not compile here) the simd128
// build. Compiled asynchronously: a synchronous compile or validate can block
// the page (above). A tampered file is refused, never replaced by the other build.
function kernelBuild(allowRelaxed, threadsBuild) {
  const relaxed = allowRelaxed && HAS_RELAXED;
  return once(`${relaxed}/${threadsBuild}`, async () => {
    if (!HAS_SIMD) throw new Error('this browser has no WebAssembly SIMD');
    if (relaxed) {
      try {
        const bytes = await fetchVerified(threadsBuild ? 'webnn-kernels-threads-relaxed.wasm' : 'webnn-kernels-relaxed.wasm');
        return { module: await WA.compile.call(WebAssembly, bytes), relaxed: true };
      } catch (e) {
        if (e instanceof RuntimeIntegrityError) throw e;  // tampered: refuse, do not fall back
        // not fetched, or no relaxed SIMD here: the simd128 build
      }
    }
    const bytes = await fetchVerified(threadsBuild ? 'webnn-kernels-threads.wasm' : 'webnn-kernels.wasm');
    return { module: await WA.compile.call(WebAssembly, bytes), relaxed: false };
  });
}

// What a start will ask for, with the page's settings as they are now (a start
// asks again with its own: anything that changed since is loaded then). Both
// builds at once: each compilation may wait behind Pyodide's in WebKit.
function prefetchKernels() {
  const allowRelaxed = simdSetting() !== 'simd128';
  kernelBuild(allowRelaxed, false);
  // The threads build also where the timeline worker runs the pool: the page fetches and
  // verifies it once and hands it over compiled (startup.js runtimeForWorker).
  if (!poolUnavailableReason(ENGINE_STATS.threads.requested)) kernelBuild(allowRelaxed, true);
}
prefetchAlso(prefetchKernels);

// The single-thread kernels' exports, on Pyodide's memory.
async function loadKernelModule(memory, allowRelaxed) {
  const { module } = await kernelBuild(allowRelaxed, false);
  const instance = await WA.instantiate.call(WebAssembly, module, { env: { memory } });
  return instance.exports;
}

// The kernel pool: the threads build of the variant the library uses, on workers.
async function attachPool(pyodide, fast, status) {
  const stats = ENGINE_STATS.threads;
  const unavailable = (reason) => {
    stats.active = 1;
    stats.reason = `single-threaded: ${reason}`;
    fast.pool_unavailable(reason);
  };
  const why = !status.backend ? 'no SIMD kernels (numpy only)'
    : pageEngineValidatesOnly() ? "this page's contexts execute in the timeline worker (its kernel pool runs there)"
      : poolUnavailableReason(stats.requested);
  if (why) {
    // The timeline worker's pool gets the threads build this page prefetched: a tampered
    // file fails this start (createContext() rejects naming it), as in-page execution's does.
    if (pageEngineValidatesOnly() && status.backend && !poolUnavailableReason(stats.requested)) {
      try {
        await kernelBuild(/relaxed/.test(status.detail), true);
      } catch (e) {
        if (e instanceof RuntimeIntegrityError) throw e;
      }
    }
    unavailable(why);
    return;
  }
  try {
    const fused = /relaxed/.test(status.detail);
    const { module } = await kernelBuild(fused, true);
    const kernels = pyToJs(fast.pool_kernels());
    const port = await startKernelPool(module, stats.requested, kernels.map((k) => k[0]), kernels.map((k) => k[1]));
    pyToJs(fast.attach_pool(port, fused, `wasm ${fused ? 'relaxed-simd' : 'simd128'} threads build on a shared WebAssembly.Memory`));
    stats.active = port.threads;
    stats.reason = port.threads < stats.requested
      ? `${port.threads} of ${stats.requested} threads: ${port.startErrors[0] || 'workers did not start'}` : null;
  } catch (e) {
    if (e instanceof RuntimeIntegrityError) throw e;
    unavailable(`the kernel pool could not start: ${e && e.message ? e.message : e}`);
  }
}

// Called once numpy and webnn_core are loaded.
export async function simdAttach(pyodide) {
  const memory = ENGINE_MEMORY.memory;  // startup.js took it from Pyodide's own instantiation
  const fast = pyodide.pyimport('webnn_core.backends.cpu.fast');
  const setting = simdSetting();
  SIMD.fastPaths = setting !== false;
  let status;
  try {
    if (!memory) throw new Error("Pyodide's WebAssembly.Memory was not captured");
    const exports = await loadKernelModule(memory, setting !== 'simd128');
    status = pyToJs(fast.attach_wasm(exports));
  } catch (e) {
    if (e instanceof RuntimeIntegrityError) throw e;  // fails the start, naming the file
    fast.unavailable(`wasm kernels unavailable: ${e && e.message ? e.message : e}`);
    status = pyToJs(fast.status());
  }
  status.enabled = SIMD.fastPaths;
  ENGINE_STATS.simd = status;
  await attachPool(pyodide, fast, status);
  if (CONFIG.debug) {
    if (status.backend) {
      console.log(`webnn-polyfill: SIMD kernels active (${status.detail}); fast paths ${status.enabled ? 'on' : 'off'}`);
    } else {
      console.log(`webnn-polyfill: numpy kernels only: ${status.reason}`);
    }
  }
}
