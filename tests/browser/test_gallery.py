"""The gallery (web/) as a person uses it, in headless Chromium: each page is
opened once, clicked through, checked on what it displays, and saved as a
screenshot in test-results/gallery/ with a layout check (key blocks visible,
not overlapping, no horizontal overflow, also at a phone width)."""
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, MODELS, ROOT

SHOTS = ROOT / "test-results" / "gallery"
ENGINE_TIMEOUT = 300_000  # ms: the engine starts in 5-15 s, much more on a loaded machine


def needs_models():
    if not (MODELS / "squeezenet1.0_nhwc" / "weights" / "conv1_kernel.npy").exists():
        pytest.skip(f"SqueezeNet weights not found under {MODELS}")


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def wait_state(page, timeout=ENGINE_TIMEOUT):
    """Wait until the page's current run is over; returns 'done' or 'error'."""
    page.wait_for_function("['done', 'error'].includes(document.body.dataset.state)", timeout=timeout)
    return page.evaluate("document.body.dataset.state")


def error_text(page):
    box = page.locator("#error")
    return box.inner_text() if box.is_visible() else ""


def assert_layout(page, selectors, name):
    """Each selector visible with a real size, no two boxes overlapping, and
    nothing wider than the viewport."""
    boxes = {}
    for sel in selectors:
        loc = page.locator(sel)
        assert loc.count() >= 1 and loc.first.is_visible(), f"{name}: {sel} is not visible"
        box = loc.first.bounding_box()
        assert box and box["width"] > 20 and box["height"] > 10, f"{name}: {sel} has no size: {box}"
        boxes[sel] = box
    items = list(boxes.items())
    for i, (sa, a) in enumerate(items):
        for sb, b in items[i + 1:]:
            overlap_x = min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"])
            overlap_y = min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"])
            assert overlap_x <= 1 or overlap_y <= 1, f"{name}: {sa} overlaps {sb}: {a} {b}"
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1] + 1, f"{name}: horizontal overflow {width}"


def assert_fits_phone(page, name):
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(100)
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    shot(page, f"{name}-phone")
    assert width[0] <= width[1] + 1, f"{name} at 390 px: horizontal overflow {width}"
    page.set_viewport_size({"width": 1200, "height": 900})


