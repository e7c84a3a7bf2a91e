"""conv2d (grouped and depthwise included), any input and filter layout, with
bias and a fused activation, reading the input and filter in place through
their layout's strides (no transposes). Two kernels, chosen per node by
`conv2d_kernel` (the planner's threshold, documented in docs/architecture.md):

  tiled   implicit GEMM: output pixels x output channels of one group as a
          matrix product over K = kernel rows x columns x input channels;
          64x16 or 32x32 output tiles per workgroup, input patches and filters
          staged in workgroup memory 16 K at a time, 4x4 outputs per thread.
          For groups of >= TILED_MIN_GROUP_CHANNELS output channels (plain,
          1x1, strided, dilated and grouped convs).
  direct  one thread per output pixel and block of 4 output channels (1 when
          a group has fewer): depthwise and narrow groups, where a tile would
          mostly hold zeros."""
from __future__ import annotations

from string import Template

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


# The planner's choice between the kernels: "auto" tiles groups with at least
# TILED_MIN_GROUP_CHANNELS output channels; "tiled"/"direct" force one (tests, benchmarks).
TILED_MIN_GROUP_CHANNELS = 16
CONV_KERNELS = ("auto", "tiled", "direct")


def conv2d_kernel(call: Call, choice: str = "auto") -> str:
    """"tiled" or "direct" for this conv2d node."""
    x, w, bias, out, a, layout = conv_operands(call)
    og = out.shape[LAYOUT_AXES[layout][1]] // a["groups"]
    n, _, oh, ow = (out.shape[p] for p in LAYOUT_AXES[layout])
    bm, _ = tile_shape(og)
    if -(-n * oh * ow // bm) > wgsl.MAX_GROUPS or a["groups"] > wgsl.MAX_GROUPS:
        return "direct"
    if choice in ("tiled", "direct"):
        return choice
    return "tiled" if og >= TILED_MIN_GROUP_CHANNELS else "direct"


def conv2d(call: Call) -> list:
    return conv2d_tiled(call) if conv2d_kernel(call, call.options.get("conv2d", "auto")) == "tiled" \
        else conv2d_direct(call)


def conv2d_direct(call: Call) -> list:
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
    return [Step(text, [*operands, out], d, "conv2d.direct")]


# Implicit GEMM. Rows m = output pixels (n, oy, ox), columns = output channels
# of group wg.z, K = (ky, kx, ci) with ci fastest. 64 threads: thread t loads
# A column t % BK of rows t / BK + j * (64 / BK) (so its rows' pixel offsets
# are computed once) and B column t % BN; it computes rows ty + i * BM / 4
# (i < 4) by columns 4 tx .. 4 tx + 3.
TILED = Template("""var<workgroup> ta: array<f32, $a_size>;  // [BM][BK] input patches
var<workgroup> tb: array<f32, $b_size>;  // [BK][BN] filters
$act
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let m0 = wg.y * ${bm}u;
  let o0 = wg.x * ${bn}u;
  let g = wg.z;
  // This thread's A rows: input offset of the pixel's batch, top-left input row/column
  // (rows past the last pixel get a far-off origin, so every bounds test fails).
  var xb: array<u32, $a_loads>;
  var y0: array<i32, $a_loads>;
  var x0: array<i32, $a_loads>;
  for (var j = 0u; j < ${a_loads}u; j = j + 1u) {
    let m = m0 + t / ${bk}u + j * ${a_step}u;
    let n = m / ${pixels}u;
    let p = m % ${pixels}u;
    xb[j] = n * ${xn}u + g * ${ig_xc}u;
    y0[j] = select(-1073741824, i32((p / ${ow}u) * ${sh}u) - $pt, m < ${m}u);
    x0[j] = i32((p % ${ow}u) * ${sw}u) - $pl;
  }
  let ak = t % ${bk}u;
  // This thread's B column: one output channel of the group.
  let bc = t % ${bn}u;
  let bo = o0 + bc;
  let wb = (g * ${og}u + bo) * ${wo}u;
  let tx = t % ${tx_count}u;
  let ty = t / ${tx_count}u;
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < ${k}u; k0 = k0 + ${bk}u) {
    let k = k0 + ak;
    let ky = k / ${kwc}u;
    let kx = (k / ${c}u) % ${kw}u;
    let ci = k % ${c}u;
    let dy = i32(ky * ${dh}u);
    let dx = i32(kx * ${dw}u);
    let xc = ci * ${xc}u;
    for (var j = 0u; j < ${a_loads}u; j = j + 1u) {
      let iy = y0[j] + dy;
      let ix = x0[j] + dx;
      var v = 0.0;
      if (k < ${k}u && iy >= 0 && iy < $h && ix >= 0 && ix < $wd) {
        v = x_[xb[j] + xc + u32(iy) * ${xh}u + u32(ix) * ${xw}u];
      }
      ta[(t / ${bk}u + j * ${a_step}u) * ${bk}u + ak] = v;
    }
    for (var j = 0u; j < ${b_loads}u; j = j + 1u) {
      let kk = t / ${bn}u + j * ${b_step}u;
      let kb = k0 + kk;
      var v = 0.0;
      if (kb < ${k}u && bo < ${og}u) {
        v = w_[wb + (kb / ${kwc}u) * ${wy}u + ((kb / ${c}u) % ${kw}u) * ${wx}u + (kb % ${c}u) * ${wi}u];
      }
      tb[kk * ${bn}u + bc] = v;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < ${bk}u; kk = kk + 1u) {
      let bi = kk * ${bn}u + tx * 4u;
      let b = vec4<f32>(tb[bi], tb[bi + 1u], tb[bi + 2u], tb[bi + 3u]);
      acc0 = acc0 + ta[ty * ${bk}u + kk] * b;
      acc1 = acc1 + ta[(ty + ${row_step}u) * ${bk}u + kk] * b;
      acc2 = acc2 + ta[(ty + ${row_step2}u) * ${bk}u + kk] * b;
      acc3 = acc3 + ta[(ty + ${row_step3}u) * ${bk}u + kk] * b;
    }
    workgroupBarrier();
  }
  store(m0 + ty, o0 + tx * 4u, g, acc0);
  store(m0 + ty + ${row_step}u, o0 + tx * 4u, g, acc1);
  store(m0 + ty + ${row_step2}u, o0 + tx * 4u, g, acc2);
  store(m0 + ty + ${row_step3}u, o0 + tx * 4u, g, acc3);
}

// Output pixel m, channels oc .. oc + 3 of group g (those that exist), + bias, activation.
fn store(m: u32, oc: u32, g: u32, acc: vec4<f32>) {
  if (m >= ${m}u) { return; }
  let n = m / ${pixels}u;
  let p = m % ${pixels}u;
  let at = n * ${yn}u + (p / ${ow}u) * ${yh}u + (p % ${ow}u) * ${yw}u;
  for (var c = 0u; c < 4u; c = c + 1u) {
    let o = oc + c;
    if (o < ${og}u) {
      let ch = g * ${og}u + o;
      y[at + ch * ${yc}u] = act_(acc[c]$bias);
    }
  }
}
""")


def tile_shape(og: int) -> tuple:
    """(BM, BN): 64 pixels x 16 channels for narrow groups, else 32 x 32 (4x4 outputs per thread)."""
    return (64, 16) if og <= 16 else (32, 32)


def conv2d_tiled(call: Call) -> list:
    x, w, bias, out, a, layout = conv_operands(call)
    n, c, h, wd = (x.shape[p] for p in LAYOUT_AXES[layout])
    _, o, oh, ow = (out.shape[p] for p in LAYOUT_AXES[layout])
    perm = a["filter_perm"]
    _, kh, kw, ig = (w.shape[p] for p in perm)
    fst = wgsl.strides(w.shape)
    wo, wy, wx, wi = (fst[p] for p in perm)
    xn, xc, xh, xw = nchw_strides(x.shape, layout)
    yn, yc, yh, yw = nchw_strides(out.shape, layout)
    groups = a["groups"]
    og = o // groups
    sh, sw = a["strides"]
    dh, dw = a["dilations"]
    pt, _, pl, _ = a["padding"]
    bm, bn, bk = *tile_shape(og), 16
    m = n * oh * ow
    k = kh * kw * ig
    text = TILED.substitute(
        a_size=bm * bk, b_size=bk * bn, act=activation_fn(call, "float32"), bm=bm, bn=bn, bk=bk,
        a_loads=bm * bk // 64, a_step=64 // bk, b_loads=bk * bn // 64, b_step=64 // bn,
        pixels=oh * ow, ow=ow, sh=sh, sw=sw, pt=pt, pl=pl, m=m, k=k, c=ig, kw=kw, kwc=kw * ig, dh=dh, dw=dw,
        h=h, wd=wd, xn=xn, xc=xc, xh=xh, xw=xw, ig_xc=ig * xc, og=og, wo=wo, wy=wy, wx=wx, wi=wi,
        tx_count=bn // 4, row_step=bm // 4, row_step2=bm // 2, row_step3=3 * bm // 4,
        yn=yn, yc=yc, yh=yh, yw=yw, bias=" + b_[ch]" if bias is not None else "")
    bindings = [("x_", "f32", False), ("w_", "f32", False)]
    operands = [x, w]
    if bias is not None:
        bindings.append(("b_", "f32", False))
        operands.append(bias)
    bindings.append(("y", "f32", True))
    d = [-(-og // bn), -(-m // bm), groups]
    return [Step("\n".join([wgsl.header(bindings), text]), [*operands, out], d, "conv2d.tiled")]


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
