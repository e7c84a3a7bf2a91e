"""Data types narrower than a WGSL scalar: stored packed, computed wide.

WGSL has 32-bit scalars only (f16 needs the adapter's shader-f16, which
SwiftShader lacks), so a tensor of these types lives in its buffer packed,
exactly as its bytes lie in memory (little-endian):

    float16       two halves per u32 word   computed as f32
    int8, uint8   four bytes per u32 word   computed as i32 / u32
    int4, uint4   eight nibbles per u32 word    computed as i32 / u32
    int64, uint64 two words per element     seen through 32 bits only where
                                            that is exact (int64_mode)

A kernel sees such an operand as a `Wide` view of the wide type: the planner
unpacks each packed input into a wide temporary before the node and packs
each wide output into its packed buffer after it (one thread per output
word, so no two threads write one word). Packing rounds to the narrow type
once per node, as the numpy kernels do: float16 to nearest-even (overflow
to ±inf, NaN kept) with bit arithmetic rather than pack2x16float (whose
result outside the finite f16 range WGSL leaves indeterminate), integers
to their low bits (the wrap of numpy's fixed-width arithmetic).
Constants are uploaded wide once (converted on the host).

A few kernels take packed operands themselves (`takes_packed`): the uint8
operands of the logical family (kernels/logical.py) and reshape, which
copies words whatever they hold."""
from __future__ import annotations

from .. import wgsl
from .common import Decline, Step
from .logical import COMPARE, LOGICAL

# Narrow data type -> the wide type its kernels compute in.
WIDE = {"float16": "float32", "int8": "int32", "uint8": "uint32", "int4": "int32", "uint4": "uint32",
        "int64": "int32", "uint64": "uint32"}
INT64 = ("int64", "uint64")
GATHERS = ("gather", "gatherElements", "gatherND", "scatterElements", "scatterND")


def int64_mode(node, op: str, position, operand):
    """How a kernel may see a 64-bit integer operand through a 32-bit view
    without changing any result, or Decline:
        "saturate"  clamped into the 32-bit range: exact where the op clamps
                    anyway (indices, sign)
        "extend"    an output widened back (sign- or zero-extended): exact
                    when the 32-bit result is (argMin/argMax indices, sign)
    cast, clamp, add/sub/mul/div/pow/max/min, the comparisons, where,
    reduceMax/reduceMin, cumulativeSum, argMin/argMax inputs and data movement
    take their 64-bit operands whole (kernels/int64.py, copy.py); other 64-bit
    ops (the float-only and 32-bit-only ones) never see int64."""
    if operand.dtype not in INT64:
        return None
    signed = operand.dtype == "int64"
    del signed
    if position == "out":
        if op in ("argMin", "argMax", "sign"):
            return "extend"
    elif (op in GATHERS and position == 1) or op == "sign":
        return "saturate"
    raise Decline(f"{op} on {operand.dtype} has no WGSL kernel (64-bit integers run on the GPU only as indices, "
                  "argMin/argMax results, sign, clamp, cast, add, sub, mul, div, pow, max, min, comparisons, where, "
                  "reduceMax/reduceMin, cumulativeSum, argMin/argMax and data movement)")

HELPERS = {
    "f16_to_f32_": """fn f16_to_f32_(h: u32) -> f32 {
  let sign = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0u) {  // zero or subnormal: m * 2^-24 (exact in f32)
    return bitcast<f32>(bitcast<u32>(f32(m) * 5.9604644775390625e-8) | sign);
  }
  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));
}""",
    "f32_to_f16_": """fn f32_to_f16_(v: f32) -> u32 {
  // Round to nearest even; overflow gives ±inf, NaN stays NaN, tiny values become subnormals or ±0.
  let b = bitcast<u32>(v);
  let sign = (b >> 16u) & 0x8000u;
  let e = i32((b >> 23u) & 0xffu);
  let m = b & 0x7fffffu;
  if (e == 255) { return sign | 0x7c00u | select(0u, 0x200u | (m >> 13u), m != 0u); }
  let he = e - 112;
  if (he >= 31) { return sign | 0x7c00u; }
  if (he <= 0) {
    if (he < -10) { return sign; }
    let full = m | 0x800000u;
    let shift = u32(14 - he);
    let r = full >> shift;
    let rem = full & ((1u << shift) - 1u);
    let half = 1u << (shift - 1u);
    return sign | (r + select(0u, 1u, rem > half || (rem == half && (r & 1u) == 1u)));
  }
  let r = (u32(he) << 10u) | (m >> 13u);
  let rem = m & 0x1fffu;
  return sign | (r + select(0u, 1u, rem > 0x1000u || (rem == 0x1000u && (r & 1u) == 1u)));
}""",
}


class Wide:
    """An operand as a kernel computing in its wide type sees it: same shape,
    the wide data type; `narrow` is the operand's own type (a kernel whose
    result depends on it, such as cast's saturation, reads it)."""

    __slots__ = ("source", "id", "dtype", "shape", "kind", "narrow", "mode")

    def __init__(self, source, mode=None):
        self.source = source
        self.id = ("wide", source.id)
        self.dtype = WIDE[source.dtype]
        self.shape = tuple(source.shape)
        self.kind = "constant" if source.kind == "constant" else "wide"
        self.narrow = source.dtype
        self.mode = mode  # 64-bit integers: int64_mode()


