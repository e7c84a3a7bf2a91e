"""Element-wise unary, binary, comparison and logical ops (SPEC §7.7.12-7.7.14).

Numerics (pinned in tests/core/test_ops_elementwise.py):
  * transcendental float ops run in float64 and are rounded once to the output
    type; +,-,*,/,sqrt of float16 run in float32, which rounds correctly too
    (double rounding is harmless since 24 >= 2*11+2);
  * integer arithmetic wraps like the storage type; integer div truncates
    toward zero and x/0 is 0; integer pow with a negative exponent is the
    truncated real result (0 unless the base is +-1; 0**-n is 0, like x/0);
  * max/min propagate NaN (the spec is silent; IEEE 754-2019 maximum/minimum).
"""
from __future__ import annotations

import math

import numpy as np

from ..registry import Inferred, Op, register
from ._common import ALL_TYPES, ANY, FLOAT, FLOAT_OR_SIGNED, broadcast_shapes, check_same_dtype, compute_dtype

# ------------------------------------------------------------------------- erf
# Polynomials fitted for this module (Chebyshev fits against 50-digit references,
# stored in the power basis for an in-place Horner loop):
#   erf(x)/x            as a polynomial in x*x,            0 <= x < 1  (max rel. error 2e-15)
#   erfc(x) * exp(x*x)  as a polynomial in t = (2x - 5)/3, 1 <= x <= 4 (max rel. error 7e-15)
# and Laplace's continued fraction for erfc beyond 4 (20 terms: rel. error < 1e-15).
_ERF_SMALL = (
    1.1283791670955114, -0.3761263890317364, 0.11283791670565614, -0.026866170585251002,
    0.0052239771479031805, -0.0008548304669340705, 0.00012054677545219919, -1.4913240121252891e-05,
    1.6309840283673751e-06, -1.5185861651856368e-07, 9.423822307829187e-09,
)
_ERFC_MID = (
    0.21080636406114373, -0.11152102018467608, 0.05611049344495646, -0.027005296665733366,
    0.012489373880316961, -0.005570706154310446, 0.00240364767256289, -0.001005831694351589,
    0.00040908495006201256, -0.00016201037945244088, 6.257886100045314e-05, -2.3613995943694017e-05,
    8.71282463378645e-06, -3.138304667763868e-06, 1.111081756338868e-06, -3.978570730854833e-07,
    1.356931771843928e-07, -3.5948208271268435e-08, 1.1843999988419566e-08, -8.08095520313291e-09,
    2.5768241372740913e-09,
)
_CF_TERMS = 20
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)


def _horner(t: np.ndarray, coeffs) -> np.ndarray:
    y = np.full_like(t, coeffs[-1])
    for c in coeffs[-2::-1]:
        y *= t
        y += c
    return y


def _erfc_from_one(a: np.ndarray) -> np.ndarray:
    """erfc(a) for a >= 1 (NaN passes through)."""
    mid = a <= 4.0
    if mid.all():
        return np.exp(-a * a) * _horner((2.0 * a - 5.0) / 3.0, _ERFC_MID)
    out = np.empty_like(a)
    m = a[mid]
    out[mid] = np.exp(-m * m) * _horner((2.0 * m - 5.0) / 3.0, _ERFC_MID)
    big = ~mid
    x = a[big]
    t = x.copy()
    for n in range(_CF_TERMS, 0, -1):
        t = x + (0.5 * n) / t
    out[big] = np.exp(-x * x) * _INV_SQRT_PI / t
    return out


def _erf_parts(x: np.ndarray) -> tuple:
    """Split |x| at 1: erf on the small part, erfc on the rest."""
    a = np.abs(x)
    small = a < 1.0
    s = a[small]
    large = ~small
    return small, large, s * _horner(s * s, _ERF_SMALL), _erfc_from_one(a[large])


def erf(x) -> np.ndarray:
    """Vectorized erf in float64 (numpy has none; math.erf per element is slow)."""
    x = np.asarray(x, dtype=np.float64)
    small, large, p, c = _erf_parts(x)
    out = np.empty_like(x)
    out[small] = p
    out[large] = 1.0 - c
    return np.copysign(out, x, out=out)


def erfc(x) -> np.ndarray:
    """Vectorized erfc in float64, accurate relative to its value far into the
    tail (gelu of large negative x needs that; 1 + erf(x) would cancel to 0)."""
    x = np.asarray(x, dtype=np.float64)
    small, large, p, c = _erf_parts(x)
    out = np.empty_like(x)
    out[small] = 1.0 - p
    out[large] = c
    return np.where(x < 0, 2.0 - out, out)


