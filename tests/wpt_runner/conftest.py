import os
import sys

import pytest

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if PROJECT_ROOT not in sys.path:
    sys.path.insert(0, PROJECT_ROOT)

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixture")
FIXTURE_POLYFILL = os.path.join(FIXTURE, "polyfill")

# Files the fixture tree needs at WPT's own paths are written here rather than
# committed under those names: a stand-in ".wasm" the server tests fetch to check
# its headers, and our small stand-ins (fixture/stand-ins/) for the harness files
# a real WPT tree has at resources/testharness.js and resources/webidl2/lib/webidl2.js.
with open(os.path.join(FIXTURE_POLYFILL, "runtime.wasm"), "w") as _f:
    _f.write("not really wasm; served to check polyfill headers\n")
for _src, _dst in (("testharness-standin.js", "resources/testharness.js"),
                   ("webidl2-standin.js", "resources/webidl2/lib/webidl2.js")):
    _target = os.path.join(FIXTURE, _dst)
    os.makedirs(os.path.dirname(_target), exist_ok=True)
    with open(os.path.join(FIXTURE, "stand-ins", _src)) as _in, open(_target, "w") as _out:
        _out.write(_in.read())


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "browser: drives headless Chromium (skipped when Chromium is absent)")


def chromium_missing_reason():
    from wpt_runner.browser import chromium_path
    path = chromium_path()
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return f"Chromium not found at {path} (set CHROMIUM to run browser tests)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "the playwright Python package is not installed"
    return None


@pytest.fixture
def fixture_tree():
    return FIXTURE


@pytest.fixture
def fixture_polyfill():
    return FIXTURE_POLYFILL
