"""resample2d (SPEC §7.7.36): half-pixel centres with scale = output size /
input size (also when `scales` were given, as the ED computes it). Source
coordinate u = (o + 0.5) / scale - 0.5 clamped to [0, n - 1]; nearest takes
ceil(u - 0.5) (ties go down), linear is separable bilinear."""
from __future__ import annotations

import math

import numpy as np

from ..registry import Inferred, Op, check, register
from ._common import FLOAT
from ._window import MAX_UINT32


def _nearest(x, axis, out_size):
    n = x.shape[axis]
    # ceil(u - 0.5) in exact integers: u - 0.5 = ((2o + 1) * n - 2 * out) / (2 * out).
    num = (2 * np.arange(out_size, dtype=np.int64) + 1) * n - 2 * out_size
    src = np.clip(-((-num) // (2 * out_size)), 0, n - 1).astype(np.intp)
    return np.take(x, src, axis=axis)


def _linear(x, axis, out_size):
    n = x.shape[axis]
    pos = np.clip((np.arange(out_size) + 0.5) * (n / out_size) - 0.5, 0, n - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    shape = [1] * x.ndim
    shape[axis] = out_size
    t = (pos - lo).reshape(shape)
    return np.take(x, lo, axis=axis) * (1 - t) + np.take(x, hi, axis=axis) * t


@register
class Resample2d(Op):
    name = "resample2d"
    limits = {"input": FLOAT, "output": FLOAT}

    def infer(self, input, mode="nearest-neighbor", scales=None, sizes=None, axes=None):
        rank = len(input.shape)
        check(rank == 4, "input must be 4-D")
        check(mode in ("nearest-neighbor", "linear"), f"unknown mode {mode!r}")
        scales = [1.0, 1.0] if scales is None else [float(s) for s in scales]
        check(len(scales) == 2, f"scales must have 2 entries, got {len(scales)}")
        check(all(s > 0 and math.isfinite(s) for s in scales), f"scales must be > 0, got {scales}")
        axes = [2, 3] if axes is None else list(axes)
        check(len(axes) == 2, f"axes must have 2 entries, got {len(axes)}")
        check(all(0 <= a < rank for a in axes), f"axes {axes} must be < the input rank {rank}")
        check(axes[0] != axes[1], f"axes {axes} contain duplicates")
        shape = list(input.shape)
        if sizes is not None:
            sizes = list(sizes)
            check(len(sizes) == 2, f"sizes must have 2 entries, got {len(sizes)}")
            check(all(s >= 1 for s in sizes), f"sizes must be > 0, got {sizes}")
            scales = [s / input.shape[a] for s, a in zip(sizes, axes)]  # sizes override scales
        else:
            sizes = [math.floor(input.shape[a] * s) for a, s in zip(axes, scales)]
            for a, s in zip(axes, sizes):
                check(s >= 1, f"the scale for axis {a} is too small: output size {s}")
        for a, s in zip(axes, sizes):
            check(s <= MAX_UINT32, f"the output size along axis {a} ({s}) is too large")
            shape[a] = s
        attrs = {"mode": mode, "axes": axes, "sizes": sizes, "scales": scales}
        return Inferred([input], [(input.dtype, tuple(shape))], attrs)

    def compute(self, attrs, x):
        sample = _linear if attrs["mode"] == "linear" else _nearest
        y = x.astype(np.float64) if attrs["mode"] == "linear" else x
        for axis, size in zip(attrs["axes"], attrs["sizes"]):
            y = sample(y, axis, size)
        return y
