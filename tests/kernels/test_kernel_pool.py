"""The kernel pool (issue 17 item 2, fast/shared.py): split kernel calls run as
jobs on threads sharing one memory, with constants resident there and the
activations of compiled chains kept there. Here the pool's port is the native
stand-in (native_pool_port.py) for js/src/kernel_pool.js; the browser runs the
same Python against real workers (tests/browser/test_kernel_pool_browser.py).
Results must equal the single-thread ones bit for bit on every fast-path op."""
import functools
import weakref

import numpy as np
import pytest
from native_pool_port import NativePoolPort
from test_threads import CASES, const, rand

from webnn_core import Context
from webnn_core.backends.cpu import fast
from webnn_core.backends.cpu.fast import tiles as tiling
from webnn_core.backends.cpu.fast.shared import KERNEL_NAMES, SharedHeap


@pytest.fixture
def split_everything(monkeypatch):
    monkeypatch.setattr(tiling, "MIN_TILE_WORK", 1)
    monkeypatch.setattr(tiling, "POOL_MIN_WORK", 0)


def run(graph_fn, threads, **options):
    rng = np.random.default_rng(11)
    ctx = Context("cpu", options={"threads": threads, **options})
    b = ctx.graph_builder()
    feeds, outs = graph_fn(b, rng)
    graph = b.build(outs)
    first = ctx.compute(graph, feeds)
    second = ctx.compute(graph, feeds)  # cached call plans, chained images
    for name in first:
        np.testing.assert_array_equal(first[name], second[name])
    status = ctx.backend.status()
    ctx.destroy()
    return second, status


@pytest.mark.parametrize("case", list(CASES))
def test_pool_equals_single_thread(case, pool, split_everything):
    fn = CASES[case]
    options = {"layoutPass": False} if "NCHW" in case else {}
    single, st1 = run(fn, 1, **options)
    assert st1["pool"] is None and st1["threads"] == 1
    jobs = pool.jobs
    out, st = run(fn, pool.threads, **options)
    assert st["threads"] == pool.threads and st["threadsReason"] is None
    assert pool.jobs > jobs, f"{case}: nothing ran on the pool"
    for name in single:
        np.testing.assert_array_equal(out[name], single[name], err_msg=case)


def test_chain_activations_stay_in_shared_memory(pool, split_everything):
    """conv -> conv -> pool compiled: the second and third kernels read their input
    where the previous kernel left it in shared memory (no copy in)."""
    def chain(b, rng):
        x = b.input("x", {"dataType": "float32", "shape": [1, 17, 15, 8]})
        y = b.relu(b.conv2d(x, const(b, rand(rng, 12, 3, 3, 8, scale=0.3)), padding=[1] * 4,
                            inputLayout="nhwc", filterLayout="ohwi"))
        y = b.conv2d(y, const(b, rand(rng, 16, 1, 1, 12, scale=0.3)), inputLayout="nhwc", filterLayout="ohwi")
        y = b.maxPool2d(y, windowDimensions=[3, 3], strides=[2, 2], layout="nhwc")
        y = b.conv2d(y, const(b, rand(rng, 9, 1, 1, 16, scale=0.3)), inputLayout="nhwc", filterLayout="ohwi")
        return {"x": rand(rng, 1, 17, 15, 8)}, {"y": y}

    single, _ = run(chain, 1)
    before = pool.stats()
    built = []
    real_table = pool._table
    pool._table = lambda *a: built.append(a[0]) or real_table(*a)
    ctx = Context("cpu", options={"threads": pool.threads})
    b = ctx.graph_builder()
    feeds, outs = chain(b, np.random.default_rng(11))
    graph = b.build(outs)
    # Each dispatch gets its input in a new numpy array (kept alive, so at a new
    # address) and the last conv writes a per-call output: the job tables depend only
    # on where the arrays lie in shared memory, so each is built once.
    inputs = [feeds["x"].copy() for _ in range(3)]
    results = [ctx.compute(graph, {"x": inputs[0]})]
    finalizers = len(weakref.finalize._registry)
    results += [ctx.compute(graph, {"x": x}) for x in inputs[1:]]
    # one finalizer per planned buffer and constant (made on the first dispatch), none per dispatch
    assert len(weakref.finalize._registry) == finalizers
    del pool._table
    after = pool.stats()
    assert len(built) == 4  # each kernel's job table built on the first dispatch, reused after
    for r in results:
        np.testing.assert_array_equal(r["y"], single["y"])
    x_bytes = 17 * 15 * 8 * 4
    # three dispatches: each copies only the graph input in; the conv and pool inputs are reused
    assert after["copiedIn"] - before["copiedIn"] == 3 * x_bytes
    assert after["reused"] - before["reused"] == 3 * (17 * 15 * 12 + 17 * 15 * 16 + 8 * 7 * 16) * 4
    assert after["jobs"] - before["jobs"] == 12
    ctx.destroy()


