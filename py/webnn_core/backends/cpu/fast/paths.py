"""The fast paths: each takes the CpuBackend running it, then the op's attrs
and numpy arguments like the op's `compute`, and either returns the result
computed by a microkernel of the backend's library or declines (returns
None, reason recorded in the backend) so the numpy reference runs.

Attributes that ..compile adds at build() time to its copies of the nodes
(held by the backend's plan; never read by the reference kernels):
  _prep    a PackedConv / packed B for constant weights (no per-call packing)
  _out     a preallocated output array (a pooled buffer, or a channel slice
           of a concat buffer) for the kernel to write into
  _x       the array the node's input will be when its producer ran its
           kernel (its `_out`), so the input's address can be reused
  _planned a shared.Planned: who reads the node's planned buffer (pool
           kernels only, or numpy ops too), and for a concat buffer written
           by pool kernels only, its slices (the kernel pool's images)
  _lo, _hi the clamp of a fused activation (conv2d+relu, conv2d+clamp)
  _inplace (buffer, views) of a concat whose producers wrote in place
and the fast paths cache `_plan`, the node's resolved kernel call, on first use.
"""
from __future__ import annotations

import math

import numpy as np

from . import tiles as tiling
from .pack import F32, PackedConv, pack_b, pack_conv, round_up
from .shared import PoolFull
from .shared import extent as shared_extent

INF = math.inf
# Tiles per thread of a kernel pool (see _threads).
TILES_PER_POOL_THREAD = 3
# Below this many multiply-adds a call is not worth the FFI crossing.
SMALL_GEMM = 4096
SMALL_ELEMENTWISE = 4096
SMALL_SHUFFLE = 1024


def addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _c(a: np.ndarray) -> np.ndarray:
    """C-contiguous and aligned (float32 in, float32 out)."""
    if a.flags.c_contiguous and a.flags.aligned:
        return a
    return np.ascontiguousarray(a)


def _no_library(cpu, name):
    return cpu.decline(name, cpu.library_reason())


