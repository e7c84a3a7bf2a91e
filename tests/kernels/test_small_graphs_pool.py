"""Small graphs never pay for the kernel pool (issue 17): the transformer block's
and the MLP's GEMMs (16x64x64 .. 16x64x256, 4x64x64) and the attention matmuls run
on the calling thread with 1 and with 2-3 pool threads (a job costs more than such a
call), and give the same bytes either way."""
import numpy as np

from webnn_core import Context


def block(b, rng):
    """The shapes of tools/bench_ort/models.py's transformer block and MLP."""
    c = lambda a: b.constant({"dataType": "float32", "shape": list(a.shape)}, a)  # noqa: E731
    w = lambda *s: c((rng.standard_normal(s) * 0.1).astype(np.float32))  # noqa: E731
    x = b.input("x", {"dataType": "float32", "shape": [16, 64]})
    q = b.gemm(x, w(64, 64), c=w(64))
    k = b.gemm(x, w(64, 64), c=w(64))
    heads = lambda t: b.transpose(b.reshape(t, [1, 16, 4, 16]), permutation=[0, 2, 1, 3])  # noqa: E731
    att = b.softmax(b.matmul(heads(q), b.transpose(heads(k), permutation=[0, 1, 3, 2])), 3)
    h = b.reshape(b.transpose(b.matmul(att, heads(x)), permutation=[0, 2, 1, 3]), [16, 64])
    up = b.gemm(h, w(64, 256), c=w(256))
    down = b.gemm(b.erf(up), w(256, 64), c=w(64))
    m = b.input("m", {"dataType": "float32", "shape": [4, 64]})
    mlp = b.gemm(b.relu(b.gemm(m, w(64, 64), c=w(64))), w(64, 64), c=w(64))
    feeds = {"x": rng.standard_normal((16, 64)).astype(np.float32),
             "m": rng.standard_normal((4, 64)).astype(np.float32)}
    return feeds, {"y": b.layerNormalization(down, axes=[1]), "mlp": mlp}


def run(threads):
    rng = np.random.default_rng(3)
    ctx = Context("cpu", options={"threads": threads})
    b = ctx.graph_builder()
    feeds, outs = block(b, rng)
    graph = b.build(outs)
    ctx.backend.set_profiling(True)
    out = ctx.compute(graph, feeds)
    profile = ctx.backend.profile()
    ctx.destroy()
    return out, profile


def test_small_gemms_stay_on_the_calling_thread(pool):
    single, profile = run(1)
    assert profile["gemm"]["fast_calls"] == 6 and profile["erf"]["fast_calls"] == 1
    jobs = pool.jobs
    threaded, _ = run(pool.threads)
    assert pool.jobs == jobs, "a small GEMM went to the kernel pool"
    for name in single:
        np.testing.assert_array_equal(threaded[name], single[name])
