"""The cpu backend: numpy reference kernels + SIMD wasm fast paths."""
from .backend import CpuBackend, CpuPlan

__all__ = ["CpuBackend", "CpuPlan"]