def test_calls_below_pool_min_work_stay_on_the_calling_thread(pool, monkeypatch):
    """A pool job's fixed cost outweighs the split of a small call: below
    tiles.POOL_MIN_WORK it runs on one thread (the native thread pool would split it)."""
    monkeypatch.setattr(tiling, "MIN_TILE_WORK", 1)
    fn = CASES["conv 3x3 pad 1, odd rows"]  # 13x11x9 outputs x 45 taps: ~58K multiply-adds
    jobs = pool.jobs
    single, _ = run(fn, 1)
    out, _ = run(fn, pool.threads)
    assert pool.jobs == jobs
    np.testing.assert_array_equal(out["y"], single["y"])
    monkeypatch.setattr(tiling, "POOL_MIN_WORK", 50_000)
    run(fn, pool.threads)
    assert pool.jobs > jobs


def test_concat_slices_are_written_into_the_concat_image(pool, split_everything):
    """A fire module's expand convs write channel slices of one concat buffer: on the
    pool each writes its slice straight into the concat's image in shared memory (no
    slice's extent copied in), both read the squeeze conv's output where it was left
    in shared memory, and the max pool (a graph output) reads the concat's image."""
    fn = CASES["fire module (in-place concat) + pool"]
    single, _ = run(fn, 1)
    sizes = []
    real_put = pool.port.put
    pool.port.put = lambda dst, src, n: sizes.append(n) or real_put(dst, src, n)
    reused, images = pool.reused, dict(pool._images)
    try:
        out, _ = run(fn, pool.threads)
    finally:
        del pool.port.put
    np.testing.assert_array_equal(out["y"], single["y"])
    x, squeezed, concat = 15 * 13 * 16 * 4, 15 * 13 * 8 * 4, 15 * 13 * 24 * 4
    # two dispatches: two readers of the squeeze output, one of the concat
    assert pool.reused - reused == 2 * (2 * squeezed + concat)
    # the last reader freed the images (checked while the graph and its buffers live)
    ctx = Context("cpu", options={"threads": pool.threads})
    b = ctx.graph_builder()
    feeds, outs = fn(b, np.random.default_rng(11))
    graph = b.build(outs)
    ctx.compute(graph, feeds)
    assert pool._images == images
    ctx.destroy()
    # per dispatch only the graph input goes in (constants once, on the first dispatch)
    activations = [n for n in sizes if n in (x, squeezed, concat)]
    assert sorted(activations) == [x, x]
    assert not [n for n in sizes if squeezed < n < concat * 2 and n != x], sizes


def test_pool_matches_numpy_reference(pool, split_everything):
    fn = CASES["conv 3x3 stride 2, asymmetric padding"]
    ref, _ = run(fn, 1, fastPaths=False)
    out, _ = run(fn, pool.threads)
    np.testing.assert_allclose(out["y"], ref["y"], rtol=1e-5, atol=1e-5)


def test_constants_are_resident_and_freed(pool, split_everything):
    """Packed weights are copied into shared memory once per graph, and their
    blocks go back to the heap when the graph goes away."""
    fn = CASES["conv 3x3 pad 1, odd rows"]
    in_use = pool.heap.in_use()
    rng = np.random.default_rng(1)
    ctx = Context("cpu", options={"threads": pool.threads})
    b = ctx.graph_builder()
    feeds, outs = fn(b, rng)
    graph = b.build(outs)
    ctx.compute(graph, feeds)
    resident = len(pool._resident)
    ctx.compute(graph, feeds)
    assert len(pool._resident) == resident > 0
    del graph, b, outs
    ctx.destroy()
    import gc

    gc.collect()
    assert pool.heap.in_use() == in_use