# ----------------------------------------------------------------- conv2d --
# Rows of im2col per block: about 64 KiB of scratch, which stays in cache
# while every weight panel passes over it.
def _im2col_rows(k: int) -> int:
    return max(4, (16384 // max(k, 1)) // 4 * 4)


def _conv_params(prep: PackedConv, attrs, shape, ldy):
    key = (shape, ldy)
    p = prep.params.get(key)
    if p is None:
        n, h, w, c = shape
        kh, kw = prep.kh, prep.kw
        pt, pb, pl, pr = attrs["padding"]
        sh, sw = attrs["strides"]
        dh, dw = attrs["dilations"]
        oh = (h + pt + pb - ((kh - 1) * dh + 1)) // sh + 1
        ow = (w + pl + pr - ((kw - 1) * dw + 1)) // sw + 1
        p = np.array([n, h, w, c, oh, ow, prep.out_channels, kh, kw, sh, sw, dh, dw, pt, pl,
                      prep.groups, ldy, _im2col_rows(prep.k)], np.int32)
        if len(prep.params) > 8:
            prep.params.clear()
        prep.params[key] = p
    return p


def conv2d_into(backend, prep: PackedConv, attrs, x_nhwc: np.ndarray, y: np.ndarray, lo: float, hi: float,
                scratch=None, cpu=None):
    """Run a packed convolution of a C-contiguous NHWC float32 `x` into `y`
    (N, OH, OW, O), whose pixel stride may exceed O (a channel slice), with
    the kernel library `backend`. `scratch(nfloats)` gives im2col scratch;
    `cpu`: the CpuBackend, whose thread pool may run it in tiles."""
    ldy = y.strides[2] // 4
    p = _conv_params(prep, attrs, x_nhwc.shape, ldy)
    bias = 0 if prep.bias is None else addr(prep.bias)
    parts = _conv_parts(cpu, prep, p)
    if prep.kind == "dw":
        args = [addr(p), addr(x_nhwc), addr(prep.w), bias, addr(y), lo, hi]
        if parts > 1:
            _run_tiles(cpu, "dwconv2d", args, _tiles(p, parts, False, 0), 1, 4, None, x_nhwc, y, prep.consts)
        else:
            backend.dwconv2d(*args)
    else:
        n = int(p[17]) * prep.k
        if parts > 1:
            args = [addr(p), addr(x_nhwc), addr(prep.w), bias, addr(y), 0, lo, hi]
            tiles = _tiles(p, parts, tiling.is_direct_conv(p), n)
            _run_tiles(cpu, "conv2d", args, tiles, 1, 4, 5, x_nhwc, y, prep.consts)
            return y
        s = scratch(n) if scratch is not None else np.empty(n, F32)
        backend.conv2d(addr(p), addr(x_nhwc), addr(prep.w), bias, addr(y), addr(s), lo, hi)
    return y


def _threads(cpu) -> int:
    """How many tiles a big call may be split into: one per kernel thread, or with a
    kernel pool a few per thread, so that threads taking tiles from its counter even
    out when one of them runs late (a busy core); tiles stay >= MIN_TILE_WORK."""
    if cpu is None:
        return 1
    threads = cpu.kernel_threads()
    if threads > 1 and cpu.kernel_pool is not None:
        return threads * TILES_PER_POOL_THREAD
    return threads


def _parts(cpu, work: int, rows: int, chained: bool = False) -> int:
    """How many tiles a call of `work` multiply-adds (or taps) over `rows` rows is
    split into on `cpu`'s threads. A kernel pool job has a fixed cost (staging,
    copies in and out of the shared memory, JS crossings, waking workers; ~0.2 ms
    in Pyodide), so calls below tiles.POOL_MIN_WORK stay on the calling thread there;
    `chained`: a job whose input and output are images in the pool's memory (nothing
    copied), split from tiles.CHAINED_POOL_MIN_WORK on."""
    threads = _threads(cpu)
    if threads > 1 and cpu.kernel_pool is not None:
        if work < (tiling.CHAINED_POOL_MIN_WORK if chained else tiling.POOL_MIN_WORK):
            return 1
    return tiling.parts_for(work, rows, threads)


def _conv_parts(cpu, prep: PackedConv, p, chained: bool = False) -> int:
    if _threads(cpu) <= 1:
        return 1
    rows = int(p[0]) * int(p[4])
    if prep.kind == "dw":
        macs = rows * int(p[5]) * prep.out_channels * prep.kh * prep.kw * tiling.DEPTHWISE_WORK_PER_TAP
    else:
        macs = rows * int(p[5]) * prep.out_channels * prep.k
    if tiling.is_direct_conv(p) and prep.kind != "dw":
        rows = int(p[0]) * int(p[4]) * int(p[5])
    return _parts(cpu, macs, rows, chained)


_ASK = object()  # _run_tiles: the caller did not look the kernel pool up


class _Tile:
    """One tile of a split call: its parameter block (None: the call's first argument
    is not one and stays as it is), x / y offsets in bytes and its own scratch."""

    __slots__ = ("p", "dx", "dy", "scratch")

    def __init__(self, p, dx, dy, scratch):
        self.p, self.dx, self.dy, self.scratch = p, dx, dy, scratch


def _tiles(p, parts, direct, scratch_floats) -> list:
    return [_Tile(q, 4 * dx, 4 * dy, np.empty(scratch_floats, F32) if scratch_floats else None)
            for q, dx, dy in tiling.window_tiles(p, parts, direct)]


def _run_tiles(cpu, name, args, tiles, x_index, out_index, scratch_index, x, out, consts, chained=False,
               image=None, cache=None, out_geometry=None, x_image=None, pool=_ASK):
    """Call kernel `name` once per tile (args with that tile's parameter block,
    offsets and scratch) on the backend's threads, the calling thread taking a
    share: its kernel pool (shared memory, fast/shared.py) when it has one,
    else its thread pool over the native library. `x` (C-contiguous), `out`: the
    arrays args[x_index] and args[out_index] point into; `consts`: constant arrays
    the args point into; `chained`: x is a planned buffer (its image may be in the
    pool); `image`: out is the planned buffer (or concat slice) that `image` (a
    shared.Planned) describes, `x_image` the same of x; `out_geometry`: out's (extent, C-contiguous) when
    the caller knows them; `pool`: cpu.kernel_pool when the caller has it."""
    def make_calls():
        calls = []
        for t in tiles:
            a = list(args)
            if t.p is not None:
                a[0] = addr(t.p)
            a[x_index] += t.dx
            a[out_index] += t.dy
            if scratch_index is not None:
                a[scratch_index] = addr(t.scratch)
            calls.append(a)
        return calls

    if pool is _ASK:
        pool = cpu.kernel_pool
    if pool is not None:
        try:
            # (the pool builds the calls only when it has no job table for them yet, and
            # stages the constants and scratch only when the cache has not got them)
            if out_geometry is None:
                out_geometry = (shared_extent(out), out.flags.c_contiguous)
            staged = cache is not None and cache.get("pool") is pool and "fixed" in cache
            pool.run("wk_" + name, make_calls, consts=() if staged else [*consts, *(t.p for t in tiles)],
                     ins=[(x, args[x_index], x.nbytes, True)], outs=[(out, args[out_index], *out_geometry)],
                     scratch=() if staged else [t.scratch for t in tiles], chained=x if chained else None,
                     image=image, cache=cache, x_image=x_image)
            return
        except PoolFull as e:
            cpu.decline(name, f"ran on one thread: {e}")
    cpu.run_calls(getattr(cpu.library, name), make_calls())


class _Plan:
    """A compiled node's kernel call with every argument resolved once: in
    Pyodide each numpy address lookup or small array costs tens of
    microseconds, so a call only checks that its input is the buffer the
    producer was planned to write (then its address is known) and calls.
    Holds references to every array whose address it caches."""

    __slots__ = ("backend", "fn", "name", "args", "x_index", "x_expected", "out", "out_index", "out_shape", "keep",
                 "tiles", "cpu", "scratch_index", "consts", "tables", "scatter", "image", "out_geometry",
                 "chained_tiles", "chained_tables", "chained_parts", "make_tiles", "head", "x_image")

    def __call__(self, x):
        args = self.args
        chained = x is self.x_expected
        if not chained:
            x = _c(x)
            args = list(args)
            args[self.x_index] = addr(x)
        out = self.out
        if out is None:
            out = np.empty(self.out_shape, F32)
            if args is self.args:
                args = list(args)
            args[self.out_index] = addr(out)
        planned = out is self.out and self.scatter is None
        tiles, tables = self.tiles, self.tables
        pool = _ASK
        if tiles is None and self.cpu is not None:
            pool = self.cpu.kernel_pool
            if pool is not None:
                image = self.image if planned else None
                if (image is not None and image.slices) or (
                        chained and pool.holds(x) and (out is not self.out or self.out_geometry[1])) or (
                        self.head and image is not None and image.readers):
                    # Too small to pay for a job that copies, but its input is already in the
                    # pool's memory (or its output goes into a concat image, or it is a layout
                    # move whose output pool kernels read: the head of a chain): run there, in
                    # tiles from tiles.CHAINED_POOL_MIN_WORK on, else as one tile. (Not into a
                    # concat slice without an image: its whole extent would cross twice.)
                    if self.chained_tiles is None:
                        self.chained_tiles = self.make_tiles(self.chained_parts)
                    tiles, tables = self.chained_tiles, self.chained_tables
                else:
                    if chained:
                        pool.sync(x)
                    if image is not None:
                        pool.drop(image.buf)
        if tiles:
            _run_tiles(self.cpu, self.name, args, tiles, self.x_index, self.out_index, self.scratch_index, x, out,
                       self.consts, chained, self.image if planned else None, tables,
                       self.out_geometry if out is self.out else (out.nbytes, True), self.x_image, pool)
        else:
            self.fn(*args)
        if self.scatter is not None:
            self.scatter[...] = out
            return self.scatter
        return out


def _make_plan(backend, name, args, x_index, x_expected, out, out_index, out_shape, keep, tiles=None, cpu=None,
               scratch_index=None, consts=(), scatter=None, image=None, scratch_floats=0, x_image=None,
               chained_parts=1, direct=False, make_tiles=None, head=False) -> _Plan:
    """`make_tiles(parts)`: the call's tiles when it runs on the pool unsplit at
    POOL_MIN_WORK (default: keep[0] is its parameter block, split by output rows, or
    pixels when `direct`); `head`: a layout move that runs on the pool whenever pool
    kernels read its output (it starts their chain in the shared memory)."""
    plan = _Plan()
    plan.scatter = scatter
    plan.x_image = x_image  # the shared.Planned of x_expected (compile.py's _x_planned)
    plan.image = image  # a shared.Planned: `out`'s readers (compile.py's _planned)
    plan.out_geometry = None if out is None else (shared_extent(out), out.flags.c_contiguous)
    plan.tiles = tiles
    plan.chained_tiles = None  # the tiles of a job reading an image (made on first use)
    plan.chained_tables = {}
    plan.chained_parts = chained_parts
    plan.make_tiles = make_tiles or (lambda parts: _tiles(keep[0], parts, direct, scratch_floats))
    plan.head = head
    plan.cpu = cpu
    plan.scratch_index = scratch_index
    plan.backend = backend
    plan.name = name
    plan.fn = getattr(backend, name)
    plan.consts = list(consts)
    plan.tables = {}  # the kernel pool's relocated job tables (fast/shared.py)
    plan.args = list(args)
    plan.x_index = x_index
    ok = (x_expected is not None and x_expected.dtype == F32 and x_expected.flags.c_contiguous
          and x_expected.flags.aligned)
    plan.x_expected = x_expected if ok else None
    plan.args[x_index] = addr(x_expected) if ok else 0
    plan.out = out
    plan.out_index = out_index
    plan.out_shape = out_shape
    if out is not None:
        plan.args[out_index] = addr(out)
    plan.keep = keep
    return plan


def _conv_plan(cpu, backend, scratch, attrs, x_shape, lo, hi):
    """The call plan of a compiled NHWC convolution (packed weights in attrs["_prep"])."""
    prep = attrs["_prep"]
    out = attrs.get("_out")
    image = attrs.get("_planned")
    ldy = out.strides[2] // 4 if out is not None else prep.out_channels
    p = _conv_params(prep, attrs, tuple(x_shape), ldy)
    parts = _conv_parts(cpu, prep, p)
    scatter = None
    if (parts > 1 and out is not None and not out.flags.c_contiguous and cpu.kernel_pool is not None
            and not (image is not None and image.slices)):
        # A channel slice of a concat buffer without an image, split on the kernel pool: the job
        # would copy the slice's whole extent (most of the buffer) into the shared memory and back.
        # Write a contiguous array instead (only its bytes cross) and copy it into the slice.
        scatter, out = out, np.empty(out.shape, F32)
        p = _conv_params(prep, attrs, tuple(x_shape), prep.out_channels)
    out_shape = (x_shape[0], int(p[4]), int(p[5]), prep.out_channels)
    bias = 0 if prep.bias is None else addr(prep.bias)
    keep = [p, prep]
    chained_parts = 1 if parts > 1 or scatter is not None else _conv_parts(cpu, prep, p, chained=True)
    if prep.kind == "dw":
        args = [addr(p), 0, addr(prep.w), bias, 0, lo, hi]
        tiles = _tiles(p, parts, False, 0) if parts > 1 else None
        return _make_plan(backend, "dwconv2d", args, 1, attrs.get("_x"), out, 4, out_shape, keep, tiles, cpu,
                          consts=prep.consts, scatter=scatter, image=image, x_image=attrs.get("_x_planned"),
                          chained_parts=chained_parts)
    n = int(p[17]) * prep.k
    direct = bool(tiling.is_direct_conv(p))
    tiles = _tiles(p, parts, direct, n) if parts > 1 else None
    s = scratch(n) if tiles is None else np.empty(0, F32)
    keep.append(s)  # the plan owns its scratch even if the shared one is replaced
    args = [addr(p), 0, addr(prep.w), bias, 0, addr(s), lo, hi]
    return _make_plan(backend, "conv2d", args, 1, attrs.get("_x"), out, 4, out_shape, keep, tiles, cpu, 5,
                      prep.consts, scatter, image, n, attrs.get("_x_planned"), chained_parts, direct)


def _conv(cpu, name, attrs, x, w, bias, lo, hi):
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, name)
    plan = attrs.get("_plan")
    if plan is not None and plan.backend is backend:
        return plan(x)
    if x.dtype != F32 or w.dtype != F32 or (bias is not None and bias.dtype != F32):
        return cpu.decline(name, f"data type {x.dtype} (float32 only)")
    nhwc = attrs["layout"] == "nhwc"
    prep = attrs.get("_prep")
    if prep is not None and nhwc:
        # A compiled node: resolve its call once, then run it.
        plan = attrs["_plan"] = _conv_plan(cpu, backend, cpu.scratch, attrs, x.shape, lo, hi)
        return plan(x)
    if prep is None:
        # (a depthwise filter with a channel multiplier runs as a grouped GEMM)
        prep = pack_conv(np.transpose(w, attrs["filter_perm"]), bias, attrs["groups"], backend)
    xn = _c(x if nhwc else np.transpose(x, (0, 2, 3, 1)))
    out = attrs.get("_out") if nhwc else None
    if out is None:
        p = _conv_params(prep, attrs, xn.shape, prep.out_channels)
        out = np.empty((xn.shape[0], int(p[4]), int(p[5]), prep.out_channels), F32)
    conv2d_into(backend, prep, attrs, xn, out, lo, hi, cpu.scratch, cpu)
    return out if nhwc else np.transpose(out, (0, 3, 1, 2))


def conv2d(cpu, attrs, x, w, bias=None):
    return _conv(cpu, "conv2d", attrs, x, w, bias, -INF, INF)


def conv2d_fused(cpu, attrs, x, w, bias=None):
    return _conv(cpu, attrs["_name"], attrs, x, w, bias, attrs["_lo"], attrs["_hi"])


# ----------------------------------------------------------------- matmul --
def pack_b_runtime(backend, b: np.ndarray) -> np.ndarray:
    """Pack a K x N float32 view (any element strides) with the C packer."""
    return pack_b(b, backend)


def gemm_into(backend, a: np.ndarray, bp: np.ndarray, n: int, out: np.ndarray, cpu=None, bias=None):
    """out (M x N, row stride >= N) = a (M x K, C-contiguous) . packed B [+ bias,
    round_up(N) floats, added after the accumulation]; in row tiles on `cpu`'s
    thread pool when it has one and the GEMM is big enough."""
    m, k = a.shape
    ldc = out.strides[0] // 4
    parts = _parts(cpu, m * n * k, m)
    b0 = 0 if bias is None else addr(bias)
    if parts > 1:
        a0, c0 = addr(a), addr(out)
        calls = [[m1 - m0, n, k, a0 + 4 * m0 * k, k, addr(bp), b0, c0 + 4 * m0 * ldc, ldc, -INF, INF]
                 for m0, m1 in tiling.gemm_tiles(m, parts)]
        pool = cpu.kernel_pool
        if pool is not None:
            try:
                pool.run("wk_gemm", calls, consts=[bp] if bias is None else [bp, bias], ins=[a], outs=[out])
                return out
            except PoolFull as e:
                cpu.decline("matmul", f"ran on one thread: {e}")
        cpu.run_calls(backend.gemm, calls)
        return out
    backend.gemm(m, n, k, addr(a), k, addr(bp), b0, addr(out), ldc, -INF, INF)
    return out


def matmul(cpu, attrs, a, b):
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, "matmul")
    if a.dtype != F32 or b.dtype != F32:
        return cpu.decline("matmul", f"data type {a.dtype} (float32 only)")
    m, k = a.shape[-2:]
    n = b.shape[-1]
    if m * n * k < SMALL_GEMM:
        return cpu.decline("matmul", f"small ({m}x{k}x{n})")
    if a.ndim == 2 and b.ndim == 2:
        bp = attrs.get("_prep")
        if bp is None:
            bp = pack_b_runtime(backend, b)
        return gemm_into(backend, _c(a), bp, n, np.empty((m, n), F32), cpu)
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out = np.empty(batch + (m, n), F32)
    ab = np.broadcast_to(a, batch + (m, k))
    bb = np.broadcast_to(b, batch + (k, n))
    packs = {}
    for idx in np.ndindex(*batch):
        bi = bb[idx]
        key = addr(bi)
        bp = packs.get(key)
        if bp is None:
            bp = packs[key] = pack_b_runtime(backend, bi)
        gemm_into(backend, _c(ab[idx]), bp, n, out[idx], cpu)
    return out


