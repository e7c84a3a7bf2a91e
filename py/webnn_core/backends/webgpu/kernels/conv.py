"""conv2d (grouped and depthwise included), any input and filter layout, with
bias and a fused activation: one thread per output pixel and block of 4
output channels (1 when a group has fewer), reading the input and filter in
place through their layout's strides (no transposes)."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Step
from .elementwise import activation_fn

# Position of (n, c, h, w) in each input layout.
LAYOUT_AXES = {"nchw": (0, 1, 2, 3), "nhwc": (0, 3, 1, 2)}


def nchw_strides(shape, layout):
    """Strides of n, c, h, w for a tensor of `shape` stored in `layout`."""
    st = wgsl.strides(shape)
    return [st[p] for p in LAYOUT_AXES[layout]]


def conv_operands(call: Call):
    """conv2d / convTranspose2d: input, filter, bias (or None), output, attributes, layout."""
    call.require(("float32",))
    x, w = call.inputs[:2]
    bias = call.inputs[2] if len(call.inputs) > 2 else None
    out, = call.outputs
    return x, w, bias, out, call.attrs, call.attrs["layout"]


def conv2d(call: Call) -> list:
    x, w, bias, out, a, layout = conv_operands(call)
    n, c, h, wd = (x.shape[p] for p in LAYOUT_AXES[layout])
    _, o, oh, ow = (out.shape[p] for p in LAYOUT_AXES[layout])
    perm = a["filter_perm"]
    _, kh, kw, ig = (w.shape[p] for p in perm)
    fst = wgsl.strides(w.shape)
    wo, wy, wx, wi = (fst[p] for p in perm)  # filter strides of o, ky, kx, ci
    xn, xc, xh, xw = nchw_strides(x.shape, layout)
    groups = a["groups"]
    og = o // groups
    sh, sw = a["strides"]
    dh, dw = a["dilations"]
    pt, _, pl, _ = a["padding"]
    # Each thread computes CB output channels of one pixel (CB = 4 when the
    # channels of a group allow): every input value loaded serves 4 MACs.
    cb = 4 if og % 4 == 0 else 1
    chan = LAYOUT_AXES[layout][1]  # the channel axis of the output
    shape = list(out.shape)
    shape[chan] //= cb
    code, coords = wgsl.unravel("i", shape)
    names = {LAYOUT_AXES[layout][k]: v for k, v in enumerate("n c y x".split())}
    lets = "\n".join(f"  let o{names[d]} = {coords[d]}{f' * {cb}u' if d == chan and cb > 1 else ''};" for d in range(4))
    total = wgsl.count(shape)
    d = wgsl.dispatch_1d(total)
    act = activation_fn(call, "float32")
    ost = wgsl.strides(out.shape)
    out_coords = ["on", "oc", "oy", "ox"]
    out_index = wgsl.dot([out_coords[LAYOUT_AXES[layout].index(k)] for k in range(4)], ost)
    if cb == 4:
        acc_type = "vec4<f32>"
        init = "vec4<f32>(b_[oc], b_[oc + 1u], b_[oc + 2u], b_[oc + 3u])" if bias is not None else "vec4<f32>(0.0)"
        weight = (f"vec4<f32>(w_[wb + ci * {wi}u], w_[wb + {wo}u + ci * {wi}u], w_[wb + {2 * wo}u + ci * {wi}u], "
                  f"w_[wb + {3 * wo}u + ci * {wi}u])")
        store = "\n".join(f"  y[at + {k * ost[chan]}u] = act_(acc[{k}]);" for k in range(4))
    else:
        acc_type = "f32"
        init = "b_[oc]" if bias is not None else "0.0"
        weight = f"w_[wb + ci * {wi}u]"
        store = "  y[at] = act_(acc);"
    body = f"""{code}
{lets}
  let g = oc / {og}u;
  var acc: {acc_type} = {init};
  for (var ky = 0u; ky < {kh}u; ky = ky + 1u) {{
    let iy = i32(oy * {sh}u + ky * {dh}u) - {pt};
    if (iy < 0 || iy >= {h}) {{ continue; }}
    for (var kx = 0u; kx < {kw}u; kx = kx + 1u) {{
      let ix = i32(ox * {sw}u + kx * {dw}u) - {pl};
      if (ix < 0 || ix >= {wd}) {{ continue; }}
      let xb = on * {xn}u + (g * {ig}u) * {xc}u + u32(iy) * {xh}u + u32(ix) * {xw}u;
      let wb = oc * {wo}u + ky * {wy}u + kx * {wx}u;
      for (var ci = 0u; ci < {ig}u; ci = ci + 1u) {{
        acc = acc + x_[xb + ci * {xc}u] * {weight};
      }}
    }}
  }}
  let at = {out_index};
{store}"""
    bindings = [("x_", "f32", False), ("w_", "f32", False)]
    operands = [x, w]
    if bias is not None:
        bindings.append(("b_", "f32", False))
        operands.append(bias)
    bindings.append(("y", "f32", True))
    text = "\n".join([wgsl.header(bindings), act, wgsl.elementwise_main(total, body, d)])
    return [Step(text, [*operands, out], d)]


def conv_transpose2d(call: Call) -> list:
    """One thread per output element, gathering: output row oy takes input row
    iy where oy + padTop = iy * stride + ky * dilation (and so for columns);
    input channel ch belongs to group ch * groups / C (the numpy kernel's rule)."""
    x, w, bias, out, a, layout = conv_operands(call)
    _, c, h, wd = (x.shape[p] for p in LAYOUT_AXES[layout])
    perm = a["filter_perm"]
    _, og, kh, kw = (w.shape[p] for p in perm)
    fst = wgsl.strides(w.shape)
    wi, wo, wy, wx = (fst[p] for p in perm)
    xn, xc, xh, xw = nchw_strides(x.shape, layout)
    groups = a["groups"]
    sh, sw = a["strides"]
    dh, dw = a["dilations"]
    pt, _, pl, _ = a["padding"]
    code, coords = wgsl.unravel("i", out.shape)
    names = {LAYOUT_AXES[layout][k]: v for k, v in enumerate("n c y x".split())}
    lets = "\n".join(f"  let o{names[d]} = {coords[d]};" for d in range(4))
    total = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(total)
    init = "b_[oc]" if bias is not None else "0.0"
    body = f"""{code}
{lets}
  let g = oc / {og}u;
  let ocg = oc % {og}u;
  let lo = (g * {c}u + {groups - 1}u) / {groups}u;
  let hi = min(((g + 1u) * {c}u + {groups - 1}u) / {groups}u, {c}u);
  var acc: f32 = {init};
  for (var ky = 0u; ky < {kh}u; ky = ky + 1u) {{
    let ty = i32(oy) + {pt} - i32(ky * {dh}u);
    if (ty < 0 || ty % {sh} != 0) {{ continue; }}
    let iy = ty / {sh};
    if (iy >= {h}) {{ continue; }}
    for (var kx = 0u; kx < {kw}u; kx = kx + 1u) {{
      let tx = i32(ox) + {pl} - i32(kx * {dw}u);
      if (tx < 0 || tx % {sw} != 0) {{ continue; }}
      let ix = tx / {sw};
      if (ix >= {wd}) {{ continue; }}
      let xb = on * {xn}u + u32(iy) * {xh}u + u32(ix) * {xw}u;
      let wb = ocg * {wo}u + ky * {wy}u + kx * {wx}u;
      for (var ch = lo; ch < hi; ch = ch + 1u) {{
        acc = acc + x_[xb + ch * {xc}u] * w_[wb + ch * {wi}u];
      }}
    }}
  }}
  y[i] = act_(acc);"""
    bindings = [("x_", "f32", False), ("w_", "f32", False)]
    operands = [x, w]
    if bias is not None:
        bindings.append(("b_", "f32", False))
        operands.append(bias)
    bindings.append(("y", "f32", True))
    text = "\n".join([wgsl.header(bindings), activation_fn(call, "float32"), wgsl.elementwise_main(total, body, d)])
    return [Step(text, [*operands, out], d)]


KERNELS = {"conv2d": conv2d, "convTranspose2d": conv_transpose2d}