def test_heap_reuses_blocks_and_grows(native_lib):
    port = NativePoolPort(native_lib, 2, capacity=8 << 20)
    heap = SharedHeap(port)
    a = heap.alloc(1000)
    assert a % 64 == 0 and a >= 65536
    heap.free(a)
    assert heap.alloc(1000) == a  # same size class: same block
    big = heap.alloc(3 << 20)
    assert port.size() >= big + (3 << 20)
    with pytest.raises(MemoryError):
        heap.alloc(16 << 20)


def test_a_pool_with_another_kernel_build_is_not_used(native, native_lib):
    """N threads must give the one-thread result bit for bit: a pool running the
    other build (fused multiply-adds or not) than the library is left alone."""
    port = NativePoolPort(native_lib, 2)
    fast.attach_pool(port, not native.fused_madd, "other build")
    try:
        st = Context("cpu", options={"threads": 2}).backend.status()
        assert st["pool"] is None  # (the native library's own thread pool still splits)
    finally:
        fast.detach_pool()
        port.helpers.shutdown()


def one_thread_y(graph_fn, x):
    """Output "y" of graph_fn's graph (weights from seed 11) for input x, on one thread."""
    ctx = Context("cpu", options={"threads": 1})
    b = ctx.graph_builder()
    _, outs = graph_fn(b, np.random.default_rng(11))
    return ctx.compute(b.build(outs), {"x": x})["y"]


def test_a_chain_whose_writer_falls_back_reads_the_new_values(pool, split_everything, monkeypatch):
    """conv -> conv: when the first conv cannot get shared memory in a later dispatch
    (it runs on one thread, into its numpy buffer), the second conv, still on the
    pool, reads this dispatch's values, not an image of an earlier dispatch."""
    def chain(b, rng):
        x = b.input("x", {"dataType": "float32", "shape": [1, 17, 15, 8]})
        y = b.conv2d(x, const(b, rand(rng, 12, 3, 3, 8, scale=0.3)), padding=[1] * 4,
                     inputLayout="nhwc", filterLayout="ohwi")
        y = b.conv2d(y, const(b, rand(rng, 16, 1, 1, 12, scale=0.3)), inputLayout="nhwc", filterLayout="ohwi")
        return {"x": rand(rng, 1, 17, 15, 8)}, {"y": y}

    rng = np.random.default_rng(3)
    x2 = rand(rng, 1, 17, 15, 8)
    expected = one_thread_y(chain, x2)
    ctx = Context("cpu", options={"threads": pool.threads})
    b = ctx.graph_builder()
    feeds, outs = chain(b, np.random.default_rng(11))
    graph = b.build(outs)
    ctx.compute(graph, feeds)  # both convs on the pool; the first one's output kept as an image
    real_alloc = pool.heap.alloc
    first_out = 17 * 15 * 12 * 4

    def alloc(nbytes):
        if nbytes == first_out:
            raise MemoryError("no room (test)")
        return real_alloc(nbytes)

    monkeypatch.setattr(pool.heap, "alloc", alloc)
    got = ctx.compute(graph, {"x": x2})["y"]
    assert "kernel pool's memory is full" in ctx.backend.fallback_reasons["conv2d"]
    np.testing.assert_array_equal(got, expected)
    ctx.destroy()


def test_a_full_pool_runs_the_call_on_one_thread(native, native_lib, split_everything):
    """When the shared memory cannot hold a job's arrays, the call runs on the
    calling thread (same result) and the fallback reason says why."""
    port = NativePoolPort(native_lib, 2, capacity=(64 << 10) + 1024)  # 64 KiB reserved + 1 KiB
    fast.attach_pool(port, native.fused_madd, "tiny")
    try:
        fn = CASES["conv 3x3 pad 1, odd rows"]
        single, _ = run(fn, 1)
        rng = np.random.default_rng(11)
        ctx = Context("cpu", options={"threads": 2})
        b = ctx.graph_builder()
        feeds, outs = fn(b, rng)
        out = ctx.compute(b.build(outs), feeds)
        np.testing.assert_array_equal(out["y"], single["y"])
        assert "kernel pool's memory is full" in ctx.backend.fallback_reasons["conv2d"]
        assert fast.pool().heap.in_use() == 0
    finally:
        fast.detach_pool()
        port.helpers.shutdown()


