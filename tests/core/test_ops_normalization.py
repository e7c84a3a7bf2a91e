"""batchNormalization, instanceNormalization and layerNormalization against the
spec's formula written out with explicit loops and math.fsum, the epsilon cast,
and the validation cases WPT checks."""
import itertools
import math

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError


def run(build, *inputs):
    ctx = Context()
    b = ctx.graph_builder()
    ops = [None if a is None else b.input(f"x{i}", {"dataType": dt, "shape": list(np.shape(a))})
           for i, (dt, a) in enumerate(inputs)]
    g = b.build({"y": build(b, *ops)})
    feeds = {f"x{i}": np.asarray(a, dt) for i, (dt, a) in enumerate(inputs) if a is not None}
    return ctx.compute(g, feeds)["y"]


def raises(build, *descs, options=None):
    """descs: (dtype, shape) for positional operands; options: name -> (dtype, shape)."""
    b = Context().graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(s)}) for i, (dt, s) in enumerate(descs)]
    opts = {k: b.input(k, {"dataType": dt, "shape": list(s)}) for k, (dt, s) in (options or {}).items()}
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, *ops, **opts)


def normalize_ref(x, reduce_axes, mean_var, scale_at, bias_at, eps):
    """y[p] = (x[p] - mean) / sqrt(var + eps) * scale + bias, element by element.
    mean_var(p) -> (mean, var) or None to compute them over reduce_axes."""
    x = np.asarray(x, np.float64)
    out = np.empty_like(x)
    for p in np.ndindex(x.shape):
        if mean_var is not None:
            mean, var = mean_var(p)
        else:
            group = []
            for red in itertools.product(*[range(x.shape[a]) for a in reduce_axes]):
                q = list(p)
                for a, i in zip(reduce_axes, red):
                    q[a] = i
                group.append(float(x[tuple(q)]))
            mean = math.fsum(group) / len(group)
            var = math.fsum((g - mean) ** 2 for g in group) / len(group)
        y = (float(x[p]) - mean) / math.sqrt(var + eps)
        y = y * (scale_at(p) if scale_at else 1.0) + (bias_at(p) if bias_at else 0.0)
        out[p] = y
    return out


RNG = np.random.default_rng(0)


# ---------------------------------------------------------- batchNormalization
@pytest.mark.parametrize("axis", [0, 1, 3])
@pytest.mark.parametrize("with_scale_bias", [False, True])
def test_batch_normalization(axis, with_scale_bias):
    x = RNG.uniform(-5, 5, (2, 3, 2, 4)).astype(np.float32)
    c = x.shape[axis]
    mean = RNG.uniform(-1, 1, c).astype(np.float32)
    var = RNG.uniform(0.1, 2, c).astype(np.float32)
    scale = RNG.uniform(0.5, 2, c).astype(np.float32) if with_scale_bias else None
    bias = RNG.uniform(-1, 1, c).astype(np.float32) if with_scale_bias else None
    eps = float(np.float32(1e-3))

    def build(b, xi, m, v, s, bb):
        opts = {"axis": axis, "epsilon": 1e-3}
        if s is not None:
            opts.update(scale=s, bias=bb)
        return b.batchNormalization(xi, m, v, **opts)

    y = run(build, ("float32", x), ("float32", mean), ("float32", var), ("float32", scale), ("float32", bias))
    want = normalize_ref(x, None, lambda p: (float(mean[p[axis]]), float(var[p[axis]])),
                         (lambda p: float(scale[p[axis]])) if with_scale_bias else None,
                         (lambda p: float(bias[p[axis]])) if with_scale_bias else None, eps)
    np.testing.assert_allclose(y, want.astype(np.float32), rtol=2e-7, atol=1e-7)


def test_batch_normalization_float16_casts_epsilon():
    # SPEC: epsilon is cast to the input type; float16(1e-5) = 1.00135803e-05.
    x = np.array([[1.0]], np.float16)
    zero = np.array([0.0], np.float16)
    y = run(lambda b, xi, m, v: b.batchNormalization(xi, m, v), ("float16", x), ("float16", zero), ("float16", zero))
    assert y[0, 0] == np.float16(1 / math.sqrt(float(np.float16(1e-5))))
    assert y[0, 0] != np.float16(1 / math.sqrt(1e-5))


def test_batch_normalization_rank1_axis0():
    x = np.array([1, 2, 3], np.float32)
    y = run(lambda b, xi, m, v: b.batchNormalization(xi, m, v, axis=0, epsilon=0),
            ("float32", x), ("float32", np.array([1, 1, 1], np.float32)), ("float32", np.array([4, 1, 0.25], np.float32)))
    np.testing.assert_array_equal(y, [0, 1, 4])


