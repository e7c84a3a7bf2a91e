"""Model benchmark in a headless browser (--browser chromium|firefox|webkit): the WebNN
polyfill side by side with TensorFlow.js (cpu, wasm and webgl backends) on the same
weights, in the same engine; and the gpu rows: the polyfill's gpu device (WebGPU) vs
TF.js's webgpu backend on the same weights and the same WebGPU adapter.

    python3 tools/bench.py [--runs N] [--out bench.json] [--markdown docs/performance.md]
    python3 tools/bench.py --layouts [--runs N]   (only: SqueezeNet NHWC vs NCHW, below)

Drives web/bench/ (one engine per fresh browser context, so each start is
cold): SqueezeNet 1.0 and MobileNetV2 (synthesized logits) from
../shared/models ($WEBNN_MODELS); cold start (script load -> context ready)
with an empty and with a warm HTTP cache; weights load, build, first
inference, median and min of N inferences; single-op timings of the biggest
conv2d / depthwise / matmul shapes; the polyfill's per-op breakdown
inside the models; and, for the polyfill in the page, the polyfill with its
timeline worker (WEBNN_POLYFILL_CONFIG.timeline = 'worker') and TF.js wasm,
the page while inferring back to back for 3 s: the page-thread time per
inference, the requestAnimationFrame rate and the longest frame gap. Prints markdown tables; --out writes all the numbers as
JSON, --markdown writes the tables into that file (between the
`<!-- bench:begin -->` / `<!-- bench:end -->` markers if present).

--layouts: SqueezeNet with the same weights in NHWC and in NCHW (input and
filters transposed), NCHW with the cpu backend's layout pass (the default)
and without it, inferences interleaved: in headless Chromium through the
public WebNN API (tests/browser/pages/simd.html), then in CPython with the
native build of the same kernels (tools/bench_kernels.py --layouts).

gpu rows (Chromium): both engines get `--enable-unsafe-webgpu
--use-webgpu-adapter=swiftshader` (override with $BENCH_WEBGPU_ARGS, e.g. a real
adapter's switches), so they run on the same adapter, which the table names. They
go into their own block of the --markdown file (`<!-- bench:begin:gpu ... -->`), so
`--engines polyfill-gpu,tfjs-webgpu` refreshes them alone.

TF.js is installed from npm into .cache/node/ on first use (pinned versions;
skipped when already there). A backend that cannot start in this browser is
reported as unavailable; the rest of the run goes on. Needs a built dist/
(./dev build) and Chromium (./dev setup).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import machine  # noqa: E402
import npm_cache  # noqa: E402
import serve  # noqa: E402
from progress import Progress  # noqa: E402

sys.path.insert(0, str(ROOT))
from wpt_runner import engines as browser_engines  # noqa: E402

TFJS_VERSION = "4.22.0"
TFJS_PACKAGES = ["@tensorflow/tfjs-core", "@tensorflow/tfjs-backend-cpu",
                 "@tensorflow/tfjs-backend-wasm", "@tensorflow/tfjs-backend-webgl",
                 "@tensorflow/tfjs-backend-webgpu"]
NODE_DIR = ROOT / ".cache" / "node"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
ENGINE_NAMES = {"chromium": "Chromium", "firefox": "Firefox ESR", "webkit": "WebKitGTK (under Xvfb)"}
# WebGL without a GPU in Chromium: ANGLE on SwiftShader (TF.js webgl backend)
WEBGL_ARGS = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"]
# WebGPU in headless Chromium for the gpu rows: SwiftShader (CPU-emulated) unless told otherwise.
WEBGPU_ARGS = os.environ.get("BENCH_WEBGPU_ARGS", "--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader").split()
MODEL_TITLES = {"squeezenet": "SqueezeNet 1.0", "mobilenetv2": "MobileNetV2 (synthesized logits)"}
# (key, label, bench page query)
ENGINES = [
    ("polyfill", "WebNN polyfill", "engine=polyfill&ops=1&profile=1&respond=3"),
    ("polyfill-worker", "WebNN polyfill, timeline worker", "engine=polyfill&timeline=worker&respond=3"),
    ("polyfill-numpy", "polyfill, numpy only", "engine=polyfill&fast=0&ops=1"),
    ("tfjs-cpu", "TF.js cpu", "engine=tfjs&backend=cpu&ops=1"),
    ("tfjs-wasm", "TF.js wasm", "engine=tfjs&backend=wasm&ops=1&respond=3"),
    ("tfjs-webgl", "TF.js webgl", "engine=tfjs&backend=webgl&ops=1"),
    ("polyfill-gpu", "WebNN polyfill, gpu device (WebGPU)", "engine=polyfill&device=gpu"),
    ("tfjs-webgpu", "TF.js webgpu", "engine=tfjs&backend=webgpu"),
]
# The gpu rows: measured against each other, in their own table.
GPU_ENGINES = ("polyfill-gpu", "tfjs-webgpu")


# The start-up table (issue 14): engine start vs TF.js wasm's backend-ready time.
# TF.js single-threaded (threads=0), as in any page that is not cross-origin isolated: the bench
# page is isolated, where TF.js would pick its threaded build, whose worker pool slows its start.
STARTUP_ENGINES = [("polyfill", "WebNN polyfill", "engine=polyfill"),
                   ("polyfill-worker", "WebNN polyfill, timeline worker", "engine=polyfill&timeline=worker"),
                   ("tfjs-wasm", "TF.js wasm, single-threaded", "engine=tfjs&backend=wasm&threads=0")]


def log(*args):
    print("bench:", *args, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ setup
def ensure_tfjs() -> str | None:
    """Install the pinned TF.js packages into .cache/node; None when ready, else why not."""
    return npm_cache.ensure(NODE_DIR, {pkg: TFJS_VERSION for pkg in TFJS_PACKAGES}, "TF.js for tools/bench.py")


def machine_info(engine: str, browser_version: str | None) -> dict:
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 2**20:.0f} GiB"
    except OSError:
        pass
    return {"cpu": machine.cpu_model(), "cores": os.cpu_count(), "memory": mem,
            "os": f"{platform.system()} {platform.release()}",
            "browser": f"{ENGINE_NAMES.get(engine, engine)} {browser_version} (headless)",
            "loadavg_at_start": machine.load_average(), "date": machine.utc_now(),
            "commit": machine.commit(), "tfjs": TFJS_VERSION}


# ------------------------------------------------------------------ running
class Profiles:
    """Fresh browser profiles of one engine (--browser), each a browser of
    wpt_runner.engines with an empty profile: a cold start.  Chromium keeps the
    WebGL-on-SwiftShader switches for TF.js's webgl backend."""

    def __init__(self, engine: str):
        self.engine = engine
        self._pw = None
        if engine == "chromium":
            from playwright.sync_api import sync_playwright
            self._pw = sync_playwright().start()
        self.version = None

    def new(self, webgpu: bool = False):
        args = (WEBGL_ARGS + (WEBGPU_ARGS if webgpu else [])) if self.engine == "chromium" else ()
        b = browser_engines.launch(self.engine, playwright=self._pw, args=args)
        self.version = self.version or b.version
        return b

    def close(self):
        if self._pw:
            self._pw.stop()


