"""Shape and data-movement ops: reshape, transpose, concat, slice, expand, split,
pad, tile, reverse, triangular, where. All are bit-exact copies of input
elements, so every data type (4-bit ones included) is accepted."""
from __future__ import annotations

import numpy as np

from ..dtypes import cast_number, element_count
from ..registry import Inferred, Op, check, register
from ._common import ALL_TYPES, broadcast_shapes, can_broadcast_to, check_axes, check_axis

ANY4 = ALL_TYPES  # data movement is bit-exact, so the 4-bit types work too
MAX_DIMENSION = 2**32 - 1


class _SingleInput(Op):
    params = ("input",)
    limits = {"input": ANY4, "output": ANY4}


@register
class Reshape(_SingleInput):
    name = "reshape"
    params = ("input", "newShape")

    def infer(self, input, newShape):
        new = tuple(newShape)
        check(element_count(new) == element_count(input.shape),
              f"newShape {list(new)} has {element_count(new)} elements, the input has {element_count(input.shape)}")
        return Inferred([input], [(input.dtype, new)], {"shape": new})

    def compute(self, attrs, x):
        return x.reshape(attrs["shape"])


@register
class Transpose(_SingleInput):
    name = "transpose"

    def infer(self, input, permutation=None):
        rank = len(input.shape)
        perm = tuple(range(rank - 1, -1, -1)) if permutation is None else tuple(permutation)
        check(len(perm) == rank, f"permutation {list(perm)} must have {rank} entries")
        check(sorted(perm) == list(range(rank)), f"permutation {list(perm)} is not a permutation of 0..{rank - 1}")
        return Inferred([input], [(input.dtype, tuple(input.shape[p] for p in perm))], {"perm": perm})

    def compute(self, attrs, x):
        return np.transpose(x, attrs["perm"])


@register
class Concat(Op):
    name = "concat"
    params = ("inputs", "axis")
    limits = {"inputs": ANY4, "output": ANY4}

    def infer(self, inputs, axis):
        check(len(inputs) > 0, "inputs must not be empty")
        first = inputs[0]
        rank = len(first.shape)
        check_axis(axis, rank)
        total = 0
        for x in inputs:
            check(x.dtype == first.dtype, "all inputs must have the same data type")
            check(len(x.shape) == rank, "all inputs must have the same rank")
            for d in range(rank):
                if d != axis:
                    check(x.shape[d] == first.shape[d], f"input shapes {list(first.shape)} and {list(x.shape)} differ outside axis {axis}")
            total += x.shape[axis]
        shape = first.shape[:axis] + (total,) + first.shape[axis + 1:]
        return Inferred(list(inputs), [(first.dtype, shape)], {"axis": axis})

    def compute(self, attrs, *xs):
        return np.concatenate(xs, axis=attrs["axis"])


