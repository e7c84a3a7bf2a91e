"""Differential test of the cpu backend's fast paths and graph rewrites (issue 33).

Each random client-shaped net (tests/fuzz/client_graphs.py) is built and run in CPython
under several backend configurations, and the results are compared:

  reference  fastPaths off: the numpy reference kernels, the graph as built (no layout
             pass, no transpose folding, no fusion, no shuffle/channel-average collapse,
             no packing, no buffer plan)                      vs numpy float64 (tolerance)
  fast       everything on, one thread (the native build of csrc/ through ctypes: the
             kernels' own code; in Pyodide the wasm build of the same source)
                                                              vs reference (tolerance)
  nolayout   fast paths on, layoutPass off (NCHW convs/pools transpose around the same
             NHWC kernels per call; fusion, collapses, buffers still on)
                                                              vs fast (bit for bit)
  threads    fast with {"threads": 3}: the native thread pool splits calls into tiles
                                                              vs fast (bit for bit)
  pool       fast with threads 3 on a kernel pool (fast/shared.py) through the native
             stand-in of the browser's port (tests/kernels/native_pool_port.py):
             shared-memory images, chained activations, concat images
                                                              vs fast (bit for bit)
             and two graphs on one context run interleaved (each: its own-context bytes)
  poolfull   the same on pools of 16 KiB - 1 MiB of shared memory: jobs that do not fit
             fall back to one thread mid-graph (PoolFull)     vs fast (bit for bit)
  wasm       (--wasm) the shipped plain wasm build run by Node (tests/kernels/wasm_node.py)
                                                              vs fast (bit for bit)
  wasm-relaxed (--wasm) the relaxed-SIMD build (fused multiply-adds)
                                                              vs fast (tolerance)

Every graph runs twice on its compiled plan (the second time on new input arrays): the
same bytes. In the browser (run_browser, tests/fuzz/test_differential_browser.py) the same
nets run on the fuzz page under the polyfill's configurations (PAGE_CONFIGS).

Bit-for-bit is what docs/kernels.md and docs/threads.md promise for these pairs (tiles
compute every element with the same instructions in the same order; the layout pass is
bit-identical to the NCHW kernels; the plain wasm and native builds multiply and add in
float32 in the same order without contraction). Fast vs reference differs by summation
order (numpy's matmul is BLAS in CPython), so it is compared within a tolerance, as is
the reference against float64 numpy.

To make small graphs exercise the splits, the thread/pool configurations cycle through
lowered tile thresholds (TILE_SETTINGS, `small_tiles()`), graph by graph.

    python3 tests/fuzz/differential.py --minutes 10 --seed 1      (./dev fuzz --differential)
    python3 tests/fuzz/differential.py --replay SEED:INDEX        (one graph, verbose)
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
for p in (HERE, ROOT / "tests" / "kernels", ROOT / "tools", ROOT / "py"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from client_graphs import client_graph  # noqa: E402


def _log(*args):
    print(*args, flush=True)


# |got - want| <= ATOL * max(1, max|want|) + RTOL * |want|
TOL_REFERENCE = (2e-4, 2e-4)  # reference kernels (float32) vs float64 numpy
TOL_FAST = (5e-5, 5e-5)       # fast paths vs reference kernels (summation order only)


def build_and_run(ctx, spec):
    """Build `spec` on a webnn_core Context and run it twice; ({output id: float32 array}, graph)."""
    graph, feeds = build_graph(ctx, spec)
    first = ctx.compute(graph, feeds)
    first = {k: np.array(a, copy=True) for k, a in first.items()}
    # A second run on the same compiled plan (planned buffers and cached call plans reused),
    # on new input arrays holding the same values, as a client's next writeTensor gives it.
    second = ctx.compute(graph, {k: np.array(a, copy=True) for k, a in feeds.items()})
    for k in first:
        if first[k].tobytes() != np.asarray(second[k]).tobytes():
            raise AssertionError(f"output {k}: a second run of the same graph gave other bytes")
    return first, graph


def build_graph(ctx, spec):
    """(graph, feeds) of `spec` built on a webnn_core Context."""
    b = ctx.graph_builder()
    v = {}

    def arg(a):
        if isinstance(a, dict) and "ref" in a:
            return v[a["ref"]]
        if isinstance(a, list) and a and isinstance(a[0], dict) and "ref" in a[0]:
            return [v[x["ref"]] for x in a]
        return a

    for c in spec["constants"]:
        v[c["id"]] = b.constant({"dataType": "float32", "shape": c["shape"]},
                                np.array(c["data"], np.float32).reshape(c["shape"]))
    for i in spec["inputs"]:
        v[i["id"]] = b.input(i["id"], {"dataType": "float32", "shape": i["shape"]})
    for n in spec["nodes"]:
        args = [arg(a) for a in n["args"]]
        options = {k: arg(val) for k, val in n["options"].items()}
        out = getattr(b, n["op"])(*args, **options)
        v[n["id"]] = out[n["index"]] if "index" in n else out  # one output of split
    graph = b.build({o: v[o] for o in spec["outputs"]})
    feeds = {i["id"]: np.array(i["data"], np.float32).reshape(i["shape"]) for i in spec["inputs"]}
    return graph, feeds


def within(got, want, tol) -> str | None:
    atol, rtol = tol
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs {list(want.shape)}"
    got = got.astype(np.float64)
    bound = atol * max(1.0, float(np.abs(want).max(initial=0))) + rtol * np.abs(want)
    bad = ~(np.abs(got - want) <= bound)
    if bad.any():
        i = np.unravel_index(int(np.argmax(np.where(bad, np.abs(got - want), -1))), got.shape)
        return (f"{int(bad.sum())}/{got.size} elements off, worst at {list(map(int, i))}: "
                f"{got[i]!r} vs {want[i]!r} (max |diff| {float(np.nanmax(np.abs(got - want))):.3g})")
    return None


def same_bytes(got, want) -> str | None:
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs {list(want.shape)}"
    if got.tobytes() == want.tobytes():
        return None
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return f"{int((got != want).sum())}/{got.size} elements differ (max |diff| {float(np.nanmax(diff)):.3g})"


# Tile thresholds of fast/tiles.py (MIN_TILE_WORK, POOL_MIN_WORK, CHAINED_POOL_MIN_WORK) the
# threads/pool configurations cycle through, graph by graph: everything split; a pool
# that takes chained calls (input already in its memory) as one-tile jobs and splits only
# big ones; the shipped values.
TILE_SETTINGS = ((64, 256, 64), (64, 1 << 16, 1 << 30), (1 << 12, 1 << 14, 1 << 10), None)


@contextlib.contextmanager
def small_tiles(setting=TILE_SETTINGS[0]):
    """Split kernel calls from lower thresholds (tests only): the tile thresholds of
    fast/tiles.py set to `setting` (None: as shipped), restored afterwards."""
    from webnn_core.backends.cpu.fast import tiles

    saved = tiles.MIN_TILE_WORK, tiles.POOL_MIN_WORK, tiles.CHAINED_POOL_MIN_WORK
    if setting is not None:
        tiles.MIN_TILE_WORK, tiles.POOL_MIN_WORK, tiles.CHAINED_POOL_MIN_WORK = setting
    try:
        yield
    finally:
        tiles.MIN_TILE_WORK, tiles.POOL_MIN_WORK, tiles.CHAINED_POOL_MIN_WORK = saved


class Harness:
    """The backend configurations, each a fresh context per graph (nothing shared)."""

    def __init__(self, native_lib_path, pool_threads=3, wasm=False):
        from webnn_core.backends.cpu.fast.library import NativeBackend

        self.lib = NativeBackend(native_lib_path)
        self.pool_port = None
        self.pool = None
        if pool_threads:
            from native_pool_port import NativePoolPort
            from webnn_core.backends.cpu.fast.shared import KernelPool

            self.pool_port = NativePoolPort(native_lib_path, pool_threads)
            self.pool = KernelPool(self.pool_port, self.lib.fused_madd, "native stand-in")
            # A pool whose shared memory fills up mid-graph: jobs that do not fit fall back
            # to one thread (PoolFull), images are synced out, concats finished from both.
            self.small_ports = [NativePoolPort(native_lib_path, pool_threads, capacity=cap)
                                for cap in ((64 << 10) + (16 << 10), (64 << 10) + (96 << 10), (64 << 10) + (192 << 10), 1 << 20)]
            self.small_pools = [KernelPool(port, self.lib.fused_madd, "native stand-in, small memory")
                                for port in self.small_ports]
        self.wasm = None
        self.wasm_relaxed = None
        if wasm:
            import wasm_node

            reason = wasm_node.unavailable_reason(wasm_node.WASM)
            if reason is None:
                self.wasm = wasm_node.NodeWasmBackend(wasm_node.WASM)
                self.wasm.probe()
            if wasm_node.unavailable_reason(wasm_node.WASM_RELAXED) is None:
                relaxed = wasm_node.NodeWasmBackend(wasm_node.WASM_RELAXED)
                try:
                    relaxed.probe()
                    self.wasm_relaxed = relaxed
                except Exception:  # noqa: BLE001 - this Node has no relaxed SIMD
                    relaxed.close()

    def close(self):
        if self.pool_port is not None:
            for port in [self.pool_port, *self.small_ports]:
                port.helpers.shutdown()
        for w in (self.wasm, self.wasm_relaxed):
            if w is not None:
                w.close()

    def context(self, name):
        from webnn_core import Context
        from webnn_core.backends import CpuBackend

        ctx = Context("cpu")
        if name == "reference":
            ctx.backend = CpuBackend(fast_paths=False, library=None)
        elif name == "fast":
            ctx.backend = CpuBackend(library=self.lib, pool=None)
        elif name == "nolayout":
            ctx.backend = CpuBackend(library=self.lib, layout_pass=False, pool=None)
        elif name == "threads":
            ctx.backend = CpuBackend(library=self.lib, threads=3, pool=None)
        elif name == "pool":
            ctx.backend = CpuBackend(library=self.lib, threads=self.pool.threads, pool=self.pool)
        elif name == "poolfull":
            pool = self.small_pools[self._pick % len(self.small_pools)]
            ctx.backend = CpuBackend(library=self.lib, threads=pool.threads, pool=pool)
        elif name == "wasm":
            ctx.backend = CpuBackend(library=self.wasm, pool=None)
        elif name == "wasm-relaxed":
            ctx.backend = CpuBackend(library=self.wasm_relaxed, pool=None)
        else:
            raise ValueError(name)
        return ctx

    def configs(self):
        names = ["reference", "fast", "nolayout", "threads"]
        if self.pool is not None:
            names += ["pool", "poolfull"]
        if self.wasm is not None:
            names.append("wasm")
        if self.wasm_relaxed is not None:
            names.append("wasm-relaxed")
        return names

    coverage: dict  # what the compiled "fast" and "pool" plans contained, summed over graphs

    def note_coverage(self, name, ctx, graph):
        cov = self.coverage
        if name == "fast":
            for step in graph.plan.nodes:
                key = step.op.name
                if key == "transpose" and step.label and step.label.startswith("layout:"):
                    key = step.label
                cov[key] = cov.get(key, 0) + 1
                for attr in ("_inplace", "_out", "_prep"):
                    if attr in step.attrs:
                        cov[attr] = cov.get(attr, 0) + 1
            for op, why in ctx.backend.fallback_reasons.items():
                cov[f"declined {op}"] = cov.get(f"declined {op}", 0) + 1
        elif name == "pool":
            stats = self.pool.stats()
            cov["pool jobs"] = stats.get("jobs", 0)
        elif name == "poolfull":
            full = sum("memory is full" in why for why in ctx.backend.fallback_reasons.values())
            cov["pool full fallbacks"] = cov.get("pool full fallbacks", 0) + full

    def _pair(self, name, *runs) -> list:
        ctx = self.context(name)
        problems = []
        try:
            with small_tiles(self.tiles) if name == "pool" else contextlib.nullcontext():
                built = [build_graph(ctx, spec) for spec, _ in runs]

                def check(graph, feeds, spec, alone, when):
                    got = ctx.compute(graph, feeds)
                    for oid, want in alone.items():
                        p = same_bytes(np.asarray(got[oid]), want)
                        if p:
                            problems.append(f"{name}: two graphs on one context, {when}: graph with outputs "
                                            f"{spec['outputs']}, output {oid} vs its own context: {p}")

                for _ in range(2):
                    for (graph, feeds), (spec, alone) in zip(built, runs):
                        check(graph, feeds, spec, alone, "run interleaved")
                built[0][0].destroy()  # the other graph's plan, images and resident weights go
                gc.collect()
                check(*built[1], *runs[1], "after the first was destroyed")
        except Exception as e:  # noqa: BLE001 - a finding
            problems.append(f"{name}: two graphs on one context: {type(e).__name__}: {e}")
        finally:
            ctx.destroy()
        return problems[:2]

    def check(self, spec, expected, index=None) -> list:
        """[problem strings] for one graph (empty: every configuration agrees). `index`:
        the graph's number, which picks its tile thresholds (TILE_SETTINGS)."""
        if not hasattr(self, "coverage"):
            self.coverage = {}
            self._previous = {}
            self._count = 0
        self._pick = self._count if index is None else index
        self.tiles = TILE_SETTINGS[self._pick % len(TILE_SETTINGS)]
        self._count += 1
        problems = []
        results = {}
        for name in self.configs():
            ctx = self.context(name)
            try:
                if name in ("threads", "pool", "poolfull"):
                    with small_tiles(self.tiles):
                        out, graph = build_and_run(ctx, spec)
                else:
                    out, graph = build_and_run(ctx, spec)
                compile_error = ctx.backend.fallback_reasons.get("compile")
                if compile_error:
                    problems.append(f"{name}: compilation failed: {compile_error}")
                results[name] = out
                self.note_coverage(name, ctx, graph)
            except Exception as e:  # noqa: BLE001 - a finding
                problems.append(f"{name}: {type(e).__name__}: {e}\n{traceback.format_exc(limit=4)}")
            finally:
                ctx.destroy()
        # Two graphs on one context, run interleaved, as clients do (ONNX Runtime builds a
        # graph per partition on one context): with the kernel pool (its shared memory, the
        # images of planned buffers) and on one thread, each gives its own-context bytes.
        for name in ("pool", "fast"):
            prev = self._previous.get(name)
            if name in results and prev is not None:
                problems += self._pair(name, prev, (spec, results[name]))
            if name in results:
                self._previous[name] = (spec, results[name])
        for oid, want in expected.items():
            if "reference" in results:
                p = within(results["reference"][oid], want, TOL_REFERENCE)
                if p:
                    problems.append(f"reference vs numpy float64, output {oid}: {p}")
            base = results.get("fast")
            if base is not None and "reference" in results:
                p = within(base[oid], results["reference"][oid].astype(np.float64), TOL_FAST)
                if p:
                    problems.append(f"fast vs reference, output {oid}: {p}")
            if base is not None and "wasm-relaxed" in results:  # fused multiply-adds: within tolerance
                p = within(results["wasm-relaxed"][oid], base[oid].astype(np.float64), TOL_FAST)
                if p:
                    problems.append(f"wasm-relaxed vs fast, output {oid}: {p}")
            if base is not None:
                for name in ("nolayout", "threads", "pool", "poolfull", "wasm"):
                    if name in results:
                        p = same_bytes(results[name][oid], base[oid])
                        if p:
                            problems.append(f"{name} vs fast (bit for bit), output {oid}: {p}")
        return problems


