"""Run the W3C webnn-samples on the polyfill in headless Chromium and check their results.

    ./dev clients samples [--samples DIR] [--test-data DIR] [--only NAME,...] [--json FILE]
    python3 tools/clients_samples.py --serve      # browse the samples on the polyfill by hand

The samples (github webmachinelearning/webnn-samples, or its fork tomayac/webnn-samples)
and their weights (the test-data repository, e.g. the fork ibelem/test-data) stay outside
this repository: --samples DIR and --test-data DIR (default $WEBNN_SAMPLES or
~/.cache/pywebnn/samples, $WEBNN_TEST_DATA or ~/.cache/pywebnn/test-data). Nothing in them
is modified: a local server serves them as they are, with /test-data/ where the samples
look for weights (their weightsOrigin() is '..'), and puts two script tags at the top of
each page's <head>, before any script of the sample: the polyfill (dist/) and
tools/clients_samples_harness.js, which records what readTensor returns.

The samples load jQuery, Bootstrap, Popper, TF.js (pre/post-processing in NSNet2 and the
segmentation sample), iro.js and, for LeNet, mnist.js from CDNs. The browser gets them from
the same npm releases installed into .cache/samples-vendor/ (npm registry, once); the
pages' Subresource Integrity hashes check they are byte-identical. Every other request off
127.0.0.1 is aborted (analytics), so a run needs no network once the vendor files are there.

Each sample is driven as a person would (click the device, the model, an input) and its
result is checked against a reference that the polyfill did not compute: the true label
of the photo or of the MNIST digit, or a second run of the same sample by another path
(the other layout's model, converted from a different framework; or the polyfill's numpy
reference kernels with the SIMD fast paths off) within a stated tolerance.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import serve  # noqa: E402

CACHE = Path.home() / ".cache" / "pywebnn"
DEFAULT_SAMPLES = Path(os.environ.get("WEBNN_SAMPLES", CACHE / "samples"))
DEFAULT_TEST_DATA = Path(os.environ.get("WEBNN_TEST_DATA", CACHE / "test-data"))
VENDOR = ROOT / ".cache" / "samples-vendor"
HARNESS = ROOT / "tools" / "clients_samples_harness.js"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
TIMEOUT_MS = int(os.environ.get("WEBNN_SAMPLES_TIMEOUT_MS", 900_000))

# The npm releases of what the samples load from CDNs (the versions their pages name).
VENDOR_PACKAGES = {"jquery": "3.5.1", "bootstrap": "4.5.2", "popper.js": "1.16.1", "mnist": "1.1.0",
                   "@tensorflow/tfjs": "4.13.0", "@jaames/iro": "5.5.2", "webidl2": "24.4.1"}
# CDN URL (regex) -> file under .cache/samples-vendor/node_modules/ (\1: the regex's group)
CDN = [
    (r"https://code\.jquery\.com/jquery-3\.5\.1\.slim\.min\.js", "jquery/dist/jquery.slim.min.js"),
    (r"https://cdn\.jsdelivr\.net/npm/popper\.js@1\.16\.1/dist/umd/popper\.min\.js", "popper.js/dist/umd/popper.min.js"),
    (r"https://stackpath\.bootstrapcdn\.com/bootstrap/4\.5\.2/js/bootstrap\.min\.js", "bootstrap/dist/js/bootstrap.min.js"),
    (r"https://stackpath\.bootstrapcdn\.com/bootstrap/4\.5\.2/css/bootstrap\.min\.css", "bootstrap/dist/css/bootstrap.min.css"),
    (r"https://cdn\.jsdelivr\.net/npm/@tensorflow/tfjs@4\.13\.0/dist/tf\.min\.js", "@tensorflow/tfjs/dist/tf.min.js"),
    # the code editor names no version (no integrity hash either): the same release
    (r"https://cdn\.jsdelivr\.net/npm/@tensorflow/tfjs/dist/tf\.min\.js", "@tensorflow/tfjs/dist/tf.min.js"),
    (r"https://cdn\.jsdelivr\.net/npm/@jaames/iro@5$", "@jaames/iro/dist/iro.min.js"),
    # NNotepad imports webidl2 as ES modules (index.js, then its lib/ files)
    (r"https://cdn\.jsdelivr\.net/npm/webidl2@24\.4\.1/([\w./-]+\.js)$", r"webidl2/\1"),
]
# Files of the samples that a shallow snapshot may lack, and their npm originals.
FALLBACKS = {"/lenet/libs/mnist.js": "mnist/dist/mnist.js"}
TYPES = {".js": "text/javascript", ".css": "text/css"}


class SetupError(Exception):
    pass


def ensure_vendor() -> Path:
    """npm-install the samples' CDN dependencies into .cache/samples-vendor (once)."""
    modules = VENDOR / "node_modules"
    stamp = VENDOR / "installed.json"
    if stamp.exists() and json.loads(stamp.read_text()) == VENDOR_PACKAGES:
        return modules
    if not shutil.which("npm"):
        raise SetupError("npm is missing (./dev setup installs it)")
    VENDOR.mkdir(parents=True, exist_ok=True)
    (VENDOR / "package.json").write_text(json.dumps({"name": "samples-vendor", "private": True}) + "\n")
    specs = [f"{name}@{version}" for name, version in VENDOR_PACKAGES.items()]
    print(f"clients_samples: installing {', '.join(specs)} (npm) into {VENDOR.relative_to(ROOT)}", file=sys.stderr)
    r = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", "--prefix", str(VENDOR), *specs],
                       capture_output=True, text=True)
    if r.returncode:
        raise SetupError(f"npm install failed: {r.stderr.strip()[-800:]}")
    stamp.write_text(json.dumps(VENDOR_PACKAGES))
    return modules


