"""createContext() resolves for deviceType cpu/gpu/npu and for a GPUDevice
(WebGPU through SwiftShader); all of them run the CPU kernels for now."""
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def webgpu_browser(playwright):
    b = playwright.chromium.launch(executable_path=CHROMIUM,
                                   args=CHROMIUM_ARGS + ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"])
    yield b
    b.close()


def test_gpudevice_and_device_types(webgpu_browser, server):
    context = webgpu_browser.new_context()
    try:
        page = context.new_page()
        page.goto(f"{server}/test-pages/gpudevice.html")
        result = page.evaluate("window.result")
    finally:
        context.close()
    if "skipped" in result:
        pytest.skip(result["skipped"])
    assert result == {"y": [9.0, 16.0], "others": ["[object MLContext]"] * 2, "xpu": "TypeError"}
