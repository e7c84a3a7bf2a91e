"""The XLA builder: the seed's worked examples (corrected where the digest lists
an erratum), XLA semantics checked against jax.lax where JAX is installed, and a
typed error for every operation WebNN cannot express."""
from __future__ import annotations

import numpy as np
import pytest

from webnn_core.xla import NotExpressibleError, XlaTypeError
from webnn_core.xla.builder import XlaBuilder

V = np.array([[[10, 11, 12], [15, 16, 17]], [[20, 21, 22], [25, 26, 27]],
              [[30, 31, 32], [35, 36, 37]], [[40, 41, 42], [45, 46, 47]]], np.float32)
B = np.arange(12, dtype=np.float32).reshape(4, 3)


def run(build, *args):
    """build(xb, *params) -> root; params are f32/s32/pred parameters shaped like args."""
    xb = XlaBuilder("test")
    types = {np.dtype(np.float32): "f32", np.dtype(np.int32): "s32", np.dtype(np.bool_): "pred"}
    params = [xb.Parameter(i, np.shape(a), types[np.asarray(a).dtype]) for i, a in enumerate(args)]
    root = build(xb, *params)
    out = xb.Build(root).run(*[np.asarray(a).astype(np.uint8) if np.asarray(a).dtype == np.bool_ else a
                               for a in args])
    return out if len(out) > 1 else out[0]


def computation(name, etype="f32"):
    sub = XlaBuilder(name)
    a, b = sub.Parameter(0, [], etype), sub.Parameter(1, [], etype)
    return sub.Build(getattr(sub, name)(a, b))


# ------------------------------------------------------------------ seed examples
def test_broadcast_scalar_seed():
    out = run(lambda xb, x: xb.Broadcast(x, [2, 3]), np.float32(2.0))
    np.testing.assert_array_equal(out, np.full((2, 3), 2.0, np.float32))


def test_broadcast_prepends_major_dims():
    x = np.array([1, 2, 3], np.float32)
    np.testing.assert_array_equal(run(lambda xb, p: xb.Broadcast(p, [2]), x), np.stack([x, x]))


def test_clamp_seed_argument_order_min_operand_max():
    out = run(lambda xb, x: xb.Clamp(xb.ConstantR0(0, "s32"), x, xb.ConstantR0(6, "s32")),
              np.array([-1, 5, 9], np.int32))
    np.testing.assert_array_equal(out, [0, 5, 6])


def test_clamp_with_array_bounds_and_lo_above_hi():
    lo = np.array([0, 5, 2], np.float32)
    hi = np.array([1, 1, 3], np.float32)  # lo > hi at index 1 gives hi (V-H3)
    out = run(lambda xb, l, x, h: xb.Clamp(l, x, h), lo, np.array([-1, 7, 2.5], np.float32), hi)
    np.testing.assert_array_equal(out, [0, 1, 2.5])


def test_collapse_seed_corrected():
    np.testing.assert_array_equal(run(lambda xb, v: xb.Collapse(v, [0, 1, 2]), V), V.reshape(24))
    # erratum E2: {0,1} gives [8,3] and {1,2} gives [4,6]
    np.testing.assert_array_equal(run(lambda xb, v: xb.Collapse(v, [0, 1]), V), V.reshape(8, 3))
    np.testing.assert_array_equal(run(lambda xb, v: xb.Collapse(v, [1, 2]), V), V.reshape(4, 6))
    with pytest.raises(XlaTypeError):
        run(lambda xb, v: xb.Collapse(v, [0, 2]), V)


def test_concatenate_seed():
    out = run(lambda xb, a, b, c: xb.ConcatInDim([a, b, c], 0), *[np.array(p, np.float32) for p in ([2, 3], [4, 5], [6, 7])])
    np.testing.assert_array_equal(out, [2, 3, 4, 5, 6, 7])
    a = np.array([[1, 2], [3, 4], [5, 6]], np.float32)
    b = np.array([[7, 8]], np.float32)
    np.testing.assert_array_equal(run(lambda xb, p, q: xb.ConcatInDim([p, q], 0), a, b), np.concatenate([a, b]))


