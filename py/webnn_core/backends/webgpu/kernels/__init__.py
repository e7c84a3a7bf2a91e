"""The WGSL kernel templates, one module per op family; `KERNELS` maps an op
name to its template (see common.py for what a template gets and returns)."""
from __future__ import annotations

from . import conv, copy, elementwise, linalg, pool, reduce
from .common import Call, Decline, Scratch, Step

KERNELS = {}
for _family in (elementwise, linalg, conv, pool, reduce, copy):
    KERNELS.update(_family.KERNELS)

# Ops the planner may fuse onto a conv2d/matmul/gemm as its epilogue.
ACTIVATIONS = frozenset(elementwise.UNARY_OPS) - {"identity"}

__all__ = ["ACTIVATIONS", "Call", "Decline", "KERNELS", "Scratch", "Step"]
