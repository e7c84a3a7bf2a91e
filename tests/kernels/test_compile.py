"""The cpu backend's compile pass: fusion, weight packing and buffer planning keep the
graph's results those of the numpy kernels (built with fast paths off)."""
import math

import numpy as np
import pytest

from webnn_core import Context
from webnn_core.backends.cpu import fast
from webnn_core.backends.cpu.fast.pack import PackedConv

RNG = np.random.default_rng(7)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def build(fn, fast_paths=True, **options):
    """fn(builder) -> ({input name: array}, {output name: operand}); returns (ctx, graph, feeds).
    The random data is reseeded per build, so a reference build sees the same data.
    `options`: more context options (e.g. layoutPass=False)."""
    global RNG
    RNG = np.random.default_rng(7)
    ctx = Context("cpu", options={"fastPaths": fast_paths, **options})
    b = ctx.graph_builder()
    feeds, outs = fn(b)
    return ctx, b.build(outs), feeds


def reference(fn):
    """Outputs of the same graph built and run with fast paths off (a context of its own)."""
    ctx, graph, feeds = build(fn, fast_paths=False)
    return ctx.compute(graph, feeds)


def const(b, a):
    return b.constant({"dataType": str(a.dtype), "shape": list(a.shape)}, a)


def conv(b, x, o, k, c, pad=0, **opts):
    return b.conv2d(x, const(b, rand(o, k, k, c, scale=0.5)), inputLayout="nhwc", filterLayout="ohwi",
                    bias=const(b, rand(o)), padding=[pad] * 4, **opts)


def op_names(graph):
    return [n.op.name for n in graph.plan.nodes]


def assert_matches_reference(fn, ulp=None):
    ctx, graph, feeds = build(fn)
    got = ctx.compute(graph, feeds)
    ref = reference(fn)
    for name in ref:
        assert got[name].shape == ref[name].shape
        np.testing.assert_allclose(got[name], ref[name], rtol=2e-5, atol=2e-5)
    return graph, got


def fire(b, x, c, s, e):
    sq = b.relu(conv(b, x, s, 1, c))
    return b.concat([b.relu(conv(b, sq, e, 1, s)), b.relu(conv(b, sq, e, 3, s, pad=1))], 3)


def test_conv_relu_and_clamp_fuse(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 8, 8, 6]})
        y = b.relu(conv(b, x, 10, 3, 6, pad=1))
        y = b.clamp(conv(b, y, 12, 1, 10), minValue=0, maxValue=6)
        y = b.clamp(conv(b, y, 5, 3, 12, strides=[2, 2]), minValue=-0.5)
        return {"x": rand(1, 8, 8, 6)}, {"y": y}

    graph, _ = assert_matches_reference(fn)
    assert op_names(graph) == ["conv2d+relu", "conv2d+clamp", "conv2d+clamp"]
    assert all(isinstance(n.attrs["_prep"], PackedConv) for n in graph.plan.nodes)
    assert graph.plan.nodes[2].attrs["_lo"] == -0.5 and graph.plan.nodes[2].attrs["_hi"] == math.inf


def test_no_fusion_when_the_conv_output_is_read_elsewhere(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 6, 6, 4]})
        c = conv(b, x, 8, 3, 4, pad=1)
        return {"x": rand(1, 6, 6, 4)}, {"y": b.add(b.relu(c), c)}

    graph, _ = assert_matches_reference(fn)
    assert op_names(graph)[:2] == ["conv2d", "relu"]


def test_no_fusion_when_the_conv_output_is_a_graph_output(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 6, 6, 4]})
        c = conv(b, x, 8, 3, 4, pad=1)
        return {"x": rand(1, 6, 6, 4)}, {"c": c, "y": b.relu(c)}

    graph, got = assert_matches_reference(fn)
    assert "conv2d+relu" not in op_names(graph)
    np.testing.assert_array_equal(got["y"], np.maximum(got["c"], 0))


