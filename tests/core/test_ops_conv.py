"""conv2d and convTranspose2d against naive loops written from the spec's
definitions (NCHW/OIHW and IOHW), hand-computed examples, every layout,
float16, and the validation rules (digest §1.1, §2.3 #4)."""
import functools
import itertools

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

RNG = np.random.default_rng(7)


def run(build, *inputs):
    """build(b, *operands) -> operand; inputs are (dtype, array) pairs."""
    ctx = Context()
    b = ctx.graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(np.shape(a))}) for i, (dt, a) in enumerate(inputs)]
    g = b.build({"y": build(b, *ops)})
    return ctx.compute(g, {f"x{i}": np.asarray(a) for i, (_, a) in enumerate(inputs)})["y"]


def raises(build, *descs, label="lbl"):
    ctx = Context()
    b = ctx.graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(s)}) for i, (dt, s) in enumerate(descs)]
    with pytest.raises(WebNNTypeError, match=rf"\[{label}\]"):
        build(b, *ops)


def shape_of(build, *descs):
    b = Context().graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(s)}) for i, (dt, s) in enumerate(descs)]
    return tuple(build(b, *ops).shape)


# ----------------------------------------------------------------- naive references
def naive_conv2d(x, w, pad=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), groups=1, bias=None):
    """x NCHW, w OIHW (I = C/groups); a direct 7-deep loop in float64."""
    n, c, h, wd = x.shape
    o, ig, kh, kw = w.shape
    og = o // groups
    oh = (h + pad[0] + pad[1] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
    ow = (wd + pad[2] + pad[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
    y = np.zeros((n, o, oh, ow))
    for b_, oc, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oc // og
        acc = 0.0
        for ic, p, q in itertools.product(range(ig), range(kh), range(kw)):
            hi = i * strides[0] + p * dilations[0] - pad[0]
            wi = j * strides[1] + q * dilations[1] - pad[2]
            if 0 <= hi < h and 0 <= wi < wd:
                acc += float(x[b_, g * ig + ic, hi, wi]) * float(w[oc, ic, p, q])
        y[b_, oc, i, j] = acc + (0.0 if bias is None else float(bias[oc]))
    return y


def naive_conv_transpose2d(x, w, pad=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), groups=1,
                           out_hw=None, output_padding=(0, 0), bias=None):
    """x NCHW, w IOHW (O = outC/groups): each input element scatters x·w into
    out[ih·s + kh·d − padBegin] (the definition of a transposed convolution)."""
    n, c, h, wd = x.shape
    _, og, kh, kw = w.shape
    ig = c // groups
    if out_hw is None:
        out_hw = tuple((size - 1) * s + (k - 1) * d + 1 - pb - pe + op for size, k, s, d, pb, pe, op in
                       ((h, kh, strides[0], dilations[0], pad[0], pad[1], output_padding[0]),
                        (wd, kw, strides[1], dilations[1], pad[2], pad[3], output_padding[1])))
    y = np.zeros((n, og * groups) + tuple(out_hw))
    for b_, ic, i, j, oc, p, q in itertools.product(range(n), range(c), range(h), range(wd), range(og),
                                                     range(kh), range(kw)):
        oi = i * strides[0] + p * dilations[0] - pad[0]
        oj = j * strides[1] + q * dilations[1] - pad[2]
        if 0 <= oi < out_hw[0] and 0 <= oj < out_hw[1]:
            y[b_, (ic // ig) * og + oc, oi, oj] += float(x[b_, ic, i, j]) * float(w[ic, oc, p, q])
    if bias is not None:
        y += np.asarray(bias, np.float64)[None, :, None, None]
    return y


def const(b, arr, dtype="float32"):
    return b.constant({"dataType": dtype, "shape": list(arr.shape)}, np.asarray(arr))


# ----------------------------------------------------------------------- conv2d
CONV2D_FILTER_FROM_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (2, 3, 1, 0), "ohwi": (0, 2, 3, 1), "ihwo": (1, 2, 3, 0)}
CONV2D_CASES = [
    dict(x=(1, 2, 5, 5), w=(3, 2, 3, 3)),
    dict(x=(2, 4, 7, 6), w=(4, 2, 3, 2), pad=(1, 2, 0, 1), strides=(2, 1), dilations=(1, 2), groups=2),
    dict(x=(1, 3, 6, 6), w=(6, 1, 3, 3), pad=(1, 1, 1, 1), groups=3, bias=True),  # depthwise, multiplier 2
    dict(x=(1, 4, 5, 5), w=(4, 1, 2, 2), strides=(2, 2), groups=4, bias=True),    # depthwise
]


@functools.lru_cache(maxsize=None)
def conv2d_case(index):
    """Random data for a case and the naive loop's result, computed once."""
    case, rng = CONV2D_CASES[index], np.random.default_rng(index)
    x = rng.standard_normal(case["x"]).astype(np.float32)
    w = rng.standard_normal(case["w"]).astype(np.float32)
    bias = rng.standard_normal(case["w"][0]).astype(np.float32) if case.get("bias") else None
    return x, w, bias, naive_conv2d(x, w, case.get("pad", (0,) * 4), case.get("strides", (1, 1)),
                                    case.get("dilations", (1, 1)), case.get("groups", 1), bias)


@pytest.mark.parametrize("index", range(len(CONV2D_CASES)))
@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", ["oihw", "hwio", "ohwi", "ihwo"])
def test_conv2d_matches_naive_loop(index, input_layout, filter_layout):
    case = CONV2D_CASES[index]
    x, w, bias, expected = conv2d_case(index)
    kw = {k: list(case[k]) for k in ("pad", "strides", "dilations") if k in case}
    if "pad" in kw:
        kw["padding"] = kw.pop("pad")
    xin = x if input_layout == "nchw" else x.transpose(0, 2, 3, 1)
    wl = w.transpose(CONV2D_FILTER_FROM_OIHW[filter_layout])

    def build(b, xo):
        opts = dict(kw, groups=case.get("groups", 1), inputLayout=input_layout, filterLayout=filter_layout)
        if bias is not None:
            opts["bias"] = const(b, bias)
        return b.conv2d(xo, const(b, wl), **opts)

    y = run(build, ("float32", xin))
    if input_layout == "nhwc":
        y = y.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_conv2d_hand_example():
    # 3x3 input 1..9, 2x2 filter of ones, stride 1: sums of 2x2 blocks.
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    y = run(lambda b, xo: b.conv2d(xo, const(b, np.ones((1, 1, 2, 2), np.float32))), ("float32", x))
    np.testing.assert_array_equal(y.reshape(2, 2), [[12, 16], [24, 28]])


def test_conv2d_float16():
    x = RNG.standard_normal((1, 2, 4, 4)).astype(np.float16)
    w = RNG.standard_normal((2, 2, 3, 3)).astype(np.float16)
    y = run(lambda b, xo: b.conv2d(xo, const(b, w, "float16"), padding=[1, 1, 1, 1]), ("float16", x))
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float64), naive_conv2d(x, w, (1, 1, 1, 1)), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("x,w,opts", [
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(padding=[1, 1])),
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(strides=[0, 1])),
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(dilations=[1])),
    ((1, 4, 5, 5), (2, 2, 3, 3), dict(groups=3)),
    ((1, 1, 2, 2), (1, 1, 3, 3), {}),                          # input smaller than the filter
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(dilations=[2**31, 1])),  # effective size overflow
    ((1, 5, 5), (1, 1, 3, 3), {}),
])
def test_conv2d_validation(x, w, opts):
    raises(lambda b, xo, wo: b.conv2d(xo, wo, label="lbl", **opts), ("float32", x), ("float32", w))


