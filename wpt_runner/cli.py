"""Command line: ``python -m wpt_runner [options]``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time

from . import browser, engines, expectations, manifest, report, results, wptreport, wpttree
from .server import Server

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_POLYFILL = os.path.join(PROJECT_ROOT, "dist")
DEFAULT_EXPECTATIONS = os.path.join(PROJECT_ROOT, "wpt_runner", "expectations.json")


def default_expectations(engine: str) -> str:
    """Each engine keeps its own expectations file; Chromium's has the historical name."""
    if engine == "chromium":
        return DEFAULT_EXPECTATIONS
    return os.path.join(PROJECT_ROOT, "wpt_runner", f"expectations-{engine}.json")
POLYFILL_ENTRY = "webnn-polyfill.js"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m wpt_runner",
        description="Run WPT webnn/ testharness.js tests in headless Chromium, Firefox "
                    "or WebKit against the WebNN polyfill.")
    p.add_argument("--wpt", metavar="PATH",
                   help="WPT checkout / extracted tree, or a bare git directory "
                        "(webnn/ resources/ interfaces/ common/ of HEAD are extracted to "
                        "~/.cache/pywebnn/wpt/<commit>/). Default: $WPT_DIR, else the "
                        "newest tree cached there")
    p.add_argument("--dir", action="append", metavar="DIR",
                   help="tree directory to discover tests in (repeatable; default: webnn)")
    p.add_argument("--filter", action="append", metavar="GLOB",
                   help="only tests whose path or URL matches one of these globs "
                        "(repeatable or comma-separated; a plain directory matches "
                        "everything below it)")
    p.add_argument("--variants", default="cpu,gpu,npu", metavar="LIST",
                   help="devices whose variants run, e.g. cpu or cpu,gpu (default: "
                        "cpu,gpu,npu); variants naming no device always run; 'all' "
                        "disables the selection")
    p.add_argument("--globals", default="window,worker", metavar="LIST",
                   help="window, worker (= dedicated+shared+service), dedicatedworker, "
                        "sharedworker, serviceworker (default: window,worker)")
    p.add_argument("--jobs", "-j", type=int, default=max(1, min(4, os.cpu_count() or 1)),
                   help="pages run in parallel (default: number of CPUs, at most 4)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                   help="per test page (x%d for META: timeout=long; default 60)"
                        % manifest.LONG_TIMEOUT_MULTIPLIER)
    p.add_argument("--standard-timeouts", action="store_true",
                   help="testharness.js's own timeouts (10 s, 60 s for META: timeout=long) end "
                        "each page, as under wptrunner; no explicit-timeout switch, no runner-side "
                        "extension (--timeout is ignored)")
    p.add_argument("--this-chunk", type=int, default=1, metavar="N",
                   help="run only chunk N (1-based) of --total-chunks, split as wptrunner does")
    p.add_argument("--total-chunks", type=int, default=1, metavar="M",
                   help="number of chunks (default 1: everything)")
    p.add_argument("--chunk-type", choices=manifest.CHUNK_TYPES, default="hash",
                   help="hash: md5 of the test file's path (all pages of a file in one chunk; "
                        "wptrunner's 'hash'); id_hash: md5 of the page URL")
    p.add_argument("--out", metavar="FILE", help="write per-subtest results as JSON")
    p.add_argument("--report", metavar="FILE",
                   help="write a Markdown report, and an HTML one beside it (FILE with .html)")
    p.add_argument("--html", metavar="FILE",
                   help="write the HTML report here (default: beside --report)")
    p.add_argument("--wptreport", metavar="FILE",
                   help="write the results in wptrunner's wptreport.json format (wpt.fyi's input)")
    p.add_argument("--expectations", metavar="FILE",
                   help="JSON of test URL -> subtest names expected to PASS; fail the run "
                        "if one of them does not pass")
    p.add_argument("--update-expectations", action="store_true",
                   help="rewrite the expectations file (default: the engine's, "
                        "wpt_runner/expectations.json for chromium, "
                        "wpt_runner/expectations-ENGINE.json for the others) from this run, "
                        "replacing only the entries of the tests that ran")
    p.add_argument("--polyfill", metavar="DIR", default=DEFAULT_POLYFILL,
                   help="directory served at /_webnn_polyfill/, must contain %s "
                        "(default: <project>/dist)" % POLYFILL_ENTRY)
    p.add_argument("--polyfill-config", metavar="JSON", default=None,
                   help="JSON object merged into self.WEBNN_POLYFILL_CONFIG "
                        "(base: {\"replaceNative\": true})")
    p.add_argument("--no-polyfill", action="store_true",
                   help="do not inject the polyfill (run against the bare browser)")
    p.add_argument("--idl", metavar="FILE", default=None,
                   help="serve FILE as /interfaces/webnn.idl (what idlharness tests against), "
                        "e.g. spec/webnn-2026-09.idl; default: the tree's own")
    p.add_argument("--browser", choices=engines.ENGINES, default="chromium",
                   help="engine: chromium (Playwright), firefox (Firefox ESR through "
                        "puppeteer-core / WebDriver BiDi) or webkit (WebKitGTK through Selenium "
                        "and WebKitWebDriver, on Xvfb); default chromium")
    p.add_argument("--webgpu", action="store_true",
                   help="WebGPU on (Chromium: --enable-unsafe-webgpu --use-webgpu-adapter=swiftshader, "
                        "a CPU-emulated adapter): gpu contexts run the polyfill's WebGPU backend, and "
                        "the report counts per page the graphs that ran on it vs on its cpu fallback")
    p.add_argument("--chromium", metavar="PATH", default=None,
                   help="Chromium executable (default: $CHROMIUM or /usr/bin/chromium)")
    p.add_argument("--from-results", metavar="FILE", action="append",
                   help="run nothing: take the results from JSON files written by --out "
                        "(repeatable: the chunks of a sharded run are merged) to write "
                        "reports or check/update expectations")
    p.add_argument("--list", action="store_true", help="list the selected test URLs and exit")
    p.add_argument("--serve", action="store_true",
                   help="only serve the tree (for a manual browser) until interrupted")
    p.add_argument("--port", type=int, default=0, help="port for --serve (default: any)")
    p.add_argument("--verbose", "-v", action="store_true",
                   help="print every non-passing subtest as it is reported")
    return p