def test_fire_module_concat_in_place(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 9, 9, 16]})
        y = fire(b, x, 16, 8, 12)
        y = b.maxPool2d(y, windowDimensions=[3, 3], strides=[2, 2], layout="nhwc")
        y = fire(b, y, 24, 6, 10)
        return {"x": rand(1, 9, 9, 16)}, {"y": b.averagePool2d(y, layout="nhwc")}

    graph, _ = assert_matches_reference(fn)
    concats = [n for n in graph.plan.nodes if n.op.name == "concat"]
    assert len(concats) == 2 and all("_inplace" in n.attrs for n in concats)
    buf, views = concats[0].attrs["_inplace"]
    producers = [n for n in graph.plan.nodes if n.outputs[0] in concats[0].inputs]
    for p, v in zip(producers, views):
        assert np.shares_memory(p.attrs["_out"], buf) and p.attrs["_out"].shape == v.shape
    ctx, graph, feeds = build(fn)
    ctx.backend.set_profiling(True)
    ctx.compute(graph, feeds)
    ctx.backend.set_profiling(False)
    prof = ctx.backend.profile()
    assert prof["concat"]["fast_calls"] == 2 and prof["conv2d+relu"]["fast_calls"] == 6


def test_buffers_are_shared_and_runs_do_not_leak(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 10, 10, 8]})
        y = x
        for _ in range(6):
            y = b.relu(conv(b, y, 8, 3, 8, pad=1))
        return {"x": rand(1, 10, 10, 8)}, {"y": y}

    ctx, graph, feeds = build(fn)
    outs = [n.attrs.get("_out") for n in graph.plan.nodes]
    planned = [o for o in outs if o is not None]
    assert len(planned) == 5  # the last conv feeds the graph output: never pooled
    assert len({o.__array_interface__["data"][0] for o in planned}) == 2  # ping-pong
    x1, x2 = feeds["x"], rand(1, 10, 10, 8)
    run = ctx.backend.execute
    r1 = run(graph.plan, {"x": x1})["y"].copy()
    r2 = run(graph.plan, {"x": x2})["y"].copy()
    r1_again = run(graph.plan, {"x": x1})["y"]
    np.testing.assert_array_equal(r1, r1_again)
    assert not np.array_equal(r1, r2)


def test_graph_outputs_are_never_pooled_buffers(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 6, 6, 4]})
        c1 = b.relu(conv(b, x, 8, 3, 4, pad=1))
        c2 = b.relu(conv(b, c1, 8, 3, 8, pad=1))
        return {"x": rand(1, 6, 6, 4)}, {"r": b.reshape(c1, [6 * 6 * 8]), "y": c2}

    ctx, graph, feeds = build(fn)
    first = ctx.backend.execute(graph.plan, feeds)
    kept = {k: v.copy() for k, v in first.items()}
    ctx.backend.execute(graph.plan, {"x": rand(1, 6, 6, 4)})
    for k in kept:
        np.testing.assert_array_equal(first[k], kept[k])


def test_switching_fast_paths_off_after_build_uses_the_numpy_kernels(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 9, 9, 16]})
        return {"x": rand(1, 9, 9, 16)}, {"y": fire(b, x, 16, 8, 12)}

    ctx, graph, feeds = build(fn)
    ctx.backend.set_fast_paths(False)
    ctx.backend.set_profiling(True)
    got = ctx.compute(graph, feeds)["y"]
    assert all(r["fast_calls"] == 0 for r in ctx.backend.profile().values())
    np.testing.assert_array_equal(got, reference(fn)["y"])


def test_constant_matmul_and_gemm_are_prepacked(backend):
    def fn(b):
        a = b.input("a", {"dataType": "float32", "shape": [40, 30]})
        m = b.matmul(a, const(b, rand(30, 20)))
        g = b.gemm(m, const(b, rand(25, 20)), bTranspose=True, alpha=0.5, c=const(b, rand(25)))
        return {"a": rand(40, 30)}, {"y": g}

    graph, _ = assert_matches_reference(fn)
    assert all("_prep" in n.attrs for n in graph.plan.nodes)


