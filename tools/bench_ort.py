"""ONNX Runtime Web on the same ONNX models three ways, in one run, in headless
Chromium: ORT's own wasm EP on 1 thread and on N threads (N =
navigator.hardwareConcurrency; the bench server sends COOP/COEP, so the page is
cross-origin isolated and ORT may start its thread pool), and ORT's WebNN EP
(deviceType "cpu") on navigator.ml = this polyfill (issue 17 item 4), for each
onnxruntime-web version in --versions (default 1.22.0 and 1.30.0, one after the
other). Every output of every model on the WebNN EP pages is compared with ORT's
wasm EP on 1 thread (1e-3 + 1e-3·|ref|, tools/ort_web.network_mismatch): a
mismatch, like a WebNN EP page that fails, fails the run (exit status 1).

    python3 tools/bench_ort.py [--versions 1.22.0,1.30.0] [--runs N] [--models a,b] [--budget S] [--markdown docs/performance.md]
    python3 tools/bench_ort.py --standin [--configs wasm1,standin] [--create-runs K] [--standin-runs R]
    ./dev bench ort ...

The models are built by tools/bench_ort/models.py with the PyPI `onnx` package
(onnx's shipped light nets with seeded random weights, a 2-layer MLP, one
transformer block) into .cache/ort-bench/; onnxruntime-web (pinned) is
installed from npm into .cache/node-ort/<version>/ on first use (tools/ort_web.ensure_ort). Each
configuration runs in a fresh browser; per model: session create, the first
session.run, untimed warm-up runs (at least 3, and until --warmup seconds have
passed: V8 first runs wasm on its baseline tier and tiers hot functions up in the
background, which for ORT's large module takes seconds), then the median and min
of N session.run (fewer when --budget seconds pass, at least 3).

--standin adds a page where ORT's WebNN EP runs on a zero-cost WebNN stand-in
(tools/bench_ort/standin.js: builder calls answer at once with the operand
descriptors a real create on the polyfill recorded, build() settles in a queued
task, the polyfill's opSupportLimits table): ORT's own create time measured directly. That
page creates each model K times on the polyfill and K times on the stand-in,
interleaved; then (--standin-runs R, default 30) it runs one session each on ORT's
wasm EP, the polyfill and the stand-in in R interleaved rounds: ORT's own
session.run, the floor its WebNN EP puts under any WebNN implementation (the
stand-in's writes and dispatches do nothing, its promises settle in a queued task as
the spec obliges, its reads hand back zeros). Prints markdown tables; --markdown writes
them between `<!-- bench-ort:begin -->` / `<!-- bench-ort:end -->`.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench_ort"))
import machine  # noqa: E402
import models as ort_models  # noqa: E402
import ort_web  # noqa: E402
import serve  # noqa: E402

ORT_WEB_VERSION = ort_web.ORT_VERSION  # the newest pinned onnxruntime-web (the stand-in tests' version)
ORT_WEB_VERSIONS = ort_web.ORT_VERSIONS  # what a plain run benchmarks: every pinned version, one after the other
MODEL_DIR = ROOT / ".cache" / "ort-bench"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-first-run"]


# The stand-in page collects garbage before each timed create (ort.js settleHeap): V8's gc().
STANDIN_ARGS = ARGS + ["--js-flags=--expose-gc"]


def log(*args):
    print("bench_ort:", *args, file=sys.stderr, flush=True)


CONFIGS = ("wasm1", "wasmN", "webnn1", "webnn", "standin")


def configurations(threads: int, layout: str | None = None, standin: bool = False):
    yield "wasm1", "ORT wasm, 1 thread", "ep=wasm&threads=1"
    yield "wasmN", f"ORT wasm, {threads} threads", f"ep=wasm&threads={threads}"
    # the polyfill's kernels on 1 thread, then on its default (navigator.hardwareConcurrency)
    extra = f"&layout={layout}" if layout else ""
    said = f", reporting preferredInputLayout {layout}" if layout else ""
    yield "webnn1", f"WebNN EP on the polyfill, 1 kernel thread{said}", f"ep=webnn&pthreads=1{extra}"
    yield "webnn", f"WebNN EP on the polyfill (cpu, default threads{said})", f"ep=webnn{extra}"
    if standin:
        yield "standin", "WebNN EP on a zero-cost stand-in (ORT's own create)", f"ep=standin{extra}"


def run(args, version: str = ORT_WEB_VERSION) -> dict:
    from playwright.sync_api import sync_playwright

    info = ort_models.ensure(MODEL_DIR, args.models)
    model_list = [{"name": n, **info[n]} for n in args.models]
    # the fresh pages' warm-up model (first_creates), whose tape the stand-in page records too
    warm = (info.get("mlp") or ort_models.ensure(MODEL_DIR, ["mlp"])["mlp"]) if args.first_runs > 0 else None
    results = {"ortVersion": version}
    with bench_server(version) as base:
        with sync_playwright() as p:
            for key, label, query in configurations(args.threads or os.cpu_count() or 2, args.preferred_layout,
                                                    args.standin or "standin" in args.configs):
                if key not in args.configs and not (key == "standin" and args.standin):
                    continue
                log(f"{label} ...")
                t = time.time()
                browser = p.chromium.launch(executable_path=CHROMIUM, args=STANDIN_ARGS if key == "standin" else ARGS)
                try:
                    page = browser.new_page()
                    page.goto(f"{base}?{query}", timeout=args.page_timeout * 1000)
                    models = model_list
                    if key == "standin" and warm and "mlp" not in args.models:
                        models = model_list + [{"name": "mlp", **warm}]
                    runs = args.standin_runs if key == "standin" else args.runs
                    r = page.evaluate("([m, n, b, w, k]) => runBench(m, n, b, w, k)",
                                      [models, runs, args.budget, args.warmup, args.create_runs])
                    results["version"] = browser.version
                    results["warmupSeconds"] = args.warmup
                except Exception as e:  # one configuration failing must not sink the others
                    r = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}", "models": {}}
                finally:
                    browser.close()
                r["label"] = label
                results[key] = r
                log(f"  {label}: {r.get('error') or 'ok'} ({time.time() - t:.0f} s)")
            if results.get("standin", {}).get("models") and warm:
                results["first"] = first_creates(p, base, model_list, warm, results["standin"], args)
    return results


FIRST_PAGES = (("wasm", "ep=wasm&threads=1&first=1"), ("polyfill", "ep=webnn&first=1"),
               ("standin", "ep=standinalone&first=1"))


def first_creates(p, base: str, model_list: list, warm: dict, standin: dict, args) -> dict:
    """Each model's first session create in a fresh page (a new browser context each, after an
    untimed create of the MLP on the same EP), on ORT's wasm EP, on the WebNN EP on the
    polyfill and on the stand-in alone (given the tapes the stand-in page recorded),
    `--first-runs` times each, interleaved."""
    out: dict = {}
    extra = f"&layout={args.preferred_layout}" if args.preferred_layout else ""
    log(f"first creates in fresh pages ({args.first_runs} x {len(FIRST_PAGES)} per model) ...")
    t = time.time()
    browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
    warm_tape = standin["models"].get("mlp", {}).get("tape")
    try:
        for rep in range(args.first_runs):
            for m in model_list:
                rec = standin["models"].get(m["name"], {})
                if "tape" not in rec or warm_tape is None:
                    continue
                setup = {"limits": standin["limits"], "builderMethods": standin["builderMethods"], "tape": rec["tape"],
                         "warmTape": warm_tape}
                for engine, query in FIRST_PAGES:
                    e = out.setdefault(m["name"], {}).setdefault(engine, [])
                    ctx = browser.new_context()
                    try:
                        page = ctx.new_page()
                        page.goto(f"{base}?{query}{extra}", timeout=args.page_timeout * 1000)
                        page.evaluate("() => window.ready")
                        r = page.evaluate("([m, w, s]) => runFirst(m, w, s)", [m, warm, setup])["models"][m["name"]]
                    except Exception as ex:  # noqa: BLE001 - reported in the table
                        r = {"error": f"{type(ex).__name__}: {str(ex).splitlines()[0][:200]}"}
                    finally:
                        ctx.close()
                    if r.get("error"):
                        out[m["name"]].setdefault("errors", []).append(f"{engine}: {r['error']}")
                    else:
                        e.append(r["createMs"])
                    if engine == "standin" and r.get("standin"):
                        out[m["name"]]["standinStats"] = r["standin"]
    finally:
        browser.close()
    log(f"  first creates: ok ({time.time() - t:.0f} s)")
    return out


@contextlib.contextmanager
def bench_server(version: str = ORT_WEB_VERSION):
    """The bench page's server (dist/, ORT `version`'s dist, the models); yields the page's URL."""
    srv = serve.start(mounts={**serve.default_mounts(), "/ortbench/": HERE / "bench_ort",
                              "/ortdist/": ort_web.ort_dir(version) / "dist",
                              "/ortmodels/": MODEL_DIR})
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/ortbench/ort.html"
    finally:
        srv.shutdown()