# -- activations that live in the shared memory only (fast/shared.py Planned) ------------
def _conv_relu(b, rng, v, o, k, pad):
    c = v.shape[3]
    return b.relu(b.conv2d(v, const(b, rand(rng, o, k, k, c, scale=0.3)), bias=const(b, rand(rng, o)),
                           padding=[pad] * 4, inputLayout="nhwc", filterLayout="ohwi"))


def two_fires(b, rng, third=None):
    """SqueezeNet's fire -> fire: the second squeeze conv reads the first concat, a
    max pool reads the second; `third(b, s)`: an extra concat input next to the
    second fire's expands (a non-pool producer)."""
    x = b.input("x", {"dataType": "float32", "shape": [1, 15, 13, 16]})
    y = x
    for fire in range(2):
        s = _conv_relu(b, rng, y, 8, 1, 0)
        parts = [_conv_relu(b, rng, s, 12, 1, 0), _conv_relu(b, rng, s, 12, 3, 1)]
        if fire == 1 and third is not None:
            parts.append(third(b, s))
        y = b.concat(parts, 3)
    y = b.maxPool2d(y, windowDimensions=[3, 3], strides=[2, 2], layout="nhwc")
    y = b.conv2d(y, const(b, rand(rng, 5, 1, 1, y.shape[3], scale=0.3)), inputLayout="nhwc", filterLayout="ohwi")
    return {"x": rand(rng, 1, 15, 13, 16)}, {"y": y}


class _Copies:
    """Bytes the pool's port copies in (put) and out (get), by size."""

    def __init__(self, pool):
        self.pool, self.puts, self.gets = pool, [], []
        self.jobs = []  # (kernel name, tiles) of each job
        real_put, real_get, real_run = pool.port.put, pool.port.get, pool.port.run
        pool.port.put = lambda dst, src, n: self.puts.append(n) or real_put(dst, src, n)
        pool.port.get = lambda src, dst, n: self.gets.append(n) or real_get(src, dst, n)
        pool.port.run = lambda fn, nargs, ntiles, table: self.jobs.append((KERNEL_NAMES[fn], ntiles)) or real_run(fn, nargs, ntiles, table)

    def close(self):
        del self.pool.port.put, self.pool.port.get, self.pool.port.run


def _dispatches(pool, fn, feeds_list, **options):
    """Build fn's graph on the pool and compute it once per feeds (after a first warm
    dispatch); returns the results and the copies of the later dispatches."""
    ctx = Context("cpu", options={"threads": pool.threads, **options})
    b = ctx.graph_builder()
    feeds, outs = fn(b, np.random.default_rng(11))
    graph = b.build(outs)
    ctx.compute(graph, feeds)
    copies = _Copies(pool)
    try:
        results = [ctx.compute(graph, f or feeds) for f in feeds_list]
    finally:
        copies.close()
    return ctx, graph, results, copies


def test_buffers_only_pool_kernels_read_never_leave_the_shared_memory(pool, split_everything):
    """fire -> fire -> max pool -> conv: every planned buffer is read by pool kernels
    only, so none is copied back into its numpy array, and the concat buffers are
    written slice by slice into their images (no extent copied in): per dispatch the
    graph input goes in and the graph output comes out, nothing else."""
    single, _ = run(two_fires, 1)
    ctx, _, results, copies = _dispatches(pool, two_fires, [None, None])
    for r in results:
        np.testing.assert_array_equal(r["y"], single["y"])
    x, y = 15 * 13 * 16 * 4, 7 * 6 * 5 * 4
    assert sorted(copies.puts) == [x, x], copies.puts
    assert sorted(copies.gets) == [y, y], copies.gets
    ctx.destroy()