def gemm(cpu, attrs, a, b, c=None):
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, "gemm")
    if a.dtype != F32 or b.dtype != F32 or (c is not None and c.dtype != F32):
        return cpu.decline("gemm", f"data type {a.dtype} (float32 only)")
    a2 = a.T if attrs["aT"] else a
    b2 = b.T if attrs["bT"] else b
    m, k = a2.shape
    n = b2.shape[1]
    if m * n * k < SMALL_GEMM:
        return cpu.decline("gemm", f"small ({m}x{k}x{n})")
    bp = attrs.get("_prep")
    bias = attrs.get("_bias")  # beta * C, added by the kernel (compile.py, constant C with alpha 1)
    call = attrs.get("_call")
    if call is not None and call[0] is backend:
        # A compiled gemm on one thread: its constant addresses resolved once (each
        # address lookup costs microseconds in Pyodide, like the call itself).
        a2 = _c(a2)
        y = np.empty((m, n), F32)
        backend.gemm(m, n, k, addr(a2), k, call[1], call[2], addr(y), n, -INF, INF)
    else:
        if bp is None:
            bp = pack_b_runtime(backend, b2)
        y = gemm_into(backend, _c(a2), bp, n, np.empty((m, n), F32), cpu, bias)
        if attrs.get("_prep") is not None and tiling.parts_for(m * n * k, m, _threads(cpu)) == 1:
            attrs["_call"] = (backend, addr(bp), 0 if bias is None else addr(bias))
    # The epilogue exactly as the reference (ops/linalg.py Gemm.compute), in place.
    if attrs["alpha"] != 1.0:
        np.multiply(y, np.float32(attrs["alpha"]), out=y)
    if c is not None and attrs["beta"] != 0 and bias is None:
        beta = attrs["beta"]
        np.add(y, c if beta == 1.0 else np.float32(beta) * c, out=y)
    return y


