"""cast (SPEC §7.9.5). quantizeLinear/dequantizeLinear join this family."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..registry import Inferred, Op, check, register
from ._common import ALL_TYPES


def cast_array(x: np.ndarray, to: str) -> np.ndarray:
    """WebNN cast: float->int truncates toward zero (NaN -> 0, out-of-range
    saturates); int->int wraps to the low bits; ->float rounds to nearest."""
    target = dtypes.numpy_dtype(to)
    if to in dtypes.FLOAT:
        return x.astype(target)
    if x.dtype.kind == "f":
        lo, hi = dtypes.INT_RANGE[to]
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
        t = np.clip(t, float(lo), float(hi))
        # float64 cannot hold 2^63-1 / 2^64-1 exactly; clip again as integers.
        wide = np.uint64 if to == "uint64" else np.int64
        with np.errstate(invalid="ignore"):
            r = np.where(t >= float(hi), hi, np.where(t <= float(lo), lo, t.astype(wide)))
        return r.astype(target)
    # integer -> integer: two's complement wrap (numpy astype wraps).
    r = x.astype(np.int64 if x.dtype != np.uint64 else np.uint64)
    if to in dtypes.FOUR_BIT:
        return dtypes.wrap_integer(r, to)
    return r.astype(target)


@register
class Cast(Op):
    name = "cast"
    params = ("input", "type")
    limits = {"input": ALL_TYPES, "output": ALL_TYPES}

    def infer(self, input, type):
        check(type in ALL_TYPES, f"unknown data type {type!r}")
        return Inferred([input], [(type, input.shape)], {"to": type})

    def compute(self, attrs, x):
        return cast_array(x, attrs["to"])
