"""averagePool2d, l2Pool2d, maxPool2d: one thread per output element. Cells
outside the input (padding, and the overhang of ceil-rounded windows) are
skipped: they count in no average and never win a max, as in the numpy
kernels (a window wholly outside averages to 0, maxes to the lowest value)."""
from __future__ import annotations

from .. import wgsl
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
    if dtype not in wgsl.TYPES or (call.op != "maxPool2d" and dtype != "float32"):
        raise Decline(f"{call.op} on {dtype} has no WGSL kernel")
    ty = wgsl.wgsl_type(dtype)
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
        init = wgsl.lowest(dtype)
    code, coords = wgsl.unravel("i", out.shape)
    names = {LAYOUT_AXES[layout][k]: v for k, v in enumerate("n c y x".split())}
    lets = "\n".join(f"  let o{names[d]} = {coords[d]};" for d in range(4))
    total = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(total)
    max_fn = (f"fn max_(a: f32, b: f32) -> f32 {{ if ({wgsl.is_nan('a')}) {{ return a; }} "
              f"if ({wgsl.is_nan('b')}) {{ return b; }} return max(a, b); }}") if ty == "f32" \
        else f"fn max_(a: {ty}, b: {ty}) -> {ty} {{ return max(a, b); }}"
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
      let v = x_[base + u32(iy) * {xh}u + u32(ix) * {xw}u];
      {update}
    }}
  }}
  y[i] = {final};"""
    text = "\n".join([wgsl.header([("x_", ty, False), ("y", ty, True)]), max_fn,
                      wgsl.elementwise_main(total, body, d)])
    return [Step(text, [x, out], d)]


KERNELS = {"averagePool2d": pool2d, "l2Pool2d": pool2d, "maxPool2d": pool2d}