def wait_until(page, expression: str, timeout: float):
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression, timeout=timeout):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{expression} stayed false for {timeout:g} s")
        time.sleep(0.1)


def run_engines(base: str, engines_: list, args, progress: Progress) -> dict:
    results = {}
    task = progress.add("engines", total=len(engines_))
    profiles = Profiles(args.browser)
    try:
        common = f"runs={args.runs}&budget={args.budget}&warmup={args.warmup}&models={','.join(args.models)}"
        for key, label, query in engines_:
            progress.log(f"{label} ({args.browser}) ...")
            t = time.time()
            browser = profiles.new(webgpu=key in GPU_ENGINES)  # empty profile and HTTP cache: a cold start
            page = browser.new_page()
            try:
                page.goto(f"{base}/bench/?{query}&{common}", timeout=args.page_timeout)
                r = page.evaluate("window.benchResult", timeout=args.page_timeout)
                if r.get("start") and not r.get("unavailable") and not r.get("error"):
                    # The same start again in the same profile: HTTP cache (and code cache) warm.
                    warm = []
                    for _ in range(args.warm_starts):
                        page.goto(f"{base}/bench/?{query.split('&ops')[0]}&startOnly=1&{common}",
                                  timeout=args.page_timeout)
                        w = page.evaluate("window.benchResult", timeout=args.page_timeout)
                        if w.get("start"):
                            warm.append(w["start"])
                    r["warmStarts"] = warm
            except Exception as e:  # a page that hangs or crashes must not sink the others
                r = {"error": f"{type(e).__name__}: {e}"}
            finally:
                errors = [e for e in page.errors if e.startswith("uncaught")]
                browser.close()
            if errors:
                r["pageErrors"] = errors[:5]
            r["label"] = label
            r["wallSeconds"] = round(time.time() - t, 1)
            results[key] = r
            status = r.get("unavailable") or r.get("error") or "ok"
            progress.log(f"  {label}: {status} ({r['wallSeconds']} s)")
            progress.advance(task)
    finally:
        profiles.close()
    return {"machine": machine_info(args.browser, profiles.version), "engines": results, "warmupSeconds": args.warmup}


def run_startup(base: str, args, progress: Progress) -> dict:
    """Start-up only, interleaved: for each of N rounds and each engine, a new
    browser profile (cold: empty HTTP cache, Cache Storage and code cache),
    then the same page again in that profile (warm)."""
    runs = {key: {"label": label, "cold": [], "warm": [], "firstCold": [], "firstWarm": [], "snapshot": [], "phases": []}
            for key, label, _ in STARTUP_ENGINES}
    profiles = Profiles(args.browser)
    task = progress.add("start-up rounds", total=args.startup_runs * len(STARTUP_ENGINES))
    try:
        for round_ in range(args.startup_runs):
            for key, label, query in STARTUP_ENGINES:
                browser = profiles.new()
                try:
                    for kind in ("cold", "warm"):
                        page = browser.new_page()
                        page.goto(f"{base}/bench/?{query}&startOnly=1&models=squeezenet", timeout=args.page_timeout)
                        r = page.evaluate("window.benchResult", timeout=args.page_timeout)
                        if not r.get("start"):
                            runs[key]["error"] = r.get("unavailable") or r.get("error") or "no start time"
                            break
                        runs[key][kind].append(r["start"]["readyMs"])
                        if r["start"].get("firstResultMs") is not None:
                            runs[key]["first" + kind.title()].append(r["start"]["firstResultMs"])
                        if key.startswith("polyfill"):
                            runs[key]["snapshot"].append(r["start"].get("snapshot"))
                            runs[key]["phases"].append({"kind": kind, **(r["start"].get("phases") or {})})
                        if kind == "cold" and key.startswith("polyfill"):  # the next start needs the stored snapshot
                            wait_until(page, "!['created', 'built'].includes(webnnPolyfill.engineStats.snapshot)"
                                             " || webnnPolyfill.engineStats.snapshotStored === true", 120)
                        page.close()
                finally:
                    browser.close()
                progress.advance(task)
            progress.log(f"start-up round {round_ + 1}/{args.startup_runs} ({args.browser}): " + ", ".join(
                f"{r['label']} cold {fmt(r['cold'][-1] if r['cold'] else None)} warm {fmt(r['warm'][-1] if r['warm'] else None)}"
                for r in runs.values()))
    finally:
        profiles.close()
    return {"machine": machine_info(args.browser, profiles.version), "startup": runs}


