"""The WGSL kernel templates, one module per op family; `KERNELS` maps an op
name to its template (see common.py for what a template gets and returns)."""
from __future__ import annotations

from . import conv, copy, elementwise, linalg, logical, normalization, pool, quantize, recurrent, reduce
from .common import Call, Decline, Derived, Literal, Scratch, Step

KERNELS = {}
for _family in (elementwise, logical, linalg, conv, pool, reduce, normalization, copy, quantize, recurrent):
    KERNELS.update(_family.KERNELS)

# Element-wise unary ops the planner may fuse onto a node as its epilogue,
# and the element-wise ops whose kernels take one (besides conv2d/matmul/gemm).
ACTIVATIONS = frozenset(elementwise.UNARY_OPS)
ELEMENTWISE = frozenset(elementwise.UNARY_OPS) | frozenset(elementwise.BINARY_OPS) | {"prelu"}

__all__ = ["ACTIVATIONS", "Call", "Derived", "ELEMENTWISE", "Decline", "KERNELS", "Literal", "Scratch", "Step"]