def test_conv2d_dtype_mismatch():
    raises(lambda b, xo, wo: b.conv2d(xo, wo, label="lbl"), ("float32", (1, 1, 5, 5)), ("float16", (1, 1, 3, 3)))


# --------------------------------------------------------------- convTranspose2d
CT_FILTER_FROM_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (2, 3, 1, 0), "ohwi": (1, 2, 3, 0)}

CT_CASES = [
    dict(x=(1, 1, 3, 3), w=(1, 1, 3, 3)),
    dict(x=(1, 2, 3, 4), w=(2, 3, 2, 3), strides=(2, 3), bias=True),
    dict(x=(2, 2, 3, 3), w=(2, 1, 3, 3), strides=(2, 2), pad=(1, 0, 2, 1), output_padding=(1, 0)),
    dict(x=(1, 4, 3, 3), w=(4, 2, 2, 2), strides=(2, 2), dilations=(2, 1), groups=2, bias=True),
    dict(x=(1, 3, 2, 2), w=(3, 1, 3, 3), strides=(3, 2), groups=3),  # depthwise
    dict(x=(1, 1, 3, 3), w=(1, 2, 3, 3), strides=(3, 2), out_hw=(10, 8)),  # outputSizes > calc
]


@functools.lru_cache(maxsize=None)
def conv_transpose2d_case(index):
    case, rng = CT_CASES[index], np.random.default_rng(100 + index)
    x = rng.standard_normal(case["x"]).astype(np.float32)
    w = rng.standard_normal(case["w"]).astype(np.float32)
    groups = case.get("groups", 1)
    bias = rng.standard_normal(case["w"][1] * groups).astype(np.float32) if case.get("bias") else None
    return x, w, bias, naive_conv_transpose2d(
        x, w, case.get("pad", (0, 0, 0, 0)), case.get("strides", (1, 1)), case.get("dilations", (1, 1)), groups,
        case.get("out_hw"), case.get("output_padding", (0, 0)), bias)


