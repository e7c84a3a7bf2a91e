"""SqueezeNet from ../shared/models classifies test.jpg as "lesser panda"
(top-1) through the public WebNN JS API in headless Chromium."""
import pytest

from conftest import MODELS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_squeezenet_classifies_the_red_panda(page, server):
    if not (MODELS / "squeezenet1.0_nhwc" / "weights" / "conv1_kernel.npy").exists():
        pytest.skip(f"SqueezeNet weights not found under {MODELS}")
    page.set_default_timeout(180_000)
    page.goto(f"{server}/test-pages/squeezenet.html")
    result = page.evaluate("window.result")
    assert "error" not in result, result
    top = result["top5"]
    assert top[0]["label"] == "lesser panda", top
    assert abs(sum(t["probability"] for t in top) - 1) < 0.2