def polyfill_config(args) -> dict:
    cfg = {"replaceNative": True}
    if args.polyfill_config:
        extra = json.loads(args.polyfill_config)
        if not isinstance(extra, dict):
            raise ValueError("--polyfill-config must be a JSON object")
        cfg.update(extra)
    return cfg


class Progress:
    """Progress on stderr: a rich progress bar on a terminal (files done / total,
    subtests passing, time left), with the pages that did not pass printed above
    it; nothing when stderr is not a terminal, except with --verbose, which
    prints one line per page and every non-passing subtest."""

    def __init__(self, total: int, verbose: bool, stream=sys.stderr):
        self.total, self.verbose, self.stream = total, verbose, stream
        self.done = self.passed = self.subtests = 0
        self.t0 = time.monotonic()
        self.bar = None
        if stream.isatty():
            try:
                from rich.console import Console
                from rich.progress import (BarColumn, MofNCompleteColumn, Progress as Bar,
                                           TextColumn, TimeElapsedColumn, TimeRemainingColumn)
            except ImportError:  # rich is in requirements-dev.txt; without it, plain lines
                pass
            else:
                self.bar = Bar(TextColumn("wpt"), BarColumn(), MofNCompleteColumn(),
                               TextColumn("pass {task.fields[passed]}/{task.fields[subtests]}"),
                               TimeElapsedColumn(), TimeRemainingColumn(),
                               console=Console(file=stream), transient=True)
                self.task = self.bar.add_task("wpt", total=total, passed=0, subtests=0)

    def __enter__(self):
        if self.bar:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar:
            self.bar.stop()

    def line(self, r: results.FileResult) -> str:
        width = len(str(self.total))
        elapsed = time.monotonic() - self.t0
        line = (f"[{self.done:>{width}}/{self.total}] {elapsed:6.0f}s "
                f"pass {self.passed}/{self.subtests} | {r.status:<7} {r.passed}/{r.total} "
                f"{r.url} ({r.duration:.1f}s)")
        if r.status != "OK" and r.message:
            line += f"\n      {r.message.splitlines()[0][:200]}"
        if self.verbose:
            for s in r.subtests:
                if s["status"] != "PASS":
                    msg = (s.get("message") or "").splitlines()[:1]
                    line += f"\n      {s['status']}: {s['name']}" + (f" -- {msg[0][:200]}" if msg else "")
            for e in r.errors[:5]:
                line += f"\n      {e.splitlines()[0][:200]}"
        return line

    def __call__(self, r: results.FileResult):
        self.done += 1
        self.passed += r.passed
        self.subtests += r.total
        if self.bar:
            self.bar.update(self.task, advance=1, passed=self.passed, subtests=self.subtests)
            if self.verbose or not r.ok:
                self.bar.console.print(self.line(r), markup=False, highlight=False)
        elif self.verbose or (self.stream.isatty() and not r.ok):
            print(self.line(r), file=self.stream, flush=True)