@pytest.mark.parametrize("index", range(len(CT_CASES)))
@pytest.mark.parametrize("input_layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("filter_layout", ["iohw", "hwoi", "ohwi"])
def test_conv_transpose2d_matches_naive_loop(index, input_layout, filter_layout):
    case = CT_CASES[index]
    x, w, bias, expected = conv_transpose2d_case(index)
    groups = case.get("groups", 1)
    pad = case.get("pad", (0, 0, 0, 0))
    strides, dilations = case.get("strides", (1, 1)), case.get("dilations", (1, 1))
    xin = x if input_layout == "nchw" else x.transpose(0, 2, 3, 1)
    wl = w.transpose(CT_FILTER_FROM_IOHW[filter_layout])

    def build(b, xo):
        opts = dict(padding=list(pad), strides=list(strides), dilations=list(dilations), groups=groups,
                    inputLayout=input_layout, filterLayout=filter_layout)
        if "output_padding" in case:
            opts["outputPadding"] = list(case["output_padding"])
        if "out_hw" in case:
            opts["outputSizes"] = list(case["out_hw"])
        if bias is not None:
            opts["bias"] = const(b, bias)
        return b.convTranspose2d(xo, const(b, wl), **opts)

    y = run(build, ("float32", xin))
    if input_layout == "nhwc":
        y = y.transpose(0, 3, 1, 2)
    assert y.shape == expected.shape
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


def test_conv_transpose2d_hand_example():
    # Stride 2 with a 2x2 filter of ones tiles each input value into a 2x2 block.
    x = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 1, 2, 2)
    y = run(lambda b, xo: b.convTranspose2d(xo, const(b, np.ones((1, 1, 2, 2), np.float32)), strides=[2, 2]),
            ("float32", x))
    np.testing.assert_array_equal(y.reshape(4, 4), [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])
    # Stride 1 with the same filter: overlapping windows add up.
    y = run(lambda b, xo: b.convTranspose2d(xo, const(b, np.ones((1, 1, 2, 2), np.float32))), ("float32", x))
    np.testing.assert_array_equal(y.reshape(3, 3), [[1, 3, 2], [4, 10, 6], [3, 7, 4]])


def test_conv_transpose2d_output_padding_adds_rows_of_bias_only():
    x = np.ones((1, 1, 2, 2), np.float32)
    y = run(lambda b, xo: b.convTranspose2d(xo, const(b, np.ones((1, 1, 1, 1), np.float32)), strides=[2, 2],
                                            outputPadding=[1, 1], bias=const(b, np.array([0.5], np.float32))),
            ("float32", x))
    np.testing.assert_array_equal(y.reshape(4, 4), [[1.5, .5, 1.5, .5], [.5] * 4, [1.5, .5, 1.5, .5], [.5] * 4])


def test_conv_transpose2d_float16():
    x = RNG.standard_normal((1, 2, 3, 3)).astype(np.float16)
    w = RNG.standard_normal((2, 2, 3, 3)).astype(np.float16)
    y = run(lambda b, xo: b.convTranspose2d(xo, const(b, w, "float16"), strides=[2, 2], padding=[1, 1, 1, 1]),
            ("float16", x))
    assert y.dtype == np.float16
    ref = naive_conv_transpose2d(x, w, (1, 1, 1, 1), (2, 2))
    np.testing.assert_allclose(y.astype(np.float64), ref, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("x,w,opts,out", [
    ((1, 1, 3, 3), (1, 1, 3, 3), {}, (1, 1, 5, 5)),
    ((1, 1, 3, 3), (3, 3, 2, 1), dict(filterLayout="hwoi"), (1, 2, 5, 5)),
    ((1, 3, 3, 1), (2, 3, 3, 1), dict(filterLayout="ohwi", inputLayout="nhwc"), (1, 5, 5, 2)),
    ((1, 1, 3, 3), (1, 2, 3, 3), dict(strides=[3, 2], outputPadding=[1, 1]), (1, 2, 10, 8)),
    # outputSizes wins over outputPadding, even one >= strides.
    ((1, 1, 3, 3), (1, 2, 3, 3), dict(strides=[3, 2], outputPadding=[3, 3], outputSizes=[11, 7]), (1, 2, 11, 7)),
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(padding=[1, 1, 1, 1], groups=3), (1, 3, 5, 5)),
])
def test_conv_transpose2d_shapes(x, w, opts, out):
    assert shape_of(lambda b, xo, wo: b.convTranspose2d(xo, wo, **opts), ("float32", x), ("float32", w)) == out