def layout_ab(args, version: str) -> dict:
    """--layout-ab: one page, the WebNN EP sessions of each reported layout and ORT's wasm EP interleaved."""
    from playwright.sync_api import sync_playwright

    info = ort_models.ensure(MODEL_DIR, args.models)
    model_list = [{"name": n, **info[n]} for n in args.models]
    layouts = args.layout_ab.split(",")
    with bench_server(version) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(f"{base}?ep=webnn&layout=ab", timeout=args.page_timeout * 1000)
            r = page.evaluate("([m, n, w, l]) => runLayoutAB(m, n, w, l)", [model_list, args.runs, args.warmup, layouts])
            r["chromium"] = browser.version
        except Exception as e:  # noqa: BLE001 - reported
            r = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:300]}", "models": {}, "layouts": layouts}
        finally:
            browser.close()
    return r


def layout_ab_table(r: dict, names: list) -> tuple[str, list]:
    """The A/B table and the mismatches of the layout the polyfill reports by default."""
    if r.get("error"):
        return f"- layout A/B: **unavailable**: {r['error']}\n", [r["error"]]
    layouts, failed = r["layouts"], []
    out = [f"onnxruntime-web {r.get('ortVersion')}, headless Chromium {r.get('chromium')}: one page, per model one WebNN "
           f"EP session (deviceType cpu, the polyfill's default {threads_line(r)} kernel threads) per reported "
           f"`preferredInputLayout` ({', '.join(layouts)}; the polyfill itself reports {r.get('polyfillLayout')}) and "
           f"one on ORT's wasm EP (1 thread), warm-up, then {args_runs(r)} rounds of one `session.run` each, "
           f"interleaved (order reversed every other round): median (min) ms; ratio: median over rounds of "
           f"{layouts[-1]} ÷ {layouts[0]} in the same round; outputs: each WebNN EP session's first run against the "
           f"wasm EP's (1e-3 + 1e-3·|ref|).\n",
           "| model | " + " | ".join(f"WebNN EP, {l}" for l in layouts) + " | ORT wasm, 1 thread | "
           f"per-round {layouts[-1]} ÷ {layouts[0]} | " + " | ".join(f"outputs, {l}" for l in layouts) + " |",
           "|---|" + "---:|" * (len(layouts) + 2) + "---|" * len(layouts)]
    for n in names:
        m = r["models"].get(n, {})
        if m.get("error"):
            out.append(f"| {ort_models.TITLES[n]} | error: {m['error'].replace('|', '/')[:150]} |")
            failed.append(f"{n}: {m['error']}")
            continue
        cells = [f"{fmt(statistics.median(m['runsMs'][e]))} ({fmt(min(m['runsMs'][e]))})" for e in layouts + ["wasm"]]
        a, b = m["runsMs"][layouts[0]], m["runsMs"][layouts[-1]]
        per_round = statistics.median(y / x for x, y in zip(a, b)) if a else None
        checks = []
        for l in layouts:
            why = None
            for o, ref in m["outputs"]["wasm"].items():
                got = m["outputs"][l].get(o)
                why = f"{o}: missing" if got is None else ort_web.network_mismatch(
                    np.reshape(got["data"], got["dims"]), np.reshape(ref["data"], ref["dims"]))
                if why:
                    why = f"{o}: {why}"
                    break
            checks.append("match" if why is None else f"**MISMATCH**: {why}".replace("|", "/")[:160])
            if why and l == r.get("polyfillLayout"):
                failed.append(f"{n} ({l}, the polyfill's own): {why}")
        out.append(f"| {ort_models.TITLES[n]} | " + " | ".join(cells) + f" | {'–' if per_round is None else f'{per_round:.2f}×'} | "
                   + " | ".join(checks) + " |")
    return "\n".join(out) + "\n", failed