# ----------------------------------------------------------------- in the browser
# The page configurations of the browser slice (WEBNN_POLYFILL_CONFIG): the numpy kernels
# in Pyodide; the plain wasm SIMD build on one thread; the same build on a kernel pool of
# 3 threads (Web Workers on one shared memory; the fuzz page is cross-origin isolated);
# and the default (best build: relaxed SIMD where the browser has it, pool of
# hardwareConcurrency threads).
PAGE_CONFIGS = {
    "numpy": "{ fastPaths: false }",
    "simd128": "{ fastPaths: 'simd128', threads: 1 }",
    "simd128-pool": "{ fastPaths: 'simd128', threads: 3 }",
    "default": "{}",
    # The timeline worker (a window's default; fuzz.html keeps 'page' unless told): the pool's
    # configuration, the graph sent as IR and replayed in the worker, the bytes moved both ways.
    "worker": "{ fastPaths: 'simd128', threads: 3, timeline: 'worker' }",
}
TOL_PAGE = (2e-4, 2e-4)  # each page configuration vs float64 numpy


class PageHang(Exception):
    """A page did not answer in time (Playwright's evaluate has no timeout of its own)."""


def evaluate(page, expression, arg=None, seconds=300):
    """page.evaluate of an async `expression` (a function of one argument), raising
    PageHang when it has not settled after `seconds`."""
    script = ("([arg, ms]) => Promise.race([(" + expression + ")(arg), new Promise((_, reject) => "
              "setTimeout(() => reject(new Error('__hang__')), ms))])")
    try:
        return page.evaluate(script, [arg, seconds * 1000])
    except Exception as e:  # noqa: BLE001
        if "__hang__" in str(e):
            raise PageHang(f"no answer after {seconds} s: {expression}") from None
        raise