def check_dirs(samples: Path, test_data: Path) -> None:
    if not (samples / "image_classification" / "main.js").exists():
        raise SetupError(f"no webnn-samples checkout at {samples} (get github webmachinelearning/webnn-samples, "
                         "or its fork tomayac/webnn-samples, and pass --samples DIR)")
    if not (test_data / "models").is_dir():
        raise SetupError(f"no test-data checkout at {test_data} (get github webmachinelearning/test-data, "
                         "or a fork such as ibelem/test-data, and pass --test-data DIR)")


# --- the server: the samples as they are, the polyfill and the harness put in front ---

def inject(html: str, query: dict) -> str:
    tags = []
    if query.get("harness-fast") == ["0"]:
        tags.append("<script>self.WEBNN_POLYFILL_CONFIG = {fastPaths: false};</script>")
    tags.append('<script src="/dist/webnn-polyfill.js"></script>')
    tags.append('<script src="/__harness__/clients_samples_harness.js"></script>')
    block = "\n" + "\n".join(tags) + "\n"
    m = re.search(r"<head[^>]*>", html, re.I)
    if m:
        return html[:m.end()] + block + html[m.end():]
    return block + html


class SamplesHandler(serve.Handler):
    samples_root: Path = Path()
    vendor: Path = Path()

    def end_headers(self):
        # As a static host serves them (no cross-origin isolation: the samples load CDN
        # scripts without CORP); no caching between runs.
        self.send_header("Cache-Control", "no-cache")
        super(serve.Handler, self).end_headers()

    def do_GET(self):
        parts = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(parts.path)
        if path in FALLBACKS and not (self.samples_root / path.lstrip("/")).exists():
            return self._send(self.vendor / FALLBACKS[path], "text/javascript")
        if path.endswith("/") or path.endswith(".html"):
            local = Path(self.translate_path(self.path))
            if local.is_dir():
                local = local / "index.html"
            if local.is_file() and self.samples_root in local.parents:
                body = inject(local.read_text(encoding="utf-8"), urllib.parse.parse_qs(parts.query)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return None
        return super().do_GET()

    def _send(self, file: Path, ctype: str):
        body = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def start_server(samples: Path, test_data: Path, vendor: Path, port: int = 0):
    mounts = {"/": samples.resolve(), "/test-data/": test_data.resolve(), "/dist/": ROOT / "dist",
              "/__harness__/": HARNESS.parent}
    handler = type("Handler", (SamplesHandler,), {"mounts": mounts, "samples_root": samples.resolve(), "vendor": vendor})
    srv = serve.Server(("127.0.0.1", port), handler)
    import threading
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


# --- the browser ---

def route_cdn(context, vendor: Path, blocked: list):
    table = [(re.compile(rx), rel) for rx, rel in CDN]

    def handle(route):
        url = route.request.url
        if url.startswith("http://127.0.0.1:"):
            return route.continue_()
        for rx, rel in table:
            m = rx.match(url.split("?")[0])
            file = vendor / m.expand(rel) if m else None
            if file and file.is_file() and vendor.resolve() in file.resolve().parents:
                return route.fulfill(path=str(file), content_type=TYPES.get(file.suffix, "application/octet-stream"),
                                     headers={"Access-Control-Allow-Origin": "*",
                                              "Cross-Origin-Resource-Policy": "cross-origin"})
        blocked.append(url)
        return route.abort("blockedbyclient")

    context.route("**/*", handle)


@dataclass
class Result:
    sample: str
    variant: str
    ok: bool = False
    reference: str = ""
    got: str = ""
    seconds: float = 0.0
    detail: str = ""
    errors: list = field(default_factory=list)


class Runner:
    def __init__(self, browser, base: str, vendor: Path, samples: Path):
        self.browser, self.base, self.vendor, self.samples = browser, base, vendor, samples

    def open(self, path: str):
        context = self.browser.new_context(viewport={"width": 1280, "height": 1000})
        blocked: list = []
        route_cdn(context, self.vendor, blocked)
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.errors = []
        page.on("pageerror", lambda e: page.errors.append(f"pageerror: {e}"))
        page.logs = []
        page.on("console", lambda m: page.errors.append(f"console.{m.type}: {m.text}") if m.type == "error"
                else page.logs.append(m.text))
        page.goto(self.base + path)
        page.wait_for_function("self.__samplesHarness !== undefined", timeout=60_000)
        err = page.evaluate("self.__samplesHarness.error || ''")
        if err:
            raise RuntimeError(err)
        return context, page

    @staticmethod
    def alerts(page) -> str:
        return " | ".join(t.strip() for t in page.locator(".alert").all_inner_texts() if t.strip())

    @staticmethod
    def click_radio(page, selector: str):
        # As a person does: a real click on the Bootstrap toggle button (the label); the radio
        # itself is hidden. (Clicking the radio directly makes Bootstrap fire 'change' twice,
        # and the samples then run main() twice at once.)
        page.wait_for_selector(selector, state="attached")
        if page.evaluate("(sel) => document.querySelector(sel).checked", selector):
            return
        page.locator(f"label:has({selector})").click()

    @staticmethod
    def wait_reads(page, n: int, after: int = 0):
        page.wait_for_function(
            f"self.__samplesHarness.reads.length && self.__samplesHarness.reads.at(-1).at > {after}"
            f" && self.__samplesHarness.dispatches >= {n} || document.querySelector('.alert-warning') !== null")

    @staticmethod
    def last_read(page, transform: str):
        """Run `transform` (a JS function of {shape, dataType, bytes}) on the last readTensor result."""
        return page.evaluate(f"(() => {{ const r = self.__samplesHarness.reads.at(-1); return ({transform})(r); }})()")


# Drivers: each returns a list of Results.

def image_classification(run: Runner, layout: str, model: str, expect: str, dtype: str = "float32") -> Result:
    res = Result("image_classification", f"{model} {layout.upper()}" + ("" if dtype == "float32" else f" {dtype}"),
                 reference=f"top-1 “{expect}” (the photo's label)")
    t0 = time.time()
    context, page = run.open(f"/image_classification/index.html?harness-layout={layout}")
    try:
        page.wait_for_function("document.querySelector('#cpu').checked")
        if dtype != "float32":
            run.click_radio(page, f"#{dtype}")
        page.wait_for_function(f"!document.querySelector('#{model}').closest('label').hidden"
                               f" && getComputedStyle(document.querySelector('#{model}').closest('label')).display !== 'none'")
        run.click_radio(page, f"#{model}")
        page.wait_for_function("document.querySelector('#label0').textContent.trim() !== ''"
                               " || document.querySelector('.alert-warning') !== null")
        ran = [line.strip("- ") for line in page.logs if line.startswith("- Model:")]
        res.got = f"{page.inner_text('#label0').strip()} ({page.inner_text('#prob0').strip()})" + (f"; {ran[-1]}" if ran else "")
        res.ok = expect in page.inner_text("#label0") and bool(ran) and f"{layout} - {dtype}" in ran[-1]
        res.detail = run.alerts(page)
    finally:
        res.errors = page.errors[:5]
        res.seconds = time.time() - t0
        context.close()
    return res


LENET_PER_DIGIT = 3  # the first 3 samples of each digit in the sample's own mnist.js: 30 digits


def lenet(run: Runner) -> Result:
    n = 10 * LENET_PER_DIGIT
    res = Result("lenet", f"LeNet ({n} MNIST digits)",
                 reference=f"each digit's MNIST label; at least {n - 1} of {n} right (LeNet's accuracy is about 99 %)")
    t0 = time.time()
    context, page = run.open("/lenet/index.html")
    try:
        run.click_radio(page, "#webnn_cpu")
        page.wait_for_function("!document.querySelector('#predict').disabled || document.querySelector('.alert-warning') !== null")
        wrong = []
        for digit in range(10):
            for which in range(LENET_PER_DIGIT):
                # Draw a digit of the sample's own MNIST set, as its "Next" button does.
                page.evaluate("""([n, which]) => {
                    const small = Object.assign(document.createElement('canvas'), {width: 28, height: 28});
                    mnist.draw(mnist[n].get(which), small.getContext('2d'));
                    const c = document.querySelector('#visual_canvas');
                    c.getContext('2d').drawImage(small, 0, 0, c.width, c.height);
                    document.querySelector('#label0').textContent = '';
                }""", [digit, which])
                page.click("#predict")
                page.wait_for_function("document.querySelector('#label0').textContent.trim() !== ''"
                                       " || document.querySelector('.alert-warning') !== null")
                got = page.inner_text("#label0").strip()
                if got != str(digit):
                    wrong.append(f"mnist[{digit}].get({which}) -> {got or 'nothing'}")
        res.got = f"{n - len(wrong)}/{n} right" + (f" (wrong: {', '.join(wrong)})" if wrong else "")
        res.ok = len(wrong) <= 1
        res.detail = run.alerts(page)
    finally:
        res.errors = page.errors[:5]
        res.seconds = time.time() - t0
        context.close()
    return res


SEG_MAP = """(r) => {
  const f = new Float32Array(r.bytes.buffer);
  const nchw = r.shape[1] === 21;
  const [h, w, c] = nchw ? [r.shape[2], r.shape[3], r.shape[1]] : [r.shape[1], r.shape[2], r.shape[3]];
  const out = new Uint8Array(h * w);
  for (let i = 0; i < h * w; i++) {
    let best = 0, bv = -Infinity;
    for (let k = 0; k < c; k++) { const v = nchw ? f[k * h * w + i] : f[i * c + k]; if (v > bv) { bv = v; best = k; } }
    out[i] = best;
  }
  let s = ''; for (let i = 0; i < out.length; i += 8192) s += String.fromCharCode(...out.subarray(i, i + 8192));
  return {h, w, shape: r.shape, map: btoa(s)};
}"""

VOC = ["background", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat", "chair", "cow",
       "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep", "sofa", "train", "tv"]


def segmentation_map(run: Runner, layout: str):
    context, page = run.open(f"/semantic_segmentation/index.html?harness-layout={layout}")
    try:
        page.wait_for_function("document.querySelector('#webnn_cpu').checked")
        run.click_radio(page, "#deeplabv3mnv2")
        run.wait_reads(page, 1)
        detail = run.alerts(page)
        if not page.evaluate("self.__samplesHarness.reads.length"):
            return None, detail, page.errors[:5]
        m = run.last_read(page, SEG_MAP)
        arr = np.frombuffer(base64.b64decode(m["map"]), np.uint8).reshape(m["h"], m["w"])
        return (arr, m["shape"]), detail, page.errors[:5]
    finally:
        context.close()


def semantic_segmentation(run: Runner) -> list:
    maps, results = {}, []
    for layout in ("nhwc", "nchw"):
        t0 = time.time()
        res = Result("semantic_segmentation", f"DeepLabV3 MobileNetV2 {layout.upper()}")
        maps[layout], res.detail, res.errors = segmentation_map(run, layout)
        res.seconds = time.time() - t0
        results.append(res)
    a, b = maps["nhwc"], maps["nchw"]
    for res, mine, other, name in ((results[0], a, b, "NCHW"), (results[1], b, a, "NHWC")):
        res.reference = (f"the {name} model's map (the other conversion of DeepLabV3): ≥ 97 % of pixels agree; "
                         "the photo's content: only person and background, the person under the centre and "
                         "bottom centre, background in the top corners")
        if mine is None or other is None:
            res.got = "no output"
            continue
        (mine, shape), (other, _) = mine, other
        agree = float((mine == other).mean())
        classes = {VOC[k]: round(float((mine == k).mean()) * 100, 1) for k in np.unique(mine) if (mine == k).mean() > 0.005}
        h, w = mine.shape
        person, background = VOC.index("person"), 0
        placed = (mine[h // 2, w // 2] == person and mine[h - 5, w // 2] == person
                  and mine[5, 5] == background and mine[5, w - 6] == background)
        res.got = f"output {shape}: {agree * 100:.2f} % agree; classes (% of pixels) {classes}; placed right: {placed}"
        res.ok = agree >= 0.97 and set(classes) == {"person", "background"} and bool(placed)
    return results


STYLE_IMAGE = """(r) => {
  const f = new Float32Array(r.bytes.buffer);
  const q = new Uint8Array(f.length);
  for (let i = 0; i < f.length; i++) q[i] = Math.max(0, Math.min(255, Math.round(f[i])));
  let s = ''; for (let i = 0; i < q.length; i += 8192) s += String.fromCharCode(...q.subarray(i, i + 8192));
  return {shape: r.shape, data: btoa(s)};
}"""


def style_image(run: Runner, fast: bool):
    context, page = run.open("/style_transfer/index.html" + ("" if fast else "?harness-fast=0"))
    try:
        run.click_radio(page, "#webnn_cpu")
        run.wait_reads(page, 1)
        detail = run.alerts(page)
        if not page.evaluate("self.__samplesHarness.reads.length"):
            return None, detail, page.errors[:5]
        m = run.last_read(page, STYLE_IMAGE)
        return np.frombuffer(base64.b64decode(m["data"]), np.uint8).reshape(m["shape"]).astype(np.int16), detail, page.errors[:5]
    finally:
        context.close()


def style_transfer(run: Runner) -> Result:
    t0 = time.time()
    res = Result("style_transfer", "fast style transfer (starry night) NCHW",
                 reference="the same sample on the numpy reference kernels (fastPaths off): 99 % of the 0..255 "
                           "channel values within 2, none off by more than 16")
    fast, res.detail, res.errors = style_image(run, True)
    slow, detail2, errors2 = style_image(run, False)
    res.errors += errors2
    res.detail = " | ".join(x for x in (res.detail, detail2) if x)
    res.seconds = time.time() - t0
    if fast is None or slow is None:
        res.got = "no output"
        return res
    diff = np.abs(fast - slow)
    within = float((diff <= 2).mean())
    res.got = f"{within * 100:.2f} % within 2, max |diff| {int(diff.max())}, image std {fast.std():.1f}"
    res.ok = within >= 0.99 and diff.max() <= 16 and fast.std() > 10
    return res


def denoised_audio(run: Runner, sample: str, audio: str, fast: bool):
    """The WAV the sample offers as its denoised audio, as float samples; and its alerts."""
    context, page = run.open(f"/{sample}/index.html" + ("" if fast else "?harness-fast=0"))
    try:
        run.click_radio(page, "#webnn_cpu")
        page.wait_for_function("/ready/i.test(document.querySelector('#info').textContent)"
                               " || document.querySelector('.alert-warning') !== null")
        if not page.evaluate("/ready/i.test(document.querySelector('#info').textContent)"):
            return None, run.alerts(page), page.errors[:5]
        page.evaluate("(id) => document.getElementById(id).click()", audio)  # an item of the sample's menu
        page.wait_for_function("document.querySelector('#denoised-audio').src.startsWith('blob:')"
                               " || document.querySelector('.alert-warning') !== null")
        wav = page.evaluate("""async () => {
            const b = new Uint8Array(await (await fetch(document.querySelector('#denoised-audio').src)).arrayBuffer());
            let s = ''; for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode(...b.subarray(i, i + 8192));
            return btoa(s);
        }""")
        import io
        import wave

        with wave.open(io.BytesIO(base64.b64decode(wav))) as w:
            data = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float64) / 32768
        return data, run.alerts(page), page.errors[:5]
    finally:
        context.close()


def denoise(run: Runner, sample: str, variant: str, audio: str) -> Result:
    t0 = time.time()
    res = Result(sample, variant, reference="the same sample on the numpy reference kernels (fastPaths off): "
                                            "the two denoised WAVs agree to ≥ 40 dB SNR; output not silent")
    fast, res.detail, res.errors = denoised_audio(run, sample, audio, True)
    slow, detail2, errors2 = denoised_audio(run, sample, audio, False) if fast is not None else (None, "", [])
    res.errors += errors2
    res.detail = " | ".join(x for x in (res.detail, detail2) if x)
    res.seconds = time.time() - t0
    if fast is None or slow is None or len(fast) != len(slow):
        res.got = "no output" if fast is None or slow is None else f"lengths differ: {len(fast)} vs {len(slow)}"
        return res
    noise = np.sqrt(np.mean((fast - slow) ** 2))
    signal = np.sqrt(np.mean(slow ** 2))
    snr = 20 * np.log10(signal / max(noise, 1e-12))
    res.got = f"{len(fast)} samples, RMS {signal:.4f}, SNR vs reference {snr:.1f} dB"
    res.ok = snr >= 40 and signal > 1e-3
    return res


CODE_EXAMPLES = {
    # example: (what it computes, expected values in float32, computed here with numpy)
    "mul_add.js": ("C = 0.2 * A + B, A = 1, B = 0.8 ([2, 2], cpu)",
                   np.float32(0.2) * np.ones(4, np.float32) + np.full(4, 0.8, np.float32)),
    "simple_graph.js": ("(0.5 + 1) * (0.5 + 1) ([1, 2, 2, 2], low-power)",
                        (np.float32(0.5) + np.ones(8, np.float32)) * (np.float32(0.5) + np.ones(8, np.float32))),
    "matmul.js": ("matmul(ones[3, 4], 0.8 [4, 3]) on the gpu device (WebGPU)",
                  (np.ones((3, 4), np.float32) @ np.full((4, 3), 0.8, np.float32)).ravel()),
}


def code_editor(run: Runner) -> list:
    results = []
    for example, (what, want) in CODE_EXAMPLES.items():
        t0 = time.time()
        res = Result("code", f"code editor: {example}", reference=f"{what}: numpy float32, to 1e-6")
        context, page = run.open(f"/code/index.html?example={example}")
        try:
            page.wait_for_function("document.querySelector('.CodeMirror') && document.querySelector('.CodeMirror')"
                                   ".CodeMirror.getValue().includes('createContext')")
            page.click("#run")
            page.wait_for_function("/value/i.test(document.querySelector('#console-log').textContent)"
                                   " || /error/i.test(document.querySelector('#console-log').textContent)")
            page.wait_for_timeout(200)
            text = page.inner_text("#console-log").strip()
            nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", text.split(":", 1)[-1])]
            res.got = text.splitlines()[-1][:160] if text else "(nothing logged)"
            res.ok = len(nums) == len(want) and bool(np.allclose(nums, want, rtol=1e-6, atol=1e-6))
            res.detail = run.alerts(page)
        finally:
            res.errors = page.errors[:5]
            res.seconds = time.time() - t0
            context.close()
        results.append(res)
    return results


def nnotepad(run: Runner, samples: Path) -> Result:
    tests = (samples / "nnotepad" / "js" / "tests.js").read_text()
    total = len(re.findall(r"^\s*await test(?:Throws)?\(", tests, re.M))  # not the commented-out ones
    res = Result("nnotepad", "NNotepad's own test page (tests.html)",
                 reference=f"the expectations written in nnotepad/js/tests.js: all {total} pass")
    context, page = run.open("/nnotepad/tests.html")
    try:
        counts = "[...document.querySelectorAll('.counts')].map(e => (e.innerText.match(/\\d+/g) || [0, 0]).map(Number))"
        page.wait_for_function(f"{counts}.reduce((n, [p, f]) => n + p + f, 0) >= {total}")
        passed, failed = (sum(x) for x in zip(*page.evaluate(counts)))
        failures = [t.strip() for t in page.locator(".failure").all_inner_texts()]
        res.got = f"{passed} pass, {failed} fail" + (f": {'; '.join(failures)[:400]}" if failures else "")
        res.ok = failed == 0 and passed == total
    finally:
        res.errors = page.errors[:5]
        context.close()
    return res


SAMPLES = {
    # Float16 SqueezeNet is not a variant of its own: the page's main.js builds SqueezeNetNhwc() /
    # SqueezeNetNchw() without the data type (constructNetObject), so "float16" runs the float32
    # graph (its output is bit-identical).
    "image_classification": lambda run: [image_classification(run, layout, "squeezenet", "lesser panda")
                                         for layout in ("nhwc", "nchw")],
    "lenet": lambda run: [lenet(run)],
    "semantic_segmentation": semantic_segmentation,
    "style_transfer": lambda run: [style_transfer(run)],
    "nsnet2": lambda run: [denoise(run, "nsnet2", "NSNet2 (car noise, 15 dB)", "car")],
    "rnnoise": lambda run: [denoise(run, "rnnoise", "RNNoise (background noise 1)", "voice1")],
    "code": code_editor,
    "nnotepad": lambda run: [nnotepad(run, run.samples)],
}

# Left out, and why (docs/clients.md carries the same list).
LEFT_OUT = {
    "image_classification mobilenet NHWC/NCHW, resnet50v2": "their largest weight files (e.g. mobilenetv2_nhwc/weights/Const_222.npy) are absent from the test-data snapshot this machine can fetch",
}


def run_all(samples: Path, test_data: Path, only: list | None = None, out=sys.stdout, playwright=None) -> list:
    """Run the drivers; `playwright`: a running sync Playwright to reuse (pytest's), else one of its own."""
    check_dirs(samples, test_data)
    if not (ROOT / "dist" / "webnn-polyfill.js").exists():
        raise SetupError("dist/ is not built (./dev build)")
    vendor = ensure_vendor()
    import contextlib

    from playwright.sync_api import sync_playwright

    srv = start_server(samples, test_data, vendor)
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    results = []
    try:
        with (contextlib.nullcontext(playwright) if playwright else sync_playwright()) as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run",
                # the gpu device (WebGPU, software adapter) for the samples that ask for it
                "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"])
            run = Runner(browser, base, vendor, samples)
            for name, driver in SAMPLES.items():
                if only and name not in only:
                    continue
                t0 = time.time()
                try:
                    got = driver(run)
                except Exception as e:  # one sample failing must not hide the others
                    got = [Result(name, "", detail=f"{type(e).__name__}: {str(e).splitlines()[0][:300]}")]
                for r in got:
                    r.seconds = r.seconds or time.time() - t0
                    print(f"{'PASS' if r.ok else 'FAIL'} {r.sample} / {r.variant}: {r.got} [{r.seconds:.0f} s]"
                          + (f" — {r.detail}" if r.detail else ""), file=out, flush=True)
                results.extend(got)
            browser.close()
    finally:
        srv.shutdown()
    return results