def test_a_pool_whose_output_is_a_graph_output_reads_the_image(pool, split_everything):
    """conv -> global average pool (a graph output, so no planned buffer of its own): the
    pool still reads the conv's image, so the conv output never comes out."""
    def fn(b, rng):
        x = b.input("x", {"dataType": "float32", "shape": [1, 13, 13, 16]})
        y = b.conv2d(x, const(b, rand(rng, 40, 1, 1, 16, scale=0.3)), inputLayout="nhwc", filterLayout="ohwi")
        return {"x": rand(rng, 1, 13, 13, 16)}, {"y": b.averagePool2d(y, layout="nhwc")}

    single, _ = run(fn, 1)
    ctx, _, results, copies = _dispatches(pool, fn, [None])
    np.testing.assert_array_equal(results[0]["y"], single["y"])
    assert copies.puts == [13 * 13 * 16 * 4] and copies.gets == [40 * 4], (copies.puts, copies.gets)
    ctx.destroy()


def test_a_small_kernel_reading_an_image_runs_on_the_pool_as_one_tile(pool, monkeypatch):
    """Below POOL_MIN_WORK a call is not split, but when its input is already an image
    in the shared memory it still runs there (one tile: nothing crosses)."""
    monkeypatch.setattr(tiling, "MIN_TILE_WORK", 1)
    monkeypatch.setattr(tiling, "POOL_MIN_WORK", 40_000)  # the 16 -> 8 squeeze (24K) stays whole

    single, _ = run(two_fires, 1)
    jobs = pool.jobs
    ctx, _, results, copies = _dispatches(pool, two_fires, [None])
    np.testing.assert_array_equal(results[0]["y"], single["y"])
    # the first squeeze reads the graph input: one thread, its output copied in once by the
    # expands; the second squeeze (reads the first concat's image) runs on the pool
    s = 15 * 13 * 8 * 4
    assert sorted(copies.puts) == [s], copies.puts
    # (warm dispatch + this one) x (2 expands + squeeze + 2 expands + pool + conv)
    assert pool.jobs - jobs == 2 * 7
    ctx.destroy()


def test_a_kernel_reading_an_image_splits_from_the_chained_threshold(pool, monkeypatch):
    """A job whose input is an image copies nothing in: it is split from
    tiles.CHAINED_POOL_MIN_WORK on, not POOL_MIN_WORK (here: nothing would be split)."""
    monkeypatch.setattr(tiling, "MIN_TILE_WORK", 1)
    monkeypatch.setattr(tiling, "POOL_MIN_WORK", 1 << 40)
    monkeypatch.setattr(tiling, "CHAINED_POOL_MIN_WORK", 0)
    single, _ = run(two_fires, 1)
    copies = _Copies(pool)
    try:
        out, _ = run(two_fires, pool.threads)
    finally:
        copies.close()
    tiles = [n for _, n in copies.jobs]
    np.testing.assert_array_equal(out["y"], single["y"])
    # per dispatch: 4 expands (concat slices), the second squeeze, the pool, the conv, split
    assert len(tiles) == 2 * 7 and min(tiles) > 1, tiles


def test_a_concat_with_a_non_pool_producer_has_no_image(pool, split_everything):
    """A concat input some numpy op writes (here a sigmoid of the squeeze output): no
    image for that concat; its slices go through the numpy buffer and its reader copies
    it in; the squeeze output is copied out for the sigmoid. Same bytes as one thread."""
    fn = functools.partial(two_fires, third=lambda b, s: b.sigmoid(s))
    single, _ = run(fn, 1)
    ctx, _, results, copies = _dispatches(pool, fn, [None])
    np.testing.assert_array_equal(results[0]["y"], single["y"])
    x, s, concat = 15 * 13 * 16 * 4, 15 * 13 * 8 * 4, 15 * 13 * 32 * 4
    assert concat in copies.puts and s in copies.gets
    assert copies.puts.count(x) == 1
    ctx.destroy()