def open_pages(browser, base_url, names=tuple(PAGE_CONFIGS)):
    """{name: page} of the fuzz page under each configuration (their own browser contexts)."""
    pages = {}
    for name in names:
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(300_000)
        page.console_log = []
        page.on("console", lambda m, log=page.console_log: log.append(f"{m.type}: {m.text}"[:300]))
        page.on("pageerror", lambda e, log=page.console_log: log.append(f"pageerror: {e}"[:300]))
        page.add_init_script(f"self.WEBNN_POLYFILL_CONFIG = {PAGE_CONFIGS[name]}")
        page.goto(f"{base_url}/fuzz/fuzz.html")
        try:
            evaluate(page, "() => fuzz.ready()", None, 300)
        except PageHang as e:
            raise PageHang(f"page {name}: the polyfill did not get ready: {e}; console: {page.console_log[-5:]}") from None
        pages[name] = page
    return pages


def close_pages(pages):
    for page in pages.values():
        page.context.close()


def browser_check(pages, batch) -> list:
    """[(index, [problems])] for a batch [(index, spec, expected)] run on every page: each
    configuration within tolerance of float64 numpy; the plain SIMD build bit for bit equal
    to the numpy kernels (docs/kernels.md "Numerics": the same float32 operations in the
    same order as Pyodide's non-BLAS numpy), on the pool equal to one thread, and through
    the timeline worker equal to the same configuration in the page."""
    specs = [spec for _, spec, _ in batch]
    runs = {}
    for name, page in pages.items():
        try:
            runs[name] = evaluate(page, "(specs) => fuzz.graphs(specs)", specs, 60 + 30 * len(specs))
        except PageHang as e:
            raise PageHang(f"page {name}: {e}; console: {page.console_log[-5:]}") from None
    found = []
    for k, (index, spec, expected) in enumerate(batch):
        problems = []
        got = {}
        for name, results in runs.items():
            r = results[k]
            if "error" in r:
                problems.append(f"page {name}: the graph failed: {r['error']}")
                continue
            got[name] = {oid: np.array(o["data"], np.float32).reshape(o["shape"]) for oid, o in r["ok"].items()}
            for oid, want in expected.items():
                p = within(got[name][oid], want, TOL_PAGE)
                if p:
                    problems.append(f"page {name} vs numpy float64, output {oid}: {p}")
        for name, base in (("simd128", "numpy"), ("simd128-pool", "simd128"), ("worker", "simd128-pool")):
            if name in got and base in got:
                for oid in expected:
                    p = same_bytes(got[name][oid], got[base][oid])
                    if p:
                        problems.append(f"page {name} vs page {base} (bit for bit), output {oid}: {p}")
        if problems:
            found.append((index, problems))
    return found


