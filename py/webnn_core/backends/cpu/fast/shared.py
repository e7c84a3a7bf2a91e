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
    written for; a pool kernel that reads that very buffer (compile.py's
    `_x`) reads the image and nothing is copied in; the image is freed after
    the last pool kernel that reads it (`Planned.readers`: a squeeze conv read
    by two expand convs), so the shared memory holds the live activations.
    When nothing but pool kernels reads a buffer (`Planned.numpy_readers`
    false: no numpy op, no graph output), its numpy array is never filled:
    the image is the value. A channel concat whose slices are all written by
    pool kernels (`Planned.slices`) has one image too: each producer writes
    its slice straight into it (nothing copied in), and the concat step
    (`finish_concat`) hands it to the readers, copying it out once only if a
    numpy op reads it. Each planned buffer's writers run before its readers
    in every dispatch, so an image is never stale when read; when a job falls
    back to one thread (`PoolFull`) the pool first copies out the images its
    numpy arrays lack (`sync`), so the fallback reads the right values;
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


class Planned:
    """What compile.py knows at build() about a planned buffer a pool kernel writes:
    `buf` the planned numpy array (a concat's whole buffer), `readers` how many
    compiled pool kernels read it, `numpy_readers` whether anything else does (a
    numpy op, a kernel outside the pool: then the image is copied out into `buf`),
    `slices` for a concat buffer whose every slice a compiled pool kernel writes,
    how many slices (0: not a concat image)."""

    __slots__ = ("buf", "readers", "numpy_readers", "slices", "at", "nbytes")

    def __init__(self, buf: np.ndarray, readers: int, numpy_readers: bool, slices: int = 0):
        self.buf = buf
        self.readers = int(readers)
        self.numpy_readers = bool(numpy_readers) or not readers
        self.slices = int(slices)
        self.at = addr(buf)
        self.nbytes = buf.nbytes


