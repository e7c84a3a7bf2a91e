"""The webgpu backend: graphs planned as WGSL compute passes, tensors in
GPUBuffers, all executed by the JS shim on the context's GPUDevice.

Python never touches the GPU. It plans (plan.py) and queues commands in its
outbox, which the bridge hands to JS with the reply of the same call (JS
runs them at once, in order, so the GPU queue sees writes, dispatches and
reads in call order):

    ["buffer", id, bytes]          create a storage buffer (zero-filled)
    ["free", id]                   destroy it
    ["write", id, array]           queue.writeBuffer from the engine's memory
                                   (the bridge turns the array into [address, bytes])
    ["plan", id, plan]             pipelines for a plan's shaders (at build(), cached by text)
    ["run", id, [buffer id, ...]]  encode the plan's steps on these io buffers, submit (no wait)
    ["drop", id]                   forget a plan
    ["cpu_plan", reason]           a graph was placed on the cpu fallback (JS counts
                                   it in engineStats.webgpu.graphs)
    ["cpu_run"]                    a dispatch ran on the cpu fallback (counted likewise)

A tensor (`GpuTensor`) of a data type the kernels take has a GPUBuffer and
maybe a host copy: writeTensor updates both (the write goes to the GPU at
once); a GPU dispatch leaves the current contents on the GPU only, so a
read maps a staging buffer (`device_read`). A graph that needs an op or data
type without a WGSL kernel runs wholly on this backend's cpu fallback, and
is counted with its reason (`status()["partitions"]`); a host value it
produces reaches the GPU by one counted upload when a GPU graph reads it.

Without WebGPU (no adapter, or Python callers) the backend is the cpu
fallback alone, and `status()` says why."""
from __future__ import annotations

import re
from collections import Counter

import numpy as np

from ...dtypes import byte_length, contiguous_bytes, zeros
from ...errors import NotSupportedError, UnknownError
from ..base import Backend
from ..cpu import CpuBackend
from .kernels import Decline
from .kernels.conv import CONV_KERNELS
from .plan import plan_graph
from .wgsl import BUFFER_TYPES, buffer_bytes


# Adapters that run shaders on the CPU (kernel choices differ there: kernels/conv.py).
EMULATED_ADAPTERS = re.compile(r"swiftshader|llvmpipe|lavapipe|microsoft basic render|\bwarp\b", re.I)

DEFAULT_LIMITS = {"maxStorageBufferBindingSize": 134217728, "maxBufferSize": 268435456,
                  "maxStorageBuffersPerShaderStage": 8, "maxComputeWorkgroupsPerDimension": 65535}