# ------------------------------------------------------------------ network mode (issue 34)
# What a visitor waits for: web/bench/start.html starts one engine (script inserted -> ready)
# in a new browser profile per cold trial, then again in that profile (warm), served by
# tools/serve.py as a CDN serves (precompressed zstd / brotli / gzip by Accept-Encoding), under
# Chromium's network emulation; bytes on the wire from the browser's own accounting (CDP
# Network.loadingFinished encodedDataLength, per engine: the requests under its folder).
NETWORKS = [
    # Lighthouse's desktop setting: 10 Mbit/s down and up, 40 ms round trip.
    ("10 Mbit/s, 40 ms", {"offline": False, "latency": 40, "downloadThroughput": 10e6 / 8,
                          "uploadThroughput": 10e6 / 8}),
    ("unthrottled", None),
]
# (key, label, start.html query, URL prefix of its files)
NETWORK_ENGINES = [
    ("polyfill", "this polyfill (`createContext()` resolved)", "engine=polyfill", "/dist/"),
    ("polyfill-nosnap", "this polyfill, `buildSnapshot: false`",
     "engine=polyfill&config=" + urllib.parse.quote('{"buildSnapshot":false}'), "/dist/"),
    ("ort-wasm", "ONNX Runtime Web 1.30 wasm EP (`ort.wasm.min.js`, 1 thread, a one-node session created)",
     "engine=ort-wasm", "/ort/"),
    ("tfjs-wasm", "TF.js 4.22 wasm, single-threaded (tf-core + tf-backend-wasm, `tf.ready()`)",
     "engine=tfjs-wasm", "/vendor/"),
]


def one_node_model() -> str:
    """A one-node ONNX model (Relu on float32[1, 4]) for ORT's session, base64 (onnx package)."""
    import base64

    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model)
    return base64.b64encode(model.SerializeToString()).decode()


class WireLog:
    """Bytes on the wire of one page, from Chromium's own accounting (CDP Network domain)."""

    def __init__(self, context, page, conditions):
        self.urls, self.sizes = {}, {}
        self.cdp = context.new_cdp_session(page)
        self.cdp.on("Network.requestWillBeSent", lambda e: self.urls.__setitem__(e["requestId"], e["request"]["url"]))
        self.cdp.on("Network.loadingFinished",
                    lambda e: self.sizes.__setitem__(e["requestId"], e.get("encodedDataLength", 0)))
        self.cdp.send("Network.enable")
        if conditions:
            self.cdp.send("Network.emulateNetworkConditions", conditions)

    def bytes_under(self, prefix: str) -> tuple:
        """(bytes, requests) of the finished requests whose path starts with prefix."""
        hits = [n for rid, n in self.sizes.items()
                if urllib.parse.urlsplit(self.urls.get(rid, "")).path.startswith(prefix)]
        return sum(hits), len(hits)


def run_network(base: str, args, progress: Progress) -> dict:
    """Cold (new profile) and warm (same profile) starts of each engine on each network,
    interleaved round by round."""
    from playwright.sync_api import sync_playwright

    import tempfile

    engines_ = [e for e in NETWORK_ENGINES if e[0] in args.network_engines]
    networks = [n for n in NETWORKS if n[0].split(",")[0].replace(" ", "").lower() in args.networks.split(",")]
    model = one_node_model()
    runs = {net: {key: {"label": label, "cold": [], "warm": [], "coldBytes": [], "warmBytes": [], "requests": [],
                        "snapshot": [], "phases": []}
                  for key, label, _, _ in engines_} for net, _ in networks}
    task = progress.add("network rounds", total=(args.startup_runs + 1) * len(networks) * len(engines_))
    version = None
    with sync_playwright() as pw:
        # Round 0 is not counted: it fills the server's compression cache for the anchors'
        # files (compressed on the fly once, as a CDN's cache would hold them).
        for round_ in range(args.startup_runs + 1):
            for net, conditions in networks:
                for key, label, query, prefix in engines_:
                    r = runs[net][key]
                    url = f"{base}/bench/start.html?{query}" + (f"&model={urllib.parse.quote(model)}" if key == "ort-wasm" else "")
                    with tempfile.TemporaryDirectory(prefix="bench-net-") as profile:
                        ctx = pw.chromium.launch_persistent_context(
                            profile, executable_path=browser_engines.chromium_path(),
                            args=browser_engines.CHROMIUM_ARGS, headless=True)
                        version = version or (ctx.browser.version if ctx.browser else None)
                        try:
                            for kind in ("cold", "warm"):
                                page = ctx.new_page()
                                wire = WireLog(ctx, page, conditions)
                                page.goto(url, timeout=args.page_timeout * 1000)
                                page.wait_for_function("window.startResult", timeout=args.page_timeout * 1000)
                                res = page.evaluate("window.startResult")
                                if res.get("error"):
                                    r["error"] = res["error"][:300]
                                    break
                                if round_ and key.startswith("polyfill"):
                                    r["snapshot"].append(res.get("snapshot"))
                                    r["phases"].append({"kind": kind, "net": net, **(res.get("phases") or {})})
                                if kind == "cold" and key.startswith("polyfill"):  # the warm start restores it
                                    page.wait_for_function(
                                        "!['created', 'built'].includes(webnnPolyfill.engineStats.snapshot)"
                                        " || webnnPolyfill.engineStats.snapshotStored === true",
                                        timeout=args.page_timeout * 1000)
                                if round_:
                                    nbytes, nreq = wire.bytes_under(prefix)
                                    r[kind].append(res["readyMs"])
                                    r[f"{kind}Bytes"].append(nbytes)
                                    if kind == "cold":
                                        r["requests"].append(nreq)
                                page.close()
                        finally:
                            for p in ctx.pages:
                                p.close()
                            ctx.close()
                    progress.advance(task)
            if round_:
                progress.log(f"network round {round_}/{args.startup_runs}: " + "; ".join(
                    f"{net}: " + ", ".join(f"{key} {fmt(r['cold'][-1] if r['cold'] else None)}"
                                           for key, r in runs[net].items()) for net, _ in networks))
    info = machine_info("chromium", version)
    return {"machine": info, "network": runs}