def test_convert_element_type_seed():
    out = run(lambda xb, a: xb.ConvertElementType(a, "f32"), np.array([0, 1, 2], np.int32))
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [0, 1, 2])


def test_convert_to_pred_is_nonzero():
    out = run(lambda xb, a: xb.ConvertElementType(a, "pred"), np.array([0, 0.5, -3, 256], np.float32))
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, [False, True, True, True])


def test_tuple_and_get_tuple_element_seed():
    out = run(lambda xb, v, s: xb.GetTupleElement(xb.Tuple(v, s), 1), np.arange(10, dtype=np.float32), np.int32(5))
    assert out.shape == () and out == 5


def test_reduce_seed_examples():
    m = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    add = computation("Add")
    np.testing.assert_array_equal(run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(0)), add, [0]), m), [5, 7, 9])
    np.testing.assert_array_equal(run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(0)), add, [1]), m), [6, 15])
    cube = np.broadcast_to(m, (4, 2, 3)).copy()
    np.testing.assert_array_equal(run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(0)), add, [0]), cube),
                                  [[4, 8, 12], [16, 20, 24]])
    np.testing.assert_array_equal(run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(0)), add, [2]), cube),
                                  [[6, 15]] * 4)
    np.testing.assert_array_equal(run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(0)), add, [0, 1]), cube),
                                  [20, 28, 36])
    assert run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(0)), add, [0, 1, 2]), cube) == 84


def test_reduce_other_bodies_and_non_identity_init():
    m = np.array([[1, -2, 3], [4, 5, -6]], np.float32)
    np.testing.assert_array_equal(
        run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(-np.inf)), computation("Max"), [1]), m), [3, 5])
    np.testing.assert_array_equal(
        run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(np.float32(10)), computation("Add"), [0]), m), [15, 13, 7])
    p = np.array([[True, False], [True, True]])
    np.testing.assert_array_equal(
        run(lambda xb, x: xb.Reduce(x, xb.ConstantR0(True, "pred"), computation("And", "pred"), [1]), p), [False, True])


def test_reshape_seed_examples_corrected():
    np.testing.assert_array_equal(run(lambda xb, v: xb.Reshape(v, [24], [0, 1, 2]), V), V.reshape(24))
    np.testing.assert_array_equal(run(lambda xb, v: xb.Reshape(v, [8, 3], [0, 1, 2]), V), V.reshape(8, 3))
    # erratum E5: "021" means dimension order {1,2,0}
    v120 = V.transpose(1, 2, 0)
    np.testing.assert_array_equal(run(lambda xb, v: xb.Reshape(v, [24], [1, 2, 0]), V), v120.reshape(24))
    np.testing.assert_array_equal(run(lambda xb, v: xb.Reshape(v, [8, 3], [1, 2, 0]), V),
                                  [[10, 20, 30], [40, 11, 21], [31, 41, 12], [22, 32, 42],
                                   [15, 25, 35], [45, 16, 26], [36, 46, 17], [27, 37, 47]])
    np.testing.assert_array_equal(run(lambda xb, v: xb.Reshape(v, [2, 6, 2], [1, 2, 0]), V), v120.reshape(2, 6, 2))
    assert run(lambda xb, v: xb.Reshape(v, [], [0, 1]), np.array([[5]], np.float32)).shape == ()
    np.testing.assert_array_equal(run(lambda xb, v: xb.Reshape(v, [1, 1], []), np.float32(5)), [[5]])


def test_select_seed_examples():
    pred = np.array([True, False, False, True])
    v1 = np.array([1, 2, 3, 4], np.int32)
    v2 = np.array([100, 200, 300, 400], np.int32)
    np.testing.assert_array_equal(run(lambda xb, p, a, b: xb.Select(p, a, b), pred, v1, v2), [1, 200, 300, 4])
    np.testing.assert_array_equal(run(lambda xb, p, a, b: xb.Select(p, a, b), np.bool_(True), v1, v2), v1)


