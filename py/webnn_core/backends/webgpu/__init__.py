"""The webgpu backend: the Python core plans each graph as WGSL compute
passes (plan.py, kernel templates in kernels/), the JS shim
(js/src/webgpu.js) creates the pipelines and buffers and submits the plan
on the context's GPUDevice. Without WebGPU it is its own cpu fallback.
See backend.py for the command protocol, docs/architecture.md for the plan
format."""
from __future__ import annotations

from .backend import GpuTensor, WebGPUBackend, WebGPUPlan

__all__ = ["GpuTensor", "WebGPUBackend", "WebGPUPlan"]
