"""Reductions, softmax and cumulativeSum: one thread per output element (per
row for softmax and cumulativeSum), looping over the reduced elements in place. Floats accumulate in
f32 (the numpy kernels use float64 and round once: results may differ in
the last bits); integer sums and products wrap like the numpy kernels."""
from __future__ import annotations

from .. import wgsl
from . import int64
from .common import Call, Decline, Step

# op -> (dtypes, init, update with `v`, final from `acc` and `count`)
REDUCTIONS = {
    "reduceSum": (("float32", "int32", "uint32"), "ZERO", "acc = acc + v;", "acc"),
    "reduceMean": (("float32",), "ZERO", "acc = acc + v;", "acc / f32(COUNT)"),
    "reduceL1": (("float32", "int32", "uint32"), "ZERO", "acc = acc + abs(v);", "acc"),
    "reduceSumSquare": (("float32", "int32", "uint32"), "ZERO", "acc = acc + v * v;", "acc"),
    "reduceL2": (("float32",), "ZERO", "acc = acc + v * v;", "sqrt(acc)"),
    "reduceLogSum": (("float32",), "ZERO", "acc = acc + v;", "log(acc)"),
    "reduceProduct": (("float32", "int32", "uint32"), "ONE", "acc = acc * v;", "acc"),
    "reduceMax": (("float32", "int32", "uint32"), "LOWEST", "acc = max_(acc, v);", "acc"),
    "reduceMin": (("float32", "int32", "uint32"), "HIGHEST", "acc = min_(acc, v);", "acc"),
    "reduceLogSumExp": (("float32",), None, None, None),  # two passes, below
}


def _minmax(ty: str) -> str:
    if ty != "f32":
        return (f"fn max_(a: {ty}, b: {ty}) -> {ty} {{ return max(a, b); }}\n"
                f"fn min_(a: {ty}, b: {ty}) -> {ty} {{ return min(a, b); }}")
    nan = f"if ({wgsl.is_nan('a')}) {{ return a; }} if ({wgsl.is_nan('b')}) {{ return b; }}"
    return (f"fn max_(a: f32, b: f32) -> f32 {{ {nan} return max(a, b); }}\n"
            f"fn min_(a: f32, b: f32) -> f32 {{ {nan} return min(a, b); }}")


def reduce(call: Call) -> list:
    x, = call.inputs
    out, = call.outputs
    dtypes, init, update, final = REDUCTIONS[call.op]
    if x.dtype in int64.INT64:
        return int64.reduce64(call)
    if x.dtype not in dtypes:
        raise Decline(f"{call.op} on {x.dtype} has no WGSL kernel")
    dtype = x.dtype
    ty = wgsl.wgsl_type(dtype)
    axes = set(call.attrs["axes"])
    st = wgsl.strides(x.shape)
    kept = [d for d in range(len(x.shape)) if d not in axes]
    reduced = [d for d in range(len(x.shape)) if d in axes]
    kept_shape = [x.shape[d] for d in kept]
    red_shape = [x.shape[d] for d in reduced]
    n_red = wgsl.count(red_shape)
    code, coords = wgsl.unravel("i", kept_shape, "o")
    base = wgsl.dot(coords, [st[d] for d in kept])
    rcode, rcoords = wgsl.unravel("r", red_shape, "q")
    offset = wgsl.dot(rcoords, [st[d] for d in reduced])
    total = wgsl.count(out.shape)
    dsp = wgsl.dispatch_1d(total)
    subst = {"ZERO": wgsl.literal(0, dtype), "ONE": wgsl.literal(1, dtype), "LOWEST": wgsl.lowest(dtype),
             "HIGHEST": wgsl.highest(dtype), "COUNT": str(n_red)}

    def fill(text):
        for k, v in subst.items():
            text = text.replace(k, v)
        return text

    loop = lambda inner: (f"  for (var r = 0u; r < {n_red}u; r = r + 1u) {{\n{rcode}\n"  # noqa: E731
                          f"    let v = x_[base + {offset}];\n    {inner}\n  }}")
    if call.op == "reduceLogSumExp":
        body = "\n".join([code, f"  let base = {base};", f"  var m = {wgsl.lowest(dtype)};",
                          loop("m = max_(m, v);"),
                          f"  if ({wgsl.is_nan('m')} || abs(m) == {wgsl.highest(dtype)}) {{ m = 0.0; }}",
                          "  var acc = 0.0;", loop("acc = acc + exp(v - m);"), "  y[i] = log(acc) + m;"])
    else:
        body = "\n".join([code, f"  let base = {base};", f"  var acc: {ty} = {fill(init)};", loop(fill(update)),
                          f"  y[i] = {fill(final)};"])
    text = "\n".join([wgsl.header([("x_", ty, False), ("y", ty, True)]), _minmax(ty),
                      wgsl.elementwise_main(total, body, dsp)])
    return [Step(text, [x, out], dsp)]


