"""Transfer microbenchmark: bytes crossing JS <-> the engine (issue 12 item 3)
and the per-call floor of write + dispatch + read (issue 17), in headless Chromium.

    python3 tools/bench_transfer.py [--dist DIR] [--sizes 1,16,64] [--runs 7] [--timeline page|worker]
                                    [--tiny-runs 200] [--tiny-rounds 1] [--spin-ms MS]
    ./dev bench transfer ...

Prints a markdown table of medians (ms and GB/s per operation). --dist points
at another build's dist/ (e.g. one built from an older commit) to compare.
--timeline worker runs the context in the timeline worker (WEBNN_POLYFILL_CONFIG.timeline):
then writeTensor and dispatch only post, and readTensor's time is the round trip.
--tiny-rounds N repeats the one-element loop N times in the same page and prints each
round's median (later rounds: after V8 has tiered the engines' wasm up), with the timeline
worker's own dispatch time per round; last, a bare page -> worker -> page round trip (the
floor under any call through a worker on this machine).
--spin-ms sets WEBNN_POLYFILL_CONFIG.timelineSpinMs (js/src/spin.js; 0: the worker and the page
sleep while they wait for each other); the output says how many waits spun.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
OPS = ["constant", "writeTensor", "readTensor", "readTensorByob", "dispatch"]


def run(dist: Path, sizes, runs: int, tiny_runs: int, timeline: str = "page", tiny_rounds: int = 1,
        spin_ms: float | None = None) -> dict:
    from playwright.sync_api import sync_playwright

    srv = serve.start(mounts={**serve.default_mounts(), "/dist/": dist, "/transfer/": ROOT / "tools" / "bench_transfer"})
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            spin = "" if spin_ms is None else f"&spinMs={spin_ms}"
            page.goto(f"http://127.0.0.1:{srv.server_address[1]}/transfer/transfer.html?timeline={timeline}{spin}")
            result = page.evaluate("([s, r, t, n]) => bench(s, r, t, n)", [sizes, runs, tiny_runs, tiny_rounds])
            result["chromium"] = browser.version
            browser.close()
    finally:
        srv.shutdown()
    return result


def table(result: dict) -> str:
    lines = ["| MiB | " + " | ".join(OPS) + " |", "|---|" + "---|" * len(OPS)]
    for row in result["rows"]:
        cells = []
        for op in OPS:
            ms = row[op]
            gbs = row["mib"] * 2**20 / (ms / 1e3) / 1e9 if ms > 0 else float("inf")
            cells.append(f"{ms:.2f} ms ({gbs:.1f} GB/s)")
        lines.append(f"| {row['mib']} | " + " | ".join(cells) + " |")
    lines.append(f"\nwrite + dispatch + read of one element: {result['tinyMs']:.3f} ms (median)")
    later = result.get("tinyRoundsMs", [])[1:]
    if later:
        lines.append("later rounds: " + " / ".join(f"{ms:.3f}" for ms in later) + " ms (medians)")
    if result.get("workerDispatchMs"):
        lines.append("the timeline worker's own dispatch, per round: "
                     + " / ".join(f"{ms:.3f}" for ms in result["workerDispatchMs"]) + " ms (medians of the last 64)")
    spins = result.get("spins") or {}
    for side in ("page", "worker"):
        s = spins.get(side)
        if s:
            lines.append(f"{side}: {s['waits']} waits for the other side, {s['spun']} spun, {s['caught']} caught while spinning"
                         f" (window {s['windowMs']} ms)")
    if result.get("pingPongMs"):
        pp = result["pingPongMs"]
        lines.append(f"bare page -> worker -> page round trip: {pp['median']:.3f} ms median, {pp['min']:.3f} ms min "
                     f"(cross-origin isolated: {str(result.get('crossOriginIsolated')).lower()})")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dist", type=Path, default=ROOT / "dist")
    p.add_argument("--sizes", default="1,16,64")
    p.add_argument("--runs", type=int, default=7)
    p.add_argument("--tiny-runs", type=int, default=200)
    p.add_argument("--tiny-rounds", type=int, default=1, help="rounds of the one-element loop (default 1)")
    p.add_argument("--json", type=Path)
    p.add_argument("--timeline", choices=["page", "worker"], default="page")
    p.add_argument("--spin-ms", type=float, help="WEBNN_POLYFILL_CONFIG.timelineSpinMs (default: the polyfill's)")
    args = p.parse_args(argv)
    result = run(args.dist.resolve(), [int(s) for s in args.sizes.split(",")], args.runs, args.tiny_runs, args.timeline,
                 args.tiny_rounds, args.spin_ms)
    result["timeline"] = args.timeline
    print(table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
