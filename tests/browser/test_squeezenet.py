"""SqueezeNet from ../shared/models classifies test.jpg as "lesser panda"
(top-1) through the public WebNN JS API (engine-parametrised: --browser)."""
import pytest

from conftest import MODELS

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_squeezenet_classifies_the_red_panda(epage, server):
    if not (MODELS / "squeezenet1.0_nhwc" / "weights" / "conv1_kernel.npy").exists():
        pytest.skip(f"SqueezeNet weights not found under {MODELS}")
    epage.goto(f"{server}/test-pages/squeezenet.html")
    result = epage.evaluate("window.result", timeout=300)
    assert "error" not in result, result
    top = result["top5"]
    assert top[0]["label"] == "lesser panda", top
    assert abs(sum(t["probability"] for t in top) - 1) < 0.2