def test_matmul_batched_broadcast(backend):
    # 33x33x33 per batch: above SMALL_BATCHED_GEMM, so the fast path runs it.
    def fn(b):
        a = b.input("a", {"dataType": "float32", "shape": [2, 1, 33, 33]})
        w = b.input("w", {"dataType": "float32", "shape": [3, 33, 33]})
        return {"a": rand(2, 1, 33, 33), "w": rand(3, 33, 33)}, {"y": b.matmul(a, w)}

    graph, _ = assert_matches_reference(fn)
    assert graph.plan.program[0][2] is not None


def test_small_batched_matmul_runs_on_numpy(backend):
    """Attention-sized batched matmuls (4 x 16x16x16) skip the fast path: numpy's
    result exactly, and no per-batch packing."""
    def fn(b):
        q = b.input("q", {"dataType": "float32", "shape": [1, 4, 16, 16]})
        k = b.input("k", {"dataType": "float32", "shape": [1, 4, 16, 16]})
        return {"q": rand(1, 4, 16, 16), "k": rand(1, 4, 16, 16)}, {"y": b.matmul(q, k)}

    graph, _ = assert_matches_reference(fn)
    assert graph.plan.program[0][2] is None
    ctx, graph, feeds = build(fn)
    y = ctx.backend.execute(graph.plan, feeds)["y"]
    np.testing.assert_array_equal(y, np.matmul(feeds["q"], feeds["k"]))


def test_float16_graph_is_not_compiled(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float16", "shape": [1, 5, 5, 3]})
        w = const(b, rand(4, 3, 3, 3).astype(np.float16))
        y = b.relu(b.conv2d(x, w, inputLayout="nhwc", filterLayout="ohwi"))
        return {"x": rand(1, 5, 5, 3).astype(np.float16)}, {"y": y}

    ctx, graph, feeds = build(fn)
    assert op_names(graph) == ["conv2d", "relu"]
    np.testing.assert_array_equal(ctx.compute(graph, feeds)["y"], reference(fn)["y"])
    assert "float32 only" in ctx.backend.fallback_reasons["conv2d"]


def test_without_a_kernel_library_nothing_is_compiled():
    fast.detach("no backend in this test")

    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 5, 5, 3]})
        return {"x": rand(1, 5, 5, 3)}, {"y": b.relu(conv(b, x, 4, 3, 3))}

    ctx, graph, feeds = build(fn)
    assert op_names(graph) == ["conv2d", "relu"]
    ctx.compute(graph, feeds)
    assert ctx.backend.fallback_reasons["conv2d"] == "no backend in this test"


def test_profile_table(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 9, 9, 16]})
        return {"x": rand(1, 9, 9, 16)}, {"y": fire(b, x, 16, 8, 12)}

    ctx, graph, feeds = build(fn)
    ctx.backend.set_profiling(True)
    ctx.compute(graph, feeds)
    table = ctx.backend.profile_table()
    assert table.splitlines()[0].split()[:3] == ["op", "calls", "fast"]
    assert "conv2d+relu" in table and "concat" in table


@pytest.mark.slow
def test_squeezenet_fast_matches_numpy(native):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    import bench_kernels

    try:
        weights = bench_kernels.load_squeezenet_weights()
    except FileNotFoundError:
        pytest.skip("SqueezeNet weights not found")
    r = bench_kernels.bench_model(runs=1, weights=weights)
    assert r["fast"]["nodes"] == 40  # 26 fused convs, 8 in-place concats, 4 pools, reshape, softmax
    assert r["top1_equal"] and r["max_abs_diff"] < 1e-5


# -- the layout pass: NCHW conv/pool chains run on the NHWC kernels -----------------
def conv_nchw(b, x, o, k, c, pad=0, **opts):
    return b.conv2d(x, const(b, rand(o, c, k, k, scale=0.5)), bias=const(b, rand(o)), padding=[pad] * 4, **opts)


