"""Activations (SPEC §7.9): relu, sigmoid, tanh, clamp, softmax, elu, gelu,
hardSigmoid, hardSwish, leakyRelu, linear, prelu, softplus, softsign."""
from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..registry import Inferred, Op, check, register
from ._common import ANY, FLOAT, FLOAT_OR_SIGNED, can_broadcast_to, check_axis, check_same_dtype, compute_dtype
from .elementwise import Unary, erfc


class Activation(Unary):
    """A unary op with scalar `double` options (alpha, beta) kept as attrs."""

    defaults: dict = {}

    def infer(self, input, **options):
        # SPEC: alpha and beta are cast to the input's data type first.
        attrs = {k: float(dtypes.cast_number(options.get(k, v), input.dtype)) for k, v in self.defaults.items()}
        return Inferred([input], [(input.dtype, input.shape)], attrs)

    def compute(self, attrs, x):
        with np.errstate(all="ignore"):
            return self.fn(compute_dtype(x), **attrs)


def _activation(name, fn, dtypes=FLOAT, **defaults):
    register(type(name, (Activation,), {"name": name, "dtypes": dtypes, "defaults": defaults, "fn": staticmethod(fn)}))


def _f64(fn):
    """Evaluate in float64; the kernel layer rounds once to the output dtype,
    which keeps transcendental activations well inside WPT's ULP tolerances."""
    return lambda x, **kw: fn(x.astype(np.float64), **kw)


_activation("relu", lambda x: np.maximum(x, 0).astype(x.dtype), dtypes=FLOAT_OR_SIGNED)
_activation("sigmoid", _f64(lambda x: 1.0 / (1.0 + np.exp(-x))))
_activation("tanh", _f64(np.tanh))
_activation("elu", _f64(lambda x, alpha: np.maximum(0, x) + alpha * (np.exp(np.minimum(0, x)) - 1)), alpha=1.0)
# 0.5·x·(1 + erf(x/√2)) written with erfc, which keeps the tail of negative x exact.
_activation("gelu", _f64(lambda x: 0.5 * x * erfc(-x / math.sqrt(2))))
_activation("hardSigmoid", _f64(lambda x, alpha, beta: np.maximum(0, np.minimum(1, alpha * x + beta))), alpha=0.2, beta=0.5)
_activation("hardSwish", _f64(lambda x: x * np.maximum(0, np.minimum(6, x + 3)) / 6))
_activation("leakyRelu", _f64(lambda x, alpha: np.maximum(0, x) + alpha * np.minimum(0, x)), alpha=0.01)
_activation("linear", _f64(lambda x, alpha, beta: alpha * x + beta), alpha=1.0, beta=0.0)
_activation("softplus", _f64(lambda x: np.logaddexp(0, x)))
_activation("softsign", _f64(lambda x: x / (1 + np.abs(x))))


@register
class Clamp(Op):
    name = "clamp"
    limits = {"input": ANY, "output": ANY}

    def infer(self, input, minValue=None, maxValue=None):
        # WPT (validation_tests/clamp) requires minValue = -Infinity to throw.
        check(not (isinstance(minValue, float) and minValue == -math.inf), "minValue must not be -Infinity")
        lo = None if minValue is None else dtypes.cast_number(minValue, input.dtype)
        hi = None if maxValue is None else dtypes.cast_number(maxValue, input.dtype)
        if lo is not None and hi is not None:
            check(not lo > hi, f"minValue ({minValue}) is greater than maxValue ({maxValue})")
        return Inferred([input], [(input.dtype, input.shape)], {"min": lo, "max": hi})

    def compute(self, attrs, x):
        y = x
        if attrs["min"] is not None:
            y = np.where(y < attrs["min"], attrs["min"], y)  # keeps NaN, unlike np.maximum on some paths
        if attrs["max"] is not None:
            y = np.where(y > attrs["max"], attrs["max"], y)
        return y.astype(x.dtype, copy=False)


@register
class Softmax(Op):
    name = "softmax"
    params = ("input", "axis")
    param_defaults = {"axis": None}
    limits = {"input": FLOAT, "output": FLOAT}

    def infer(self, input, axis):
        if axis is None:  # legacy softmax(input): 2-D, along axis 1
            check(len(input.shape) == 2, "softmax without an axis needs a 2-D input")
            axis = 1
        check_axis(axis, len(input.shape))
        return Inferred([input], [(input.dtype, input.shape)], {"axis": axis})

    def compute(self, attrs, x):
        z = x.astype(np.float64)
        z = z - np.max(z, axis=attrs["axis"], keepdims=True)
        e = np.exp(z)
        return e / np.sum(e, axis=attrs["axis"], keepdims=True)


@register
class Prelu(Op):
    name = "prelu"
    params = ("input", "slope")
    limits = {"input": FLOAT_OR_SIGNED, "slope": FLOAT_OR_SIGNED, "output": FLOAT_OR_SIGNED}

    def infer(self, input, slope):
        check_same_dtype(input, slope)
        # WPT/Chromium: slope broadcasts unidirectionally onto input.
        check(can_broadcast_to(slope.shape, input.shape), f"slope shape {list(slope.shape)} does not broadcast to input shape {list(input.shape)}")
        return Inferred([input, slope], [(input.dtype, input.shape)])

    def compute(self, attrs, x, slope):
        x, slope = compute_dtype(x), compute_dtype(slope)
        return np.where(x >= 0, x, x * slope)
