"""The float64-exact kernels of csrc/exact64.h (erf, layerNormalization over the
last axes) in every build (native, wasm simd128, wasm relaxed): against the numpy
reference kernels they replace (identical results), against independent float64
math (math.erf; exact sums with math.fsum) within WPT's tolerances, and through
a graph with the fast paths on and off."""
import math

import numpy as np
import pytest

from webnn_core import Context
from webnn_core.backends.cpu.backend import CpuBackend
from webnn_core.ops.elementwise import erf as reference_erf
from webnn_core.registry import OPS

RNG = np.random.default_rng(17)


def addr(a):
    return a.__array_interface__["data"][0]


def ulp_diff(a, b):
    """float32 distance in units in the last place, sign-magnitude like WPT's metric."""
    def key(v):
        i = np.asarray(v, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(a) - key(b))


def kernel_erf(lib, x):
    x = np.ascontiguousarray(x, np.float32)
    y = np.full_like(x, 7.0)
    lib.erf(x.size, addr(x), addr(y))
    return y


def erf_inputs():
    """Every region of the kernel: the small polynomial, the erfc polynomial, past 4,
    the boundaries 1 and 4 and their neighbours, zeros, subnormals, infinities, NaN."""
    f = np.float32
    edges = [0.0, -0.0, 1e-45, -1e-45, 1e-38, 1e-30, 1e-6, 0.5, 1.0, 4.0, 3.92, 5.0, 9.0, 1e30,
             np.inf, -np.inf, np.nan]
    near = [np.nextafter(f(v), f(d)) for v in (1.0, 4.0) for d in (0.0, 10.0)]
    grid = np.linspace(-6, 6, 60001, dtype=np.float32)
    rand = (RNG.standard_normal(20000) * 2).astype(np.float32)
    x = np.concatenate([np.array(edges + near, np.float32), grid, rand]).astype(np.float32)
    return np.concatenate([x, -x])


def test_erf_equals_the_reference_and_math_erf(backend):
    x = erf_inputs()
    got = kernel_erf(backend, x)
    want = reference_erf(x).astype(np.float32)  # the numpy kernel, rounded once like the cpu backend
    nan = np.isnan(x)
    assert np.isnan(got[nan]).all()
    # Bit-identical except where libm's exp and fdlibm's differ in the last float64 bit
    # right at a float32 rounding boundary (never seen on this grid, allowed: 1 ulp).
    assert ulp_diff(got[~nan], want[~nan]).max() <= 1
    assert (got[~nan].view(np.int32) != want[~nan].view(np.int32)).sum() <= 2
    # Independent: math.erf in float64, rounded once. 1 ulp (WPT allows an absolute 1/1024).
    exact = np.array([math.erf(float(v)) for v in x[~nan]]).astype(np.float32)
    assert ulp_diff(got[~nan], exact).max() <= 1
    assert np.signbit(got[x == 0]).tolist() == np.signbit(x[x == 0]).tolist()


def test_erf_of_nothing_writes_nothing(backend):
    y = np.full(4, 7.0, np.float32)
    x = np.ones(4, np.float32)
    backend.erf(0, addr(x), addr(y))
    assert (y == 7.0).all()


def reference_layer_norm(x, scale, bias, axes, eps):
    op = OPS["layerNormalization"]
    return op.compute({"axes": axes, "epsilon": eps}, x, scale, bias).astype(np.float32)


def kernel_layer_norm(lib, x, scale, bias, k, eps):
    x = np.ascontiguousarray(x, np.float32)
    n = int(np.prod(x.shape[x.ndim - k:]))
    y = np.full_like(x, 7.0)
    s = None if scale is None else np.ascontiguousarray(scale)
    b = None if bias is None else np.ascontiguousarray(bias)
    lib.layer_norm(x.size // n, n, addr(x), 0 if s is None else addr(s), 0 if b is None else addr(b), addr(y),
                   eps)
    return y


EPS = float(np.float32(1e-5))
LN_CASES = [
    # shape, number of trailing axes normalized, scale, bias
    ((1, 16, 64), 1, True, True),   # the transformer block's
    ((5, 3), 1, False, False),      # rows shorter than numpy's 8-accumulator block
    ((4, 7), 1, True, False),
    ((3, 9), 1, False, True),
    ((2, 128), 1, True, True),      # one 8-accumulator block
    ((2, 129), 1, True, True),      # halves (pairwise)
    ((2, 1000), 1, True, True),
    ((1, 8192 + 300), 1, True, True),  # beyond numpy's buffer: two chunks
    ((2, 3, 4, 5), 3, True, True),  # several trailing axes: one row of 60
    ((2, 3, 4, 5), 2, False, True),
    ((7,), 1, True, True),
    ((3, 1), 1, True, True),        # variance 0: (x - mean) = 0 exactly
]


