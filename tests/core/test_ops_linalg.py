"""matmul and gemm against float64 references (explicit sums over k),
hand-computed examples, broadcasting, float16 and validation errors."""
import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

RNG = np.random.default_rng(3)


def run(build, *inputs):
    ctx = Context()
    b = ctx.graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(np.shape(a))}) for i, (dt, a) in enumerate(inputs)]
    g = b.build({"y": build(b, *ops)})
    return ctx.compute(g, {f"x{i}": np.asarray(a) for i, (_, a) in enumerate(inputs)})["y"]


def raises(build, *descs):
    b = Context().graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(s)}) for i, (dt, s) in enumerate(descs)]
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, *ops)


def ref_matmul(a, b):
    """Batch-broadcast matrix product as an explicit sum over k, in float64."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = np.broadcast_to(a, batch + a.shape[-2:])
    b = np.broadcast_to(b, batch + b.shape[-2:])
    return (a[..., :, :, None] * b[..., None, :, :]).sum(axis=-2)


def test_matmul_hand_example():
    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([[5, 6, 7], [8, 9, 10]], np.float32)
    y = run(lambda bb, x, w: bb.matmul(x, w), ("float32", a), ("float32", b))
    np.testing.assert_array_equal(y, [[21, 24, 27], [47, 54, 61]])


@pytest.mark.parametrize("sa,sb", [
    ((3, 4), (4, 5)),
    ((2, 3, 4), (4, 5)),
    ((2, 1, 3, 4), (5, 4, 2)),
    ((1, 3, 4), (6, 4, 2)),
    ((2, 3, 1, 4), (1, 3, 4, 1)),
])
def test_matmul_broadcast_matches_reference(sa, sb):
    a = RNG.standard_normal(sa).astype(np.float32)
    b = RNG.standard_normal(sb).astype(np.float32)
    y = run(lambda bb, x, w: bb.matmul(x, w), ("float32", a), ("float32", b))
    exp = ref_matmul(a, b)
    assert y.shape == exp.shape and y.dtype == np.float32
    np.testing.assert_allclose(y, exp, rtol=1e-5, atol=1e-5)


def test_matmul_float16():
    a = RNG.standard_normal((2, 3, 8)).astype(np.float16)
    b = RNG.standard_normal((8, 4)).astype(np.float16)
    y = run(lambda bb, x, w: bb.matmul(x, w), ("float16", a), ("float16", b))
    assert y.dtype == np.float16
    np.testing.assert_allclose(y.astype(np.float64), ref_matmul(a, b), rtol=3e-3, atol=3e-3)


@pytest.mark.parametrize("sa,sb,dta,dtb", [
    ((3, 4), (5, 6), "float32", "float32"),       # inner dimensions differ
    ((4,), (4, 2), "float32", "float32"),         # rank 1
    ((2, 3, 4), (3, 4, 2), "float32", "float32"),  # batch not broadcastable
    ((3, 4), (4, 2), "float32", "float16"),
    ((3, 4), (4, 2), "int32", "int32"),
])
def test_matmul_validation(sa, sb, dta, dtb):
    raises(lambda bb, x, w: bb.matmul(x, w, label="lbl"), (dta, sa), (dtb, sb))


@pytest.mark.parametrize("aT", [False, True])
@pytest.mark.parametrize("bT", [False, True])
@pytest.mark.parametrize("c_shape", [None, (), (5,), (3, 1), (3, 5)])
@pytest.mark.parametrize("alpha,beta", [(1.0, 1.0), (0.5, -2.0), (2.0, 0.0)])
def test_gemm_matches_reference(aT, bT, c_shape, alpha, beta):
    m, k, n = 3, 4, 5
    a = RNG.standard_normal((k, m) if aT else (m, k)).astype(np.float32)
    b = RNG.standard_normal((n, k) if bT else (k, n)).astype(np.float32)
    inputs = [("float32", a), ("float32", b)]
    if c_shape is not None:
        inputs.append(("float32", RNG.standard_normal(c_shape).astype(np.float32)))

    def build(bb, x, w, c=None):
        opts = dict(alpha=alpha, beta=beta, aTranspose=aT, bTranspose=bT)
        if c is not None:
            opts["c"] = c
        return bb.gemm(x, w, **opts)

    y = run(build, *inputs)
    ea = a.T if aT else a
    eb = b.T if bT else b
    exp = alpha * ref_matmul(ea, eb)
    if c_shape is not None:
        exp = exp + beta * np.broadcast_to(inputs[2][1].astype(np.float64), (m, n))
    assert y.shape == (m, n)
    np.testing.assert_allclose(y, exp, rtol=1e-5, atol=1e-5)


def test_gemm_hand_example_and_float16():
    a = np.array([[1, 2], [3, 4]], np.float16)
    b = np.array([[1, 0], [0, 1]], np.float16)
    c = np.array([10, 20], np.float16)
    y = run(lambda bb, x, w, cc: bb.gemm(x, w, c=cc, alpha=2.0, beta=0.5),
            ("float16", a), ("float16", b), ("float16", c))
    assert y.dtype == np.float16
    np.testing.assert_array_equal(y, [[7, 14], [11, 18]])


@pytest.mark.parametrize("sa,sb,opts", [
    ((3, 4), (5, 6), {}),
    ((3, 4), (3, 5), dict(bTranspose=True)),
    ((2, 3, 4), (4, 5), {}),
    ((4,), (4, 5), {}),
])
def test_gemm_validation(sa, sb, opts):
    raises(lambda bb, x, w: bb.gemm(x, w, label="lbl", **opts), ("float32", sa), ("float32", sb))


@pytest.mark.parametrize("c", [("float32", (2, 5)), ("float32", (4,)), ("float32", (1, 3, 5)), ("float16", (5,))])
def test_gemm_c_validation(c):
    raises(lambda bb, x, w, cc: bb.gemm(x, w, c=cc, label="lbl"), ("float32", (3, 4)), ("float32", (4, 5)), c)