@pytest.mark.parametrize("reader", ["numpy op", "graph output"])
def test_a_buffer_a_numpy_op_reads_too_is_filled(pool, split_everything, reader):
    """A conv output read by the next conv and by a numpy op (a sigmoid, feeding another
    conv): its image serves the conv and it is copied out once for the sigmoid. When the
    sigmoid is a graph output, the buffer is not planned at all (a graph output may be a
    view of it) and the second conv copies it in."""
    def fn(b, rng):
        x = b.input("x", {"dataType": "float32", "shape": [1, 17, 15, 8]})
        y = b.conv2d(x, const(b, rand(rng, 12, 3, 3, 8, scale=0.3)), padding=[1] * 4,
                     inputLayout="nhwc", filterLayout="ohwi")
        z = b.conv2d(y, const(b, rand(rng, 16, 1, 1, 12, scale=0.3)), inputLayout="nhwc", filterLayout="ohwi")
        s = b.sigmoid(y)
        if reader == "numpy op":
            s = b.conv2d(s, const(b, rand(rng, 4, 1, 1, 12, scale=0.3)), inputLayout="nhwc", filterLayout="ohwi")
        return {"x": rand(rng, 1, 17, 15, 8)}, {"s": s, "z": z}

    single, _ = run(fn, 1)
    ctx, _, results, copies = _dispatches(pool, fn, [None])
    for name in single:
        np.testing.assert_array_equal(results[0][name], single[name])
    x, y, z, s = (17 * 15 * c * 4 for c in (8, 12, 16, 4))
    if reader == "numpy op":
        assert sorted(copies.puts) == sorted([x, y])  # the graph input, the sigmoid's output
        assert sorted(copies.gets) == sorted([y, z, s])
    else:
        assert sorted(copies.puts) == sorted([x, y])  # the graph input, the conv's input
        assert sorted(copies.gets) == sorted([y, z])
    ctx.destroy()


@pytest.mark.parametrize("fails", ["second squeeze", "first expand", "second expand"])
def test_a_job_falling_back_mid_chain_reads_the_images(pool, split_everything, monkeypatch, fails):
    """When a pool kernel of the chain cannot get shared memory in a later dispatch (it
    runs on one thread, on numpy arrays), the images its input lacks in numpy are copied
    out first, and a concat one of whose producers fell back is completed in numpy (the
    other slice copied out of its image): the result equals the one-thread result of the
    same input, in that dispatch and the next."""
    rng = np.random.default_rng(5)
    x2 = rand(rng, 1, 15, 13, 16)
    expected = one_thread_y(two_fires, x2)
    real_alloc, real_stage = pool.heap.alloc, pool._stage
    state = {"armed": False, "slices": 0}

    def alloc(nbytes):  # the second squeeze's output: the only 15x13x8 array allocated per dispatch
        if state["armed"] and fails == "second squeeze" and nbytes == 15 * 13 * 8 * 4:
            raise MemoryError("no room (test)")
        return real_alloc(nbytes)

    def stage(*args):  # the k-th job writing into a concat image this dispatch
        image = args[-2]
        if state["armed"] and image is not None and image.slices:
            state["slices"] += 1
            if state["slices"] == {"first expand": 1, "second expand": 2}.get(fails):
                raise MemoryError("no room (test)")
        return real_stage(*args)

    monkeypatch.setattr(pool.heap, "alloc", alloc)
    monkeypatch.setattr(pool, "_stage", stage)
    ctx = Context("cpu", options={"threads": pool.threads})
    b = ctx.graph_builder()
    feeds, outs = two_fires(b, np.random.default_rng(11))
    graph = b.build(outs)
    ctx.compute(graph, feeds)  # all on the pool; images in place
    state["armed"] = True
    got = ctx.compute(graph, {"x": x2})["y"]
    assert "kernel pool's memory is full" in str(ctx.backend.fallback_reasons)
    np.testing.assert_array_equal(got, expected)
    state["armed"] = False
    np.testing.assert_array_equal(ctx.compute(graph, {"x": x2})["y"], expected)
    ctx.destroy()


