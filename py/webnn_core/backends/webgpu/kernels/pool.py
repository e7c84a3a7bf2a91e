"""averagePool2d, l2Pool2d, maxPool2d and resample2d: one thread per output element. Cells
outside the input (padding, and the overhang of ceil-rounded windows) are
skipped: they count in no average and never win a max, as in the numpy
kernels (a window wholly outside averages to 0, maxes to the lowest value)."""
from __future__ import annotations

from .. import wgsl
from . import int64
from .common import Call, Decline, Step
from .conv import LAYOUT_AXES, nchw_strides

REDUCE = {  # op -> (init, update of acc with v, final value)
    "averagePool2d": ("0.0", "acc = acc + v; cnt = cnt + 1u;", "select(acc / f32(cnt), 0.0, cnt == 0u)"),
    "l2Pool2d": ("0.0", "acc = acc + v * v;", "sqrt(acc)"),
    "maxPool2d": (None, "acc = max_(acc, v);", "acc"),
}


def pool2d(call: Call) -> list:
    x, = call.inputs
    out, = call.outputs
    dtype = x.dtype
    wide = dtype in int64.INT64 and call.op == "maxPool2d"  # two words per element, compared as such
    if (dtype not in wgsl.TYPES and not wide) or (call.op != "maxPool2d" and dtype != "float32"):
        raise Decline(f"{call.op} on {dtype} has no WGSL kernel")
    ty = "vec2<u32>" if wide else wgsl.wgsl_type(dtype)
    a = call.attrs
    layout = a["layout"]
    _, _, h, wd = (x.shape[p] for p in LAYOUT_AXES[layout])
    xn, xc, xh, xw = nchw_strides(x.shape, layout)
    kh, kw = a["window"]
    sh, sw = a["strides"]
    dh, dw = a["dilations"]
    pt, _, pl, _ = a["padding"]
    init, update, final = REDUCE[call.op]
    if init is None:
        init = ("vec2<u32>(0u, 0x80000000u)" if dtype == "int64" else "vec2<u32>(0u, 0u)") if wide else wgsl.lowest(dtype)
    code, coords = wgsl.unravel("i", out.shape)
    names = {LAYOUT_AXES[layout][k]: v for k, v in enumerate("n c y x".split())}
    lets = "\n".join(f"  let o{names[d]} = {coords[d]};" for d in range(4))
    total = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(total)
    if wide:
        signed = "true" if dtype == "int64" else "false"
        max_fn = f"fn max_(a: {ty}, b: {ty}) -> {ty} {{ return select(a, b, lt64_(a, b, {signed})); }}"
    elif ty == "f32":
        max_fn = (f"fn max_(a: f32, b: f32) -> f32 {{ if ({wgsl.is_nan('a')}) {{ return a; }} "
                  f"if ({wgsl.is_nan('b')}) {{ return b; }} return max(a, b); }}")
    else:
        max_fn = f"fn max_(a: {ty}, b: {ty}) -> {ty} {{ return max(a, b); }}"
    at = "base + u32(iy) * {xh}u + u32(ix) * {xw}u".format(xh=xh, xw=xw)
    body = f"""{code}
{lets}
  var acc: {ty} = {init};
  var cnt = 0u;
  let base = on * {xn}u + oc * {xc}u;
  for (var ky = 0u; ky < {kh}u; ky = ky + 1u) {{
    let iy = i32(oy * {sh}u + ky * {dh}u) - {pt};
    if (iy < 0 || iy >= {h}) {{ continue; }}
    for (var kx = 0u; kx < {kw}u; kx = kx + 1u) {{
      let ix = i32(ox * {sw}u + kx * {dw}u) - {pl};
      if (ix < 0 || ix >= {wd}) {{ continue; }}
      let v = {int64.load64('x_', at) if wide else f'x_[{at}]'};
      {update}
    }}
  }}
  {"y[2u * i] = acc.x; y[2u * i + 1u] = acc.y;" if wide else f"y[i] = {final};"}"""
    bound = "u32" if wide else ty
    text = "\n".join([wgsl.header([("x_", bound, False), ("y", bound, True)]), max_fn,
                      wgsl.elementwise_main(total, body, d)])
    return [Step(text, [x, out], d)]


def resample2d(call: Call) -> list:
    """One thread per output element. Nearest: source index ceil(u - 0.5) of
    the half-pixel coordinate u, in exact integers as the numpy kernel does;
    linear: separable bilinear weights in f32 (the numpy kernel uses float64)."""
    call.require(("float32",))
    x, = call.inputs
    out, = call.outputs
    axes, sizes = call.attrs["axes"], call.attrs["sizes"]
    code, coords = wgsl.unravel("i", out.shape)
    coords = [c if c != "0u" else "0u" for c in coords]
    xst = wgsl.strides(x.shape)
    lines = [code]
    for k, (a, m) in enumerate(zip(axes, sizes)):
        n = x.shape[a]
        o = coords[a] if out.shape[a] > 1 else "0u"
        if call.attrs["mode"] == "nearest-neighbor":
            lines.append(f"  let num{k} = (2 * i32({o}) + 1) * {n} - {2 * m};")
            lines.append(f"  let s{k} = u32(clamp(select(num{k} / {2 * m}, (num{k} + {2 * m - 1}) / {2 * m}, num{k} >= 0),"
                         f" 0, {n - 1}));")
        else:
            lines.append(f"  let p{k} = clamp((f32({o}) + 0.5) * {wgsl.literal(n / m, 'float32')} - 0.5, 0.0, "
                         f"{wgsl.literal(n - 1, 'float32')});")
            lines.append(f"  let lo{k} = u32(floor(p{k}));")
            lines.append(f"  let hi{k} = min(lo{k} + 1u, {n - 1}u);")
            lines.append(f"  let t{k} = p{k} - f32(lo{k});")

    def at(first, second):
        c = list(coords)
        c[axes[0]], c[axes[1]] = first, second
        return f"x_[{wgsl.dot(c, xst)}]"
    if call.attrs["mode"] == "nearest-neighbor":
        lines.append(f"  y[i] = {at('s0', 's1')};")
    else:
        lines.append(f"  let r0 = {at('lo0', 'lo1')} * (1.0 - t1) + {at('lo0', 'hi1')} * t1;")
        lines.append(f"  let r1 = {at('hi0', 'lo1')} * (1.0 - t1) + {at('hi0', 'hi1')} * t1;")
        lines.append("  y[i] = r0 * (1.0 - t0) + r1 * t0;")
    total = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(total)
    text = "\n".join([wgsl.header([("x_", "f32", False), ("y", "f32", True)]),
                      wgsl.elementwise_main(total, "\n".join(lines), d)])
    return [Step(text, [x, out], d)]


KERNELS = {"resample2d": resample2d, "averagePool2d": pool2d, "l2Pool2d": pool2d, "maxPool2d": pool2d}
