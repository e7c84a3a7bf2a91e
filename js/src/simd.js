// SIMD microkernels: a standalone wasm32+simd128 module (dist/webnn-kernels.wasm,
// built from csrc/) that shares Pyodide's linear memory and works in place on
// numpy buffers: Python passes array addresses, the module reads and writes
// them directly (no copies). Pyodide 0.27 does not expose its
// WebAssembly.Memory, so it is captured from the import object Pyodide hands
// to WebAssembly.instantiate(Streaming) while the engine loads.
//
// Two builds of the same kernels: webnn-kernels-relaxed.wasm (relaxed SIMD:
// f32x4.relaxed_madd, a fused multiply-add on CPUs with one) where the
// engine validates it, else webnn-kernels.wasm (plain simd128).
//
// Switches: CONFIG.fastPaths (false: numpy kernels only; 'simd128': never the
// relaxed build) and, on any page, the query parameter ?fastpaths=0|1|simd128
// which overrides it. CONFIG.debug logs
// whether the fast path is active and, if not, why. Anything failing here
// leaves the engine on its numpy kernels, with the reason in
// webnnPolyfill.engineStats.simd.

import { CONFIG, ENGINE_STATS } from './config.js';
import { ENGINE_MEMORY, RuntimeIntegrityError, fetchVerified } from './startup.js';

// fastPaths: the setting every new context's cpu backend starts with (each
// context owns its switch; engineStats.kernels.setFastPaths(ctx, on) flips one).
const SIMD = { memory: null, restore: null, fastPaths: true };

// The backend options a new context gets from the page's setting.
export function defaultBackendOptions() {
  return { fastPaths: SIMD.fastPaths };
}

// A minimal module using v128 (i32.const 0; i8x16.splat; i8x16.popcnt).
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0,
  10, 10, 1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

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

// Called just before loadPyodide(): wrap WebAssembly.instantiate(Streaming)
// to see Pyodide's memory go by (restored in simdAttach).
export function simdBeforeEngineLoad() {
  const WA = globalThis.WebAssembly;
  if (!WA || SIMD.memory || SIMD.restore) return;
  const orig = { instantiate: WA.instantiate, instantiateStreaming: WA.instantiateStreaming };
  const fromImports = (imports) => {
    try {
      const m = imports && imports.env && imports.env.memory;
      if (!SIMD.memory && m instanceof WA.Memory) {
        SIMD.memory = m;
        if (SIMD.restore) SIMD.restore();  // seen it: unwrap at once
      }
    } catch (e) { /* not ours to worry about */ }
  };
  const fromResult = (result) => {
    try {  // an engine that exports its memory instead of importing it
      const instance = result && (result.instance || result);
      const exports = instance && instance.exports;
      if (!SIMD.memory && exports) {
        for (const value of Object.values(exports)) {
          if (value instanceof WA.Memory) { SIMD.memory = value; break; }
        }
      }
    } catch (e) { /* ignore */ }
    return result;
  };
  WA.instantiate = function (source, imports, ...rest) {
    fromImports(imports);
    return orig.instantiate.call(this, source, imports, ...rest).then(fromResult);
  };
  if (typeof orig.instantiateStreaming === 'function') {
    WA.instantiateStreaming = function (source, imports, ...rest) {
      fromImports(imports);
      return orig.instantiateStreaming.call(this, source, imports, ...rest).then(fromResult);
    };
  }
  SIMD.restore = () => {
    WA.instantiate = orig.instantiate;
    if (typeof orig.instantiateStreaming === 'function') WA.instantiateStreaming = orig.instantiateStreaming;
    SIMD.restore = null;
  };
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

// The kernels are runtime files too: verified against the build's sha256.
async function fetchBytes(name) {
  return fetchVerified(name);
}

async function loadKernelModule(memory, allowRelaxed) {
  if (!WebAssembly.validate(SIMD_PROBE)) throw new Error('this browser has no WebAssembly SIMD');
  let bytes = null;
  if (allowRelaxed) {
    try {
      bytes = await fetchBytes('webnn-kernels-relaxed.wasm');
      if (!WebAssembly.validate(bytes)) bytes = null;  // no relaxed SIMD here
    } catch (e) {
      if (e instanceof RuntimeIntegrityError) throw e;  // tampered: refuse, do not fall back
      bytes = null;
    }
  }
  if (!bytes) bytes = await fetchBytes('webnn-kernels.wasm');
  const { instance } = await WebAssembly.instantiate(bytes, { env: { memory } });
  return instance.exports;
}

// Called once numpy and webnn_core are loaded.
export async function simdAttach(pyodide) {
  if (SIMD.restore) SIMD.restore();
  if (!SIMD.memory) SIMD.memory = ENGINE_MEMORY.memory;  // startup.js saw Pyodide's memory
  const fast = pyodide.pyimport('webnn_core.backends.cpu.fast');
  const setting = simdSetting();
  SIMD.fastPaths = setting !== false;
  let status;
  try {
    if (!SIMD.memory) throw new Error("Pyodide's WebAssembly.Memory was not captured");
    const exports = await loadKernelModule(SIMD.memory, setting !== 'simd128');
    status = pyToJs(fast.attach_wasm(exports));
  } catch (e) {
    if (e instanceof RuntimeIntegrityError) throw e;  // fails the start, naming the file
    fast.unavailable(`wasm kernels unavailable: ${e && e.message ? e.message : e}`);
    status = pyToJs(fast.status());
  }
  status.enabled = SIMD.fastPaths;
  ENGINE_STATS.simd = status;
  if (CONFIG.debug) {
    if (status.backend) {
      console.log(`webnn-polyfill: SIMD kernels active (${status.detail}); fast paths ${status.enabled ? 'on' : 'off'}`);
    } else {
      console.log(`webnn-polyfill: numpy kernels only: ${status.reason}`);
    }
  }
}
