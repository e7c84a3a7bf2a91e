"""The two ways to reach the microkernels of csrc/kernels.c.

Both expose the same methods, taking buffer addresses (Python ints) and
scalars; the callers (.paths) keep the numpy arrays alive.

  * WasmBackend: the exports of dist/webnn-kernels.wasm, instantiated by
    js/src/simd.js against Pyodide's own WebAssembly.Memory, so a numpy
    array's address *is* its address in the module's memory (zero copy).
    Every call crosses the Python -> JS FFI once, so each export does a whole
    operation (a convolution, a GEMM), never a tile.
  * NativeBackend: the same C compiled as a shared library, through ctypes,
    so CPython tests run the very kernels the browser runs.
"""
from __future__ import annotations

ABI_VERSION = 4  # 2: wk_erf, wk_layer_norm (csrc/exact64.h), wk_pack_oihw (csrc/pack_oihw.h); 3: with wk_powq, wk_binary, wk_shuffle, wk_transpose; 4: wk_chanavg

# name -> argument kinds: p = pointer, i = int32, f = float32
SIGNATURES = {
    "wk_gemm": "iiipipppiff",
    "wk_pack_b": "iipiip",
    "wk_conv2d": "pppppp" + "ff",
    "wk_dwconv2d": "ppppp" + "ff",
    "wk_maxpool2d": "ppp",
    "wk_avgpool2d": "ppp",
    "wk_clamp": "ippff",
    "wk_powq": "ippi",
    "wk_binary": "iipipip",
    "wk_shuffle": "iiipp",
    "wk_transpose": "iiipp",
    "wk_erf": "ipp",
    "wk_layer_norm": "iippppf",
    "wk_pack_oihw": "iiipp",
    "wk_chanavg": "iiiiipp",
}


class Backend:
    kind = "none"
    fused_madd = False  # multiply-adds may be fused (relaxed SIMD): not bit-identical to numpy
    # Whether several threads may call the kernels at once on disjoint outputs. ctypes
    # releases the GIL around each call, so the native build runs tiles in parallel;
    # the wasm module in Pyodide has one thread (docs/threads.md: the worker pool).
    concurrent = False
    why_single = "this kernel library runs on one thread"

    def describe(self) -> str:
        return self.kind


class NativeBackend(Backend):
    kind = "native"
    concurrent = True
    why_single = None

    def __init__(self, path):
        import ctypes

        lib = ctypes.CDLL(str(path))
        kinds = {"p": ctypes.c_void_p, "i": ctypes.c_int32, "f": ctypes.c_float}
        lib.wk_abi_version.restype = ctypes.c_int32
        lib.wk_abi_version.argtypes = []
        version = lib.wk_abi_version()
        if version != ABI_VERSION:
            raise RuntimeError(f"{path}: kernel ABI {version}, expected {ABI_VERSION} (rebuild it)")
        for name, sig in SIGNATURES.items():
            fn = getattr(lib, name)
            fn.restype = None
            fn.argtypes = [kinds[k] for k in sig]
            setattr(self, name[3:], fn)
        lib.wk_fused_madd.restype = ctypes.c_int32
        lib.wk_fused_madd.argtypes = []
        self.fused_madd = bool(lib.wk_fused_madd())
        self.path = str(path)
        self._lib = lib

    def describe(self) -> str:
        return f"native ({self.path})"


class WasmBackend(Backend):
    kind = "wasm"
    why_single = ("the kernels run on Pyodide's thread: Pyodide 0.27's memory is not shared, "
                  "so no worker can reach its numpy buffers (docs/threads.md)")

    def __init__(self, exports):
        version = exports.wk_abi_version()
        if version != ABI_VERSION:
            raise RuntimeError(f"webnn-kernels.wasm: kernel ABI {version}, expected {ABI_VERSION}")
        for name in SIGNATURES:
            fn = getattr(exports, name, None)
            if fn is None:
                raise RuntimeError(f"webnn-kernels.wasm does not export {name}")
            # A JsProxy of the exported function: called with Python ints and
            # floats, which Pyodide passes as JS numbers (the wasm ABI's i32 and f32).
            setattr(self, name[3:], fn)
        self.fused_madd = bool(exports.wk_fused_madd())
        self._exports = exports

    def describe(self) -> str:
        kind = "relaxed-simd (fused multiply-add)" if self.fused_madd else "simd128"
        return f"wasm {kind} on Pyodide's memory"