def _f64(fn):
    """Evaluate in float64; the kernel layer rounds once to the output type."""
    return lambda x: fn(x.astype(np.float64))


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


_unary("abs", FLOAT_OR_SIGNED, np.abs)  # int: abs(INT_MIN) wraps to INT_MIN
_unary("neg", FLOAT_OR_SIGNED, np.negative)
_unary("ceil", FLOAT, np.ceil)
_unary("roundEven", FLOAT, np.rint)  # halves to even (IEEE roundTiesToEven), -0.4 -> -0
_unary("floor", FLOAT, np.floor)
_unary("cos", FLOAT, _f64(np.cos))
_unary("sin", FLOAT, _f64(np.sin))
_unary("tan", FLOAT, _f64(np.tan))
_unary("exp", FLOAT, _f64(np.exp))
_unary("log", FLOAT, _f64(np.log))
_unary("erf", FLOAT, erf)
_unary("sqrt", FLOAT, np.sqrt)  # correctly rounded in float32, so also for float16
_unary("reciprocal", FLOAT, np.reciprocal)
_unary("identity", ALL_TYPES, lambda x: x)  # bit-exact, so the 4-bit types work too
_unary("sign", ("float32", "float16", "int32", "int64", "int8"), np.sign)


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
        # Truncate toward zero (numpy's // floors); x/0 is 0 rather than a trap;
        # INT_MIN / -1 wraps to INT_MIN.
        zero = b == 0
        safe_b = np.where(zero, 1, b).astype(b.dtype)
        q = np.floor_divide(a, safe_b)
        if a.dtype.kind == "i":
            q = q + ((np.remainder(a, safe_b) != 0) & ((a < 0) != (safe_b < 0))).astype(q.dtype)
        return np.where(zero, 0, q).astype(a.dtype)
    return np.divide(a, b)


def _pow(a, b):
    if a.dtype.kind not in "iu":
        return np.power(a.astype(np.float64), b.astype(np.float64))
    # Exponentiation by squaring in the storage type wraps like repeated mul.
    negative = b < 0
    if not negative.any():
        return np.power(a, b)
    r = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    # a**-n truncated toward zero: 1 for a == 1, +-1 for a == -1, 0 otherwise
    # (0**-n is a division by zero, which is 0 like integer div).
    odd = (b % 2) != 0
    recip = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, recip, r).astype(a.dtype)


_binary("add", np.add)
_binary("sub", np.subtract)
_binary("mul", np.multiply)
_binary("div", _div)
_binary("max", np.maximum)  # NaN in either input gives NaN
_binary("min", np.minimum)
_binary("pow", _pow)

# Comparisons: any dtype in, uint8 0/1 out. NaN compares false (notEqual: true).
_binary("equal", np.equal, output_dtype="uint8")
_binary("notEqual", np.not_equal, output_dtype="uint8")
_binary("greater", np.greater, output_dtype="uint8")
_binary("greaterOrEqual", np.greater_equal, output_dtype="uint8")
_binary("lesser", np.less, output_dtype="uint8")
_binary("lesserOrEqual", np.less_equal, output_dtype="uint8")

# Logical ops: uint8 in (non-zero is true), uint8 0/1 out.
_binary("logicalAnd", np.logical_and, dtypes=("uint8",), output_dtype="uint8")
_binary("logicalOr", np.logical_or, dtypes=("uint8",), output_dtype="uint8")
_binary("logicalXor", np.logical_xor, dtypes=("uint8",), output_dtype="uint8")


@register
class LogicalNot(Op):
    name = "logicalNot"
    params = ("a",)
    limits = {"a": ("uint8",), "output": ("uint8",)}

    def infer(self, a):
        return Inferred([a], [("uint8", a.shape)])

    def compute(self, attrs, a):
        return np.logical_not(a)


class FloatClass(Op):
    """isNaN / isInfinite (SPEC "element-wise logical"): float input, uint8 0/1 out."""

    params = ("a",)
    limits = {"a": FLOAT, "output": ("uint8",)}

    def infer(self, a):
        return Inferred([a], [("uint8", a.shape)])

    def compute(self, attrs, a):
        return self.fn(a)  # float16 classes exactly in its own type: every NaN payload is NaN


register(type("isNaN", (FloatClass,), {"name": "isNaN", "fn": staticmethod(np.isnan)}))
register(type("isInfinite", (FloatClass,), {"name": "isInfinite", "fn": staticmethod(np.isinf)}))