@pytest.mark.parametrize("x,w,opts", [
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(padding=[1, 1])),
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(strides=[1, 0])),
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(dilations=[1, 0])),
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(groups=0)),
    ((1, 1, 5, 5), (1, 1, 3, 3), dict(outputPadding=[1, 1, 1, 1], strides=[2, 2])),
    ((1, 1, 2, 2), (1, 1, 3, 3), dict(strides=[2, 2], outputPadding=[0, 2])),   # outputPadding >= stride
    ((1, 1, 3, 3), (1, 1, 3, 3), dict(outputSizes=[1, 2, 10, 8])),
    ((1, 1, 3, 3), (1, 1, 3, 3), dict(strides=[2, 2], padding=[1, 1, 1, 1], outputSizes=[4, 4])),  # < calc 5
    ((1, 1, 3, 3), (1, 1, 3, 3), dict(strides=[2, 2], padding=[1, 1, 1, 1], outputSizes=[6, 7])),  # >= 5 + 2
    ((1, 1, 3, 3), (1, 2, 3, 3), dict(strides=[3, 2], outputSizes=[0, 7])),
    ((1, 3, 3, 3), (1, 1, 3, 3), {}),                                           # channels differ
    ((1, 4, 5, 5), (4, 2, 2, 2), dict(groups=2**32 - 1)),                       # output channels overflow
    ((1, 1, 5, 5), (1, 1, 3, 2), dict(dilations=[2**32 - 1, 1])),               # effective size overflow
    ((1, 1, 2, 2), (1, 1, 3, 3), dict(padding=[4, 4, 0, 0], strides=[2, 2])),   # output size <= 0
    ((1, 5, 5), (1, 1, 2, 2), {}),
    ((1, 1, 5, 5), (2, 2), {}),
])
def test_conv_transpose2d_validation(x, w, opts):
    raises(lambda b, xo, wo: b.convTranspose2d(xo, wo, label="lbl", **opts), ("float32", x), ("float32", w))


@pytest.mark.parametrize("bias", [("float32", (2,)), ("float32", (1, 1)), ("float16", (1,))])
def test_conv_transpose2d_bias_validation(bias):
    raises(lambda b, xo, wo, bo: b.convTranspose2d(xo, wo, bias=bo, label="lbl"),
           ("float32", (1, 1, 5, 5)), ("float32", (1, 1, 2, 2)), bias)


def test_conv_transpose2d_rejects_integer_and_mixed_types():
    raises(lambda b, xo, wo: b.convTranspose2d(xo, wo, label="lbl"), ("int32", (1, 1, 5, 5)), ("int32", (1, 1, 2, 2)))
    raises(lambda b, xo, wo: b.convTranspose2d(xo, wo, label="lbl"),
           ("float32", (1, 1, 5, 5)), ("float16", (1, 1, 2, 2)))


def test_conv_transpose2d_does_not_modify_inputs():
    x = RNG.standard_normal((1, 2, 3, 3)).astype(np.float32)
    keep = x.copy()
    run(lambda b, xo: b.convTranspose2d(xo, const(b, np.ones((2, 1, 2, 2), np.float32)), groups=2), ("float32", x))
    np.testing.assert_array_equal(x, keep)


def test_conv_transpose2d_groups_not_dividing_channels():
    # WPT accepts inC=1 with groups=3 (outC = 1·3); input channel c feeds group c·groups // inC,
    # so here group 0 gets the data and groups 1 and 2 only their bias.
    x = np.arange(1, 5, dtype=np.float32).reshape(1, 1, 2, 2)
    y = run(lambda b, xo: b.convTranspose2d(xo, const(b, np.ones((1, 1, 1, 1), np.float32)), groups=3,
                                            bias=const(b, np.array([0, 1, 2], np.float32))), ("float32", x))
    np.testing.assert_array_equal(y[0, 0], x[0, 0])
    np.testing.assert_array_equal(y[0, 1:], np.broadcast_to(np.array([1, 2], np.float32)[:, None, None], (2, 2, 2)))