def test_slice_seed_examples():
    a = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(run(lambda xb, x: xb.Slice(x, [2], [4]), a), [2, 3])
    np.testing.assert_array_equal(run(lambda xb, x: xb.Slice(x, [2, 1], [4, 3]), B), [[7, 8], [10, 11]])


def test_dynamic_slice_seed_and_clamping():
    a = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(run(lambda xb, x, s: xb.DynamicSlice(x, s, [2]), a, np.array([2], np.int32)), [2, 3])
    np.testing.assert_array_equal(run(lambda xb, x, s: xb.DynamicSlice(x, s, [2, 2]), B, np.array([2, 1], np.int32)),
                                  [[7, 8], [10, 11]])
    # modern XLA clamps the start so the window fits (digest 2.14), never wraps
    np.testing.assert_array_equal(run(lambda xb, x, s: xb.DynamicSlice(x, s, [2, 2]), B, np.array([9, -3], np.int32)),
                                  [[6, 7], [9, 10]])


def test_dynamic_update_slice_seed_and_clamping():
    a = np.arange(5, dtype=np.float32)
    out = run(lambda xb, x, u, s: xb.DynamicUpdateSlice(x, u, s), a, np.array([5, 6], np.float32), np.array([2], np.int32))
    np.testing.assert_array_equal(out, [0, 1, 5, 6, 4])
    u = np.array([[12, 13], [14, 15], [16, 17]], np.float32)
    out = run(lambda xb, x, up, s: xb.DynamicUpdateSlice(x, up, s), B, u, np.array([1, 1], np.int32))
    np.testing.assert_array_equal(out, [[0, 1, 2], [3, 12, 13], [6, 14, 15], [9, 16, 17]])
    out = run(lambda xb, x, up, s: xb.DynamicUpdateSlice(x, up, s), B, u, np.array([5, -1], np.int32))
    np.testing.assert_array_equal(out, [[0, 1, 2], [12, 13, 5], [14, 15, 8], [16, 17, 11]])


def test_transpose_and_rev():
    np.testing.assert_array_equal(run(lambda xb, v: xb.Transpose(v, [2, 0, 1]), V), V.transpose(2, 0, 1))
    np.testing.assert_array_equal(run(lambda xb, v: xb.Rev(v, [0, 2]), V), V[::-1, :, ::-1])


def test_elementwise_and_broadcast_dimensions_square_case():
    """V-H1: mapping a [2] operand onto dim 0 of a [2,2] one must not align on trailing dims."""
    m = np.array([[1, 2], [3, 4]], np.float32)
    v = np.array([10, 20], np.float32)
    np.testing.assert_array_equal(run(lambda xb, a, b: xb.Add(a, b, broadcast_dimensions=[0]), m, v),
                                  [[11, 12], [23, 24]])
    np.testing.assert_array_equal(run(lambda xb, a, b: xb.Add(a, b, broadcast_dimensions=[1]), m, v),
                                  [[11, 22], [13, 24]])
    with pytest.raises(XlaTypeError, match="broadcast_dimensions"):
        run(lambda xb, a, b: xb.Add(a, b), m, v)


def test_integer_div_truncates_and_rem_is_fmod():
    a = np.array([-7, 7, -7, 7], np.int32)
    b = np.array([2, -2, -2, 2], np.int32)
    np.testing.assert_array_equal(run(lambda xb, x, y: xb.Div(x, y), a, b), [-3, -3, 3, 3])
    np.testing.assert_array_equal(run(lambda xb, x, y: xb.Rem(x, y), a, b), np.fmod(a, b))
    f = np.array([-7.5, 7.5, 5.25, -0.5], np.float32)
    g = np.array([2, -2, 1.5, 3], np.float32)
    np.testing.assert_allclose(run(lambda xb, x, y: xb.Rem(x, y), f, g), np.fmod(f, g))


