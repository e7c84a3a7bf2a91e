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
