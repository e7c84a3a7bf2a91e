"""The webgpu backend (skeleton): the shape the WGSL backend will fill.

What exists now is the seam: a context created for a GPUDevice (or with
deviceType "gpu") owns a WebGPUBackend, which keeps the device it was given
and plans every graph as a list of steps. Until WGSL kernels land, every
step runs on this backend's own cpu fallback (a CpuBackend it owns, so a gpu
context still shares no state with any other context); a WGSL plan will
replace steps op by op, and `gpu_ops` will name the ops it runs on the GPU.

To fill it in (see docs/architecture.md, "Adding a backend"):
  * `plan(graph)`: for each node of an op in `gpu_ops`, emit a WGSL
    pipeline step (shader text, bindings, dispatch size) for the JS shim to
    execute on the GPUDevice; run the others on the fallback;
  * `allocate`/`write`/`read`: GPUBuffers held by the JS shim, named by handle;
  * `op_support_limits`: the data types the shaders take (no float16
    without the `shader-f16` feature).
"""
from __future__ import annotations

from ..base import Backend
from ..cpu import CpuBackend


class WebGPUPlan:
    __slots__ = ("gpu_steps", "fallback")

    def __init__(self, gpu_steps, fallback):
        self.gpu_steps = gpu_steps  # WGSL steps (none yet)
        self.fallback = fallback  # the CpuPlan of everything else


class WebGPUBackend(Backend):
    name = "webgpu"
    gpu_ops: frozenset = frozenset()  # ops with a WGSL kernel (none yet)

    def __init__(self, gpu_device=None, fast_paths: bool = True):
        self.gpu_device = gpu_device  # the GPUDevice createContext() was given, if any
        self.fallback = CpuBackend(fast_paths=fast_paths)
        self.preferred_input_layout = self.fallback.preferred_input_layout

    def supports(self, op) -> bool:
        return op.name in self.gpu_ops or self.fallback.supports(op)

    def plan(self, graph) -> WebGPUPlan:
        return WebGPUPlan([], self.fallback.plan(graph))

    def allocate(self, dtype, shape):
        return self.fallback.allocate(dtype, shape)

    def free(self, storage) -> None:
        self.fallback.free(storage)

    def write(self, storage, array):
        return self.fallback.write(storage, array)

    def read(self, storage):
        return self.fallback.read(storage)

    def dispatch(self, plan: WebGPUPlan, inputs: dict, outputs: dict) -> dict:
        return self.fallback.dispatch(plan.fallback, inputs, outputs)

    def execute(self, plan: WebGPUPlan, feeds: dict) -> dict:
        return self.fallback.execute(plan.fallback, feeds)

    def status(self) -> dict:
        return {"backend": self.name, "gpu_ops": sorted(self.gpu_ops), "gpu_device": self.gpu_device is not None,
                "fallback": self.fallback.status()}
