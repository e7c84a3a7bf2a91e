"""quantizeLinear and dequantizeLinear: one thread per element; scale and
zeroPoint cover blocks of the input (per tensor, per axis or block-wise:
parameter coordinate = input coordinate / block size). int8/uint8 operands
arrive as wide i32/u32 views (kernels/packing.py), int4/uint4 too."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Decline, Step

RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15), "int32": (-2147483648, 2147483647)}


def _param_index(call: Call, coords, x, scale) -> str:
    block = call.attrs["block"]
    rank = len(x.shape)
    padded = (1,) * (rank - len(scale.shape)) + tuple(scale.shape)
    pst = wgsl.strides(padded)
    terms = [f"({c} / {b}u)" if b > 1 else c for c, b in zip(coords, block)]
    return wgsl.dot(terms, pst)


def _narrow(operand) -> str:
    return getattr(operand, "narrow", operand.dtype)


def quantize_linear(call: Call) -> list:
    x, scale, zero_point = call.inputs
    out, = call.outputs
    to = _narrow(out)
    if x.dtype != "float32" or to not in ("int8", "uint8", "int4", "uint4"):
        raise Decline(f"quantizeLinear to {to} has no WGSL kernel")
    ty = wgsl.wgsl_type(out.dtype)
    lo, hi = RANGES[to]
    n = wgsl.count(x.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", x.shape)
    p = _param_index(call, coords, x, scale)
    # round() is round-half-even in WGSL, as numpy's rint; NaN maps to the zero point.
    body = f"""{code}
  let p = {p};
  var q = round(x_[i] / s_[p]);
  if ({wgsl.is_nan('q')}) {{ q = 0.0; }}
  y[i] = {ty}(clamp(q + f32(z_[p]), {lo}.0, {hi}.0));"""
    text = "\n".join([wgsl.header([("x_", "f32", False), ("s_", "f32", False), ("z_", ty, False), ("y", ty, True)]),
                      wgsl.elementwise_main(n, body, d)])
    return [Step(text, [x, scale, zero_point, out], d)]


def dequantize_linear(call: Call) -> list:
    x, scale, zero_point = call.inputs
    out, = call.outputs
    if _narrow(x) not in RANGES or scale.dtype != "float32":
        raise Decline(f"dequantizeLinear of {_narrow(x)} has no WGSL kernel")
    ty = wgsl.wgsl_type(x.dtype)
    n = wgsl.count(x.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", x.shape)
    p = _param_index(call, coords, x, scale)
    # int8/uint8 differences are exact in i32; int32 ones are formed in f32.
    diff = "f32(x_[i]) - f32(z_[p])" if _narrow(x) == "int32" else "f32(i32(x_[i]) - i32(z_[p]))"
    body = f"""{code}
  let p = {p};
  y[i] = ({diff}) * s_[p];"""
    text = "\n".join([wgsl.header([("x_", ty, False), ("s_", "f32", False), ("z_", ty, False), ("y", "f32", True)]),
                      wgsl.elementwise_main(n, body, d)])
    return [Step(text, [x, scale, zero_point, out], d)]


KERNELS = {"quantizeLinear": quantize_linear, "dequantizeLinear": dequantize_linear}
