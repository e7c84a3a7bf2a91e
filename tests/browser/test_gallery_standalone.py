"""The gallery on a fresh clone: no ../shared/models (simulated by mounting an empty folder
at /models/) and no network (every request off 127.0.0.1 is aborted). The digit card works
with nothing downloaded and agrees with scikit-learn; the cards that need weights say they
will use the public copy, and say clearly what is missing when it cannot be reached."""
import json
import sys

import numpy as np
import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
ENGINE_TIMEOUT = 300_000
MODEL = ROOT / ".cache" / "gallery" / "digits-mlp.json"


@pytest.fixture(scope="module")
def bare_server(tmp_path_factory):
    import serve

    empty = tmp_path_factory.mktemp("no-models")
    srv = serve.start(mounts={**serve.default_mounts(), "/models/": empty})
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


@pytest.fixture
def offline_page(browser):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    blocked = []

    def only_loopback(route):
        if route.request.url.startswith("http://127.0.0.1:"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort("internetdisconnected")

    context.route("**/*", only_loopback)
    pg = context.new_page()
    pg.errors = []
    pg.blocked = blocked
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def needs_digits_model():
    if not MODEL.exists():
        pytest.skip("the digit classifier is not trained (python3 tools/build.py; needs scikit-learn)")


def wait_state(page, timeout=ENGINE_TIMEOUT):
    page.wait_for_function("['done', 'error'].includes(document.body.dataset.state)", timeout=timeout)
    return page.evaluate("document.body.dataset.state")


@pytest.mark.browser
def test_index_without_shared_models(offline_page, bare_server):
    needs_digits_model()
    page = offline_page
    page.goto(f"{bare_server}/")
    page.wait_for_selector("body[data-ready=true]", timeout=60_000)
    assert page.evaluate("document.body.dataset.digits") == "true"
    assert page.locator("[data-needs=digits]").is_hidden()
    # No local weights: the weight cards say where they will come from and how to run offline.
    assert page.evaluate("document.body.dataset.weights") == "public"
    note = page.locator("#card-classify [data-needs=weights]").inner_text()
    assert "public copy" in note and "WEBNN_MODELS" in note, note
    assert page.locator("#card-digits").is_visible()
    assert not page.errors, page.errors


@pytest.mark.browser
@pytest.mark.slow
def test_digits_card_agrees_with_scikit_learn(offline_page, bare_server):
    needs_digits_model()
    page = offline_page
    page.set_default_timeout(ENGINE_TIMEOUT)
    page.goto(f"{bare_server}/digits.html")
    assert wait_state(page) == "done", page.inner_text("#error")
    samples = json.loads(MODEL.read_text())["samples"]
    # Held-out digits, among them ones scikit-learn gets wrong: the page gives scikit-learn's
    # label and its probabilities.
    picks = [0, 1, 2, 3] + [i for i, s in enumerate(samples) if s["label"] != s["sklearnLabel"]][:1]
    for i in picks:
        page.locator("#samples button").nth(i).click()
        page.wait_for_function(f"document.querySelectorAll('#samples button')[{i}].getAttribute('aria-pressed') === 'true'"
                               " && document.body.dataset.state === 'done' && 'maxDiff' in document.querySelector('#result-panel').dataset")
        data = page.evaluate("({...document.querySelector('#result-panel').dataset})")
        got = np.array(json.loads(data["probabilities"]))
        want = np.array(samples[i]["sklearnProbabilities"])
        assert int(data["label"]) == samples[i]["sklearnLabel"], (i, data["label"], samples[i])
        assert np.allclose(got, want, atol=1e-5), (i, got, want)
    correct = sum(samples[i]["label"] == samples[i]["sklearnLabel"] for i in picks[:4])
    assert correct >= 3

    # A drawn digit: a vertical stroke. The page's own 8x8 encoding of the drawing goes to
    # scikit-learn's model (retrained here, deterministically), which must give the same answer.
    import train_digits

    clf, _, _ = train_digits.train()
    box = page.locator("#pad").bounding_box()
    x = box["x"] + box["width"] / 2
    page.mouse.move(x, box["y"] + 30)
    page.mouse.down()
    for k in range(1, 11):
        page.mouse.move(x + k * 1.5, box["y"] + 30 + k * 16)
    page.mouse.up()
    page.wait_for_function("document.body.dataset.state === 'done' && !('maxDiff' in document.querySelector('#result-panel').dataset)")
    data = page.evaluate("({...document.querySelector('#result-panel').dataset})")
    pixels = np.array(json.loads(data["pixels"]))
    assert pixels.sum() > 16 and pixels.max() <= 16
    probs = clf.predict_proba(pixels.reshape(1, 64) / 16.0)[0]
    assert int(data["label"]) == int(np.argmax(probs)) == 1, (data["label"], probs)
    assert np.allclose(np.array(json.loads(data["probabilities"])), probs, atol=1e-5)
    assert "no reference" in page.inner_text("#compare")
    assert not page.errors, page.errors
    assert not page.blocked, page.blocked


@pytest.mark.browser
def test_classify_offline_without_shared_models_says_what_is_missing(offline_page, bare_server):
    page = offline_page
    page.goto(f"{bare_server}/classify.html")
    assert wait_state(page, 120_000) == "error"
    text = page.inner_text("#error")
    assert page.evaluate("document.body.dataset.weights") == "public"
    assert page.evaluate("document.body.dataset.offline") == "true"
    assert "offline" in text and "WEBNN_MODELS" in text and "test-data" in text, text
    assert any("raw.githubusercontent.com/webmachinelearning" in u for u in page.blocked), page.blocked
    assert not page.errors, page.errors