def test_batch_normalization_validation():
    bn = lambda b, x, m, v, **o: b.batchNormalization(x, m, v, label="lbl", **o)  # noqa: E731
    x4 = ("float32", [1, 2, 5, 5])
    raises(bn, ("int32", [1, 2, 5, 5]), ("int32", [2]), ("int32", [2]))
    raises(bn, x4, ("float16", [2]), ("float32", [2]))
    raises(bn, x4, ("float32", [1, 2]), ("float32", [2]))
    raises(lambda b, x, m, v: bn(b, x, m, v, axis=1), x4, ("float32", [3]), ("float32", [2]))
    raises(bn, x4, ("float32", [2]), ("float16", [2]))
    raises(bn, x4, ("float32", [2]), ("float32", [2, 2]))
    raises(lambda b, x, m, v: bn(b, x, m, v, axis=2), x4, ("float32", [5]), ("float32", [2]))
    raises(bn, ("float16", [1, 2, 5, 5]), ("float16", [2]), ("float16", [2]), options={"scale": ("float32", [2])})
    raises(bn, x4, ("float32", [2]), ("float32", [2]), options={"scale": ("float32", [2, 1])})
    raises(lambda b, x, m, v, scale: bn(b, x, m, v, axis=2, scale=scale), x4, ("float32", [5]), ("float32", [5]),
           options={"scale": ("float32", [2])})
    raises(bn, ("float16", [1, 2, 5, 5]), ("float16", [2]), ("float16", [2]), options={"bias": ("float32", [2])})
    raises(bn, x4, ("float32", [2]), ("float32", [2]), options={"bias": ("float32", [2, 1])})
    raises(lambda b, x, m, v: bn(b, x, m, v, axis=4), x4, ("float32", [5]), ("float32", [5]))
    b = Context().graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [1, 2, 5, 5]})
    y = b.batchNormalization(x, b.input("m", {"dataType": "float32", "shape": [5]}),
                             b.input("v", {"dataType": "float32", "shape": [5]}), axis=2, epsilon=1e-4)
    assert (y.dtype, y.shape) == ("float32", (1, 2, 5, 5))
    other = Context().graph_builder().input("s", {"dataType": "float32", "shape": [2]})
    with pytest.raises(WebNNTypeError):
        b.batchNormalization(x, b.input("m2", {"dataType": "float32", "shape": [2]}),
                             b.input("v2", {"dataType": "float32", "shape": [2]}), scale=other)


# ------------------------------------------------------- instanceNormalization
@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_instance_normalization(layout, dtype):
    x = RNG.uniform(-3, 3, (2, 3, 4, 5)).astype(dtype)
    c_axis, spatial = (1, (2, 3)) if layout == "nchw" else (3, (1, 2))
    c = x.shape[c_axis]
    scale = RNG.uniform(0.5, 2, c).astype(dtype)
    bias = RNG.uniform(-1, 1, c).astype(dtype)
    y = run(lambda b, xi, s, bb: b.instanceNormalization(xi, scale=s, bias=bb, layout=layout),
            (dtype, x), (dtype, scale), (dtype, bias))
    eps = float(np.array(1e-5, dtype))
    want = normalize_ref(x, spatial, None, lambda p: float(scale[p[c_axis]]), lambda p: float(bias[p[c_axis]]), eps)
    if dtype == "float32":
        np.testing.assert_allclose(y, want.astype(np.float32), rtol=1e-6, atol=1e-6)
    else:  # computed in float64, one rounding
        np.testing.assert_array_equal(y, want.astype(np.float16))


def test_instance_normalization_defaults():
    x = np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2)
    y = run(lambda b, xi: b.instanceNormalization(xi, epsilon=0), ("float32", x))
    s = math.sqrt(1.25)
    np.testing.assert_allclose(y.ravel(), [-1.5 / s, -0.5 / s, 0.5 / s, 1.5 / s], rtol=1e-7)


def test_instance_normalization_validation():
    inorm = lambda b, x, **o: b.instanceNormalization(x, label="lbl", **o)  # noqa: E731
    raises(inorm, ("float32", [1, 2, 5, 5, 2]))
    raises(inorm, ("float32", [1, 2, 5]))
    raises(inorm, ("int32", [1, 2, 5, 5]))
    raises(inorm, ("float16", [1, 2, 5, 5]), options={"scale": ("float32", [2])})
    raises(inorm, ("float32", [1, 2, 5, 5]), options={"scale": ("float32", [2, 1])})
    raises(lambda b, x, **o: inorm(b, x, layout="nhwc", **o), ("float32", [1, 2, 5, 5]), options={"scale": ("float32", [2])})
    raises(lambda b, x, **o: inorm(b, x, layout="nchw", **o), ("float32", [1, 5, 5, 2]), options={"scale": ("float32", [2])})
    raises(inorm, ("float16", [1, 2, 5, 5]), options={"bias": ("float32", [2])})
    raises(lambda b, x, **o: inorm(b, x, layout="nhwc", **o), ("float32", [1, 2, 5, 5]), options={"bias": ("float32", [2])})
    b = Context().graph_builder()
    y = b.instanceNormalization(b.input("x", {"dataType": "float32", "shape": [1, 2, 3, 4]}), layout="nhwc",
                                scale=b.input("s", {"dataType": "float32", "shape": [4]}))
    assert y.shape == (1, 2, 3, 4)


