// SIMD microkernels: a standalone wasm32+simd128 module (dist/webnn-kernels.wasm,
// built from csrc/) that shares Pyodide's linear memory and works in place on
// numpy buffers: Python passes array addresses, the module reads and writes
// them directly (no copies). Pyodide 0.27 does not expose its
// WebAssembly.Memory, but its dynamic linker (Module.loadWebAssemblyModule,
// the one that loads extension modules) instantiates side modules against it:
// the kernel module gets the small "dylink.0" section a side module needs and
// is loaded through it. Nothing global is patched, and the memory is
// Pyodide's by construction.
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

import { CONFIG, ENGINE_STATS, RUNTIME_BASE } from './config.js';
import { savedFetch } from './intrinsics.js';

// fastPaths: the setting every new context's cpu backend starts with (each
// context owns its switch; engineStats.kernels.setFastPaths(ctx, on) flips one).
export const SIMD = { fastPaths: true };

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

// `bytes` as a side module: a "dylink.0" custom section first (no data, no
// table: the kernels use neither), then the module's own sections.
function asSideModule(bytes) {
  const name = [...'dylink.0'].map((c) => c.charCodeAt(0));
  const memInfo = [1, 4, 0, 0, 0, 0];  // WASM_DYLINK_MEM_INFO: size, align, table size, table align
  const payload = [name.length, ...name, ...memInfo];
  const section = [0, payload.length, ...payload];
  const out = new Uint8Array(bytes.length + section.length);
  out.set(bytes.subarray(0, 8));
  out.set(section, 8);
  out.set(bytes.subarray(8), 8 + section.length);
  return out;
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

async function fetchBytes(url) {
  const response = await savedFetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

async function loadKernelModule(pyodide, allowRelaxed) {
  if (!WebAssembly.validate(SIMD_PROBE)) throw new Error('this browser has no WebAssembly SIMD');
  let bytes = null;
  if (allowRelaxed) {
    try {
      bytes = await fetchBytes(RUNTIME_BASE + 'webnn-kernels-relaxed.wasm');
      if (!WebAssembly.validate(bytes)) bytes = null;  // no relaxed SIMD here
    } catch (e) {
      bytes = null;
    }
  }
  if (!bytes) bytes = await fetchBytes(RUNTIME_BASE + 'webnn-kernels.wasm');
  const link = pyodide._module && pyodide._module.loadWebAssemblyModule;
  if (typeof link !== 'function') throw new Error("Pyodide's dynamic linker (Module.loadWebAssemblyModule) is missing");
  // loadAsync: instantiate without blocking; a local scope: no symbols enter Pyodide's global table.
  return link(asSideModule(bytes), { loadAsync: true, nodelete: true, allowUndefined: true }, 'webnn-kernels.wasm', {});
}

// Called once numpy and webnn_core are loaded.
export async function simdAttach(pyodide) {
  const fast = pyodide.pyimport('webnn_core.backends.cpu.fast');
  const setting = simdSetting();
  SIMD.fastPaths = setting !== false;
  let status;
  try {
    const exports = await loadKernelModule(pyodide, setting !== 'simd128');
    status = pyToJs(fast.attach_wasm(exports));
  } catch (e) {
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