# ---------------------------------------------------------------- pooling --
def _pool_params(attrs, shape, ldy):
    n, h, w, c = shape
    oh, ow = attrs["out_hw"]
    kh, kw = attrs["window"]
    pt, _, pl, _ = attrs["padding"]
    sh, sw = attrs["strides"]
    dh, dw = attrs["dilations"]
    return np.array([n, h, w, c, oh, ow, c, kh, kw, sh, sw, dh, dw, pt, pl, 1, ldy, 0], np.int32)


def _pool(cpu, name, fn_name, attrs, x):
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, name)
    plan = attrs.get("_plan")
    if plan is not None and plan.backend is backend:
        return plan(x)
    if x.dtype != F32:
        return cpu.decline(name, f"data type {x.dtype} (float32 only)")
    nhwc = attrs["layout"] == "nhwc"
    xn = _c(x if nhwc else np.transpose(x, (0, 2, 3, 1)))
    n, h, w, c = xn.shape
    oh, ow = attrs["out_hw"]
    out = attrs.get("_out") if nhwc else None
    if out is not None or (nhwc and attrs.get("_x") is not None):
        # A compiled node (with a planned output, or reading one): resolve its call once, then run it.
        p = _pool_params(attrs, xn.shape, out.strides[2] // 4 if out is not None else c)
        parts = _pool_parts(cpu, attrs, p)
        tiles = _tiles(p, parts, False, 0) if parts > 1 else None
        plan = attrs["_plan"] = _make_plan(backend, fn_name, [addr(p), 0, 0], 1, attrs.get("_x"), out, 2,
                                           (n, oh, ow, c), [p], tiles, cpu, image=attrs.get("_planned"),
                                           x_image=attrs.get("_x_planned"),
                                           chained_parts=1 if parts > 1 else _pool_parts(cpu, attrs, p, True))
        return plan(xn)
    out = np.empty((n, oh, ow, c), F32)
    p = _pool_params(attrs, xn.shape, c)
    parts = _pool_parts(cpu, attrs, p)
    if parts > 1:
        _run_tiles(cpu, fn_name, [addr(p), addr(xn), addr(out)], _tiles(p, parts, False, 0), 1, 2, None, xn, out, ())
    else:
        getattr(backend, fn_name)(addr(p), addr(xn), addr(out))
    return out if nhwc else np.transpose(out, (0, 3, 1, 2))


def _pool_parts(cpu, attrs, p, chained: bool = False) -> int:
    kh, kw = attrs["window"]
    rows = int(p[0]) * int(p[4])
    return _parts(cpu, rows * int(p[5]) * int(p[3]) * kh * kw, rows, chained)


def max_pool2d(cpu, attrs, x):
    return _pool(cpu, "maxPool2d", "maxpool2d", attrs, x)


def average_pool2d(cpu, attrs, x):
    return _pool(cpu, "averagePool2d", "avgpool2d", attrs, x)


# ------------------------------------------------------------ elementwise --
def _clamp(cpu, name, x, lo, hi):
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, name)
    if x.dtype != F32:
        return cpu.decline(name, f"data type {x.dtype} (float32 only)")
    if x.size < SMALL_ELEMENTWISE:
        return cpu.decline(name, f"small ({x.size} elements)")
    xc = _c(x)
    y = np.empty(xc.shape, F32)
    backend.clamp(xc.size, addr(xc), addr(y), lo, hi)
    return y


