"""The cpu plan's unit of work, and what every kernel result goes through,
fast path or numpy reference."""
from __future__ import annotations

import numpy as np

from ...dtypes import numpy_dtype


def coerce(value, operand) -> np.ndarray:
    """Bring a kernel result to the operand's exact storage dtype and shape."""
    return coerce_to(value, numpy_dtype(operand.dtype), operand.shape)


def coerce_to(value, want: np.dtype, shape: tuple) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype != want:
        with np.errstate(over="ignore", invalid="ignore"):  # float16 overflow to ±inf is the intended result
            arr = arr.astype(want)
    if arr.shape != shape:
        arr = arr.reshape(shape)
    return arr


class Step:
    """One kernel call of a cpu plan: the op, its input and output operands,
    and `attrs`, the kernel parameters (the op's `infer` attrs, plus what
    compilation adds: packed weights, buffers, cached calls). Steps belong
    to the plan; the graph's nodes never hold any of this."""

    __slots__ = ("op", "inputs", "outputs", "attrs", "label")

    def __init__(self, op, inputs, outputs, attrs, label):
        self.op = op
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self.label = label

    @classmethod
    def of(cls, node) -> "Step":
        return cls(node.op, list(node.inputs), list(node.outputs), node.kernel_params(), node.label)