class _Image:
    """The pool's copy of a planned buffer: where, how big, reads left, whether the
    numpy array lacks it (`stale`), and for a concat image being filled, the
    slices written so far this dispatch (byte offset -> the numpy slice view)."""

    __slots__ = ("s", "n", "reads", "stale", "written")

    def __init__(self, s, n):
        self.s, self.n, self.reads, self.stale, self.written = s, n, 0, False, {}


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
        self._images: dict = {}    # id(planned buffer) -> _Image: the pool's copy of an activation
        self._watched: set = set()  # ids of the planned buffers whose death frees their image
        self.jobs = 0
        self.copied_in = 0   # bytes of activations copied into shared memory
        self.reused = 0      # bytes of activations read where a previous kernel left them
        self.copied_out = 0  # bytes of activations copied back into numpy arrays

    def describe(self) -> str:
        return f"{self.detail}, {self.threads} threads"

    # -- residency ---------------------------------------------------------------------
    def _forget(self, key, table):
        entry = table.pop(key, None)
        if entry is not None:
            self.heap.free(entry if isinstance(entry, int) else entry.s)

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

    # -- images ------------------------------------------------------------------------
    def holds(self, a: np.ndarray) -> bool:
        """Whether the pool has a readable image of planned buffer `a` (a kernel reading
        `a` then runs on the pool even when too small to split: nothing crosses)."""
        entry = self._images.get(id(a))
        return entry is not None and entry.reads > 0

    def sync(self, a: np.ndarray) -> None:
        """Fill planned buffer `a` from its image if its numpy array lacks it (a
        reader about to run outside the pool)."""
        entry = self._images.get(id(a))
        if entry is not None and entry.stale:
            self.port.get(entry.s, addr(a), entry.n)
            self.copied_out += entry.n
            entry.stale = False

    def drop(self, a: np.ndarray) -> None:
        """Planned buffer `a` is being written outside the pool: its image is stale."""
        if self._images:
            self._forget(id(a), self._images)

    def _image(self, key, a, nbytes) -> _Image:
        """The image entry of planned buffer `a` (id `key`), made or reused (same size:
        the same block, so job tables relocated for it stay valid)."""
        entry = self._images.get(key)
        if entry is not None and entry.n != nbytes:
            self._forget(key, self._images)
            entry = None
        if entry is None:
            entry = self._images[key] = _Image(self.heap.alloc(nbytes), nbytes)
            if key not in self._watched:  # one finalizer per buffer, not one per dispatch
                self._watched.add(key)
                weakref.finalize(a, self._forget_image, key)
        return entry

    def finish_concat(self, planned: Planned) -> None:
        """The concat step of a concat image (after all its producers ran): when every
        slice was written into the image this dispatch, the image is the value (copied
        out once if a numpy op reads it); otherwise (a producer fell back to one thread
        and wrote its numpy slice) the slices that are only in the image are copied
        into the numpy buffer and the image goes."""
        key = id(planned.buf)
        entry = self._images.get(key)
        if entry is None:
            return
        written, entry.written = entry.written, {}
        if len(written) == planned.slices:
            entry.reads = planned.readers
            entry.stale = True
            if planned.numpy_readers:
                self.sync(planned.buf)
            if not entry.reads:
                self._forget(key, self._images)
            return
        if written:
            whole = np.empty(planned.buf.shape, np.float32)
            self.port.get(entry.s, addr(whole), entry.n)
            self.copied_out += entry.n
            for off, view in written.items():
                c0 = off // 4
                view[...] = whole[..., c0:c0 + view.shape[3]]
        self._forget(key, self._images)

    # -- jobs --------------------------------------------------------------------------
    def run(self, name: str, calls, consts=(), ins=(), outs=(), scratch=(), chained=None, image=None,
            cache=None, x_image=None):
        """Run `calls` (argument lists with numpy addresses, one per tile; or a
        function returning them, called only when a job table must be built) as
        one job. Each pointer argument lies in one of the arrays named: `consts`
        (resident), `ins` (read; copied in), `outs` (written; copied back into
        the numpy array after the job), `scratch` (per-tile, resident, never
        copied). `chained`: an input that is a planned buffer (compile.py's `_x`):
        when the pool holds its image, it is read there and not copied. `image`
        (a `Planned`): the one output is that planned buffer (or a slice of its
        concat buffer): it is written into the buffer's image, kept for its
        readers, and copied out only if a numpy op reads it. An item of
        `ins`/`outs` may be (array, numpy address, extent in bytes, C-contiguous)
        when the caller knows them (each numpy attribute lookup costs microseconds
        in Pyodide). `cache`: a dict the caller keeps with the call (a compiled
        plan, whose constants, scratch and tile arguments do not change): where
        the constants and scratch lie, and job tables already relocated, by where
        the inputs and outputs lie in shared memory this time (the heap hands out
        the same blocks dispatch after dispatch, so the table is built once,
        wherever numpy put a per-call array). With a cache, a job costs no
        per-tile Python work."""
        ranges = []  # (numpy start, numpy end, shared start)
        temps = []
        out_copies = []
        taken = []
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
            out_image = self._stage(ranges, temps, out_copies, taken, ins, outs, chained, image, x_image)
        except Exception as e:  # noqa: BLE001 - the shared memory is full (or would be)
            for s in temps + [o[1] for o in out_copies]:
                self.heap.free(s)
            for a in ins:  # the caller reads the numpy arrays now: fill the ones that lack their image
                self.sync(a[0] if type(a) is tuple else a)
            if image is not None and not image.slices:
                # written on one thread now: an image of an earlier dispatch is stale
                self._forget(id(image.buf), self._images)
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
            for s in temps + [o[1] for o in out_copies]:
                self.heap.free(s)
            if image is not None:
                self._forget(id(image.buf), self._images)
            raise
        for key, entry, n in taken:  # read: one reader fewer; the last one frees the image
            entry.reads -= 1
            self.reused += n
            if entry.reads <= 0:
                self._forget(key, self._images)
        for s in temps:
            self.heap.free(s)
        for s, at, n in out_copies:
            self.port.get(s, at, n)
            self.copied_out += n
            self.heap.free(s)
        if out_image is not None:
            entry, off, view = out_image
            if image.slices:
                entry.written[off] = view
            else:
                entry.reads = image.readers
                entry.stale = True
                if image.numpy_readers:
                    self.sync(image.buf)
                if not entry.reads:
                    self._forget(id(image.buf), self._images)

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

    def _stage(self, ranges, temps, out_copies, taken, ins, outs, chained, image, x_image):
        """Give every input and output of a job its place in shared memory (copying in
        what must be). Returns (image entry, byte offset in it, output view) when the
        output goes into an image."""
        for a in ins:
            a, at, n, _ = a if type(a) is tuple else _geometry(a)
            entry = self._images.get(id(a)) if a is chained else None
            if entry is not None and entry.reads > 0 and entry.n == n:
                s = entry.s
                taken.append((id(a), entry, n))  # counted once the job ran
            else:
                if entry is not None:  # (never when a planned buffer's readers are counted right)
                    self.sync(a)
                if a is chained and x_image is not None and x_image.readers > 1 and x_image.nbytes == n:
                    # written outside the pool (one thread): the copy stays the image for
                    # the other pool kernels that read the buffer
                    entry = self._image(id(a), a, n)
                    entry.reads, entry.stale, s = x_image.readers, False, entry.s
                    taken.append((id(a), entry, 0))
                else:
                    s = self.heap.alloc(n)
                    temps.append(s)
                self.port.put(s, at, n)
                self.copied_in += n
            ranges.append((at, at + n, s))
        out_image = None
        for a in outs:
            a, at, n, contiguous = a if type(a) is tuple else _geometry(a)
            if image is not None:
                entry = self._image(id(image.buf), image.buf, image.nbytes)
                off = at - image.at
                if image.slices:
                    if off in entry.written:  # a dispatch that did not reach its concat step
                        entry.written = {}
                    entry.reads = 0  # being written: readable after the concat step
                else:
                    entry.reads = 0
                ranges.append((at, at + n, entry.s + off))
                out_image = (entry, off, a)
                continue
            s = self.heap.alloc(n)
            if not contiguous:
                # a strided view (a channel slice of a concat): the kernel writes only
                # its channels, so the rest of the extent must hold the array's bytes
                self.port.put(s, at, n)
                self.copied_in += n
            ranges.append((at, at + n, s))
            out_copies.append((s, at, n))
        return out_image

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
                "heapInUse": self.heap.in_use(), "copiedIn": self.copied_in, "reused": self.reused,
                "copiedOut": self.copied_out, "port": self._port_stats()}

    def _port_stats(self):
        """The port's own counters (js/src/kernel_pool.js: tiles the caller and the
        workers took, wake-ups, workers asleep now), or None (a port without them)."""
        fn = getattr(self.port, "stats", None)
        if fn is None:
            return None
        s = fn()
        to_py = getattr(s, "to_py", None)  # a JS object in Pyodide
        return dict(to_py() if to_py is not None else s)