@pytest.mark.parametrize("shape,k,with_scale,with_bias", LN_CASES)
def test_layer_norm_equals_the_reference_bit_for_bit(backend, shape, k, with_scale, with_bias):
    x = (RNG.standard_normal(shape) * RNG.uniform(0.01, 100) + RNG.uniform(-50, 50)).astype(np.float32)
    x.flat[0] = -0.0
    tail = shape[len(shape) - k:]
    scale = RNG.standard_normal(tail).astype(np.float32) if with_scale else None
    bias = RNG.standard_normal(tail).astype(np.float32) if with_bias else None
    axes = tuple(range(len(shape) - k, len(shape)))
    got = kernel_layer_norm(backend, x, scale, bias, k, EPS)
    want = reference_layer_norm(x, scale, bias, axes, EPS)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    # Independent: exact float64 sums (math.fsum), within WPT's 14 ulp.
    rows = x.reshape(-1, int(np.prod(tail))).astype(np.float64)
    s = np.ones(rows.shape[1]) if scale is None else scale.reshape(-1).astype(np.float64)
    b = np.zeros(rows.shape[1]) if bias is None else bias.reshape(-1).astype(np.float64)
    for r, row in enumerate(rows):
        mean = math.fsum(row) / row.size
        var = math.fsum((row - mean) ** 2) / row.size
        exact = ((row - mean) / math.sqrt(var + EPS) * s + b).astype(np.float32)
        assert ulp_diff(got.reshape(rows.shape)[r], exact).max() <= 14


def test_layer_norm_special_values(backend):
    x = np.array([[np.nan, 1, 2, 3], [np.inf, 1, 2, 3], [-0.0, -0.0, -0.0, -0.0], [1e30, -1e30, 3e-38, 0]],
                 np.float32)
    got = kernel_layer_norm(backend, x, None, None, 1, EPS)
    with np.errstate(invalid="ignore"):
        want = reference_layer_norm(x, None, None, (1,), EPS)
    np.testing.assert_array_equal(got.view(np.int32)[2:], want.view(np.int32)[2:])
    assert np.isnan(got[:2]).all() and np.isnan(want[:2]).all()


def graph_outputs(fast_paths, fn, feeds):
    ctx = Context("cpu", options={"fastPaths": fast_paths})
    b = ctx.graph_builder()
    graph = b.build(fn(b))
    return ctx, ctx.compute(graph, feeds)


def test_gelu_block_through_a_graph_runs_the_kernels_and_matches_the_numpy_kernels(backend):
    x = (RNG.standard_normal((1, 16, 64)) * 3).astype(np.float32)
    scale, bias = RNG.standard_normal(64).astype(np.float32), RNG.standard_normal(64).astype(np.float32)

    def fn(b):
        inp = b.input("x", {"dataType": "float32", "shape": [1, 16, 64]})
        c = lambda a: b.constant({"dataType": "float32", "shape": list(a.shape)}, a)  # noqa: E731
        ln = b.layerNormalization(inp, scale=c(scale), bias=c(bias), axes=[2])
        return {"ln": ln, "erf": b.erf(b.mul(ln, c(np.float32([0.70710677]))))}

    ctx, got = graph_outputs(True, fn, {"x": x})
    _, want = graph_outputs(False, fn, {"x": x})
    np.testing.assert_array_equal(got["ln"], want["ln"])
    assert ulp_diff(got["erf"], want["erf"]).max() <= 1
    ctx.backend.set_profiling(True)
    b = ctx.graph_builder()
    ctx.compute(b.build(fn(b)), {"x": x})
    prof = ctx.backend.profile()
    assert prof["erf"]["fast_calls"] == 1 and prof["layerNormalization"]["fast_calls"] == 1


def test_layer_norm_declines_what_the_kernel_does_not_cover(native):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    cpu = CpuBackend()
    from webnn_core.backends.cpu.fast.exact64 import layer_normalization

    assert layer_normalization(cpu, {"axes": (1,), "epsilon": EPS}, x) is None
    assert "axes" in cpu.fallback_reasons["layerNormalization"]
    assert layer_normalization(cpu, {"axes": (2, 1), "epsilon": EPS}, x) is None
    assert layer_normalization(cpu, {"axes": (), "epsilon": EPS}, x) is None
    assert layer_normalization(cpu, {"axes": (2,), "epsilon": EPS}, x.astype(np.float16)) is None
    assert layer_normalization(cpu, {"axes": (2,), "epsilon": EPS}, x) is not None


# ------------------------------------------------------------------ wk_pack_oihw
@pytest.mark.parametrize("o,i,kh,kw,groups", [(16, 8, 3, 3, 1), (13, 5, 3, 3, 1), (24, 6, 1, 1, 1),
                                              (21, 7, 1, 1, 1), (8, 3, 7, 7, 1), (12, 4, 3, 3, 3),
                                              (30, 10, 1, 1, 2), (64, 33, 1, 1, 1)])
def test_pack_from_oihw_equals_numpy_packing(backend, o, i, kh, kw, groups):
    """Packing straight from OIHW (or OHWI) gives numpy's packed layout bit for bit
    (pack.pack_conv without a kernel library), for full and partial 8-column panels."""
    from webnn_core.backends.cpu.fast.pack import pack_conv

    oihw = RNG.standard_normal((o, i, kh, kw)).astype(np.float32)
    ohwi_view = np.transpose(oihw, (0, 2, 3, 1))
    want = pack_conv(ohwi_view, None, groups, None).w
    got_view = pack_conv(ohwi_view, None, groups, backend).w  # from the OIHW bytes
    got_ohwi = pack_conv(np.ascontiguousarray(ohwi_view), None, groups, backend).w  # OHWI rows
    np.testing.assert_array_equal(got_view.view(np.int32), want.view(np.int32))
    np.testing.assert_array_equal(got_ohwi.view(np.int32), want.view(np.int32))