def network_table(network: dict) -> str:
    out = ["### First and later visits over a network: script inserted → ready\n",
           "Served by `tools/serve.py` as a CDN serves: precompressed zstd / brotli / gzip by Accept-Encoding, "
           "the smallest copy the browser accepts (Chromium: brotli for the polyfill's large files). Chromium's network emulation (`Network.emulateNetworkConditions`); "
           "cold = a new browser profile, warm = the same page again in that profile (the polyfill restores its "
           "engine snapshot from Cache Storage). Bytes on the wire: Chromium's `encodedDataLength` of the engine's "
           "requests (its folder on the server: `/dist/`, `/ort/`, `/vendor/`), headers included. Engines "
           "interleaved round by round; medians.\n"]
    for net, engines_ in network.items():
        out += [f"**{net}**\n", "| engine | cold (ms) | warm (ms) | bytes on the wire, cold | warm | requests | runs |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for key, r in engines_.items():
            if r.get("error"):
                out.append(f"| {r['label']} | unavailable: {str(r['error']).splitlines()[0][:100]} | | | | | |")
                continue
            out.append(f"| {r['label']} | {fmt(median(r['cold']))} | {fmt(median(r['warm']))} | "
                       f"{mb(median(r['coldBytes']))} | {mb(median(r['warmBytes']))} | "
                       f"{median(r['requests']) if r['requests'] else '–'} | {len(r['cold'])} |")
        poly, ort_, tf = (engines_.get(k, {}) for k in ("polyfill", "ort-wasm", "tfjs-wasm"))
        for ref, name in ((ort_, "ORT-web wasm"), (tf, "TF.js wasm")):
            if poly.get("cold") and ref.get("cold"):
                out.append(f"| **polyfill / {name}** | **{ratio(median(poly['cold']), median(ref['cold']))}** | "
                           f"**{ratio(median(poly['warm']), median(ref['warm']))}** | "
                           f"{ratio(median(poly['coldBytes']), median(ref['coldBytes']))} | | | |")
        out.append("")
    return "\n".join(out)


def mb(n) -> str:
    if n is None:
        return "–"
    return f"{n / 1e6:.2f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def median(values):
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def startup_table(startup: dict) -> str:
    poly, tf = startup.get("polyfill", {}), startup.get("tfjs-wasm", {})
    out = ["### Start-up: script load → ready, cold and warm profile (ms)\n",
           "Polyfill: `<script>` inserted → `navigator.ml.createContext()` resolved. TF.js wasm: tf-core + "
           "wasm backend scripts inserted → `tf.setBackend('wasm')` + `tf.ready()`. Cold = a new browser profile "
           "(empty HTTP cache, Cache Storage and code cache: the polyfill restores the build-time engine snapshot "
           "served beside the runtime); warm = the same page again in that profile (the polyfill restores its "
           "snapshot from Cache Storage). First result: the same start, then a one-op graph (relu of 4 values) built, "
           "written, dispatched and read back (TF.js: `tf.relu` and `data()`), as a page's first inference; "
           "with the timeline worker it waits for the worker's engine, which `createContext()` does not. "
           "Engines interleaved round by round; medians.\n",
           "| engine | cold profile | warm profile | first result, cold | first result, warm | runs |",
           "|---|---:|---:|---:|---:|---:|"]
    for r in (poly, startup.get("polyfill-worker", {}), tf):
        if not r:
            continue
        if r.get("error"):
            out.append(f"| {r['label']} | unavailable: {str(r['error'])[:100]} | | | | |")
            continue
        first = [fmt(median(r[k])) if r.get(k) else "–" for k in ("firstCold", "firstWarm")]
        out.append(f"| {r['label']} | {fmt(median(r['cold']))} | {fmt(median(r['warm']))} | {first[0]} | {first[1]} | "
                   f"{len(r['cold'])} |")
    if poly.get("cold") and tf.get("cold") and not tf.get("error"):
        out.append(f"| **polyfill / TF.js wasm** | **{ratio(median(poly['cold']), median(tf['cold']))}** | "
                   f"**{ratio(median(poly['warm']), median(tf['warm']))}** | | | |")
    out.append("")
    if poly.get("phases"):
        out.append("Polyfill start, median ms after its script ran at which each step finished "
                   "(`webnnPolyfill.engineStats.phases`); how it started: "
                   + ", ".join(sorted({str(s) for s in poly["snapshot"]})) + ".\n")
        names = ["compile", "scripts", "runtimeFetched", "snapshotRead", "librariesCompiled", "memoryRestored",
                 "librariesRestored", "pyodideReady", "filesWritten", "bridge", "simd", "ready"]
        out.append("| profile | " + " | ".join(names) + " |")
        out.append("|---|" + "---:|" * len(names))
        for kind in ("cold", "warm"):
            rows = [ph for ph in poly["phases"] if ph["kind"] == kind]
            out.append(f"| {kind} | " + " | ".join(fmt(median([ph[n] for ph in rows if n in ph])) for n in names) + " |")
        out.append("")
    return "\n".join(out)


# ------------------------------------------------------------------ tables
def fmt(ms) -> str:
    if ms is None:
        return "–"
    if ms >= 100:
        return f"{ms:,.0f}".replace(",", " ")
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.2f}"


