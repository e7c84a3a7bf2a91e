"""resample2d against hand-computed examples and a per-pixel loop of the
half-pixel formulas (digest §2.3 #8), axes/sizes/scales handling, float16
and the validation rules."""
import itertools
import math

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

RNG = np.random.default_rng(5)


def run(x, dtype="float32", **opts):
    ctx = Context()
    b = ctx.graph_builder()
    xo = b.input("x", {"dataType": dtype, "shape": list(x.shape)})
    g = b.build({"y": b.resample2d(xo, **opts)})
    return ctx.compute(g, {"x": x})["y"]


def out_shape(shape, **opts):
    b = Context().graph_builder()
    return tuple(b.resample2d(b.input("x", {"dataType": "float32", "shape": list(shape)}), **opts).shape)


def naive_resample(x, mode, axes, out_sizes, scales):
    """Per output element: map each resampled axis back with half-pixel centres."""
    out_shape_ = list(x.shape)
    for a, s in zip(axes, out_sizes):
        out_shape_[a] = s
    y = np.zeros(out_shape_)
    n0, n1 = x.shape[axes[0]], x.shape[axes[1]]
    for idx in itertools.product(*map(range, out_shape_)):
        o0, o1 = idx[axes[0]], idx[axes[1]]

        def at(i0, i1):
            src = list(idx)
            src[axes[0]], src[axes[1]] = i0, i1
            return float(x[tuple(src)])

        if mode == "nearest-neighbor":  # ED: ceil(clamp(u, 0, n - 1) - 0.5)
            u0 = min(max((o0 + 0.5) / scales[0] - 0.5, 0), n0 - 1)
            u1 = min(max((o1 + 0.5) / scales[1] - 0.5, 0), n1 - 1)
            y[idx] = at(math.ceil(u0 - 0.5), math.ceil(u1 - 0.5))
        else:
            p0 = min(max((o0 + 0.5) / scales[0] - 0.5, 0), n0 - 1)
            p1 = min(max((o1 + 0.5) / scales[1] - 0.5, 0), n1 - 1)
            a0, a1 = math.floor(p0), math.floor(p1)
            b0, b1 = min(a0 + 1, n0 - 1), min(a1 + 1, n1 - 1)
            t0, t1 = p0 - a0, p1 - a1
            y[idx] = ((1 - t0) * ((1 - t1) * at(a0, a1) + t1 * at(a0, b1))
                      + t0 * ((1 - t1) * at(b0, a1) + t1 * at(b0, b1)))
    return y


X22 = np.array([[1, 2], [3, 4]], np.float32).reshape(1, 1, 2, 2)


def test_nearest_hand_example():
    y = run(X22, scales=[2.0, 2.0])
    np.testing.assert_array_equal(y.reshape(4, 4), [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])


def test_linear_hand_example():
    y = run(X22, mode="linear", scales=[2.0, 2.0])
    np.testing.assert_allclose(y.reshape(4, 4), [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5],
                                                  [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4]])


def test_nearest_downscale_rounds_ties_down():
    # ED: u = (o + 0.5) * 2 - 0.5 = 2o + 0.5, index ceil(u - 0.5) = 2o (a tie goes down).
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    y = run(x, scales=[0.5, 0.5])
    np.testing.assert_array_equal(y.reshape(2, 2), [[0, 2], [8, 10]])


def test_non_integral_scale_uses_output_over_input_size():
    # scales 0.7 on 5 -> floor(3.5) = 3 outputs; the ED samples with scale 3/5, not 0.7:
    # u = (o + 0.5) * 5/3 - 0.5 -> 0.333, 2.0, 3.667 -> indices 0, 2, 4 (scale 0.7 would give 0, 2, 3).
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 1, 5)
    y = run(x, scales=[1.0, 0.7])
    np.testing.assert_array_equal(y.reshape(-1), [0, 2, 4])


