"""averagePool2d, l2Pool2d, maxPool2d against a naive window loop (padding
excluded from averages, ceil-mode overhang clipped, digest §2.3 #2-3),
hand-computed examples, layouts, float16/integer types and validation."""
import itertools
import math

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

RNG = np.random.default_rng(11)


def run(build, dtype, x):
    ctx = Context()
    b = ctx.graph_builder()
    xo = b.input("x", {"dataType": dtype, "shape": list(x.shape)})
    g = b.build({"y": build(b, xo)})
    return ctx.compute(g, {"x": x})["y"]


def raises(build, dtype, shape):
    b = Context().graph_builder()
    xo = b.input("x", {"dataType": dtype, "shape": list(shape)})
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, xo)


def naive_pool(kind, x, window, pad=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), ceil=False, out_hw=None):
    """x NCHW. Each output reads the in-bounds taps of its window only."""
    n, c, h, w = x.shape
    sizes = []
    for size, k, s, d, pb, pe in ((h, window[0], strides[0], dilations[0], pad[0], pad[1]),
                                  (w, window[1], strides[1], dilations[1], pad[2], pad[3])):
        span = size + pb + pe - ((k - 1) * d + 1)
        sizes.append((math.ceil(span / s) if ceil else span // s) + 1)
    oh, ow = out_hw or sizes
    y = np.zeros((n, c, oh, ow))
    for b_, ch, i, j in itertools.product(range(n), range(c), range(oh), range(ow)):
        taps = []
        for p, q in itertools.product(range(window[0]), range(window[1])):
            hi = i * strides[0] + p * dilations[0] - pad[0]
            wi = j * strides[1] + q * dilations[1] - pad[2]
            if 0 <= hi < h and 0 <= wi < w:
                taps.append(float(x[b_, ch, hi, wi]))
        taps = np.array(taps)
        y[b_, ch, i, j] = {"averagePool2d": lambda t: t.mean(), "maxPool2d": lambda t: t.max(),
                           "l2Pool2d": lambda t: math.sqrt((t * t).sum())}[kind](taps)
    return y


KINDS = ["averagePool2d", "l2Pool2d", "maxPool2d"]
CASES = [
    dict(window=(3, 3)),
    dict(window=(2, 3), strides=(2, 1), pad=(1, 0, 1, 2)),
    dict(window=(3, 3), strides=(2, 2), pad=(1, 1, 1, 1), ceil=True),
    dict(window=(2, 2), strides=(2, 2), ceil=True),                    # overhang past the input
    dict(window=(2, 2), dilations=(2, 2), strides=(1, 2), pad=(0, 1, 1, 0)),
]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_pool_matches_naive_loop(kind, case, layout):
    x = RNG.standard_normal((2, 3, 7, 6)).astype(np.float32)
    expected = naive_pool(kind, x, case["window"], case.get("pad", (0,) * 4), case.get("strides", (1, 1)),
                          case.get("dilations", (1, 1)), case.get("ceil", False))
    opts = dict(windowDimensions=list(case["window"]), layout=layout,
                roundingType="ceil" if case.get("ceil") else "floor")
    for key, name in (("pad", "padding"), ("strides", "strides"), ("dilations", "dilations")):
        if key in case:
            opts[name] = list(case[key])
    xin = x if layout == "nchw" else x.transpose(0, 2, 3, 1)
    y = run(lambda b, xo: getattr(b, kind)(xo, **opts), "float32", xin)
    if layout == "nhwc":
        y = y.transpose(0, 3, 1, 2)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)


def test_pool_hand_examples():
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    avg = run(lambda b, xo: b.averagePool2d(xo, windowDimensions=[2, 2], strides=[2, 2]), "float32", x)
    np.testing.assert_array_equal(avg.reshape(2, 2), [[3.5, 5.5], [11.5, 13.5]])
    mx = run(lambda b, xo: b.maxPool2d(xo, windowDimensions=[2, 2], strides=[2, 2]), "float32", x)
    np.testing.assert_array_equal(mx.reshape(2, 2), [[6, 8], [14, 16]])
    l2 = run(lambda b, xo: b.l2Pool2d(xo, windowDimensions=[2, 2], strides=[2, 2]), "float32", x)
    np.testing.assert_allclose(l2.reshape(2, 2)[0, 0], math.sqrt(1 + 4 + 25 + 36), rtol=1e-6)
    # Global pooling is the default window; padding is excluded from the average.
    g = run(lambda b, xo: b.averagePool2d(xo), "float32", x)
    assert g.shape == (1, 1, 1, 1) and g.item() == 8.5
    p = run(lambda b, xo: b.averagePool2d(xo, windowDimensions=[2, 2], padding=[1, 0, 1, 0]), "float32", x)
    assert p[0, 0, 0, 0] == 1.0 and p[0, 0, 0, 1] == 1.5


def test_output_sizes_select_floor_or_ceil_and_keep_padding():
    # 7x7, window 4, padding 1, stride 2: floor gives 3, ceil gives 4.
    x = RNG.standard_normal((1, 1, 7, 7)).astype(np.float32)
    opts = dict(windowDimensions=[4, 4], padding=[1, 1, 1, 1], strides=[2, 2])
    for sizes, ceil in (([3, 3], False), ([4, 4], True)):
        for kind in KINDS:
            # outputSizes overrides roundingType.
            y = run(lambda b, xo: getattr(b, kind)(xo, outputSizes=sizes, roundingType="floor" if ceil else "ceil",
                                                   **opts), "float32", x)
            np.testing.assert_allclose(y, naive_pool(kind, x, (4, 4), (1, 1, 1, 1), (2, 2), ceil=ceil), rtol=1e-5)


def test_output_sizes_round_both_dimensions_the_same_way():
    # SPEC pool2d: "If neither outputHeight equals floor(h) and outputWidth equals floor(w), nor
    # both equal ceil, throw a TypeError". 7x8, window 4, padding 1, stride 2: height floor 3 /
    # ceil 4, width floor 4 / ceil 4 (exact), so [3, 4] and [4, 4] are valid, and with a 7x7
    # input [3, 4] mixes floor and ceil.
    ctx = Context()
    b = ctx.graph_builder()
    opts = dict(windowDimensions=[4, 4], padding=[1, 1, 1, 1], strides=[2, 2])
    x78 = b.input("a", {"dataType": "float32", "shape": [1, 1, 7, 8]})
    assert b.maxPool2d(x78, outputSizes=[3, 4], **opts).shape == (1, 1, 3, 4)
    assert b.maxPool2d(x78, outputSizes=[4, 4], **opts).shape == (1, 1, 4, 4)
    x77 = b.input("b", {"dataType": "float32", "shape": [1, 1, 7, 7]})
    for kind in KINDS:
        for mixed in ([3, 4], [4, 3]):
            with pytest.raises(WebNNTypeError, match="outputSizes"):
                getattr(b, kind)(x77, outputSizes=mixed, **opts)


def test_max_pool_integer_and_float16():
    x = RNG.integers(-100, 100, (1, 2, 5, 5)).astype(np.int8)
    y = run(lambda b, xo: b.maxPool2d(xo, windowDimensions=[3, 3], padding=[1, 1, 1, 1]), "int8", x)
    assert y.dtype == np.int8
    np.testing.assert_array_equal(y, naive_pool("maxPool2d", x, (3, 3), (1, 1, 1, 1)))
    for dt in ("uint8", "int32", "uint32", "int64"):
        xi = RNG.integers(0, 100, (1, 1, 4, 4)).astype(dt)
        yi = run(lambda b, xo: b.maxPool2d(xo, windowDimensions=[2, 2], strides=[2, 2], padding=[1, 1, 1, 1]), dt, xi)
        np.testing.assert_array_equal(yi, naive_pool("maxPool2d", xi, (2, 2), (1, 1, 1, 1), (2, 2)))
    xh = RNG.standard_normal((1, 2, 5, 5)).astype(np.float16)
    for kind in KINDS:
        yh = run(lambda b, xo: getattr(b, kind)(xo, windowDimensions=[3, 3]), "float16", xh)
        assert yh.dtype == np.float16
        np.testing.assert_allclose(yh.astype(np.float64), naive_pool(kind, xh, (3, 3)), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("opts,shape", [
    (dict(windowDimensions=[3]), (1, 1, 5, 5)),
    (dict(windowDimensions=[0, 3]), (1, 1, 5, 5)),
    (dict(windowDimensions=[6, 6]), (1, 1, 5, 5)),                        # window larger than the input
    (dict(padding=[1, 1]), (1, 1, 5, 5)),
    (dict(strides=[0, 1]), (1, 1, 5, 5)),
    (dict(dilations=[1, 1, 1]), (1, 1, 5, 5)),
    (dict(windowDimensions=[2, 2], padding=[2, 2, 2, 2], strides=[2, 2], outputSizes=[3, 3]), (1, 1, 5, 5)),
    (dict(windowDimensions=[4, 4], padding=[1, 1, 1, 1], strides=[2, 2], outputSizes=[5, 5]), (1, 1, 7, 7)),
    (dict(outputSizes=[0, 1]), (1, 1, 5, 5)),
    (dict(outputSizes=[1, 1, 1]), (1, 1, 5, 5)),
    (dict(windowDimensions=[2, 2], dilations=[2**32 - 1, 1]), (1, 1, 5, 5)),  # dilated window overflows
    ({}, (1, 5, 5)),
])
@pytest.mark.parametrize("kind", KINDS)
def test_pool_validation(kind, opts, shape):
    raises(lambda b, xo: getattr(b, kind)(xo, label="lbl", **opts), "float32", shape)


@pytest.mark.parametrize("kind", ["averagePool2d", "l2Pool2d"])
def test_avg_and_l2_reject_integers(kind):
    raises(lambda b, xo: getattr(b, kind)(xo, label="lbl"), "int32", (1, 1, 3, 3))


def test_window_wholly_in_padding():
    # Average and L2 of no elements are 0; max of none is -Infinity.
    x = np.full((1, 1, 1, 1), 3.0, np.float32)
    opts = dict(windowDimensions=[1, 1], padding=[1, 1, 1, 1])
    for kind, edge in (("averagePool2d", 0.0), ("l2Pool2d", 0.0), ("maxPool2d", -np.inf)):
        y = run(lambda b, xo: getattr(b, kind)(xo, **opts), "float32", x).reshape(3, 3)
        assert y[1, 1] == 3.0 and np.all(np.delete(y.ravel(), 4) == edge)
