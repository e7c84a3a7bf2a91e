"""conv2d (grouped and depthwise included), any input and filter layout, with
bias and a fused activation, reading the input and filter in place through
their layout's strides (no transposes). Two kernels, chosen per node by
`conv2d_kernel` (the planner's threshold, documented in docs/architecture.md):

  tiled   implicit GEMM: output pixels x output channels of one group as a
          matrix product over K = kernel rows x columns x input channels;
          64x16 or 32x32 output tiles per workgroup, input patches and filters
          staged in workgroup memory 16 K at a time, 4x4 outputs per thread.
          For groups of >= TILED_MIN_GROUP_CHANNELS output channels (plain,
          1x1, strided, dilated and grouped convs; on a CPU-emulated adapter
          only spatial filters with a long K, see conv2d_kernel).
  direct  one thread per output pixel and block of 4 output channels (1 when
          a group has fewer): depthwise and narrow groups, where a tile would
          mostly hold zeros."""
from __future__ import annotations

from string import Template

import numpy as np

from .. import wgsl

from .common import Call, Derived, Step
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


# The planner's choice between the kernels (docs/architecture.md, "The webgpu plan"):
# "auto" tiles a group of >= TILED_MIN_GROUP_CHANNELS output channels, where a tile
# row is mostly useful work. On a CPU-emulated adapter (SwiftShader: workgroup memory
# is plain memory, barriers switch coroutines, the CPU's caches already give the
# direct kernel its reuse) the tiled kernel only won for spatial filters with a long
# K (kh * kw * input channels >= TILED_MIN_K_EMULATED: SqueezeNet's 7x7 and 3x3
# convs), and lost up to 3x on pointwise ones, so "auto" keeps those direct there.
# "tiled" / "direct" force one kernel (WEBNN_POLYFILL_CONFIG.webgpuConv2d).
TILED_MIN_GROUP_CHANNELS = 16
TILED_MIN_K_EMULATED = 64
CONV_KERNELS = ("auto", "tiled", "direct")


