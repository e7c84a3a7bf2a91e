"""The cpu backend: numpy reference kernels plus the SIMD microkernels
(`fast/`), with every switch and cache owned by one backend instance.

Each node runs its op's numpy reference kernel unless a fast path of
`FAST_PATHS` (fast/paths.py, fast/exact64.py) accepts the call. A fast path returns None to decline
(dtype, shape, no kernel library), and the numpy kernel runs instead.

Per backend (so per context) state:
  fast_paths        on/off (`CpuBackend(fast_paths=False)`; in the browser
                    the polyfill config `fastPaths: false`, the page query
                    `?fastpaths=0`, or engineStats.kernels.setFastPaths(ctx, on))
  fallback_reasons  op name -> why its fast path last declined
  profiling         `set_profiling(True)` makes every node accumulate, per op
                    name, calls, fast calls and wall time (`profile()`)
  a scratch buffer for im2col (kernels of one backend run one at a time)
  threads           kernel threads (`CpuBackend(threads=N)`, backend option
                    `threads`): big conv/depthwise/GEMM/pool calls are split
                    into output tiles (fast/tiles.py) run on this backend's
                    pool, the calling thread taking a share; only with a
                    library that allows concurrent calls (the native build),
                    else one thread and `status()["threadsReason"]` says why

The microkernel *library* (the wasm module or the native build) is loaded
code, attached once per process (`fast.attach_wasm` / `fast.attach_native`);
a backend reads it, or takes its own (`CpuBackend(library=...)`).
"""
from __future__ import annotations

import time

import numpy as np

from ...dtypes import numpy_dtype, zeros
from ..base import Backend
from . import fast
from .compile import compile_nodes
from .fast.pack import F32
from .fast.direct import DIRECT_PATHS
from .fast.exact64 import EXACT64_PATHS
from .fast.paths import FAST_PATHS as _KERNEL_PATHS, SMALL_ELEMENTWISE
from .reference import Step, coerce, coerce_to

_PROCESS_LIBRARY = object()  # sentinel: use the library attached to this process


def _kernel_then_direct(kernel, direct):
    """A binary op with both a SIMD kernel and a direct numpy path: large operands
    try the kernel (one pass, no temporaries), the rest and what it declines run
    the reference's numpy call. Both compute the same float32 operation per element."""
    def path(cpu, attrs, a, b):
        if a.size >= SMALL_ELEMENTWISE or b.size >= SMALL_ELEMENTWISE:
            y = kernel(cpu, attrs, a, b)
            if y is not None:
                return y
        return direct(cpu, attrs, a, b)
    return path


# op name -> fast path: the SIMD kernels (fast/paths.py), the float64-exact ones (fast/exact64.py)
# and float32 binary ops as their reference's numpy call (fast/direct.py).
FAST_PATHS = {**_KERNEL_PATHS, **EXACT64_PATHS, **DIRECT_PATHS}
FAST_PATHS.update({name: _kernel_then_direct(_KERNEL_PATHS[name], DIRECT_PATHS[name])
                   for name in _KERNEL_PATHS.keys() & DIRECT_PATHS.keys()})


# A batched matmul whose per-batch GEMM is below this many multiply-adds runs on
# numpy: the fast path packs B and crosses into the kernel once per batch, which
# costs more than numpy's whole batched matmul at these sizes (attention scores
# of a 16-token transformer block, 4 x 16x16x16: ~0.2 ms vs ~0.01 ms in Pyodide).
SMALL_BATCHED_GEMM = 32 * 32 * 32


def _fast_path(step):
    """The fast path a step tries first, or None (numpy only)."""
    name = step.op.name
    if name == "matmul" and len(step.outputs) == 1 and len(step.outputs[0].shape) > 2:
        a, b = step.inputs[0].shape, step.inputs[1].shape
        if len(a) >= 2 and len(b) >= 2 and a[-2] * a[-1] * b[-1] < SMALL_BATCHED_GEMM:
            return None
    return FAST_PATHS.get(name)