def relu(cpu, attrs, x):
    return _clamp(cpu, "relu", x, 0.0, INF)


def clamp(cpu, attrs, x):
    lo = -INF if attrs["min"] is None else float(attrs["min"])
    hi = INF if attrs["max"] is None else float(attrs["max"])
    return _clamp(cpu, "clamp", x, lo, hi)


# ------------------------------------------------- pow, binary arithmetic --
# Work per element of a pow (float64 square roots) against MIN_TILE_WORK's multiply-adds.
POW_WORK_PER_ELEMENT = 16
BINARY_OPS = {"add": 0, "sub": 1, "mul": 2, "div": 3}


def _elementwise_tiles(cpu, n: int, work_per_element: int) -> list:
    """[(start, count)] ranges of n elements, multiples of 4 apart (SIMD lanes)."""
    parts = _parts(cpu, n * work_per_element, max(n // 4, 1))
    if parts <= 1:
        return [(0, n)]
    step = ((n + parts - 1) // parts + 3) // 4 * 4
    return [(i, min(step, n - i)) for i in range(0, n, step)]


def _run_elementwise(cpu, name, calls, x, y):
    """Ranges of one elementwise kernel call on the backend's threads (pool or native)."""
    pool = cpu.kernel_pool
    if pool is not None and len(calls) > 1:
        try:
            pool.run("wk_" + name, calls, ins=[x], outs=[y])
            return
        except PoolFull as e:
            cpu.decline(name, f"ran on one thread: {e}")
    cpu.run_calls(getattr(cpu.library, name), calls)


def pow_(cpu, attrs, a, b):
    """a ** b for a constant-like scalar exponent b that is a multiple of 1/4
    (LRN's 0.75, squares, square roots): wk_powq, float64 inside as the reference."""
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, "pow")
    if a.dtype != F32 or b.dtype != F32:
        return cpu.decline("pow", f"data type {a.dtype} (float32 only)")
    if b.size != 1:
        return cpu.decline("pow", "the exponent is not a scalar")
    e = float(b.reshape(-1)[0])
    q = e * 4
    if not (q == int(q) and 0 < abs(q) <= 16):
        return cpu.decline("pow", f"exponent {e} is not a non-zero multiple of 1/4 up to 4")
    if a.size < SMALL_ELEMENTWISE:
        return cpu.decline("pow", f"small ({a.size} elements)")
    x = _c(a)
    y = np.empty(np.broadcast_shapes(a.shape, b.shape), F32)
    n, q = x.size, int(q)
    ax, ay = addr(x), addr(y)
    calls = [[c, ax + 4 * i, ay + 4 * i, q] for i, c in _elementwise_tiles(cpu, n, POW_WORK_PER_ELEMENT)]
    _run_elementwise(cpu, "powq", calls, x, y)
    return y


def _binary(cpu, name, a, b):
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, name)
    if a.dtype != F32 or b.dtype != F32:
        return cpu.decline(name, f"data type {a.dtype} (float32 only)")
    if a.size < SMALL_ELEMENTWISE and b.size < SMALL_ELEMENTWISE:
        return cpu.decline(name, f"small ({max(a.size, b.size)} elements)")
    if a.shape == b.shape:
        sa = sb = 1
    elif b.size == 1:
        sa, sb = 1, 0
    elif a.size == 1:
        sa, sb = 0, 1
    else:
        return cpu.decline(name, f"broadcast {a.shape} with {b.shape} (same shapes or a scalar only)")
    shape = np.broadcast_shapes(a.shape, b.shape)
    n = math.prod(shape)
    a, b = _c(a), _c(b)
    y = np.empty(shape, F32)
    backend.binary(BINARY_OPS[name], n, addr(a), sa, addr(b), sb, addr(y))
    return y


def add(cpu, attrs, a, b):
    return _binary(cpu, "add", a, b)


def sub(cpu, attrs, a, b):
    return _binary(cpu, "sub", a, b)


def mul(cpu, attrs, a, b):
    return _binary(cpu, "mul", a, b)


def div(cpu, attrs, a, b):
    return _binary(cpu, "div", a, b)


# -------------------------------------------------------------- transpose --
NCHW_TO_NHWC, NHWC_TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


def transpose(cpu, attrs, x):
    """NCHW <-> NHWC of a float32 value (the layout pass's transposes at the edges of
    NHWC chains): one wk_transpose copy (4x4 SIMD blocks) into a contiguous array, for
    the kernel or the graph output that reads it, instead of numpy's copy of the
    strided view later (Pyodide: 1x3x224x224 0.29 -> 0.05 ms, 1x28x28x136 to NCHW
    0.065 -> 0.03 ms). Other permutations stay numpy views."""
    backend = cpu.library
    plan = attrs.get("_plan")
    if plan is not None and plan.backend is backend:
        return plan(x)
    perm = attrs["perm"]
    if perm != NCHW_TO_NHWC and perm != NHWC_TO_NCHW:
        return None
    if backend is None:
        return _no_library(cpu, "transpose")
    if x.dtype != F32 or x.size < SMALL_ELEMENTWISE:
        return cpu.decline("transpose", "not a float32 layout transpose of >= 4096 elements")
    xc = _c(x)
    n, a, b, c = xc.shape
    if perm == NCHW_TO_NHWC:  # each image: C x HW -> HW x C
        shape, dims = (n, b, c, a), (n, a, b * c)
    else:  # each image: HW x C -> C x HW
        shape, dims = (n, c, a, b), (n, a * b, c)
    if "_out" in attrs or "_x" in attrs:
        # compiled (compile.plan_buffers): a call plan, which the kernel pool may run
        plan = attrs["_plan"] = _move_plan(cpu, "transpose", dims, attrs, shape)
        return plan(xc)
    y = np.empty(shape, F32)
    backend.transpose(*dims, addr(xc), addr(y))
    return y


def _move_plan(cpu, name, dims, attrs, out_shape) -> _Plan:
    """The call plan of a compiled layout move (transpose, channel shuffle: kernel
    `name`, arguments dims + (x, y)) into its planned buffer `_out` (None: a new
    array each call). On a kernel pool it runs there as one tile whenever its input
    is an image or pool kernels read its output, so that a chain of NHWC kernels
    between an NCHW graph's transposes, through ShuffleNet's channel shuffles, stays
    in the shared memory (one copy in at the head, one out at the end)."""
    one = [_Tile(None, 0, 0, None)]
    k = len(dims)
    return _make_plan(cpu.library, name, [*dims, 0, 0], k, attrs.get("_x"), attrs.get("_out"), k + 1, out_shape, [],
                      None, cpu, image=attrs.get("_planned"), x_image=attrs.get("_x_planned"),
                      make_tiles=lambda parts: one, head=True)


# -------------------------------------------------------- channel shuffle --
def channel_shuffle(cpu, attrs, x):
    """compile.py's channelShuffle step (a reshape/transpose chain): wk_shuffle,
    one pass, instead of numpy's copy of a view whose inner axis is g long."""
    backend = cpu.library
    plan = attrs.get("_plan")
    if plan is not None and plan.backend is backend:
        return plan(x)
    if backend is None:
        return _no_library(cpu, "channelShuffle")
    g = attrs["groups"]
    if x.dtype != F32 or g == 1 or x.size < SMALL_SHUFFLE:
        return cpu.decline("channelShuffle", f"not a float32 shuffle of >= {SMALL_SHUFFLE} elements")
    xc = _c(x)
    c = xc.shape[-1]
    dims = (xc.size // c, g, c // g)
    if "_out" in attrs or "_x" in attrs:  # compiled: a call plan (see _move_plan)
        plan = attrs["_plan"] = _move_plan(cpu, "shuffle", dims, attrs, tuple(attrs["shape"]))
        return plan(xc)
    y = np.empty(attrs["shape"], F32)
    backend.shuffle(*dims, addr(xc), addr(y))
    return y


# -------------------------------------------------------- channel average --
def channel_average(cpu, attrs, x):
    """compile.py's channelAverage step (LRN's pad -> transpose -> averagePool2d ->
    transpose): wk_chanavg, one pass over the channels of each pixel, float64 sums
    in the reference's order."""
    backend = cpu.library
    if backend is None:
        return _no_library(cpu, "channelAverage")
    if x.dtype != F32:
        return cpu.decline("channelAverage", f"data type {x.dtype} (float32 only)")
    xc = _c(x)
    n, h, w, c = xc.shape
    k, p0 = attrs["k"], attrs["p0"]
    co = attrs["_steps"][-1].outputs[0].shape[3]
    y = np.empty((n, h, w, co), F32)
    backend.chanavg(n * h * w, c, co, k, p0, addr(xc), addr(y))
    return y


# ----------------------------------------------------------------- concat --
def concat(cpu, attrs, *xs):
    """A concat whose producers (compiled convolutions) already wrote their
    results into its buffer: copy in only what is not there yet."""
    spec = attrs.get("_inplace")
    if spec is None:
        return None  # an ordinary concat: numpy
    buf, views = spec
    for x, view in zip(xs, views):
        if x is not view:  # not written in place (a numpy producer, or another operand)
            view[...] = x
    planned = attrs.get("_planned")
    if planned is not None:
        pool = cpu.kernel_pool
        if pool is not None:
            if planned.slices:  # every slice written by a pool kernel: into the pool's image
                pool.finish_concat(planned)
            else:  # written here, in numpy: an image a reader made earlier is stale
                pool.drop(buf)
    return buf


# op name -> fast path (the cpu backend's table; conv2d+relu/clamp exist only in compiled plans)
FAST_PATHS = {
    "conv2d": conv2d,
    "conv2d+relu": conv2d_fused,
    "conv2d+clamp": conv2d_fused,
    "matmul": matmul,
    "gemm": gemm,
    "maxPool2d": max_pool2d,
    "averagePool2d": average_pool2d,
    "relu": relu,
    "clamp": clamp,
    "concat": concat,
    "channelShuffle": channel_shuffle,
    "channelAverage": channel_average,
    "transpose": transpose,
    "pow": pow_,
    "add": add,
    "sub": sub,
    "mul": mul,
    "div": div,
}