def fire_nchw(b, x, c, s, e):
    sq = b.relu(conv_nchw(b, x, s, 1, c))
    return b.concat([b.relu(conv_nchw(b, sq, e, 1, s)), b.relu(conv_nchw(b, sq, e, 3, s, pad=1))], 1)


def nchw_net(b):
    x = b.input("x", {"dataType": "float32", "shape": [1, 16, 9, 9]})
    y = fire_nchw(b, x, 16, 8, 12)
    y = b.maxPool2d(y, windowDimensions=[3, 3], strides=[2, 2])
    y = b.clamp(fire_nchw(b, y, 24, 6, 10), minValue=0.0, maxValue=6.0)
    y = b.averagePool2d(y)
    return {"x": rand(1, 16, 9, 9)}, {"y": b.reshape(y, [1, 20])}


def test_nchw_chain_runs_in_nhwc_with_one_transpose_at_each_edge(backend):
    graph, got = assert_matches_reference(nchw_net)
    steps = graph.plan.nodes
    assert [s.attrs["perm"] for s in steps if s.op.name == "transpose"] == [(0, 2, 3, 1), (0, 3, 1, 2)]
    convs = [s for s in steps if s.op.name.startswith("conv2d")]
    assert len(convs) == 6 and all(s.op.name == "conv2d+relu" and s.attrs["layout"] == "nhwc" for s in convs)
    assert all(s.attrs["layout"] == "nhwc" for s in steps if s.op.name.endswith("Pool2d"))
    assert all("_inplace" in s.attrs for s in steps if s.op.name == "concat")  # concat on the NHWC channel axis
    # The builder's graph is unchanged: still NCHW, spec attributes only.
    assert all(n.attrs.get("inputLayout", "nchw") == "nchw" for n in graph.nodes if n.op.name == "conv2d")
    # Same kernels, so the same bits as without the pass.
    ctx, plain, feeds = build(nchw_net, layoutPass=False)
    assert not any(s.op.name == "transpose" for s in plain.plan.nodes)
    np.testing.assert_array_equal(ctx.compute(plain, feeds)["y"], got["y"])


def test_nchw_values_read_by_other_ops_go_back_to_nchw(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 4, 6, 6]})
        c = b.relu(conv_nchw(b, x, 8, 3, 4, pad=1))
        s = b.reduceSum(c, axes=[1], keepDimensions=True)  # reads the NCHW value: needs it back
        y = b.maxPool2d(c, windowDimensions=[2, 2], strides=[2, 2])
        return {"x": rand(1, 4, 6, 6)}, {"s": s, "y": y, "c": c}

    graph, got = assert_matches_reference(fn)
    perms = [s.attrs["perm"] for s in graph.plan.nodes if s.op.name == "transpose"]
    assert perms.count((0, 3, 1, 2)) == 2  # c (read by reduceSum, a graph output) and y (a graph output)
    np.testing.assert_allclose(got["s"], got["c"].astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-6)


def test_preferred_input_layout_is_nchw_though_the_kernels_are_nhwc():
    """The kernels are NHWC, the layout pass makes NCHW graphs cost one transpose per edge, and
    ONNX Runtime Web 1.22 computes wrong results on the NHWC path it takes when told "nhwc"
    (docs/clients.md): the cpu context reports NCHW (tests/clients/test_ort_web.py has the client)."""
    assert Context("cpu").op_support_limits()["preferredInputLayout"] == "nchw"