def conv2d_kernel(call: Call, choice: str = "auto", emulated: bool = False) -> str:
    """"tiled" or "direct" for this conv2d node; `emulated`: the adapter is a CPU emulation."""
    x, w, bias, out, a, layout = conv_operands(call)
    og = out.shape[LAYOUT_AXES[layout][1]] // a["groups"]
    n, _, oh, ow = (out.shape[p] for p in LAYOUT_AXES[layout])
    _, kh, kw, ig = (w.shape[p] for p in a["filter_perm"])
    bm, _ = tile_shape(og)
    if -(-n * oh * ow // bm) > wgsl.MAX_GROUPS or a["groups"] > wgsl.MAX_GROUPS:
        return "direct"
    if choice in ("tiled", "direct"):
        return choice
    if og < TILED_MIN_GROUP_CHANNELS:
        return "direct"
    if emulated and (kh * kw == 1 or kh * kw * ig < TILED_MIN_K_EMULATED):
        return "direct"
    return "tiled"


def conv2d(call: Call) -> list:
    kernel = conv2d_kernel(call, call.options.get("conv2d", "auto"), call.options.get("emulated", False))
    return conv2d_tiled(call) if kernel == "tiled" else conv2d_direct(call)


def conv2d_geometry(call: Call):
    """What both conv2d kernels start from: conv_operands(), then the input's (n, c, h, w),
    the output's (o, oh, ow), the filter's (kh, kw, input channels per group) and its
    element strides of (o, ky, kx, ci), the input's NCHW strides, (groups, output
    channels per group), strides, dilations and the (top, left) padding."""
    x, w, bias, out, a, layout = conv_operands(call)
    axes = LAYOUT_AXES[layout]
    perm = a["filter_perm"]
    _, kh, kw, ig = (w.shape[p] for p in perm)
    fst = wgsl.strides(w.shape)
    _, o, oh, ow = (out.shape[p] for p in axes)
    pt, _, pl, _ = a["padding"]
    return (x, w, bias, out, a, layout, tuple(x.shape[p] for p in axes), (o, oh, ow), (kh, kw, ig),
            tuple(fst[p] for p in perm), nchw_strides(x.shape, layout), (a["groups"], o // a["groups"]),
            tuple(a["strides"]), tuple(a["dilations"]), (pt, pl))


def conv2d_direct(call: Call) -> list:
    (x, w, bias, out, a, layout, (n, c, h, wd), (o, oh, ow), (kh, kw, ig), (wo, wy, wx, wi), (xn, xc, xh, xw),
     (groups, og), (sh, sw), (dh, dw), (pt, pl)) = conv2d_geometry(call)
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
# A column t % BK of rows t / BK + j * (64 / BK) (its rows' pixel offsets are
# computed once) and B column t % BN; it computes rows 4 ty .. 4 ty + 3 by
# columns 4 tx .. 4 tx + 3, reading one vec4 of each tile per k (both tiles are
# stored k-major in vec4s: ta[k][row / 4][row % 4], tb[k][col / 4][col % 4]). Rows past the last pixel (and, on strided filter
# reads, columns past the last channel) are clamped to the last one: their sums
# are never stored, so the loads need no test for them.
TILED = Template("""var<workgroup> ta: array<vec4<f32>, $a_size>;  // [BK][BM / 4] input patches
var<workgroup> tb: array<vec4<f32>, $b_size>;  // [BK][BN / 4] filters
$act
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
  let m0 = wg.y * ${bm}u;
  let o0 = wg.x * ${bn}u;
  let g = wg.z;
  var xb: array<u32, $a_loads>;
$row_decl
  for (var j = 0u; j < ${a_loads}u; j = j + 1u) {
    let m = min(m0 + t / ${bk}u + j * ${a_step}u, ${m_last}u);
    let n = m / ${pixels}u;
    let p = m % ${pixels}u;
$row_init
  }
  let ak = t % ${bk}u;
  let bc = t % ${bn}u;
$b_setup
  let tx = t % ${tx_count}u;
  let ty = t / ${tx_count}u;
  var acc0 = vec4<f32>(0.0);
  var acc1 = vec4<f32>(0.0);
  var acc2 = vec4<f32>(0.0);
  var acc3 = vec4<f32>(0.0);
  for (var k0 = 0u; k0 < ${k}u; k0 = k0 + ${bk}u) {
    let k = k0 + ak;
$a_load
    for (var j = 0u; j < ${b_loads}u; j = j + 1u) {
      let kk = t / ${bn}u + j * ${b_step}u;
$b_load
    }
    workgroupBarrier();
    for (var kk = 0u; kk < ${bk}u; kk = kk + 1u) {
      let a = ta[kk * ${bm4}u + ty];
      let b = tb[kk * ${bn4}u + tx];
      acc0 = acc0 + a.x * b;
      acc1 = acc1 + a.y * b;
      acc2 = acc2 + a.z * b;
      acc3 = acc3 + a.w * b;
    }
    workgroupBarrier();
  }
  store(m0 + ty * 4u, o0 + tx * 4u, g, acc0);
  store(m0 + ty * 4u + 1u, o0 + tx * 4u, g, acc1);
  store(m0 + ty * 4u + 2u, o0 + tx * 4u, g, acc2);
  store(m0 + ty * 4u + 3u, o0 + tx * 4u, g, acc3);
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


def packed_filter(perm, groups, kp, ogp):
    """The filter (constant) as the tiled kernel reads it: [groups][Kp][OGp],
    K = (ky, kx, ci) with ci fastest, zero-padded to whole tiles."""
    def transform(value):
        w = np.transpose(value, perm)  # [O, KH, KW, IG]
        o = w.shape[0]
        og = o // groups
        w = w.reshape(groups, og, -1).transpose(0, 2, 1)  # [G, K, og]
        out = np.zeros((groups, kp, ogp), np.float32)
        out[:, :w.shape[1], :og] = w
        return out
    return transform


def conv2d_tiled(call: Call) -> list:
    (x, w, bias, out, a, layout, (n, c, h, wd), (o, oh, ow), (kh, kw, ig), (wo, wy, wx, wi), (xn, xc, xh, xw),
     (groups, og), (sh, sw), (dh, dw), (pt, pl)) = conv2d_geometry(call)
    yn, yc, yh, yw = nchw_strides(out.shape, layout)
    perm = a["filter_perm"]
    bm, bn, bk = *tile_shape(og), 16
    m = n * oh * ow
    k = kh * kw * ig
    kp, ogp = -(-k // bk) * bk, -(-og // bn) * bn
    k_test = "" if k % bk == 0 else f"k < {k}u && "
    a_row = f"ak * {bm // 4}u + r / 4u][r % 4u"  # ta[a_row] = element (r, ak)
    if kh == kw == 1 and (sh, sw) == (1, 1) and not any(a["padding"]):
        # Pointwise: the patch is the pixel itself.
        row_decl, row_init = "", f"    xb[j] = n * {xn}u + g * {ig * xc}u + (p / {ow}u) * {xh}u + (p % {ow}u) * {xw}u;"
        value = f"x_[xb[j] + k * {xc}u]"
        load = f"      ta[{a_row}] = {value};" if not k_test else \
            f"      var v = 0.0;\n      if (k < {k}u) {{ v = {value}; }}\n      ta[{a_row}] = v;"
        a_load = f"    for (var j = 0u; j < {bm * bk // 64}u; j = j + 1u) {{\n      let r = t / {bk}u + j * {64 // bk}u;\n{load}\n    }}"
    else:
        row_decl = f"  var y0: array<i32, {bm * bk // 64}>;\n  var x0: array<i32, {bm * bk // 64}>;"
        row_init = (f"    xb[j] = n * {xn}u + g * {ig * xc}u;\n"
                    f"    y0[j] = i32((p / {ow}u) * {sh}u) - {pt};\n"
                    f"    x0[j] = i32((p % {ow}u) * {sw}u) - {pl};")
        a_load = f"""    let dy = i32((k / {kw * ig}u) * {dh}u);
    let dx = i32(((k / {ig}u) % {kw}u) * {dw}u);
    let xk = (k % {ig}u) * {xc}u;
    for (var j = 0u; j < {bm * bk // 64}u; j = j + 1u) {{
      let r = t / {bk}u + j * {64 // bk}u;
      let iy = y0[j] + dy;
      let ix = x0[j] + dx;
      var v = 0.0;
      if ({k_test}u32(iy) < {h}u && u32(ix) < {wd}u) {{ v = x_[xb[j] + xk + u32(iy) * {xh}u + u32(ix) * {xw}u]; }}
      ta[{a_row}] = v;
    }}"""
    bindings = [("x_", "f32", False), ("w_", "f32", False)]
    if w.kind == "constant":  # rearranged at build(): [G][Kp][OGp], zero-padded, read without tests
        filt = Derived(w, packed_filter(perm, groups, kp, ogp), ("conv2d.tiled", tuple(perm), groups, kp, ogp))
        b_setup = f"  let wb = g * {kp * ogp}u + o0 + bc;"
        b_load = f"      tb[kk * {bn // 4}u + bc / 4u][bc % 4u] = w_[wb + (k0 + kk) * {ogp}u];"
    else:
        filt = w
        b_setup = f"  let wb = (g * {og}u + min(o0 + bc, {og - 1}u)) * {wo}u;"
        value = (f"w_[wb + (kb / {kw * ig}u) * {wy}u + ((kb / {ig}u) % {kw}u) * {wx}u + (kb % {ig}u) * {wi}u]")
        b_load = (f"      let kb = k0 + kk;\n      var v = 0.0;\n"
                  f"      if (kb < {k}u) {{ v = {value}; }}\n      tb[kk * {bn // 4}u + bc / 4u][bc % 4u] = v;")
    text = TILED.substitute(
        a_size=bm * bk // 4, b_size=bk * bn // 4, bm4=bm // 4, bn4=bn // 4, act=activation_fn(call, "float32"), bm=bm, bn=bn, bk=bk,
        a_loads=bm * bk // 64, a_step=64 // bk, b_loads=bk * bn // 64, b_step=64 // bn, m_last=m - 1,
        pixels=oh * ow, ow=ow, m=m, k=k, og=og, row_decl=row_decl, row_init=row_init, a_load=a_load,
        b_setup=b_setup, b_load=b_load, tx_count=bn // 4,
        yn=yn, yc=yc, yh=yh, yw=yw, bias=" + b_[ch]" if bias is not None else "")
    operands = [x, filt]
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
