"""Every standard-library operator this importer maps or composes, run through a
one-operator SkriptND graph and compared with an independent numpy reference
written from the operator's SkriptND definition (seed §4)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from nnef2_helpers import one_op

R = np.random.default_rng(7)
X = R.standard_normal((2, 3, 4)).astype(np.float32)
Y = R.standard_normal((3, 4)).astype(np.float32)
POS = (np.abs(X) + 0.5).astype(np.float32)
UNIT = np.clip(X, -0.9, 0.9).astype(np.float32)
B = (X > 0).astype(np.uint8)
B2 = (R.standard_normal((2, 3, 4)) > 0).astype(np.uint8)
erf = np.vectorize(math.erf)

UNARY = {
    "math.iden": (X, lambda x: x), "math.neg": (X, lambda x: -x), "math.sqr": (X, lambda x: x * x),
    "math.abs": (X, np.abs), "math.sign": (X, np.sign), "math.cos": (X, np.cos), "math.cosh": (X, np.cosh),
    "math.rcp": (POS, lambda x: 1 / x), "math.sqrt": (POS, np.sqrt), "math.rsqr": (POS, lambda x: 1 / x ** 2),
    "math.rsqrt": (POS, lambda x: 1 / np.sqrt(x)), "math.exp": (X, np.exp), "math.log": (POS, np.log),
    "math.log2": (POS, np.log2), "math.sin": (X, np.sin), "math.tan": (UNIT, np.tan), "math.sinh": (X, np.sinh),
    "math.tanh": (X, np.tanh), "math.floor": (X * 3, np.floor), "math.ceil": (X * 3, np.ceil),
    "math.round": (np.array([-2.5, -1.5, -0.4, 0.5, 1.5, 2.6], np.float32),
                   lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
    "nn.relu": (X, lambda x: np.maximum(x, 0)), "nn.sigmoid": (X, lambda x: 1 / (1 + np.exp(-x))),
    "nn.gelu": (X, lambda x: 0.5 * x * (1 + erf(x / np.sqrt(2)))),
    "nn.elu": (X, lambda x: np.where(x < 0, np.exp(x) - 1, x)), "nn.silu": (X, lambda x: x / (1 + np.exp(-x))),
    "nn.softplus": (X, lambda x: np.log1p(np.exp(x))),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(op):
    x, ref = UNARY[op]
    y = one_op(f"y = {op}(x);", {"x": x}, {"y": "real"})["y"]
    np.testing.assert_allclose(y, ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_not():
    y = one_op("y = math.not(x);", {"x": B}, {"y": "bool"})["y"]
    np.testing.assert_array_equal(y, 1 - B)


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "min": np.minimum,
          "max": np.maximum, "pow": lambda a, b: np.power(np.abs(a) + 0.5, b),
          "mod": lambda a, b: a - np.floor(a / b) * b}
COMPARE = {"lt": np.less, "gt": np.greater, "le": np.less_equal, "ge": np.greater_equal, "eq": np.equal,
           "ne": np.not_equal}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_right_aligned_broadcast(op):
    x = np.abs(X) + 0.5 if op == "pow" else X
    y = one_op(f"z = math.{op}(x, y);", {"x": x, "y": Y}, {"z": "real"})["z"]
    ref = BINARY[op](X.astype(np.float64), Y.astype(np.float64)) if op == "pow" else BINARY[op](x.astype(np.float64), Y)
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", sorted(COMPARE))
def test_comparison(op):
    z = one_op(f"z = math.{op}(x, y);", {"x": X, "y": Y}, {"z": "bool"})["z"]
    np.testing.assert_array_equal(z, COMPARE[op](X, Y).astype(np.uint8))


@pytest.mark.parametrize("op, ref", [("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)])
def test_logical(op, ref):
    z = one_op(f"z = math.{op}(x, y);", {"x": B, "y": B2}, {"z": "bool"})["z"]
    np.testing.assert_array_equal(z, ref(B, B2).astype(np.uint8))


def test_left_alignment_attribute():
    # lhs_align=0: y [2] is aligned with x's first dimension (2-D padding on the right)
    v = R.standard_normal(2).astype(np.float32)
    z = one_op("z = math.add{rhs_align=0}(x, v);", {"x": X, "v": v}, {"z": "real"})["z"]
    np.testing.assert_allclose(z, X + v[:, None, None], rtol=1e-6)


def test_select_clamp_axpb_axpby():
    a = np.float32(0.5)
    out = one_op("""s = math.select(c, x, y);
        k = math.clamp(x, -0.5, 0.5);
        l = math.axpb(2.0, x, y);
        m = math.axpby(2.0, x, 3.0, y);""", {"c": B, "x": X, "y": Y},
                 {"s": "real", "k": "real", "l": "real", "m": "real"})
    np.testing.assert_allclose(out["s"], np.where(B, X, Y))
    np.testing.assert_allclose(out["k"], np.clip(X, -0.5, 0.5))
    np.testing.assert_allclose(out["l"], 2 * X + Y, rtol=1e-6)
    np.testing.assert_allclose(out["m"], 2 * X + 3 * Y, rtol=1e-6)
    assert a


REDUCE = {"min_reduce": np.min, "max_reduce": np.max, "sum_reduce": np.sum, "prod_reduce": np.prod,
          "mean_reduce": np.mean}


@pytest.mark.parametrize("op", sorted(REDUCE))
@pytest.mark.parametrize("squeeze", [False, True])
def test_reductions(op, squeeze):
    y = one_op(f"y = math.{op}{{axes=[0, -1], squeeze={str(squeeze).lower()}}}(x);", {"x": X}, {"y": "real"})["y"]
    np.testing.assert_allclose(y, REDUCE[op](X, axis=(0, 2), keepdims=not squeeze), rtol=1e-5, atol=1e-6)


def test_lp_any_all_arg_moments():
    out = one_op("""a = math.lp_reduce{axes=[1], p=2.0}(x);
        b = math.lp_reduce{axes=[1], p=1.0}(x);
        c = math.any_reduce{axes=[1]}(m);
        d = math.all_reduce{axes=[1], squeeze=true}(m);
        e = math.argmax{axis=2}(x);
        f = math.argmin{axis=1, squeeze=true}(x);
        g, h = math.moments{axes=[2]}(x);""", {"x": X, "m": B}, {k: t for k, t in zip(
        "abcdefgh", ["real", "real", "bool", "bool", "int", "int", "real", "real"])})
    np.testing.assert_allclose(out["a"], np.sqrt((X ** 2).sum(1, keepdims=True)), rtol=1e-5)
    np.testing.assert_allclose(out["b"], np.abs(X).sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(out["c"], B.max(1, keepdims=True))
    np.testing.assert_array_equal(out["d"], B.min(1))
    np.testing.assert_array_equal(out["e"], X.argmax(2)[..., None])
    np.testing.assert_array_equal(out["f"], X.argmin(1))
    np.testing.assert_allclose(out["g"], X.mean(2, keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["h"], X.var(2, keepdims=True), rtol=1e-4, atol=1e-6)


def test_linalg():
    a = R.standard_normal((3, 5)).astype(np.float32)
    b = R.standard_normal((5, 2)).astype(np.float32)
    c = R.standard_normal((3, 2)).astype(np.float32)
    v, w = R.standard_normal(5).astype(np.float32), R.standard_normal(5).astype(np.float32)
    out = one_op("""p = linalg.matmul(a, b);
        q = linalg.matmul{transA=true, transB=true}(b, a);
        r = linalg.matmul(a, b, c);
        s = linalg.dot(v, w);
        t = linalg.outer(v, w);""", {"a": a, "b": b, "c": c, "v": v, "w": w}, dict.fromkeys("pqrst", "real"))
    np.testing.assert_allclose(out["p"], a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["q"], (a @ b).T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["r"], a @ b + c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["s"], v @ w, rtol=1e-5)
    np.testing.assert_allclose(out["t"], np.outer(v, w), rtol=1e-6)


def test_layout():
    out = one_op("""a = layout.reshape{shape=[2, -1]}(x);
        b = layout.flatten{axis=1}(x);
        c = layout.unflatten{axis=2, shape=[2, 2]}(x);
        d = layout.unsqueeze{axes=[0, 4]}(x);
        e = layout.squeeze{axes=[0]}(d);
        f = layout.transpose{perm=[2, 0, 1]}(x);
        g = layout.concat{axis=1}([x, x]);
        h = layout.stack{axis=1}([y, y]);
        i = layout.tile{repeats=[1, 2, 1]}(x);
        j = layout.slice{axes=[2], begin=[1], end=[4], stride=[2]}(x);
        k = layout.pad{padding=[0, 1, 0, 0, 2, 1], method='REFLECT'}(x);
        l = layout.broadcast{shape=[2, 3, 4]}(z);""", {"x": X, "y": Y, "z": X[:1, :, :1]}, dict.fromkeys("abcdefghijkl", "real"))
    np.testing.assert_array_equal(out["a"], X.reshape(2, -1))
    np.testing.assert_array_equal(out["b"], X.reshape(2, 12))
    np.testing.assert_array_equal(out["c"], X.reshape(2, 3, 2, 2))
    np.testing.assert_array_equal(out["d"], X[None, ..., None])
    np.testing.assert_array_equal(out["e"], X[..., None])
    np.testing.assert_array_equal(out["f"], X.transpose(2, 0, 1))
    np.testing.assert_array_equal(out["g"], np.concatenate([X, X], 1))
    np.testing.assert_array_equal(out["h"], np.stack([Y, Y], 1))
    np.testing.assert_array_equal(out["i"], np.tile(X, (1, 2, 1)))
    np.testing.assert_array_equal(out["j"], X[:, :, 1:4:2])
    np.testing.assert_array_equal(out["k"], np.pad(X, [(0, 0), (1, 2), (0, 1)], mode="reflect"))
    np.testing.assert_array_equal(out["l"], np.broadcast_to(X[:1, :, :1], (2, 3, 4)))


def test_split_unstack_gather_cast_constants():
    idx = np.array([2, 0, 1], np.int32)
    out = one_op("""[a, b] = layout.split{axis=2, sizes=[1, 3]}(x);
        [c, d] = layout.unstack{axis=0}(x);
        e = layout.gather{axis=1}(x, i);
        f = layout.cast<int>(x);
        g = layout.constant{shape=[2, 2], value=[1.0, 2.0, 3.0, 4.0]}();
        h = layout.range{first=1, last=10, stride=3}();
        k = layout.shape(x);
        l = layout.tensor{shape=[2], value=7}();""", {"x": X, "i": idx},
                 {"a": "real", "b": "real", "c": "real", "d": "real", "e": "real", "f": "int", "g": "real",
                  "h": "int", "k": "int", "l": "int"})
    np.testing.assert_array_equal(out["a"], X[:, :, :1])
    np.testing.assert_array_equal(out["b"], X[:, :, 1:])
    np.testing.assert_array_equal(out["c"], X[0])
    np.testing.assert_array_equal(out["d"], X[1])
    np.testing.assert_array_equal(out["e"], X[:, idx])
    np.testing.assert_array_equal(out["f"], X.astype(np.int32))
    np.testing.assert_array_equal(out["g"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out["h"], [1, 4, 7])
    np.testing.assert_array_equal(out["k"], [2, 3, 4])
    np.testing.assert_array_equal(out["l"], [7, 7])


def conv_ref(x, w, b, stride, pad, groups=1):
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])])
    oh = (xp.shape[2] - kh) // stride + 1
    ow = (xp.shape[3] - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    per = o // groups
    for oc in range(o):
        g = oc // per
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * ci:(g + 1) * ci, i * stride:i * stride + kh, j * stride:j * stride + kw]
                y[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3))
    return y + (b[None, :, None, None] if b is not None else 0)


def test_conv_and_pools():
    x = R.standard_normal((1, 4, 7, 7)).astype(np.float32)
    w = R.standard_normal((6, 2, 3, 3)).astype(np.float32)
    b = R.standard_normal(6).astype(np.float32)
    out = one_op("""a = nn.conv{stride=2, padding=[1, 0, 1, 2], groups=2}(x, w, b);
        c = nn.conv{groups=2}(x, w);
        m = nn.max_pool{size=3, stride=2}(x);
        v = nn.avg_pool{size=3, stride=2, padding=1}(x);
        s = nn.sum_pool{size=2, stride=1, padding=0}(x);""", {"x": x, "w": w, "b": b}, dict.fromkeys("acmvs", "real"))
    np.testing.assert_allclose(out["a"], conv_ref(x, w, b, 2, [1, 0, 1, 2], 2), rtol=1e-4, atol=1e-4)
    # padding null: 'UPPER' automatic padding keeping ceil(size / stride) outputs
    np.testing.assert_allclose(out["c"], conv_ref(x, w, None, 1, [1, 1, 1, 1], 2), rtol=1e-4, atol=1e-4)
    # padding null, floor mode: the definition's automatic total padding is 0 here -> 3 x 3
    ref_m = np.array([[[[x[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max() for j in range(3)] for i in range(3)]
                       for c in range(4)]])
    np.testing.assert_allclose(out["m"], ref_m, rtol=1e-6)
    xv = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    ones = np.pad(np.ones_like(x), [(0, 0), (0, 0), (1, 1), (1, 1)])
    ref_v = np.array([[[[xv[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum() / ones[0, c, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum()
                         for j in range(4)] for i in range(4)] for c in range(4)]])
    np.testing.assert_allclose(out["v"], ref_v, rtol=1e-5, atol=1e-6)
    ref_s = x[:, :, :-1, :-1] + x[:, :, 1:, :-1] + x[:, :, :-1, 1:] + x[:, :, 1:, 1:]
    np.testing.assert_allclose(out["s"], ref_s, rtol=1e-5, atol=1e-5)


def test_deconv_linear_norms_activations():
    x = R.standard_normal((1, 2, 3, 3)).astype(np.float32)
    w = R.standard_normal((2, 3, 2, 2)).astype(np.float32)
    f = R.standard_normal((4, 6)).astype(np.float32)
    v = R.standard_normal((5, 6)).astype(np.float32)
    mean, var = R.standard_normal(2).astype(np.float32), (R.random(2) + 0.5).astype(np.float32)
    out = one_op("""d = nn.deconv{stride=2, padding=0}(x, w);
        l = nn.linear(v, f);
        n = nn.batch_norm{epsilon=0.001}(x, mean, var);
        s = nn.softmax{axes=[1, 2]}(x);
        r = nn.relu{alpha=0.1, max=0.5}(x);
        t = nn.thresholded_relu{theta=0.3}(x);
        p = nn.prelu(x, mean);""", {"x": x, "w": w, "f": f, "v": v, "mean": mean, "var": var},
                 dict.fromkeys("dlnsrtp", "real"))
    ref_d = np.zeros((1, 3, 6, 6))
    for ic in range(2):
        for i in range(3):
            for j in range(3):
                ref_d[0, :, 2 * i:2 * i + 2, 2 * j:2 * j + 2] += x[0, ic, i, j] * w[ic]
    np.testing.assert_allclose(out["d"], ref_d, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(out["l"], v @ f.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["n"], (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 0.001),
                               rtol=1e-4, atol=1e-5)
    e = np.exp(x - x.max(axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(out["s"], e / e.sum(axis=(1, 2), keepdims=True), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["r"], np.minimum(np.where(x < 0, 0.1 * x, x), 0.5), rtol=1e-6)
    np.testing.assert_allclose(out["t"], np.where(x > 0.3, x, 0), rtol=1e-6)
    np.testing.assert_allclose(out["p"], np.where(x < 0, x * mean[:, None, None], x), rtol=1e-6)


def test_image_sampling():
    x = R.standard_normal((1, 2, 4, 6)).astype(np.float32)
    out = one_op("""u = image.nearest_upsample{axes=[2, 3], factor=[2, 3]}(x);
        d = image.nearest_downsample{axes=[2, 3], factor=2}(x);""", {"x": x}, {"u": "real", "d": "real"})
    np.testing.assert_array_equal(out["u"], x.repeat(2, 2).repeat(3, 3))
    np.testing.assert_array_equal(out["d"], x[:, :, ::2, ::2])


def test_operators_composed_from_their_skriptnd_bodies():
    """Standard operators without a direct mapping run by inlining their @compose body."""
    x = R.standard_normal((1, 4, 6, 6)).astype(np.float32)
    out = one_op("""a = nn.l2_norm{axes=[1]}(x);
        b = nn.l1_norm{axes=[1], epsilon=0.5}(x);
        c = nn.mean_variance_norm(x);
        d = layout.shuffle{axis=1, groups=2}(x);
        e = image.area_downsample{axes=[2, 3], factor=[2, 3]}(x);
        f = nn.rms_pool{size=[2, 2], stride=[2, 2]}(x);
        g = nn.lp_pool{size=[3, 3], stride=[3, 3], p=3.0}(x);""", {"x": x}, dict.fromkeys("abcdefg", "real"))
    np.testing.assert_allclose(out["a"], x / np.sqrt((x ** 2).sum(1, keepdims=True)), rtol=1e-5)
    np.testing.assert_allclose(out["b"], x / np.maximum(np.abs(x).sum(1, keepdims=True), 0.5), rtol=1e-5)
    mean, var = x.mean((2, 3), keepdims=True), x.var((2, 3), keepdims=True)
    np.testing.assert_allclose(out["c"], (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(out["d"], x.reshape(1, 2, 2, 6, 6).transpose(0, 2, 1, 3, 4).reshape(1, 4, 6, 6))
    np.testing.assert_allclose(out["e"], x.reshape(1, 4, 3, 2, 2, 3).mean((3, 5)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["f"], np.sqrt((x ** 2).reshape(1, 4, 3, 2, 3, 2).mean((3, 5))), rtol=1e-5)
    np.testing.assert_allclose(out["g"], (np.abs(x) ** 3).reshape(1, 4, 2, 3, 2, 3).sum((3, 5)) ** (1 / 3),
                               rtol=1e-4)


def test_fake_quantization():
    x = (R.standard_normal((1, 3, 4)) * 2).astype(np.float32)
    out = one_op("""a = quant.zero_point_linear_quantize{zero_point=[0, 1, -2], scale=[0.1, 0.05, 0.2], bits=4}(x);
        b = quant.min_max_linear_quantize{min=-1.0, max=1.5, bits=8, signed=false}(x);""",
                 {"x": x}, {"a": "real", "b": "real"}, imports=("quant",))
    rnd = lambda v: np.sign(v) * np.floor(np.abs(v) + 0.5)
    zp, sc = np.array([0, 1, -2])[None, :, None], np.array([0.1, 0.05, 0.2])[None, :, None]
    q = np.clip(zp + rnd(x / sc), -8, 7)
    np.testing.assert_allclose(out["a"], (q - zp) * sc, rtol=1e-5, atol=1e-6)
    r = 255.0
    q = rnd((np.clip(x, -1.0, 1.5) + 1.0) / 2.5 * r)
    np.testing.assert_allclose(out["b"], q / r * 2.5 - 1.0, rtol=1e-5, atol=1e-6)
