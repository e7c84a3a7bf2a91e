"""int64/uint64 operands, exactly, on their two words (low word first): cast,
clamp, add/sub/mul/div/pow/max/min (with broadcasting), the comparisons, where,
reduceMax/reduceMin, argMin/argMax and cumulativeSum -- the cases a 32-bit view
would get wrong (packing.py int64_mode). div truncates toward zero with x/0 = 0
(-2^63 / -1 wraps to -2^63) by 64-step long division; pow squares and multiplies
(wrapping), a negative exponent gives the truncated real result (1 for 1, +-1
for -1, else 0), as ops/elementwise.py. Floats convert
with one rounding (to nearest even) in either direction; integers extend by
the source's signedness and wrap to the low bits, as numpy's astype; add, sub
and mul wrap to 64 bits as numpy's int64/uint64 arithmetic does (mul: the low
64 bits of the product, the same for both signednesses)."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Decline, Step

INT64 = ("int64", "uint64")

# Two-word arithmetic: a value is vec2<u32>(low word, high word).
ARITHMETIC = {"add": "add64_(a, b)", "sub": "sub64_(a, b)", "mul": "mul64_(a, b)",
              "div": "div64_(a, b, SIGNED)", "pow": "pow64_(a, b, SIGNED)",
              "max": "select(a, b, lt64_(a, b, SIGNED))", "min": "select(a, b, lt64_(b, a, SIGNED))"}
COMPARE = {"equal": "all(a == b)", "notEqual": "any(a != b)", "greater": "lt64_(b, a, SIGNED)",
           "greaterOrEqual": "!lt64_(a, b, SIGNED)", "lesser": "lt64_(a, b, SIGNED)",
           "lesserOrEqual": "!lt64_(b, a, SIGNED)"}

HELPERS = {
    "add64_": """fn add64_(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  let lo = a.x + b.x;
  return vec2<u32>(lo, a.y + b.y + select(0u, 1u, lo < a.x));
}""",
    "sub64_": """fn sub64_(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  return vec2<u32>(a.x - b.x, a.y - b.y - select(0u, 1u, a.x < b.x));
}""",
    "mulhi32_": """fn mulhi32_(a: u32, b: u32) -> u32 {
  // The high word of the 64-bit product a * b, from 16-bit halves.
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = ((a0 * b0) >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  return a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
}""",
    "mul64_": """fn mul64_(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
  // The low 64 bits of the product (wrapping): the high words only reach the high word.
  return vec2<u32>(a.x * b.x, mulhi32_(a.x, b.x) + a.x * b.y + a.y * b.x);
}""",
    "neg64_": """fn neg64_(a: vec2<u32>) -> vec2<u32> {
  return sub64_(vec2<u32>(0u, 0u), a);
}""",
    "divu64_": """fn divu64_(n: vec2<u32>, d: vec2<u32>) -> vec2<u32> {
  // Restoring long division, one quotient bit per step (d != 0); `top` is the bit shifted out of r.
  var q = vec2<u32>(0u, 0u);
  var r = vec2<u32>(0u, 0u);
  for (var k = 63u; k < 64u; k = k - 1u) {
    let top = r.y >> 31u;
    let word = select(n.x, n.y, k >= 32u);
    r = vec2<u32>((r.x << 1u) | ((word >> (k & 31u)) & 1u), (r.y << 1u) | (r.x >> 31u));
    if (top == 1u || !lt64_(r, d, false)) {
      r = sub64_(r, d);
      if (k >= 32u) { q.y = q.y | (1u << (k & 31u)); } else { q.x = q.x | (1u << k); }
    }
  }
  return q;
}""",
    "div64_": """fn div64_(a: vec2<u32>, b: vec2<u32>, signed: bool) -> vec2<u32> {
  // Truncated toward zero; x / 0 is 0; signed magnitudes as unsigned (|-2^63| = 2^63 fits).
  if (all(b == vec2<u32>(0u, 0u))) { return vec2<u32>(0u, 0u); }
  if (!signed) { return divu64_(a, b); }
  let na = (a.y >> 31u) == 1u;
  let nb = (b.y >> 31u) == 1u;
  let q = divu64_(select(a, neg64_(a), na), select(b, neg64_(b), nb));
  return select(q, neg64_(q), na != nb);
}""",
    "pow64_": """fn pow64_(a: vec2<u32>, b: vec2<u32>, signed: bool) -> vec2<u32> {
  if (signed && (b.y >> 31u) == 1u) {  // a^-n truncated: 1 for 1, +-1 for -1, 0 otherwise (0^-n too)
    if (all(a == vec2<u32>(1u, 0u))) { return a; }
    if (all(a == vec2<u32>(0xffffffffu, 0xffffffffu))) {
      return select(vec2<u32>(1u, 0u), a, (b.x & 1u) == 1u);
    }
    return vec2<u32>(0u, 0u);
  }
  // Square and multiply, wrapping: equal to the repeated product modulo 2^64.
  var r = vec2<u32>(1u, 0u);
  var p = a;
  var e = b;
  loop {
    if (all(e == vec2<u32>(0u, 0u))) { break; }
    if ((e.x & 1u) == 1u) { r = mul64_(r, p); }
    p = mul64_(p, p);
    e = vec2<u32>((e.x >> 1u) | (e.y << 31u), e.y >> 1u);
  }
  return r;
}""",
    "lt64_": """fn lt64_(a: vec2<u32>, b: vec2<u32>, signed: bool) -> bool {
  if (a.y != b.y) {
    if (signed) { return bitcast<i32>(a.y) < bitcast<i32>(b.y); }
    return a.y < b.y;
  }
  return a.x < b.x;
}""",
    "u64_to_float_": """fn u64_to_float_(lo: u32, hi: u32, p: u32) -> f32 {
  // The magnitude hi:lo rounded to p significant bits (24: f32, 11: f16), nearest even.
  var n = 0u;
  if (hi != 0u) { n = 64u - countLeadingZeros(hi); } else { n = 32u - countLeadingZeros(lo); }
  if (n <= p) { return f32(hi) * 4294967296.0 + f32(lo); }
  let s = n - p;
  var m = 0u;
  if (s >= 32u) { m = hi >> (s - 32u); } else { m = (lo >> s) | (hi << (32u - s)); }
  let k = s - 1u;  // the first dropped bit
  var half = false;
  var sticky = false;
  if (k >= 32u) {
    half = ((hi >> (k - 32u)) & 1u) == 1u;
    sticky = lo != 0u || (hi & ((1u << (k - 32u)) - 1u)) != 0u;
  } else {
    half = ((lo >> k) & 1u) == 1u;
    sticky = (lo & ((1u << k) - 1u)) != 0u;
  }
  if (half && (sticky || (m & 1u) == 1u)) { m = m + 1u; }
  return ldexp(f32(m), i32(s));
}""",
    "i64_to_float_": """fn i64_to_float_(lo: u32, hi: u32, p: u32) -> f32 {
  if ((hi >> 31u) == 0u) { return u64_to_float_(lo, hi, p); }
  let l = ~lo + 1u;
  let h = ~hi + select(0u, 1u, l == 0u);
  return -u64_to_float_(l, h, p);
}""",
    "float_to_64_": """fn float_to_64_(v: f32, signed: bool) -> vec2<u32> {
  // Truncate toward zero, NaN -> 0, saturate to the 64-bit range: [low word, high word].
  if ((bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u) { return vec2<u32>(0u, 0u); }
  let t = trunc(v);
  if (signed) {
    if (t >= 9223372036854775808.0) { return vec2<u32>(0xffffffffu, 0x7fffffffu); }
    if (t <= -9223372036854775808.0) { return vec2<u32>(0u, 0x80000000u); }
  } else {
    if (t <= 0.0) { return vec2<u32>(0u, 0u); }
    if (t >= 18446744073709551616.0) { return vec2<u32>(0xffffffffu, 0xffffffffu); }
  }
  let a = abs(t);
  let hf = floor(a / 4294967296.0);
  var h = u32(hf);
  var l = u32(a - hf * 4294967296.0);  // exact: a multiple of a's ulp below 2^32
  if (t < 0.0) {
    l = ~l + 1u;
    h = ~h + select(0u, 1u, l == 0u);
  }
  return vec2<u32>(l, h);
}""",
}


def _narrow(operand) -> str:
    return getattr(operand, "narrow", operand.dtype)


def cast64(call: Call) -> list:
    x, = call.inputs
    out, = call.outputs
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    signed_in = _narrow(x) in ("int64", "int32", "int8", "int4")
    if x.dtype in INT64:
        read = "  let lo = x_[2u * i];\n  let hi = x_[2u * i + 1u];"
        if out.dtype in INT64:
            body = f"{read}\n  y[2u * i] = lo;\n  y[2u * i + 1u] = hi;"  # same bits, as astype wraps
            ty = "u32"
        elif out.dtype == "float32":
            p = 11 if _narrow(out) == "float16" else 24
            fn = "i64_to_float_" if x.dtype == "int64" else "u64_to_float_"
            body = f"{read}\n  y[i] = {fn}(lo, hi, {p}u);"
            ty = "f32"
        else:  # to 32 bits or fewer: the low word (a packed int8/uint8 keeps its low byte)
            ty = wgsl.wgsl_type(out.dtype)
            body = f"{read}\n  y[i] = {'bitcast<i32>(lo)' if ty == 'i32' else 'lo'};"
        text = "\n".join([wgsl.header([("x_", "u32", False), ("y", ty, True)]), wgsl.elementwise_main(n, body, d)])
        return [Step(text, [x, out], d)]
    if out.dtype not in INT64 or x.dtype not in wgsl.TYPES:
        raise Decline(f"cast from {x.dtype} to {out.dtype} has no WGSL kernel")
    src = wgsl.wgsl_type(x.dtype)
    if src == "f32":
        body = f"  let w = float_to_64_(x_[i], {'true' if out.dtype == 'int64' else 'false'});"
    elif signed_in:  # sign-extend
        body = "  let w = vec2<u32>(bitcast<u32>(x_[i]), select(0u, 0xffffffffu, x_[i] < 0i));"
    else:
        body = "  let w = vec2<u32>(x_[i], 0u);"
    body += "\n  y[2u * i] = w.x;\n  y[2u * i + 1u] = w.y;"
    text = "\n".join([wgsl.header([("x_", src, False), ("y", "u32", True)]), wgsl.elementwise_main(n, body, d)])
    return [Step(text, [x, out], d)]


def clamp64(call: Call) -> list:
    """Two-word comparisons against the bounds (signed high words for int64)."""
    x, = call.inputs
    out, = call.outputs
    signed = x.dtype == "int64"
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    hi_t = "bitcast<i32>" if signed else ""
    lines = ["  var lo = x_[2u * i];", "  var hi = x_[2u * i + 1u];"]
    for key, op in (("min", "<"), ("max", ">")):
        bound = call.attrs.get(key)
        if bound is None:
            continue
        bits = int(bound) & 0xFFFFFFFFFFFFFFFF
        blo, bhi = bits & 0xFFFFFFFF, bits >> 32
        lines.append(f"  if ({hi_t}(hi) {op} {hi_t}({bhi}u) || (hi == {bhi}u && lo {op} {blo}u)) "
                     f"{{ lo = {blo}u; hi = {bhi}u; }}")
    lines += ["  y[2u * i] = lo;", "  y[2u * i + 1u] = hi;"]
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "u32", True)]),
                      wgsl.elementwise_main(n, "\n".join(lines), d)])
    return [Step(text, [x, out], d)]


def load64(array: str, index: str) -> str:
    """Element `index` of a 64-bit tensor bound as array<u32>, as vec2<u32>(low, high)."""
    return f"vec2<u32>({array}[2u * ({index})], {array}[2u * ({index}) + 1u])"


def binary64(call: Call, index) -> list:
    """add/sub/mul/max/min with broadcasting; `index(operand, coords)` the element index of an input."""
    a, b = call.inputs
    out, = call.outputs
    if call.op not in ARITHMETIC:
        raise Decline(f"{call.op} on {a.dtype} has no WGSL kernel (64-bit integers: add, sub, mul, div, pow, max, min)")
    expr = ARITHMETIC[call.op].replace("SIGNED", "true" if a.dtype == "int64" else "false")
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", out.shape)
    body = "\n".join([code, f"  let a = {load64('a_', index(a, coords))};", f"  let b = {load64('b_', index(b, coords))};",
                      f"  let r = {expr};", "  y[2u * i] = r.x;", "  y[2u * i + 1u] = r.y;"])
    text = "\n".join([wgsl.header([("a_", "u32", False), ("b_", "u32", False), ("y", "u32", True)]),
                      wgsl.elementwise_main(n, body, d)])
    return [Step(text, [a, b, out], d)]


def _line(x, axis: int):
    """(lines, size, the first element of line i, the stride along the axis) for a per-line loop."""
    size = x.shape[axis]
    inner = wgsl.count(x.shape[axis + 1:])
    return (wgsl.count(x.shape) // max(1, size), size,
            f"(i / {inner}u) * {size * inner}u + i % {inner}u", inner)


def arg64(call: Call) -> list:
    """argMin/argMax of a 64-bit input: two-word compares, the first extreme wins; the
    int32 index result is widened by the planner for an int64 outputDataType."""
    x, = call.inputs
    out, = call.outputs
    if out.dtype != "int32":
        raise Decline(f"{call.op} of {x.dtype} to {out.dtype} has no WGSL kernel")
    _, size, base, inner = _line(x, call.attrs["axis"])
    signed = "true" if x.dtype == "int64" else "false"
    better = f"lt64_(best, v, {signed})" if call.op == "argMax" else f"lt64_(v, best, {signed})"
    total = wgsl.count(out.shape)
    dsp = wgsl.dispatch_1d(total)
    body = f"""  let base = {base};
  var best = {load64('x_', 'base')};
  var at = 0i;
  for (var k = 1u; k < {size}u; k = k + 1u) {{
    let v = {load64('x_', f'base + k * {inner}u')};
    if ({better}) {{ best = v; at = i32(k); }}
  }}
  y[i] = at;"""
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "i32", True)]), wgsl.elementwise_main(total, body, dsp)])
    return [Step(text, [x, out], dsp)]


def reduce64(call: Call) -> list:
    """reduceMax/reduceMin of a 64-bit input over any axes: two-word compares."""
    x, = call.inputs
    out, = call.outputs
    if call.op not in ("reduceMax", "reduceMin"):
        raise Decline(f"{call.op} on {x.dtype} has no WGSL kernel")
    axes = set(call.attrs["axes"])
    st = wgsl.strides(x.shape)
    kept = [d for d in range(len(x.shape)) if d not in axes]
    reduced = [d for d in range(len(x.shape)) if d in axes]
    code, coords = wgsl.unravel("i", [x.shape[d] for d in kept], "o")
    red_shape = [x.shape[d] for d in reduced]
    rcode, rcoords = wgsl.unravel("r", red_shape, "q")
    offset = wgsl.dot(rcoords, [st[d] for d in reduced])
    signed = "true" if x.dtype == "int64" else "false"
    better = f"lt64_(acc, v, {signed})" if call.op == "reduceMax" else f"lt64_(v, acc, {signed})"
    total = wgsl.count(out.shape)
    dsp = wgsl.dispatch_1d(total)
    body = f"""{code}
  let base = {wgsl.dot(coords, [st[d] for d in kept])};
  var acc = {load64('x_', 'base')};
  for (var r = 1u; r < {wgsl.count(red_shape)}u; r = r + 1u) {{
{rcode}
    let v = {load64('x_', f'base + {offset}')};
    if ({better}) {{ acc = v; }}
  }}
  y[2u * i] = acc.x;
  y[2u * i + 1u] = acc.y;"""
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "u32", True)]), wgsl.elementwise_main(total, body, dsp)])
    return [Step(text, [x, out], dsp)]


def cumsum64(call: Call) -> list:
    """cumulativeSum of a 64-bit input: one thread per line, two-word adds (wrapping)."""
    x, = call.inputs
    out, = call.outputs
    lines, size, base, inner = _line(x, call.attrs["axis"])
    order = f"{size - 1}u - k" if call.attrs["reversed"] else "k"
    store = "    y[2u * at] = acc.x;\n    y[2u * at + 1u] = acc.y;"
    add = f"    acc = add64_(acc, {load64('x_', 'at')});"
    step = f"{store}\n{add}" if call.attrs["exclusive"] else f"{add}\n{store}"
    dsp = wgsl.dispatch_1d(lines)
    body = f"""  let base = {base};
  var acc = vec2<u32>(0u, 0u);
  for (var k = 0u; k < {size}u; k = k + 1u) {{
    let at = base + ({order}) * {inner}u;
{step}
  }}"""
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "u32", True)]), wgsl.elementwise_main(lines, body, dsp)])
    return [Step(text, [x, out], dsp)]


def identity64(call: Call) -> list:
    """identity of a 64-bit input: both words copied."""
    x, = call.inputs
    out, = call.outputs
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    body = "  y[2u * i] = x_[2u * i];\n  y[2u * i + 1u] = x_[2u * i + 1u];"
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "u32", True)]), wgsl.elementwise_main(n, body, d)])
    return [Step(text, [x, out], d)]
