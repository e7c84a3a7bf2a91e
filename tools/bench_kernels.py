"""Kernel-level timing for the CPU fast paths, in CPython (native build of the
same microkernels) — the building block `./dev bench` can call; the browser
numbers come from the same core running in Pyodide (see docs/performance.md).

    python tools/bench_kernels.py [--runs 10] [--gemm] [--profile] [--browser] [--layouts] [--threads 1,2]

  * SqueezeNet 1.0 (../shared/models) built through webnn_core in CPython
    with the native build of the kernels: median latency with the fast paths
    on and off, outputs compared;
  * --gemm: GFLOP/s of the GEMM/conv microkernels on SqueezeNet's shapes;
  * --layouts: the same SqueezeNet in NHWC and in NCHW (same weights,
    transposed), NCHW with and without the layout pass (./dev bench --layouts);
  * --threads 1,2: SqueezeNet on cpu backends with 1 and 2 kernel threads
    (output tiles on the backend's pool; docs/threads.md), interleaved;
  * --profile: per-op time breakdown (the cpu backend's profiling);
  * --browser: the same SqueezeNet in headless Chromium through the public
    WebNN API (tests/browser/pages/simd.html): relaxed-SIMD build, plain
    simd128 build, and numpy only, each graph built under its own setting;
  * --browser --tfjs: SqueezeNet and MobileNetV2, polyfill and TF.js wasm
    alternating inferences in one page (tests/browser/pages/simd_vs_tfjs.html),
    medians and the median of the per-pair ratios (needs TF.js in .cache/node,
    which tools/bench.py installs).

Python API (also usable inside Pyodide, where the wasm backend is attached):
  build_squeezenet(context, weights)  -> (graph, input name, output name)
  load_squeezenet_weights(dir)        -> {name: ndarray}
  time_graph(context, graph, feeds, runs, fast=True, profile=False) -> dict
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))
MODELS = Path(os.environ.get("WEBNN_MODELS", ROOT.parent / "shared" / "models"))

FIRES = ["fire2", "fire3", "fire4", "fire5", "fire6", "fire7", "fire8", "fire9"]


def squeezenet_weight_names() -> list[str]:
    names = ["conv1", "conv10"] + [f"{f}_{part}" for f in FIRES for part in ("squeeze", "e1x1", "e3x3")]
    return [f"{n}_{suffix}" for n in names for suffix in ("kernel", "Conv2D_bias")]


def load_squeezenet_weights(directory=None) -> dict:
    directory = Path(directory or MODELS / "squeezenet1.0_nhwc" / "weights")
    return {n: np.load(directory / f"{n}.npy") for n in squeezenet_weight_names()}


def _same_upper(size, kernel, stride):
    total = max((math.ceil(size / stride) - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def build_squeezenet(context, weights, layout="nhwc"):
    """SqueezeNet 1.0 as web/lib/squeezenet.js wires it (NHWC input, OHWI
    filters), or the same network in NCHW (input [1, 3, 224, 224], the same
    weights transposed to OIHW, NCHW pools, channel concats on axis 1)."""
    b = context.graph_builder()
    nchw = layout == "nchw"

    def const(a):
        return b.constant({"dataType": "float32", "shape": list(a.shape)}, a)

    def conv_relu(x, name, **opts):
        w = weights[f"{name}_kernel"]
        if nchw:
            w = np.ascontiguousarray(np.transpose(w, (0, 3, 1, 2)))  # OHWI -> OIHW
        y = b.conv2d(x, const(w), inputLayout=layout, filterLayout="oihw" if nchw else "ohwi",
                     bias=const(weights[f"{name}_Conv2D_bias"]), **opts)
        return b.relu(y)

    def pool(x):
        return b.maxPool2d(x, windowDimensions=[3, 3], strides=[2, 2], layout=layout)

    def fire(x, name):
        s = conv_relu(x, f"{name}_squeeze")
        return b.concat([conv_relu(s, f"{name}_e1x1"), conv_relu(s, f"{name}_e3x3", padding=[1, 1, 1, 1])],
                        1 if nchw else 3)

    x = b.input("input", {"dataType": "float32", "shape": [1, 3, 224, 224] if nchw else [1, 224, 224, 3]})
    k = weights["conv1_kernel"].shape[1]
    pb, pe = _same_upper(224, k, 2)
    y = conv_relu(x, "conv1", strides=[2, 2], padding=[pb, pe, pb, pe])
    y = pool(y)
    for f in FIRES[:3]:
        y = fire(y, f)
    y = pool(y)
    for f in FIRES[3:7]:
        y = fire(y, f)
    y = pool(y)
    y = fire(y, "fire9")
    y = conv_relu(y, "conv10")
    y = b.averagePool2d(y, layout=layout)
    y = b.reshape(y, [1, 1001])
    y = b.softmax(y, 1)
    return b.build({"output": y}), "input", "output"


def time_graph(context, graph, feeds, runs=10, warmup=1):
    """Median / min latency (ms) of context.compute(graph, feeds) and the last outputs."""
    times = []
    out = None
    for i in range(warmup + runs):
        t0 = time.perf_counter()
        out = context.compute(graph, feeds)
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    return {"median_ms": statistics.median(times), "min_ms": min(times), "runs": runs, "outputs": out}


def bench_model(runs=10, profile=False, weights=None):
    """SqueezeNet latency with the fast paths on, then off (each graph built
    with the setting it runs under); returns a dict of results."""
    from webnn_core import Context
    from webnn_core.backends.cpu import fast

    weights = weights or load_squeezenet_weights()
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    results = {"backend": fast.status()}
    for mode in ("fast", "numpy"):
        ctx = Context("cpu", options={"fastPaths": mode == "fast"})
        graph, iname, oname = build_squeezenet(ctx, weights)
        r = time_graph(ctx, graph, {iname: x}, runs=runs)
        if profile:
            ctx.backend.set_profiling(True)
            ctx.compute(graph, {iname: x})
            ctx.backend.set_profiling(False)
            r["profile"] = ctx.backend.profile()
            r["profile_table"] = ctx.backend.profile_table()
        r["nodes"] = len(graph.plan.nodes)
        results[mode] = r
    a, b = results["fast"].pop("outputs")["output"], results["numpy"].pop("outputs")["output"]
    results["max_abs_diff"] = float(np.max(np.abs(a.astype(np.float64) - b)))
    results["top1_equal"] = int(np.argmax(a)) == int(np.argmax(b))
    return results


def bench_threads(runs=10, threads=(1, 2), weights=None):
    """SqueezeNet (fast paths on) on cpu backends with 1 and N kernel threads,
    inferences interleaved round by round; wall and process CPU time per
    inference, and the per-round wall ratio to 1 thread. Returns {threads: {...}}."""
    from webnn_core import Context

    weights = weights or load_squeezenet_weights()
    x = np.random.default_rng(0).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    runs_ = {}
    for t in threads:
        ctx = Context("cpu", options={"threads": t})
        graph, iname, oname = build_squeezenet(ctx, weights)
        ctx.compute(graph, {iname: x})  # warm-up: call plans, pool
        runs_[t] = {"ctx": ctx, "graph": graph, "feeds": {iname: x}, "wall": [], "cpu": [], "out": None}
    for _ in range(runs):
        for t, r in runs_.items():
            w0, c0 = time.perf_counter(), time.process_time()
            r["out"] = r["ctx"].compute(r["graph"], r["feeds"])["output"]
            r["wall"].append((time.perf_counter() - w0) * 1e3)
            r["cpu"].append((time.process_time() - c0) * 1e3)
    base = runs_[threads[0]]
    out = {}
    for t, r in runs_.items():
        out[t] = {"median_ms": statistics.median(r["wall"]), "min_ms": min(r["wall"]),
                  "cpu_ms": statistics.median(r["cpu"]),
                  "ratio": statistics.median(a / b for a, b in zip(r["wall"], base["wall"])),
                  "equal": bool(np.array_equal(r["out"], base["out"])),
                  "threads": r["ctx"].backend.kernel_threads()}
        r["ctx"].destroy()
    return out


def bench_layouts(runs=10, weights=None):
    """SqueezeNet with the same weights in NHWC and in NCHW (the input and
    filters transposed), fast paths on; NCHW also without the layout pass.
    The variants run interleaved (one inference of each per round), so a
    shared machine's load changes hit them alike. Returns {variant:
    {"median_ms", "min_ms", "runs", "nodes", "transposes"}}, the median over
    rounds of each variant's time / the NHWC time ("ratio_to_nhwc"), and the
    largest output difference between the variants."""
    from webnn_core import Context

    weights = weights or load_squeezenet_weights()
    x = np.random.default_rng(0).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    variants = {"nhwc": ("nhwc", True), "nchw": ("nchw", True), "nchw-no-layout-pass": ("nchw", False)}
    built = {}
    for variant, (layout, layout_pass) in variants.items():
        ctx = Context("cpu", options={"layoutPass": layout_pass})
        graph, iname, oname = build_squeezenet(ctx, weights, layout)
        feed = np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2))) if layout == "nchw" else x
        built[variant] = (ctx, graph, {iname: feed}, oname)
    times = {v: [] for v in variants}
    outputs = {}
    for i in range(runs + 1):  # round 0 is the warm-up
        for variant, (ctx, graph, feeds, oname) in built.items():
            t0 = time.perf_counter()
            outputs[variant] = ctx.compute(graph, feeds)[oname]
            if i:
                times[variant].append((time.perf_counter() - t0) * 1e3)
    results = {}
    for variant, (ctx, graph, feeds, oname) in built.items():
        t = times[variant]
        results[variant] = {
            "median_ms": statistics.median(t), "min_ms": min(t), "runs": runs,
            "ratio_to_nhwc": statistics.median(a / b for a, b in zip(t, times["nhwc"])),
            "nodes": len(graph.plan.nodes),
            "transposes": sum(s.op.name == "transpose" for s in graph.plan.nodes)}
    ref = outputs["nhwc"].astype(np.float64)
    results["max_abs_diff"] = max(float(np.max(np.abs(o - ref))) for o in outputs.values())
    return results


def squeezenet_gemm_shapes() -> list[tuple]:
    """(name, H, W, C, O, k, stride, pad) of SqueezeNet's convolutions."""
    sizes = {"conv1": 224, "fire2": 55, "fire3": 55, "fire4": 55, "fire5": 27, "fire6": 27, "fire7": 27,
             "fire8": 27, "fire9": 13, "conv10": 13}
    w = load_squeezenet_weights()
    shapes = []
    for name in ["conv1"] + [f"{f}_{p}" for f in FIRES for p in ("squeeze", "e1x1", "e3x3")] + ["conv10"]:
        o, kh, _, c = w[f"{name}_kernel"].shape
        stage = name.split("_")[0]
        if name == "conv1":
            shapes.append((name, 224, 224, c, o, kh, 2, 3))
        else:
            shapes.append((name, sizes[stage], sizes[stage], c, o, kh, 1, kh // 2))
    return shapes


def bench_convs(repeat=5):
    """GFLOP/s of each SqueezeNet convolution through the conv2d fast path."""
    from webnn_core.backends.cpu import fast
    from webnn_core.backends.cpu.fast import paths
    from webnn_core.backends.cpu.fast.pack import pack_conv

    backend = fast.library()
    rows = []
    rng = np.random.default_rng(1)
    for name, h, w, c, o, k, s, pad in squeezenet_gemm_shapes():
        x = rng.standard_normal((1, h, w, c), dtype=np.float32)
        wt = rng.standard_normal((o, k, k, c), dtype=np.float32)
        bias = rng.standard_normal(o, dtype=np.float32)
        attrs = {"padding": [pad, pad, pad, pad], "strides": [s, s], "dilations": [1, 1], "groups": 1,
                 "layout": "nhwc", "filter_perm": (0, 1, 2, 3)}
        prep = pack_conv(wt, bias, 1)
        oh = (h + 2 * pad - k) // s + 1
        y = np.empty((1, oh, oh, o), np.float32)
        best = math.inf
        for _ in range(repeat):
            t0 = time.perf_counter()
            paths.conv2d_into(backend, prep, attrs, x, y, 0.0, math.inf)
            best = min(best, time.perf_counter() - t0)
        flops = 2.0 * oh * oh * o * k * k * c
        rows.append((name, f"{oh}x{oh}x{c}->{o} k{k}s{s}", best * 1e3, flops / best / 1e9))
    return rows


def bench_browser(runs=10, chromium=None) -> dict:
    """SqueezeNet latency in headless Chromium: {mode: {medianMs, minMs, profile, ...}}."""
    import serve
    from playwright.sync_api import sync_playwright

    mounts = {**serve.default_mounts(), "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    srv = serve.start(mounts=mounts)
    url = f"http://127.0.0.1:{srv.server_address[1]}/test-pages/simd.html"
    args = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run"]
    results = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium or os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=args)
            for query, modes, names in (("", ["fast", "numpy"], ["relaxed-simd", "numpy"]),
                                        ("?fastpaths=simd128", ["fast"], ["simd128"])):
                page = browser.new_page()
                page.set_default_timeout(600_000)
                page.goto(url + query)
                page.wait_for_function("window.ready === true")
                r = page.evaluate(f"timeSqueezeNet({int(runs)}, {modes!r})")
                for mode, name in zip(modes, names):
                    results[name] = r[mode]
                    results[name]["kernels"] = r["status"]["detail"] if mode == "fast" else None
                page.close()
            browser.close()
    finally:
        srv.shutdown()
    return results


def bench_browser_layouts(runs=10, chromium=None) -> dict:
    """SqueezeNet NHWC vs NCHW in headless Chromium, through the public WebNN API
    (tests/browser/pages/simd.html timeSqueezeNetLayouts): {variant: {medianMs, minMs,
    ratioToNhwc, maxAbsDiff}} plus the kernel status."""
    import serve
    from playwright.sync_api import sync_playwright

    mounts = {**serve.default_mounts(), "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    srv = serve.start(mounts=mounts)
    url = f"http://127.0.0.1:{srv.server_address[1]}/test-pages/simd.html"
    args = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--no-first-run"]
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium or os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=args)
            page = browser.new_page()
            page.set_default_timeout(900_000)
            page.goto(url)
            page.wait_for_function("window.ready === true")
            r = page.evaluate(f"timeSqueezeNetLayouts({int(runs)})")
            browser.close()
    finally:
        srv.shutdown()
    return r


def bench_vs_tfjs(runs=15, chromium=None) -> list:
    """[(model, build, polyfill median ms, TF.js median ms, median ratio)] from the interleaved page."""
    import serve
    from playwright.sync_api import sync_playwright

    if not (ROOT / ".cache" / "node" / "node_modules" / "@tensorflow" / "tfjs-backend-wasm").is_dir():
        raise SystemExit("TF.js is not installed in .cache/node (run python3 tools/bench.py once)")
    mounts = {**serve.default_mounts(), "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    srv = serve.start(mounts=mounts)
    url = f"http://127.0.0.1:{srv.server_address[1]}/test-pages/simd_vs_tfjs.html"
    rows = []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium or os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=["--no-sandbox", "--disable-background-networking",
                                              "--disable-component-update", "--disable-sync", "--no-first-run"])
            for model in ("squeezenet", "mobilenetv2"):
                for query in ("", "?fastpaths=simd128"):
                    page = browser.new_page()
                    page.set_default_timeout(600_000)
                    page.goto(url + query)
                    page.wait_for_function("window.ready === true")
                    r = page.evaluate(f"run({int(runs)}, {model!r})")
                    rows.append((model, r["status"]["detail"], r["polyMedian"], r["tfMedian"], r["ratioMedian"]))
                    page.close()
            browser.close()
    finally:
        srv.shutdown()
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--gemm", action="store_true", help="per-convolution GFLOP/s")
    p.add_argument("--profile", action="store_true", help="per-op time breakdown")
    p.add_argument("--no-build", action="store_true", help="do not (re)build the native library")
    p.add_argument("--browser", action="store_true", help="SqueezeNet in headless Chromium (needs ./dev build)")
    p.add_argument("--tfjs", action="store_true", help="with --browser: interleaved with TF.js wasm")
    p.add_argument("--layouts", action="store_true",
                   help="SqueezeNet NHWC vs NCHW (same weights, transposed), NCHW with and without the layout pass")
    p.add_argument("--threads", default="",
                   help="comma list of kernel thread counts, e.g. 1,2: SqueezeNet per count (native), interleaved")
    args = p.parse_args(argv)
    if args.browser and args.tfjs:
        sys.path.insert(0, str(ROOT / "tools"))
        for model, kernels_, poly, tf, ratio in bench_vs_tfjs(runs=args.runs):
            print(f"{model:<12} {kernels_:<45} polyfill {poly:8.2f} ms  TF.js wasm {tf:8.2f} ms  ratio {ratio:.2f}")
        return 0
    if args.layouts and args.browser:
        r = bench_browser_layouts(runs=args.runs)
        print(f"kernels: {r['status'].get('detail') or r['status'].get('reason')}")
        for variant in ("nhwc", "nchw", "nchw-no-layout-pass"):
            m = r[variant]
            print(f"squeezenet (chromium) {variant:<20} median {m['medianMs']:8.2f} ms  min {m['minMs']:8.2f} ms"
                  f"  x{m['ratioToNhwc']:.2f} of nhwc  max |dp| {m['maxAbsDiff']:.3g}")
        return 0
    if args.browser:
        sys.path.insert(0, str(ROOT / "tools"))
        r = bench_browser(runs=args.runs)
        for name, m in r.items():
            print(f"squeezenet (chromium) {name:<13} median {m['medianMs']:8.2f} ms  min {m['minMs']:8.2f} ms"
                  f"  build {m['buildMs']:7.1f} ms  top-1 {m['top1']}")
            if args.profile:
                for op, v in sorted(m["profile"].items(), key=lambda kv: -kv[1]["ms"]):
                    print(f"    {op:<16}{v['calls']:>5} calls {v['fast_calls']:>5} fast {v['ms']:9.2f} ms")
        return 0
    from webnn_core.backends.cpu import fast

    status = fast.attach_native(build=not args.no_build)
    print(f"backend: {status['detail'] or status['reason']}")
    if not fast.available():
        return 1
    if args.gemm:
        print(f"{'conv':<16}{'shape':<28}{'ms':>9}{'GFLOP/s':>10}")
        for name, shape, ms, gf in bench_convs():
            print(f"{name:<16}{shape:<28}{ms:>9.3f}{gf:>10.2f}")
    if args.threads:
        counts = tuple(int(t) for t in args.threads.split(","))
        for t, m in bench_threads(runs=args.runs, threads=counts).items():
            print(f"squeezenet threads={t} (running {m['threads']}) median {m['median_ms']:8.2f} ms  min {m['min_ms']:8.2f} ms"
                  f"  CPU {m['cpu_ms']:8.2f} ms  x{m['ratio']:.2f} of {counts[0]} thread(s)  equal: {m['equal']}")
        return 0
    if args.layouts:
        r = bench_layouts(runs=args.runs)
        for variant in ("nhwc", "nchw", "nchw-no-layout-pass"):
            m = r[variant]
            print(f"squeezenet {variant:<20} median {m['median_ms']:8.2f} ms  min {m['min_ms']:8.2f} ms"
                  f"  x{m['ratio_to_nhwc']:.2f} of nhwc  ({m['nodes']} steps, {m['transposes']} transposes)")
        print(f"max |variant - nhwc| = {r['max_abs_diff']:.3g}")
        return 0
    r = bench_model(runs=args.runs, profile=args.profile)
    for mode in ("fast", "numpy"):
        m = r[mode]
        print(f"squeezenet {mode:<6} median {m['median_ms']:8.2f} ms  min {m['min_ms']:8.2f} ms  ({m['nodes']} nodes)")
        if args.profile:
            print(m["profile_table"])
    print(f"max |fast - numpy| = {r['max_abs_diff']:.3g}, same top-1: {r['top1_equal']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
