"""With Chromium's own WebNN IDL exposed (--enable-features=WebMachineLearningNeuralNetwork,
no working backend here), the polyfill leaves it alone by default and replaces it
when configured with replaceNative."""
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def native_browser(playwright):
    b = playwright.chromium.launch(executable_path=CHROMIUM,
                                   args=CHROMIUM_ARGS + ["--enable-features=WebMachineLearningNeuralNetwork"])
    yield b
    b.close()


def run(native_browser, server, query):
    context = native_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{server}/test-pages/native.html{query}")
        return page.evaluate("window.result")
    finally:
        context.close()


def test_native_is_kept_by_default_and_replaced_on_request(native_browser, server):
    kept = run(native_browser, server, "")
    if not kept["nativeBefore"]:
        pytest.skip("this Chromium exposes no native navigator.ml with the feature flag")
    assert kept["polyfilled"] is False
    replaced = run(native_browser, server, "?replace")
    assert replaced == {"nativeBefore": True, "polyfilled": True, "works": True}
