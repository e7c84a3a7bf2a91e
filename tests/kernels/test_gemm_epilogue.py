"""gemm's epilogue on the fast path: a constant row-vector C with alpha 1 becomes
the kernel's bias (compile.py `_bias`), other C / alpha / beta are applied in
place; either way the result is, bit for bit, the kernel's a.b followed by the
reference's epilogue (ops/linalg.py: y * alpha, then y + beta * C in float32),
on 1 and 2 kernel threads, and close to numpy's matmul."""
import numpy as np
import pytest

from webnn_core import Context

RNG = np.random.default_rng(23)


def data(m, k, n, c_shape, bT=False):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((m, k)).astype(np.float32)
    w = rng.standard_normal((n, k) if bT else (k, n)).astype(np.float32)
    c = None if c_shape is None else rng.standard_normal(c_shape).astype(np.float32)
    return a, w, c


def kernel_then_epilogue(m, k, n, c_shape, alpha, beta, threads=1, bT=False):
    """The fast path's a.b alone (gemm without C, alpha 1), then the reference's epilogue in numpy."""
    y, fast_calls, _ = run(m, k, n, None, 1.0, 1.0, True, threads, bT=bT)
    assert fast_calls == 1
    _, _, c = data(m, k, n, c_shape, bT)
    if alpha != 1.0:
        y = y * np.float32(alpha)
    if c is not None and beta != 0:
        y = y + np.float32(beta) * c
    return y


def run(m, k, n, c_shape, alpha, beta, fast_paths, threads=1, c_const=True, bT=False):
    a, w, c = data(m, k, n, c_shape, bT)
    ctx = Context("cpu", options={"fastPaths": fast_paths, "threads": threads})
    b = ctx.graph_builder()
    x = b.input("a", {"dataType": "float32", "shape": [m, k]})
    opts = {"alpha": alpha, "beta": beta, "bTranspose": bT}
    feeds = {"a": a}
    if c is not None:
        if c_const:
            opts["c"] = b.constant({"dataType": "float32", "shape": list(c.shape)}, c)
        else:
            opts["c"] = b.input("c", {"dataType": "float32", "shape": list(c.shape)})
            feeds["c"] = c
    y = b.gemm(x, b.constant({"dataType": "float32", "shape": list(w.shape)}, w), **opts)
    graph = b.build({"y": y})
    ctx.backend.set_profiling(True)
    out = ctx.compute(graph, feeds)["y"]
    biased = [n for n in graph.plan.nodes if n.op.name == "gemm" and "_bias" in n.attrs]
    return out, ctx.backend.profile()["gemm"]["fast_calls"], len(biased)


CASES = [
    # m, k, n, C shape, alpha, beta, C constant, the kernel adds C as its bias
    (16, 64, 64, (64,), 1.0, 1.0, True, True),      # the transformer block's linear layers
    (16, 64, 70, (1, 70), 1.0, 0.5, True, True),     # beta * C in float32 first, n not a panel multiple
    (8, 33, 17, (), 1.0, -2.0, True, True),          # a scalar C
    (16, 64, 64, (16, 64), 1.0, 1.0, True, False),   # a full C: in place
    (16, 64, 64, (64,), 0.25, 1.0, True, False),     # alpha != 1: C after the scaling, in place
    (16, 64, 64, (64,), 1.0, 1.0, False, False),     # C an input
    (16, 64, 64, (64,), 1.0, 0.0, True, False),      # beta 0: no C
    (64, 128, 128, (128,), 1.0, 1.0, True, True),    # big enough to split on 2 threads
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m,k,n,c_shape,alpha,beta,c_const,as_bias", CASES)
def test_gemm_epilogue_matches_the_reference(native, m, k, n, c_shape, alpha, beta, c_const, as_bias, threads):
    got, fast_calls, biased = run(m, k, n, c_shape, alpha, beta, True, threads, c_const)
    reference, _, _ = run(m, k, n, c_shape, alpha, beta, False, 1, c_const)
    assert fast_calls == 1
    assert biased == int(as_bias)
    want = kernel_then_epilogue(m, k, n, c_shape, alpha, beta, threads)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    np.testing.assert_allclose(got, reference, rtol=1e-5, atol=1e-4)


def test_gemm_bias_with_transposed_b(native):
    got, fast_calls, biased = run(16, 40, 24, (24,), 1.0, 1.0, True, bT=True)
    assert fast_calls == 1 and biased == 1
    want = kernel_then_epilogue(16, 40, 24, (24,), 1.0, 1.0, bT=True)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