@pytest.fixture
def gpage(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


@pytest.mark.browser
def test_index_shows_a_card_per_example(gpage, server):
    page = gpage
    page.goto(f"{server}/?fast=0&weights=/models/")
    page.wait_for_selector("body[data-ready=true]", timeout=60_000)
    cards = page.locator(".card")
    assert cards.count() >= 4
    titles = [t.strip() for t in page.locator(".card h2").all_inner_texts()]
    for want in ("Handwritten digits", "Image classification", "MobileNetV2 latency", "Graph playground", "NNEF model",
                 "In a dedicated worker"):
        assert want in titles, titles
    assert "polyfill" in page.inner_text("#env") and "cross-origin isolated" in page.inner_text("#env")
    # The gallery settings travel on the links (a deployment can point every page at hosted weights).
    hrefs = page.eval_on_selector_all(".card a.go", "as => as.map(a => a.getAttribute('href'))")
    assert all("fast=0" in h and "weights=" in h for h in hrefs), hrefs
    assert page.locator("#fast").input_value() == "0"
    assert_layout(page, [f"#card-{c}" for c in ("digits", "classify", "mobilenet", "playground", "nnef", "worker")] + ["#settings"], "index")
    shot(page, "index")
    assert_fits_phone(page, "index")
    assert not page.errors, page.errors


@pytest.mark.browser
@pytest.mark.slow
def test_classify_squeezenet_mobilenet_upload_and_errors(gpage, server, tmp_path):
    needs_models()
    page = gpage
    page.set_default_timeout(ENGINE_TIMEOUT)
    page.goto(f"{server}/classify.html?runs=3")
    # Never a blank page: the status line shows what is loading while the engine starts.
    page.wait_for_selector("#status .stage", timeout=30_000)
    assert page.locator("#status").is_visible()
    assert wait_state(page) == "done", error_text(page)
    # The status bar followed the polyfill's load progress to the end.
    assert page.evaluate("document.body.dataset.engineProgress") == "ready"
    labels = page.locator("#top5 .label").all_inner_texts()
    assert len(labels) == 5 and labels[0] == "lesser panda", labels
    assert page.locator("#top5 .prob").first.inner_text().endswith("%")
    timings = dict(zip(page.locator("#timings td:first-child").all_inner_texts(),
                       page.locator("#timings td.num").all_inner_texts()))
    assert all(v.strip() not in ("", "–") for v in timings.values()), timings
    assert "n=3" in page.locator("#timings tr[data-k=median] td.num").inner_text()
    assert page.locator("#latency-note").is_hidden()
    assert_layout(page, ["#form", "#status", "#image-panel", "#result-panel", "#timings-panel"], "classify")
    shot(page, "classify-squeezenet")

    # MobileNetV2 on "gpu": clearly labelled latency-only, timings shown.
    page.select_option("#model", "mobilenetv2")
    assert page.locator("#latency-note").is_visible()
    page.check("input[name=device][value=gpu]")
    page.click("#go")
    page.wait_for_function("document.body.dataset.state === 'busy'", timeout=10_000)
    assert wait_state(page) == "done", error_text(page)
    assert page.evaluate("document.body.dataset.model") == "mobilenetv2"
    assert "synthesized" in page.inner_text("#result-model")
    assert "gpu" in page.inner_text("#result-model")
    # Which backend ran it: this Chromium has no WebGPU adapter, so the gpu device says it ran the
    # cpu fallback and why, in the result line, the timings and beside the device switch.
    assert "(cpu fallback: " in page.inner_text("#result-model"), page.inner_text("#result-model")
    ran = page.inner_text("#device-ran")
    assert ran.startswith("gpu ran MobileNetV2") and "cpu fallback: " in ran and "· median " in ran, ran
    assert page.evaluate("document.body.dataset.backend") == "cpu-fallback"
    assert page.locator("#timings tr[data-k=backend] td.num").inner_text().startswith("cpu fallback: ")
    # Switching back to cpu shows what cpu last ran on.
    page.check("input[name=device][value=cpu]")
    assert page.inner_text("#device-ran").startswith("cpu ran SqueezeNet 1.0 on cpu kernels")
    page.check("input[name=device][value=gpu]")
    assert page.locator("#top5.meaningless li").count() == 5
    assert "meaningless" in page.inner_text("#status")
    median = page.locator("#timings tr[data-k=median] td.num").inner_text()
    assert median.strip() not in ("", "–"), median
    assert_layout(page, ["#form", "#latency-note", "#status", "#image-panel", "#result-panel", "#timings-panel"],
                  "classify-mobilenet")
    shot(page, "classify-mobilenetv2")

    # Upload an image (the same photo, through the file input) with SqueezeNet.
    page.select_option("#model", "squeezenet")
    page.set_input_files("#file", str(MODELS / "test.jpg"))
    page.wait_for_function("document.body.dataset.state === 'busy'", timeout=10_000)
    assert wait_state(page) == "done", error_text(page)
    assert page.locator("#top5 .label").first.inner_text() == "lesser panda"
    assert "Uploaded: test.jpg" in page.locator("#sample option:checked").inner_text()
    assert page.inner_text("#image-name").startswith("test.jpg")

    # A file that is not an image: a readable error in the page, nothing thrown.
    bad = tmp_path / "notes.txt"
    bad.write_text("not an image")
    page.set_input_files("#file", str(bad))
    page.wait_for_selector("#error:not([hidden])", timeout=10_000)
    assert "not an image" in page.inner_text("#error")
    assert_fits_phone(page, "classify")
    assert not page.errors, page.errors


@pytest.mark.browser
def test_classify_reports_missing_weights_readably(gpage, server):
    page = gpage
    page.goto(f"{server}/classify.html?weights=/no-such-models/")
    assert wait_state(page, 60_000) == "error"
    text = page.inner_text("#error")
    assert "HTTP 404" in text and "/no-such-models/" in text and "WEBNN_MODELS" in text, text
    assert "/no-such-models/" in page.inner_text("#weights-base")
    assert page.locator("#status").is_hidden()
    shot(page, "classify-error")


@pytest.mark.browser
@pytest.mark.slow
def test_playground_composes_ops(gpage, server):
    page = gpage
    page.set_default_timeout(ENGINE_TIMEOUT)
    page.goto(f"{server}/playground.html")
    page.wait_for_selector("#status .stage", timeout=30_000)
    assert wait_state(page) == "done", error_text(page)
    # The first example: s1 = matmul(A, B), s2 = relu(s1).
    assert page.locator(".out[data-name=s1] pre").inner_text() == "[[10, 12],\n [-19, -24]]"
    assert page.locator(".out.final[data-name=s2] pre").inner_text() == "[[10, 12],\n [0, 0]]"
    assert "builder.matmul(A, B)" in page.inner_text("#code")

    # Add a step: s3 = mul(s2, s2).
    page.click("#add")
    step = page.locator("#steps .step").nth(2)
    step.locator("[name=op]").select_option("mul")
    step.locator("[name=arg1]").select_option("s2")
    step.locator("[name=arg2]").select_option("s2")
    page.click("#run")
    page.wait_for_selector(".out[data-name=s3]")
    assert page.locator(".out.final[data-name=s3] pre").inner_text() == "[[100, 144],\n [0, 0]]"
    assert "float32 [2, 2]" in page.locator(".out[data-name=s3] h3").inner_text()

    # Typed inputs: the int32 example.
    page.select_option("#preset", label="integers: (A − B) · A, reduceSum")
    page.wait_for_selector(".out[data-name=s3] h3:has-text('int32')")
    assert wait_state(page) == "done", error_text(page)
    # (A - B) * A = [[6, 6], [6, 6]] * [[7, 8], [9, 10]] = [[42, 48], [54, 60]]; the sum is 204.
    assert page.locator(".out[data-name=s2] pre").inner_text() == "[[42, 48],\n [54, 60]]"
    assert page.locator(".out.final[data-name=s3] pre").inner_text() == "204"
    assert_layout(page, ["#inputs", "#steps", "#outputs", "#code"], "playground")
    shot(page, "playground")

    # An invalid graph: a readable builder error naming the step.
    first = page.locator("#steps .step").first
    first.locator("[name=op]").select_option("matmul")
    first.locator("[name=arg1]").select_option("A")
    first.locator("[name=arg2]").select_option("A")
    page.locator("#inputs [data-name=A] [name=shape]").fill("2, 3")
    page.locator("#inputs [data-name=A] [name=values]").fill("1 2 3 4 5 6")
    page.locator("#inputs [data-name=A] [name=dtype]").select_option("float32")
    page.click("#run")
    page.wait_for_selector("#error:not([hidden])")
    text = page.inner_text("#error")
    assert "step s1 = matmul(A, A)" in text and "TypeError" in text, text
    # A malformed input is caught before the engine sees it.
    page.locator("#inputs [data-name=B] [name=values]").fill("1 2 3")
    page.click("#run")
    page.wait_for_function("document.querySelector('#error').innerText.includes('needs 4 values')")
    shot(page, "playground-error")
    assert_fits_phone(page, "playground")
    assert not page.errors, page.errors


@pytest.mark.browser
def test_nnef_card_runs_the_sample_document(gpage, server):
    """The NNEF page parses its sample graph.nnef, lowers it with loadNNEF and runs it:
    softmax(relu(x @ W + b)) for x = [1, 2, 3, 4], computed here with the same constants."""
    page = gpage
    page.goto(f"{server}/nnef.html")
    page.wait_for_selector("body[data-state=done], body[data-state=error]", timeout=120_000)
    assert page.get_attribute("body", "data-state") == "done", page.inner_text("#error")
    x = np.array([[1.0, 2, 3, 4]])
    w = np.array([1.0, 0.0, -1.0, 0.5, 1.0, 0.0, 0.0, -0.5, 1.0, 2.0, 0.0, 0.0]).reshape(4, 3)
    h = np.maximum(x @ w + np.array([[0.5, -0.5, 0.0]]), 0)
    expected = np.exp(h - h.max()) / np.exp(h - h.max()).sum()
    line = [ln for ln in page.inner_text("#out").splitlines() if ln.startswith("output")][0]
    got = np.array([float(v) for v in line.split("= [")[1].rstrip("]").split(",")])
    assert np.allclose(got, expected.ravel(), atol=1e-5), (got, expected)
    # The same network as NNEF 2.0 (SkriptND, main.sknd): told apart by content, same result.
    page.click("#sample-v2")   # sets data-state=busy synchronously, then loads and runs
    page.wait_for_selector("body[data-state=done], body[data-state=error]", timeout=120_000)
    assert page.get_attribute("body", "data-state") == "done", page.inner_text("#error")
    assert page.inner_text("#doc-label") == "main.sknd"
    line = [ln for ln in page.inner_text("#out").splitlines() if ln.startswith("output")][0]
    got = np.array([float(v) for v in line.split("= [")[1].rstrip("]").split(",")])
    assert np.allclose(got, expected.ravel(), atol=1e-5), (got, expected)
    page.click("#sample-v1")
    page.wait_for_selector("body[data-state=done], body[data-state=error]", timeout=120_000)
    # A broken document is reported in the page, with the NNEF position.
    page.fill("#doc", "version 1.0;\ngraph g( input ) -> ( output ) { input = external<scalar>(shape = [1]); output = relu(input; }")
    page.click("#run")
    page.wait_for_selector("#error:not([hidden])", timeout=30_000)
    assert ":" in page.inner_text("#error")
    shot(page, "nnef")
    assert not page.errors, page.errors


@pytest.mark.browser
@pytest.mark.slow
def test_worker_page_classifies_in_a_dedicated_worker(gpage, server):
    needs_models()
    page = gpage
    page.set_default_timeout(ENGINE_TIMEOUT)
    page.goto(f"{server}/worker.html?runs=3")
    page.wait_for_selector("#status .stage", timeout=30_000)
    assert wait_state(page) == "done", error_text(page)
    scope = dict(zip(page.locator("#scope td:first-child").all_inner_texts(),
                     page.locator("#scope td.num").all_inner_texts()))
    assert scope["Global scope"] == "DedicatedWorkerGlobalScope", scope
    assert scope["navigator.ml in the worker"] == "yes"
    assert scope["document in the worker"].startswith("no")
    assert page.locator("#top5 .label").first.inner_text() == "lesser panda"
    assert all(v not in ("", "–") for v in page.locator("#timings td.num").all_inner_texts())
    # The page was never the one running the model: no polyfill in the window.
    assert page.evaluate("typeof webnnPolyfill === 'undefined'")
    assert_layout(page, ["#status", "#scope", "#top5", "#timings"], "worker")
    shot(page, "worker")
    assert not page.errors, page.errors


@pytest.mark.browser
def test_bench_page_runs_no_animation_while_timing(gpage, server):
    """The bench page's status spinner does not animate: a running CSS animation has the
    browser draw a frame every 16 ms, CPU that the timed engines' threads then lack."""
    page = gpage
    page.goto(f"{server}/bench/")
    page.wait_for_selector("#status", state="attached")
    name = page.evaluate("""() => {
      const s = document.createElement('span'); s.className = 'spinner';
      document.querySelector('#status').appendChild(s);
      return getComputedStyle(s).animationName; }""")
    assert name == "none", name
    assert page.evaluate("document.getAnimations().length") == 0
    assert not page.errors, page.errors


@pytest.mark.browser
def test_status_line_does_not_animate_while_inference_is_timed(gpage, server):
    """web/lib/ui.js Status.timing() (the classify page's timed runs): the spinner's CSS animation
    stops and the elapsed clock stands still, and show() starts them again; done() clears it."""
    page = gpage
    page.goto(f"{server}/classify.html")
    page.wait_for_selector("#status", state="attached")
    r = page.evaluate("""async () => {
      const { Status } = await import('./lib/ui.js');
      const el = document.createElement('div'); el.className = 'status'; document.body.appendChild(el);
      const s = new Status(el);
      const spin = () => getComputedStyle(s.spinner).animationName;
      const running = () => s.spinner.getAnimations().length;
      s.show('Loading weights…', 0.5);
      const busy = [spin(), running()];
      s.timing('Repeating inference 3/10…', 0.3);
      s.elapsed.textContent = 'frozen';
      await new Promise((res) => setTimeout(res, 450));  // two ticks of the clock
      const timed = [spin(), running(), s.stage.textContent, s.bar.value, s.elapsed.textContent];
      s.show('Building the graph…');
      const again = [spin(), running()];
      s.timing('Running the first inference…');
      // An indeterminate <progress> animates too (its frames are drawn whenever the page's
      // thread is free: during a timeline worker's inference, not during an in-page one).
      const indeterminate = [s.bar.hidden, s.bar.hasAttribute('value')];
      s.show('Building the graph…');
      const shownAgain = s.bar.hidden;
      s.done('ok');
      const done = [el.classList.contains('timing'), s.spinner.hidden];
      el.remove();
      return { busy, timed, again, indeterminate, shownAgain, done };
    }""")
    assert r["busy"] == ["spin", 1], r
    assert r["timed"] == ["none", 0, "Repeating inference 3/10…", 0.3, "frozen"], r
    assert r["again"] == ["spin", 1], r
    assert r["indeterminate"] == [True, False] and r["shownAgain"] is False, r
    assert r["done"] == [False, True], r
    assert not page.errors, page.errors


def test_bench_tables_from_canned_results():
    """tools/bench.py's table writer: ratios, unavailable backends, markers."""
    sys.path.insert(0, str(ROOT / "tools"))
    import bench

    probs = [0.0] * 1001
    probs[388] = 0.9
    model = {"weightsMs": 500, "buildMs": 300, "firstMs": 400, "medianMs": 200, "minMs": 150, "runsMs": [200, 150, 250],
             "top5": [{"label": "lesser panda", "probability": 0.9, "index": 388}], "probabilities": probs}
    slow = dict(model, medianMs=800, minMs=700)
    op = {"id": "conv2d 3x3", "kind": "conv", "macs": 1e8, "medianMs": 10, "minMs": 9, "n": 3}
    data = {"machine": {}, "engines": {
        "polyfill": {"label": "WebNN polyfill", "start": {"readyMs": 9000}, "warmStarts": [{"readyMs": 6000}],
                     "models": {"squeezenet": model}, "ops": [op],
                     "profile": {"squeezenet": {"runs": 2, "wallMsPerInference": 200,
                                                "ops": {"conv2d+relu (3x3)": {"calls": 16, "ms": 300, "msPerInference": 150, "callsPerInference": 8}},
                                                "kernels_profile": {"conv2d+relu": {"calls": 16, "fast_calls": 16, "ms": 300}}}}},
        "tfjs-cpu": {"label": "TF.js cpu", "start": {"readyMs": 200}, "models": {"squeezenet": slow}, "ops": [dict(op, medianMs=40)]},
        "tfjs-webgl": {"label": "TF.js webgl", "unavailable": "no WebGL"},
    }}
    text = bench.tables(data, ["squeezenet"])
    assert "| WebNN polyfill | 9 000 | 6 000 |" in text
    assert "| TF.js cpu | 500 | 300 | 400 | 800 | 700 | 3 | 0.25× | lesser panda | 0.0e+00 |" in text
    assert "TF.js webgl | unavailable: no WebGL" in text
    assert "| conv2d 3x3 | 100.0 | 10.0 | 40.0 (0.25×) | 20.00 |" in text
    assert "| conv2d+relu (3x3) | 8 | 150 | 75 % | yes |" in text
    startup = bench.startup_table({
        "polyfill": {"label": "WebNN polyfill", "cold": [900, 1100, 1000], "warm": [700, 800, 750],
                     "firstCold": [1200, 1000, 1100], "firstWarm": [900, 950, 800]},
        "polyfill-worker": {"label": "WebNN polyfill, timeline worker", "cold": [950], "warm": [700],
                            "firstCold": [], "firstWarm": []},
        "tfjs-wasm": {"label": "TF.js wasm, single-threaded", "cold": [100], "warm": [150],
                      "firstCold": [110], "firstWarm": [160]}})
    assert "| WebNN polyfill | 1 000 | 750 | 1 100 | 900 | 3 |" in startup
    assert "| WebNN polyfill, timeline worker | 950 | 700 | – | – | 1 |" in startup  # a run without first results
    assert "| **polyfill / TF.js wasm** | **10×** | **5.00×** | | | |" in startup
    md = ROOT / "test-results" / "bench-tables.md"
    md.parent.mkdir(exist_ok=True)
    md.write_text("# Perf\n\nprose\n\n<!-- bench:begin -->\nOLD-TABLE\n<!-- bench:end -->\n\nafter\n")
    info = {"cpu": "cpu", "cores": 2, "memory": "1 GiB", "os": "Linux", "browser": "Chromium", "tfjs": "4.22.0",
            "date": "today", "commit": "abc", "loadavg_at_start": "1"}
    bench.write_markdown(md, text, "python3 tools/bench.py", info)
    out = md.read_text()
    assert out.startswith("# Perf\n\nprose\n") and out.endswith("<!-- bench:end -->\n\nafter\n") and "OLD-TABLE" not in out
    assert "Command: `python3 tools/bench.py`" in out


@pytest.mark.browser
@pytest.mark.slow
def test_classify_on_the_gpu_device_says_it_ran_on_webgpu(playwright, server):
    """With a WebGPU adapter (SwiftShader here) the gpu device runs SqueezeNet on WebGPU:
    the device switch, the result line and the timings name the adapter and the time."""
    needs_models()
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + [
        "--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"])
    try:
        page = browser.new_context(viewport={"width": 1200, "height": 900}).new_page()
        # SwiftShader runs the shaders on the CPU: on a loaded machine one SqueezeNet inference
        # takes a minute, and the page runs two (first + 1 repeat) after building the pipelines.
        timeout = 3 * ENGINE_TIMEOUT
        page.set_default_timeout(timeout)
        page.goto(f"{server}/classify.html?runs=1&device=gpu")
        assert wait_state(page, timeout) == "done", error_text(page)
        if page.evaluate("document.body.dataset.backend") != "webgpu":
            pytest.skip(f"no WebGPU adapter in this Chromium ({page.inner_text('#device-ran')})")
        assert page.locator("#top5 .label").first.inner_text() == "lesser panda"
        ran = page.inner_text("#device-ran")
        assert ran.startswith("gpu ran SqueezeNet 1.0 on WebGPU on ") and "swiftshader" in ran.lower(), ran
        assert "· median " in ran and ran.endswith("per inference"), ran
        assert "(WebGPU on " in page.inner_text("#result-model")
        assert page.locator("#timings tr[data-k=backend] td.num").inner_text().startswith("WebGPU on ")
        assert_fits_phone(page, "classify-webgpu")
    finally:
        browser.close()
