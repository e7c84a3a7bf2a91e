"""The W3C webnn-samples on the polyfill (tools/clients_samples.py): the quick ones in the
test suite (LeNet, SqueezeNet NHWC and NCHW); `./dev clients samples` runs them all.
Needs checkouts of the samples and their test-data outside the repository (skips without)."""
import io
import sys

import pytest

from conftest import ROOT, browser_unavailable

sys.path.insert(0, str(ROOT / "tools"))
import clients_samples  # noqa: E402


def needs_samples():
    why = browser_unavailable()
    if why:
        pytest.skip(why)
    try:
        clients_samples.check_dirs(clients_samples.DEFAULT_SAMPLES, clients_samples.DEFAULT_TEST_DATA)
    except clients_samples.SetupError as e:
        pytest.skip(f"{e} (or set WEBNN_SAMPLES / WEBNN_TEST_DATA)")
    try:
        clients_samples.ensure_vendor()
    except clients_samples.SetupError as e:
        pytest.skip(f"the samples' CDN scripts are not installed and npm could not get them: {e}")


def test_injection_puts_the_polyfill_before_every_sample_script():
    html = '<!doctype html><html><HEAD lang="en"><script src="main.js"></script></head></html>'
    out = clients_samples.inject(html, {})
    head_end = out.index(">", out.index("<HEAD")) + 1
    assert out.index("/dist/webnn-polyfill.js") > head_end
    assert out.index("/dist/webnn-polyfill.js") < out.index("clients_samples_harness.js") < out.index("main.js")
    assert "fastPaths: false" in clients_samples.inject(html, {"harness-fast": ["0"]})
    assert "fastPaths" not in out


@pytest.mark.browser
@pytest.mark.slow
def test_lenet_and_squeezenet_samples_give_the_reference_results(request):
    needs_samples()
    log = io.StringIO()
    results = clients_samples.run_all(clients_samples.DEFAULT_SAMPLES, clients_samples.DEFAULT_TEST_DATA,
                                      only=["lenet", "image_classification"], out=log,
                                      playwright=request.getfixturevalue("playwright"))
    assert {(r.sample, r.variant) for r in results} >= {("lenet", "LeNet (30 MNIST digits)"),
                                                         ("image_classification", "squeezenet NHWC"),
                                                         ("image_classification", "squeezenet NCHW")}
    bad = [r for r in results if not r.ok]
    assert not bad, log.getvalue()
