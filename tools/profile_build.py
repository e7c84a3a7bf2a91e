"""Where build() goes on a ResNet50-sized graph (issue 17 item 3), in CPython
with the native build of the kernels (the same Python the browser runs).

    python3 tools/profile_build.py [--layout nhwc|nchw] [--runs 3] [--cprofile N] [--browser]
    python3 tools/profile_build.py --ort squeezenet [--runs 5] [--cprofile N] [--browser]

Builds ResNet50 v1 (53 conv2d with bias, 16 residual adds, relus, pools, gemm;
seeded random weights, ~25.5 M parameters) through webnn_core's builder the way
ORT's WebNN EP does (constants, op calls, build()), and reports the median ms
of the three phases: constants (builder.constant), ops (builder op calls) and
build() (the backend's plan: layout pass, fusion, weight packing, buffers).
--cprofile N prints the N most expensive functions of one build() by cumulative time.
--browser runs the same code inside the polyfill's Pyodide in headless Chromium
(the wasm SIMD kernels; webnnPolyfill.pyodide()), bytes handed over as in CPython.

--ort MODEL (a tools/bench_ort model): what ORT's WebNN EP asks of the engine. The
bridge calls of one ORT session create on the polyfill (after a warm-up create, in
headless Chromium: method, JSON payload, constant byte length, each call's wall ms
in Pyodide) are recorded into test-results/bridge_<model>.json, then replayed through
webnn_core.bridge.call in CPython with the native kernels (`--runs` times, seeded
random constant bytes of the recorded lengths; CPU ms per method), or with --browser
inside the polyfill's Pyodide (wall ms). The same calls without ORT around them.
"""
from __future__ import annotations

import argparse
import cProfile
import contextlib
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


@contextlib.contextmanager
def _ort_bench_page(query: str, mounts: dict):
    """The ORT bench page (tools/bench_ort/ort.html?QUERY) in headless Chromium, served
    with the default mounts, /ortbench/ and `mounts`; server and browser go on exit."""
    from playwright.sync_api import sync_playwright

    import serve

    srv = serve.start(mounts={**serve.default_mounts(), "/ortbench/": ROOT / "tools" / "bench_ort", **mounts})
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{srv.server_address[1]}/ortbench/ort.html?{query}")
            yield page
            browser.close()
    finally:
        srv.shutdown()


def _in_polyfill_page(query: str, body: str, args: list):
    """Evaluate `async ([...args]) => {...body}` on the bench page with only the
    polyfill (tools/bench_ort/ort.html?ep=polyfill&QUERY), after this file was
    run in the page's Pyodide (its functions in py.globals, as `py`)."""
    with _ort_bench_page(f"ep=polyfill{query}", {"/tools/": ROOT / "tools"}) as page:
        return page.evaluate("""async (args) => {
          await window.ready;
          const code = await (await fetch('/tools/profile_build.py')).text();
          const py = webnnPolyfill.pyodide();
          py.runPython(code.replace(/^if __name__ == .*$/m, 'if False:'), { globals: py.globals });
          return (async ([a, b, c]) => { """ + body + """ })(args);
        }""", args)


def in_browser(args) -> str:
    return _in_polyfill_page("", "return py.runPython(`report(${JSON.stringify(a)}, ${b}, ${c})`, "
                                 "{ globals: py.globals });", [args.layout, args.runs, args.cprofile])


# -- ORT's bridge calls: record in the browser, replay without ORT (--ort) ------------------
_RECORDER = r"""
import json as _json, time as _time
import webnn_core.bridge as _bridge
RECORDED = []
class _Decoder:
    def __init__(self, inner):
        self.inner = inner
    def decode(self, payload):
        RECORDED.append({"method": None, "payload": payload, "bytes": None, "result": None, "ms": 0.0})
        return self.inner.decode(payload)
_bridge._DECODER = _Decoder(_bridge._DECODER)
for _name, _f in list(_bridge.METHODS.items()):
    def _timed(*args, _f=_f, _name=_name):
        entry = RECORDED[-1]
        entry["method"] = _name
        if _name in _bridge._TAKES_DATA and args and args[-1] is not None:
            entry["bytes"] = args[-1].nbytes
        t = _time.perf_counter()
        result = _f(*args)
        entry["ms"] = (_time.perf_counter() - t) * 1e3
        if isinstance(result, (int, str)):
            entry["result"] = str(result)
        elif isinstance(result, dict) and "graph" in result:
            entry["result"] = str(result["graph"])
        return result
    _bridge.METHODS[_name] = _timed
"""


