"""Kernel threads (issue 17 item 2): a cpu backend with N threads splits conv2d,
depthwise conv2d, GEMM/matmul and pool calls into output tiles
(backends/cpu/fast/tiles.py) run on its pool; the results must equal the
single-thread ones bit for bit, on odd shapes and tile remainders, for compiled
plans and for calls made without build-time packing. Native build (ctypes
releases the GIL, so the tiles really run in parallel)."""
import numpy as np
import pytest

from webnn_core import Context
from webnn_core.backends.cpu.fast import tiles as tiling

THREADS = (2, 3, 5)


def rand(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def const(b, a):
    return b.constant({"dataType": "float32", "shape": list(a.shape)}, a)


@pytest.fixture
def split_everything(monkeypatch):
    """Split every call (not only big ones), so small test shapes get many tiles and remainders."""
    monkeypatch.setattr(tiling, "MIN_TILE_WORK", 1)


def run(graph_fn, threads, **options):
    """Build graph_fn(builder, rng) in a context with `threads` kernel threads and run it
    twice (the second run reuses cached call plans); returns (outputs, tile counts seen)."""
    rng = np.random.default_rng(11)
    ctx = Context("cpu", options={"threads": threads, **options})
    b = ctx.graph_builder()
    feeds, outs = graph_fn(b, rng)
    graph = b.build(outs)
    seen = []
    real = ctx.backend.run_calls

    def spy(fn, calls):
        seen.append(len(calls))
        return real(fn, calls)

    ctx.backend.run_calls = spy
    first = ctx.compute(graph, feeds)
    second = ctx.compute(graph, feeds)
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
    ctx.destroy()
    return second, seen


def conv_graph(shape, o, k, groups=1, const_filter=True, layout="nhwc", relu=False, **opts):
    def fn(b, rng):
        n, h, w, c = shape
        xs = [n, c, h, w] if layout == "nchw" else list(shape)
        x = b.input("x", {"dataType": "float32", "shape": xs})
        wa = rand(rng, o, k, k, c // groups, scale=0.3)
        feeds = {"x": rand(rng, *xs)}
        if const_filter:
            wt = const(b, wa)
        else:
            wt = b.input("w", {"dataType": "float32", "shape": list(wa.shape)})
            feeds["w"] = wa
        y = b.conv2d(x, wt, bias=const(b, rand(rng, o)), groups=groups, inputLayout=layout, filterLayout="ohwi", **opts)
        return feeds, {"y": b.relu(y) if relu else y}
    return fn


CASES = {
    "conv 3x3 pad 1, odd rows": conv_graph((1, 13, 11, 5), 9, 3, padding=[1, 1, 1, 1]),
    "conv 3x3 stride 2, asymmetric padding": conv_graph((1, 17, 15, 6), 10, 3, strides=[2, 2], padding=[0, 2, 1, 0]),
    "conv 1x1 direct, odd pixel count": conv_graph((1, 7, 9, 12), 17, 1),
    "conv 3x3 batch of 3 (tiles cross images)": conv_graph((3, 7, 6, 4), 8, 3, padding=[1, 1, 1, 1]),
    "conv 1x1 batch of 2 (direct, tiles cross images)": conv_graph((2, 5, 5, 8), 11, 1),
    "conv 5x5 dilated": conv_graph((1, 19, 16, 3), 7, 5, dilations=[2, 2], padding=[3, 3, 3, 3]),
    "grouped conv": conv_graph((1, 9, 10, 8), 12, 3, groups=4, padding=[1, 1, 1, 1]),
    "conv + relu fused": conv_graph((1, 11, 11, 6), 10, 3, relu=True, padding=[1, 1, 1, 1]),
    "depthwise 3x3, channel tail": conv_graph((1, 15, 13, 19), 19, 3, groups=19, padding=[1, 1, 1, 1]),
    "depthwise 3x3 stride 2, batch 2": conv_graph((2, 14, 9, 21), 21, 3, groups=21, strides=[2, 2], padding=[1, 0, 1, 0]),
    "conv with an input filter (packed per call)": conv_graph((1, 10, 9, 5), 9, 3, const_filter=False, padding=[1, 1, 1, 1]),
    "conv NCHW without the layout pass (transposed per call)": conv_graph((1, 9, 11, 4), 6, 3, layout="nchw",
                                                                          padding=[1, 1, 1, 1]),
}


def pool_graph(op, shape, **opts):
    def fn(b, rng):
        x = b.input("x", {"dataType": "float32", "shape": list(shape)})
        return {"x": rand(rng, *shape)}, {"y": getattr(b, op)(x, layout="nhwc", **opts)}
    return fn


CASES.update({
    "maxPool2d 3x3/2 ceil, batch 2": pool_graph("maxPool2d", (2, 13, 14, 7), windowDimensions=[3, 3], strides=[2, 2],
                                              outputShapeRounding="ceil"),
    "averagePool2d 3x3 padded": pool_graph("averagePool2d", (1, 11, 10, 9), windowDimensions=[3, 3],
                                           padding=[1, 1, 1, 1]),
    "averagePool2d 7x7 over 9x9, dilation-free": pool_graph("averagePool2d", (1, 9, 9, 33), windowDimensions=[7, 7]),
})


def matmul_graph(a_shape, b_shape, const_b=True):
    def fn(b, rng):
        a = b.input("a", {"dataType": "float32", "shape": list(a_shape)})
        bb = rand(rng, *b_shape)
        feeds = {"a": rand(rng, *a_shape)}
        if const_b:
            bo = const(b, bb)
        else:
            bo = b.input("b", {"dataType": "float32", "shape": list(b_shape)})
            feeds["b"] = bb
        return feeds, {"y": b.matmul(a, bo)}
    return fn


def gemm_graph(m, k, n):
    def fn(b, rng):
        a = b.input("a", {"dataType": "float32", "shape": [m, k]})
        return {"a": rand(rng, m, k)}, {"y": b.gemm(a, const(b, rand(rng, n, k)), c=const(b, rand(rng, n)), bTranspose=True)}
    return fn


CASES.update({
    "matmul 37x29 . 29x23 (constant B)": matmul_graph((37, 29), (29, 23)),
    "matmul 30x17 . 17x41 (input B)": matmul_graph((30, 17), (17, 41), const_b=False),
    # Per batch at least backend.SMALL_BATCHED_GEMM multiply-adds, else numpy runs it.
    "matmul batched 3x29x40 . 40x31": matmul_graph((3, 29, 40), (40, 31)),
    "gemm 21x33 . (19x33)^T + c": gemm_graph(21, 33, 19),
})


def squeezenet_fire(b, rng):
    """A fire module: squeeze, two expands written in place into one concat buffer."""
    x = b.input("x", {"dataType": "float32", "shape": [1, 15, 13, 16]})

    def conv_relu(v, o, k, pad):
        c = v.shape[3]
        return b.relu(b.conv2d(v, const(b, rand(rng, o, k, k, c, scale=0.3)), bias=const(b, rand(rng, o)),
                               padding=[pad] * 4, inputLayout="nhwc", filterLayout="ohwi"))

    s = conv_relu(x, 8, 1, 0)
    y = b.concat([conv_relu(s, 12, 1, 0), conv_relu(s, 12, 3, 1)], 3)
    y = b.maxPool2d(y, windowDimensions=[3, 3], strides=[2, 2], layout="nhwc")
    return {"x": rand(rng, 1, 15, 13, 16)}, {"y": y}


CASES["fire module (in-place concat) + pool"] = squeezenet_fire


def lrn_like(b, rng):
    """ORT's LRN decomposition tail: (bias + alpha * window mean) ** -0.75 * x, an odd
    element count (tiles of 4-element multiples and a tail)."""
    shape = [1, 23, 19, 11]  # above SMALL_ELEMENTWISE
    x = b.input("x", {"dataType": "float32", "shape": shape})
    s = b.add(b.mul(b.mul(x, x), const(b, np.array([1e-2], np.float32))), const(b, np.array([1.0], np.float32)))
    y = b.div(x, b.pow(s, const(b, np.array(0.75, np.float32))))
    return {"x": rand(rng, *shape)}, {"y": y}


CASES["pow 0.75 and arithmetic (LRN tail)"] = lrn_like


@pytest.mark.parametrize("case", list(CASES))
def test_threads_equal_single_thread(case, native, split_everything):
    fn = CASES[case]
    options = {"layoutPass": False} if "NCHW" in case else {}
    single, seen1 = run(fn, 1, **options)
    assert all(n == 1 for n in seen1)
    for threads in THREADS:
        out, seen = run(fn, threads, **options)
        assert any(n > 1 for n in seen), f"{case}: no call was split on {threads} threads"
        for name in single:
            np.testing.assert_array_equal(out[name], single[name], err_msg=f"{case}, {threads} threads")


def test_threads_match_the_numpy_reference(native, split_everything):
    """Not only self-consistent: the threaded result is the numpy kernels' (fast paths off)."""
    fn = CASES["conv 3x3 stride 2, asymmetric padding"]
    ref, _ = run(fn, 1, fastPaths=False)
    out, _ = run(fn, 3)
    np.testing.assert_allclose(out["y"], ref["y"], rtol=1e-5, atol=1e-5)


def test_window_tiles_cover_every_output_row_once():
    p = np.array([3, 10, 8, 4, 5, 4, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 6, 16], np.int32)
    assert tiling.window_tiles(p, 1) == [(p, 0, 0)]  # one part: the call itself
    for parts in range(2, 9):
        rows = []
        for q, dx, dy in tiling.window_tiles(p, parts):
            n = dx // (10 * 8 * 4)
            o0 = (dy // (4 * 6)) - n * 5
            assert q[0] == 1 and q[13] == 1 - o0 * 2  # one image, top padding shifted by the tile's first row
            rows += [(n, o0 + r) for r in range(q[4])]
        assert rows == [(n, o) for n in range(3) for o in range(5)]


def test_small_calls_are_not_split(native):
    out, seen = run(CASES["conv 3x3 pad 1, odd rows"], 4)
    assert seen == []  # below MIN_TILE_WORK per tile: one call, no pool


def test_status_reports_threads(native):
    ctx = Context("cpu", options={"threads": 3})
    st = ctx.backend.status()
    assert (st["threadsRequested"], st["threads"], st["threadsReason"]) == (3, 3, None)


def test_a_single_threaded_library_says_why(native):
    from webnn_core.backends.cpu import CpuBackend
    from webnn_core.backends.cpu.fast.library import Backend

    class OneThread(Backend):  # like the wasm module inside Pyodide
        kind = "wasm"

    cpu = CpuBackend(library=OneThread(), threads=4)
    st = cpu.status()
    assert st["threads"] == 1 and st["threadsRequested"] == 4 and "one thread" in st["threadsReason"]


@pytest.mark.parametrize("bad", ["2", True, float("nan")])
def test_threads_option_is_checked(bad):
    from webnn_core.errors import NotSupportedError

    with pytest.raises(NotSupportedError, match="threads must be a positive integer"):
        Context("cpu", options={"threads": bad})
