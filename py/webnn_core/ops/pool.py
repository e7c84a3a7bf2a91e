"""averagePool2d, l2Pool2d, maxPool2d (SPEC §7.9.23) with the WPT refinements:
padding is excluded from averages (also the ceil-mode overhang), outputSizes
must equal the floor or the ceil result and keeps the padding."""
from __future__ import annotations

import numpy as np

from ..registry import Inferred, Op, check, register
from ._common import ANY, FLOAT, compute_dtype
from ._window import check_padding, check_pair, from_nhwc, output_size, pad_nhwc, to_nhwc, windows


class Pool2d(Op):
    params = ("input",)

    def infer(self, input, windowDimensions=None, padding=None, strides=None, dilations=None,
              layout="nchw", outputShapeRounding="floor", outputSizes=None):
        check(len(input.shape) == 4, "input must be 4-D")
        if layout == "nchw":
            n, c, h, w = input.shape
        else:
            n, h, w, c = input.shape
        window = check_pair(windowDimensions, "windowDimensions", (h, w))
        padding = check_padding(padding)
        strides = check_pair(strides, "strides", (1, 1))
        dilations = check_pair(dilations, "dilations", (1, 1))
        if outputSizes is not None:
            check(len(outputSizes) == 2, "outputSizes must have 2 entries")
        floor_sizes, ceil_sizes = [], []
        for axis, size in enumerate((h, w)):
            args = (size, window[axis], strides[axis], dilations[axis], padding[2 * axis], padding[2 * axis + 1])
            floor_sizes.append(output_size(*args, ceil=False))
            ceil_sizes.append(output_size(*args, ceil=True))
        if outputSizes is None:
            sizes = ceil_sizes if outputShapeRounding == "ceil" else floor_sizes
        else:
            # SPEC: both dimensions rounded the same way (floor, floor) or (ceil, ceil), not mixed.
            sizes = [int(v) for v in outputSizes]
            check(sizes in (floor_sizes, ceil_sizes),
                  f"outputSizes {sizes} must be the floor-rounded {floor_sizes} or the ceil-rounded {ceil_sizes}")
        shape = (n, c, sizes[0], sizes[1]) if layout == "nchw" else (n, sizes[0], sizes[1], c)
        attrs = {"window": window, "padding": padding, "strides": strides, "dilations": dilations,
                 "layout": layout, "out_hw": tuple(sizes)}
        return Inferred([input], [(input.dtype, shape)], attrs)

    def compute(self, attrs, x):
        x = to_nhwc(compute_dtype(x), attrs["layout"])
        y = self.reduce(x, attrs)
        return from_nhwc(y, attrs["layout"])

    @staticmethod
    def _overhang(x, attrs):
        """Cells past the padded input that ceil-rounded windows reach."""
        extra = []
        for axis in range(2):
            k = (attrs["window"][axis] - 1) * attrs["dilations"][axis] + 1
            needed = (attrs["out_hw"][axis] - 1) * attrs["strides"][axis] + k
            have = x.shape[1 + axis] + attrs["padding"][2 * axis] + attrs["padding"][2 * axis + 1]
            extra.append(max(0, needed - have))
        return tuple(extra)

    def _windows(self, x, attrs, fill):
        xp = pad_nhwc(x, attrs["padding"], fill, self._overhang(x, attrs))
        return windows(xp, attrs["out_hw"], attrs["window"], attrs["strides"], attrs["dilations"])


def _valid_counts(x, attrs, pool):
    ones = np.ones((1,) + x.shape[1:3] + (1,), dtype=np.float32)
    return pool._windows(ones, attrs, 0).sum(axis=(3, 4))


@register
class AveragePool2d(Pool2d):
    name = "averagePool2d"
    limits = {"input": FLOAT, "output": FLOAT}

    def reduce(self, x, attrs):
        total = self._windows(x, attrs, 0).sum(axis=(3, 4), dtype=np.float64)
        # A window lying wholly in the padding averages nothing: 0, like l2Pool2d's empty sum.
        return total / np.maximum(_valid_counts(x, attrs, self), 1)


@register
class L2Pool2d(Pool2d):
    name = "l2Pool2d"
    limits = {"input": FLOAT, "output": FLOAT}

    def reduce(self, x, attrs):
        x64 = x.astype(np.float64)
        return np.sqrt((self._windows(x64 * x64, attrs, 0)).sum(axis=(3, 4)))


@register
class MaxPool2d(Pool2d):
    name = "maxPool2d"
    limits = {"input": ANY, "output": ANY}

    def reduce(self, x, attrs):
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        return self._windows(x, attrs, low).max(axis=(3, 4))
