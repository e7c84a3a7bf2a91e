"""gather, gatherElements, gatherND, scatterElements, scatterND.

Index rule (digest §2.2, verified against WPT): a negative index wraps once
(i += dim), then is clamped to [0, dim-1], so kernels never read or write out
of bounds and never raise at run time.
"""
from __future__ import annotations

import numpy as np

from ..registry import Inferred, Op, check, register
from ._common import ALL_TYPES, check_axis

INDICES = ("int32", "uint32", "int64")


def clamp_indices(indices: np.ndarray, dim) -> np.ndarray:
    """Wrap negatives once, then clamp into [0, dim-1]; `dim` may be an array
    broadcasting against `indices` (one size per index column for the ND ops)."""
    i = indices.astype(np.int64)
    i = np.where(i < 0, i + dim, i)
    # intp: numpy indexes with the platform word (int32 in wasm32 Pyodide, which refuses int64).
    return np.clip(i, 0, np.asarray(dim) - 1).astype(np.intp)


class _Gather(Op):
    params = ("input", "indices")
    limits = {"input": ALL_TYPES, "indices": INDICES, "output": ALL_TYPES}


class _Scatter(Op):
    params = ("input", "indices", "updates")
    limits = {"input": ALL_TYPES, "indices": INDICES, "updates": ALL_TYPES, "output": ALL_TYPES}

    @staticmethod
    def check_updates(input, updates):
        check(updates.dtype == input.dtype,
              f"updates ({updates.dtype}) must have the input's data type ({input.dtype})")


def _nd_split(input, indices):
    """Shared gatherND/scatterND checks; returns k = indices.shape[-1]."""
    check(len(input.shape) >= 1, "input must not be a scalar")
    check(len(indices.shape) >= 1, "indices must not be a scalar")
    k = indices.shape[-1]
    check(k <= len(input.shape), f"indices.shape[-1] ({k}) must not exceed the input rank {len(input.shape)}")
    return k


def _nd_index(x, indices, k):
    """Clamped index tuple selecting the [prod(indices.shape[:-1])] slices of x."""
    flat = clamp_indices(indices.reshape(-1, k), np.array(x.shape[:k], dtype=np.int64))
    return tuple(flat.T)


@register
class Gather(_Gather):
    """out = input indexed along `axis` by every entry of indices."""

    name = "gather"

    def infer(self, input, indices, axis=0):
        check_axis(axis, len(input.shape))
        shape = input.shape[:axis] + indices.shape + input.shape[axis + 1:]
        return Inferred([input, indices], [(input.dtype, shape)], {"axis": axis})

    def compute(self, attrs, x, indices):
        axis = attrs["axis"]
        return np.take(x, clamp_indices(indices, x.shape[axis]), axis=axis)


@register
class GatherElements(_Gather):
    """out[p] = input[p with p[axis] := indices[p]]; out has the indices' shape."""

    name = "gatherElements"

    def infer(self, input, indices, axis=0):
        rank = len(input.shape)
        check_axis(axis, rank)
        check(len(indices.shape) == rank, f"indices must have the input's rank {rank}")
        for d in range(rank):
            check(d == axis or indices.shape[d] == input.shape[d],
                  f"indices shape {list(indices.shape)} must match input shape {list(input.shape)} except on axis {axis}")
        return Inferred([input, indices], [(input.dtype, indices.shape)], {"axis": axis})

    def compute(self, attrs, x, indices):
        axis = attrs["axis"]
        return np.take_along_axis(x, clamp_indices(indices, x.shape[axis]), axis=axis)


@register
class GatherND(_Gather):
    """Each row of the last indices dimension addresses a slice input[i0, .., ik-1]."""

    name = "gatherND"

    def infer(self, input, indices):
        k = _nd_split(input, indices)
        shape = indices.shape[:-1] + input.shape[k:]
        return Inferred([input, indices], [(input.dtype, shape)], {"k": k})

    def compute(self, attrs, x, indices):
        return x[_nd_index(x, indices, attrs["k"])]


@register
class ScatterElements(_Scatter):
    """A copy of input with out[p with p[axis] := indices[p]] = updates[p]."""

    name = "scatterElements"

    def infer(self, input, indices, updates, axis=0):
        self.check_updates(input, updates)
        rank = len(input.shape)
        check_axis(axis, rank)
        check(len(indices.shape) == rank, f"indices must have the input's rank {rank}")
        check(updates.shape == indices.shape,
              f"updates shape {list(updates.shape)} must equal indices shape {list(indices.shape)}")
        for d in range(rank):
            check(d == axis or indices.shape[d] == input.shape[d],
                  f"indices shape {list(indices.shape)} must match input shape {list(input.shape)} except on axis {axis}")
        return Inferred([input, indices, updates], [(input.dtype, input.shape)], {"axis": axis})

    def compute(self, attrs, x, indices, updates):
        axis = attrs["axis"]
        out = x.copy()
        np.put_along_axis(out, clamp_indices(indices, x.shape[axis]), updates, axis=axis)
        return out


@register
class ScatterND(_Scatter):
    """A copy of input whose slices addressed by indices rows are replaced by updates."""

    name = "scatterND"

    def infer(self, input, indices, updates):
        self.check_updates(input, updates)
        k = _nd_split(input, indices)
        want = indices.shape[:-1] + input.shape[k:]
        check(updates.shape == want, f"updates shape {list(updates.shape)} must be {list(want)}")
        return Inferred([input, indices, updates], [(input.dtype, input.shape)], {"k": k})

    def compute(self, attrs, x, indices, updates):
        k = attrs["k"]
        out = x.copy()
        out[_nd_index(x, indices, k)] = updates.reshape((-1,) + x.shape[k:])
        return out