def shufflenet_unit(b):
    """ShuffleNet's grouped 1x1 conv + relu, channel shuffle (NCHW reshape -> transpose ->
    reshape, as ONNX Runtime's WebNN EP builds it) and depthwise conv, in NCHW."""
    g, c = 4, 24
    x = b.input("x", {"dataType": "float32", "shape": [1, 16, 9, 7]})
    y = b.relu(conv_nchw(b, x, c, 1, 16 // g, groups=g))
    y = b.reshape(b.transpose(b.reshape(y, [1, g, c // g, 9, 7]), permutation=[0, 2, 1, 3, 4]), [1, c, 9, 7])
    y = conv_nchw(b, y, c, 3, 1, pad=1, groups=c)
    return {"x": rand(1, 16, 9, 7)}, {"y": y}


def test_channel_shuffle_chain_is_one_step(backend):
    """The NHWC layout pass wraps the shuffle in transposes; the five data-movement
    steps become one channelShuffle, with the numpy kernels' exact result."""
    graph, got = assert_matches_reference(shufflenet_unit)
    names = op_names(graph)
    assert names.count("channelShuffle") == 1
    assert "reshape" not in names and "transpose" not in names[1:-1], names
    assert "channelShuffle" not in graph.context.backend.fallback_reasons  # wk_shuffle ran
    assert np.unique(got["y"]).size > got["y"].size // 2  # not degenerate: a wrong shuffle would show
    # The same kernels in NCHW (no layout pass: the shuffle stays three numpy steps): the same bits.
    ctx, plain, feeds = build(shufflenet_unit, layoutPass=False)
    assert "channelShuffle" not in op_names(plain)
    np.testing.assert_array_equal(ctx.compute(plain, feeds)["y"], got["y"])


@pytest.mark.parametrize("shape", [(1, 7, 24), (2, 3, 36), (1, 1, 4, 240), (3, 2), (5, 1)])
def test_move_chain_groups_are_those_of_the_shuffle_it_computes(shape):
    """A move chain is recognised with the groups g its data movement equals, checked against
    every g (numpy's reshape/swapaxes per g, independent of the pass); chains that are no
    channel shuffle (other permutations) are not recognised."""
    from types import SimpleNamespace as NS

    from webnn_core.backends.cpu.compile import _as_channel_shuffle

    c, n = shape[-1], math.prod(shape)
    rng = np.random.default_rng(3)

    def shuffle(v, g):
        return np.ascontiguousarray(np.swapaxes(v.reshape(v.shape[:-1] + (g, c // g)), -1, -2)).reshape(v.shape)

    def groups_of(move):  # brute force: the smallest g whose shuffle the move equals (1: the identity)
        idx = move(np.arange(n).reshape(shape))
        return next((g for g in range(1, c + 1) if c % g == 0 and np.array_equal(idx, shuffle(np.arange(n).reshape(shape), g))), None)

    moves = [lambda v, g=g: shuffle(v, g) for g in range(1, c + 1) if c % g == 0]
    moves += [lambda v, p=rng.permutation(n): v.reshape(-1)[p].reshape(v.shape) for _ in range(3)]
    moves += [lambda v: np.ascontiguousarray(v[..., ::-1])]
    recognised = 0
    for move in moves:
        x, y = NS(shape=shape), NS(shape=shape)
        chain = [NS(op=NS(compute=lambda attrs, v, m=move: m(v)), attrs={}, inputs=[x], outputs=[y])]
        want = groups_of(move)
        want = None if want == c and c > 1 else want  # g = C moves nothing the pass needs (C groups of 1 = identity)
        assert _as_channel_shuffle(chain) == want
        recognised += want is not None and want > 1
    assert recognised == sum(1 for g in range(2, c) if c % g == 0)


def test_move_chains_that_are_not_a_shuffle_stay(backend):
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [2, 3, 4, 5]})
        y = b.reshape(b.transpose(x, permutation=[0, 2, 3, 1]), [2, 60])  # not a permutation of the last axis
        return {"x": rand(2, 3, 4, 5)}, {"y": b.relu(y)}

    graph, got = assert_matches_reference(fn)
    assert "channelShuffle" not in op_names(graph)


def ort_lrn_unit(b):
    """conv -> LRN -> conv as ONNX Runtime's WebNN EP builds it for a context that
    prefers NHWC: NHWC convs, and around its NCHW-only steps its own transposes to NCHW
    and back; LRN as x^2, a channel pad and an average pool over the channels (moved to
    the pool's width by one more transpose pair), then x / (bias + alpha * mean)^beta."""
    nhwc = {"inputLayout": "nhwc", "filterLayout": "ohwi"}
    x = b.input("x", {"dataType": "float32", "shape": [1, 9, 7, 8]})
    m = b.relu(b.conv2d(x, const(b, rand(12, 3, 3, 8, scale=0.5)), padding=[1] * 4, **nhwc))
    scalar = lambda v: b.constant({"dataType": "float32", "shape": []}, np.array(v, np.float32))  # noqa: E731
    xc = b.transpose(m, permutation=[0, 3, 1, 2])
    sq = b.transpose(b.pow(xc, scalar(2.0)), permutation=[0, 2, 3, 1])
    t = b.transpose(b.pad(sq, [0, 0, 0, 2], [0, 0, 0, 2]), permutation=[0, 2, 3, 1])  # 1 x 7 x 16 x 9
    t = b.averagePool2d(t, windowDimensions=[1, 5], layout="nhwc")
    t = b.transpose(b.transpose(t, permutation=[0, 3, 1, 2]), permutation=[0, 3, 1, 2])
    d = b.pow(b.add(b.mul(t, scalar(1e-4)), scalar(1.0)), scalar(0.75))
    z = b.transpose(b.div(xc, d), permutation=[0, 2, 3, 1])
    return {"x": rand(1, 9, 7, 8)}, {"y": b.conv2d(z, const(b, rand(10, 1, 1, 12, scale=0.5)), **nhwc)}


def test_ort_transposes_meet_the_layout_pass(backend):
    """An NHWC graph's own transposes to NCHW and back around its elementwise steps
    (ONNX Runtime's LRN) become NHWC twins: NHWC -> NCHW makes its input the result's
    twin, the scalar pow/mul/add and the div run on the twins, and NCHW -> NHWC of a
    value with a twin is the twin; and the channel pad, the transposes and the pool
    around it are one channelAverage step. Six transposes, a pad and a pool become one
    step; the same bits as without the layout pass."""
    graph, got = assert_matches_reference(ort_lrn_unit)
    names = op_names(graph)
    assert names.count("transpose") == 0, names
    assert names.count("identity") == 2 and names.count("channelAverage") == 1, names
    assert "pad" not in names and "averagePool2d" not in names
    assert "channelAverage" not in graph.context.backend.fallback_reasons  # wk_chanavg ran
    ctx, plain, feeds = build(ort_lrn_unit, layoutPass=False)
    assert op_names(plain).count("transpose") == 4
    np.testing.assert_array_equal(ctx.compute(plain, feeds)["y"], got["y"])


@pytest.mark.parametrize("change", ["window 9", "stride 2", "reflection pad", "pad on H"])
def test_channel_average_needs_the_exact_pattern(backend, change):
    """pad -> transpose -> averagePool2d -> transpose is collapsed only when it is a plain
    channel average (zero padding of the channels, a 1 x k window of stride 1, k <= 7)."""
    def fn(b):
        x = b.input("x", {"dataType": "float32", "shape": [1, 6, 5, 12]})
        k = 9 if change == "window 9" else 5
        pads = ([0, 1, 0, 0], [0, 1, 0, 0]) if change == "pad on H" else ([0, 0, 0, k // 2], [0, 0, 0, k // 2])
        mode = "reflection" if change == "reflection pad" else "constant"
        t = b.transpose(b.pad(x, *pads, mode=mode), permutation=[0, 2, 3, 1])
        t = b.averagePool2d(t, windowDimensions=[1, k], strides=[1, 2] if change == "stride 2" else [1, 1],
                            layout="nhwc")
        return {"x": rand(1, 6, 5, 12)}, {"y": b.relu(b.transpose(t, permutation=[0, 3, 1, 2]))}

    graph, _ = assert_matches_reference(fn)
    assert "channelAverage" not in op_names(graph)
