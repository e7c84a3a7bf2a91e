"""Fast paths: SIMD microkernels (csrc/) working in place on numpy buffers.

`paths.FAST_PATHS` lists the SIMD fast paths of the cpu backend: conv2d (and
conv2d fused with relu/clamp by ..compile), matmul, gemm, maxPool2d,
averagePool2d, relu, clamp and in-place concat; `exact64.EXACT64_PATHS` the
float64-exact erf and layerNormalization kernels. Each one checks the call
(float32, shapes, layouts) and declines with a reason (the backend's
`fallback_reasons`) when it cannot take it; the numpy kernel of the op stays
the reference and the fallback.

This module holds the kernel *library* loaded into this process: loaded code,
like an imported module, attached once (a CpuBackend may also be given its
own). Which calls use it - the fast-path switch, profiling, scratch - is
state of each CpuBackend, never of this module. A library must be attached
for any fast path to run:
  * in the browser, js/src/simd.js instantiates dist/webnn-kernels.wasm on
    Pyodide's memory and calls `attach_wasm(exports)`;
  * in CPython, `attach_native()` loads .cache/kernels/libwebnn_kernels.so
    (tools/build_kernels.py builds it); the environment variable
    WEBNN_KERNELS=native (or a library path) attaches it at import.
`status()` says which library is attached and, when none, why.
"""
from __future__ import annotations

import os
from pathlib import Path

from .library import NativeBackend, WasmBackend

_state = {"backend": None, "reason": "no kernel library attached",
          "pool": None, "pool_reason": None}


def library():
    """The attached kernel library, or None."""
    return _state["backend"]


def available() -> bool:
    return _state["backend"] is not None


def status() -> dict:
    b = _state["backend"]
    return {"backend": b.kind if b else None, "detail": b.describe() if b else None,
            "reason": None if b else _state["reason"]}


def unavailable(reason: str) -> None:
    """Record why no backend is attached (shown by status() and the debug log)."""
    _state["backend"] = None
    _state["reason"] = reason


def detach(reason: str = "detached") -> None:
    unavailable(reason)


def attach(backend_obj) -> dict:
    """Attach any object with the backend methods (tests use a wasm build run by Node)."""
    _state["backend"] = backend_obj
    _state["reason"] = None
    return status()


def attach_wasm(exports) -> dict:
    """Attach the wasm module's exports (a JsProxy); returns status()."""
    try:
        _state["backend"] = WasmBackend(exports)
        _state["reason"] = None
    except Exception as e:  # noqa: BLE001 - any failure means: numpy only
        unavailable(f"the wasm kernels could not be attached: {e}")
    return status()


def default_native_path() -> Path:
    return Path(__file__).resolve().parents[5] / ".cache" / "kernels" / "libwebnn_kernels.so"


def pool():
    """The kernel pool attached to this process (fast/shared.py), or None."""
    return _state["pool"]


def pool_reason():
    """Why no kernel pool is attached (None when one is, or nobody said)."""
    return None if _state["pool"] is not None else _state["pool_reason"]


def pool_kernels() -> list:
    """[[export name, argument kinds]] in the order a pool job names its kernel."""
    from .library import SIGNATURES

    return [[name, sig] for name, sig in SIGNATURES.items()]


def attach_pool(port, fused_madd: bool, detail: str = "pool") -> dict:
    """Attach a kernel pool: `port` runs tiles on threads sharing one memory
    (js/src/kernel_pool.js in the browser). Returns its stats."""
    from .shared import KernelPool

    _state["pool"] = KernelPool(port, fused_madd, detail)
    _state["pool_reason"] = None
    return _state["pool"].stats()


def pool_unavailable(reason: str) -> None:
    """Record why there is no kernel pool (shown in each context's threadsReason)."""
    _state["pool"] = None
    _state["pool_reason"] = reason


def detach_pool() -> None:
    """Forget the kernel pool and any reason recorded (tests)."""
    _state["pool"] = None
    _state["pool_reason"] = None


def attach_native(path=None, build: bool = False) -> dict:
    """Attach the native build through ctypes; `build=True` (re)builds it first
    when the sources changed (needs tools/build_kernels.py, i.e. a checkout)."""
    try:
        if build:
            import sys

            tools = Path(__file__).resolve().parents[5] / "tools"
            sys.path.insert(0, str(tools))
            try:
                import build_kernels
            finally:
                sys.path.remove(str(tools))
            path = build_kernels.ensure_native()
        path = Path(path) if path else default_native_path()
        if not path.exists():
            raise FileNotFoundError(f"{path} not found (run python tools/build_kernels.py)")
        _state["backend"] = NativeBackend(path)
        _state["reason"] = None
    except Exception as e:  # noqa: BLE001
        unavailable(f"the native kernels could not be loaded: {e}")
    return status()


_env = os.environ.get("WEBNN_KERNELS")
if _env:
    attach_native(None if _env == "native" else _env)
