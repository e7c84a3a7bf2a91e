"""conv2d and convTranspose2d (SPEC §7.7.10-11): NHWC reference kernels."""
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


# Permutation taking each convTranspose2d filter layout to IOHW (I, O/groups, KH, KW).
TRANSPOSE_FILTER_TO_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (3, 2, 0, 1), "ohwi": (3, 0, 1, 2)}


def conv_transpose_size(size, kernel, stride, dilation, pad_begin, pad_end, output_padding=0):
    """SPEC's "calculate convtranspose output size" (may be <= 0: callers check)."""
    effective = (kernel - 1) * dilation + 1
    check(effective <= MAX_UINT32, "the dilated filter size overflows")
    return (size - 1) * stride + effective - pad_begin - pad_end + output_padding


def conv_transpose2d_nhwc(x, w_iohw, bias, padding, strides, dilations, groups, out_hw):
    """Reference transposed conv: every input pixel scatters `x·W` into the
    output at `in·stride + k·dilation - padBegin` (one matmul, then KH·KW
    strided adds). NHWC input, IOHW filter; input channel c feeds group
    c·groups // C (the usual C/groups blocks when groups divides C)."""
    x = compute_dtype(x)
    w = compute_dtype(w_iohw)
    n, h, wd, c = x.shape
    _, og, kh, kw = w.shape
    o = og * groups
    if c % groups == 0:
        ig = c // groups
        xg = x.reshape(n * h * wd, groups, ig).transpose(1, 0, 2)  # (G, NHW, I/G)
        cols = np.matmul(xg, w.reshape(groups, ig, og * kh * kw))  # (G, NHW, O/G·KH·KW)
        cols = cols.reshape(groups, n, h, wd, og, kh, kw).transpose(1, 2, 3, 5, 6, 0, 4)
    else:  # groups does not divide C: a block-sparse full filter
        full = np.zeros((c, o, kh, kw), dtype=w.dtype)
        for ch in range(c):
            g = ch * groups // c
            full[ch, g * og:(g + 1) * og] = w[ch]
        cols = (x.reshape(n * h * wd, c) @ full.reshape(c, o * kh * kw)).reshape(n, h, wd, o, kh, kw)
        cols = cols.transpose(0, 1, 2, 4, 5, 3)
    cols = cols.reshape(n, h, wd, kh, kw, o)
    top, _, left, _ = padding
    (sh, sw), (dh, dw), (oh, ow) = strides, dilations, out_hw
    full_h = max((h - 1) * sh + (kh - 1) * dh + 1, top + oh)
    full_w = max((wd - 1) * sw + (kw - 1) * dw + 1, left + ow)
    y = np.zeros((n, full_h, full_w, o), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            y[:, i * dh:i * dh + (h - 1) * sh + 1:sh, j * dw:j * dw + (wd - 1) * sw + 1:sw, :] += cols[:, :, :, i, j, :]
    y = y[:, top:top + oh, left:left + ow, :]
    if bias is not None:
        y = y + compute_dtype(bias)
    return y


@register
class ConvTranspose2d(Op):
    name = "convTranspose2d"
    params = ("input", "filter")
    limits = {"input": FLOAT, "filter": FLOAT, "bias": FLOAT, "output": FLOAT}
    option_operands = ("bias",)

    def infer(self, input, filter, padding=None, strides=None, dilations=None, outputPadding=None,
              outputSizes=None, groups=1, inputLayout="nchw", filterLayout="iohw", bias=None):
        check_same_dtype(input, filter)
        check(len(input.shape) == 4, "input must be 4-D")
        check(len(filter.shape) == 4, "filter must be 4-D")
        padding = check_padding(padding)
        strides = check_pair(strides, "strides", (1, 1))
        dilations = check_pair(dilations, "dilations", (1, 1))
        output_padding = check_pair(outputPadding, "outputPadding", (0, 0), positive=False)
        if outputSizes is not None:
            check(len(outputSizes) == 2, f"outputSizes must have 2 entries, got {len(outputSizes)}")
        else:
            check(all(p < s for p, s in zip(output_padding, strides)),
                  f"outputPadding {output_padding} must be smaller than strides {strides}")
        check(groups >= 1, "groups must be >= 1")
        if inputLayout == "nchw":
            n, c, h, w = input.shape
        else:
            n, h, w, c = input.shape
        perm = TRANSPOSE_FILTER_TO_IOHW[filterLayout]
        fi, fo, kh, kw = (filter.shape[p] for p in perm)
        check(c == fi, f"input channels ({c}) must equal the filter's input channels ({fi})")
        o = fo * groups
        check(o <= MAX_UINT32, f"output channels ({fo} x groups {groups}) overflow")
        sizes = []
        for axis, (size, k) in enumerate(((h, kh), (w, kw))):
            args = (size, k, strides[axis], dilations[axis], padding[2 * axis], padding[2 * axis + 1])
            if outputSizes is None:
                out = conv_transpose_size(*args, output_padding[axis])
            else:
                # WPT/Chromium: outputSizes must lie in [calc, calc + stride), calc without outputPadding.
                calc, out = conv_transpose_size(*args), outputSizes[axis]
                check(out >= 1, f"outputSizes[{axis}] must be > 0")
                check(calc <= out < calc + strides[axis],
                      f"outputSizes[{axis}] = {out} must be in [{calc}, {calc + strides[axis]})")
            check(1 <= out <= MAX_UINT32,
                  f"the output size along {'height' if axis == 0 else 'width'} ({out}) is not a valid dimension")
            sizes.append(out)
        inputs = [input, filter]
        if bias is not None:
            check(bias.dtype == input.dtype, "bias must have the input's data type")
            check(bias.shape == (o,), f"bias must have shape [{o}], got {list(bias.shape)}")
            inputs.append(bias)
        shape = (n, o, *sizes) if inputLayout == "nchw" else (n, *sizes, o)
        attrs = {"padding": padding, "strides": strides, "dilations": dilations, "groups": groups,
                 "layout": inputLayout, "filter_perm": perm, "out_hw": tuple(sizes)}
        return Inferred(inputs, [(input.dtype, shape)], attrs)

    def compute(self, attrs, x, w, bias=None):
        y = conv_transpose2d_nhwc(to_nhwc(x, attrs["layout"]), np.transpose(w, attrs["filter_perm"]), bias,
                                  attrs["padding"], attrs["strides"], attrs["dilations"], attrs["groups"],
                                  attrs["out_hw"])
        return from_nhwc(y, attrs["layout"])
