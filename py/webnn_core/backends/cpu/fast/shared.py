"""The kernel pool: tiles of one kernel call run on several threads that share
one memory (issue 17 item 2, docs/threads.md).

In the browser the kernels of `WasmBackend` work in place in Pyodide's
memory, which no worker can see (Pyodide 0.27 instantiates it unshared). When
the page is cross-origin isolated, js/src/kernel_pool.js starts a pool: one
`WebAssembly.Memory({shared: true})`, the threads build of the kernels
instantiated on it in the calling thread and in workers, and a job table the
threads take tiles from with an atomic counter. JS only runs the pool; this
module decides everything else:

  * the shared memory's allocator (`SharedHeap`: addresses are plain ints),
  * what lives there: packed weights, biases and parameter blocks stay
    resident for as long as their numpy array lives (copied once); im2col
    scratch is allocated once per tile;
  * activations: a kernel's output stays in shared memory, *owned by the
    pool*, as the image of the planned buffer (compile.py's `_out`) it was
    written for; when the next pool kernel of the chain reads that very
    buffer (conv -> conv -> pool, compile.py's `_x`), it reads the image and
    nothing is copied in; the image is freed after the last of the pool
    kernels that read it (compile.py's `_x_readers`: a squeeze conv read by
    two expand convs), so the shared memory holds the live activations, not
    all of them. The numpy
    buffer is still filled (one copy out per op) because numpy ops, concats
    and graph outputs read it. Each planned buffer object has one writer,
    which runs before its readers in every dispatch, so an image is never
    stale when read;
  * the tiles (fast/tiles.py) and each tile's arguments, relocated from numpy
    addresses to shared ones.

The port (the JS pool, or a stand-in over a native-memory buffer in tests) has:
  threads                         how many threads take tiles (callers' included)
  size()                          bytes of shared memory now
  grow(nbytes)                    make it at least nbytes (may raise)
  put(dst, src, nbytes)           copy nbytes from this process's memory at src to shared dst
  get(src, dst, nbytes)           the reverse
  run(fn_index, nargs, ntiles, table)   run a job: ntiles rows of nargs int32 words at `table`
                                  (this process's memory; f32 arguments as their bits), each
                                  row one call of kernel `fn_index` of `SIGNATURES` order
"""
from __future__ import annotations

import weakref
from bisect import bisect_right

import numpy as np

from .library import SIGNATURES

KERNEL_NAMES = list(SIGNATURES)
RESERVED = 1 << 16  # bytes [0, 64 KiB) of the shared memory: the pool's control words and job table
ALIGN = 64


class PoolFull(Exception):
    """The shared memory cannot hold a job's arrays (it cannot grow further):
    nothing ran; the caller runs the call on one thread instead."""


def addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def extent(a: np.ndarray) -> int:
    """Bytes from a's first element to just past its last (non-negative strides)."""
    if a.size == 0:
        return 0
    return int(sum((n - 1) * s for n, s in zip(a.shape, a.strides))) + a.itemsize


def _geometry(a: np.ndarray) -> tuple:
    """(a, numpy address, extent in bytes, C-contiguous): what a job needs to know of an array."""
    return a, addr(a), extent(a), a.flags.c_contiguous