# ---------------------------------------------------------- layerNormalization
@pytest.mark.parametrize("axes", [None, [2, 3], [3], [1, 3], [3, 1, 2], [0, 1, 2, 3]])
def test_layer_normalization(axes):
    x = RNG.uniform(-3, 3, (2, 3, 2, 4)).astype(np.float32)
    red = [1, 2, 3] if axes is None else axes
    pshape = [x.shape[a] for a in red]  # scale/bias follow the axes order
    scale = RNG.uniform(0.5, 2, pshape).astype(np.float32)
    bias = RNG.uniform(-1, 1, pshape).astype(np.float32)
    opts = {} if axes is None else {"axes": axes}
    y = run(lambda b, xi, s, bb: b.layerNormalization(xi, scale=s, bias=bb, **opts),
            ("float32", x), ("float32", scale), ("float32", bias))
    at = lambda t: (lambda p: float(t[tuple(p[a] for a in red)]))  # noqa: E731
    want = normalize_ref(x, red, None, at(scale), at(bias), float(np.float32(1e-5)))
    np.testing.assert_allclose(y, want.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_layer_normalization_empty_axes_and_scalar():
    x = np.array([[1, 5], [-2, 7]], np.float32)
    bias = np.float32(0.25)
    # axes=[]: every element is its own group, (x - x) = 0, so the output is the bias.
    y = run(lambda b, xi, bb: b.layerNormalization(xi, axes=[], bias=bb), ("float32", x), ("float32", bias))
    np.testing.assert_array_equal(y, np.full((2, 2), 0.25, np.float32))
    s = run(lambda b, xi: b.layerNormalization(xi), ("float16", np.float16(3)))
    assert s.shape == () and s == 0
    r1 = run(lambda b, xi: b.layerNormalization(xi), ("float32", np.array([1, 2, 3], np.float32)))
    np.testing.assert_array_equal(r1, [0, 0, 0])  # rank 1: default axes [] as well


def test_layer_normalization_validation():
    ln = lambda b, x, **o: b.layerNormalization(x, label="lbl", **o)  # noqa: E731
    x4 = ("float32", [1, 2, 3, 4])
    raises(ln, ("uint32", [1, 2, 3, 4]))
    raises(lambda b, x: ln(b, x, axes=[1, 2, 4]), x4)
    raises(lambda b, x: ln(b, x, axes=[3, 3]), x4)
    raises(lambda b, x, **o: ln(b, x, axes=[2, 3], **o), x4, options={"scale": ("float32", [3, 4]), "bias": ("float16", [3, 4])})
    raises(lambda b, x, **o: ln(b, x, axes=[2, 3], **o), x4, options={"scale": ("float16", [3, 4]), "bias": ("float32", [3, 4])})
    raises(ln, x4, options={"bias": ("float32", [3, 3, 4])})
    raises(ln, x4, options={"scale": ("float32", [3, 3, 4])})
    raises(ln, x4, options={"bias": ("float32", [1, 2, 3, 4])})
    raises(ln, x4, options={"scale": ("float32", [1, 2, 3, 4])})
    raises(lambda b, x, **o: ln(b, x, axes=[1, 3], **o), x4, options={"scale": ("float32", [4, 2])})  # wrong order
    b = Context().graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [1, 2, 3, 4, 5, 6]})
    y = b.layerNormalization(x, axes=[5, 4, 3, 2, 1], scale=b.input("s", {"dataType": "float32", "shape": [6, 5, 4, 3, 2]}),
                             bias=b.input("b", {"dataType": "float32", "shape": [6, 5, 4, 3, 2]}))
    assert y.shape == (1, 2, 3, 4, 5, 6)


def data_types(entry):
    """An opSupportLimits entry without its rankRanges (tested in test_spec_2026.py)."""
    return {k: {"dataTypes": v["dataTypes"]} for k, v in entry.items()}


def test_support_limits():
    limits = Context().op_support_limits()
    f = {"dataTypes": ["float32", "float16"]}
    assert data_types(limits["batchNormalization"]) == {k: f for k in ("input", "mean", "variance", "scale", "bias", "output")}
    for op in ("instanceNormalization", "layerNormalization"):
        assert data_types(limits[op]) == {k: f for k in ("input", "scale", "bias", "output")}


def test_inputs_not_modified():
    x = RNG.uniform(-1, 1, (1, 2, 2, 2)).astype(np.float32)
    keep = x.copy()
    run(lambda b, xi: b.instanceNormalization(xi), ("float32", x))
    run(lambda b, xi: b.layerNormalization(xi), ("float32", x))
    np.testing.assert_array_equal(x, keep)
