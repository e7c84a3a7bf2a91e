"""Where build() goes on a ResNet50-sized graph (issue 17 item 3), in CPython
with the native build of the kernels (the same Python the browser runs).

    python3 tools/profile_build.py [--layout nhwc|nchw] [--runs 3] [--cprofile N] [--browser]

Builds ResNet50 v1 (53 conv2d with bias, 16 residual adds, relus, pools, gemm;
seeded random weights, ~25.5 M parameters) through webnn_core's builder the way
ORT's WebNN EP does (constants, op calls, build()), and reports the median ms
of the three phases: constants (builder.constant), ops (builder op calls) and
build() (the backend's plan: layout pass, fusion, weight packing, buffers).
--cprofile N prints the N most expensive functions of one build() by cumulative time.
--browser runs the same code inside the polyfill's Pyodide in headless Chromium
(the wasm SIMD kernels; webnnPolyfill.pyodide()), bytes handed over as in CPython.
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent if "__file__" in globals() else Path("/")  # "/" in Pyodide
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "tools"))

# CPU time of this process where the OS reports it (CPython: steadier than wall time on a
# shared machine; page faults count as system time), else wall time (Pyodide).
_clock = time.process_time if sys.platform != "emscripten" else time.perf_counter

STAGES = [(64, 256, 3, 1), (128, 512, 4, 2), (256, 1024, 6, 2), (512, 2048, 3, 2)]


def resnet50_weights(layout: str, seed: int = 0) -> list:
    """The filters and biases in build order: [(filter, bias)], OHWI (nhwc) or OIHW (nchw)."""
    rng = np.random.default_rng(seed)
    specs = [(3, 64, 7)]
    cin = 64
    for mid, out, blocks, _ in STAGES:
        for b in range(blocks):
            if b == 0:
                specs.append((cin, out, 1))
            specs += [(cin, mid, 1), (mid, mid, 3), (mid, out, 1)]
            cin = out
    out = []
    for ci, co, k in specs:
        w = (rng.standard_normal((co, k, k, ci), np.float32) * np.float32(1 / np.sqrt(ci * k * k)))
        if layout == "nchw":
            w = np.ascontiguousarray(w.transpose(0, 3, 1, 2))
        out.append((w, (0.01 * rng.standard_normal(co)).astype(np.float32)))
    fc = (rng.standard_normal((2048, 1000), np.float32) * np.float32(1 / 45), np.zeros(1000, np.float32))
    return out + [fc]


def build_resnet50(context, weights, layout: str = "nhwc", timings: dict | None = None):
    b = context.graph_builder()
    nchw = layout == "nchw"
    t0 = _clock()
    consts = [(b.constant({"dataType": "float32", "shape": list(w.shape)}, w.tobytes()),
               b.constant({"dataType": "float32", "shape": list(bias.shape)}, bias.tobytes())) for w, bias in weights]
    t1 = _clock()
    it = iter(consts)

    def conv(x, relu=True, stride=1, k=1):
        w, bias = next(it)
        pad = k // 2
        y = b.conv2d(x, w, bias=bias, strides=[stride, stride], padding=[pad] * 4, inputLayout=layout,
                     filterLayout="oihw" if nchw else "ohwi")
        return b.relu(y) if relu else y

    x = b.input("input", {"dataType": "float32", "shape": [1, 3, 224, 224] if nchw else [1, 224, 224, 3]})
    y = conv(x, stride=2, k=7)
    y = b.maxPool2d(y, windowDimensions=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1], layout=layout)
    for mid, out, blocks, stride in STAGES:
        for i in range(blocks):
            s = stride if i == 0 else 1
            short = conv(y, relu=False, stride=s) if i == 0 else y
            h = conv(y)
            h = conv(h, stride=s, k=3)
            h = conv(h, relu=False)
            y = b.relu(b.add(h, short))
    y = b.averagePool2d(y, layout=layout)
    y = b.reshape(y, [1, 2048])
    w, bias = next(it)
    y = b.softmax(b.gemm(y, w, c=bias), 1)
    t2 = _clock()
    graph = b.build({"output": y})
    t3 = _clock()
    if timings is not None:
        for k, v in (("constants", t1 - t0), ("ops", t2 - t1), ("build", t3 - t2)):
            timings.setdefault(k, []).append(v * 1e3)
    return graph


def report(layout: str, runs: int, cprofile: int) -> str:
    """Build ResNet50 `runs` times (+ once under cProfile); the text report."""
    import io

    from webnn_core.context import Context

    weights = resnet50_weights(layout)
    timings: dict = {}
    ctx = Context("cpu")
    for _ in range(runs):
        build_resnet50(ctx, weights, layout, timings)
    out = io.StringIO()
    clock = "wall" if sys.platform == "emscripten" else "CPU (process_time)"
    out.write(f"ResNet50 ({layout}), {clock} ms, median of {runs}: " +
              ", ".join(f"{k} {statistics.median(v):.1f} ms" for k, v in timings.items()) + "\n")
    if cprofile:
        prof = cProfile.Profile(_clock)
        prof.enable()
        build_resnet50(ctx, weights, layout)
        prof.disable()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(cprofile)
    return out.getvalue()


def in_browser(args) -> str:
    from playwright.sync_api import sync_playwright

    import serve

    srv = serve.start(mounts={**serve.default_mounts(), "/ortbench/": ROOT / "tools" / "bench_ort",
                              "/tools/": ROOT / "tools"})
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{srv.server_address[1]}/ortbench/ort.html?ep=polyfill")
            return page.evaluate("""async ([layout, runs, n]) => {
              await window.ready;
              const code = await (await fetch('/tools/profile_build.py')).text();
              const py = webnnPolyfill.pyodide();
              py.runPython(code.replace(/^if __name__ == .*$/m, 'if False:'), { globals: py.globals });
              return py.runPython(`report(${JSON.stringify(layout)}, ${runs}, ${n})`, { globals: py.globals });
            }""", [args.layout, args.runs, args.cprofile])
    finally:
        srv.shutdown()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layout", choices=("nhwc", "nchw"), default="nhwc")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cprofile", type=int, default=0, help="print the N costliest functions of one build()")
    p.add_argument("--browser", action="store_true", help="inside the polyfill's Pyodide in headless Chromium")
    args = p.parse_args(argv)
    if args.browser:
        print(in_browser(args))
        return 0
    from webnn_core.backends.cpu import fast

    if not fast.attach_native():
        print("profile_build: the native kernel build is missing (python3 tools/build.py builds it)", file=sys.stderr)
    print(report(args.layout, args.runs, args.cprofile))
    return 0


if __name__ == "__main__":
    sys.exit(main())
