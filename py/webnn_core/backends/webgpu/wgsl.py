"""WGSL text helpers shared by the kernel templates: types, literals, the
binding header, one-thread-per-element entry points and index arithmetic.

Every shape and constant is baked into the shader text (no uniform buffers):
a shader is specific to one node's shapes, and the JS shim caches pipelines
by their text, so equal nodes share one pipeline.
"""
from __future__ import annotations

import math

import numpy as np

WORKGROUP = 64  # threads per workgroup of the 1-D kernels
MAX_GROUPS = 65535  # WebGPU's default maxComputeWorkgroupsPerDimension

# The data types the kernels take: all 4 bytes wide, so data movement copies u32 words.
TYPES = {"float32": "f32", "int32": "i32", "uint32": "u32"}


# Data types a plan may hold in its buffers: the 4-byte ones, and the others
# as their bytes lie (kernels/packing.py): float16, int8, uint8, int4, uint4
# packed into u32 words, int64/uint64 as two words.
ITEM_BITS = {"float32": 32, "int32": 32, "uint32": 32, "float16": 16, "int8": 8, "uint8": 8,
             "int64": 64, "uint64": 64, "int4": 4, "uint4": 4}
BUFFER_TYPES = tuple(ITEM_BITS)
OUTPUT_TYPES = BUFFER_TYPES


def buffer_bytes(dtype: str, shape) -> int:
    """A buffer's size: the tensor's bytes, rounded up to whole words (at least one)."""
    n = -(-count(shape) * ITEM_BITS[dtype] // 8)
    return max(4, -(-n // 4) * 4)


def wgsl_type(dtype: str) -> str:
    return TYPES[dtype]


# Infinities and NaN cannot be WGSL constants (a const-expression yielding one
# is a shader-creation error): every shader declares their bits as private
# variables, which makes these runtime values.
SPECIALS = ("var<private> POS_INF_: u32 = 0x7f800000u;\n"
            "var<private> NEG_INF_: u32 = 0xff800000u;\n"
            "var<private> NAN_: u32 = 0x7fc00000u;")
POS_INF = "bitcast<f32>(POS_INF_)"
NEG_INF = "bitcast<f32>(NEG_INF_)"
NAN = "bitcast<f32>(NAN_)"


def literal(value, dtype: str) -> str:
    """`value` as a WGSL literal of `dtype` (±inf and NaN as runtime values)."""
    if dtype == "float32":
        v = np.float32(value)
        if math.isnan(v):
            return NAN
        if math.isinf(v):
            return POS_INF if v > 0 else NEG_INF
        text = repr(float(v))
        return f"{text}f" if ("e" in text or "." in text) else f"{text}.0f"
    if dtype == "int32":
        v = int(value)
        return f"bitcast<i32>({v & 0xFFFFFFFF}u)" if v < 0 else f"{v}i"
    return f"{int(value) & 0xFFFFFFFF}u"


def lowest(dtype: str) -> str:
    """The identity of max(): -inf, INT_MIN or 0."""
    return {"float32": NEG_INF, "int32": "bitcast<i32>(0x80000000u)", "uint32": "0u"}[dtype]


def highest(dtype: str) -> str:
    return {"float32": POS_INF, "int32": "2147483647i", "uint32": "4294967295u"}[dtype]


def strides(shape) -> list:
    out, step = [], 1
    for d in reversed(tuple(shape)):
        out.append(step)
        step *= d
    return out[::-1]


def count(shape) -> int:
    return int(np.prod(shape, dtype=np.int64)) if len(shape) else 1


def dispatch_1d(n: int, per_group: int = WORKGROUP) -> list:
    """Workgroup counts covering n threads; past 65535 groups, a second dimension."""
    groups = max(1, -(-n // per_group))
    x = min(groups, MAX_GROUPS)
    return [x, -(-groups // x), 1]


def header(bindings) -> str:
    """`bindings`: (name, wgsl element type, writable) in binding order."""
    lines = [SPECIALS]
    for i, (name, ty, writable) in enumerate(bindings):
        access = "read_write" if writable else "read"
        lines.append(f"@group(0) @binding({i}) var<storage, {access}> {name}: array<{ty}>;")
    return "\n".join(lines)


def elementwise_main(n: int, body: str, dispatch: list) -> str:
    """The entry point of a one-thread-per-output-element kernel: `i` is the
    element's flat index, threads past `n` return."""
    row = dispatch[0] * WORKGROUP
    return (f"@compute @workgroup_size({WORKGROUP})\n"
            "fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n"
            f"  let i = gid.x + gid.y * {row}u;\n"
            f"  if (i >= {n}u) {{ return; }}\n"
            f"{body}\n"
            "}\n")


def unravel(index: str, shape, prefix: str = "c") -> tuple[str, list]:
    """Statements splitting flat `index` into the coordinates of `shape`
    (row-major): returns (code, coordinate expressions); size-1 dimensions
    give the literal 0u."""
    shape = list(shape)
    st = strides(shape)
    coords, lines = [], []
    lines.append(f"  var {prefix}_r = {index};")
    for d, (size, s) in enumerate(zip(shape, st)):
        if size == 1:
            coords.append("0u")
            continue
        name = f"{prefix}{d}"
        if s == 1:
            lines.append(f"  let {name} = {prefix}_r;")
        else:
            lines.append(f"  let {name} = {prefix}_r / {s}u; {prefix}_r = {prefix}_r % {s}u;")
        coords.append(name)
    return "\n".join(lines), coords


def dot(coords, coefs, base: int = 0) -> str:
    """sum(coord * coef) + base as a u32 expression (zero terms left out)."""
    terms = [f"{c} * {k}u" if k != 1 else c for c, k in zip(coords, coefs) if k != 0 and c != "0u"]
    if base:
        terms.append(f"{base}u")
    return " + ".join(terms) if terms else "0u"


def broadcast_strides(in_shape, out_shape) -> list:
    """Per output dimension, the input's stride (0 where the input broadcasts)."""
    in_shape = (1,) * (len(out_shape) - len(in_shape)) + tuple(in_shape)
    st = strides(in_shape)
    return [0 if size == 1 and out != 1 else s for size, out, s in zip(in_shape, out_shape, st)]


def is_nan(x: str) -> str:
    """NaN test on the bits: shader compilers may fold `x != x` away."""
    return f"((bitcast<u32>({x}) & 0x7fffffffu) > 0x7f800000u)"
