"""Element-wise kernels: unary ops and activations (also as the fused
epilogue of conv2d/matmul/gemm), binary ops with bidirectional broadcasting,
prelu, clamp and cast. One thread per output element.

Numerics follow the op's numpy kernel (py/webnn_core/ops/): NaN passes
through relu/clamp/max/min, integer ops wrap, integer x/0 is 0. Floats are
computed in f32 (the numpy kernels round float64 results once), so
transcendental results may differ by a few ulp.
"""
from __future__ import annotations

from .. import wgsl
from . import int64
from .common import Call, Decline, Step
from .packing import HELPERS as PACKING_HELPERS

# Helper functions a shader may call; `with_helpers` adds those it names.
HELPERS = {
    "erf_": """fn erf_(x: f32) -> f32 {
  // Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
  let a = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * a);
  let y = 1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * exp(-a * a);
  return select(y, -y, x < 0.0);
}""",
    "tanh_": """fn tanh_(x: f32) -> f32 {
  // exp of -2|x| never overflows, so large |x| gives ±1, not NaN.
  let e = exp(-2.0 * abs(x));
  let y = (1.0 - e) / (1.0 + e);
  return select(y, -y, x < 0.0);
}""",
    "fmax_": """fn fmax_(a: f32, b: f32) -> f32 {
  // NaN in either input gives NaN (numpy maximum).
  if ((bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u) { return a; }
  if ((bitcast<u32>(b) & 0x7fffffffu) > 0x7f800000u) { return b; }
  return max(a, b);
}""",
    "fmin_": """fn fmin_(a: f32, b: f32) -> f32 {
  if ((bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u) { return a; }
  if ((bitcast<u32>(b) & 0x7fffffffu) > 0x7f800000u) { return b; }
  return min(a, b);
}""",
    "pow_": """fn pow_(a: f32, b: f32) -> f32 {
  // WGSL pow is undefined for a < 0: sign from an integral exponent, NaN otherwise.
  if (b == 0.0) { return 1.0; }
  let r = pow(abs(a), b);
  if (a >= 0.0) { return r; }
  if (floor(b) != b) { return bitcast<f32>(NAN_); }
  return select(r, -r, abs(b % 2.0) == 1.0);
}""",
    "tan_": """fn tan_(x: f32) -> f32 {
  // WGSL's tan may be as loose as sin/cos (2^-11 absolute): near the poles that is far
  // off. Reduce by multiples of pi/2 in three parts (Cody-Waite, Cephes' constants),
  // then Cephes' tanf polynomial on [-pi/4, pi/4]; odd multiples give -1/tan.
  let k = round(x * 0.6366197723675814);
  let y = ((x - k * 1.5703125) - k * 4.837512969970703125e-4) - k * 7.54978995489188216e-8;
  let z = y * y;
  let t = (((((9.38540185543e-3 * z + 3.11992232697e-3) * z + 2.44301354525e-2) * z + 5.34112807005e-2) * z
           + 1.33387994085e-1) * z + 3.33331568548e-1) * z * y + y;
  return select(t, -1.0 / t, (i32(k) & 1) != 0);
}""",
    "powi32_": """fn powi32_(a: i32, b: i32) -> i32 {
  // a^-n truncated toward zero: 1 for 1, +-1 for -1, 0 otherwise (0^-n too, like x/0).
  if (b < 0i) {
    if (a == 1i) { return 1i; }
    if (a == -1i) { return select(1i, -1i, (b & 1i) != 0i); }
    return 0i;
  }
  return bitcast<i32>(powu32_(bitcast<u32>(a), u32(b)));
}""",
    "powu32_": """fn powu32_(a: u32, b: u32) -> u32 {
  // Square and multiply, wrapping: the repeated product modulo 2^32 (also for i32 bits).
  var r = 1u;
  var p = a;
  var e = b;
  loop {
    if (e == 0u) { break; }
    if ((e & 1u) == 1u) { r = r * p; }
    p = p * p;
    e = e >> 1u;
  }
  return r;
}""",
    "sign_": """fn sign_(x: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) { return x; }
  return sign(x);
}""",
    **PACKING_HELPERS,
    **int64.HELPERS,
}