# Ops whose kernels take 64-bit operands whole (kernels/int64.py), besides cast and clamp;
# the data movement ops move them as vec2<u32> (kernels/copy.py), all but their indices.
INT64_WHOLE = frozenset({"add", "sub", "mul", "div", "pow", "max", "min", *COMPARE,
                         "reduceMax", "reduceMin", "cumulativeSum", "maxPool2d", "identity"})
# Ops that take a 64-bit input whole but give a 32-bit result (widened by the planner).
INT64_INPUT_WHOLE = frozenset({"argMin", "argMax"})
INT64_MOVED = frozenset({"transpose", "expand", "slice", "split", "concat", "pad", "tile", "reverse", "triangular"})
INT64_INDEXED = frozenset({"gather", "gatherElements", "gatherND", "scatterElements", "scatterND"})


def takes_packed(op: str, position, operand) -> bool:
    """Whether the kernel of `op` takes `operand` (input `position`, or "out")
    packed as it is stored."""
    if op == "reshape":
        return True
    if operand.dtype in INT64 and (op in ("cast", "clamp") or op in INT64_WHOLE or op in INT64_MOVED
                                   or (op in INT64_INDEXED and position != 1)
                                   or (op in INT64_INPUT_WHOLE and position == 0)
                                   or (op == "where" and position != 0)):
        return True  # kernels/int64.py, exact on both words
    if operand.dtype != "uint8":
        return False
    if op in LOGICAL or op == "logicalNot":
        return True
    if op in COMPARE or op in ("isNaN", "isInfinite"):
        return position == "out"
    if op == "where":
        return position == 0
    return False


def unpack(src, dst: Wide) -> Step:
    """Packed `src` -> wide `dst`, one thread per element."""
    n = wgsl.count(src.shape)
    d = wgsl.dispatch_1d(n)
    if src.dtype == "float16":
        body = "  y[i] = f16_to_f32_((x_[i >> 1u] >> ((i & 1u) * 16u)) & 0xffffu);"
    elif src.dtype == "int8":
        body = "  y[i] = bitcast<i32>(((x_[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu) << 24u) >> 24u;"
    elif src.dtype == "uint8":
        body = "  y[i] = (x_[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu;"
    elif src.dtype == "int4":
        body = "  y[i] = bitcast<i32>(((x_[i >> 3u] >> ((i & 7u) * 4u)) & 0xfu) << 28u) >> 28u;"
    elif src.dtype == "uint4":
        body = "  y[i] = (x_[i >> 3u] >> ((i & 7u) * 4u)) & 0xfu;"
    elif src.dtype == "int64":  # saturate: the value fits when the high word extends the low one's sign
        body = """  let lo = x_[2u * i];
  let hi = x_[2u * i + 1u];
  let fits = hi == select(0u, 0xffffffffu, (lo >> 31u) == 1u);
  y[i] = select(select(2147483647i, bitcast<i32>(0x80000000u), (hi >> 31u) == 1u), bitcast<i32>(lo), fits);"""
    else:
        body = "  y[i] = select(4294967295u, x_[2u * i], x_[2u * i + 1u] == 0u);"
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", wgsl.wgsl_type(dst.dtype), True)]),
                      wgsl.elementwise_main(n, body, d)])
    return Step(text, [src, dst], d)


def pack(src: Wide, dst) -> Step:
    """Wide `src` -> packed `dst`, one thread per u32 word of `dst` (per
    element of a 64-bit `dst`: its two words)."""
    n = wgsl.count(dst.shape)
    if dst.dtype in INT64:
        d = wgsl.dispatch_1d(n)
        high = "select(0u, 0xffffffffu, x_[i] < 0i)" if dst.dtype == "int64" else "0u"
        body = f"  y[2u * i] = {'bitcast<u32>(x_[i])' if dst.dtype == 'int64' else 'x_[i]'};\n  y[2u * i + 1u] = {high};"
        text = "\n".join([wgsl.header([("x_", wgsl.wgsl_type(src.dtype), False), ("y", "u32", True)]),
                          wgsl.elementwise_main(n, body, d)])
        return Step(text, [src, dst], d)
    per = {"float16": 2, "int4": 8, "uint4": 8}.get(dst.dtype, 4)
    words = -(-n // per)
    d = wgsl.dispatch_1d(words)
    if dst.dtype == "float16":
        part = "f32_to_f16_(x_[e])"
    elif dst.dtype == "int8":
        part = "(bitcast<u32>(x_[e]) & 0xffu)"
    elif dst.dtype == "int4":
        part = "(bitcast<u32>(x_[e]) & 0xfu)"
    elif dst.dtype == "uint4":
        part = "(x_[e] & 0xfu)"
    else:
        part = "(x_[e] & 0xffu)"
    width = 32 // per
    body = f"""  var word = 0u;
  for (var k = 0u; k < {per}u; k = k + 1u) {{
    let e = i * {per}u + k;
    if (e >= {n}u) {{ break; }}
    word = word | ({part} << (k * {width}u));
  }}
  y[i] = word;"""
    text = "\n".join([wgsl.header([("x_", wgsl.wgsl_type(src.dtype), False), ("y", "u32", True)]),
                      wgsl.elementwise_main(words, body, d)])
    return Step(text, [src, dst], d)