def args_runs(r: dict) -> int:
    return max((len(v) for m in r.get("models", {}).values() for v in m.get("runsMs", {}).values()), default=0)


def output_checks(res: dict) -> dict:
    """{(page key, model): None when the WebNN EP page's every output matches ORT wasm on 1 thread
    (ort_web.network_mismatch: 1e-3 + 1e-3·|ref|), else why not}, for each WebNN EP page and model
    that ran; a model the WebNN EP failed on counts as a mismatch."""
    ref = res.get("wasm1", {}).get("models", {})
    out = {}
    for key in ("webnn1", "webnn"):
        for name, m in (res.get(key) or {}).get("models", {}).items():
            r = ref.get(name)
            if r is None or r.get("error") or "outputs" not in r:
                continue  # no reference in this run (wasm1 not run or failed): said in the table
            if m.get("error") or "outputs" not in m:
                out[(key, name)] = f"no outputs: {m.get('error', 'not run')}"
                continue
            why = None
            for o in r["outputs"]:
                got = m["outputs"].get(o)
                if got is None:
                    why = f"{o}: missing"
                    break
                why = ort_web.network_mismatch(np.reshape(got["data"], got["dims"]),
                                               np.reshape(r["outputs"][o]["data"], r["outputs"][o]["dims"]))
                if why:
                    why = f"{o}: {why}"
                    break
            out[(key, name)] = why
    return out


def fmt(ms) -> str:
    if ms is None:
        return "–"
    if abs(ms) >= 100:
        return f"{ms:,.0f}".replace(",", " ")
    if abs(ms) >= 10:
        return f"{ms:.1f}"
    if abs(ms) >= 0.1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"


def ratio(a, b) -> str:
    return "–" if a is None or b is None or b <= 0 else f"{a / b:.2f}×"


def machine_line() -> str:
    return (f"{machine.cpu_model()}, {os.cpu_count()} cores; {machine.utc_now()}; commit {machine.commit()}; "
            f"load average at start {machine.load_average()}")


def threads_line(r) -> str:
    t = (r or {}).get("polyfillThreads") or {}
    if not t:
        return "–"
    return f"{t.get('active')} active of {t.get('requested')}" + (f" ({t['reason']})" if t.get("reason") else "")