# -- ShuffleNet as ONNX Runtime's WebNN EP builds it: NCHW units cut at each Sum -----------
def shufflenet_unit(c, mid, h, w, stride=1, relu_output=True):
    """One ShuffleNet unit of an ORT partition, NCHW: relu of the partition input (also a
    graph output: ORT's Sum reads it), the group-4 1x1 conv + relu, the channel shuffle
    as ORT writes it (reshape -> transpose -> reshape), the 3x3 depthwise conv and the
    group-4 1x1 conv. The layout pass runs it NHWC between two transposes."""
    def fn(b, rng):
        x = b.input("x", {"dataType": "float32", "shape": [1, c, h, w]})
        r = b.relu(x)

        def conv(v, o, k, groups, **opts):
            wt = const(b, rand(rng, o, v.shape[1] // groups, k, k, scale=0.3))
            return b.conv2d(v, wt, bias=const(b, rand(rng, o)), groups=groups, **opts)

        y = b.relu(conv(r, mid, 1, 4))
        oh, ow = y.shape[2], y.shape[3]
        y = b.reshape(y, [1, 4, mid // 4, oh, ow])
        y = b.transpose(y, permutation=[0, 2, 1, 3, 4])
        y = b.reshape(y, [1, mid, oh, ow])
        y = conv(y, mid, 3, mid, padding=[1, 1, 1, 1], strides=[stride, stride])
        y = conv(y, c, 1, 4)
        return {"x": rand(rng, 1, c, h, w)}, ({"r": r, "y": y} if relu_output else {"y": y})
    fn.x_bytes = 4 * c * h * w
    return fn


SHUFFLE_UNITS = {
    "odd channels, odd sizes": shufflenet_unit(36, 20, 13, 11),
    "depthwise stride 2": shufflenet_unit(44, 28, 27, 21, stride=2),
    # the relu then runs on the NHWC twin (a numpy op reading the head transpose's output)
    "relu not a graph output": shufflenet_unit(36, 20, 13, 11, relu_output=False),
}


@pytest.mark.parametrize("unit", list(SHUFFLE_UNITS))
def test_a_shufflenet_unit_stays_in_the_shared_memory(pool, split_everything, unit):
    """Between the layout pass's two transposes every step of the unit runs on the pool
    (the transposes and the channel shuffle as one-tile jobs): per dispatch the relu's
    output goes in once (the head transpose) and the unit's output comes out once (the
    tail transpose); the same bytes as one thread."""
    fn = SHUFFLE_UNITS[unit]
    single, _ = run(fn, 1)
    ctx, _, results, copies = _dispatches(pool, fn, [None, None])
    for r in results:
        for name in single:
            np.testing.assert_array_equal(r[name], single[name], err_msg=name)
    x, y = fn.x_bytes, single["y"].nbytes
    assert sorted(copies.puts) == [x, x], copies.puts
    assert sorted(copies.gets) == [y, y], copies.gets
    assert [name for name, _ in copies.jobs[len(copies.jobs) // 2:]] == [
        "wk_transpose", "wk_conv2d", "wk_shuffle", "wk_dwconv2d", "wk_conv2d", "wk_transpose"], copies.jobs
    ctx.destroy()


def test_shufflenet_sized_convolutions_split_on_the_pool(pool):
    """At ShuffleNet's own sizes (28x28, 272 -> 68 -> 272 channels: 3.6M multiply-adds
    per 1x1 conv, 0.48M depthwise taps) and the default thresholds, the unit's three
    convolutions run split in several tiles (their inputs are images: the head
    transpose put the unit's input in the shared memory), the moves as one tile each."""
    fn = shufflenet_unit(272, 68, 28, 28)
    single, _ = run(fn, 1)
    ctx, _, results, copies = _dispatches(pool, fn, [None])
    np.testing.assert_array_equal(results[0]["y"], single["y"])
    np.testing.assert_array_equal(results[0]["r"], single["r"])
    last = copies.jobs  # the dispatch after the first
    assert [name for name, _ in last] == ["wk_transpose", "wk_conv2d", "wk_shuffle", "wk_dwconv2d", "wk_conv2d",
                                          "wk_transpose"], last
    for name, n in last:
        assert n == 1 if name in ("wk_transpose", "wk_shuffle") else n >= pool.threads, last
    ctx.destroy()
