"""The microkernels of csrc/ against the numpy reference kernels, on edge
shapes: M, N, K off the 4 x 8 blocking, 1x1 and k x k, strides, dilations,
groups, depthwise, asymmetric padding, batches, NaN. Every test runs twice:
on the native build (ctypes) and on the shipped wasm build (under Node),
both driven by the same fast-path code Pyodide runs."""
import math

import numpy as np
import pytest

from webnn_core import Context
from webnn_core.backends.cpu import CpuBackend, fast
from webnn_core.backends.cpu.fast import paths
from webnn_core.backends.cpu.fast.pack import pack_b, pack_conv
from webnn_core.ops.conv import conv2d_nhwc

RNG = np.random.default_rng(20240601)
U = 2.0 ** -24  # float32 unit roundoff


@pytest.fixture
def cpu():
    """A cpu backend of the test's own (its fallback reasons, its scratch)."""
    return CpuBackend()


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def assert_dot_close(got, exact, magnitude, k):
    """|got - exact| within the float32 summation bound of k products (x2 slack)."""
    got = np.asarray(got, np.float64)
    bound = 2 * (k + 2) * U * magnitude + 1e-30
    err = np.abs(got - exact)
    bad = err > bound
    assert not bad.any(), f"{bad.sum()} elements off: max err {err.max():.3g}, bound there {bound[bad].min():.3g}"


def conv_attrs(padding=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), groups=1, layout="nhwc"):
    return {"padding": list(padding), "strides": list(strides), "dilations": list(dilations), "groups": groups,
            "layout": layout, "filter_perm": (0, 1, 2, 3)}


# ---------------------------------------------------------------------- GEMM --
GEMM_SHAPES = [(1, 1, 1), (1, 8, 1), (1, 40, 17), (1, 1001, 64), (5, 70, 9), (3, 5, 7), (4, 8, 16), (5, 9, 3), (7, 17, 33), (13, 8, 1), (33, 31, 64),
               (64, 1, 9), (2, 100, 5), (130, 24, 300), (9, 3, 2049)]