def test_unary_ops_sign_isfinite_compare_logic():
    x = np.array([-2.5, -0.0, 0.0, 3.0, np.inf, np.nan], np.float32)
    np.testing.assert_array_equal(run(lambda xb, a: xb.IsFinite(a), x), np.isfinite(x))
    s = run(lambda xb, a: xb.Sign(a), x[:5])
    np.testing.assert_array_equal(s, [-1, 0, 0, 1, 1])
    y = np.array([1, 2, 3], np.float32)
    z = np.array([3, 2, 1], np.float32)
    out = run(lambda xb, a, b: xb.Tuple(xb.Eq(a, b), xb.Ne(a, b), xb.Ge(a, b), xb.Gt(a, b), xb.Le(a, b), xb.Lt(a, b)),
              y, z)
    for got, exp in zip(out, (y == z, y != z, y >= z, y > z, y <= z, y < z)):
        np.testing.assert_array_equal(got, exp)
    p = np.array([True, False, True])
    q = np.array([True, True, False])
    a, o, n = run(lambda xb, a, b: xb.Tuple(xb.And(a, b), xb.Or(a, b), xb.Not(a)), p, q)
    np.testing.assert_array_equal(a, p & q)
    np.testing.assert_array_equal(o, p | q)
    np.testing.assert_array_equal(n, ~p)


def test_dot_ranks():
    a = np.array([1, 2, 3], np.float32)
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert run(lambda xb, x, y: xb.Dot(x, y), a, a) == 14
    np.testing.assert_array_equal(run(lambda xb, x, y: xb.Dot(x, y), m, a), m @ a)
    np.testing.assert_array_equal(run(lambda xb, x, y: xb.Dot(x, y), m, m.T), m @ m.T)
    mi = m.astype(np.int32)
    np.testing.assert_array_equal(run(lambda xb, x, y: xb.Dot(x, y), mi, mi.T.copy()), mi @ mi.T)


def test_map_applies_an_elementwise_body():
    sub = XlaBuilder("body")
    p, q = sub.Parameter(0, [], "f32"), sub.Parameter(1, [], "f32")
    body = sub.Build(sub.Add(sub.Mul(p, q), sub.ConstantR0(np.float32(1))))
    x = np.array([1, 2, 3], np.float32)
    y = np.array([4, 5, 6], np.float32)
    np.testing.assert_array_equal(run(lambda xb, a, b: xb.Map([a, b], body), x, y), x * y + 1)


def test_call_inlines_a_computation():
    sub = XlaBuilder("f")
    p = sub.Parameter(0, [3], "f32")
    f = sub.Build(sub.Tanh(sub.Neg(p)))
    x = np.array([0.5, -1, 2], np.float32)
    np.testing.assert_allclose(run(lambda xb, a: xb.Call(f, a), x), np.tanh(-x), rtol=1e-6)


def test_reduce_precision():
    x = np.array([1.0 + 2 ** -12, 70000, 65519, 1.5], np.float32)
    out = run(lambda xb, a: xb.ReducePrecision(a, exponent_bits=5, mantissa_bits=10), x)
    np.testing.assert_array_equal(out, np.array([1.0, np.inf, 65504, 1.5], np.float32))  # ties-to-even, overflow
    np.testing.assert_array_equal(run(lambda xb, a: xb.ReducePrecision(a, exponent_bits=8, mantissa_bits=23), x), x)


# ------------------------------------------------------------------ typed errors (X rows)
X_OPS = [
    ("While", lambda xb, x: xb.While(None, None, x), "loops"),
    ("Infeed", lambda xb, x: xb.Infeed([2]), "streams"),
    ("CrossReplicaSum", lambda xb, x: xb.CrossReplicaSum(x), "replicas"),
    ("CustomCall", lambda xb, x: xb.CustomCall("myfunc", [x], [2]), "extension"),
    ("RngBernoulli", lambda xb, x: xb.RngBernoulli(x, [2]), "random"),
    ("RngNormal", lambda xb, x: xb.RngNormal(x, x, [2]), "random"),
    ("RngUniform", lambda xb, x: xb.RngUniform(x, x, [2]), "random"),
    ("Sort", lambda xb, x: xb.Sort(x), "sort"),
    ("ReducePrecision", lambda xb, x: xb.ReducePrecision(x, exponent_bits=4, mantissa_bits=3), "bit"),
]