@pytest.mark.parametrize("mode", ["nearest-neighbor", "linear"])
@pytest.mark.parametrize("opts,axes,sizes,scales", [
    (dict(scales=[2.0, 3.0]), (2, 3), (6, 12), (2.0, 3.0)),
    (dict(scales=[0.5, 0.75]), (2, 3), (1, 3), (1 / 3, 0.75)),  # scale = output / input size
    (dict(sizes=[5, 7]), (2, 3), (5, 7), (5 / 3, 7 / 4)),
    (dict(scales=[9.0, 9.0], sizes=[4, 2]), (2, 3), (4, 2), (4 / 3, 2 / 4)),    # sizes override scales
    (dict(scales=[2.0, 2.0], axes=[1, 2]), (1, 2), (4, 6), (2.0, 2.0)),          # nhwc
    (dict(scales=[3.0, 1.5], axes=[3, 0]), (3, 0), (12, 3), (3.0, 1.5)),          # any two axes, any order
])
def test_resample_matches_naive_loop(mode, opts, axes, sizes, scales):
    x = RNG.standard_normal((2, 2, 3, 4)).astype(np.float32)
    y = run(x, mode=mode, **opts)
    np.testing.assert_allclose(y, naive_resample(x, mode, axes, sizes, scales), rtol=1e-6, atol=1e-6)


def test_float16():
    x = RNG.standard_normal((1, 2, 3, 3)).astype(np.float16)
    for mode in ("nearest-neighbor", "linear"):
        y = run(x, "float16", mode=mode, scales=[2.0, 2.0])
        assert y.dtype == np.float16
        exp = naive_resample(x, mode, (2, 3), (6, 6), (2.0, 2.0))
        np.testing.assert_allclose(y.astype(np.float64), exp.astype(np.float16).astype(np.float64), rtol=1e-3)


@pytest.mark.parametrize("shape,opts,expected", [
    ((1, 1, 2, 4), {}, (1, 1, 2, 4)),
    ((1, 1, 5, 5), dict(scales=[0.5, 0.5]), (1, 1, 2, 2)),
    ((1, 1, 2, 4), dict(scales=[1.0, 2.0], axes=[0, 1]), (1, 2, 2, 4)),
    ((1, 1, 2, 4), dict(axes=[0, 2]), (1, 1, 2, 4)),
    ((1, 1, 2, 4), dict(scales=[2.0, 2.0], sizes=[3, 6]), (1, 1, 3, 6)),
])
def test_output_shapes(shape, opts, expected):
    assert out_shape(shape, **opts) == expected


@pytest.mark.parametrize("shape,opts", [
    ((2, 4), {}),
    ((1, 1, 2, 4), dict(scales=[1.0, 1.0, 2.0, 2.0])),
    ((1, 1, 2, 4), dict(scales=[1.0, -2.0])),
    ((1, 1, 2, 4), dict(scales=[0.0, 2.0])),
    ((1, 1, 2, 4), dict(sizes=[1, 1, 4, 6])),
    ((1, 1, 2, 4), dict(sizes=[0, 1])),
    ((1, 1, 2, 4), dict(scales=[0.02, 0.8])),            # floor(2 * 0.02) = 0
    ((1, 1, 2, 4), dict(scales=[0.7, 0.1])),
    ((1, 1, 2, 4), dict(scales=[4294967296.0, 1.0])),     # output dimension overflows
    ((1, 1, 2, 4), dict(axes=[0, 1, 2])),
    ((1, 1, 2, 4), dict(axes=[3, 4])),
    ((1, 1, 2, 4), dict(axes=[0, 0])),
    ((1, 1, 2**29 - 1, 1), dict(scales=[2.0, 2.0])),      # output byte length too large
])
def test_validation(shape, opts):
    b = Context().graph_builder()
    xo = b.input("x", {"dataType": "float32", "shape": list(shape)})
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        b.resample2d(xo, label="lbl", **opts)


def test_rejects_integer_input():
    b = Context().graph_builder()
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        b.resample2d(b.input("x", {"dataType": "int32", "shape": [1, 1, 2, 2]}), label="lbl")