class CpuPlan:
    """What `CpuBackend.plan` makes of a graph: the steps to run (`nodes`:
    one per graph node, or fewer once compilation fused some), constant
    values, input and output operands, and which values to free after each
    step so that peak memory stays low.

    Dispatch runs `program`, resolved once here so that a run does no
    per-node lookups: values live in a list (`env_template`: slot 0 is None,
    for absent optional operands, then the constants, the inputs and every
    step's outputs), and each step is (step, kernel, fast path, input slots,
    output slots, [(dtype, shape)] of its outputs, slots to free after it)."""

    __slots__ = ("nodes", "constants", "inputs", "outputs", "release_after", "compiled",
                 "program", "env_template", "input_slots", "output_slots")

    def __init__(self, nodes, constants, inputs, outputs, compiled):
        self.nodes = nodes
        self.constants = constants
        self.inputs = inputs
        self.outputs = outputs
        self.compiled = compiled
        last_use: dict[int, int] = {}
        for i, node in enumerate(nodes):
            for inp in node.inputs:
                if inp is not None:
                    last_use[inp.id] = i
        keep = {o.id for o in outputs.values()}
        self.release_after = [[] for _ in nodes]
        for oid, i in last_use.items():
            if oid not in keep and oid not in constants:
                self.release_after[i].append(oid)
        self._resolve()

    def _resolve(self) -> None:
        env = [None]
        slot_of: dict = {}

        def slot(oid) -> int:
            s = slot_of.get(oid)
            if s is None:
                s = slot_of[oid] = len(env)
                env.append(None)
            return s

        for oid, value in self.constants.items():
            env[slot(oid)] = value
        self.input_slots = tuple((name, slot(o.id)) for name, o in self.inputs.items())
        program = []
        for node, release in zip(self.nodes, self.release_after):
            ins = tuple(0 if o is None else slot(o.id) for o in node.inputs)
            outs = tuple(slot(o.id) for o in node.outputs)
            want = tuple((numpy_dtype(o.dtype), tuple(o.shape)) for o in node.outputs)
            program.append((node, node.op.compute, _fast_path(node), ins, outs, want,
                            tuple(slot_of[oid] for oid in release)))
        self.output_slots = tuple((name, slot(o.id)) for name, o in self.outputs.items())
        self.program = program
        self.env_template = env


