"""WebGPU interop of the 2026 IDL (createExportableTensor / exportToGPU) on
SwiftShader, with the page's own WebGPU code on the exported buffers, and the
lifetime of a gpu context's runner.

What the ED of 2026-06-26 lacks in prose (the IDL has both methods) is taken
from the WebNN-WebGPU interop text of webmachinelearning/webnn#942: an
exportable tensor is rented to its GPUDevice "until the returned GPUBuffer is
destroyed"; while it is exported "dispatch(), readTensor() and writeTensor() will
fail"; the exported buffer's usage is STORAGE | COPY_SRC | COPY_DST (#954)."""
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser

WEBGPU_ARGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"]


@pytest.fixture(scope="module")
def page(playwright, server):
    # --expose-gc: the runner-lifetime test collects contexts the page dropped.
    browser = playwright.chromium.launch(executable_path=CHROMIUM,
                                         args=CHROMIUM_ARGS + WEBGPU_ARGS + ["--js-flags=--expose-gc"])
    p = browser.new_context().new_page()
    p.goto(f"{server}/test-pages/webgpu_interop.html")
    why = p.evaluate("window.webgpuReady")
    if why:
        browser.close()
        pytest.skip(f"WebGPU unavailable in this Chromium ({why})")
    yield p
    browser.close()


def test_exported_tensor_round_trips_through_the_pages_webgpu_code(page):
    r = page.evaluate("window.roundTrip()")
    assert r["isGPUBuffer"] and r["usage"] and r["size"] >= 24, r
    # The page's shader (v * 3 + 1) ran on the tensor WebNN wrote, and WebNN's graph saw its result.
    assert r["x"] == [4, 7, 10, 13, 16, 19]
    assert r["yOnPage"] == [14, 27, 40, 23, 36, 49]  # x + [10, 20, 30], read by the page without readTensor
    assert r["y"] == [43, 82, 121, 70, 109, 148]  # the page's shader on WebNN's output, read back by WebNN
    assert r["x2OnPage"] == [-1, -2, -3, -4, -5, -6] and r["x2"] == [-1, -2, -3, -4, -5, -6]
    for op, error in r["whileExported"].items():
        assert error.startswith("TypeError") and "exported to WebGPU" in error, (op, error)
    before, after = r["before"], r["after"]
    assert after.get("exports", 0) - before.get("exports", 0) == 3
    assert after.get("returns", 0) - before.get("returns", 0) == 3
    # Contents move between WebNN and the page on the GPU: no host uploads for the exports.
    assert after.get("uploads", 0) == before.get("uploads", 0)


def test_interop_errors(page):
    r = page.evaluate("window.errors()")
    assert r["notADevice"].startswith("TypeError"), r["notADevice"]
    assert r["cpuContext"].startswith("NotSupportedError") and "createContext(gpuDevice)" in r["cpuContext"]
    assert r["otherDevice"].startswith("NotSupportedError") and "runs on" in r["otherDevice"]
    assert r["gpuContextPageDevice"].startswith("NotSupportedError")
    assert r["badDescriptor"].startswith("TypeError")
    # Every IDL type lives in GPU buffers as its own bytes (int64 as two words, kernels/packing.py),
    # so an int64 tensor is exportable too.
    assert r["int64"] == "no error", r["int64"]
    assert r["notExportable"].startswith("TypeError") and "not exportable" in r["notExportable"]
    assert r["otherContext"].startswith("TypeError") and "another context" in r["otherContext"]
    assert r["notATensor"].startswith("TypeError")
    assert r["exportable"] is True
    assert r["bufferAfterTensorDestroyed"] == "validation error"
    assert r["destroyed"].startswith("TypeError") and "destroyed" in r["destroyed"]
    assert r["afterContextDestroyed"].startswith("InvalidStateError")
    assert r["createAfterContextDestroyed"].startswith("InvalidStateError")
    assert r["bufferAfterContextDestroyed"] == "validation error"


def test_collected_gpu_contexts_release_their_runners(page):
    r = page.evaluate("window.runnersAfterCollection(4)")
    assert r["created"] == r["before"] + 4, r
    assert r["after"] == r["before"], r  # every dropped context's runner went with it
    assert r["withBoth"] == r["before"] + 2 and r["keptAlive"] == r["before"] + 1, r
    assert r["y"] == [-1, 2]


def test_gpu_context_without_webgpu_is_not_accelerated(page, server):
    """[[accelerated]] is the context's processing type (CPU or massively parallel): a
    gpu context whose platform found no WebGPU runs the cpu kernels, so it is false,
    and engineStats says why."""
    p = page.context.new_page()
    p.goto(f"{server}/test-pages/webgpu_off.html")
    r = p.evaluate("window.result")
    p.close()
    assert "error" not in r, r
    assert r["y"] == [-1, 2]
    assert r["accelerated"] is False and r["status"]["accelerated"] is False
    assert r["webgpu"]["available"] is False and "switched off" in r["webgpu"]["reason"]
    assert "accelerated is false" in r["webgpu"]["reason"] and "switched off" in r["status"]["reason"]
    assert r["cpuAccelerated"] is True and r["gpuNotAccelerated"] is False