def select_runs(root: str, args) -> list:
    dirs = args.dir or ["webnn"]
    sources = manifest.discover_sources(root, dirs)
    scopes = manifest.parse_scope_list(args.globals)
    devices = None if args.variants.strip() == "all" else {
        d.strip() for d in args.variants.split(",") if d.strip()}
    patterns = manifest.split_patterns(args.filter)
    runs = manifest.expand_runs(root, sources, scopes, devices, patterns)
    if args.total_chunks != 1 or args.this_chunk != 1:
        runs = manifest.select_chunk(runs, args.this_chunk, args.total_chunks, args.chunk_type)
    return runs


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    if args.from_results:
        out, meta = [], {}
        for path in args.from_results:
            try:
                part, part_meta = results.read_json_with_meta(path)
            except (OSError, ValueError, KeyError) as e:
                log(f"wpt_runner: error: cannot read {path}: {e!r}")
                return 2
            out += part
            meta = results.merge_meta(meta, part_meta)
        meta["from_results"] = [os.path.abspath(p) for p in args.from_results]
        return finish(args, results.merge(out), meta, log)
    try:
        root = wpttree.resolve(args.wpt, log=log)
        runs = select_runs(root, args)
        cfg = None if args.no_polyfill else polyfill_config(args)
    except (OSError, ValueError, RuntimeError) as e:
        log(f"wpt_runner: error: {e}")
        return 2

    if args.list:
        for r in runs:
            print(r.url)
        return 0

    polyfill_dir = None if args.no_polyfill else os.path.abspath(args.polyfill)
    if polyfill_dir and not os.path.isfile(os.path.join(polyfill_dir, POLYFILL_ENTRY)):
        log(f"wpt_runner: error: no {POLYFILL_ENTRY} in {polyfill_dir} "
            "(build the polyfill, or pass --polyfill DIR / --no-polyfill)")
        return 2

    if args.idl and not os.path.isfile(args.idl):
        log(f"wpt_runner: error: --idl {args.idl}: no such file")
        return 2

    if args.serve:
        with Server(root, polyfill_dir, cfg, port=args.port, idl=args.idl,
                    standard_timeouts=args.standard_timeouts) as srv:
            log(f"serving {root} at {srv.url}/ (Ctrl-C to stop); e.g.")
            for r in runs[:5]:
                log(f"  {srv.url}{r.url}")
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0

    if not runs:
        log("wpt_runner: no tests selected")
        return 2

    if args.webgpu and args.browser != "chromium":
        log(f"wpt_runner: error: --webgpu is not available with --browser {args.browser} "
            "(only Chromium's headless SwiftShader adapter is wired up)")
        return 2

    if args.browser != "chromium":
        why = engines.unavailable(args.browser)
        if why:
            log(f"wpt_runner: error: {args.browser}: {why}")
            return 2

    chunk = (f", chunk {args.this_chunk}/{args.total_chunks}" if args.total_chunks > 1 else "")
    log(f"wpt_runner: {len(runs)} test pages from {root}, {args.browser}, {args.jobs} job(s), "
        f"polyfill {polyfill_dir or 'off'}"
        + (", standard timeouts" if args.standard_timeouts else "") + chunk)
    t0 = time.monotonic()
    time_start = int(time.time() * 1000)
    info = {}
    with Server(root, polyfill_dir, cfg, idl=args.idl, standard_timeouts=args.standard_timeouts) as srv, \
            Progress(len(runs), args.verbose) as progress:
        if args.browser == "chromium":
            out = asyncio.run(browser.run_all(
                runs, srv.url, jobs=args.jobs, timeout=args.timeout,
                chromium=args.chromium, on_result=progress, standard=args.standard_timeouts,
                info=info, webgpu=args.webgpu))
        else:
            out = browser.run_all_sync(runs, srv.url, engine=args.browser, jobs=args.jobs,
                                       timeout=args.timeout, on_result=progress, info=info,
                                       standard=args.standard_timeouts)
    duration = time.monotonic() - t0

    meta = {
        "wpt": root,
        "commit": os.path.basename(root) if os.path.dirname(root) == wpttree.cache_root() else None,
        "polyfill": polyfill_dir,
        "polyfill_config": cfg,
        "browser": info.get("browser", args.browser),
        "variants": args.variants,
        "globals": args.globals,
        "filter": manifest.split_patterns(args.filter),
        "idl": os.path.abspath(args.idl) if args.idl else None,
        "timeouts": "standard (testharness 10 s / 60 s)" if args.standard_timeouts
                    else f"explicit ({args.timeout:g} s per page, x{manifest.LONG_TIMEOUT_MULTIPLIER} long)",
        "chunk": [args.this_chunk, args.total_chunks, args.chunk_type] if args.total_chunks > 1 else None,
        "duration_s": round(duration, 1),
        "time_start": time_start,
        "time_end": int(time.time() * 1000),
    }
    if args.webgpu:
        meta["webgpu"] = " ".join(browser.WEBGPU_ARGS)
    log(f"wpt_runner: ran {len(runs)} pages in {duration:.0f}s")
    return finish(args, out, meta, log)