@pytest.mark.parametrize("name, call, reason", X_OPS, ids=[x[0] for x in X_OPS])
def test_inexpressible_ops_raise_a_typed_error(name, call, reason):
    xb = XlaBuilder()
    x = xb.Parameter(0, [2], "f32")
    with pytest.raises(NotExpressibleError) as e:
        call(xb, x)
    assert e.value.op == name and str(e.value).startswith(f"{name}: cannot be expressed in WebNN")
    assert reason in str(e.value)
    assert e.value.js_name == "NotSupportedError"


def test_unrecognised_computations_raise_a_typed_error():
    xb = XlaBuilder()
    x = xb.Parameter(0, [4], "f32")
    sub_body = computation("Sub")
    with pytest.raises(NotExpressibleError, match="Reduce.*Sub"):
        xb.Reduce(x, xb.ConstantR0(np.float32(0)), sub_body, [0])
    with pytest.raises(NotExpressibleError, match="ReduceWindow"):
        xb.ReduceWindow(x, xb.ConstantR0(np.float32(0)), sub_body, [2], [1])
    with pytest.raises(NotExpressibleError, match="SelectAndScatter"):
        xb.SelectAndScatter(x, computation("Lt"), [2], [2], "VALID", xb.Parameter(1, [2], "f32"),
                            xb.ConstantR0(np.float32(0)), computation("Add"))
    sub = XlaBuilder("r")
    p, q = sub.Parameter(0, [], "f32"), sub.Parameter(1, [], "f32")
    reducing = sub.Build(sub.Reduce(sub.Broadcast(p, [2]), q, computation("Add"), [0]))
    with pytest.raises(NotExpressibleError, match="Map.*Reduce"):
        xb.Map([x, x], reducing)
    with pytest.raises(NotExpressibleError, match="bitwise"):
        xb.And(xb.Parameter(2, [4], "s32"), xb.Parameter(3, [4], "s32"))


# ------------------------------------------------------------------ against jax.lax
jax = pytest.importorskip("jax", reason="jax is a test-only dev dependency (pip install jax==0.10.2 jaxlib==0.10.2)")
lax = jax.lax
RNG = np.random.default_rng(11)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("config", [
    [(1, 2, 0), (0, 0, 1)], [(-1, 1, 1), (2, -2, 2)], [(0, 0, 3), (-3, 1, 0)], [(2, -3, 1), (1, 1, 0)]])
def test_pad_general_matches_lax(config):
    x = f32(3, 4)
    out = run(lambda xb, a: xb.Pad(a, xb.ConstantR0(np.float32(-1.5)), config), x)
    np.testing.assert_array_equal(out, np.asarray(lax.pad(x, np.float32(-1.5), config)))
    out = run(lambda xb, a, v: xb.Pad(a, v, config), x, np.float32(4.25))  # runtime pad value
    np.testing.assert_array_equal(out, np.asarray(lax.pad(x, np.float32(4.25), config)))


@pytest.mark.parametrize("window, strides, padding", [
    ((2, 2), (1, 1), "VALID"), ((3, 3), (2, 2), "SAME"), ((2, 3), (2, 1), "SAME"), ((1, 4), (1, 3), "VALID")])
