"""Data movement: reshape, identity copies, transpose, expand, slice, split,
concat, pad (constant), tile, reverse, gather and gatherElements (int32 or
uint32 indices). Every element is 4 bytes wide, so
these copy u32 words whatever the data type. Gather form (one thread per
output element computing its source coordinates) except concat, which
scatters each input into its place."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Decline, Step


def _check(call: Call) -> None:
    for operand in [*call.inputs, *call.outputs]:
        if operand.dtype not in wgsl.TYPES:
            raise Decline(f"{call.op} on {operand.dtype} has no WGSL kernel")


def _gather(src, dst, source_coords, valid=None, fill="0u") -> Step:
    """Copy into `dst`: output coordinate d reads input coordinate
    `source_coords(coords)[d]`; where `valid(coords)` is false, `fill`."""
    n = wgsl.count(dst.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", dst.shape)
    index = wgsl.dot(source_coords(coords), wgsl.strides(src.shape))
    if valid is None:
        body = f"{code}\n  y[i] = x_[{index}];"
    else:
        body = f"{code}\n  if ({valid(coords)}) {{ y[i] = x_[{index}]; }} else {{ y[i] = {fill}; }}"
    text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "u32", True)]), wgsl.elementwise_main(n, body, d)])
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
        text = "\n".join([wgsl.header([("x_", "u32", False), ("y", "u32", True)]), wgsl.elementwise_main(n, body, d)])
        steps.append(Step(text, [x, out], d))
        start += x.shape[axis]
    return steps


def pad(call: Call) -> list:
    _check(call)
    if call.attrs["mode"] != "constant":
        raise Decline(f"pad mode {call.attrs['mode']} has no WGSL kernel")
    x, = call.inputs
    pads = call.attrs["pads"]
    fill = f"bitcast<u32>({wgsl.literal(call.attrs['value'], x.dtype)})"
    src = lambda c: [f"({v} - {b}u)" for v, (b, _) in zip(c, pads)]  # noqa: E731
    valid = lambda c: " && ".join([f"{v} >= {b}u && {v} < {b + size}u"  # noqa: E731
                                   for v, (b, _), size in zip(c, pads, x.shape)] or ["true"])
    return [_gather(x, call.outputs[0], src, valid, fill)]


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


def _index(call: Call, value: str, dim: int) -> str:
    """An index read from the indices operand, wrapped once if negative, then
    clamped into [0, dim - 1] (the ops' rule, py/webnn_core/ops/indexing.py)."""
    if call.inputs[1].dtype == "int32":
        return f"u32(clamp(select({value}, {value} + {dim}i, {value} < 0i), 0i, {dim - 1}i))"
    return f"min({value}, {dim - 1}u)"


def _gather_like(call: Call, index_of) -> list:
    x, indices = call.inputs
    out, = call.outputs
    if x.dtype not in wgsl.TYPES or indices.dtype not in ("int32", "uint32"):
        raise Decline(f"{call.op} of {x.dtype} with {indices.dtype} indices has no WGSL kernel")
    axis = call.attrs["axis"]
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", out.shape)
    source, at = index_of(coords, axis)
    index = wgsl.dot(source, wgsl.strides(x.shape))
    ity = wgsl.wgsl_type(indices.dtype)
    body = f"{code}\n  let k = idx_[{at}];\n  let j = {_index(call, 'k', x.shape[axis])};\n  y[i] = x_[{index}];"
    text = "\n".join([wgsl.header([("x_", "u32", False), ("idx_", ity, False), ("y", "u32", True)]),
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


KERNELS = {"gather": gather, "gatherElements": gather_elements, "reshape": reshape, "transpose": transpose, "expand": expand, "slice": slice_, "split": split,
           "concat": concat, "pad": pad, "tile": tile, "reverse": reverse}
