"""Smoke test against the real WPT webnn/ tree and the real polyfill.

Runs only when a WPT tree is available ($WPT_DIR or a cached extraction under
~/.cache/pywebnn/wpt/) and the polyfill has been built (dist/webnn-polyfill.js).
"""

import json
import os
import subprocess
import sys

import pytest

from conftest import PROJECT_ROOT, chromium_missing_reason
from wpt_runner import wpttree

POLYFILL = os.path.join(PROJECT_ROOT, "dist", "webnn-polyfill.js")
EXPECTATIONS = os.path.join(PROJECT_ROOT, "wpt_runner", "expectations.json")


def _tree():
    path = os.environ.get("WPT_DIR") or wpttree.newest_cached()
    return path if path and os.path.exists(path) else None


def _skip_reason():
    if not _tree():
        return "no WPT tree (set WPT_DIR or extract one into ~/.cache/pywebnn/wpt/<commit>/)"
    if not os.path.isfile(POLYFILL):
        return f"polyfill not built ({POLYFILL} missing)"
    return chromium_missing_reason()


def _built_idl() -> str:
    """spec/<the IDL file py/webnn_core/idl_schema.json was generated from>."""
    schema = json.loads(open(os.path.join(PROJECT_ROOT, "py", "webnn_core", "idl_schema.json")).read())
    return os.path.join(PROJECT_ROOT, "spec", schema["idl"])


_reason = _skip_reason()


@pytest.mark.browser
@pytest.mark.skipif(_reason is not None, reason=_reason or "")
def test_wpt_smoke():
    # idlharness checks the polyfill against the IDL it was built from (default: the 2026 IDL).
    cmd = [sys.executable, "-m", "wpt_runner", "--wpt", _tree(), "--idl", _built_idl(),
           "--filter", "webnn/idlharness.https.any.js,webnn/conformance_tests/relu.https.any.js",
           "--variants", "cpu", "--globals", "window",
           "--expectations", EXPECTATIONS]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]


@pytest.mark.browser
@pytest.mark.skipif(_reason is not None, reason=_reason or "")
def test_wpt_gpu_variant_runs_on_the_webgpu_backend(tmp_path):
    """--webgpu: the ?gpu page passes what ?cpu passes (float16, int8, int32 relu
    cases), and the report's tally shows every graph built and dispatched on the
    WebGPU backend, none on the cpu fallback (SwiftShader in headless Chromium)."""
    out = tmp_path / "gpu.json"
    cmd = [sys.executable, "-m", "wpt_runner", "--wpt", _tree(), "--webgpu",
           "--filter", "webnn/conformance_tests/relu.https.any.js", "--variants", "gpu", "--globals", "window",
           "--out", str(out)]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    url = "/webnn/conformance_tests/relu.https.any.html?gpu"
    page = json.loads(out.read_text())["results"][url]
    expected = json.loads(open(EXPECTATIONS).read())[url.replace("?gpu", "?cpu")]
    passed = {s["name"] for s in page["subtests"] if s["status"] == "PASS"}
    assert set(expected) <= passed and any("float16" in name for name in expected)
    backend = page["backend"]
    if backend["available"] is not True:
        pytest.skip(f"no WebGPU adapter in this Chromium ({backend['reason']})")
    assert backend["gpu"] >= len(expected) and backend["dispatchesGpu"] >= len(expected), backend
    assert backend["cpu"] == 0 and backend["dispatchesCpu"] == 0 and backend["reasons"] == {}, backend
    assert "gpu contexts: graphs built on the WebGPU backend" in proc.stderr


@pytest.mark.browser
@pytest.mark.skipif(_reason is not None, reason=_reason or "")
def test_wpt_gpu_variant_in_a_dedicated_worker_reports_its_webgpu_graphs(tmp_path):
    """--webgpu, dedicated worker global: the worker posts the polyfill's tally to its
    window (wrappers.WORKER_BACKEND_JS), so the report shows the worker's graphs ran on
    the WebGPU backend (navigator.gpu in the worker, SwiftShader)."""
    out = tmp_path / "gpu_worker.json"
    cmd = [sys.executable, "-m", "wpt_runner", "--wpt", _tree(), "--webgpu",
           "--filter", "webnn/conformance_tests/identity.https.any.js", "--variants", "gpu",
           "--globals", "dedicatedworker", "--expectations", EXPECTATIONS, "--out", str(out)]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-5000:]
    page = json.loads(out.read_text())["results"]["/webnn/conformance_tests/identity.https.any.worker.html?gpu"]
    backend = page["backend"]
    assert backend is not None, page
    if backend["available"] is not True:
        pytest.skip(f"no WebGPU adapter in this Chromium's workers ({backend['reason']})")
    passed = [s for s in page["subtests"] if s["status"] == "PASS"]
    assert backend["gpu"] >= len(passed) > 0 and backend["cpu"] == 0 and backend["dispatchesCpu"] == 0, backend
