"""cast (SPEC §7.9.5), quantizeLinear and dequantizeLinear (digest §2.2)."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..registry import Inferred, Op, check, register
from ._common import ALL_TYPES, FLOAT


def cast_array(x: np.ndarray, to: str) -> np.ndarray:
    """WebNN cast: float->int truncates toward zero (NaN -> 0, out-of-range
    saturates); int->int wraps to the low bits; ->float rounds to nearest."""
    target = dtypes.numpy_dtype(to)
    if to in dtypes.FLOAT:
        with np.errstate(over="ignore"):
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


QUANTIZED = ("int8", "uint8", "int4", "uint4")


def check_quantization_params(input, scale, zeroPoint) -> tuple:
    """scale and zeroPoint share a shape that, left-padded with 1s to the input
    rank, divides the input shape: each element covers one block (a size-1
    dimension covers the whole axis, so per-tensor, per-axis and block-wise
    quantization are all this one rule). Returns the block shape."""
    check(scale.shape == zeroPoint.shape,
          f"scale shape {list(scale.shape)} and zeroPoint shape {list(zeroPoint.shape)} must be equal")
    rank = len(input.shape)
    check(len(scale.shape) <= rank, f"scale rank {len(scale.shape)} exceeds the input rank {rank}")
    padded = (1,) * (rank - len(scale.shape)) + tuple(scale.shape)
    check(all(i % s == 0 for i, s in zip(input.shape, padded)),
          f"scale shape {list(scale.shape)} does not evenly divide input shape {list(input.shape)}")
    return tuple(i // s for i, s in zip(input.shape, padded))


def expand_blocks(param: np.ndarray, shape, block) -> np.ndarray:
    """Repeat every parameter element over its block of the input shape."""
    p = param.reshape((1,) * (len(shape) - param.ndim) + param.shape)
    for axis, size in enumerate(block):
        if size > 1:
            p = np.repeat(p, size, axis=axis)
    return p


@register
class QuantizeLinear(Op):
    """y = clamp(roundHalfEven(x / scale) + zeroPoint) to the zeroPoint type."""

    name = "quantizeLinear"
    params = ("input", "scale", "zeroPoint")
    limits = {"input": FLOAT, "scale": FLOAT, "zeroPoint": QUANTIZED, "output": QUANTIZED}

    def infer(self, input, scale, zeroPoint):
        check(scale.dtype == input.dtype, f"scale ({scale.dtype}) must have the input's data type ({input.dtype})")
        block = check_quantization_params(input, scale, zeroPoint)
        return Inferred([input, scale, zeroPoint], [(zeroPoint.dtype, input.shape)],
                        {"block": block, "to": zeroPoint.dtype})

    def compute(self, attrs, x, scale, zero_point):
        # The division is done in float32 (float16 widened), as backends do.
        scale = expand_blocks(scale.astype(np.float32), x.shape, attrs["block"])
        zero_point = expand_blocks(zero_point.astype(np.float64), x.shape, attrs["block"])
        with np.errstate(all="ignore"):
            q = np.rint(x.astype(np.float32) / scale).astype(np.float64)
        q = np.nan_to_num(q, nan=0.0) + zero_point  # NaN maps to the zero point
        lo, hi = dtypes.INT_RANGE[attrs["to"]]
        return np.clip(q, lo, hi).astype(dtypes.numpy_dtype(attrs["to"]))


@register
class DequantizeLinear(Op):
    """y = (x - zeroPoint) * scale, in the scale's type."""

    name = "dequantizeLinear"
    params = ("input", "scale", "zeroPoint")
    limits = {"input": QUANTIZED + ("int32",), "scale": FLOAT,
              "zeroPoint": QUANTIZED + ("int32",), "output": FLOAT}

    def infer(self, input, scale, zeroPoint):
        check(zeroPoint.dtype == input.dtype,
              f"zeroPoint ({zeroPoint.dtype}) must have the input's data type ({input.dtype})")
        block = check_quantization_params(input, scale, zeroPoint)
        return Inferred([input, scale, zeroPoint], [(scale.dtype, input.shape)], {"block": block})

    def compute(self, attrs, x, scale, zero_point):
        # (x - zp) is an exact integer below 2^33; the float64 product rounds once on output.
        scale = expand_blocks(scale.astype(np.float64), x.shape, attrs["block"])
        zero_point = expand_blocks(zero_point.astype(np.int64), x.shape, attrs["block"])
        return (x.astype(np.int64) - zero_point).astype(np.float64) * scale