def table(results: list) -> str:
    lines = ["| sample | variant | reference | result | ok | s |", "|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.sample} | {r.variant} | {r.reference} | {r.got or r.detail} | {'yes' if r.ok else '**no**'} | {r.seconds:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=Path, default=DEFAULT_SAMPLES)
    p.add_argument("--test-data", type=Path, default=DEFAULT_TEST_DATA)
    p.add_argument("--only", default="", help=f"comma list of: {', '.join(SAMPLES)}")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--serve", action="store_true", help="only serve the samples with the polyfill (Ctrl-C stops)")
    p.add_argument("--port", type=int, default=8100)
    args = p.parse_args(argv)
    try:
        if args.serve:
            check_dirs(args.samples, args.test_data)
            srv = start_server(args.samples, args.test_data, ensure_vendor(), args.port)
            print(f"webnn-samples on the polyfill: http://127.0.0.1:{srv.server_address[1]}/ (CDN scripts load from "
                  "the network in a normal browser)", flush=True)
            try:
                while True:
                    time.sleep(3600)
            except KeyboardInterrupt:
                return 0
        only = [s for s in args.only.split(",") if s]
        bad = [s for s in only if s not in SAMPLES]
        if bad:
            p.error(f"--only: unknown sample(s) {', '.join(bad)}")
        results = run_all(args.samples, args.test_data, only)
    except SetupError as e:
        print(f"clients samples: {e}", file=sys.stderr)
        return 2
    print("\n## WebNN samples\n\n" + table(results))
    for name, why in LEFT_OUT.items():
        print(f"- left out: {name}: {why}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=1))
    return 0 if results and all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
