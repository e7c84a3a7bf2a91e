"""Where a small graph's session.run goes (issue 17): ORT's WebNN EP on the
polyfill in headless Chromium, on a model of tools/bench_ort/models.py.

    python3 tools/profile_run.py [--model transformer] [--runs 300] [--steps] [--cpu-profile]

Prints medians (and mins) over --runs session.run calls of
  * session.run itself;
  * each MLContext call ORT makes per run (writeTensor, dispatch, readTensor)
    timed in JS, and the same call's Python side (webnn_core.bridge method)
    and, for dispatch, the cpu backend's execute(), timed inside Pyodide;
  * with --steps, every step of every WebNN graph's cpu plan (ORT makes one
    per partition), run inside Pyodide (kernel + per-step overhead; Pyodide's
    clock has 5 µs resolution on a cross-origin isolated page, so read medians
    and minima over many runs): per graph, per op, and every step of the last
    graph; with --no-op-kernels also with every kernel replaced by a JS no-op
    (what a step costs besides its kernel: Python and the crossing; calls
    split over the kernel pool still run the pool's real kernels).
  * with --cpu-profile, first (before any wrapper is installed) a V8 CPU
    profile of --runs session.run calls (Chrome DevTools Protocol Profiler,
    100 µs samples): ms per run by where the sampled code is (the polyfill's
    SIMD kernels by function, Python = Pyodide's interpreter and libc, numpy,
    the polyfill's JS, ORT's wasm and JS, the browser's own work, idle, GC),
    and the inclusive ms of the settle tasks the tensor timeline queues.
The difference between a JS time and its Python time is the bridge and the
shim (argument conversion, JSON, the call into Pyodide, promise settling).
Measurement only: it wraps the page's MLContext methods and the engine's
bridge functions after the session is created.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench_ort"))
import machine  # noqa: E402
import models as ort_models  # noqa: E402
import ort_web  # noqa: E402
import serve  # noqa: E402

MODEL_DIR = ROOT / ".cache" / "ort-bench"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

# Inside Pyodide: time the bridge methods and the cpu backend's execute per call.
WRAP_PY = r'''
import time
import webnn_core.bridge as _bridge
from webnn_core.backends.cpu.backend import CpuBackend as _Cpu
PROFILE_RUN = {}
def _timed(name, fn):
    def timed(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            PROFILE_RUN.setdefault(name, []).append((time.perf_counter() - start) * 1e3)
    return timed
for _name in ("write_tensor", "dispatch", "read_tensor"):
    # The general call (METHODS) and the numbers-only hot calls (write_fast, ...: they call the module's function).
    _bridge.METHODS[_name] = _timed("python " + _name, _bridge.METHODS[_name])
    setattr(_bridge, _name, _bridge.METHODS[_name])
_Cpu.execute = _timed("python execute", _Cpu.execute)
'''

# Inside Pyodide: every step of every WebNN graph's cpu plan (ORT may build several
# per session), timed one by one; with NO_OP, again with every kernel of the
# library replaced by a JS function that returns at once: what is left is the
# step's Python and the crossing into the kernel (the kernels' own time is the
# difference).
STEPS_PY = r'''
import json, statistics, time
import numpy as np
import webnn_core.bridge as _bridge
from webnn_core.backends.cpu import fast as _fast
try:
    from webnn_core.backends.cpu.reference import coerce_to
except ImportError:  # an older build
    coerce_to = None
graphs = [o for o in _bridge._objects.values() if type(o).__name__ == "Graph"]

def time_steps(graph):
    plan, cpu = graph.plan, graph.context.backend
    feeds = {name: np.full(op.shape, 0.5, np.float32) for name, op in plan.inputs.items()}
    program = getattr(plan, "program", None)
    times = [[] for _ in plan.nodes]
    for _ in range(RUNS):
        # What CpuBackend.execute does (its resolved program; builds without one: run_node), step by step.
        env = dict(plan.constants)
        for name, operand in plan.inputs.items():
            env[operand.id] = feeds[name]
        for i, step in enumerate(plan.nodes):
            args = [None if o is None else env[o.id] for o in step.inputs]
            start = time.perf_counter()
            if program is None:
                out = cpu.run_node(step, args)
            else:
                _, compute, fast_path, _, _, want, _ = program[i]
                out = fast_path(cpu, step.attrs, *args) if fast_path is not None and cpu.fast_paths else None
                if out is None:
                    out = compute(step.attrs, *args)
                out = [coerce_to(v, d, s) for v, (d, s) in zip(out if isinstance(out, (list, tuple)) else [out], want)]
            times[i].append((time.perf_counter() - start) * 1e3)
            env.update((o.id, v) for o, v in zip(step.outputs, out))
    return [[s.op.name, [list(o.shape) for o in s.inputs if o is not None], statistics.median(t), min(t), s.label or ""]
            for s, t in zip(plan.nodes, times)]

def forget_call_plans():
    # the fast paths cache their resolved kernel calls (`_plan`, `_call`) on first use
    for g in graphs:
        for step in g.plan.nodes:
            step.attrs.pop("_plan", None)
            step.attrs.pop("_call", None)

result = {"steps": [time_steps(g) for g in graphs], "noop": None}
if NO_OP:
    from pyodide.code import run_js
    lib, noop = _fast.library(), run_js("() => 0")
    saved = {k: v for k, v in vars(lib).items() if not k.startswith("_") and k != "fused_madd"}
    try:
        for k in saved:
            setattr(lib, k, noop)
        forget_call_plans()
        result["noop"] = [time_steps(g) for g in graphs]
    finally:
        for k, v in saved.items():
            setattr(lib, k, v)
        forget_call_plans()
json.dumps(result)
'''

SETUP_JS = r"""async (m) => {
  await window.ready;
  const bytes = new Uint8Array(await (await fetch(`/ortmodels/${m.file}`)).arrayBuffer());
  const session = await ort.InferenceSession.create(bytes, { executionProviders: [{ name: 'webnn', deviceType: 'cpu' }] });
  const feeds = {};
  m.inputs.forEach(([name, shape]) => {
    feeds[name] = new ort.Tensor('float32', new Float32Array(shape.reduce((a, b) => a * b, 1)).fill(0.5), shape);
  });
  for (let i = 0; i < 30; i++) await session.run(feeds);
  window.profiled = { session, feeds };
}"""

# The runs a CPU profile samples (nothing wrapped yet).
PLAIN_RUNS_JS = r"""async (runs) => {
  const { session, feeds } = window.profiled;
  let ms = 0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await session.run(feeds);
    ms += performance.now() - t;
  }
  return ms;
}"""

PAGE_JS = r"""async ([m, runs, wrapPy, stepsPy]) => {
  const { session, feeds } = window.profiled;
  const py = webnnPolyfill.pyodide();
  py.runPython(wrapPy);
  const js = {};
  for (const name of ['writeTensor', 'dispatch', 'readTensor']) {
    const d = Object.getOwnPropertyDescriptor(MLContext.prototype, name);
    const fn = d.value;
    Object.defineProperty(MLContext.prototype, name, { ...d, value: function (...a) {
      const t = performance.now();
      try { return fn.apply(this, a); } finally { (js['JS ' + name] ??= []).push(performance.now() - t); }
    } });
  }
  const run = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await session.run(feeds);
    run.push(performance.now() - t);
  }
  const pyTimes = JSON.parse(py.runPython('import json; json.dumps(PROFILE_RUN)'));
  const steps = stepsPy ? JSON.parse(py.runPython(stepsPy)) : null;
  return { calls: { 'session.run': run, ...js, ...pyTimes }, steps };
}"""


def _where(frame, kernel_scripts) -> str:
    """The category of a profile sample's leaf frame."""
    url, name = frame["url"], frame["functionName"]
    if name in ("(idle)", "(program)", "(garbage collector)"):
        return {"(idle)": "idle", "(program)": "browser (V8/Blink native: tasks, messages, ...)",
                "(garbage collector)": "JS garbage collector"}[name]
    if frame["scriptId"] in kernel_scripts:
        return f"kernels: {name}"
    base = url.rsplit("/", 1)[-1]
    if "pyodide.asm" in base:
        return "Python (Pyodide: interpreter, libc, FFI)"
    if base.startswith("ort-wasm") and base.endswith(".wasm"):
        return "ORT wasm (its kernels: Sum, ...)"
    if base.startswith("ort") or base == "ort.js":
        return "ORT JS (and the bench page)"
    if base == "webnn-polyfill.js":
        return "polyfill JS"
    if url.startswith("wasm://") or not base:
        return "numpy and other wasm side modules" if url.startswith("wasm://") else f"browser builtins: {name or '?'}"
    return f"other: {base}"