# Float unary ops: a WGSL expression of `x`.
FLOAT_UNARY = {
    "abs": "abs(x)", "neg": "-x", "ceil": "ceil(x)", "floor": "floor(x)", "roundEven": "round(x)",
    "exp": "exp(x)", "log": "log(x)", "sqrt": "sqrt(x)", "sin": "sin(x)", "cos": "cos(x)", "tan": "tan_(x)",
    "reciprocal": "1.0 / x", "sign": "sign_(x)", "identity": "x", "erf": "erf_(x)",
    "relu": "select(x, 0.0, x < 0.0)", "sigmoid": "1.0 / (1.0 + exp(-x))", "tanh": "tanh_(x)",
    "gelu": "0.5 * x * (1.0 + erf_(x * 0.70710678118654752))",
    "hardSwish": "x * clamp(x + 3.0, 0.0, 6.0) / 6.0",
    "softplus": "max(x, 0.0) + log(1.0 + exp(-abs(x)))",
    "softsign": "x / (1.0 + abs(x))",
}
# Integer unary ops (int32; uint32 where the op allows it).
INT_UNARY = {"abs": "abs(x)", "neg": "-x", "identity": "x", "relu": "max(x, ZERO)", "sign": "sign(x)"}
# Ops with alpha/beta options: (attrs, literal) -> expression.
FLOAT_PARAM = {
    "leakyRelu": lambda a, f: f"select({f(a['alpha'])} * x, x, x >= 0.0)",
    "elu": lambda a, f: f"select({f(a['alpha'])} * (exp(x) - 1.0), x, x > 0.0)",
    "hardSigmoid": lambda a, f: f"clamp({f(a['alpha'])} * x + {f(a['beta'])}, 0.0, 1.0)",
    "linear": lambda a, f: f"{f(a['alpha'])} * x + {f(a['beta'])}",
}

UNARY_OPS = sorted(set(FLOAT_UNARY) | set(FLOAT_PARAM) | {"clamp"})


def unary_expr(op: str, attrs: dict, dtype: str) -> str:
    """The expression of `x` computing `op`, or Decline."""
    if op == "clamp":
        y = "x"
        if attrs.get("min") is not None:
            lo = wgsl.literal(attrs["min"], dtype)
            y = f"select({y}, {lo}, {y} < {lo})"
        if attrs.get("max") is not None:
            hi = wgsl.literal(attrs["max"], dtype)
            y = f"select({y}, {hi}, {y} > {hi})"
        return y
    if dtype == "float32":
        if op in FLOAT_UNARY:
            return FLOAT_UNARY[op]
        if op in FLOAT_PARAM:
            return FLOAT_PARAM[op](attrs, lambda v: wgsl.literal(v, dtype))
    elif op in INT_UNARY and not (dtype == "uint32" and op in ("abs", "neg", "sign")):
        return INT_UNARY[op].replace("ZERO", wgsl.literal(0, dtype))
    raise Decline(f"{op} on {dtype} has no WGSL kernel")


def with_helpers(text: str) -> str:
    """A shader's text with the helper functions it calls (and those they
    call), each defined once (the planner applies this to every shader)."""
    while True:
        needed = [body for name, body in HELPERS.items() if f"{name}(" in text and f"fn {name}(" not in text]
        if not needed:
            return text
        text = "\n".join([*needed, text])


def activation_fn(call: Call, dtype: str) -> str:
    """WGSL functions ending in `act_`, applying the element-wise ops the
    planner fused onto `call`'s output in order (identity if none)."""
    ty = wgsl.wgsl_type(dtype)
    fns, names = [], []
    for k, (op, attrs) in enumerate(call.activation):
        expr = unary_expr(op, attrs, dtype)
        fns.append(f"fn act{k}_(x: {ty}) -> {ty} {{ return {expr}; }}")
        names.append(f"act{k}_")
    value = "x"
    for name in names:
        value = f"{name}({value})"
    fns.append(f"fn act_(x: {ty}) -> {ty} {{ return {value}; }}")
    return "\n".join(fns)


def unary(call: Call) -> list:
    x, = call.inputs
    out, = call.outputs
    dtype = x.dtype
    if call.op == "clamp" and dtype in int64.INT64 and not call.activation:
        return int64.clamp64(call)
    if call.op == "identity" and dtype in int64.INT64 and not call.activation:
        return int64.identity64(call)
    if dtype not in wgsl.TYPES:
        raise Decline(f"{call.op} on {dtype} has no WGSL kernel")
    expr = unary_expr(call.op, call.attrs, dtype)
    ty = wgsl.wgsl_type(dtype)
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    fn = f"fn op_(x: {ty}) -> {ty} {{ return {expr}; }}"
    text = "\n".join([wgsl.header([("x", ty, False), ("y", ty, True)]), fn,
                      activation_fn(call, dtype), wgsl.elementwise_main(n, "  y[i] = act_(op_(x[i]));", d)])
    return [Step(text, [x, out], d)]