def words(array: np.ndarray) -> np.ndarray:
    """The array's bytes as whole 4-byte words (queue.writeBuffer writes multiples
    of 4): uint8 data is zero-padded to the buffer's size."""
    data = np.ascontiguousarray(array)
    if data.nbytes % 4 == 0 and data.nbytes:
        return data
    raw = np.zeros(max(4, -(-data.nbytes // 4) * 4), np.uint8)
    raw[:data.nbytes] = data.reshape(-1).view(np.uint8)
    return raw


class GpuTensor:
    """A tensor's storage: its GPUBuffer (`buffer`, an id in this backend's
    outbox; None for data types the kernels do not take) and `array`, the
    host copy (None while only the GPU holds the current contents)."""

    __slots__ = ("buffer", "dtype", "shape", "array", "on_gpu")

    def __init__(self, buffer, dtype, shape, array):
        self.buffer = buffer
        self.dtype = dtype
        self.shape = tuple(shape)
        self.array = array
        self.on_gpu = buffer is not None  # the buffer holds the current contents


class WebGPUPlan:
    """A graph's plan: `gpu` (a plan.GpuPlan, with `id` and its buffers) or
    None when the graph runs on the cpu fallback (`reason` says why); the
    fallback plan is made when first needed."""

    __slots__ = ("gpu", "id", "buffers", "reason", "graph", "_fallback", "backend")

    def __init__(self, backend, graph, gpu=None, plan_id=None, buffers=None, reason=None):
        self.backend = backend
        self.graph = graph
        self.gpu = gpu
        self.id = plan_id
        self.buffers = buffers or {}
        self.reason = reason
        self._fallback = None

    @property
    def fallback(self):
        if self._fallback is None:
            self._fallback = self.backend.fallback.plan(self.graph)
        return self._fallback

    @property
    def nodes(self):  # Graph.destroy clears the plan's nodes too
        return getattr(self._fallback, "nodes", None) or []


class WebGPUBackend(Backend):
    name = "webgpu"

    def __init__(self, gpu_device=None, fast_paths: bool = True, layout_pass: bool = True, webgpu=None):
        """`webgpu`: what the JS shim found, {"token": n, "adapter": text} when
        it holds a GPUDevice for this context, {"reason": text} when not."""
        self.gpu_device = gpu_device
        self.fallback = CpuBackend(fast_paths=fast_paths, layout_pass=layout_pass)
        info = dict(webgpu or {})
        self.token = info.get("token")
        self.active = self.token is not None
        self.adapter = info.get("adapter")
        # The device's limits (WebGPU's defaults when JS sent none): plans and tensors stay within them.
        limits = dict(info.get("limits") or {})
        options = limits.pop("plannerOptions", None) or {}
        self.limits = {**DEFAULT_LIMITS, **limits}
        self.reason = None if self.active else (info.get("reason") or "no WebGPU device (the gpu context runs the cpu kernels)")
        # The direct conv/pool kernels read either layout in place.
        self.preferred_input_layout = "nchw" if self.active else self.fallback.preferred_input_layout
        self._outbox: list = []
        self._next_id = 0
        self.counts = Counter()
        self.gpu_ops = Counter()  # op name -> nodes run on the GPU, over all dispatches
        self.gpu_kernels = Counter()  # kernel variant ("conv2d.tiled", ...) -> steps run, over all dispatches
        # The planner's kernel choices (plan.plan_graph options): conv2d "auto" | "tiled" | "direct"
        # (WEBNN_POLYFILL_CONFIG.webgpuConv2d; docs/architecture.md "The webgpu plan").
        conv = options.get("conv2d", "auto")
        self.plan_options = {"conv2d": conv if conv in CONV_KERNELS else "auto",
                             "emulated": bool(self.adapter and EMULATED_ADAPTERS.search(self.adapter))}
        self.partitions: list = []  # graphs placed on the cpu fallback, with the reason

    # -- the outbox -------------------------------------------------------------------
    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def drain(self) -> list:
        """The commands queued since the last drain (the bridge sends them to JS)."""
        out, self._outbox = self._outbox, []
        return out

    def _upload(self, storage: GpuTensor) -> None:
        array = storage.array
        if storage.dtype in ("int4", "uint4"):  # the core holds them one per byte; the buffer packs nibbles
            array = contiguous_bytes(storage.dtype, array)
        self._outbox.append(["write", storage.buffer, words(array)])
        storage.on_gpu = True

    # -- the interface ------------------------------------------------------------------
    def supports(self, op) -> bool:
        return True  # ops without a WGSL kernel run on the cpu fallback, counted (status())

    def plan(self, graph) -> WebGPUPlan:
        if not self.active:
            plan = WebGPUPlan(self, graph, reason=self.reason)
            plan.fallback  # noqa: B018 - compile now, at build(), as the cpu backend does
            return plan
        try:
            gpu = plan_graph(graph, self.limits, self.plan_options)
        except Decline as e:
            self.counts["graphs_cpu"] += 1
            self.partitions.append({"graph": len(self.partitions) + self.counts["graphs_gpu"], "reason": str(e)})
            del self.partitions[:-32]
            self._outbox.append(["cpu_plan", str(e)])
            plan = WebGPUPlan(self, graph, reason=str(e))
            plan.fallback  # noqa: B018
            return plan
        self.counts["graphs_gpu"] += 1
        buffers = {}
        for s, slot in enumerate(gpu.slots):
            if slot["kind"] in ("constant", "temp"):
                buffers[s] = self._id()
                self._outbox.append(["buffer", buffers[s], slot["bytes"]])
        for s, array in gpu.constants.items():
            self._outbox.append(["write", buffers[s], words(array)])
        plan_id = self._id()
        self._outbox.append(["plan", plan_id, gpu.to_json(buffers)])
        return WebGPUPlan(self, graph, gpu, plan_id, buffers)

    def release_plan(self, plan) -> None:
        if isinstance(plan, WebGPUPlan) and plan.gpu is not None and self.active:
            self._outbox.append(["drop", plan.id])
            for buffer in plan.buffers.values():
                self._outbox.append(["free", buffer])
            plan.gpu = None
            plan.buffers = {}

    def allocate(self, dtype, shape):
        if not self.active:
            return self.fallback.allocate(dtype, shape)
        array = zeros(dtype, shape)
        if dtype not in BUFFER_TYPES or buffer_bytes(dtype, shape) > self.limits["maxBufferSize"]:
            return GpuTensor(None, dtype, shape, array)  # host only; graphs using it run on the cpu fallback
        buffer = self._id()
        self._outbox.append(["buffer", buffer, buffer_bytes(dtype, shape)])
        return GpuTensor(buffer, dtype, shape, array)  # WebGPU buffers start zero-filled, like the array

    def free(self, storage) -> None:
        if isinstance(storage, GpuTensor) and storage.buffer is not None:
            self._outbox.append(["free", storage.buffer])
            storage.buffer = None
            storage.array = None

    def write(self, storage, array):
        if not isinstance(storage, GpuTensor):
            return self.fallback.write(storage, array)
        storage.array = array
        if storage.buffer is not None:
            self._upload(storage)  # queue.writeBuffer now, in call order
            self.counts["writes"] += 1
        return storage

    def export_problem(self, dtype, shape):
        if not self.active:
            return f"this gpu context has no GPUDevice ({self.reason})"
        if dtype not in BUFFER_TYPES:
            return f"{dtype} tensors are kept in the engine's memory on this context, not in GPU buffers"
        if buffer_bytes(dtype, shape) > self.limits["maxBufferSize"]:
            return "the tensor is larger than the device's maxBufferSize"
        return None

    def export(self, storage):
        """The tensor's GPU buffer, made current first (one upload if a cpu-placed graph
        left the newest contents on the host)."""
        if not storage.on_gpu:
            self._upload(storage)
            self.counts["uploads"] += 1
        self.counts["exports"] += 1
        return {"buffer": storage.buffer, "bytes": byte_length(storage.dtype, storage.shape)}

    def returned(self, storage):
        storage.array = None  # the page's GPU work may have changed it: the buffer is current
        storage.on_gpu = True
        self.counts["returns"] += 1

    def read(self, storage):
        if not isinstance(storage, GpuTensor):
            return self.fallback.read(storage)
        if storage.array is None:
            raise UnknownError("the tensor's contents are on the GPU only (read it with readTensor)")
        return storage.array

    def device_read(self, storage):
        """None when the host copy is current, else what JS must map: {"buffer", "bytes"}."""
        if isinstance(storage, GpuTensor) and storage.array is None:
            self.counts["readbacks"] += 1
            return {"buffer": storage.buffer, "bytes": byte_length(storage.dtype, storage.shape)}
        return None

    def dispatch(self, plan: WebGPUPlan, inputs: dict, outputs: dict) -> dict:
        if plan.gpu is None:
            return self._dispatch_cpu(plan, inputs, outputs)
        for storage in inputs.values():
            if not storage.on_gpu:  # a host value from a cpu-placed graph
                self._upload(storage)
                self.counts["uploads"] += 1
        io = [inputs[name].buffer for name in plan.gpu.inputs] + [outputs[name].buffer for name in plan.gpu.outputs]
        self._outbox.append(["run", plan.id, io])
        for storage in outputs.values():
            storage.array = None
            storage.on_gpu = True
        self.counts["dispatches_gpu"] += 1
        self.gpu_ops.update(plan.gpu.ops)
        self.gpu_kernels.update(plan.gpu.kernels)
        return outputs

    def _dispatch_cpu(self, plan, inputs, outputs):
        arrays = {}
        for name, storage in inputs.items():
            if isinstance(storage, GpuTensor):
                if storage.array is None:
                    self.counts["refused"] += 1
                    raise NotSupportedError(
                        f"dispatch: input '{name}' was last written by a graph that ran on the GPU, and this graph runs "
                        f"on the cpu fallback ({plan.reason}); the polyfill cannot read GPU results back synchronously "
                        "(read the tensor and write it again, or use a cpu context for this graph)")
                arrays[name] = storage.array
            else:
                arrays[name] = storage
        if self.active:
            self.counts["dispatches_cpu"] += 1
            self._outbox.append(["cpu_run"])
        results = self.fallback.dispatch(plan.fallback, arrays, {name: None for name in outputs})
        for name, storage in outputs.items():
            if isinstance(storage, GpuTensor):
                storage.array = results[name]
                storage.on_gpu = storage.buffer is None
                results[name] = storage
        return results

    def execute(self, plan: WebGPUPlan, feeds: dict) -> dict:
        return self.fallback.execute(plan.fallback, feeds)

    def status(self) -> dict:
        # MLContext.accelerated follows: false when the context runs the cpu kernels (`reason`).
        return {"backend": self.name, "webgpu": self.active, "accelerated": self.active, "adapter": self.adapter,
                "reason": self.reason,
                "gpu_device": self.gpu_device is not None or self.token is not None,
                "counts": dict(self.counts), "gpu_ops": dict(self.gpu_ops), "gpu_kernels": dict(self.gpu_kernels), "plan_options": dict(self.plan_options),
                "partitions": list(self.partitions),
                "fallback": self.fallback.status()}