def table(res: dict, names: list) -> str:
    keys = ["wasm1", "wasmN", "webnn1", "webnn"]
    labels = {k: res[k]["label"] for k in keys if k in res}
    if not {"wasm1", "webnn1", "webnn"} & labels.keys():  # e.g. only the stand-in run table's wasm N page
        return ""
    out = []
    iso = res.get("wasmN", {}).get("crossOriginIsolated")
    out.append(f"onnxruntime-web {res.get('ortVersion', ORT_WEB_VERSION)} (`ort.min.js`, its jsep build: wasm EP and WebNN EP); "
               f"headless Chromium {res.get('version')}; page cross-origin isolated: {iso}; "
               f"navigator.hardwareConcurrency {res.get('wasmN', {}).get('hardwareConcurrency')}. "
               f"The WebNN EP page runs ORT itself on 1 thread (nodes it does not hand to WebNN run on ORT's wasm "
               f"kernels); the polyfill's engine start ({fmt(res.get('webnn', {}).get('engineStartMs'))} ms) is "
               f"before any timing. The polyfill's kernel threads (engineStats.threads): "
               f"{threads_line(res.get('webnn1'))} in the 1-thread column, {threads_line(res.get('webnn'))} in the "
               f"default one.\n")
    for k in keys:
        if res.get(k, {}).get("error"):
            out.append(f"- {labels[k]}: **unavailable**: {res[k]['error']}")
    out.append("")
    out.append("The first model's session is created once before timing (ORT compiles its wasm there). "
               f"Each model's timed runs follow untimed warm-up runs (at least 3 and {res.get('warmupSeconds', '?')} s; "
               "V8 tiers wasm up in the background). "
               "max |Δ| / max |y|: the first 64 outputs of the WebNN EP against ORT wasm on 1 thread, "
               "relative to the largest of them (a check that both ran the same network). WebNN calls per run: the "
               "MLContext writeTensor / dispatch / readTensor calls ORT makes in one session.run (one dispatch per "
               "WebNN graph ORT cut the model into).\n")
    out.append("`session.run` median ms (min), WebNN EP (default threads) ÷ ORT wasm (above 1: the polyfill is "
               "slower), and the polyfill's N-thread speed-up over its 1 kernel thread:\n")
    out.append("| model | " + " | ".join(labels[k] for k in keys if k in labels) +
               " | WebNN EP / wasm 1 thread | WebNN EP / wasm N threads | polyfill 1 thread / N threads"
               " | max \\|Δ\\| / max \\|y\\|, WebNN EP vs wasm | every output vs wasm 1 thread (1e-3 + 1e-3·\\|ref\\|)"
               " | WebNN calls per run (write / dispatch / read) |")
    out.append("|---|" + "---:|" * (len(labels) + 5) + "---|")
    checks = output_checks(res)
    for n in names:
        cells, med = [], {}
        for k in keys:
            if k not in labels:
                continue
            m = res[k].get("models", {}).get(n, {})
            if m.get("error") or "medianMs" not in m:
                cells.append("error: " + str(m.get("error", "not run")).replace("|", "/")[:90])
            else:
                med[k] = m["medianMs"]
                cells.append(f"{fmt(m['medianMs'])} ({fmt(m['minMs'])})")
        diff = "–"
        a, b = res.get("webnn", {}).get("models", {}).get(n, {}), res.get("wasm1", {}).get("models", {}).get(n, {})
        if a.get("output") and b.get("output"):
            scale = max(abs(y) for y in b["output"]) or 1.0
            diff = f"{max(abs(x - y) for x, y in zip(a['output'], b['output'])) / scale:.1e}"
        per_run = a.get("callsPerRun")
        calls = "–" if not per_run else " / ".join(f"{per_run[k]:g}" for k in ("write", "dispatch", "read"))
        verdicts = [(k, checks[(k, n)]) for k in ("webnn1", "webnn") if (k, n) in checks]
        if not verdicts:
            check = "– (no reference)"
        elif all(why is None for _, why in verdicts):
            check = "match"
        else:
            check = "**MISMATCH**: " + "; ".join(f"{k}: {why}" for k, why in verdicts if why).replace("|", "/")[:200]
        out.append(f"| {ort_models.TITLES[n]} | " + " | ".join(cells) +
                   f" | {ratio(med.get('webnn'), med.get('wasm1'))} | {ratio(med.get('webnn'), med.get('wasmN'))}"
                   f" | {ratio(med.get('webnn1'), med.get('webnn'))} | {diff} | {check} | {calls} |")
    if any(n in ort_models.SUM_AS_ADD for n in names):
        out.append("")
        out.append("The \"extra\" row is not a benchmark model: the same ShuffleNet with each 2-input Sum written as Add "
                   "(tools/bench_ort/models.py; likewise ResNet50 when asked for). ORT's WebNN EP has no builder for ONNX "
                   "Sum, so on the real model it runs 14 WebNN graphs with its own wasm Sum between them (14 writeTensor, "
                   "14 dispatch, 27 readTensor per run); with Add the polyfill gets the whole network as one graph. It "
                   "shows the cost of ORT's partitioning, never the ShuffleNet result.")
    out.append("")
    out.append("Session create ms (`InferenceSession.create` from the model bytes), and WebNN EP ÷ wasm 1 thread:\n")
    out.append("| model | " + " | ".join(labels[k] for k in keys if k in labels) + " | WebNN EP / wasm 1 thread |")
    out.append("|---|" + "---:|" * (len(labels) + 1))
    for n in names:
        cells, cr = [], {}
        for k in keys:
            if k not in labels:
                continue
            m = res[k].get("models", {}).get(n, {})
            cr[k] = m.get("createMs")
            cells.append(fmt(m.get("createMs")))
        out.append(f"| {ort_models.TITLES[n]} | " + " | ".join(cells) + f" | {ratio(cr.get('webnn'), cr.get('wasm1'))} |")
    out.append("")
    rows = [(n, res.get("webnn", {}).get("models", {}).get(n, {})) for n in names]
    if any(m.get("builder") for _, m in rows):
        out.append("Where the WebNN EP's session create goes: ms inside ORT's calls into the polyfill (only the outermost "
                   "call counts; build() until its promise settles; \"median call\": the typical call, where a "
                   "loaded machine adds pauses to a few). \"other polyfill calls\": "
                   "navigator.ml.createContext (ORT makes a context per session), new MLGraphBuilder, the MLContext, "
                   "MLGraph, MLTensor and MLOperand calls; \"in the engine\": the part of all of these spent inside "
                   "the engine's bridge calls (Python and the JS/Python crossing, engineStats.engine); \"rest (ORT)\": "
                   "create minus every polyfill call, ORT's own work (parsing, graph optimisation, partitioning, "
                   "its weight layout changes, its JS glue):\n")
        out.append("| model | create | constant()/input() (calls; median call) | op calls (calls; median call) | build() "
                   "| other polyfill calls | polyfill in all | of it in the engine (calls) | rest (ORT) "
                   "| rest ÷ wasm EP create (1 thread) |")
        out.append("|---|---:|---:|---:|---:|---|---:|---:|---:|---:|")
        for n, m in rows:
            b = m.get("builder")
            if not b:
                continue
            ctx = b.get("context") or {}
            ctx_ms = sum(v["ms"] for v in ctx.values())
            poly = b["constant"] + b["ops"] + b["build"] + ctx_ms
            rest = m["createMs"] - poly
            wasm = res.get("wasm1", {}).get("models", {}).get(n, {}).get("createMs")
            calls = ", ".join(f"{k} {fmt(v['ms'])} ({v['calls']})"
                              for k, v in sorted(ctx.items(), key=lambda kv: -kv[1]["ms"])[:4])
            eng = b.get("engine") or {}
            eng_cell = f"{fmt(eng['ms'])} ({eng['calls']})" if eng else "–"
            out.append(f"| {ort_models.TITLES[n]} | {fmt(m['createMs'])} | "
                       f"{fmt(b['constant'])} ({b['constants']}; {fmt(b.get('constantMedianMs'))}) | "
                       f"{fmt(b['ops'])} ({b['opCalls']}; {fmt(b.get('opMedianMs'))}) | {fmt(b['build'])} | {calls or '–'} | {fmt(poly)} | "
                       f"{eng_cell} | {fmt(rest)} | {ratio(rest, wasm)} |")
        out.append("")
    return "\n".join(out)


