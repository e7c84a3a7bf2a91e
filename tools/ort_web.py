"""ONNX Runtime Web through its WebNN execution provider, on the polyfill (issues 18, 33).

    python3 tools/ort_web.py [--versions 1.22.0,1.30.0] [--devices cpu,gpu] [--groups ops,node,models,nets]
                             [--filter TEXT] [--json out.json] [--markdown FILE] [--list-failures]

(`./dev clients ort` runs this.) For each onnxruntime-web version in --versions (default 1.22.0, which
many pages still pin, and the latest, ORT_VERSION), installs npm onnxruntime-web into
.cache/node-ort/<version>/, serves tools/ort_web_page/ (the polyfill first, then ORT), and runs in
headless Chromium every case of tools/ort_cases.py, and the benchmark networks of
tools/bench_ort/models.py (group "nets"), twice: once on ORT's own wasm EP (the reference) and once
per device on `executionProviders: [{name: 'webnn', deviceType}]`. Per case and device:

- accepted: ORT's WebNN EP claimed every node (its GetCapability log line); a benchmark net: every
  node but the ops ORT's EP has no builder for (ORT_NO_WEBNN_BUILDER: ShuffleNet's and ResNet50's Sum);
- ran on WebNN: the session ran, ORT placed all nodes on the WebNN EP (its "Node placements" log;
  a benchmark net: all but those ops) and the page saw MLGraphBuilder.build() and
  MLContext.dispatch() calls — a graph that quietly ran on ORT's wasm kernels is not counted;
- matched: every output equals the wasm EP's within ORT's own test tolerances for webnn
  (js/web/test/test-runner.ts: |a-b| < 1e-4 or a/b and b/a < 1.000001, integers exact); whole
  networks (groups models and nets) within 1e-3 + 1e-3·|ref| (network_mismatch).

Where the wasm EP cannot run a case (ORT's contrib ops without a CPU kernel) the test data's own
expected outputs are the reference. Known ORT-side limitations (KNOWN_ORT) are listed and counted
apart, each with the ORT source line that causes it. A whole network that the EP took but that did
not run on WebNN or did not match (and that no KNOWN_ORT cause explains), or a benchmark net that
did not run on WebNN at all, fails the run (exit status 1).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "bench_ort"))
import machine  # noqa: E402
import models as bench_models  # noqa: E402  (tools/bench_ort/models.py)
import npm_cache  # noqa: E402
import ort_cases  # noqa: E402
import serve  # noqa: E402

ORT_PACKAGE = "onnxruntime-web"
ORT_VERSION = "1.30.0"  # the latest 1.x on npm when this was written
# What the client suite and tools/bench_ort.py run by default: 1.22.0 (what many pages still pin: its
# WebNN EP follows preferredInputLayout, builds NHWC graphs for "nhwc") and the latest (always NCHW).
ORT_VERSIONS = ("1.22.0", ORT_VERSION)
NODE_DIR = ROOT / ".cache" / "node-ort"
PAGE_DIR = Path(__file__).resolve().parent / "ort_web_page"
TESTDATA = Path(os.environ.get("ORT_TESTDATA", ROOT.parent / "shared" / "ort-testdata"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
                 "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"]
# test-runner.ts, TensorResultValidator for 'webnn' (WASM_THRESHOLD_*)
ABSOLUTE, RELATIVE = 1.0e-4, 1.000001
# Whole networks (the models and nets groups, tools/bench_ort.py): |a - b| <= 1e-3 + 1e-3 * |ref| per
# element, against ORT's wasm EP (issue 33): float32 sums over thousands of terms in another order.
NETWORK_ATOL, NETWORK_RTOL = 1e-3, 1e-3
CASE_TIMEOUT_MS = 60_000
NET_TIMEOUT_MS = 300_000  # a benchmark network's create + run (ResNet50: 100 MB of weights) on a loaded machine
BENCH_MODEL_DIR = ROOT / ".cache" / "ort-bench"  # tools/bench_ort.py's model cache, served as /ortmodels/
# The benchmark networks of tools/bench_ort/models.py (the "nets" group): the four onnx light nets with
# seeded weights, the MLP and the transformer block.
BENCH_NETS = ("squeezenet", "shufflenet", "inception_v1", "resnet50", "mlp", "transformer")
# ONNX ops ORT's WebNN EP has no builder for (op_builder_factory.cc at v1.22.0 and at 89b01b406ca7): ORT
# runs them on its own CPU EP between WebNN partitions (ShuffleNet's and ResNet50's residual Sums). A net
# counts as run on WebNN when every other node is placed on the WebNN EP.
ORT_NO_WEBNN_BUILDER = {"Sum"}


def log(*args):
    print("ort-web:", *args, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ setup
def ort_dir(version: str = ORT_VERSION) -> Path:
    """Where npm puts onnxruntime-web `version` (one folder per version, so --version switches cheaply)."""
    return NODE_DIR / version / "node_modules" / ORT_PACKAGE


def ensure_ort(version: str = ORT_VERSION) -> str | None:
    """npm install onnxruntime-web@version into .cache/node-ort/<version> (the one install the client
    suite, the gallery's ORT card and tools/bench_ort.py share); None when ready, else why not."""
    # short fetch timeouts: an unreachable registry is a quick, clear skip, not a long hang
    return npm_cache.ensure(NODE_DIR / version, {ORT_PACKAGE: version}, f"{ORT_PACKAGE} {version}",
                            npm_args=("--fetch-timeout=30000", "--fetch-retries=1"), timeout=300)


def testdata(version: str = ORT_VERSION) -> Path | None:
    """The unpacked ORT test data for `version` (../shared/ort-testdata), or None when absent."""
    bundle = TESTDATA / f"ort-testdata-{version}.tar.xz"
    if not bundle.exists():
        return None
    return ort_cases.unpack(bundle, ROOT / ".cache" / "ort-testdata" / version)


# ------------------------------------------------------------------ known ORT-side limitations
# (case-name pattern, device or None, cause, ORT source line at onnxruntime 89b01b406ca7)
# Each is ORT building a WebNN graph that is not the ONNX node's meaning (or that the WebNN spec
# forbids); the polyfill answers the graph it is given. Paths are under onnxruntime/core/providers/webnn/.
_WEBNN = "onnxruntime/core/providers/webnn/builders/"
KNOWN_ORT: list = [
    (r"^GRU \(linear_before_reset=1\)", None,
     "reads the attribute \"linear_before_reset \" (trailing space), so resetAfter is always false",
     _WEBNN + "impl/gru_op_builder.cc:75"),
    (r"^batch-norm: BatchNormalization with no attributes / T\[64\]$", None,
     "rank-1 input is accepted but batchNormalization is called with the default axis 1 (> rank)",
     _WEBNN + "impl/normalization_op_builder.cc:70"),
    (r"^batch-norm: BatchNormalization with no attributes - NHWC / ", None,
     "the com.ms.internal.nhwc node is built as NCHW: op builders are looked up by op type, not domain",
     _WEBNN + "helper.cc:64 (and impl/normalization_op_builder.cc:70, no axis for NHWC)"),
    (r"^fused-conv: NHWC ", None,
     "the com.ms.internal.nhwc Conv is built as NCHW: op builders are looked up by op type, not domain",
     _WEBNN + "helper.cc:64"),
    (r"^dequantizelinear: dequantizelinear / .* per-axis scalar scale", None,
     "a one-element per-axis scale is reshaped to the axis size ([1] -> [1, 2]) instead of broadcast",
     _WEBNN + "impl/qdq_op_builder.cc:93"),
    (r"^einsum: einsum / (Diagonal elements dot product|diagonal elements multiplication)$", None,
     "two-input equations with a repeated label in one input (ii,jj) are not recognised as diagonals",
     _WEBNN + "impl/einsum_op_builder.cc:493"),
    (r"^multihead-attention: .*head-size=\d with (attentionBias, )?pastKey and pastValue / ", None,
     "past_key/past_value are concatenated even without present outputs; ORT's CPU kernel and ORT's "
     "test data ignore them then",
     _WEBNN + "impl/mha_op_builder.cc:163 and :189"),
    (r"^pad: Reflect \dD / ", None,
     "accepts reflect pads as large as the dimension, which WebNN's pad() forbids (ORT's wasm EP "
     "refuses them too)",
     _WEBNN + "impl/pad_op_builder.cc:161 (IsOpSupportedImpl has no such check)"),
    (r"^rotary-embedding: .* Scalar T\[", None,
     "a scalar position_ids is not treated as an offset, so the gathered cos/sin cache has no sequence axis",
     _WEBNN + "impl/rotaryEmbedding_op_builder.cc:93"),
    (r"^rotary-embedding: .* / T\[2,[48],", None,
     "the offset position_ids range is built for batch 1 ({1, sequence_length}) and then reshaped to batch_size",
     _WEBNN + "impl/attention_helper.h:112 and :171"),
]


def known_cause(name: str, device: str) -> tuple | None:
    for pattern, dev, cause, where in KNOWN_ORT:
        if (dev is None or dev == device) and re.search(pattern, name):
            return cause, where
    return None


# ------------------------------------------------------------------ comparing
def _array(out: dict) -> np.ndarray:
    dtype = np.uint8 if out["type"] in ("int4", "uint4") else ort_cases.DTYPES[out["type"]]
    data = np.frombuffer(base64.b64decode(out["data"]), dtype=dtype)
    return data if out["type"] in ("int4", "uint4") else data.reshape(out["dims"])


def tensors_equal(actual: dict, expected: ort_cases.Feed | dict) -> str | None:
    """ORT's TensorResultValidator.areEqual for webnn; None when equal, else how they differ."""
    if isinstance(expected, dict):
        e_type, e_dims, e = expected["type"], list(expected["dims"]), _array(expected)
    else:
        e_type, e_dims, e = expected.type, list(expected.dims), expected.array
    a = _array(actual)
    if actual["type"] != e_type:
        return f"type {actual['type']} != {e_type}"
    if list(actual["dims"]) != e_dims:
        return f"shape {actual['dims']} != {e_dims}"
    if e_type in ("float32", "float16", "float64"):
        a64, e64 = a.astype(np.float64).ravel(), e.astype(np.float64).ravel()
        both_nan = np.isnan(a64) & np.isnan(e64)
        if (np.isnan(a64) ^ np.isnan(e64)).any():
            return "NaN where the reference has none (or the other way)"
        same = (a64 == e64) | both_nan
        finite = np.isfinite(a64) & np.isfinite(e64)
        if (~same & ~finite).any():
            return "Infinity differs"
        b = np.clip(e64, -3.4028234663852886e38, 3.4028234663852886e38)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = (a64 != 0) & (b != 0) & (a64 / b < RELATIVE) & (b / a64 < RELATIVE)
        ok = same | (np.abs(a64 - e64) < ABSOLUTE) | rel
        if not ok.all():
            bad = int(np.flatnonzero(~ok)[0])
            return (f"{int((~ok).sum())}/{ok.size} values differ, max |diff| "
                    f"{float(np.nanmax(np.abs(a64 - e64)[~ok])):.3g} (at {bad}: {a64[bad]:.7g} vs {e64[bad]:.7g})")
        return None
    a_int, e_int = a.astype(np.int64).ravel(), np.asarray(e).astype(np.int64).ravel()
    if a_int.shape != e_int.shape or (a_int != e_int).any():
        return f"{int((a_int != e_int).sum()) if a_int.shape == e_int.shape else 'all'} integer values differ"
    return None


def network_mismatch(actual, expected) -> str | None:
    """A whole network's output against the reference's (arrays or nested lists): None when every
    element is within NETWORK_ATOL + NETWORK_RTOL * |expected| (NaN only where the reference has NaN),
    else how they differ."""
    a, e = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if a.shape != e.shape:
        return f"shape {list(a.shape)} != {list(e.shape)}"
    with np.errstate(invalid="ignore"):
        ok = (np.abs(a - e) <= NETWORK_ATOL + NETWORK_RTOL * np.abs(e)) | (np.isnan(a) & np.isnan(e)) | (a == e)
    if ok.all():
        return None
    bad = np.flatnonzero(~ok.ravel())
    diff = np.abs(a - e).ravel()[bad]
    return (f"{bad.size}/{ok.size} values differ by more than {NETWORK_ATOL:g} + {NETWORK_RTOL:g}·|ref|, max |diff| "
            f"{float(np.nanmax(diff)) if np.isfinite(diff).any() else float('nan'):.3g} (at {int(bad[0])}: "
            f"{a.ravel()[bad[0]]:.7g} vs {e.ravel()[bad[0]]:.7g})")


def outputs_equal(actual: dict, reference: dict, network: bool = False) -> str | None:
    """ORT's own tolerance (tensors_equal) per output, or with `network` the whole-network one
    (network_mismatch: float outputs; types, shapes and integers still exact)."""
    if set(actual) != set(reference):
        return f"outputs {sorted(actual)} != {sorted(reference)}"
    for name in reference:
        why = tensors_equal(actual[name], reference[name])
        if why and network and actual[name]["type"] == reference[name]["type"] in ("float32", "float16") \
                and list(actual[name]["dims"]) == list(reference[name]["dims"]):
            why = network_mismatch(_array(actual[name]), _array(reference[name]))
        if why:
            return f"{name}: {why}"
    return None


# ------------------------------------------------------------------ the page
def _encode(feed: ort_cases.Feed) -> dict:
    array = np.ascontiguousarray(feed.array)
    if feed.type in ("int4", "uint4"):  # ORT's packing: two per byte, the first in the low nibble
        flat = (array.ravel().astype(np.int16) & 0xF).astype(np.uint8)
        if flat.size % 2:
            flat = np.append(flat, np.uint8(0))
        array = flat[0::2] | (flat[1::2] << 4)
    elif feed.type == "bool":
        array = array.astype(np.uint8)
    return {"type": feed.type, "dims": feed.dims, "data": base64.b64encode(array.tobytes()).decode()}


CAPABILITY = re.compile(r"number of nodes in the graph: (\d+) number of nodes supported by WebNN: (\d+)")
UNSUPPORTED = re.compile(r"not supported|not in supported|does not support|unsupported|must be|requires|only supports", re.I)
REFUSAL = re.compile(r"^.*?\] ")  # ORT's "date [V:onnxruntime:, file:line Function] " prefix
PLACED = re.compile(r"(All nodes|Node\(s\)) placed on \[(\w+)\]\. Number of nodes: (\d+)")


PLACED_NODE = re.compile(r"VerifyEachNodeIsAssignedToAnEp\]\s+(\S+) \(")


def placed_op_types(lines: list) -> dict:
    """ORT's "Node placements" verbose lines -> {execution provider: {op type: nodes}} for the
    providers whose nodes ORT lists one by one (it lists them when more than one provider got nodes)."""
    placed, ep = {}, None
    for line in lines:
        m = PLACED.search(line)
        if m:
            ep = m.group(2)
            continue
        m = PLACED_NODE.search(line)
        if m and ep:
            placed.setdefault(ep, {})
            placed[ep][m.group(1)] = placed[ep].get(m.group(1), 0) + 1
    return placed


def net_cases(names=BENCH_NETS) -> list:
    """The benchmark networks (tools/bench_ort/models.py, built once into BENCH_MODEL_DIR) as cases the page
    fetches from /ortmodels/, each with a seeded standard-normal input."""
    info = bench_models.ensure(BENCH_MODEL_DIR, list(names))
    cases = []
    for i, name in enumerate(names):
        rng = np.random.default_rng([20261128, i])
        feeds = {n: ort_cases.Feed("float32", list(shape), rng.standard_normal(shape).astype(np.float32))
                 for n, shape in info[name]["inputs"]}
        cases.append(ort_cases.Case(name=f"{name}: {info[name]['title']}", group="nets", model=b"", feeds=feeds,
                                    url="/ortmodels/" + info[name]["file"]))
    return cases


def placements(lines: list) -> dict:
    """ORT's "Node placements" verbose lines -> {execution provider: nodes}."""
    placed = {}
    for line in lines:
        m = PLACED.search(line)
        if m:
            placed[m.group(2)] = placed.get(m.group(2), 0) + int(m.group(3))
    return placed


class OrtPage:
    """tools/ort_web_page/ served with the polyfill and ORT, in headless Chromium: a Playwright
    browser of the caller's (launched with the WebGPU switches of CHROMIUM_ARGS, for the gpu
    device) or one of its own. The wasm reference and each WebNN device run in tabs of their own,
    so a failure on one side never disturbs the other."""

    def __init__(self, browser=None, version: str = ORT_VERSION):
        mounts = {**serve.default_mounts(), "/ort/": ort_dir(version), "/ort-page/": PAGE_DIR,
                  "/ortmodels/": BENCH_MODEL_DIR}
        self.server = serve.start(mounts=mounts)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ort-page/index.html"
        self._pw = None
        if browser is None:
            from playwright.sync_api import sync_playwright

            self._pw = sync_playwright().start()
            browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        self.browser = browser
        self.version = browser.version
        self.tabs = {}

    def tab(self, key: str, fresh: bool = False):
        if fresh and key in self.tabs:
            try:
                self.tabs.pop(key).close()
            except Exception:  # a renderer that hung or crashed: the new tab is what matters
                pass
        if key not in self.tabs:
            page = self.browser.new_page()
            page.goto(self.url)
            page.wait_for_function("window.ortReady === true", timeout=120_000)
            self.tabs[key] = page
        return self.tabs[key]

    def run(self, case: ort_cases.Case, ep: str, device: str | None = None) -> dict:
        timeout = NET_TIMEOUT_MS if case.url else CASE_TIMEOUT_MS
        job = {"model": "" if case.url else base64.b64encode(case.model).decode(), "modelUrl": case.url or None,
               "ep": ep, "deviceType": device, "verbose": ep == "webnn",
               "feeds": {k: _encode(v) for k, v in case.feeds.items()}, "timeoutMs": timeout}
        key = ep if ep == "wasm" else f"{ep}-{device}"
        t = time.monotonic()
        try:
            page = self.tab(key)
            page.evaluate("job => { window.ortResult = undefined; ortRun(job).then(r => { window.ortResult = r; }); }",
                          job)
            # Playwright enforces this timeout itself, so a page stuck in a busy loop cannot hang the run
            page.wait_for_function("window.ortResult !== undefined", timeout=timeout + 30_000, polling=20)
            result = page.evaluate("window.ortResult")
        except Exception as e:  # a hung or crashed page: note it; the next case gets a fresh tab
            result = {"error": f"page: {type(e).__name__}: {str(e)[:300]}", "builds": 0, "dispatches": 0,
                      "log": []}
        result["seconds"] = round(time.monotonic() - t, 3)
        if result.get("error"):
            # After a failed session ORT's wasm module can answer the next one wrong (all zeros
            # from the wasm EP: seen after a Pad that OrtRun() refused), so a failure costs the
            # tab: the next case gets a fresh page and a fresh ORT.
            self.tab(key, fresh=True)
        return result

    def close(self):
        try:
            for page in self.tabs.values():
                page.close()
            if self._pw:
                self.browser.close()
                self._pw.stop()
        finally:
            self.server.shutdown()


# ------------------------------------------------------------------ verdicts
NETWORK_GROUPS = ("models", "nets")  # whole networks: the network tolerance; a mismatch fails the run
@dataclass
class Verdict:
    case: str
    group: str
    device: str
    accepted: bool = False
    ran: bool = False
    matched: bool = False
    nodes: str = ""  # "supported/total" from GetCapability
    reference: str = "wasm"
    why: str = ""
    known: tuple | None = None
    counts: dict = field(default_factory=dict)


def judge(case: ort_cases.Case, device: str, webnn: dict, reference: dict | None, ref_source: str) -> Verdict:
    v = Verdict(case.name, case.group, device, reference=ref_source,
                counts={"builds": webnn.get("builds", 0), "dispatches": webnn.get("dispatches", 0),
                        "seconds": webnn.get("seconds")})
    lines = webnn.get("log", [])
    caps = [CAPABILITY.search(line) for line in lines]
    caps = [m for m in caps if m]
    if caps:
        total, supported = int(caps[-1].group(1)), int(caps[-1].group(2))
        v.nodes = f"{supported}/{total}"
        # a benchmark net: the EP claims every node it has a builder for (checked below, by placement)
        v.accepted = total > 0 and (supported == total or (case.group == "nets" and supported > 0))
    if not v.accepted:
        # ORT's verbose log says why it refused (op, type, rank or attribute not supported)
        refusals = [REFUSAL.sub("", line) for line in lines if UNSUPPORTED.search(line)]
        v.why = ("ORT's WebNN EP claimed " + (f"{v.nodes} nodes" if v.nodes else "nothing")
                 + (f": {refusals[0][:300]}" if refusals else "")
                 + (f"; {webnn['error']}" if webnn.get("error") else ""))
        return v
    placed = placements(lines)
    elsewhere = {ep: ops for ep, ops in placed_op_types(lines).items() if ep != "WebNNExecutionProvider"}
    if case.group == "nets" and set(placed) == {"WebNNExecutionProvider", "CPUExecutionProvider"} \
            and set(elsewhere) == {"CPUExecutionProvider"} and set(elsewhere["CPUExecutionProvider"]) <= ORT_NO_WEBNN_BUILDER \
            and sum(elsewhere["CPUExecutionProvider"].values()) == placed["CPUExecutionProvider"]:
        placed = {"WebNNExecutionProvider": placed["WebNNExecutionProvider"]}  # only ops ORT cannot hand to WebNN left
        v.nodes += f" (on ORT's CPU EP, no WebNN builder in ORT: {elsewhere['CPUExecutionProvider']})"
    if webnn.get("error"):
        v.why = webnn["error"]
    elif set(placed) != {"WebNNExecutionProvider"}:
        v.why = f"nodes placed on {placed}" + (f" ({elsewhere})" if elsewhere else "")
    elif v.counts["builds"] < 1 or v.counts["dispatches"] < 1:
        v.why = f"no WebNN build/dispatch ({v.counts})"
    else:
        v.ran = True
    if v.ran:
        if reference is None:
            v.why = "no reference: the wasm EP failed and the data has no expected outputs"
        else:
            v.why = outputs_equal(webnn["outputs"], reference, network=case.group in NETWORK_GROUPS) or ""
            v.matched = not v.why
    if not v.matched:
        v.known = known_cause(case.name, device)
    return v


def run_cases(page: OrtPage, cases: list, devices: list, progress=None) -> list:
    verdicts = []
    for i, case in enumerate(cases):
        wasm = page.run(case, "wasm")
        if wasm.get("outputs") is not None and not wasm.get("error"):
            reference, source = wasm["outputs"], "wasm"
        elif case.expected:
            reference, source = case.expected, "test data (wasm EP: " + str(wasm.get("error"))[:120] + ")"
        else:
            reference, source = None, "none (wasm EP: " + str(wasm.get("error"))[:120] + ")"
        for device in devices:
            verdicts.append(judge(case, device, page.run(case, "webnn", device), reference, source))
        if progress:
            progress(i + 1, len(cases), case)
    return verdicts


# ------------------------------------------------------------------ reporting
GROUP_TITLES = {"ops": "ORT op tests (ops/*.jsonc)", "node": "ONNX node tests (webnn list)",
                "models": "whole networks (onnx-built)", "nets": "benchmark networks (tools/bench_ort/models.py)"}


def summary_rows(verdicts: list) -> list:
    rows = []
    for device in sorted({v.device for v in verdicts}):
        for group in ("ops", "node", "models", "nets", None):
            vs = [v for v in verdicts if v.device == device and (group is None or v.group == group)]
            if not vs:
                continue
            accepted = sum(v.accepted for v in vs)
            matched = sum(v.matched for v in vs)
            known = sum(1 for v in vs if v.accepted and not v.matched and v.known)
            rows.append({"device": device, "group": group or "all", "cases": len(vs), "accepted": accepted,
                         "ran": sum(v.ran for v in vs), "matched": matched, "known_ort": known,
                         "share": (matched / accepted) if accepted else None})
    return rows


def markdown_table(rows: list) -> str:
    out = ["| device | cases | count | accepted by the EP | ran on WebNN | matched | matched / accepted | known ORT-side |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        share = f"{100 * r['share']:.1f} %" if r["share"] is not None else "-"
        title = "**all**" if r["group"] == "all" else GROUP_TITLES[r["group"]]
        out.append(f"| {r['device']} | {title} | {r['cases']} | {r['accepted']} | {r['ran']} | {r['matched']} | "
                   f"{share} | {r['known_ort']} |")
    return "\n".join(out)


def failure_lines(verdicts: list) -> list:
    lines = []
    for v in verdicts:
        if v.accepted and not v.matched:
            tag = f" — ORT-side: {v.known[0]} ({v.known[1]})" if v.known else ""
            lines.append(f"- [{v.device}] {v.case}: {v.why}{tag}")
    return lines


def network_failures(verdicts: list) -> list:
    """Whole networks (models, nets) that the EP took but that did not run on WebNN or did not match
    ORT's wasm EP, except those an ORT-side cause (KNOWN_ORT) explains: each fails the run. A
    benchmark net must also be taken by the EP at all."""
    bad = []
    for v in verdicts:
        if v.group not in NETWORK_GROUPS or v.matched or (v.known and v.accepted):
            continue
        if v.accepted or v.group == "nets":
            bad.append(f"[{v.device}] {v.case}: {v.why or 'not run on WebNN'}")
    return bad


def machine_info() -> dict:
    return {"cpu": machine.cpu_model(), "cores": os.cpu_count(), "loadavg": machine.load_average(),
            "date": machine.utc_now()}


def run_version(version: str, groups: list, devices: list, name_filter: str) -> dict:
    """Every case of `groups` on onnxruntime-web `version`: {"info", "rows", "table", "verdicts", "failures"}."""
    cases = []
    data = testdata(version) if {"ops", "node"} & set(groups) else None
    if {"ops", "node"} & set(groups) and data is None:
        log(f"no ORT test data for {version} in {TESTDATA} (ort-testdata-{version}.tar.xz): ops/node groups skipped")
    if data is not None and "ops" in groups:
        cases += ort_cases.op_cases(data)
    if data is not None and "node" in groups:
        cases += ort_cases.node_cases(data)
    if "models" in groups:
        cases += ort_cases.model_cases()
    if "nets" in groups:
        cases += net_cases()
    cases = [c for c in cases if name_filter in c.name]
    info = machine_info()
    log(f"{len(cases)} cases x {devices} on onnxruntime-web {version}; {info['cpu']}, load {info['loadavg']}")
    t0 = time.time()
    page = OrtPage(version=version)

    def progress(i, n, case):
        if i % 50 == 0 or i == n:
            log(f"{i}/{n} ({time.time() - t0:.0f} s)")

    try:
        verdicts = run_cases(page, cases, devices, progress)
    finally:
        page.close()
    info.update(seconds=round(time.time() - t0), chromium=page.version, ort=version,
                load_after=" ".join(f"{x:.2f}" for x in os.getloadavg()))
    rows = summary_rows(verdicts)
    return {"info": info, "rows": rows, "table": markdown_table(rows), "verdicts": verdicts,
            "failures": failure_lines(verdicts), "network_failures": network_failures(verdicts)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", default="cpu,gpu", help="WebNN deviceType(s) to run (default cpu,gpu)")
    p.add_argument("--groups", default="ops,node,models,nets",
                   help="ops, node, models, nets (the benchmark networks; default all four)")
    p.add_argument("--filter", default="", help="only cases whose name contains this text")
    p.add_argument("--versions", default=",".join(ORT_VERSIONS),
                   help=f"onnxruntime-web versions, one after the other (default {','.join(ORT_VERSIONS)})")
    p.add_argument("--version", help="one onnxruntime-web version (the same as --versions VERSION)")
    p.add_argument("--json", type=Path, help="write every verdict as JSON here")
    p.add_argument("--markdown", type=Path, help="write the tables and failures between the "
                   "<!-- ort-web:begin --> / <!-- ort-web:end --> markers of this file")
    p.add_argument("--list-failures", action="store_true", help="print every accepted case that did not match")
    args = p.parse_args(argv)

    versions = [args.version] if args.version else [v for v in args.versions.split(",") if v]
    for version in versions:
        why = ensure_ort(version)
        if why:
            log(f"onnxruntime-web {version}: {why}")
            return 2
    groups, devices = args.groups.split(","), args.devices.split(",")
    results = {v: run_version(v, groups, devices, args.filter) for v in versions}
    blocks = []
    for version, r in results.items():
        info = r["info"]
        print(f"onnxruntime-web {version} WebNN EP on the polyfill — Chromium {info['chromium']} headless, "
              f"{info['cpu']}, load {info['loadavg']} -> {info['load_after']}, {info['seconds']} s")
        print(r["table"])
        if args.list_failures:
            print("\n".join(r["failures"]) or "(no accepted case failed)")
        blocks.append(f"Measured {info['date']}: `python3 tools/ort_web.py` (onnxruntime-web {version}, Chromium "
                      f"{info['chromium']} headless, {info['cpu']}, {info['cores']} cores, load {info['loadavg']}, "
                      f"{info['seconds']} s).\n\n{r['table']}\n\n" + "\n".join(r["failures"]))
    if args.json:
        args.json.write_text(json.dumps({v: {"machine": r["info"], "rows": r["rows"],
                                             "verdicts": [x.__dict__ for x in r["verdicts"]]}
                                         for v, r in results.items()}, indent=1, default=str))
    if args.markdown:
        text = args.markdown.read_text()
        block = "<!-- ort-web:begin -->\n" + "\n\n".join(blocks) + "\n<!-- ort-web:end -->"
        text = re.sub(r"<!-- ort-web:begin -->.*?<!-- ort-web:end -->", lambda _: block, text, flags=re.S)
        args.markdown.write_text(text)
    failed = [f"onnxruntime-web {v}: {line}" for v, r in results.items() for line in r["network_failures"]]
    for line in failed:  # a whole network that did not run on WebNN or does not match ORT's wasm EP
        log("FAILED: " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