def ratio(a, b) -> str:
    if a is None or b is None or b <= 0:
        return "–"
    r = a / b
    return f"{r:.2f}×" if r < 10 else f"{r:.0f}×"


def available(r: dict) -> bool:
    return not r.get("unavailable") and not r.get("error")


def why(r: dict) -> str:
    return "unavailable: " + str(r.get("unavailable") or r.get("error")).replace("|", "/").splitlines()[0][:120]


def adapter_name(eng: dict) -> str:
    """The WebGPU adapter the gpu rows ran on, as the pages named it (one name when both agree)."""
    names = {(r.get("adapter") or {}).get("name") for k, r in eng.items() if k in GPU_ENGINES and available(r)}
    names.discard(None)
    return " / ".join(sorted(names)) or "no adapter"


def gpu_table(data: dict, models: list) -> str:
    """The gpu rows: the polyfill's gpu device vs TF.js webgpu, same weights, same adapter."""
    eng = data["engines"]
    poly, tf = eng.get("polyfill-gpu", {}), eng.get("tfjs-webgpu", {})
    adapter = adapter_name(eng)
    emulated = " — SwiftShader is Chromium's CPU emulation of a GPU, so this measures shaders run as JIT-compiled " \
               "CPU code, not GPU speed" if "swiftshader" in adapter.lower() else ""
    kind = " (CPU-emulated)" if emulated else ""
    out = [f"### gpu: WebNN polyfill's gpu device vs TF.js webgpu (ms), WebGPU adapter: {adapter}{kind}\n",
           "Both engines on the same adapter, in the same headless Chromium (flags: `" + " ".join(WEBGPU_ARGS) + "`)"
           f"{emulated}. Inference = write the input, run, read the 1001 probabilities back. "
           "**polyfill / TF.js** = polyfill gpu median ÷ TF.js webgpu median (above 1: the polyfill is slower). "
           "**runs on** = what executed the polyfill's graph (`engineStats.kernels.backend`).\n",
           "| model | polyfill gpu median | min | n | TF.js webgpu median | min | n | polyfill / TF.js | top-1 (polyfill, TF.js) | max \\|Δp\\| | runs on |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"]
    for model in models:
        pm = (poly.get("models") or {}).get(model) if available(poly) else None
        tm = (tf.get("models") or {}).get(model) if available(tf) else None
        cells = [MODEL_TITLES.get(model, model)]
        cells += [fmt(pm["medianMs"]), fmt(pm["minMs"]), str(len(pm["runsMs"]))] if pm else [why(poly) if poly else "not run", "", ""]
        cells += [fmt(tm["medianMs"]), fmt(tm["minMs"]), str(len(tm["runsMs"]))] if tm else [why(tf) if tf else "not run", "", ""]
        cells.append(f"**{ratio(pm['medianMs'], tm['medianMs'])}**" if pm and tm else "–")
        cells.append(", ".join(m["top5"][0]["label"] for m in (pm, tm) if m) or "–")
        cells.append(f"{max(abs(a - b) for a, b in zip(pm['probabilities'], tm['probabilities'])):.1e}" if pm and tm else "–")
        backend = (pm or {}).get("backend") or {}
        if not backend:
            cells.append("–")
        elif backend.get("webgpu"):
            parts = backend.get("partitions") or []
            cells.append("WebGPU, one GPU graph" + (f", {len(parts)} partition(s)" if parts else ", no partition"))
        else:
            cells.append(f"cpu fallback: {str(backend.get('reason'))[:80]}")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    return "\n".join(out)