class SharedHeap:
    """A size-class free-list allocator over [RESERVED, size) of the shared
    memory; the same sizes recur every dispatch, so blocks are reused."""

    def __init__(self, port):
        self.port = port
        self.top = RESERVED
        self.free_lists: dict = {}
        self.sizes: dict = {}  # address -> class size

    @staticmethod
    def _class(nbytes: int) -> int:
        return max(ALIGN, -(-nbytes // ALIGN) * ALIGN)

    def alloc(self, nbytes: int) -> int:
        size = self._class(nbytes)
        free = self.free_lists.get(size)
        if free:
            a = free.pop()
        else:
            a = self.top
            if a + size > self.port.size():
                self.port.grow(a + size)
            self.top = a + size
        self.sizes[a] = size
        return a

    def free(self, a: int) -> None:
        size = self.sizes.pop(a, None)
        if size is not None:
            self.free_lists.setdefault(size, []).append(a)

    def in_use(self) -> int:
        return sum(self.sizes.values())


class KernelPool:
    """The Python side of a kernel pool (see the module docstring)."""

    def __init__(self, port, fused_madd: bool, detail: str = "pool"):
        self.port = port
        self.threads = int(port.threads)
        self.fused_madd = bool(fused_madd)
        self.detail = detail
        self.heap = SharedHeap(port)
        self._resident: dict = {}  # id(array) -> shared address (copied once, freed with the array)
        self._images: dict = {}    # id(array) -> (shared address, nbytes): the pool's copy of an activation
        self._watched: set = set()  # ids of the planned buffers whose death frees their image
        self.jobs = 0
        self.copied_in = 0   # bytes of activations copied into shared memory
        self.reused = 0      # bytes of activations read where a previous kernel left them

    def describe(self) -> str:
        return f"{self.detail}, {self.threads} threads"

    # -- residency ---------------------------------------------------------------------
    def _forget(self, key, table):
        entry = table.pop(key, None)
        if entry is not None:
            self.heap.free(entry if isinstance(entry, int) else entry[0])

    def _forget_image(self, key):
        self._watched.discard(key)
        self._forget(key, self._images)

    def resident(self, a: np.ndarray, copy: bool = True) -> int:
        """The shared address of a constant array (packed weights, a parameter
        block; `copy=False`: scratch), copied once and freed when `a` dies."""
        key = id(a)
        s = self._resident.get(key)
        if s is None:
            s = self.heap.alloc(max(a.nbytes, 1))
            if copy and a.nbytes:
                self.port.put(s, addr(a), a.nbytes)
            self._resident[key] = s
            weakref.finalize(a, self._forget, key, self._resident)
        return s

    def _take_image(self, a: np.ndarray, nbytes: int):
        """(shared address, whether the caller frees it after the job) of the copy
        the pool kept of planned buffer `a`, or None. The image stays for the readers
        its writer announced (compile.py's `_x_readers`) and goes to the last one."""
        key = id(a)
        entry = self._images.get(key)
        if entry is None:
            return None
        if entry[1] != nbytes:
            self._forget(key, self._images)
            return None
        entry[2] -= 1
        if entry[2] > 0:
            return entry[0], False
        del self._images[key]
        return entry[0], True

    # -- jobs --------------------------------------------------------------------------
    def run(self, name: str, calls, consts=(), ins=(), outs=(), scratch=(), chained=None, keep_image=0,
            cache=None):
        """Run `calls` (argument lists with numpy addresses, one per tile; or a
        function returning them, called only when a job table must be built) as
        one job. Each pointer argument lies in one of the arrays named: `consts`
        (resident), `ins` (read; copied in), `outs` (written; copied back into
        the numpy array after the job), `scratch` (per-tile, resident, never
        copied). `chained`: an input that is the planned output buffer of the
        kernel before it in a compiled chain (compile.py's `_x`): when the pool
        holds its image, it is read there and not copied. `keep_image` (a count):
        the outputs are planned buffers (compile.py's `_out`) that this many pool
        kernels of the chain read next; keep their shared copies as their images
        until the last of them has read it. An item of `ins`/`outs` may be
        (array, numpy address, extent in bytes, C-contiguous) when the caller knows
        them (each numpy attribute lookup costs microseconds in Pyodide). `cache`: a dict the
        caller keeps with the call (a compiled plan, whose constants, scratch and
        tile arguments do not change): where the constants and scratch lie, and
        job tables already relocated, by where the inputs and outputs lie in
        shared memory this time (the heap hands out the same blocks dispatch
        after dispatch, so the table is built once, wherever numpy put a
        per-call array). With a cache, a job costs no per-tile Python work (each
        numpy address lookup costs microseconds in Pyodide)."""
        ranges = []  # (numpy start, numpy end, shared start)
        temps = []
        out_images = []
        try:
            if cache is not None:
                if cache.get("pool") is not self:  # made for another pool (tests re-attach)
                    cache.clear()
                    cache["pool"] = self
                fixed = cache.get("fixed")
                if fixed is None:
                    fixed = cache["fixed"] = self._stage_fixed(consts, scratch)
            else:
                fixed = self._stage_fixed(consts, scratch)
            self._stage(ranges, temps, out_images, ins, outs, chained)
        except Exception as e:  # noqa: BLE001 - the shared memory is full (or would be)
            for s in temps + [o[1] for o in out_images]:
                self.heap.free(s)
            for a in outs:  # written on one thread now: an image of an earlier dispatch is stale
                self._forget(id(a[0] if type(a) is tuple else a), self._images)
            raise PoolFull(f"the kernel pool's memory is full: {e}") from e
        try:
            # Keyed only by where the inputs and outputs lie in *shared* memory: a
            # relocated pointer is (shared start + offset into its array), and a plan's
            # offsets are fixed, while the numpy address of a per-call output
            # (np.empty) or input may differ from dispatch to dispatch (malloc).
            key = tuple((r[2], r[1] - r[0]) for r in ranges)
            job = cache.get(key) if cache is not None else None
            if job is None:
                table = self._table(name, calls() if callable(calls) else calls, fixed + ranges)
                job = (KERNEL_NAMES.index(name), table.shape[1], table.shape[0], addr(table), table)
                if cache is not None:
                    if len(cache) > 6:  # "pool", "fixed" and up to 4 placements
                        cache.clear()
                        cache["pool"], cache["fixed"] = self, fixed
                    cache[key] = job
            self.port.run(job[0], job[1], job[2], job[3])
            self.jobs += 1
        except BaseException:
            for s in temps + [o[1] for o in out_images]:
                self.heap.free(s)
            raise
        for s in temps:
            self.heap.free(s)
        for a, s, n, at in out_images:
            self.port.get(s, at, n)
            if not keep_image:
                self.heap.free(s)
                continue
            # The shared copy stays the planned buffer's image: in a dispatch the
            # kernel that owns the buffer writes it before its consumers read it.
            key = id(a)
            old = self._images.get(key)
            if old is not None:
                self.heap.free(old[0])
            if key not in self._watched:  # one finalizer per buffer, not one per dispatch
                self._watched.add(key)
                weakref.finalize(a, self._forget_image, key)
            self._images[key] = [s, n, keep_image]  # address, bytes, reads left

    def _stage_fixed(self, consts, scratch) -> list:
        """The (numpy start, numpy end, shared start) ranges of a job's resident arrays."""
        ranges = []
        for a in consts:
            if a is not None:
                ranges.append((addr(a), addr(a) + max(a.nbytes, 1), self.resident(a)))
        for a in scratch:
            if a is not None:
                ranges.append((addr(a), addr(a) + max(a.nbytes, 1), self.resident(a, copy=False)))
        return ranges

    def _stage(self, ranges, temps, out_images, ins, outs, chained):
        """Give every input and output of a job its place in shared memory (copying in what must be)."""
        for a in ins:
            a, at, n, _ = a if type(a) is tuple else _geometry(a)
            image = self._take_image(a, n) if a is chained else None
            if image is None:
                s = self.heap.alloc(n)
                self.port.put(s, at, n)
                self.copied_in += n
                temps.append(s)
            else:
                s = image[0]
                if image[1]:
                    temps.append(s)
                self.reused += n
            ranges.append((at, at + n, s))
        for a in outs:
            a, at, n, contiguous = a if type(a) is tuple else _geometry(a)
            s = self.heap.alloc(n)
            if not contiguous:
                # a strided view (a channel slice of a concat): the kernel writes only
                # its channels, so the rest of the extent must hold the array's bytes
                self.port.put(s, at, n)
            ranges.append((at, at + n, s))
            out_images.append((a, s, n, at))

    def _table(self, name, calls, ranges):
        """The job table: one row of argument words per tile, pointers relocated into shared memory."""
        ranges = sorted(ranges)
        starts = [r[0] for r in ranges]
        sig = SIGNATURES[name]
        table = np.empty((len(calls), len(sig)), np.int32)
        ftable = table.view(np.float32)
        for t, args in enumerate(calls):
            for k, (kind, v) in enumerate(zip(sig, args)):
                if kind == "f":
                    ftable[t, k] = v
                elif kind == "p" and v:
                    i = bisect_right(starts, v) - 1
                    if i < 0 or v >= ranges[i][1]:
                        raise ValueError(f"{name}: argument {k} points outside the arrays handed to the pool")
                    table[t, k] = ranges[i][2] + (v - ranges[i][0])
                else:
                    table[t, k] = v
        return table

    def stats(self) -> dict:
        return {"threads": self.threads, "jobs": self.jobs, "sharedBytes": self.port.size(),
                "heapInUse": self.heap.in_use(), "copiedIn": self.copied_in, "reused": self.reused}
