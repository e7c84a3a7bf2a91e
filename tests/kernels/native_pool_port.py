"""A stand-in for js/src/kernel_pool.js in CPython: the port of a kernel pool
(webnn_core.backends.cpu.fast.shared) over a block of this process's memory
that plays the shared WebAssembly.Memory (pool addresses are offsets into it),
whose jobs run on the native kernels: the tiles of a job are taken from one
counter by the calling thread and threads - 1 helper threads, like the
browser's workers take them from the atomic tile counter."""
import ctypes
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from webnn_core.backends.cpu.fast.library import SIGNATURES, NativeBackend
from webnn_core.backends.cpu.fast.shared import KERNEL_NAMES


class NativePoolPort:
    def __init__(self, lib_path, threads: int, capacity: int = 256 << 20):
        self.lib = NativeBackend(lib_path)
        self.threads = threads
        self.memory = np.zeros(capacity, np.uint8)  # "shared memory": never moves
        self.base = self.memory.__array_interface__["data"][0]
        self._size = min(capacity, 1 << 20)
        self.helpers = ThreadPoolExecutor(max(1, threads - 1))
        self.tiles_by_thread: dict = {}

    def size(self) -> int:
        return self._size

    def grow(self, nbytes: int) -> None:
        if nbytes > self.memory.nbytes:
            raise MemoryError(f"the stand-in shared memory holds {self.memory.nbytes} bytes")
        self._size = min(self.memory.nbytes, -(-nbytes // 65536) * 65536)

    def _check(self, a, n):
        assert 0 <= a and a + n <= self._size, (a, n, self._size)

    def put(self, dst, src, nbytes):
        self._check(dst, nbytes)
        ctypes.memmove(self.base + dst, src, nbytes)

    def get(self, src, dst, nbytes):
        self._check(src, nbytes)
        ctypes.memmove(dst, self.base + src, nbytes)

    def run(self, fn_index, nargs, ntiles, table):
        words = np.ctypeslib.as_array((ctypes.c_int32 * (ntiles * nargs)).from_address(table)).reshape(ntiles, nargs)
        floats = words.view(np.float32)
        name = KERNEL_NAMES[fn_index]
        fn = getattr(self.lib, name[3:])
        calls = []
        for t in range(ntiles):
            args = []
            for k, kind in enumerate(SIGNATURES[name]):
                if kind == "f":
                    args.append(float(floats[t, k]))
                elif kind == "p" and words[t, k]:
                    self._check(int(words[t, k]), 1)
                    args.append(self.base + int(words[t, k]))
                else:
                    args.append(int(words[t, k]))
            calls.append(args)
        lock = threading.Lock()
        next_tile = [0]

        def take(who):
            while True:
                with lock:
                    t = next_tile[0]
                    next_tile[0] += 1
                if t >= ntiles:
                    return
                self.tiles_by_thread[who] = self.tiles_by_thread.get(who, 0) + 1
                fn(*calls[t])

        futures = [self.helpers.submit(take, f"helper{i}") for i in range(self.threads - 1)]
        take("caller")
        for f in futures:
            f.result()