class CpuBackend(Backend):
    name = "cpu"
    # Every convolution and pool kernel (numpy reference and SIMD) is NHWC, yet the
    # context reports NCHW: the layout pass (compile.py) moves NCHW conv/pool chains
    # to NHWC once, so an NCHW graph pays a transpose at the graph's edges only, and
    # a client that follows this field must not be steered into a path that gives it
    # wrong answers. ONNX Runtime Web 1.22 builds NHWC graphs when this says "nhwc"
    # (webnn_execution_provider.cc:46 at v1.22.0), and its NHWC translation is wrong
    # for opset < 13 Softmax after a conv (SqueezeNet: every probability 1.0) and for
    # com.ms.internal.nhwc FusedConv / BatchNormalization (docs/clients.md, "Which
    # layout the polyfill reports"; docs/performance.md has both layouts' latency).
    preferred_input_layout = "nchw"

    def __init__(self, fast_paths: bool = True, library=_PROCESS_LIBRARY, layout_pass: bool = True,
                 threads: int = 1, pool=_PROCESS_LIBRARY):
        self.fast_paths = bool(fast_paths)
        self.threads = max(1, int(threads))
        self._kernel_pool = pool  # a fast.shared.KernelPool, or the one attached to this process
        self._pool = None  # a ThreadPoolExecutor of threads - 1 workers, made on first use
        self.layout_pass = bool(layout_pass)  # NCHW conv/pool chains -> NHWC at build() (with fast paths)
        self._library = library
        self.profiling = False
        self._profile: dict = {}  # op name -> [calls, fast calls, seconds]
        self.fallback_reasons: dict = {}
        self._scratch = np.empty(0, F32)

    # -- the microkernel library ---------------------------------------------------
    @property
    def library(self):
        """The kernel library this backend calls, or None (numpy only)."""
        return fast.library() if self._library is _PROCESS_LIBRARY else self._library

    def library_reason(self) -> str:
        if self._library is _PROCESS_LIBRARY:
            return fast.status()["reason"] or "no kernel library"
        return "no kernel library given to this backend"

    def status(self) -> dict:
        lib = self.library
        threads = self.kernel_threads()
        why = self.threads_reason()
        pool = self.kernel_pool
        return {"pool": pool.stats() if pool is not None else None,"backend": lib.kind if lib else None, "detail": lib.describe() if lib else None,
                "reason": None if lib else self.library_reason(), "enabled": self.fast_paths,
                "threadsRequested": self.threads, "threads": threads, "threadsReason": why}

    # -- threads -----------------------------------------------------------------------
    def _usable_pool(self):
        """The kernel pool (shared memory, workers) this backend's splits run on, if any:
        it must run the same build of the kernels (fused multiply-adds or not) as the
        library, so that N threads give the one-thread result bit for bit."""
        pool = fast.pool() if self._kernel_pool is _PROCESS_LIBRARY else self._kernel_pool
        lib = self.library
        if pool is None or lib is None or pool.threads <= 1 or pool.fused_madd != lib.fused_madd:
            return None
        return pool

    @property
    def kernel_pool(self):
        """The kernel pool that runs this backend's split calls, or None (the
        native library's thread pool, or no split)."""
        return self._usable_pool() if self.threads > 1 else None

    def kernel_threads(self) -> int:
        """How many threads run this backend's kernel calls (1: no split)."""
        lib = self.library
        if self.threads <= 1 or lib is None:
            return 1
        pool = self._usable_pool()
        if pool is not None:
            return min(self.threads, pool.threads)
        if not getattr(lib, "concurrent", False):
            return 1
        return self.threads

    def threads_reason(self):
        """Why fewer kernel threads run than were asked for (None: as many as asked)."""
        threads = self.kernel_threads()
        if threads >= self.threads:
            return None
        lib = self.library
        if lib is None:
            return "no kernel library"
        pool = self._usable_pool()
        if pool is not None:
            return f"the kernel pool has {pool.threads} threads"
        if self._kernel_pool is _PROCESS_LIBRARY and fast.pool_reason():
            return fast.pool_reason()
        return lib.why_single

    def run_calls(self, fn, calls: list) -> None:
        """fn(*args) for every args in `calls` (disjoint output tiles), on this
        backend's pool; the calling thread runs the first share itself."""
        if len(calls) == 1 or self.kernel_threads() <= 1:
            for args in calls:
                fn(*args)
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(self.threads - 1, thread_name_prefix="webnn-kernels")
        futures = [self._pool.submit(fn, *args) for args in calls[1:]]
        fn(*calls[0])
        for f in futures:
            f.result()

    def close(self) -> None:
        """Stop the thread pool (the context is destroyed)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None

    def decline(self, op_name: str, reason: str):
        """Record why a fast path declined a call; returns None for `return cpu.decline(...)`."""
        self.fallback_reasons[op_name] = reason
        return None

    def scratch(self, nfloats: int) -> np.ndarray:
        """This backend's im2col scratch, at least `nfloats` long."""
        if self._scratch.size < nfloats:
            self._scratch = np.empty(max(nfloats, 2 * self._scratch.size), F32)
        return self._scratch

    # -- switches --------------------------------------------------------------------
    def set_fast_paths(self, enabled: bool) -> None:
        """Graphs are compiled at build(): build after switching."""
        self.fast_paths = bool(enabled)

    def set_profiling(self, enabled: bool) -> None:
        self.profiling = bool(enabled)

    def reset_profile(self) -> None:
        self._profile.clear()

    def profile(self) -> dict:
        """{op name: {"calls", "fast_calls", "ms"}} accumulated since the last reset."""
        return {name: {"calls": c, "fast_calls": f, "ms": s * 1e3} for name, (c, f, s) in self._profile.items()}

    def profile_table(self, top: int | None = None) -> str:
        """The profile as a text table, slowest op first."""
        rows = sorted(self.profile().items(), key=lambda kv: -kv[1]["ms"])[:top]
        total = sum(r["ms"] for _, r in rows) or 1.0
        lines = [f"{'op':<24}{'calls':>7}{'fast':>7}{'ms':>10}{'%':>7}"]
        for name, r in rows:
            lines.append(f"{name:<24}{r['calls']:>7}{r['fast_calls']:>7}{r['ms']:>10.2f}{100 * r['ms'] / total:>7.1f}")
        return "\n".join(lines)

    # -- the interface -----------------------------------------------------------------
    def supports(self, op) -> bool:
        return True  # every registered op has its numpy reference kernel

    def plan(self, graph) -> CpuPlan:
        # Each node's kernel parameters are derived from its spec attributes here,
        # once; they and everything compilation adds live in the plan's steps.
        steps = [Step.of(node) for node in graph.nodes]
        compiled = False
        if self.fast_paths and self.library is not None:
            compiled_steps = compile_nodes(self, steps, list(graph.outputs.values()))
            compiled, steps = compiled_steps is not steps, compiled_steps
        return CpuPlan(steps, graph.constants, graph.inputs, graph.outputs, compiled)

    def allocate(self, dtype: str, shape: tuple) -> np.ndarray:
        return zeros(dtype, shape)

    def write(self, storage, array: np.ndarray) -> np.ndarray:
        # A new array rather than writing in place: a snapshot handed out
        # earlier (or a graph output aliasing it) must not change.
        return array

    def read(self, storage) -> np.ndarray:
        return storage

    def dispatch(self, plan: CpuPlan, inputs: dict, outputs: dict) -> dict:
        results = self.execute(plan, inputs)
        # No copy: a result may be a view of an input or a constant, which is
        # safe because no tensor array is ever written in place (write() and
        # dispatch() replace arrays), and graph outputs are never in the plan's
        # reused buffers (compile.plan_buffers pins every buffer they alias).
        return {name: results[name] for name in outputs}

    def execute(self, plan: CpuPlan, feeds: dict) -> dict:
        """Run the plan. `feeds` maps input names to arrays of the right dtype
        and shape; returns output name -> array (fresh or shared)."""
        if self.profiling:
            return self._execute_profiled(plan, feeds)
        env = plan.env_template.copy()
        for name, s in plan.input_slots:
            env[s] = feeds[name]
        fast_paths = self.fast_paths
        with np.errstate(all="ignore"):  # once per run (fast/direct.py); ops set their own too
            for node, compute, fast_path, ins, outs, want, release in plan.program:
                args = [env[i] for i in ins]
                result = None
                if fast_paths and fast_path is not None:
                    result = fast_path(self, node.attrs, *args)
                if result is None:
                    result = compute(node.attrs, *args)
                if type(result) is np.ndarray and len(outs) == 1:
                    dtype, shape = want[0]
                    # coerce()'s checks, inline: most kernels return the exact array.
                    if result.dtype != dtype or result.shape != shape:
                        result = coerce_to(result, dtype, shape)
                    env[outs[0]] = result
                else:
                    if not isinstance(result, (list, tuple)):
                        result = [result]
                    for s, value, (dtype, shape) in zip(outs, result, want):
                        env[s] = coerce_to(value, dtype, shape)
                for s in release:
                    env[s] = None
        return {name: env[s] for name, s in plan.output_slots}

    def _execute_profiled(self, plan: CpuPlan, feeds: dict) -> dict:
        env = dict(plan.constants)
        for name, operand in plan.inputs.items():
            env[operand.id] = feeds[name]
        for i, node in enumerate(plan.nodes):
            args = [None if o is None else env[o.id] for o in node.inputs]
            results = self.run_node_profiled(node, args)
            for operand, value in zip(node.outputs, results):
                env[operand.id] = value
            for oid in plan.release_after[i]:
                env.pop(oid, None)
        return {name: env[o.id] for name, o in plan.outputs.items()}

    # -- one node -----------------------------------------------------------------------
    def _compute(self, node, args):
        result = None
        if self.fast_paths:
            fast_path = _fast_path(node)  # the same choice as the plan's program
            if fast_path is not None:
                with np.errstate(all="ignore"):  # as in execute (fast/direct.py)
                    result = fast_path(self, node.attrs, *args)
        used_fast = result is not None
        if result is None:
            result = node.op.compute(node.attrs, *args)
        if not isinstance(result, (list, tuple)):
            result = [result]
        return [coerce(value, operand) for value, operand in zip(result, node.outputs)], used_fast

    def run_node(self, node, args) -> list:
        return self._compute(node, args)[0]

    def run_node_profiled(self, node, args) -> list:
        start = time.perf_counter()
        out, used_fast = self._compute(node, args)
        entry = self._profile.get(node.op.name)
        if entry is None:
            entry = self._profile[node.op.name] = [0, 0, 0.0]
        entry[0] += 1
        entry[1] += used_fast
        entry[2] += time.perf_counter() - start
        return out