FLOAT_BINARY = {"add": "a + b", "sub": "a - b", "mul": "a * b", "div": "a / b", "max": "fmax_(a, b)",
                "min": "fmin_(a, b)", "pow": "pow_(a, b)"}
INT_BINARY = {"add": "a + b", "sub": "a - b", "mul": "a * b", "div": "select(a / b, ZERO, b == ZERO)",
              "max": "max(a, b)", "min": "min(a, b)", "pow": "POW(a, b)"}
BINARY_OPS = sorted(FLOAT_BINARY)


def _broadcast_index(name: str, in_shape, out_shape, coords) -> str:
    st = wgsl.broadcast_strides(in_shape, out_shape)
    if list(in_shape) == list(out_shape):
        return "i"
    return wgsl.dot(coords, st)


def binary(call: Call) -> list:
    a, b = call.inputs
    out, = call.outputs
    dtype = a.dtype
    if dtype in int64.INT64 and call.op != "prelu":
        return int64.binary64(call, lambda o, coords: _broadcast_index("", o.shape, out.shape, coords))
    if call.op == "prelu":
        table = {"float32": {"prelu": "select(a * b, a, a >= 0.0)"},
                 "int32": {"prelu": "select(a * b, a, a >= 0i)"}}.get(dtype, {})
    else:
        table = FLOAT_BINARY if dtype == "float32" else INT_BINARY
        table = {k: v.replace("ZERO", wgsl.literal(0, dtype)).replace("POW", "powi32_" if dtype == "int32" else "powu32_")
                 for k, v in table.items()} if dtype in wgsl.TYPES else {}
    if call.op not in table:
        raise Decline(f"{call.op} on {dtype} has no WGSL kernel")
    expr = table[call.op]
    ty = wgsl.wgsl_type(dtype)
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", out.shape)
    ia = _broadcast_index("a", a.shape, out.shape, coords)
    ib = _broadcast_index("b", b.shape, out.shape, coords)
    body = "\n".join([code if (ia != "i" or ib != "i") else "",
                      f"  let a = a_[{ia}];", f"  let b = b_[{ib}];", f"  y[i] = act_({expr});"])
    text = "\n".join([wgsl.header([("a_", ty, False), ("b_", ty, False), ("y", ty, True)]),
                      activation_fn(call, dtype), wgsl.elementwise_main(n, body, d)])
    return [Step(text, [a, b, out], d)]


def cast(call: Call) -> list:
    x, = call.inputs
    out, = call.outputs
    if x.dtype in int64.INT64 or out.dtype in int64.INT64:
        return int64.cast64(call)
    if x.dtype not in wgsl.TYPES or out.dtype not in wgsl.TYPES:
        raise Decline(f"cast from {x.dtype} to {out.dtype} has no WGSL kernel")
    src, dst = wgsl.wgsl_type(x.dtype), wgsl.wgsl_type(out.dtype)
    if x.dtype == "float32":
        # WebNN: truncate toward zero, NaN -> 0, saturate (WGSL's f32 -> int conversion saturates;
        # a packed int8/uint8 result saturates to its own range first).
        narrow = getattr(out, "narrow", out.dtype)
        lo_hi = {"int8": ("-128.0", "127.0"), "uint8": ("0.0", "255.0")}.get(narrow)
        clamped = f"clamp(v, {lo_hi[0]}, {lo_hi[1]})" if lo_hi else "v"
        # WGSL saturates to the largest f32 below 2^31 / 2^32: the integer maximum must be set.
        top = {"i32": ("2147483648.0", "2147483647i"), "u32": ("4294967296.0", "4294967295u")}.get(dst)
        converted = f"select({dst}({clamped}), {top[1]}, v >= {top[0]})" if top and not lo_hi else f"{dst}({clamped})"
        value = f"select({converted}, {wgsl.literal(0, out.dtype)}, {wgsl.is_nan('v')})" if dst != "f32" else "v"
    else:
        value = f"{dst}(v)" if src != dst else "v"  # int -> int: two's complement bits; int -> f32 rounds
        if {src, dst} == {"i32", "u32"}:
            value = f"bitcast<{dst}>(v)"
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    text = "\n".join([wgsl.header([("x", src, False), ("y", dst, True)]),
                      wgsl.elementwise_main(n, f"  let v = x[i];\n  y[i] = {value};", d)])
    return [Step(text, [x, out], d)]


KERNELS = {**{op: unary for op in UNARY_OPS}, **{op: binary for op in BINARY_OPS}, "prelu": binary, "cast": cast}
