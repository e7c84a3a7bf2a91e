"""Data movement: reshape, identity copies, transpose, expand, slice, split,
concat, pad (every mode), tile, reverse, triangular, gather, gatherElements,
gatherND, scatterElements and scatterND (int32 or uint32 indices). Every element is 4 bytes wide, so
these copy u32 words whatever the data type, except int64/uint64 elements, which
move as vec2<u32> (both words; kernels/int64.py). Gather form (one thread per
output element computing its source coordinates) except concat, which
scatters each input into its place."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Decline, Step
from .int64 import INT64


DATA_TYPES = (*wgsl.TYPES, *INT64)


def _check(call: Call) -> None:
    for operand in [*call.inputs, *call.outputs]:
        if operand.dtype not in DATA_TYPES:
            raise Decline(f"{call.op} on {operand.dtype} has no WGSL kernel")


def _element(operand) -> str:
    """The WGSL type one element moves as: both words of a 64-bit integer, else a word."""
    return "vec2<u32>" if operand.dtype in INT64 else "u32"


def _zero(operand) -> str:
    return "vec2<u32>(0u)" if operand.dtype in INT64 else "0u"


def _gather(src, dst, source_coords, valid=None, fill=None) -> Step:
    """Copy into `dst`: output coordinate d reads input coordinate
    `source_coords(coords)[d]`; where `valid(coords)` is false, `fill` (default 0)."""
    fill = fill or _zero(dst)
    n = wgsl.count(dst.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", dst.shape)
    index = wgsl.dot(source_coords(coords), wgsl.strides(src.shape))
    if valid is None:
        body = f"{code}\n  y[i] = x_[{index}];"
    else:
        body = f"{code}\n  if ({valid(coords)}) {{ y[i] = x_[{index}]; }} else {{ y[i] = {fill}; }}"
    ety = _element(dst)
    text = "\n".join([wgsl.header([("x_", ety, False), ("y", ety, True)]), wgsl.elementwise_main(n, body, d)])
    return Step(text, [src, dst], d)


def flat_copy(src, dst) -> Step:
    """Word for word (any data type: packed ones included)."""
    n = wgsl.buffer_bytes(dst.dtype, dst.shape) // 4
    d = wgsl.dispatch_1d(n)
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "u32", True)]),
                      wgsl.elementwise_main(n, "  y[i] = x_[i];", d)])
    return Step(text, [src, dst], d)


def reshape(call: Call) -> list:
    return [flat_copy(call.inputs[0], call.outputs[0])]


def transpose(call: Call) -> list:
    _check(call)
    perm = call.attrs["perm"]
    x, = call.inputs
    # Output coordinate d is input coordinate perm[d].
    def source(coords):
        src = ["0u"] * len(perm)
        for d, p in enumerate(perm):
            src[p] = coords[d]
        return src
    return [_gather(x, call.outputs[0], source)]


def expand(call: Call) -> list:
    _check(call)
    x, = call.inputs
    out, = call.outputs
    shape = (1,) * (len(out.shape) - len(x.shape)) + tuple(x.shape)
    lead = len(out.shape) - len(x.shape)
    return [_gather(x, out, lambda c: [("0u" if shape[d] == 1 else c[d]) for d in range(lead, len(out.shape))])]


def slice_(call: Call) -> list:
    _check(call)
    index = call.attrs["index"]
    return [_gather(call.inputs[0], call.outputs[0],
                    lambda c: [f"({c[d]} * {s.step or 1}u + {s.start}u)" for d, s in enumerate(index)])]


def split(call: Call) -> list:
    _check(call)
    axis = call.attrs["axis"]
    x, = call.inputs
    steps, start = [], 0
    for out in call.outputs:
        offset = start
        steps.append(_gather(x, out, lambda c, o=offset: [f"({v} + {o}u)" if d == axis else v for d, v in enumerate(c)]))
        start += out.shape[axis]
    return steps


def concat(call: Call) -> list:
    _check(call)
    axis = call.attrs["axis"]
    out, = call.outputs
    ost = wgsl.strides(out.shape)
    steps, start = [], 0
    for x in call.inputs:
        n = wgsl.count(x.shape)
        d = wgsl.dispatch_1d(n)
        code, coords = wgsl.unravel("i", x.shape)
        index = wgsl.dot(coords, ost, start * ost[axis])
        body = f"{code}\n  y[{index}] = x_[i];"
        ety = _element(out)
        text = "\n".join([wgsl.header([("x_", ety, False), ("y", ety, True)]), wgsl.elementwise_main(n, body, d)])
        steps.append(Step(text, [x, out], d))
        start += x.shape[axis]
    return steps


def _mirror(v: str, begin: int, size: int, mode: str) -> str:
    """The input coordinate (u32) output coordinate `v` reads in a mirrored
    or edge padding mode (numpy's reflect / symmetric / edge, any width)."""
    p = f"(i32({v}) - {begin})"
    if size == 1 or mode == "edge":
        return f"u32(clamp({p}, 0, {size - 1}))"
    if mode == "reflection":  # period 2(size-1), the edge not repeated
        period = 2 * (size - 1)
        m = f"(({p} % {period} + {period}) % {period})"
        return f"u32(select({m}, {period} - {m}, {m} >= {size}))"
    period = 2 * size  # symmetric: the edge repeated
    m = f"(({p} % {period} + {period}) % {period})"
    return f"u32(select({m}, {period - 1} - {m}, {m} >= {size}))"


def pad(call: Call) -> list:
    _check(call)
    x, = call.inputs
    pads = call.attrs["pads"]
    mode = call.attrs["mode"]
    if mode != "constant":
        return [_gather(x, call.outputs[0], lambda c: [_mirror(v, b, size, mode) if size > 1 or b else v
                                                       for v, (b, _), size in zip(c, pads, x.shape)])]
    if x.dtype in INT64:
        bits = int(call.attrs["value"]) & 0xFFFFFFFFFFFFFFFF
        fill = f"vec2<u32>({bits & 0xFFFFFFFF}u, {bits >> 32}u)"
    else:
        fill = f"bitcast<u32>({wgsl.literal(call.attrs['value'], x.dtype)})"
    src = lambda c: [f"({v} - {b}u)" for v, (b, _) in zip(c, pads)]  # noqa: E731
    valid = lambda c: " && ".join([f"{v} >= {b}u && {v} < {b + size}u"  # noqa: E731
                                   for v, (b, _), size in zip(c, pads, x.shape)] or ["true"])
    return [_gather(x, call.outputs[0], src, valid, fill)]


def triangular(call: Call) -> list:
    _check(call)
    x, = call.inputs
    out, = call.outputs
    diagonal, upper = call.attrs["diagonal"], call.attrs["upper"]

    def keep(c):
        offset = f"(i32({c[-1]}) - i32({c[-2]}))"
        return f"{offset} {'>=' if upper else '<='} {diagonal}"
    return [_gather(x, out, lambda c: list(c), keep)]


def tile(call: Call) -> list:
    _check(call)
    x, = call.inputs
    return [_gather(x, call.outputs[0], lambda c: [f"({v} % {size}u)" if size > 1 else "0u"
                                                   for v, size in zip(c, x.shape)])]


def reverse(call: Call) -> list:
    _check(call)
    x, = call.inputs
    axes = set(call.attrs["axes"])
    return [_gather(x, call.outputs[0], lambda c: [f"({size - 1}u - {v})" if d in axes and size > 1 else v
                                                   for d, (v, size) in enumerate(zip(c, x.shape))])]


def _index(call: Call, value: str, dim: int, indices=None) -> str:
    """An index read from the indices operand, wrapped once if negative, then
    clamped into [0, dim - 1] (the ops' rule, py/webnn_core/ops/indexing.py)."""
    if (indices or call.inputs[1]).dtype == "int32":
        return f"u32(clamp(select({value}, {value} + {dim}i, {value} < 0i), 0i, {dim - 1}i))"
    return f"min({value}, {dim - 1}u)"


def _indices_type(call: Call, indices):
    if indices.dtype not in ("int32", "uint32"):
        raise Decline(f"{call.op} with {indices.dtype} indices has no WGSL kernel")
    return wgsl.wgsl_type(indices.dtype)


def gather_nd(call: Call) -> list:
    x, indices = call.inputs
    for operand in (x, *call.outputs):
        if operand.dtype not in DATA_TYPES:
            raise Decline(f"{call.op} on {operand.dtype} has no WGSL kernel")
    out, = call.outputs
    ity = _indices_type(call, indices)
    k = call.attrs["k"]
    inner = wgsl.count(x.shape[k:])
    xst = wgsl.strides(x.shape)
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    lines = [f"  let row = i / {inner}u;", f"  var at = i % {inner}u;"]
    for j in range(k):
        lines.append(f"  let k{j} = idx_[row * {k}u + {j}u];")
        lines.append(f"  at = at + {_index(call, f'k{j}', x.shape[j])} * {xst[j]}u;")
    lines.append("  y[i] = x_[at];")
    ety = _element(out)
    text = "\n".join([wgsl.header([("x_", ety, False), ("idx_", ity, False), ("y", ety, True)]),
                      wgsl.elementwise_main(n, "\n".join(lines), d)])
    return [Step(text, [x, indices, out], d)]


def _scatter(call: Call, target_of) -> list:
    """A copy of the input, then each output element takes the last update
    addressed to it (numpy's order: later updates win), found by scanning the
    updates backwards: deterministic, no two threads write one element.
    `target_of(u)` gives (WGSL lines, flat output index `t`) of update u."""
    x, indices, updates = call.inputs
    out, = call.outputs
    for operand in (x, updates, out):
        if operand.dtype not in DATA_TYPES:
            raise Decline(f"{call.op} on {operand.dtype} has no WGSL kernel")
    ity = _indices_type(call, indices)
    n = wgsl.count(out.shape)
    m = wgsl.count(updates.shape)
    d = wgsl.dispatch_1d(n)
    code, target = target_of("u")
    body = f"""  var v = x_[i];
  for (var j = 0u; j < {m}u; j = j + 1u) {{
    let u = {m - 1}u - j;
{code}
    if ({target} == i) {{ v = upd_[u]; break; }}
  }}
  y[i] = v;"""
    ety = _element(out)
    text = "\n".join([wgsl.header([("x_", ety, False), ("idx_", ity, False), ("upd_", ety, False),
                                   ("y", ety, True)]), wgsl.elementwise_main(n, body, d)])
    return [Step(text, [x, indices, updates, out], d)]


def scatter_elements(call: Call) -> list:
    x, indices, _ = call.inputs
    axis = call.attrs["axis"]
    xst = wgsl.strides(x.shape)

    def target_of(u):
        code, coords = wgsl.unravel(u, indices.shape, "s")
        coords = list(coords)
        coords[axis] = f"{_index(call, 'q', x.shape[axis])}"
        return f"{code}\n    let q = idx_[{u}];", wgsl.dot(coords, xst)
    return _scatter(call, target_of)


def scatter_nd(call: Call) -> list:
    x, indices, _ = call.inputs
    k = call.attrs["k"]
    inner = wgsl.count(x.shape[k:])
    xst = wgsl.strides(x.shape)

    def target_of(u):
        lines = [f"    let row = {u} / {inner}u;", f"    var t = {u} % {inner}u;"]
        for j in range(k):
            lines.append(f"    let k{j} = idx_[row * {k}u + {j}u];")
            lines.append(f"    t = t + {_index(call, f'k{j}', x.shape[j])} * {xst[j]}u;")
        return "\n".join(lines), "t"
    return _scatter(call, target_of)


def _gather_like(call: Call, index_of) -> list:
    x, indices = call.inputs
    out, = call.outputs
    if x.dtype not in DATA_TYPES or indices.dtype not in ("int32", "uint32"):
        raise Decline(f"{call.op} of {x.dtype} with {indices.dtype} indices has no WGSL kernel")
    axis = call.attrs["axis"]
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", out.shape)
    source, at = index_of(coords, axis)
    index = wgsl.dot(source, wgsl.strides(x.shape))
    ity = wgsl.wgsl_type(indices.dtype)
    body = f"{code}\n  let k = idx_[{at}];\n  let j = {_index(call, 'k', x.shape[axis])};\n  y[i] = x_[{index}];"
    ety = _element(out)
    text = "\n".join([wgsl.header([("x_", ety, False), ("idx_", ity, False), ("y", ety, True)]),
                      wgsl.elementwise_main(n, body, d)])
    return [Step(text, [x, indices, out], d)]


def gather(call: Call) -> list:
    _, indices = call.inputs
    r = len(indices.shape)

    def index_of(c, axis):
        at = wgsl.dot(c[axis:axis + r], wgsl.strides(indices.shape))
        return c[:axis] + ["j"] + c[axis + r:], at
    return _gather_like(call, index_of)


def gather_elements(call: Call) -> list:
    _, indices = call.inputs
    return _gather_like(call, lambda c, axis: (c[:axis] + ["j"] + c[axis + 1:], wgsl.dot(c, wgsl.strides(indices.shape))))


KERNELS = {"gather": gather, "gatherElements": gather_elements, "gatherND": gather_nd,
           "scatterElements": scatter_elements, "scatterND": scatter_nd, "triangular": triangular, "reshape": reshape, "transpose": transpose, "expand": expand, "slice": slice_, "split": split,
           "concat": concat, "pad": pad, "tile": tile, "reverse": reverse}