def run_browser(browser, base_url, minutes: float, seed: int, log=_log, batch_size: int = 8) -> dict:
    """The browser slice for `minutes`: graphs SEED:INDEX (the CPython run's numbering,
    from index 10**6 on so the two runs draw different graphs)."""
    pages = open_pages(browser, base_url)
    report = {"seed": seed, "graphs": 0, "failures": [], "configs": list(pages)}
    end = time.monotonic() + minutes * 60
    index = 10**6
    try:
        while time.monotonic() < end:
            batch = [(i, *make(seed, i)) for i in range(index, index + batch_size)]
            index += batch_size
            try:
                found = browser_check(pages, batch)
            except PageHang as e:  # a finding too: the page stopped answering
                first, last = batch[0][0], batch[-1][0]
                report["failures"].append({"seed": seed, "index": first, "problems": [str(e)], "spec": None})
                log(f"FAIL (browser) graphs {seed}:{first}..{last}: {e}")
                log(f"  reproducer: python3 tests/fuzz/differential.py --replay {seed}:I --browser for each I")
                close_pages(pages)
                pages = open_pages(browser, base_url)
                continue
            log(f"  ... browser: {report['graphs'] + len(batch)} graphs")
            for i, problems in found:
                spec = next(s for j, s, _ in batch if j == i)
                report["failures"].append({"seed": seed, "index": i, "problems": problems, "spec": spec})
                log(f"FAIL (browser) graph {seed}:{i} ({spec.get('style')}, {len(spec['nodes'])} nodes)")
                for p in problems:
                    log(f"  {p}")
                log(f"  reproducer: python3 tests/fuzz/differential.py --replay {seed}:{i} --browser")
            report["graphs"] += len(batch)
    finally:
        close_pages(pages)
    log(f"differential (browser): seed {seed}, {report['graphs']} graphs, pages {', '.join(report['configs'])}; "
        f"{len(report['failures'])} failures")
    return report