def cpu_profile_split(profile: dict, runs: int) -> list:
    """[(category, ms per run)] from a CDP Profiler profile, largest first, then the settle tasks' inclusive ms."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}
    # The kernels' wasm module: the one whose functions are named wk_* (its name section).
    kernel_scripts = {n["callFrame"]["scriptId"] for n in profile["nodes"]
                      if n["callFrame"]["functionName"].startswith("wk_")}
    deltas = profile["timeDeltas"]
    split, settle, seen = {}, 0.0, {}
    for i, sample in enumerate(profile["samples"]):
        dt = deltas[i + 1] if i + 1 < len(deltas) else 0
        key = seen.get(sample)
        if key is None:
            where = _where(nodes[sample]["callFrame"], kernel_scripts)
            in_settle, nid = False, sample
            while nid in nodes:
                if nodes[nid]["callFrame"]["functionName"] == "runSettle":
                    in_settle = True
                    break
                nid = parent.get(nid)
            key = seen[sample] = (where, in_settle)
        split[key[0]] = split.get(key[0], 0.0) + dt
        settle += dt if key[1] else 0.0
    rows = sorted(((k, v / 1e3 / runs) for k, v in split.items()), key=lambda kv: -kv[1])
    return rows + [("(inclusive) the tensor timeline's settle tasks", settle / 1e3 / runs)]


def print_steps(graphs: list, noop: list | None) -> None:
    """Per graph and per op: sums of the steps' medians and minima (and of the no-op-kernel minima)."""
    extra = " | no-op kernels: sum of minima" if noop else ""
    print(f"\n| graph | steps | sum of medians ms | sum of minima ms{extra} |\n|---:|---:|---:|---:|" + ("---:|" if noop else ""))
    per_op: dict = {}
    for g, steps in enumerate(graphs):
        cells = f"| {g} | {len(steps)} | {sum(s[2] for s in steps):.3f} | {sum(s[3] for s in steps):.3f} |"
        if noop:
            cells += f" {sum(s[3] for s in noop[g]):.3f} |"
        print(cells)
        for i, (name, _, med, low, _label) in enumerate(steps):
            e = per_op.setdefault(name, [0, 0.0, 0.0, 0.0])
            e[0] += 1
            e[1] += med
            e[2] += low
            e[3] += noop[g][i][3] if noop else 0.0
    total = [sum(e[k] for e in per_op.values()) for k in range(4)]
    print(f"| all | {total[0]} | {total[1]:.3f} | {total[2]:.3f} |" + (f" {total[3]:.3f} |" if noop else ""))
    print(f"\n| op | steps | sum of medians ms | sum of minima ms{extra} |\n|---|---:|---:|---:|" + ("---:|" if noop else ""))
    for name, (n, med, low, nop) in sorted(per_op.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {n} | {med:.3f} | {low:.3f} |" + (f" {nop:.3f} |" if noop else ""))
    print("\n| step of the last graph | input shapes | median ms | min ms |\n|---|---|---:|---:|")
    for name, shapes, med, low, _label in graphs[-1]:
        print(f"| {name} | {' '.join('x'.join(map(str, s)) or 'scalar' for s in shapes)} | {med:.3f} | {low:.3f} |")
    # The layout pass's transposes (an NCHW graph on NHWC kernels): where each sits and what it costs.
    rows = [(g, i, shapes, label, med, low) for g, steps in enumerate(graphs)
            for i, (name, shapes, med, low, label) in enumerate(steps) if name == "transpose"]
    if rows:
        print("\n| transpose step | graph | step | input shape | median ms | min ms |\n|---|---:|---:|---|---:|---:|")
        for g, i, shapes, label, med, low in rows:
            print(f"| {label or 'transpose'} | {g} | {i} | {'x'.join(map(str, shapes[0]))} | {med:.3f} | {low:.3f} |")


def stats(values):
    s = sorted(values)
    return s[len(s) // 2], s[0]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="transformer", choices=list(ort_models.MODELS))
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--steps", action="store_true", help="also time every step of the graphs' cpu plans")
    p.add_argument("--no-op-kernels", action="store_true",
                   help="with --steps: time the steps again with no-op kernels (Python + crossing per step)")
    p.add_argument("--cpu-profile", action="store_true", help="also split --runs session.run calls by a V8 CPU profile")
    p.add_argument("--dist", type=Path, default=ROOT / "dist", help="the polyfill build to load")
    p.add_argument("--ort-version", default=ort_web.ORT_VERSION,
                   help="onnxruntime-web version (1.22.0 builds NHWC convs for deviceType cpu, 1.23+ NCHW)")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    info = ort_models.ensure(MODEL_DIR, [args.model])
    model = {"name": args.model, **info[args.model]}
    ort_dir = ort_web.NODE_DIR / args.ort_version
    why = ort_web.ensure_ort(args.ort_version)
    if why:
        print(f"profile_run: onnxruntime-web unavailable: {why}", file=sys.stderr)
        return 1
    srv = serve.start(mounts={**serve.default_mounts(), "/dist/": args.dist.resolve(), "/ortbench/": HERE / "bench_ort",
                              "/ortdist/": ort_dir / "node_modules" / "onnxruntime-web" / "dist",
                              "/ortmodels/": MODEL_DIR})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{srv.server_address[1]}/ortbench/ort.html?ep=webnn")
            steps_py = (STEPS_PY.replace("RUNS", str(args.runs)).replace("NO_OP", str(args.no_op_kernels))
                        if args.steps else None)
            page.evaluate(SETUP_JS, model)
            split = None
            if args.cpu_profile:
                cdp = page.context.new_cdp_session(page)
                cdp.send("Profiler.enable")
                cdp.send("Profiler.setSamplingInterval", {"interval": 100})
                cdp.send("Profiler.start")
                wall = page.evaluate(PLAIN_RUNS_JS, args.runs)
                profile = cdp.send("Profiler.stop")["profile"]
                split = (wall / args.runs, (profile["endTime"] - profile["startTime"]) / 1e3 / args.runs,
                         cpu_profile_split(profile, args.runs))
            result = page.evaluate(PAGE_JS, [model, args.runs, WRAP_PY, steps_py])
            version = browser.version
            browser.close()
    finally:
        srv.shutdown()
    print(f"{args.model}, {args.runs} runs; onnxruntime-web {args.ort_version}; headless Chromium {version}; {machine.cpu_model()}, {os.cpu_count()} cores; "
          f"{machine.utc_now()}; commit {machine.commit()}; load average at start {machine.load_average()}\n")
    if split:
        wall, sampled, rows = split
        print(f"CPU profile: session.run {wall:.3f} ms per run (mean, profiler on); profile spans {sampled:.3f} ms per run\n")
        print("| where (leaf frame of each sample) | ms per run |\n|---|---:|")
        for name, ms in rows:
            print(f"| {name} | {ms:.3f} |")
        print()
    print("| what | calls per run | median ms | min ms |\n|---|---:|---:|---:|")
    for name, values in result["calls"].items():
        med, low = stats(values)
        print(f"| {name} | {len(values) / args.runs:g} | {med:.3f} | {low:.3f} |")
    if result["steps"]:
        print_steps(result["steps"]["steps"], result["steps"]["noop"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