def record_ort(model: str) -> Path:
    """The bridge calls of one ORT WebNN-EP session create (after a warm-up create), as JSON."""
    import json

    sys.path.insert(0, str(ROOT / "tools" / "bench_ort"))
    import models as ort_models
    import ort_web

    info = ort_models.ensure(ROOT / ".cache" / "ort-bench", [model])[model]
    problem = ort_web.ensure_ort(ort_web.ORT_VERSION)
    if problem:
        raise SystemExit(f"profile_build: {problem}")
    dist = ort_web.NODE_DIR / ort_web.ORT_VERSION / "node_modules" / "onnxruntime-web" / "dist"
    mounts = {"/ortdist/": dist, "/ortmodels/": ROOT / ".cache" / "ort-bench"}
    with _ort_bench_page("ep=webnn&pthreads=1", mounts) as page:
        text = page.evaluate("""async ([file, recorder]) => {
          await window.ready;
          const bytes = new Uint8Array(await (await fetch('/ortmodels/' + file)).arrayBuffer());
          const options = { executionProviders: [{ name: 'webnn', deviceType: 'cpu' }], graphOptimizationLevel: 'all' };
          await (await ort.InferenceSession.create(bytes, options)).release();  // first-use costs
          const py = webnnPolyfill.pyodide();
          py.runPython(recorder);
          await ort.InferenceSession.create(bytes, options);
          return py.runPython('_json.dumps(RECORDED)');
        }""", [info["file"], _RECORDER])
    out = ROOT / "test-results" / f"bridge_{model}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"model": model, "calls": json.loads(text)}, indent=0) + "\n")
    return out


def replay(calls: list, stats: dict | None = None) -> None:
    """Run recorded bridge calls again (handles renumbered as they are made)."""
    import json
    import re

    from webnn_core import bridge

    rng = np.random.default_rng(0)
    handles: dict = {}
    tagged = re.compile(r'\{"\$o":\s*(\d+)\}')

    def renumber(m):
        return '{"$o":%d}' % handles.get(int(m.group(1)), -1)

    for call in calls:
        method = call["method"]
        if method is None:
            continue
        payload = tagged.sub(renumber, call["payload"])
        n = call["bytes"]
        data = None if n is None else rng.standard_normal((n + 3) // 4).astype(np.float32).tobytes()[:n]
        t = _clock()
        reply = bridge.call(method, payload, data)
        if stats is not None:
            stats.setdefault(method, []).append(_clock() - t)
        if reply.startswith('{"error"'):
            raise RuntimeError(f"{method} failed on replay: {reply[:300]}")
        if call["result"] is None:
            continue
        ok = json.loads(reply)["ok"]
        if method in ("builder_constant", "builder_input", "builder_op", "builder_constant_scalar"):
            was = json.loads(call["result"])
            for a, b in zip(was, ok) if isinstance(was[0], list) else [(was, ok)]:
                handles[a[0]] = b[0]
        elif method == "builder_build":
            handles[int(call["result"])] = ok["graph"]
        elif method in ("create_context", "new_builder", "create_tensor"):
            handles[int(call["result"])] = ok


def replay_report(calls: list, runs: int, cprofile: int) -> str:
    import io

    per_run = []
    for _ in range(runs):
        stats: dict = {}
        replay(calls, stats)
        per_run.append(stats)
    recorded: dict = {}
    for call in calls:
        if call["method"]:
            recorded.setdefault(call["method"], []).append(call["ms"])
    out = io.StringIO()
    clock = "wall" if sys.platform == "emscripten" else "CPU (process_time)"
    out.write(f"{len(calls)} bridge calls; replay {clock} ms per session create, median of {runs} "
              f"(recorded: Pyodide wall ms inside the method in the browser, under ORT):\n")
    out.write(f"{'method':20s} {'calls':>5s} {'replay total':>12s} {'median call':>11s} {'recorded total':>14s} "
              f"{'median call':>11s}\n")
    for method in per_run[0]:
        n = len(per_run[0][method])
        total = statistics.median(sum(r[method]) for r in per_run) * 1e3
        call = statistics.median(t for r in per_run for t in r[method]) * 1e3
        rec = recorded.get(method, [])
        out.write(f"{method:20s} {n:5d} {total:12.2f} {call:11.3f} {sum(rec):14.2f} "
                  f"{statistics.median(rec) if rec else 0:11.3f}\n")
    if cprofile:
        prof = cProfile.Profile(_clock)
        prof.enable()
        replay(calls)
        prof.disable()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(cprofile)
    return out.getvalue()


def replay_in_browser(calls: list, runs: int, cprofile: int) -> str:
    import json

    return _in_polyfill_page("&pthreads=1", "py.globals.set('CALLS_JSON', a); "
                             "return py.runPython(`import json; replay_report(json.loads(CALLS_JSON), ${b}, ${c})`, "
                             "{ globals: py.globals });", [json.dumps(calls), runs, cprofile])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layout", choices=("nhwc", "nchw"), default="nhwc")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cprofile", type=int, default=0, help="print the N costliest functions of one build()")
    p.add_argument("--browser", action="store_true", help="inside the polyfill's Pyodide in headless Chromium")
    p.add_argument("--ort", metavar="MODEL", help="record ORT's bridge calls for MODEL's session create, replay them")
    p.add_argument("--calls", type=Path, help="with --ort: replay this recording instead of recording again")
    args = p.parse_args(argv)
    if args.ort:
        import json

        path = args.calls or record_ort(args.ort)
        calls = json.loads(path.read_text())["calls"]
        print(f"profile_build: {path}", file=sys.stderr)
        if args.browser:
            print(replay_in_browser(calls, args.runs, args.cprofile))
            return 0
        from webnn_core.backends.cpu import fast

        if not fast.attach_native():
            print("profile_build: the native kernel build is missing (python3 tools/build.py builds it)",
                  file=sys.stderr)
        print(replay_report(calls, args.runs, args.cprofile))
        return 0
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