def responsiveness_table(eng: dict, models: list) -> str:
    """The page while inferring back to back (issue 32): how long each inference holds the
    page's thread, and the requestAnimationFrame rate and longest frame gap meanwhile."""
    rows = [(k, r) for k, r in eng.items() if available(r)
            and any(((r.get("models") or {}).get(m) or {}).get("responsive") for m in models)]
    if not rows:
        return ""
    out = ["### The page while inferring back to back\n",
           "Each engine infers for 3 s in a loop with no yield of its own (a camera loop), in a window, while "
           "`requestAnimationFrame` counts frames. **page thread** = the synchronous part of each inference call, the "
           "time it holds the page's thread (polyfill: `writeTensor` + `dispatch` + `readTensor`; with the timeline "
           "worker these only post; TF.js: input tensor + `predict`); **inference** = call to result; medians.\n",
           "| model | engine | page thread / inference | inference | fps | longest frame gap | inferences |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for model in models:
        for key, r in rows:
            m = ((r.get("models") or {}).get(model) or {}).get("responsive")
            if not m:
                continue
            out.append(f"| {MODEL_TITLES.get(model, model)} | {r['label']} | {fmt(m['pageThreadMs'])} | "
                       f"{fmt(m['inferenceMs'])} | {m['fps']:.0f} | {fmt(m['longestGapMs'])} | {m['inferences']} |")
    out.append("")
    return "\n".join(out)


def tables(data: dict, models: list) -> str:
    eng = {k: r for k, r in data["engines"].items() if k not in GPU_ENGINES}  # gpu rows: gpu_table()
    if not eng:
        return ""
    ref = eng.get("polyfill", {})
    out = []

    out.append("### Start: script load → ready (ms)\n")
    out.append("Polyfill: `<script>` inserted → `navigator.ml.createContext()` resolved (Pyodide, numpy, the core). "
               "TF.js: tf-core + backend scripts inserted → `tf.setBackend()` + `tf.ready()`. "
               "Cold = fresh browser context (empty HTTP cache); warm = the same page loaded again in that context.\n")
    out.append("| engine | cold (no cache) | warm (HTTP cache) |")
    out.append("|---|---:|---:|")
    for key, r in eng.items():
        if not available(r):
            out.append(f"| {r['label']} | {why(r)} | |")
            continue
        warm = [w["readyMs"] for w in r.get("warmStarts", [])]
        out.append(f"| {r['label']} | {fmt(r['start']['readyMs'])} | {fmt(min(warm)) if warm else '–'} |")
    out.append("")

    for model in models:
        ref_m = (ref.get("models") or {}).get(model) if available(ref) else None
        out.append(f"### {MODEL_TITLES.get(model, model)} (ms)\n")
        out.append("Inference = write the input, run, read the 1001 probabilities back. "
                   f"The median and min are of the runs after the first inference and {data.get('warmupSeconds', 0):g} s of untimed "
                   "warm-up runs (at least one; engines tier wasm up in the background). "
                   "**polyfill / engine** = polyfill median ÷ that engine's median (above 1: the polyfill is slower). "
                   "**max |Δp|** = largest difference from the polyfill's probabilities on test.jpg.\n")
        out.append("| engine | weights load | build | first inference | median | min | n | polyfill / engine | top-1 | max \\|Δp\\| |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
        for key, r in eng.items():
            if not available(r):
                out.append(f"| {r['label']} | {why(r)} | | | | | | | | |")
                continue
            m = (r.get("models") or {}).get(model)
            if not m:
                out.append(f"| {r['label']} | – | | | | | | | | |")
                continue
            diff = "–"
            if ref_m and key != "polyfill":
                diff = f"{max(abs(a - b) for a, b in zip(ref_m['probabilities'], m['probabilities'])):.1e}"
            top1 = m["top5"][0]["label"]
            if model == "mobilenetv2":
                top1 = f"({top1})"
            rt = ratio(ref_m["medianMs"], m["medianMs"]) if ref_m and key != "polyfill" else "1"
            out.append(f"| {r['label']} | {fmt(m['weightsMs'])} | {fmt(m['buildMs'])} | {fmt(m['firstMs'])} | "
                       f"{fmt(m['medianMs'])} | {fmt(m['minMs'])} | {len(m['runsMs'])} | {rt} | {top1} | {diff} |")
        out.append("")

    out.append(responsiveness_table(eng, models))

    ops_engines = [(k, r) for k, r in eng.items() if available(r) and r.get("ops")]
    if ops_engines:
        out.append("### Single ops: median ms (polyfill / engine)\n")
        out.append("One-op graphs of the models' biggest shapes (float32, NHWC, constant filters + bias), "
                   "timed after a warm-up. Polyfill: `dispatch()` (it runs synchronously); TF.js: the op + `dataSync()`. "
                   "GFLOP/s counts a multiply-add as 2 FLOPs.\n")
        head = "| op | MMACs | " + " | ".join(r["label"] for _, r in ops_engines) + " | polyfill GFLOP/s |"
        out.append(head)
        out.append("|---|---:|" + "---:|" * len(ops_engines) + "---:|")
        ref_ops = {o["id"]: o for o in ref.get("ops", [])} if available(ref) else {}
        for op in ops_engines[0][1]["ops"]:
            cells = []
            for key, r in ops_engines:
                o = next((x for x in r["ops"] if x["id"] == op["id"]), None)
                if not o:
                    cells.append("–")
                elif key == "polyfill" or op["id"] not in ref_ops:
                    cells.append(fmt(o["medianMs"]))
                else:
                    cells.append(f"{fmt(o['medianMs'])} ({ratio(ref_ops[op['id']]['medianMs'], o['medianMs'])})")
            p = ref_ops.get(op["id"])
            gflops = f"{2 * p['macs'] / p['medianMs'] / 1e6:.2f}" if p else "–"
            out.append(f"| {op['id']} | {op['macs'] / 1e6:.1f} | " + " | ".join(cells) + f" | {gflops} |")
        out.append("")

    prof = ref.get("profile") if available(ref) else None
    if prof:
        out.append("### Where the polyfill's inference time goes\n")
        out.append("Per op kind inside the models (fast paths on; fused conv2d+activation nodes are one op), "
                   "measured around each kernel call in the engine. The rest of the inference is the JS/Python "
                   "bridge, input/output copies and graph bookkeeping.\n")
        for model in models:
            p = prof.get(model)
            if not p or p.get("error"):
                if p:
                    out.append(f"{MODEL_TITLES.get(model, model)}: profile unavailable ({p['error'][:200]})\n")
                continue
            fast = {name: v for name, v in (p.get("kernels_profile") or {}).items()}
            wall = p["wallMsPerInference"]
            out.append(f"**{MODEL_TITLES.get(model, model)}**: {fmt(wall)} ms per inference while profiled\n")
            out.append("| op | calls | ms / inference | share | fast path |")
            out.append("|---|---:|---:|---:|---|")
            rows = sorted(p["ops"].items(), key=lambda kv: -kv[1]["msPerInference"])
            for name, v in rows:
                base = name.split(" (")[0]
                f = fast.get(base)
                if not f or not f["calls"]:
                    fp = "–"
                elif f["fast_calls"] == f["calls"]:
                    fp = "yes"
                elif f["fast_calls"] == 0:
                    fp = "no (numpy)"
                else:
                    fp = f"{100 * f['fast_calls'] / f['calls']:.0f} % of calls"
                out.append(f"| {name} | {v['callsPerInference']:.0f} | {fmt(v['msPerInference'])} | "
                           f"{100 * v['msPerInference'] / wall:.0f} % | {fp} |")
            kernel_total = sum(v["msPerInference"] for v in p["ops"].values())
            out.append(f"| *outside kernels* | | {fmt(wall - kernel_total)} | {100 * (wall - kernel_total) / wall:.0f} % | |")
            out.append("")
    return "\n".join(out)


def machine_line(info: dict) -> str:
    return (f"{info['cpu']}, {info['cores']} cores, {info['memory']} RAM, {info['os']}; {info['browser']}; "
            f"TF.js {info['tfjs']}; {info['date']}; commit {info['commit']}; load average at start {info['loadavg_at_start']}")


def write_markdown(path: Path, body: str, command: str, info: dict, engine: str = "chromium", block: str = "") -> None:
    """Between this engine's markers: `<!-- bench:begin ... -->` / `<!-- bench:end -->` for
    Chromium, `<!-- bench:begin:ENGINE ... -->` / `<!-- bench:end:ENGINE -->` for the others;
    `block` names a separate block of that engine (the gpu rows: `bench:begin:gpu`)."""
    tag = ":".join(x for x in ("" if engine == "chromium" else engine, block) if x)
    tag = f":{tag}" if tag else ""
    begin, end_marker = f"<!-- bench:begin{tag} ", f"<!-- bench:end{tag} -->"
    block = (f"{begin}(generated by tools/bench.py; edit outside these markers) -->\n"
             f"Command: `{command}`\n\nMachine: {machine_line(info)}\n\n{body}\n{end_marker}")
    if path.exists() and begin in path.read_text():
        text = path.read_text()
        start = text.index(begin)
        end = text.index(end_marker, start) + len(end_marker)
        path.write_text(text[:start] + block + text[end:])
    elif path.exists():
        path.write_text(path.read_text().rstrip("\n") + "\n\n" + block + "\n")
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("# Performance\n\n" + block + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10, help="repeated inferences per model (default 10)")
    p.add_argument("--out", type=Path, default=ROOT / "test-results" / "bench.json",
                   help="write all results as JSON here (default test-results/bench.json)")
    p.add_argument("--markdown", type=Path, help="write the tables into this markdown file")
    p.add_argument("--engines", default=",".join(k for k, _, _ in ENGINES),
                   help="comma list of " + ", ".join(k for k, _, _ in ENGINES))
    p.add_argument("--models", default="squeezenet,mobilenetv2")
    p.add_argument("--budget", type=float, default=60,
                   help="seconds after which a repeated measurement stops (once it has 3 runs; default 60)")
    p.add_argument("--warmup", type=float, default=5,
                   help="seconds of untimed runs per model after the first inference, before the timed ones "
                        "(at least one run; default 5)")
    p.add_argument("--warm-starts", type=int, default=1, help="warm-cache starts per engine (default 1)")
    p.add_argument("--page-timeout", type=int, default=900, help="seconds per engine page (default 900)")
    p.add_argument("--startup-runs", type=int, default=5,
                   help="rounds of the start-up table (cold + warm profile per engine; default 5, 0 skips it)")
    p.add_argument("--startup-only", action="store_true", help="only the start-up table")
    p.add_argument("--network", action="store_true",
                   help="with --startup-only: the network table instead (first and later visits at 10 Mbit/s "
                        "+ 40 ms and unthrottled, bytes on the wire; the polyfill vs ORT-web 1.30 wasm and "
                        "TF.js wasm; Chromium)")
    p.add_argument("--network-engines", default=",".join(k for k, _, _, _ in NETWORK_ENGINES),
                   help="comma list of " + ", ".join(k for k, _, _, _ in NETWORK_ENGINES))
    p.add_argument("--timeline-ab", type=int, default=0, metavar="PAIRS",
                   help="only the timeline worker's latency against in-page execution: per model, PAIRS "
                        "inferences alternating between a page context and a worker context in one page "
                        "(issue 32's 1.1x bound; drifts of the machine's speed affect both alike)")
    p.add_argument("--networks", default="10mbit/s,unthrottled",
                   help="with --network: comma list of the networks to run (10mbit/s, unthrottled)")
    p.add_argument("--layouts", action="store_true",
                   help="only SqueezeNet NHWC vs NCHW (same weights), in Chromium and in CPython")
    p.add_argument("--browser", choices=browser_engines.ENGINES, default="chromium",
                   help="engine to measure in (wpt_runner/engines.py; default chromium): the polyfill "
                        "and TF.js run in the same engine")
    args = p.parse_args(argv)
    if args.layouts:
        import bench_kernels

        print("In headless Chromium (the polyfill, wasm SIMD kernels):")
        rc = bench_kernels.main(["--layouts", "--browser", "--runs", str(args.runs)])
        print("\nIn CPython (webnn_core with the native build of the same kernels):")
        return rc or bench_kernels.main(["--layouts", "--runs", str(args.runs)])
    args.models = [m for m in args.models.split(",") if m]
    wanted = args.engines.split(",")
    unknown = set(wanted) - {k for k, _, _ in ENGINES}
    if unknown:
        p.error(f"unknown engines: {', '.join(sorted(unknown))}")
    engines = [e for e in ENGINES if e[0] in wanted]
    if args.browser != "chromium":  # the WebGPU switches are Chromium's
        engines = [e for e in engines if e[0] not in GPU_ENGINES]

    if not (ROOT / "dist" / "webnn-polyfill.js").exists():
        print("bench: dist/ is not built: run ./dev build first", file=sys.stderr)
        return 2
    why = browser_engines.unavailable(args.browser)
    if why:
        print(f"bench: {args.browser}: {why}", file=sys.stderr)
        return 2
    if args.network and args.browser != "chromium":
        p.error("--network uses Chromium's network emulation (CDP): --browser chromium")
    args.network_engines = args.network_engines.split(",")
    if set(args.network_engines) - {k for k, _, _, _ in NETWORK_ENGINES}:
        p.error(f"unknown --network-engines: {args.network_engines}")
    models_dir = Path(os.environ.get("WEBNN_MODELS", ROOT.parent / "shared" / "models"))
    if not args.network and not (models_dir / "squeezenet1.0_nhwc").exists():
        print(f"bench: models not found under {models_dir} (set WEBNN_MODELS)", file=sys.stderr)
        return 2

    if args.network:
        return main_network(args, argv)
    if args.timeline_ab:
        return main_timeline_ab(args, argv)
    tfjs_problem = ensure_tfjs() if args.startup_runs > 0 or any(k.startswith("tfjs") for k, _, _ in engines) else None
    server = serve.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        runnable = [e for e in engines if not (tfjs_problem and e[0].startswith("tfjs"))]
        with Progress(prefix="bench: ") as progress:  # a bar on a terminal only
            data = run_engines(base, runnable, args, progress) if not args.startup_only else {"engines": {}}
            started = run_startup(base, args, progress) if args.startup_runs > 0 else None
        if started:
            data["startup"] = started["startup"]
            data.setdefault("machine", started["machine"])
    finally:
        server.shutdown()
    if tfjs_problem and not args.startup_only:
        for key, label, _ in engines:
            if key.startswith("tfjs"):
                data["engines"][key] = {"label": label, "unavailable": tfjs_problem}
        data["engines"] = {k: data["engines"][k] for k, _, _ in engines}
    cmd_args = [a for a in (argv if argv is not None else sys.argv[1:])]
    command = "python3 tools/bench.py" + (" " + " ".join(cmd_args) if cmd_args else "")
    data["command"] = command
    data["runs"] = args.runs

    body = (startup_table(data["startup"]) if data.get("startup") else "") + (
        tables(data, args.models) if data["engines"] else "")
    gpu_body = gpu_table(data, args.models) if any(k in data["engines"] for k in GPU_ENGINES) else ""
    print(f"Machine: {machine_line(data['machine'])}\n")
    print(body + gpu_body)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=1) + "\n")
        log(f"wrote {args.out}")
    if args.markdown:
        if body.strip():
            write_markdown(args.markdown, body, command, data["machine"], args.browser)
        if gpu_body:
            write_markdown(args.markdown, gpu_body, command, data["machine"], args.browser, block="gpu")
        log(f"wrote {args.markdown}")
    ok = available(data["engines"].get("polyfill", {"error": "not run"})) if "polyfill" in wanted else True
    if args.startup_only:
        ok = bool(data.get("startup", {}).get("polyfill", {}).get("warm"))
    return 0 if ok else 1


