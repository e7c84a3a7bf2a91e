"""Backends: what plans and runs a built graph, one instance per context.

The interface is documented in `base.py` (`Backend`). A context picks its
backend when it is created (`create_backend`) and owns it alone: every
switch, cache and buffer lives in that instance, so two contexts in one page
never share state.

    cpu     numpy reference kernels + the SIMD wasm fast paths (cpu/)
    webgpu  WGSL plans executed by the JS shim on a GPUDevice; graphs
            with ops it has no kernel for run on its cpu fallback (webgpu/)

Dependencies run one way: context -> backends -> graph IR, op registry,
dtypes, errors. Nothing below imports a backend.
"""
from __future__ import annotations

from .base import Backend
from .cpu import CpuBackend
from .webgpu import WebGPUBackend

BACKENDS = {"cpu": CpuBackend, "webgpu": WebGPUBackend}
# Which backend a context's deviceType gets when its options name none.
DEVICE_BACKENDS = {"cpu": "cpu", "gpu": "webgpu", "npu": "cpu"}


def create_backend(device_type: str, options: dict | None = None, gpu_device=None) -> Backend:
    """A new backend for a context. `options` (all optional):
      backend    "cpu" | "webgpu" (default: by deviceType)
      fastPaths  False: numpy reference kernels only (cpu and the fallback)
      layoutPass False: NCHW conv/pool chains are not moved to NHWC at build()
                 (for measuring what the pass saves).
      threads    kernel threads of the cpu backend (default 1; see CpuBackend).
      webgpu     what the JS shim found for a gpu context: {"token", "adapter"}
                 when it holds a GPUDevice, {"reason"} when not."""
    options = dict(options or {})
    name = options.get("backend") or DEVICE_BACKENDS[device_type]
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")
    fast_paths = options.get("fastPaths", True) is not False
    layout_pass = options.get("layoutPass", True) is not False
    if name == "webgpu":
        return WebGPUBackend(gpu_device=gpu_device, fast_paths=fast_paths, layout_pass=layout_pass,
                             webgpu=options.get("webgpu"))
    threads = options.get("threads")
    threads = 1 if threads is None else threads
    if isinstance(threads, bool) or not isinstance(threads, (int, float)) or threads != threads:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return CpuBackend(fast_paths=fast_paths, layout_pass=layout_pass, threads=max(1, min(int(threads), 256)))


__all__ = ["Backend", "BACKENDS", "CpuBackend", "WebGPUBackend", "create_backend"]
