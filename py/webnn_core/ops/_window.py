"""Sliding-window helpers shared by convolution and pooling.

Kernels work in NHWC: a window view of the padded input has shape
(N, OH, OW, KH, KW, C) and costs no copy (numpy stride tricks).
"""
from __future__ import annotations

import numpy as np

from ..registry import check

MAX_UINT32 = 2**32 - 1


def check_pair(values, name, default, positive=True):
    values = list(default if values is None else values)
    check(len(values) == 2, f"{name} must have 2 entries, got {len(values)}")
    if positive:
        check(all(v >= 1 for v in values), f"{name} entries must be >= 1, got {values}")
    return values


def check_padding(padding):
    padding = [0, 0, 0, 0] if padding is None else list(padding)
    check(len(padding) == 4, f"padding must have 4 entries [top, bottom, left, right], got {len(padding)}")
    return padding


def output_size(size, kernel, stride, dilation, pad_begin, pad_end, ceil=False, what="input"):
    """SPEC's conv/pool output size; raises Invalid when it would be < 1 or overflow."""
    effective = (kernel - 1) * dilation + 1
    check(effective <= MAX_UINT32, "the dilated window size overflows")
    padded = size + pad_begin + pad_end
    check(padded <= MAX_UINT32, "the padded input size overflows")
    check(padded >= effective, f"the {what} ({size} + padding {pad_begin + pad_end}) is smaller than the window ({effective})")
    span = padded - effective
    return (-(-span // stride) if ceil else span // stride) + 1


def to_nhwc(x, layout):
    return x if layout == "nhwc" else np.transpose(x, (0, 2, 3, 1))


def from_nhwc(y, layout):
    return y if layout == "nhwc" else np.transpose(y, (0, 3, 1, 2))


def windows(xp, out_hw, kernel, strides, dilations):
    """(N, OH, OW, KH, KW, C) view of the padded NHWC input `xp`."""
    n, _, _, c = xp.shape
    sn, sh, sw, sc = xp.strides
    shape = (n, out_hw[0], out_hw[1], kernel[0], kernel[1], c)
    strides_ = (sn, sh * strides[0], sw * strides[1], sh * dilations[0], sw * dilations[1], sc)
    return np.lib.stride_tricks.as_strided(xp, shape=shape, strides=strides_, writeable=False)


def pad_nhwc(x, padding, fill=0, extra=(0, 0)):
    """Pad H and W; `extra` adds cells at the bottom/right (ceil-mode overhang)."""
    top, bottom, left, right = padding
    bottom += extra[0]
    right += extra[1]
    if not (top or bottom or left or right):
        return x
    n, h, w, c = x.shape
    out = np.full((n, h + top + bottom, w + left + right, c), fill, dtype=x.dtype)
    out[:, top:top + h, left:left + w, :] = x
    return out