@pytest.mark.parametrize("kind", ["Max", "Add", "Min"])
def test_reduce_window_matches_lax(kind, window, strides, padding):
    x = f32(1, 2, 7, 8)
    init = {"Max": -np.inf, "Add": 0.0, "Min": np.inf}[kind]
    fn = {"Max": lax.max, "Add": lax.add, "Min": lax.min}[kind]
    out = run(lambda xb, a: xb.ReduceWindow(a, xb.ConstantR0(np.float32(init)), computation(kind), (1, 1) + window,
                                            (1, 1) + strides, padding), x)
    exp = lax.reduce_window(x, np.float32(init), fn, (1, 1) + window, (1, 1) + strides, padding)
    np.testing.assert_allclose(out, np.asarray(exp), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("strides, padding, lhs_dil, rhs_dil", [
    ((1, 1), [(0, 0), (0, 0)], (1, 1), (1, 1)), ((2, 1), [(1, 2), (0, 1)], (1, 1), (1, 2)),
    ((1, 1), [(1, 1), (2, 2)], (2, 2), (1, 1)), ((1, 2), [(0, 0), (1, 0)], (1, 1), (2, 1))])
def test_conv_with_general_padding_matches_lax(strides, padding, lhs_dil, rhs_dil):
    x, w = f32(2, 3, 7, 6), f32(4, 3, 3, 2)
    out = run(lambda xb, a, k: xb.ConvWithGeneralPadding(a, k, strides, padding, lhs_dil, rhs_dil), x, w)
    exp = lax.conv_general_dilated(x, w, strides, padding, lhs_dil, rhs_dil)
    np.testing.assert_allclose(out, np.asarray(exp), rtol=1e-4, atol=1e-4)
    out = run(lambda xb, a, k: xb.Conv(a, k, strides, "SAME"), x, w)
    np.testing.assert_allclose(out, np.asarray(lax.conv_general_dilated(x, w, strides, "SAME")), rtol=1e-4, atol=1e-4)


def test_batch_norm_training_and_grad_match_jax():
    import jax.numpy as jnp

    x, g, b, dy = f32(4, 3, 2, 2), f32(3), f32(3), f32(4, 3, 2, 2)
    eps = 1e-3
    y, mean, var = run(lambda xb, a, s, o: xb.BatchNormTraining(a, s, o, eps, 1), x, g, b)

    def bn(a, s, o):
        m = a.mean(axis=(0, 2, 3))
        v = a.var(axis=(0, 2, 3))
        return (a - m[None, :, None, None]) / jnp.sqrt(v[None, :, None, None] + eps) * s[None, :, None, None] \
            + o[None, :, None, None], m, v

    ey, em, ev = bn(x, g, b)
    for got, exp in ((y, ey), (mean, em), (var, ev)):
        np.testing.assert_allclose(got, np.asarray(exp), rtol=1e-4, atol=1e-5)
    gx, gs, go = run(lambda xb, a, s, m, v, d: xb.BatchNormGrad(a, s, m, v, d, eps, 1), x, g,
                     np.asarray(em), np.asarray(ev), dy)
    # the gradient through the batch statistics (training mode), as XLA's BatchNormGrad defines it
    _, vjp_full = jax.vjp(lambda a, s, o: bn(a, s, o)[0], x, g, b)
    egx, egs, ego = vjp_full(dy)
    np.testing.assert_allclose(gx, np.asarray(egx), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gs, np.asarray(egs), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(go, np.asarray(ego), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("window, strides, padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "VALID"),
                                                      ((3, 3), (1, 1), "SAME")])
def test_select_and_scatter_is_the_max_pool_gradient(window, strides, padding):
    x = np.round(f32(1, 1, 6, 7) * 2) / 2  # ties, to pin first-index selection
    pool = lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 1) + window, (1, 1) + strides, padding)  # noqa: E731
    y, vjp = jax.vjp(pool, x)
    src = f32(*y.shape)
    exp, = vjp(src)
    out = run(lambda xb, a, s: xb.SelectAndScatter(a, computation("Ge"), (1, 1) + window, (1, 1) + strides, padding,
                                                   s, xb.ConstantR0(np.float32(0)), computation("Add")), x, src)
    np.testing.assert_allclose(out, np.asarray(exp), rtol=1e-5, atol=1e-6)
