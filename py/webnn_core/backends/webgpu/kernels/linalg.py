"""matmul and gemm: one tiled kernel (16x16 output tiles, A and B tiles
staged in workgroup memory), batched with broadcasting for matmul, with
gemm's transposes, alpha, beta*C and a fused activation as its epilogue."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Decline, Step
from .elementwise import activation_fn

TILE = 16


def _tiled(m, n, k, batch_shape, a_index, b_index, epilogue, bindings, call, extra_header=()):
    """The tiled kernel: `a_index(row, kk)`/`b_index(kk, col)` give element
    indices (WGSL expressions, with `a0`/`b0` the batch offsets), `epilogue`
    turns `acc` into the stored value."""
    batches = wgsl.count(batch_shape)
    if batches > wgsl.MAX_GROUPS:
        raise Decline(f"{call.op}: {batches} batches exceed one dispatch")
    code, coords = wgsl.unravel("wg.z", batch_shape, "bz") if batch_shape else ("", [])
    a_batch = wgsl.dot(coords, [s * m * k for s in wgsl.broadcast_strides(call.inputs[0].shape[:-2], batch_shape)]) \
        if batch_shape else "0u"
    b_batch = wgsl.dot(coords, [s * k * n for s in wgsl.broadcast_strides(call.inputs[1].shape[:-2], batch_shape)]) \
        if batch_shape else "0u"
    t = TILE
    act = activation_fn(call, "float32")
    body = f"""var<workgroup> ta: array<f32, {t * t}>;
var<workgroup> tb: array<f32, {t * t}>;
{act}
@compute @workgroup_size({t}, {t})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{
  let row = wg.y * {t}u + lid.y;
  let col = wg.x * {t}u + lid.x;
{code}
  let a0 = {a_batch};
  let b0 = {b_batch};
  var acc = 0.0;
  for (var t0 = 0u; t0 < {k}u; t0 = t0 + {t}u) {{
    let ak = t0 + lid.x;
    var av = 0.0;
    if (row < {m}u && ak < {k}u) {{ av = a[{a_index('row', 'ak')}]; }}
    ta[lid.y * {t}u + lid.x] = av;
    let bk = t0 + lid.y;
    var bv = 0.0;
    if (bk < {k}u && col < {n}u) {{ bv = b[{b_index('bk', 'col')}]; }}
    tb[lid.y * {t}u + lid.x] = bv;
    workgroupBarrier();
    for (var kk = 0u; kk < {t}u; kk = kk + 1u) {{
      acc = acc + ta[lid.y * {t}u + kk] * tb[kk * {t}u + lid.x];
    }}
    workgroupBarrier();
  }}
  if (row < {m}u && col < {n}u) {{
    y[wg.z * {m * n}u + row * {n}u + col] = act_({epilogue});
  }}
}}
"""
    text = "\n".join([wgsl.header(bindings), *extra_header, body])
    return Step(text, None, [-(-n // t), -(-m // t), max(1, batches)])


def matmul(call: Call) -> list:
    call.require(("float32",))
    a, b = call.inputs
    out, = call.outputs
    m, k = a.shape[-2:]
    n = b.shape[-1]
    batch_shape = tuple(out.shape[:-2])
    step = _tiled(m, n, k, batch_shape, lambda r, c: f"a0 + {r} * {k}u + {c}", lambda r, c: f"b0 + {r} * {n}u + {c}",
                  "acc", [("a", "f32", False), ("b", "f32", False), ("y", "f32", True)], call)
    step.bindings = [a, b, out]
    return [step]


def gemm(call: Call) -> list:
    call.require(("float32",))
    a, b = call.inputs[:2]
    c = call.inputs[2] if len(call.inputs) > 2 else None
    out, = call.outputs
    m, n = out.shape
    k = a.shape[0] if call.attrs["aT"] else a.shape[1]
    a_index = (lambda r, kk: f"{kk} * {m}u + {r}") if call.attrs["aT"] else (lambda r, kk: f"{r} * {k}u + {kk}")
    b_index = (lambda kk, col: f"{col} * {k}u + {kk}") if call.attrs["bT"] else (lambda kk, col: f"{kk} * {n}u + {col}")
    value = "acc" if call.attrs["alpha"] == 1.0 else f"{wgsl.literal(call.attrs['alpha'], 'float32')} * acc"
    bindings = [("a", "f32", False), ("b", "f32", False)]
    operands = [a, b]
    if c is not None and call.attrs["beta"] != 0:
        st = wgsl.broadcast_strides(c.shape, (m, n))
        index = wgsl.dot(["row", "col"], st)
        beta = "" if call.attrs["beta"] == 1.0 else f"{wgsl.literal(call.attrs['beta'], 'float32')} * "
        value = f"{value} + {beta}c[{index}]"
        bindings.append(("c", "f32", False))
        operands.append(c)
    bindings.append(("y", "f32", True))
    step = _tiled(m, n, k, (), a_index, b_index, value, bindings, call)
    step.bindings = [*operands, out]
    return [step]


KERNELS = {"matmul": matmul, "gemm": gemm}
