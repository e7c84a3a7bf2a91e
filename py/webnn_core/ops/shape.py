"""Shape and data-movement ops: reshape, transpose, concat, slice, expand, split."""
from __future__ import annotations

import numpy as np

from ..dtypes import element_count
from ..registry import Inferred, Op, check, register
from ._common import ALL_TYPES, can_broadcast_to, check_axis

ANY4 = ALL_TYPES  # data movement is bit-exact, so the 4-bit types work too


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