def softmax(call: Call) -> list:
    call.require(("float32",))
    x, = call.inputs
    out, = call.outputs
    axis = call.attrs["axis"]
    size = x.shape[axis]
    inner = wgsl.count(x.shape[axis + 1:])
    rows = wgsl.count(x.shape) // size
    dsp = wgsl.dispatch_1d(rows)
    body = f"""  let base = (i / {inner}u) * {size * inner}u + i % {inner}u;
  var m = {wgsl.NEG_INF};
  for (var k = 0u; k < {size}u; k = k + 1u) {{ m = max(m, x_[base + k * {inner}u]); }}
  var s = 0.0;
  for (var k = 0u; k < {size}u; k = k + 1u) {{ s = s + exp(x_[base + k * {inner}u] - m); }}
  for (var k = 0u; k < {size}u; k = k + 1u) {{ y[base + k * {inner}u] = exp(x_[base + k * {inner}u] - m) / s; }}"""
    text = "\n".join([wgsl.header([("x_", "f32", False), ("y", "f32", True)]), wgsl.elementwise_main(rows, body, dsp)])
    return [Step(text, [x, out], dsp)]


def arg_min_max(call: Call) -> list:
    """Index of the first minimum/maximum along the axis (NaN wins, like numpy)."""
    x, = call.inputs
    out, = call.outputs
    if x.dtype in int64.INT64:
        return int64.arg64(call)
    if x.dtype not in wgsl.TYPES or out.dtype != "int32":
        raise Decline(f"{call.op} of {x.dtype} to {out.dtype} has no WGSL kernel")
    ty = wgsl.wgsl_type(x.dtype)
    axis = call.attrs["axis"]
    size = x.shape[axis]
    inner = wgsl.count(x.shape[axis + 1:])
    total = wgsl.count(out.shape)
    dsp = wgsl.dispatch_1d(total)
    better = ">" if call.op == "argMax" else "<"
    nan = f" || ({wgsl.is_nan('v')} && !{wgsl.is_nan('best')})" if ty == "f32" else ""
    skip = f"if ({wgsl.is_nan('best')}) {{ break; }}" if ty == "f32" else ""
    body = f"""  let base = (i / {inner}u) * {size * inner}u + i % {inner}u;
  var best = x_[base];
  var at = 0i;
  for (var k = 1u; k < {size}u; k = k + 1u) {{
    {skip}
    let v = x_[base + k * {inner}u];
    if (v {better} best{nan}) {{ best = v; at = i32(k); }}
  }}
  y[i] = at;"""
    text = "\n".join([wgsl.header([("x_", ty, False), ("y", "i32", True)]), wgsl.elementwise_main(total, body, dsp)])
    return [Step(text, [x, out], dsp)]


def cumulative_sum(call: Call) -> list:
    """One thread per line along the axis, summing in order (f32; integers wrap)."""
    x, = call.inputs
    out, = call.outputs
    if x.dtype in int64.INT64:
        return int64.cumsum64(call)
    if x.dtype not in wgsl.TYPES:
        raise Decline(f"{call.op} on {x.dtype} has no WGSL kernel")
    ty = wgsl.wgsl_type(x.dtype)
    axis = call.attrs["axis"]
    size = x.shape[axis]
    inner = wgsl.count(x.shape[axis + 1:])
    lines = wgsl.count(x.shape) // max(1, size)
    dsp = wgsl.dispatch_1d(lines)
    order = f"{size - 1}u - k" if call.attrs["reversed"] else "k"
    if call.attrs["exclusive"]:
        step = "    y[at] = acc;\n    acc = acc + x_[at];"
    else:
        step = "    acc = acc + x_[at];\n    y[at] = acc;"
    body = f"""  let base = (i / {inner}u) * {size * inner}u + i % {inner}u;
  var acc: {ty} = {wgsl.literal(0, x.dtype)};
  for (var k = 0u; k < {size}u; k = k + 1u) {{
    let at = base + ({order}) * {inner}u;
{step}
  }}"""
    text = "\n".join([wgsl.header([("x_", ty, False), ("y", ty, True)]), wgsl.elementwise_main(lines, body, dsp)])
    return [Step(text, [x, out], dsp)]


KERNELS = {**{op: reduce for op in REDUCTIONS}, "softmax": softmax, "cumulativeSum": cumulative_sum, "argMin": arg_min_max, "argMax": arg_min_max}