@pytest.mark.parametrize("m,n,k", GEMM_SHAPES)
def test_gemm_matches_numpy(backend, m, n, k):
    a, b = rand(m, k), rand(k, n)
    bias = rand(n)
    bp = pack_b(b)
    biasp = np.zeros(-(-n // 8) * 8, np.float32)
    biasp[:n] = bias
    c = np.full((m, n), np.nan, np.float32)
    backend.gemm(m, n, k, paths.addr(a), k, paths.addr(bp), paths.addr(biasp), paths.addr(c), n, -math.inf, math.inf)
    exact = a.astype(np.float64) @ b.astype(np.float64) + bias
    mag = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) + np.abs(bias)
    assert_dot_close(c, exact, mag, k)


def test_gemm_strided_rows_and_clamp(backend):
    m, n, k = 11, 13, 19
    big_a = rand(m, k + 5)
    a = big_a[:, 2:2 + k]  # row stride k + 5
    b = rand(k, n)
    out = np.full((m, n + 7), 42.0, np.float32)  # row stride n + 7: the extra columns must survive
    bp = pack_b(b)
    backend.gemm(m, n, k, paths.addr(a), k + 5, paths.addr(bp), 0, paths.addr(out[:, 3:]), n + 7, -0.5, 0.75)
    exact = np.clip(a.astype(np.float64) @ b, -0.5, 0.75)
    assert np.all(out[:, :3] == 42.0) and np.all(out[:, 3 + n:] == 42.0)
    assert_dot_close(out[:, 3:3 + n], exact, np.abs(a).astype(np.float64) @ np.abs(b), k)


def test_gemm_propagates_nan_through_clamp(backend):
    a, b = rand(6, 5), rand(5, 10)
    a[2, 3] = np.nan
    bp = pack_b(b)
    c = np.empty((6, 10), np.float32)
    backend.gemm(6, 10, 5, paths.addr(a), 5, paths.addr(bp), 0, paths.addr(c), 10, 0.0, 6.0)
    assert np.isnan(c[2]).all()
    assert not np.isnan(np.delete(c, 2, axis=0)).any()
    assert c[~np.isnan(c)].min() >= 0 and c[~np.isnan(c)].max() <= 6


@pytest.mark.parametrize("k,n", [(1, 1), (5, 8), (7, 13), (33, 24), (3, 17)])
@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_pack_b_matches_numpy_packer(backend, k, n, layout):
    b = rand(k, n) if layout == "kn" else rand(n, k).T  # a transposed view: strides (4, 4k)
    bp = np.full(-(-n // 8) * 8 * k, np.nan, np.float32)
    backend.pack_b(k, n, paths.addr(b), b.strides[0] // 4, b.strides[1] // 4, paths.addr(bp))
    np.testing.assert_array_equal(bp, pack_b(b))


# -------------------------------------------------------------------- conv2d --
# (n, h, w, c, o, kh, kw, strides, dilations, padding [t, b, l, r], groups)
CONV_CASES = [
    (1, 5, 7, 3, 5, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), 1),     # 1x1 direct, M=35, N=5 < 8
    (2, 4, 4, 33, 17, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), 1),   # 1x1 direct, batch 2, K=33
    (1, 9, 9, 8, 9, 1, 1, (2, 2), (1, 1), (0, 0, 0, 0), 1),     # 1x1 strided (im2col)
    (1, 4, 4, 4, 8, 1, 1, (1, 1), (1, 1), (1, 0, 0, 1), 1),     # 1x1 padded
    (1, 6, 6, 16, 24, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 1),   # 3x3 same
    (1, 11, 10, 5, 7, 3, 3, (2, 2), (1, 1), (0, 1, 1, 0), 1),   # strided, asymmetric padding
    (1, 12, 12, 4, 6, 3, 3, (1, 1), (2, 3), (2, 2, 3, 3), 1),   # dilations
    (1, 23, 23, 3, 16, 7, 7, (2, 2), (1, 1), (2, 3, 2, 3), 1),  # conv1-like, same-upper
    (1, 8, 9, 6, 10, 2, 5, (1, 2), (1, 1), (0, 1, 2, 2), 1),    # rectangular kernel
    (1, 2, 2, 3, 4, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 1),     # kernel larger than the input
    (2, 5, 5, 64, 8, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 1),    # im2col blocks cross images
    (3, 3, 4, 2, 3, 2, 2, (1, 1), (1, 1), (0, 0, 0, 0), 1),     # tiny, batch 3
    (1, 7, 7, 8, 12, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 2),    # groups
    (1, 5, 5, 9, 6, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), 3),     # grouped 1x1 (direct)
    (1, 9, 8, 6, 12, 3, 3, (2, 1), (1, 2), (1, 2, 2, 1), 3),    # grouped, strided, dilated
    (1, 10, 10, 20, 20, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 20),  # depthwise: 16 + 4 channels
    (2, 9, 11, 7, 7, 3, 3, (2, 2), (1, 1), (0, 1, 1, 0), 7),    # depthwise: scalar tail, strided
    (1, 12, 12, 36, 36, 5, 5, (1, 1), (2, 2), (4, 4, 4, 4), 36),  # depthwise 5x5 dilated
    (1, 6, 6, 4, 8, 3, 3, (1, 1), (1, 1), (1, 1, 1, 1), 4),     # depthwise multiplier 2 (grouped GEMM)
]


def _conv_reference(x, w, bias, attrs):
    args = (attrs["padding"], attrs["strides"], attrs["dilations"], attrs["groups"])
    exact = conv2d_nhwc(x.astype(np.float64), w.astype(np.float64), bias.astype(np.float64), *args)
    mag = conv2d_nhwc(np.abs(x).astype(np.float64), np.abs(w).astype(np.float64), np.abs(bias).astype(np.float64), *args)
    ref32 = conv2d_nhwc(x, w, bias, *args)
    return exact, mag, ref32


@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "x".join(map(str, c[:7])) + f"_s{c[7]}_d{c[8]}_p{c[9]}_g{c[10]}")
def test_conv2d_matches_numpy(backend, cpu, case):
    n, h, w, c, o, kh, kw, strides, dilations, padding, groups = case
    x = rand(n, h, w, c)
    wt = rand(o, kh, kw, c // groups, scale=0.5)
    bias = rand(o)
    attrs = conv_attrs(padding, strides, dilations, groups)
    got = paths.conv2d(cpu, attrs, x, wt, bias)
    assert got is not None, cpu.fallback_reasons
    exact, mag, ref32 = _conv_reference(x, wt, bias, attrs)
    assert got.shape == ref32.shape
    assert_dot_close(got, exact, mag, kh * kw * (c // groups))
    if groups == c and o == c and not backend.fused_madd:  # depthwise: same products, same order: bit-identical
        np.testing.assert_array_equal(got, ref32)


@pytest.mark.parametrize("lo,hi", [(0.0, math.inf), (0.0, 6.0), (-1.0, 1.0), (-math.inf, 0.25)])
@pytest.mark.parametrize("depthwise", [False, True])
def test_conv2d_activation_epilogue(backend, lo, hi, depthwise):
    c = 12
    x = rand(1, 7, 6, c)
    groups, o = (c, c) if depthwise else (1, 10)
    wt = rand(o, 3, 3, c // groups)
    bias = rand(o)
    attrs = conv_attrs((1, 1, 1, 1), groups=groups)
    prep = pack_conv(wt, bias, groups)
    y = np.empty((1, 7, 6, o), np.float32)
    paths.conv2d_into(fast.library(), prep, attrs, x, y, lo, hi)
    exact, mag, _ = _conv_reference(x, wt, bias, attrs)
    # Clamping is monotonic: clamp(exact) bounds hold for clamp(got).
    assert_dot_close(y, np.clip(exact, lo, hi), mag, 9 * (c // groups))


def test_conv2d_into_channel_slice(backend):
    """A convolution writing its channels into a slice of a wider buffer (concat in place)."""
    x = rand(2, 5, 5, 6)
    wt, bias = rand(7, 3, 3, 6), rand(7)
    attrs = conv_attrs((1, 1, 1, 1))
    buf = np.full((2, 5, 5, 20), -7.0, np.float32)
    paths.conv2d_into(fast.library(), pack_conv(wt, bias, 1), attrs, x, buf[..., 9:16], -math.inf, math.inf)
    exact, mag, _ = _conv_reference(x, wt, bias, attrs)
    assert_dot_close(buf[..., 9:16], exact, mag, 54)
    assert np.all(buf[..., :9] == -7) and np.all(buf[..., 16:] == -7)


def test_conv2d_nchw_and_filter_layouts(backend, cpu):
    x = rand(1, 5, 8, 9)  # NCHW
    w_oihw = rand(6, 5, 3, 3)
    attrs = conv_attrs((1, 1, 0, 2), (1, 2), layout="nchw")
    attrs["filter_perm"] = (0, 2, 3, 1)
    got = paths.conv2d(cpu, attrs, x, w_oihw, None)
    from webnn_core.ops import ops

    ref = ops()["conv2d"].compute(attrs, x, w_oihw)
    assert got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)


def test_conv2d_declines_float16(backend, cpu):
    x = rand(1, 4, 4, 3).astype(np.float16)
    w = rand(2, 1, 1, 3).astype(np.float16)
    assert paths.conv2d(cpu, conv_attrs(), x, w, None) is None
    assert "float32 only" in cpu.fallback_reasons["conv2d"]


def test_no_backend_declines_with_reason(cpu):
    fast.detach("testing: no backend")
    assert paths.conv2d(cpu, conv_attrs(), rand(1, 2, 2, 1), rand(1, 1, 1, 1), None) is None
    assert cpu.fallback_reasons["conv2d"] == "testing: no backend"
    assert fast.status() == {"backend": None, "detail": None, "reason": "testing: no backend"}


# ------------------------------------------------------------------- pooling --
def _pool_graph(kind, shape, layout="nhwc", **opts):
    ctx = Context("cpu")
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": list(shape)})
    return ctx, b.build({"y": getattr(b, kind)(x, layout=layout, **opts)})


POOL_CASES = [
    ((1, 9, 9, 20), dict(windowDimensions=[3, 3], strides=[2, 2])),
    ((2, 10, 7, 7), dict(windowDimensions=[2, 3], strides=[1, 2], padding=[1, 0, 2, 1])),
    ((1, 17, 17, 5), dict(windowDimensions=[3, 3], strides=[2, 2], dilations=[2, 1], roundingType="ceil")),
    ((1, 8, 8, 33), dict(windowDimensions=[3, 3], strides=[3, 3], padding=[1, 1, 1, 1], roundingType="ceil")),
    ((1, 13, 13, 17), dict()),  # global
    ((1, 3, 3, 4), dict(windowDimensions=[2, 2], padding=[2, 2, 2, 2])),  # windows wholly in the padding
]


@pytest.mark.parametrize("kind", ["maxPool2d", "averagePool2d"])
@pytest.mark.parametrize("shape,opts", POOL_CASES)
def test_pool_matches_numpy(backend, kind, shape, opts):
    x = rand(*shape)
    if kind == "maxPool2d":
        x.reshape(-1)[::37] = np.nan
        x.reshape(-1)[5::41] = -np.inf
    ctx, graph = _pool_graph(kind, shape, **opts)
    ctx.backend.set_profiling(True)
    got = ctx.compute(graph, {"x": x})["y"]
    ctx.backend.set_profiling(False)
    assert ctx.backend.profile()[kind]["fast_calls"] == 1, ctx.backend.fallback_reasons
    ctx.backend.set_fast_paths(False)
    ref = ctx.compute(graph, {"x": x})["y"]
    if kind == "maxPool2d":
        np.testing.assert_array_equal(got, ref)  # exact, NaN where numpy has NaN
    else:
        np.testing.assert_array_max_ulp(got, ref, maxulp=1)


def test_pool_nchw(backend):
    x = rand(1, 6, 9, 9)
    ctx, graph = _pool_graph("averagePool2d", x.shape, layout="nchw", windowDimensions=[3, 3], padding=[1, 1, 1, 1])
    got = ctx.compute(graph, {"x": x})["y"]
    ctx.backend.set_fast_paths(False)
    np.testing.assert_array_max_ulp(got, ctx.compute(graph, {"x": x})["y"], maxulp=1)


# --------------------------------------------------------------- elementwise --
@pytest.mark.parametrize("n", [4096, 5003])
def test_clamp_kernel(backend, n):
    x = rand(n, scale=4)
    x[::97] = np.nan
    y = np.empty_like(x)
    backend.clamp(n, paths.addr(x), paths.addr(y), -1.5, 2.0)
    ref = np.where(x < -1.5, np.float32(-1.5), x)
    ref = np.where(ref > 2.0, np.float32(2.0), ref)
    np.testing.assert_array_equal(y, ref)


# Special values for pow: zeros of both signs, infinities, NaN, negatives, the
# float32 extremes and subnormals, then ordinary magnitudes.
POW_SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.5, 1e-45, 1e-40, 3e38, 1.0, 2.0, 0.5],
                        np.float32)


@pytest.mark.parametrize("q", [1, 2, 3, 4, 5, 6, 7, 8, 12, 15, 16, -1, -2, -3, -4, -6, -8, -13, -16])
def test_powq_is_the_float64_reference_rounded_once(backend, q):
    """wk_powq(x, q) = x ** (q / 4) as ops/elementwise.py computes pow (float64, one
    rounding to float32): bit for bit on random magnitudes and IEEE special values."""
    x = np.concatenate([POW_SPECIALS, rand(4099, scale=30), np.abs(rand(997, scale=1e-3)), POW_SPECIALS[::-1]])
    y = np.empty_like(x)
    backend.powq(x.size, paths.addr(x), paths.addr(y), q)
    with np.errstate(all="ignore"):
        ref = np.power(x.astype(np.float64), np.float64(q / 4)).astype(np.float32)
    np.testing.assert_array_equal(y.view(np.uint32)[~np.isnan(ref)], ref.view(np.uint32)[~np.isnan(ref)])
    assert np.isnan(y[np.isnan(ref)]).all()


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("sa,sb", [(1, 1), (1, 0), (0, 1)])
def test_binary_kernel_is_numpy_float32(backend, op, sa, sb):
    n = 4103
    a = rand(n if sa else 1, scale=3)
    b = rand(n if sb else 1, scale=3)
    if sa and sb:
        a[:5] = [np.inf, -np.inf, np.nan, 0.0, 1e-40]
        b[:5] = [np.inf, 0.0, 1.0, -0.0, 3.0]
    y = np.empty(n, np.float32)
    backend.binary(paths.BINARY_OPS[op], n, paths.addr(a), sa, paths.addr(b), sb, paths.addr(y))
    fn = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[op]
    with np.errstate(all="ignore"):
        ref = fn(np.broadcast_to(a, (n,)), np.broadcast_to(b, (n,)))
    nan = np.isnan(ref)
    np.testing.assert_array_equal(y.view(np.uint32)[~nan], ref.view(np.uint32)[~nan])
    assert np.isnan(y[nan]).all()


@pytest.mark.parametrize("batch,rows,cols", [(1, 1, 1), (1, 3, 50176), (2, 13, 17), (3, 64, 9), (1, 8, 8),
                                            (2, 784, 136), (1, 5, 4), (1, 4, 7)])
def test_transpose_kernel(backend, batch, rows, cols):
    x = rand(batch, rows, cols)
    y = np.empty((batch, cols, rows), np.float32)
    backend.transpose(batch, rows, cols, paths.addr(x), paths.addr(y))
    np.testing.assert_array_equal(y, x.transpose(0, 2, 1))


@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (0, 3, 1, 2), (0, 1, 3, 2)])
@pytest.mark.parametrize("shape", [(2, 3, 37, 41), (1, 30, 9, 23)])
def test_transpose_fast_path_in_a_graph(backend, perm, shape):
    """The layout transposes (NCHW <-> NHWC) come back contiguous from wk_transpose,
    equal to numpy's; other permutations stay numpy views."""
    x = rand(*shape)
    ctx = Context("cpu")
    gb = ctx.graph_builder()
    a = gb.input("a", {"dataType": "float32", "shape": list(x.shape)})
    graph = gb.build({"y": gb.transpose(a, permutation=list(perm))})
    got = ctx.backend.run_node(graph.plan.nodes[0], [x])[0]
    np.testing.assert_array_equal(got, np.transpose(x, perm))
    assert got.flags.c_contiguous == (perm != (0, 1, 3, 2))
    np.testing.assert_array_equal(ctx.compute(graph, {"a": x})["y"], np.transpose(x, perm))


@pytest.mark.parametrize("p,g,cg", [(1, 2, 1), (7, 4, 34), (33, 3, 5), (5, 8, 68)])
def test_shuffle_kernel_is_the_reshape_transpose_reshape(backend, p, g, cg):
    x = rand(p, g * cg)
    x[0, 0] = np.nan  # moved, not computed
    y = np.empty_like(x)
    backend.shuffle(p, g, cg, paths.addr(x), paths.addr(y))
    ref = x.reshape(p, g, cg).transpose(0, 2, 1).reshape(p, g * cg)
    np.testing.assert_array_equal(y.view(np.uint32), ref.view(np.uint32))


def _channel_average_reference(x, k, p0, p1):
    """LRN's denominator as ONNX Runtime's WebNN EP builds it: the reference kernels of
    pad -> transpose -> averagePool2d (1 x k) -> transpose, each output rounded to float32."""
    from webnn_core.registry import OPS

    y = np.pad(x, ((0, 0), (0, 0), (0, 0), (p0, p1)))
    t = np.transpose(y, (0, 2, 3, 1))
    n, h, w, c = t.shape
    attrs = {"window": (1, k), "padding": (0, 0, 0, 0), "strides": (1, 1), "dilations": (1, 1), "layout": "nhwc",
             "out_hw": (h, w - k + 1)}
    with np.errstate(all="ignore"):  # inf - inf in the specials' windows
        a = OPS["averagePool2d"].compute(attrs, t).astype(np.float32)
    return np.transpose(a, (0, 3, 1, 2))


@pytest.mark.parametrize("c,k,p0,p1", [(64, 5, 2, 2), (13, 5, 2, 2), (3, 5, 2, 2), (9, 3, 0, 2), (10, 7, 3, 3),
                                       (6, 1, 0, 0), (17, 4, 1, 2), (12, 5, 0, 0), (8, 6, 4, 1)])
def test_channel_average_kernel_is_the_reference(backend, c, k, p0, p1):
    """wk_chanavg equals the four reference steps bit for bit, IEEE specials included."""
    x = rand(2, 3, 5, c, scale=3.0)
    for at, values in (((0, 0, 0), [np.nan, np.inf, -np.inf, -0.0]), ((0, 1, 2), [1e-42, -1e-42, 3e38]),
                       ((1, 2, 4), [3e38, 3e38]), ((1, 0, 1), [-0.0] * c)):
        x[at][:len(values)] = values[:c]
    ref = _channel_average_reference(x, k, p0, p1)
    co = ref.shape[3]
    y = np.empty((2, 3, 5, co), np.float32)
    backend.chanavg(2 * 3 * 5, c, co, k, p0, paths.addr(x), paths.addr(y))
    np.testing.assert_array_equal(y.view(np.uint32), ref.view(np.uint32))


def _binary_graph(op, a_shape, b_shape, b_const=False, b_value=None):
    ctx = Context("cpu")
    gb = ctx.graph_builder()
    a = gb.input("a", {"dataType": "float32", "shape": list(a_shape)})
    if b_const:
        b = gb.constant({"dataType": "float32", "shape": list(b_shape)}, np.full(b_shape, b_value, np.float32))
    else:
        b = gb.input("b", {"dataType": "float32", "shape": list(b_shape)})
    return ctx, gb.build({"y": getattr(gb, op)(a, b)})


@pytest.mark.parametrize("e", [0.75, 2.0, -0.5, 0.3])
def test_pow_fast_path_in_a_graph(backend, e):
    """LRN's pow(x, 0.75) and friends on the fast path equal the numpy kernel;
    an exponent off the quarter grid declines with a reason."""
    x = np.abs(rand(2, 48, 9, 7)) + np.float32(0.5)
    ctx, graph = _binary_graph("pow", x.shape, [], b_const=True, b_value=e)
    got = ctx.compute(graph, {"a": x})["y"]
    used = ctx.backend.fallback_reasons.get("pow")
    ctx.backend.set_fast_paths(False)
    ref = ctx.compute(graph, {"a": x})["y"]
    np.testing.assert_array_equal(got, ref)
    if e == 0.3:
        assert "not a non-zero multiple of 1/4" in used
    else:
        assert used is None


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("b_shape", [(2, 48, 9, 7), (1,), ()])
def test_binary_fast_paths_in_a_graph(backend, op, b_shape):
    a = rand(2, 48, 9, 7)
    b = rand(*b_shape) + np.float32(4)  # no division by ~0
    ctx, graph = _binary_graph(op, a.shape, b_shape)
    got = ctx.compute(graph, {"a": a, "b": b})["y"]
    assert ctx.backend.fallback_reasons.get(op) is None
    ctx.backend.set_fast_paths(False)
    np.testing.assert_array_equal(got, ctx.compute(graph, {"a": a, "b": b})["y"])


@pytest.mark.parametrize("o,kh,kw,ig,groups", [(5, 1, 1, 3, 1), (17, 3, 3, 4, 1), (12, 3, 2, 3, 3), (8, 3, 3, 1, 4)])
def test_pack_conv_with_the_kernel_packer_matches_numpy(backend, o, kh, kw, ig, groups):
    w = rand(kh, kw, ig, o).transpose(3, 0, 1, 2)  # an HWIO filter seen as OHWI: not contiguous
    bias = rand(o)
    ref = pack_conv(w, bias, groups)
    got = pack_conv(w, bias, groups, backend)
    assert got.kind == ref.kind == "gemm"
    np.testing.assert_array_equal(got.w, ref.w)
    np.testing.assert_array_equal(got.bias, ref.bias)