@register
class Slice(_SingleInput):
    name = "slice"
    params = ("input", "starts", "sizes")

    def infer(self, input, starts, sizes, strides=None):
        rank = len(input.shape)
        check(len(starts) == rank and len(sizes) == rank, f"starts and sizes must have {rank} entries")
        strides = [1] * rank if strides is None else list(strides)
        check(len(strides) == rank, f"strides must have {rank} entries")
        out = []
        for d in range(rank):
            check(sizes[d] > 0, f"sizes[{d}] must be > 0")
            check(strides[d] >= 1, f"strides[{d}] must be >= 1")
            check(starts[d] < input.shape[d] and starts[d] + sizes[d] <= input.shape[d],
                  f"the slice [{starts[d]}, {starts[d] + sizes[d]}) is out of bounds for dimension {d} of size {input.shape[d]}")
            out.append(-(-sizes[d] // strides[d]))
        attrs = {"index": tuple(slice(s, s + n, k) for s, n, k in zip(starts, sizes, strides))}
        return Inferred([input], [(input.dtype, tuple(out))], attrs)

    def compute(self, attrs, x):
        return x[attrs["index"]]


@register
class Expand(_SingleInput):
    name = "expand"
    params = ("input", "newShape")

    def infer(self, input, newShape):
        new = tuple(newShape)
        check(can_broadcast_to(input.shape, new), f"input shape {list(input.shape)} does not broadcast to {list(new)}")
        return Inferred([input], [(input.dtype, new)], {"shape": new})

    def compute(self, attrs, x):
        return np.broadcast_to(x, attrs["shape"])


@register
class Split(Op):
    name = "split"
    params = ("input", "splits")
    limits = {"input": ANY4, "outputs": ANY4}
    returns_sequence = True

    def infer(self, input, splits, axis=0):
        rank = len(input.shape)
        check_axis(axis, rank)
        dim = input.shape[axis]
        if isinstance(splits, int):
            check(splits > 0 and dim % splits == 0, f"splits {splits} must evenly divide dimension {axis} ({dim})")
            sizes = [dim // splits] * splits
        else:
            sizes = list(splits)
            check(len(sizes) > 0 and all(s > 0 for s in sizes) and sum(sizes) == dim,
                  f"splits {sizes} must be positive and sum to dimension {axis} ({dim})")
        outs = [(input.dtype, input.shape[:axis] + (s,) + input.shape[axis + 1:]) for s in sizes]
        return Inferred([input], outs, {"axis": axis, "offsets": list(np.cumsum(sizes)[:-1])})

    def compute(self, attrs, x):
        return np.split(x, attrs["offsets"], axis=attrs["axis"])


_NUMPY_PAD_MODE = {"constant": "constant", "edge": "edge", "reflection": "reflect", "symmetric": "symmetric"}


@register
class Pad(_SingleInput):
    """Constant or mirrored borders; `value` is an MLNumber cast to the input type."""

    name = "pad"
    params = ("input", "beginningPadding", "endingPadding")

    def infer(self, input, beginningPadding, endingPadding, mode="constant", value=0):
        rank = len(input.shape)
        check(rank > 0, "input must not be a scalar")
        begin, end = list(beginningPadding), list(endingPadding)
        check(len(begin) == rank and len(end) == rank,
              f"beginningPadding and endingPadding must have {rank} entries")
        check(mode in _NUMPY_PAD_MODE, f"unknown padding mode {mode!r}")
        out = []
        for d, size in enumerate(input.shape):
            if mode == "reflection":
                check(begin[d] < size and end[d] < size,
                      f"reflection padding of dimension {d} must be smaller than its size {size}")
            out.append(begin[d] + size + end[d])
            check(out[-1] <= MAX_DIMENSION, f"padded dimension {d} ({out[-1]}) is too large")
        attrs = {"pads": tuple(zip(begin, end)), "mode": mode, "value": cast_number(value, input.dtype)}
        return Inferred([input], [(input.dtype, tuple(out))], attrs)

    def compute(self, attrs, x):
        mode = _NUMPY_PAD_MODE[attrs["mode"]]
        if mode == "constant":
            return np.pad(x, attrs["pads"], mode="constant", constant_values=attrs["value"])
        return np.pad(x, attrs["pads"], mode=mode)


@register
class Tile(_SingleInput):
    """Repeat the input `repetitions[d]` times along each dimension d."""

    name = "tile"
    params = ("input", "repetitions")

    def infer(self, input, repetitions):
        reps = tuple(repetitions)
        rank = len(input.shape)
        check(len(reps) == rank, f"repetitions {list(reps)} must have {rank} entries")
        check(all(r > 0 for r in reps), f"repetitions {list(reps)} must all be > 0")
        out = tuple(d * r for d, r in zip(input.shape, reps))
        check(all(d <= MAX_DIMENSION for d in out), f"the tiled shape {list(out)} overflows")
        return Inferred([input], [(input.dtype, out)], {"reps": reps})

    def compute(self, attrs, x):
        return np.tile(x, attrs["reps"])


@register
class Reverse(_SingleInput):
    """Reverse along `axes` (absent: every axis; []: nothing)."""

    name = "reverse"

    def infer(self, input, axes=None):
        rank = len(input.shape)
        axes = tuple(range(rank)) if axes is None else tuple(axes)
        check_axes(axes, rank)
        return Inferred([input], [(input.dtype, input.shape)], {"axes": axes})

    def compute(self, attrs, x):
        index = [slice(None)] * x.ndim
        for a in attrs["axes"]:
            index[a] = slice(None, None, -1)
        return x[tuple(index)]


@register
class Triangular(_SingleInput):
    """Keep the upper (col-row >= diagonal) or lower (col-row <= diagonal) part of
    the last two dimensions, zero the rest."""

    name = "triangular"

    def infer(self, input, upper=True, diagonal=0):
        check(len(input.shape) >= 2, "input must have rank 2 or more")
        return Inferred([input], [(input.dtype, input.shape)], {"upper": bool(upper), "diagonal": int(diagonal)})

    def compute(self, attrs, x):
        rows, cols = x.shape[-2:]
        offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
        keep = offset >= attrs["diagonal"] if attrs["upper"] else offset <= attrs["diagonal"]
        return np.where(keep, x, np.zeros((), x.dtype))


@register
class Where(Op):
    """Element-wise select; the three operands broadcast bidirectionally together."""

    name = "where"
    params = ("condition", "trueValue", "falseValue")
    limits = {"condition": ("uint8",), "trueValue": ANY4, "falseValue": ANY4, "output": ANY4}

    def infer(self, condition, trueValue, falseValue):
        check(trueValue.dtype == falseValue.dtype,
              f"trueValue ({trueValue.dtype}) and falseValue ({falseValue.dtype}) must have the same data type")
        values = broadcast_shapes(trueValue.shape, falseValue.shape, "trueValue and falseValue")
        out = broadcast_shapes(condition.shape, values, "condition and values")
        return Inferred([condition, trueValue, falseValue], [(trueValue.dtype, out)])

    def compute(self, attrs, condition, t, f):
        return np.where(condition != 0, t, f)
