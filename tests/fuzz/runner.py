"""The fuzz suite: a hostile page's use of the polyfill, seeded and repeatable.

Four campaigns, run in headless Chromium against dist/ (page side:
tests/fuzz/fuzz_page.js):
  * webidl    random and edge arguments for every operation of the IDL
              (parsed with webidl2): every outcome must be a value, a
              TypeError or a DOMException, never a hang, Python text or an
              engine bug, and the page must stay usable;
  * graphs    random graphs (tests/fuzz/graphs.py) run through dispatch and
              compared with numpy;
  * timelines interleaved writeTensor/dispatch/readTensor checked against a
              model of the tensors, and for settle order;
  * memory    build/destroy cycles of a graph with a large constant: the wasm
              heap must stay bounded.

    python3 tests/fuzz/runner.py --minutes 20 --seed 7      (./dev fuzz ...)
    python3 tests/fuzz/runner.py --timeline worker ...     (through the timeline worker,
                                                            a window's default)

Prints the figures and, for each failure, a reproducer; exits 1 on failures.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tools"))

from differential import evaluate  # noqa: E402  (page.evaluate with a deadline: PageHang)
from graphs import random_graph  # noqa: E402

CHUNK_S = 30  # one page.evaluate at most this long
# How long the page may take to answer before the run counts a hang (a promise that never
# settles is a finding, not a stuck run): its start, a chunk, the memory campaign.
READY_S, ANSWER_S, MEMORY_S = 300, 4 * CHUNK_S, 900
HEAP_BOUND = 256 * 2**20


def idl_candidates() -> list[Path]:
    env = os.environ.get("WEBNN_IDL")
    paths = [Path(env)] if env else []
    paths.append(ROOT.parent / "shared" / "spec" / "webnn-2026-09.idl")
    cache = Path.home() / ".cache" / "pywebnn" / "wpt"
    if cache.is_dir():
        paths += sorted(cache.glob("*/interfaces/webnn.idl"))
    return paths


def load_idl() -> tuple[dict | None, str]:
    """The IDL as JSON (tests/fuzz/idl_json.mjs), or None and why not."""
    path = next((p for p in idl_candidates() if p.is_file()), None)
    if path is None:
        return None, "no WebNN IDL found (../shared/spec/webnn-2026-09.idl, $WEBNN_IDL or a cached WPT tree)"
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "webidl2").is_dir():
        return None, "node or the webidl2 package is missing (run ./dev setup)"
    out = subprocess.run([node, str(HERE / "idl_json.mjs"), str(path)], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout), str(path)


def run_on_page(page, base_url: str, seconds: float, seed: int, cycles: int = 500, mib: int = 16,
                parts=("webidl", "graphs", "timelines", "memory"), log=print, progress=None, timeline: str = "page") -> dict:
    """Run the campaigns on a Playwright page; returns the report. `progress`
    (tools/progress.py) shows the campaign and the seconds spent on a terminal. `timeline`:
    where the page's contexts execute ('worker': the timeline worker, a window's default; the
    memory campaign then bounds the worker engine's heap as well as the page's)."""
    report = {"seed": seed, "seconds": seconds, "timeline": timeline, "counts": {}, "failures": [], "skipped": {}}
    fuzz_url = f"{base_url}/fuzz/fuzz.html?timeline={timeline}"
    page.goto(fuzz_url)
    evaluate(page, "() => fuzz.ready()", None, READY_S)
    started = time.monotonic()
    shares = {"webidl": 0.5, "graphs": 0.3, "timelines": 0.2}
    active = [p for p in parts if p in shares]
    total_share = sum(shares[p] for p in active) or 1

    def budget(part):
        return seconds * shares[part] / total_share

    task = progress.add("fuzz", total=round(seconds) + (1 if cycles and "memory" in parts else 0)) if progress else None

    def tick(part):
        if progress:
            progress.update(task, completed=min(seconds, time.monotonic() - started), description=f"fuzz {part}")

    def chunks(part, fn):
        end = time.monotonic() + budget(part)
        k = 0
        while time.monotonic() < end:
            tick(part)
            chunk_seed = seed * 1000 + k
            try:
                fn(chunk_seed, min(CHUNK_S, max(1.0, end - time.monotonic())))
            except Exception as e:  # the page crashed or an evaluate failed: a finding too
                report["failures"].append({"kind": part, "problem": f"page failure: {e}", "reproducer": f"seed {chunk_seed}"})
                page.goto(fuzz_url)
                evaluate(page, "() => fuzz.ready()", None, READY_S)
            k += 1

    def add(counts):
        for key, value in counts.items():
            report["counts"][key] = report["counts"].get(key, 0) + value

    if "webidl" in parts:
        idl, where = load_idl()
        if idl is None:
            report["skipped"]["webidl"] = where
        else:
            report["idl"] = where

            def webidl(chunk_seed, s):
                r = evaluate(page, "([idl, seed, ms]) => fuzz.idl(idl, seed, ms)", [idl, chunk_seed, s * 1000], ANSWER_S)
                add(r["counts"])
                for f in r["failures"]:
                    report["failures"].append({**f, "seed": chunk_seed})
            chunks("webidl", webidl)
    if "graphs" in parts:
        def graphs(chunk_seed, s):
            rng = np.random.default_rng(chunk_seed)
            end = time.monotonic() + s
            while time.monotonic() < end:
                batch = [random_graph(rng) for _ in range(10)]
                results = evaluate(page, "(specs) => fuzz.graphs(specs)", [spec for spec, _ in batch], ANSWER_S)
                for (spec, expected), got in zip(batch, results):
                    report["counts"]["graphs"] = report["counts"].get("graphs", 0) + 1
                    problem = compare(expected, got)
                    if problem:
                        report["failures"].append({"kind": "graph", "problem": problem, "seed": chunk_seed,
                                                   "reproducer": json.dumps(spec)})
        chunks("graphs", graphs)
    if "timelines" in parts:
        def timelines(chunk_seed, s):
            r = evaluate(page, "([seed, ms]) => fuzz.timelines(seed, ms)", [chunk_seed, s * 1000], ANSWER_S)
            add(r["counts"])
            for f in r["failures"]:
                report["failures"].append({**f, "seed": chunk_seed})
        chunks("timelines", timelines)
    if "memory" in parts and cycles:
        tick(f"memory ({cycles} cycles)")
        r = evaluate(page, "([c, m]) => fuzz.memory(c, m)", [cycles, mib], MEMORY_S)
        report["memory"] = r
        add({"memory_cycles": r["cycles"]})
        if timeline != "page" and r["workerPeakGrowthBytes"] is None:
            report["failures"].append({"kind": "memory", "problem": "the contexts did not execute in the timeline worker",
                                       "reproducer": f"fuzz.memory({cycles}, {mib})"})
        for where, growth in (("the page's", r["peakGrowthBytes"]), ("the timeline worker's", r["workerPeakGrowthBytes"])):
            if growth is not None and growth > HEAP_BOUND:
                report["failures"].append({"kind": "memory", "problem": f"{where} heap grew {growth / 2**20:.0f} MiB over "
                                           f"{cycles} cycles of a {mib} MiB constant (bound 256 MiB)",
                                           "reproducer": f"fuzz.memory({cycles}, {mib})"})
    healthy = evaluate(page, "() => fuzz.healthy()", None, ANSWER_S)
    if healthy is not True:
        report["failures"].append({"kind": "health", "problem": f"page unusable at the end: {healthy}", "reproducer": f"seed {seed}"})
    report["elapsed_s"] = round(time.monotonic() - started, 1)
    return report


def compare(expected: dict, got: dict) -> str | None:
    if "error" in got:
        return f"the graph failed: {got['error']}"
    for oid, ref in expected.items():
        out = got["ok"].get(oid)
        if out is None:
            return f"output {oid} missing"
        if list(out["shape"]) != list(ref.shape):
            return f"output {oid}: shape {out['shape']}, numpy {list(ref.shape)}"
        values = np.array(out["data"], np.float64).reshape(ref.shape)
        if not np.allclose(values, ref, rtol=2e-3, atol=2e-3, equal_nan=True):
            worst = float(np.max(np.abs(values - ref)))
            return f"output {oid}: differs from numpy by up to {worst:.3g}"
    return None


def describe(report: dict) -> str:
    c = report["counts"]
    lines = [f"fuzz: seed {report['seed']}, timeline {report.get('timeline', 'page')}, {report['elapsed_s']} s: "
             f"{c.get('calls', 0)} WebIDL calls ({c.get('typeErrors', 0)} TypeError, {c.get('domExceptions', 0)} DOMException), "
             f"{c.get('graphs', 0)} graphs, {c.get('timelines', 0)} timelines ({c.get('operations', 0)} operations), "
             f"{c.get('memory_cycles', 0)} memory cycles"
             + (f" (peak heap growth {report['memory']['peakGrowthBytes'] / 2**20:.0f} MiB" if "memory" in report else "")
             + (f", the worker's {report['memory']['workerPeakGrowthBytes'] / 2**20:.0f} MiB"
                if report.get("memory", {}).get("workerPeakGrowthBytes") is not None else "")
             + (")" if "memory" in report else "")
             + f"; {len(report['failures'])} failures"]
    for part, why in report["skipped"].items():
        lines.append(f"  skipped {part}: {why}")
    for f in report["failures"]:
        lines.append(f"FAIL [{f['kind']}] {f['problem']}")
        repro = f["reproducer"]
        if len(repro) > 1500:
            repro = repro[:1500] + " ... (the whole reproducer: --json FILE)"
        lines.append(f"  seed {f.get('seed', report['seed'])}; reproducer: {repro}")
    return "\n".join(lines)


def differential_main(args) -> int:
    """./dev fuzz --differential: random client-shaped nets through every configuration
    of the cpu backend in CPython (tests/fuzz/differential.py), then on the fuzz page
    under the polyfill's configurations; prints a reproducer for each mismatch."""
    import differential

    share = min(1.0, max(0.0, args.browser_share))
    report = differential.run(args.minutes * (1 - share), args.seed, wasm=args.wasm) if share < 1 else {}
    failures = list(report.get("failures", []))
    if share > 0:
        with differential.served_browser() as (browser, url):
            failures += differential.run_browser(browser, url, args.minutes * share, args.seed)["failures"]
    if args.json:
        Path(args.json).write_text(json.dumps({"failures": failures, "coverage": report.get("coverage")}, indent=1))
    print(f"differential: {len(failures)} failing graphs"
          + ("; replay one with python3 tests/fuzz/differential.py --replay SEED:INDEX [--browser]" if failures else ""))
    return 1 if failures else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Fuzz the polyfill from a page (see tests/fuzz/runner.py).")
    p.add_argument("--minutes", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--cycles", type=int, default=500, help="memory build/destroy cycles (0: skip)")
    p.add_argument("--mib", type=int, default=16, help="the constant's size in the memory cycles")
    p.add_argument("--parts", default="webidl,graphs,timelines,memory")
    p.add_argument("--timeline", choices=["page", "worker"], default="page",
                   help="where the contexts execute (worker: the timeline worker, whose heap the memory campaign bounds too)")
    p.add_argument("--json", help="also write the report here")
    p.add_argument("--differential", action="store_true",
                   help="the differential test of the cpu backend's fast paths and rewrites instead "
                        "(tests/fuzz/differential.py): CPython configurations, then a browser share")
    p.add_argument("--browser-share", type=float, default=0.25,
                   help="with --differential: the share of the minutes spent on the fuzz page (0: none)")
    p.add_argument("--wasm", action="store_true", help="with --differential: also the wasm build under Node")
    args = p.parse_args(argv)
    if args.differential:
        return differential_main(args)

    import serve
    from progress import Progress
    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests"))
    from conftest import CHROMIUM, CHROMIUM_ARGS

    srv = serve.start(mounts={**serve.default_mounts(), "/fuzz/": HERE})
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            with Progress() as progress:  # a bar on a terminal only
                report = run_on_page(page, f"http://127.0.0.1:{srv.server_address[1]}", args.minutes * 60, args.seed,
                                     cycles=args.cycles, mib=args.mib, parts=tuple(args.parts.split(",")),
                                     progress=progress, timeline=args.timeline)
            browser.close()
    finally:
        srv.shutdown()
    print(describe(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    return 1 if report["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