TARGET = 1.5  # issue 17 item 3: create on the WebNN EP <= 1.5x the wasm EP's


def left_for_webnn(standin_ms: float, wasm_ms: float) -> str:
    """What the target leaves a WebNN implementation once ORT's own create is paid."""
    left = TARGET * wasm_ms - standin_ms
    return fmt(left) if left > 0 else "none (out of reach)"


def standin_ratio(standin_ms, wasm_ms) -> str:
    """stand-in ÷ wasm EP, marked when ORT's own create alone is over the target."""
    over = " (over the target)" if wasm_ms and standin_ms and standin_ms > TARGET * wasm_ms else ""
    return ratio(standin_ms, wasm_ms) + over


def first(f: dict) -> str:
    if not f:
        return "–"
    return (f"{fmt(f.get('wasm'))} / {fmt(f.get('polyfill'))} / {fmt(f.get('standin'))} "
            f"({ratio(f.get('standin'), f.get('wasm'))})")


def standin_table(res: dict, names: list) -> str:
    """ORT's own create (on the zero-cost stand-in) against its wasm EP's create, same page."""
    r = res.get("standin")
    if not r:
        return ""
    out = []
    if r.get("error"):
        return f"- {r['label']}: **unavailable**: {r['error']}\n"
    k = max((len(m.get("standinCreateMs", [])) for m in r.get("models", {}).values()), default=0)
    out.append(f"ORT's own session create, measured on a zero-cost WebNN stand-in (`tools/bench_ort/standin.js`: "
               f"every builder call answers at once with the operand a real create on the polyfill gave, build() and "
               f"createContext() settle in a queued task as the spec obliges, opSupportLimits is the polyfill's "
               f"table; it computes nothing). One page, ORT on "
               f"1 thread; per model the first create on each (the polyfill's records the stand-in's answers), then "
               f"{k} creates each on ORT's wasm EP, on the WebNN EP on the polyfill and on the WebNN EP on the "
               f"stand-in, interleaved: medians (min), and the page's first creates"
               + (" (each timed create follows a garbage collection and two tasks, so that the polyfill's releases "
                  "of what the create before it left run outside the timing)" if r.get("heapSettled") else "")
               + ". "
               f"\"stand-in ÷ wasm EP\" above {TARGET}× means the {TARGET}× target is out of reach for any WebNN "
               f"implementation on that model; \"left for WebNN\" = {TARGET} × wasm EP − stand-in:\n")
    out.append("| model | wasm EP create | WebNN EP on the polyfill | WebNN EP on the stand-in | stand-in ÷ wasm EP "
               "| polyfill ÷ wasm EP | polyfill − stand-in | left for WebNN by the target | builder calls (off tape) "
               "| this page's first creates: wasm EP / polyfill / stand-in (stand-in ÷ wasm EP) |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in names:
        m = r.get("models", {}).get(n, {})
        if m.get("error") or "standinMedianMs" not in m:
            out.append(f"| {ort_models.TITLES[n]} | error: {str(m.get('error', 'not run')).replace('|', '/')[:120]} "
                       "| | | | | | | | |")
            continue
        w, p, st = m["wasmMedianMs"], m["polyfillMedianMs"], m["standinMedianMs"]
        s_ = m.get("standin") or {}
        out.append(f"| {ort_models.TITLES[n]} | {fmt(w)} ({fmt(min(m['wasmCreateMs']))}) "
                   f"| {fmt(p)} ({fmt(min(m['polyfillCreateMs']))}) | {fmt(st)} ({fmt(min(m['standinCreateMs']))}) "
                   f"| {standin_ratio(st, w)} | {ratio(p, w)} | {fmt(p - st)} | {left_for_webnn(st, w)} "
                   f"| {s_.get('calls', '–')} ({s_.get('offTape', '–')}) "
                   f"| {first(m.get('firstCreateMs') or {})} |")
    out.append(background_note(r, names, "create", "in all, over the timed stand-in creates"))
    fr = res.get("first")
    if fr:
        reps = max((len(v.get("standin", [])) for v in fr.values()), default=0)
        out.append(f"The first create of each model in a fresh page (the issue's setting: nothing of the model loaded "
                   f"before), {reps} pages per engine, interleaved; each page first creates the MLP on its EP, untimed "
                   f"(ORT compiles its wasm and sets the EP up, as the bench pages' warm-up session does; so the MLP's row is "
                   f"its second create). The stand-in page has no polyfill in it (the stand-in alone, "
                   f"answering from the tape above); median (min) ms:\n")
        out.append("| model | wasm EP | WebNN EP on the polyfill | WebNN EP on the stand-in | stand-in ÷ wasm EP "
                   "| polyfill ÷ wasm EP | left for WebNN by the target | builder calls (off tape) |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for n in names:
            f = fr.get(n)
            if not f:
                continue
            med = {k: (statistics.median(f[k]) if f.get(k) else None) for k in ("wasm", "polyfill", "standin")}
            cell = {k: (f"{fmt(med[k])} ({fmt(min(f[k]))})" if f.get(k) else "–") for k in med}
            w, st = med["wasm"], med["standin"]
            s_ = f.get("standinStats") or {}
            errs = f"; errors: {'; '.join(f['errors'])[:150]}" if f.get("errors") else ""
            out.append(f"| {ort_models.TITLES[n]} | {cell['wasm']} | {cell['polyfill']} | {cell['standin']} "
                       f"| {standin_ratio(st, w)} | {ratio(med['polyfill'], w)} "
                       f"| {left_for_webnn(st, w) if w and st else '–'} "
                       f"| {s_.get('calls', '–')} ({s_.get('offTape', '–')}){errs} |")
        out.append("")
    return "\n".join(out)


def standin_run_table(res: dict, names: list) -> str:
    """session.run on the stand-in (ORT's own floor under any WebNN implementation) next to ORT's wasm EP
    and the WebNN EP on the polyfill, the same page's interleaved rounds; ORT wasm on N threads from its
    own page."""
    r = res.get("standin") or {}
    rows = [(n, r.get("models", {}).get(n, {})) for n in names]
    if r.get("error") or not any(m.get("run") for _, m in rows):
        return ""
    wasm_n = res.get("wasmN") or {}
    threads = wasm_n.get("threads", "N")
    runs = max((len(m["run"].get("runsMs", {}).get("standin", [])) for _, m in rows if m.get("run")), default=0)
    out = [f"ORT's own `session.run` on the zero-cost stand-in: the floor ORT {res.get('ortVersion', ORT_WEB_VERSION)}'s WebNN EP puts under any "
           f"WebNN implementation. The stand-in's dispatch does nothing; createTensor and readTensor "
           f"settle their promises in a queued task (a MessageChannel message each, as the spec's \"queue an ML "
           f"task\" obliges every implementation and as the polyfill does), readTensor hands back zeros of the "
           f"right length (its outputs are not checked); writes and reads copy their bytes, as every "
           f"implementation must. Same page as the create table (ORT on 1 thread): per "
           f"model one session each on ORT's wasm EP, the WebNN EP on the polyfill and the WebNN EP on the "
           f"stand-in, warm-up rounds, then {runs} rounds of one session.run each, interleaved; median (min) ms. "
           f"ORT wasm on {threads} threads: its own page above (`--runs` runs). \"polyfill's calls\": median ms "
           f"per run inside the polyfill's writeTensor / dispatch / readTensor calls (a read's settle, a task hop "
           f"both pay, not counted); \"floor + polyfill's calls\" against ORT wasm on {threads} threads says "
           f"whether the WebNN EP on the polyfill can reach it by cutting anything but its own calls; \"rest\" = "
           f"polyfill run − floor − polyfill's calls (what the polyfill costs ORT's run outside its calls: its "
           f"promises, memory, the kernel pool's threads on the same cores). Calls per run on the stand-in: "
           f"writeTensor / dispatch / readTensor (of them into a buffer) / createTensor; task hops: settles "
           f"the run waited for, and their call-to-settle ms summed per run on the stand-in and (reads) on the "
           f"polyfill, whose settle task also copies a read into its buffer (per-run figures: medians over the "
           f"timed runs):\n"]
    out.append(f"| model | ORT wasm, 1 thread (same page) | ORT wasm, {threads} threads | WebNN EP on the polyfill "
               f"| WebNN EP on the stand-in = ORT's floor | floor ÷ wasm {threads} threads "
               f"| polyfill's calls: write / dispatch / read | floor + polyfill's calls | ÷ wasm {threads} threads "
               f"| rest | stand-in calls per run: write / dispatch / read (into) / createTensor; MB written / read "
               f"| task hops per run (ms: stand-in / polyfill) |")
    out.append("|---|" + "---:|" * 11)
    for n, m in rows:
        run = m.get("run")
        if not run or run.get("error"):
            why = (run or {}).get("error") or m.get("error") or "not run"
            out.append(f"| {ort_models.TITLES[n]} | error: {str(why).replace('|', '/')[:120]} " + "| " * 11)
            continue
        med, mn = run["medianMs"], run["minMs"]
        cell = {e: f"{fmt(med[e])} ({fmt(mn[e])})" for e in med}
        wn = wasm_n.get("models", {}).get(n, {})
        wn_ms = wn.get("medianMs")
        wn_cell = f"{fmt(wn_ms)} ({fmt(wn['minMs'])})" if wn_ms is not None else "–"
        c = run.get("polyfillCallsPerRun") or {}
        calls = c.get("write", 0) + c.get("dispatch", 0) + c.get("read", 0)
        floor_plus = med["standin"] + calls
        rest = med["polyfill"] - floor_plus
        st = run.get("standinPerRun") or {}
        out.append(f"| {ort_models.TITLES[n]} | {cell['wasm']} | {wn_cell} | {cell['polyfill']} | {cell['standin']} "
                   f"| {ratio(med['standin'], wn_ms)} "
                   f"| {fmt(c.get('write'))} / {fmt(c.get('dispatch'))} / {fmt(c.get('read'))} | {fmt(floor_plus)} "
                   f"| {ratio(floor_plus, wn_ms)} | {fmt(rest)} "
                   f"| {st.get('write', 0):g} / {st.get('dispatch', 0):g} / "
                   f"{st.get('read', 0) + st.get('readInto', 0):g} ({st.get('readInto', 0):g}) / "
                   f"{st.get('createTensor', 0):g}; {fmt(st.get('writeBytes', 0) / 1e6)} / {fmt(st.get('readBytes', 0) / 1e6)} "
                   f"| {st.get('hops', 0):g} ({fmt(st.get('settleMs'))} / {fmt(c.get('readSettle'))}) |")
    out.append(background_note(r, names, "run", f"in all, over the {runs} timed stand-in runs"))
    return "\n".join(out)


def background_note(r: dict, names: list, what: str, span: str) -> str:
    """The polyfill's own background work (its FinalizationRegistry releasing what earlier polyfill sessions
    left) that ran in the task hops of the stand-in's timed creates or runs: said, not hidden."""
    seen = []
    for n in names:
        m = r.get("models", {}).get(n, {})
        use = (m.get("run") or {}).get("standinPolyfillUse") if what == "run" else m.get("standinPolyfillUse")
        if use and (use.get("engineCalls") or use.get("api")):
            api = f", {use['api']} calls into its interfaces" if use.get("api") else ""
            seen.append(f"{ort_models.TITLES[n]} {use['engineCalls']} engine calls, {fmt(use['engineMs'])} ms{api}")
    if not seen:
        return f"Nothing of the polyfill ran inside the stand-in's timed {what}s.\n"
    return (f"The polyfill's own background work (its FinalizationRegistry releasing what the polyfill's sessions "
            f"left) that ran in task hops inside the stand-in's timed {what}s ({span}; the stand-in itself never "
            f"calls the polyfill): " + "; ".join(seen) + ".\n")


def write_markdown(path: Path, body: str) -> None:
    begin, end = "<!-- bench-ort:begin ", "<!-- bench-ort:end -->"
    block = f"{begin}(generated by tools/bench_ort.py; edit outside these markers) -->\n{body}\n{end}"
    text = path.read_text() if path.exists() else "# Performance\n"
    if begin in text:
        s = text.index(begin)
        e = text.index(end, s) + len(end)
        text = text[:s] + block + text[e:]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10, help="session.run repeats per model (default 10)")
    p.add_argument("--warmup", type=float, default=5,
                   help="untimed session.run seconds per model before timing (>= 3 runs; default 5)")
    p.add_argument("--budget", type=float, default=20, help="seconds per model after which repeats stop (>= 3 runs)")
    p.add_argument("--models", default=",".join(ort_models.MODELS),
                   help=f"default {','.join(ort_models.MODELS)}; variants: {','.join(ort_models.SUM_AS_ADD)}")
    p.add_argument("--threads", type=int, default=0, help="N of the N-thread wasm row (default: the CPU count)")
    p.add_argument("--preferred-layout", choices=("nchw", "nhwc"),
                   help="an experiment: the polyfill's opSupportLimits().preferredInputLayout as ORT sees it "
                        "(default: what the polyfill reports, nchw)")
    p.add_argument("--layout-ab", metavar="A,B",
                   help="instead of the pages above: one page per version where each model gets a WebNN EP session per "
                        "reported preferredInputLayout (e.g. nchw,nhwc) and one wasm EP session, run interleaved "
                        "(--runs rounds); fails only when the polyfill's own layout mismatches the wasm EP")
    p.add_argument("--standin", action="store_true",
                   help="also measure ORT's create on a zero-cost WebNN stand-in (ORT's own share of create)")
    p.add_argument("--create-runs", type=int, default=5,
                   help="creates per model and engine on the stand-in page after the first (default 5)")
    p.add_argument("--standin-runs", type=int, default=30,
                   help="with the stand-in: timed session.run rounds per model on its page (ORT wasm 1 thread, the "
                        "polyfill and the stand-in interleaved; default 30; 0: creates only)")
    p.add_argument("--first-runs", type=int, default=3,
                   help="with the stand-in: each model's first create in fresh pages, this many times per engine "
                        "(default 3; 0: none)")
    p.add_argument("--configs", default=",".join(CONFIGS[:4]),
                   help=f"which pages to run (default all but standin; known: {','.join(CONFIGS)})")
    p.add_argument("--versions", default=",".join(ORT_WEB_VERSIONS),
                   help=f"onnxruntime-web versions, benchmarked one after the other (default {','.join(ORT_WEB_VERSIONS)})")
    p.add_argument("--page-timeout", type=int, default=900)
    p.add_argument("--json", type=Path, default=ROOT / "test-results" / "bench_ort.json")
    p.add_argument("--markdown", type=Path)
    args = p.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    args.configs = [c for c in args.configs.split(",") if c]
    if set(args.configs) - set(CONFIGS):
        p.error(f"unknown configs: {', '.join(sorted(set(args.configs) - set(CONFIGS)))} (known: {', '.join(CONFIGS)})")
    if (args.standin or "standin" in args.configs) and args.standin_runs > 0 and "wasmN" not in args.configs:
        args.configs.append("wasmN")  # the stand-in run table's ORT wasm N threads column
    unknown = set(args.models) - set(ort_models.TITLES)
    if unknown:
        p.error(f"unknown models: {', '.join(sorted(unknown))} (known: {', '.join(ort_models.TITLES)})")
    if not (ROOT / "dist" / "webnn-polyfill.js").exists():
        print("bench_ort: dist/ is not built: run ./dev build first", file=sys.stderr)
        return 2
    try:
        import onnx  # noqa: F401
    except ImportError:
        print("bench_ort: the PyPI `onnx` package is missing (./dev setup installs it)", file=sys.stderr)
        return 2
    versions = [v for v in args.versions.split(",") if v]
    for version in versions:
        problem = ort_web.ensure_ort(version)
        if problem:
            print(f"bench_ort: onnxruntime-web {version}: {problem}", file=sys.stderr)
            return 2
    head = machine_line()
    cmd = "python3 tools/bench_ort.py" + ("" if argv is None and len(sys.argv) < 2 else " " + " ".join(
        argv if argv is not None else sys.argv[1:]))
    body = f"Command: `{cmd}`\n\nMachine: {head}\n\n"
    results, failed = {}, []
    for version in versions:
        log(f"onnxruntime-web {version}")
        if args.layout_ab:
            res = results[version] = layout_ab(args, version)
            text, bad = layout_ab_table(res, args.models)
            body += f"### onnxruntime-web {version}: reported layout A/B\n\n{text}\n"
            failed += [f"onnxruntime-web {version}: {line}" for line in bad]
            continue
        res = results[version] = run(args, version)
        body += (f"### onnxruntime-web {version}\n\n" + table(res, args.models) + "\n" + standin_table(res, args.models)
                 + "\n" + standin_run_table(res, args.models) + "\n")
        failed += [f"onnxruntime-web {version}: {res[k]['label']}: {res[k]['error']}"
                   for k in ("webnn", "standin") if res.get(k, {}).get("error")]
        failed += [f"onnxruntime-web {version}: {res[k]['label']}: {ort_models.TITLES[n]}: {why}"
                   for (k, n), why in output_checks(res).items() if why]
    print(body)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=1) + "\n")
    if args.markdown:
        write_markdown(args.markdown, body)
        log(f"wrote {args.markdown}")
    for line in failed:  # a WebNN EP page that failed, or outputs that differ from ORT's wasm EP: the run fails
        log("FAILED: " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
