"""conv2d (SPEC §7.9.10). convTranspose2d lives with it once added."""
from __future__ import annotations

import numpy as np

from ..registry import Inferred, Op, check, register
from ._common import FLOAT, check_same_dtype, compute_dtype
from ._window import MAX_UINT32, check_padding, check_pair, from_nhwc, output_size, pad_nhwc, to_nhwc, windows

# Permutation taking each conv2d filter layout to OHWI (O, KH, KW, I/groups).
FILTER_TO_OHWI = {"oihw": (0, 2, 3, 1), "hwio": (3, 0, 1, 2), "ohwi": (0, 1, 2, 3), "ihwo": (3, 1, 2, 0)}


def conv2d_nhwc(x, w_ohwi, bias, padding, strides, dilations, groups):
    """Reference conv2d: NHWC input, OHWI filter, numpy only."""
    x = compute_dtype(x)
    w = compute_dtype(w_ohwi)
    o, kh, kw, ig = w.shape
    n, h, wd, c = x.shape
    oh = output_size(h, kh, strides[0], dilations[0], padding[0], padding[1])
    ow = output_size(wd, kw, strides[1], dilations[1], padding[2], padding[3])
    win = windows(pad_nhwc(x, padding), (oh, ow), (kh, kw), strides, dilations)
    og = o // groups
    if groups == 1:
        cols = win.reshape(n * oh * ow, kh * kw * c)
        y = (cols @ w.reshape(o, kh * kw * ig).T).reshape(n, oh, ow, o)
    elif ig == 1:
        # Depthwise: output channel j reads input channel j // (o / groups).
        src = win if og == 1 else win[..., np.arange(o) // og]
        y = np.zeros((n, oh, ow, o), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                y += src[:, :, :, i, j, :] * w[:, i, j, 0]
    else:
        y = np.empty((n, oh, ow, o), dtype=x.dtype)
        for g in range(groups):
            cols = win[..., g * ig:(g + 1) * ig].reshape(n * oh * ow, kh * kw * ig)
            wg = w[g * og:(g + 1) * og].reshape(og, kh * kw * ig)
            y[..., g * og:(g + 1) * og] = (cols @ wg.T).reshape(n, oh, ow, og)
    if bias is not None:
        y = y + compute_dtype(bias)
    return y


@register
class Conv2d(Op):
    name = "conv2d"
    params = ("input", "filter")
    limits = {"input": FLOAT, "filter": FLOAT, "bias": FLOAT, "output": FLOAT}
    option_operands = ("bias",)

    def infer(self, input, filter, padding=None, strides=None, dilations=None, groups=1,
              inputLayout="nchw", filterLayout="oihw", bias=None):
        check_same_dtype(input, filter)
        check(len(input.shape) == 4, "input must be 4-D")
        check(len(filter.shape) == 4, "filter must be 4-D")
        padding = check_padding(padding)
        strides = check_pair(strides, "strides", (1, 1))
        dilations = check_pair(dilations, "dilations", (1, 1))
        check(groups >= 1, "groups must be >= 1")
        if inputLayout == "nchw":
            n, c, h, w = input.shape
        else:
            n, h, w, c = input.shape
        perm = FILTER_TO_OHWI[filterLayout]
        o, kh, kw, ig = (filter.shape[p] for p in perm)
        check(c % groups == 0 and c // groups == ig,
              f"input channels ({c}) / groups ({groups}) must equal the filter's input channels ({ig})")
        check(o % groups == 0, f"output channels ({o}) must be divisible by groups ({groups})")
        oh = output_size(h, kh, strides[0], dilations[0], padding[0], padding[1])
        ow = output_size(w, kw, strides[1], dilations[1], padding[2], padding[3])
        inputs = [input, filter]
        if bias is not None:
            check(bias.dtype == input.dtype, "bias must have the input's data type")
            check(bias.shape == (o,), f"bias must have shape [{o}], got {list(bias.shape)}")
            inputs.append(bias)
        shape = (n, o, oh, ow) if inputLayout == "nchw" else (n, oh, ow, o)
        check(all(d <= MAX_UINT32 for d in shape), "output dimensions overflow")
        attrs = {"padding": padding, "strides": strides, "dilations": dilations, "groups": groups,
                 "layout": inputLayout, "filter_perm": perm}
        return Inferred(inputs, [(input.dtype, shape)], attrs)

    def compute(self, attrs, x, w, bias=None):
        y = conv2d_nhwc(to_nhwc(x, attrs["layout"]), np.transpose(w, attrs["filter_perm"]), bias,
                        attrs["padding"], attrs["strides"], attrs["dilations"], attrs["groups"])
        return from_nhwc(y, attrs["layout"])