@contextlib.contextmanager
def served_browser():
    """(browser, base URL): tools/serve.py with the fuzz page mounted, headless Chromium."""
    import serve
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CHROMIUM, CHROMIUM_ARGS

    srv = serve.start(mounts={**serve.default_mounts(), "/fuzz/": HERE})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                yield browser, f"http://127.0.0.1:{srv.server_address[1]}"
            finally:
                browser.close()
    finally:
        srv.shutdown()


def graph_seed(seed: int, index: int) -> int:
    return seed * 1_000_003 + index


def make(seed: int, index: int, style=None):
    return client_graph(np.random.default_rng(graph_seed(seed, index)), style)


def describe_spec(spec) -> str:
    lines = [f"style {spec.get('style')}; inputs " + ", ".join(f"{i['id']}{i['shape']}" for i in spec["inputs"])]
    for n in spec["nodes"]:
        args = json.dumps([a if not (isinstance(a, dict) and 'ref' in a) else a["ref"] for a in n["args"]])
        opts = {k: (val["ref"] if isinstance(val, dict) and "ref" in val else val) for k, val in n["options"].items()}
        lines.append(f"  {n['id']} = {n['op']}({args[1:-1]}{', ' + json.dumps(opts) if opts else ''})")
    lines.append(f"  outputs {spec['outputs']}")
    return "\n".join(lines)


