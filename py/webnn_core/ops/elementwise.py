"""Element-wise unary, binary, comparison and logical ops (SPEC §7.9.6-7.9.8).

Float results are computed in float32 at least (float16 inputs are widened
and rounded once); integer arithmetic wraps like the storage type does.
"""
from __future__ import annotations

import math

import numpy as np

from ..registry import Inferred, Op, register
from ._common import ANY, FLOAT, FLOAT_OR_SIGNED, broadcast_shapes, check_same_dtype, compute_dtype

_erf64 = np.frompyfunc(math.erf, 1, 1)


def erf(x: np.ndarray) -> np.ndarray:
    """Correctly rounded-ish erf: math.erf in float64 (numpy has no erf)."""
    return np.asarray(_erf64(x.astype(np.float64)), dtype=np.float64)


# --------------------------------------------------------------------------- unary
class Unary(Op):
    """out = fn(input), same descriptor. Subclasses set name, dtypes, fn."""

    params = ("input",)
    dtypes = FLOAT

    @property
    def limits(self):
        return {"input": self.dtypes, "output": self.dtypes}

    def infer(self, input):
        return Inferred([input], [(input.dtype, input.shape)])

    def compute(self, attrs, x):
        with np.errstate(all="ignore"):
            return self.fn(compute_dtype(x))

    @staticmethod
    def fn(x):  # pragma: no cover - abstract
        raise NotImplementedError


def _unary(name, dtypes, fn):
    register(type(name, (Unary,), {"name": name, "dtypes": dtypes, "fn": staticmethod(fn)}))


def _sign(x):
    return np.sign(x)


_unary("abs", FLOAT_OR_SIGNED, np.abs)
_unary("neg", FLOAT_OR_SIGNED, np.negative)
_unary("ceil", FLOAT, np.ceil)
_unary("floor", FLOAT, np.floor)
_unary("cos", FLOAT, np.cos)
_unary("sin", FLOAT, np.sin)
_unary("tan", FLOAT, np.tan)
_unary("exp", FLOAT, np.exp)
_unary("log", FLOAT, np.log)
_unary("sqrt", FLOAT, np.sqrt)
_unary("erf", FLOAT, erf)
_unary("reciprocal", FLOAT, np.reciprocal)
_unary("identity", ANY + ("int4", "uint4"), lambda x: x)
_unary("sign", ("float32", "float16", "int32", "int64", "int8"), _sign)


# -------------------------------------------------------------------------- binary
class Binary(Op):
    """out = fn(a, b) with bidirectional broadcasting; a and b share a dtype."""

    params = ("a", "b")
    dtypes = ANY
    output_dtype = None  # None: same as the inputs

    @property
    def limits(self):
        return {"a": self.dtypes, "b": self.dtypes, "output": (self.output_dtype,) if self.output_dtype else self.dtypes}

    def infer(self, a, b):
        check_same_dtype(a, b)
        shape = broadcast_shapes(a.shape, b.shape)
        return Inferred([a, b], [(self.output_dtype or a.dtype, shape)])

    def compute(self, attrs, a, b):
        with np.errstate(all="ignore"):
            return self.fn(compute_dtype(a), compute_dtype(b))


def _binary(name, fn, dtypes=ANY, output_dtype=None):
    register(type(name, (Binary,), {"name": name, "dtypes": dtypes, "output_dtype": output_dtype, "fn": staticmethod(fn)}))


def _div(a, b):
    if a.dtype.kind in "iu":
        # WebNN integer division truncates toward zero; numpy's // floors.
        # Division by zero yields 0 rather than trapping.
        safe_b = np.where(b == 0, 1, b)
        q = np.floor_divide(a, safe_b)
        if a.dtype.kind == "i":
            q = q + ((np.remainder(a, safe_b) != 0) & ((a < 0) != (safe_b < 0)))
        return np.where(b == 0, 0, q)
    return np.divide(a, b)


def _pow(a, b):
    if a.dtype.kind in "iu":
        # numpy refuses negative integer exponents; compute in float64 and wrap.
        r = np.power(a.astype(np.float64), b.astype(np.float64))
        r = np.where(np.isfinite(r), r, 0)
        return np.trunc(r).astype(np.int64).astype(a.dtype)
    return np.power(a, b)


_binary("add", np.add)
_binary("sub", np.subtract)
_binary("mul", np.multiply)
_binary("div", _div)
_binary("max", np.maximum)
_binary("min", np.minimum)
_binary("pow", _pow)

# Comparisons: any dtype in, uint8 0/1 out.
_binary("equal", lambda a, b: np.equal(a, b), output_dtype="uint8")
_binary("notEqual", lambda a, b: np.not_equal(a, b), output_dtype="uint8")
_binary("greater", lambda a, b: np.greater(a, b), output_dtype="uint8")
_binary("greaterOrEqual", lambda a, b: np.greater_equal(a, b), output_dtype="uint8")
_binary("lesser", lambda a, b: np.less(a, b), output_dtype="uint8")
_binary("lesserOrEqual", lambda a, b: np.less_equal(a, b), output_dtype="uint8")

# Logical ops: uint8 in (non-zero is true), uint8 0/1 out.
_binary("logicalAnd", lambda a, b: np.logical_and(a, b), dtypes=("uint8",), output_dtype="uint8")
_binary("logicalOr", lambda a, b: np.logical_or(a, b), dtypes=("uint8",), output_dtype="uint8")
_binary("logicalXor", lambda a, b: np.logical_xor(a, b), dtypes=("uint8",), output_dtype="uint8")


@register
class LogicalNot(Op):
    name = "logicalNot"
    params = ("a",)
    limits = {"a": ("uint8",), "output": ("uint8",)}

    def infer(self, a):
        return Inferred([a], [("uint8", a.shape)])

    def compute(self, attrs, a):
        return np.logical_not(a)