def finish(args, out, meta, log) -> int:
    """Summary, output files and expectations; returns the exit status."""
    t = results.totals(out)
    log(f"wpt_runner: {t['files_ok']}/{t['files']} files fully passing, "
        f"{t['passed']}/{t['subtests']} subtests passing")
    b = results.backend_totals(out)
    if b:
        log(f"wpt_runner: gpu contexts: {report.backend_line(b)}")
    if args.out:
        results.write_json(args.out, out, meta)
        log(f"wrote {args.out}")
    if args.report:
        report.write(args.report, out, meta)
        log(f"wrote {args.report}")
    html_path = args.html or (os.path.splitext(args.report)[0] + ".html" if args.report else None)
    if html_path:
        report.write_html(html_path, out, meta)
        log(f"wrote {html_path}")

    rc = 0
    exp_path = args.expectations or (default_expectations(getattr(args, "browser", "chromium"))
                                     if args.update_expectations else None)
    old = None
    if exp_path:
        try:
            old = expectations.load(exp_path)
        except (OSError, ValueError) as e:
            log(f"wpt_runner: error: cannot read expectations: {e}")
            return 2
    if args.wptreport:
        wptreport.write(args.wptreport, out, meta, old)
        log(f"wrote {args.wptreport}")
    if exp_path:
        cmp = expectations.compare(old, out)
        text = expectations.describe(cmp)
        if text:
            log(text)
        if args.update_expectations:
            expectations.dump(exp_path, expectations.updated(old, out))
            log(f"updated {exp_path}")
        elif cmp.failed:
            log(f"wpt_runner: {len(cmp.regressions)} expected-passing subtest(s) did not pass, "
                f"{len(cmp.missing)} not registered")
            rc = 1
        else:
            log("wpt_runner: all expected-passing subtests passed")
    return rc
