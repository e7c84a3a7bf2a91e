"""Reductions (SPEC §7.7.34), argMin/argMax (§7.7.4) and cumulativeSum (WPT 2025).

Numerics (pinned in tests/core/test_ops_reduction.py): float reductions
accumulate in float64 and round once; integer ones accumulate in 64 bits and
wrap to the storage type, i.e. they equal the exact result modulo 2^32
(reduceSum of int32 [2^31-1, 1] is -2^31), like a repeated add/mul would.
"""
from __future__ import annotations

import numpy as np

from ..dtypes import INT_RANGE
from ..registry import Inferred, Op, check, register
from ._common import ANY, FLOAT, check_axes, check_axis

FLOAT_OR_32 = ("float32", "float16", "int32", "uint32")
CUMSUM_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64")


def reduced_shape(shape, axes, keep: bool) -> tuple:
    """SPEC "calculate reduction output sizes" (axes already validated)."""
    if keep:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _wide(x: np.ndarray) -> np.ndarray:
    """The accumulation type: float64 for floats, 64-bit for integers."""
    if x.dtype.kind == "f":
        return x.astype(np.float64)
    return x.astype(np.uint64 if x.dtype.kind == "u" else np.int64)


# ------------------------------------------------------------------ reductions
class Reduce(Op):
    """out = fn over `axes` (all when absent; none when [] - fn still applies per element)."""

    params = ("input",)
    dtypes = FLOAT

    @property
    def limits(self):
        return {"input": self.dtypes, "output": self.dtypes}

    def infer(self, input, axes=None, keepDimensions=False):
        rank = len(input.shape)
        axes = tuple(range(rank)) if axes is None else tuple(axes)
        check_axes(axes, rank)
        shape = reduced_shape(input.shape, axes, keepDimensions)
        return Inferred([input], [(input.dtype, shape)], {"axes": axes, "keep": bool(keepDimensions)})

    def compute(self, attrs, x):
        with np.errstate(all="ignore"):
            return self.fn(x, attrs["axes"], attrs["keep"])

    @staticmethod
    def fn(x, axes, keep):  # pragma: no cover - abstract
        raise NotImplementedError


def _reduce(name, dtypes, fn):
    register(type(name, (Reduce,), {"name": name, "dtypes": dtypes, "fn": staticmethod(fn)}))


def _sum(x, axes, keep):
    return np.sum(x, axis=axes, keepdims=keep)


def _log_sum_exp(x, axes, keep):
    """ln Σ e^x, shifted by the max so large inputs do not overflow."""
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    s = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return s if keep else np.squeeze(s, axis=axes)


_reduce("reduceSum", FLOAT_OR_32, lambda x, a, k: _sum(_wide(x), a, k))
_reduce("reduceL1", FLOAT_OR_32, lambda x, a, k: _sum(np.abs(_wide(x)), a, k))
_reduce("reduceSumSquare", FLOAT_OR_32, lambda x, a, k: _sum(np.square(_wide(x)), a, k))
_reduce("reduceProduct", FLOAT_OR_32, lambda x, a, k: np.prod(_wide(x), axis=a, keepdims=k))
_reduce("reduceL2", FLOAT, lambda x, a, k: np.sqrt(_sum(np.square(_wide(x)), a, k)))
_reduce("reduceLogSum", FLOAT, lambda x, a, k: np.log(_sum(_wide(x), a, k)))
_reduce("reduceLogSumExp", FLOAT, lambda x, a, k: _log_sum_exp(_wide(x), a, k))
_reduce("reduceMean", FLOAT, lambda x, a, k: np.mean(_wide(x), axis=a, keepdims=k))
_reduce("reduceMax", ANY, lambda x, a, k: np.max(x, axis=a, keepdims=k))  # NaN propagates
_reduce("reduceMin", ANY, lambda x, a, k: np.min(x, axis=a, keepdims=k))


# ------------------------------------------------------------ argMin / argMax
class ArgMinMax(Op):
    """Index of the first min/max along `axis` (WPT: first occurrence on ties)."""

    params = ("input", "axis")
    limits = {"input": ANY, "output": ("int32", "int64")}

    def infer(self, input, axis, keepDimensions=False, outputDataType="int32"):
        check(outputDataType in self.limits["output"],
              f"outputDataType {outputDataType} is not supported (supported: int32, int64)")
        rank = len(input.shape)
        check_axis(axis, rank)
        check(input.shape[axis] <= INT_RANGE[outputDataType][1],
              f"input dimension {axis} ({input.shape[axis]}) exceeds the range of {outputDataType}")
        shape = reduced_shape(input.shape, (axis,), keepDimensions)
        return Inferred([input], [(outputDataType, shape)], {"axis": axis, "keep": bool(keepDimensions)})

    def compute(self, attrs, x):
        return self.fn(x, axis=attrs["axis"], keepdims=attrs["keep"])


register(type("argMin", (ArgMinMax,), {"name": "argMin", "fn": staticmethod(np.argmin)}))
register(type("argMax", (ArgMinMax,), {"name": "argMax", "fn": staticmethod(np.argmax)}))


# --------------------------------------------------------------- cumulativeSum
@register
class CumulativeSum(Op):
    """Prefix sums along `axis`; `exclusive` starts at 0, `reversed` sums from the end."""

    name = "cumulativeSum"
    params = ("input", "axis")
    limits = {"input": CUMSUM_TYPES, "output": CUMSUM_TYPES}

    def infer(self, input, axis, exclusive=False, reversed=False):
        check_axis(axis, len(input.shape))
        attrs = {"axis": axis, "exclusive": bool(exclusive), "reversed": bool(reversed)}
        return Inferred([input], [(input.dtype, input.shape)], attrs)

    def compute(self, attrs, x):
        axis = attrs["axis"]
        y = _wide(x)
        if attrs["reversed"]:
            y = np.flip(y, axis)
        with np.errstate(all="ignore"):
            c = np.cumsum(y, axis=axis)
        if attrs["exclusive"]:
            first = np.zeros_like(np.take(c, [0], axis=axis))
            c = np.concatenate([first, np.delete(c, -1, axis=axis)], axis=axis)
        return np.flip(c, axis) if attrs["reversed"] else c