def run(minutes: float, seed: int, wasm: bool = False, log=_log, json_path=None, style=None) -> dict:
    import build_kernels

    harness = Harness(build_kernels.ensure_native(), wasm=wasm)
    end = time.monotonic() + minutes * 60
    report = {"seed": seed, "graphs": 0, "failures": [], "configs": harness.configs(), "nodes": 0}
    index = 0
    next_note = time.monotonic() + 300
    try:
        while time.monotonic() < end:
            if time.monotonic() > next_note:  # a sign of life in long runs
                next_note += 300
                log(f"  ... {report['graphs']} graphs, {len(report['failures'])} failing")
            spec, expected = make(seed, index, style)
            problems = harness.check(spec, expected, index)
            report["graphs"] += 1
            report["nodes"] += len(spec["nodes"])
            if problems:
                report["failures"].append({"seed": seed, "index": index, "problems": problems, "spec": spec})
                log(f"FAIL graph {seed}:{index} ({spec.get('style')}, {len(spec['nodes'])} nodes)")
                for p in problems:
                    log(f"  {p}")
                log(f"  reproducer: python3 tests/fuzz/differential.py --replay {seed}:{index}")
            index += 1
    finally:
        harness.close()
    report["coverage"] = getattr(harness, "coverage", {})
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=1))
    log(f"differential: seed {seed}, {report['graphs']} graphs ({report['nodes']} nodes), configurations "
        f"{', '.join(report['configs'])}; {len(report['failures'])} failures")
    log("  compiled steps (fast): " + ", ".join(f"{k} {v}" for k, v in sorted(report["coverage"].items())))
    return report


def replay(which: str, wasm: bool = False, browser: bool = False) -> int:
    import build_kernels

    seed, index = (int(x) for x in which.split(":"))
    spec, expected = make(seed, index)
    print(describe_spec(spec))
    if browser:
        with served_browser() as (b, url):
            pages = open_pages(b, url)
            try:
                found = browser_check(pages, [(index, spec, expected)])
            finally:
                close_pages(pages)
        for _, problems in found:
            for p in problems:
                print("FAIL", p)
        print("ok (browser)" if not found else "problems in the browser")
        return 1 if found else 0
    harness = Harness(build_kernels.ensure_native(), wasm=wasm)
    try:
        problems = harness.check(spec, expected, index)
    finally:
        harness.close()
    for p in problems:
        print("FAIL", p)
    print("ok" if not problems else f"{len(problems)} problems")
    return 1 if problems else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--wasm", action="store_true", help="also run the plain wasm build under Node (slower)")
    p.add_argument("--style", choices=("ort122", "ort130", "nhwc", "transformer"))
    p.add_argument("--replay", metavar="SEED:INDEX", help="run one graph and print it")
    p.add_argument("--browser", action="store_true",
                   help="with --replay: on the fuzz page in headless Chromium (build dist/ first: ./dev build)")
    p.add_argument("--json", help="also write the report (with each failing graph's spec) here")
    args = p.parse_args(argv)
    if args.replay:
        return replay(args.replay, args.wasm, args.browser)
    report = run(args.minutes, args.seed, args.wasm, json_path=args.json, style=args.style)
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