def main_timeline_ab(args, argv) -> int:
    """--timeline-ab PAIRS: web/bench/?timelineAB=PAIRS, one page, printed (and in --out)."""
    server = serve.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    profiles = Profiles(args.browser)
    try:
        browser = profiles.new()
        page = browser.new_page()
        query = f"engine=polyfill&timelineAB={args.timeline_ab}&warmup={args.warmup}&models={','.join(args.models)}"
        page.goto(f"{base}/bench/?{query}", timeout=args.page_timeout)
        r = page.evaluate("window.benchResult", timeout=args.page_timeout)
        browser.close()
    finally:
        profiles.close()
        server.shutdown()
    if r.get("error") or not r.get("timelineAB"):
        print(f"bench: {r.get('error') or r}", file=sys.stderr)
        return 1
    command = "python3 tools/bench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    data = {"machine": machine_info(args.browser, profiles.version), "command": command, "timelineAB": r["timelineAB"]}
    print(f"Machine: {machine_line(data['machine'])}\n")
    print("| model | in the page: median / min (ms) | timeline worker: median / min (ms) | worker / page: "
          "ratio of medians | median of the pairs' ratios | pairs | in the worker's dispatch / the rest, "
          "medians (ms) |\n|---|---:|---:|---:|---:|---:|---:|")
    for model, ab in r["timelineAB"].items():
        assert ab["location"] == {"page": "page", "worker": "worker"}, ab["location"]
        print(f"| {MODEL_TITLES.get(model, model)} | {fmt(ab['pageMs'])} / {fmt(ab['pageMinMs'])} | "
              f"{fmt(ab['workerMs'])} / {fmt(ab['workerMinMs'])} | {ab['ratioOfMedians']:.3f}× | "
              f"{ab['medianRatio']:.3f}× | {ab['pairs']} | {fmt(ab['workerDispatchMs'])} / {fmt(ab['workerOutsideMs'])} |")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=1) + "\n")
    return 0


def main_network(args, argv) -> int:
    """--network: the network table (run_network), printed, in --out and in --markdown's
    `<!-- bench:begin:network -->` block."""
    import ort_web

    for key, problem in (("tfjs-wasm", ensure_tfjs()), ("ort-wasm", ort_web.ensure_ort())):
        if problem and key in args.network_engines:
            log(f"{key} left out: {problem}")
            args.network_engines.remove(key)
    server = serve.start()
    try:
        with Progress(prefix="bench: ") as progress:
            data = run_network(f"http://127.0.0.1:{server.server_address[1]}", args, progress)
    finally:
        server.shutdown()
    command = "python3 tools/bench.py " + " ".join(argv if argv is not None else sys.argv[1:])
    data["command"] = command
    body = network_table(data["network"])
    print(f"Machine: {machine_line(data['machine'])}\n")
    print(body)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(data, indent=1) + "\n")
        log(f"wrote {args.out}")
    if args.markdown:
        write_markdown(args.markdown, body, command, data["machine"], block="network")
        log(f"wrote {args.markdown}")
    return 0 if all(r.get("cold") for net in data["network"].values() for r in net.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
