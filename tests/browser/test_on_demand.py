"""What a first visit fetches (issue 34): the start-up archives hold only what a
start needs (tools/start_archives.py); a module outside them still imports, fetched
on demand from the full file beside the runtime and verified
(py/webnn_core/ondemand.py), or fails naming the module; a slow connection does not
fetch the build-time snapshot. Expectations: native CPython and numpy 2.0.2."""
import json
import statistics
import urllib.parse
import xml.dom.minidom
import zipfile

import numpy as np
import pytest

from conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DIST = ROOT / "dist"
# Modules no start archive holds (checked below): two of the standard library, one
# codec, numpy's fft and random with their compiled modules, and the engine's NNEF and
# StableHLO importers (with the NNEF 2.0 stdlib's data files).
OUTSIDE = r"""
import json, os, statistics, xml.dom.minidom
import numpy as np
import webnn_core
core = os.path.dirname(webnn_core.__file__)
before = [os.path.isdir(os.path.join(core, p)) for p in ("nnef", "nnef2", "xla")]
import webnn_core.nnef.parser, webnn_core.nnef2, webnn_core.xla
json.dumps({
    "core": [before, sorted(f for f in os.listdir(os.path.join(core, "nnef2", "stdlib")) if f.endswith(".sknd"))[:3],
             os.path.exists(os.path.join(core, "bridge.py"))],
    "mean": statistics.fmean([1.0, 2.0, 4.5]),
    "xml": xml.dom.minidom.parseString("<a><b>hi</b></a>").documentElement.firstChild.firstChild.data,
    "cp1252": b"\x80\x93".decode("cp1252"),
    "fft": np.abs(np.fft.fft([1.0, 2.0, 3.0, 4.0])).tolist(),
    "rng": np.random.default_rng(7).integers(0, 1000, 5).tolist(),
})
"""


def expected_outside():
    sknd = sorted(p.name for p in (ROOT / "py" / "webnn_core" / "nnef2" / "stdlib").glob("*.sknd"))[:3]
    # none there before; the data files come along; no source beside the start's bytecode
    return {"core": [[False, False, False], sknd, False],
            "mean": statistics.fmean([1.0, 2.0, 4.5]),
            "xml": xml.dom.minidom.parseString("<a><b>hi</b></a>").documentElement.firstChild.firstChild.data,
            "cp1252": b"\x80\x93".decode("cp1252"),
            "fft": np.abs(np.fft.fft([1.0, 2.0, 3.0, 4.0])).tolist(),
            "rng": np.random.default_rng(7).integers(0, 1000, 5).tolist()}


def start_archive(prefix):
    found = sorted(DIST.glob(f"{prefix}-*.zip"))
    if not found:
        pytest.skip(f"no {prefix}-*.zip in dist/ (run ./dev build)")
    return zipfile.ZipFile(found[-1])


def run_python(context, server, code, config):
    page = context.new_page()
    page.set_default_timeout(300_000)
    try:
        query = urllib.parse.urlencode({"config": json.dumps(config), "code": code})
        page.goto(f"{server}/test-pages/python.html?{query}")
        result = page.evaluate("window.result")
    finally:
        page.close()
    assert "error" not in result, result
    return result


def test_the_start_archives_leave_these_modules_out():
    stdlib = set(start_archive("python_stdlib-start").namelist())
    # (a module a start imports is there as bytecode, name.pyc: tests/dist/test_start_archives.py)
    assert {"statistics.py", "xml/dom/minidom.py", "encodings/cp1252.py"}.isdisjoint(stdlib)
    assert {"statistics.pyc", "xml/dom/minidom.pyc", "encodings/cp1252.pyc"}.isdisjoint(stdlib)
    assert "encodings/utf_8.pyc" in stdlib
    site = set(start_archive("webnn-site-start").namelist())
    assert not any(n.startswith(("numpy/fft/", "numpy/random/")) for n in site)
    assert not any(n.startswith(("webnn_core/nnef/", "webnn_core/nnef2/", "webnn_core/xla/")) for n in site)
    assert "webnn_core/bridge.pyc" in site
    assert sorted(n.rsplit("/", 1)[-1].split(".")[0] for n in site if n.endswith(".so")) == [
        "_multiarray_tests", "_multiarray_umath", "_umath_linalg"]


@pytest.mark.parametrize("config", [{"snapshot": False}, {"buildSnapshot": True}], ids=["normal-start", "build-snapshot"])
def test_modules_outside_the_start_archives_import_on_demand(browser, server, config):
    context = browser.new_context()
    try:
        result = run_python(context, server, OUTSIDE, config)
    finally:
        context.close()
    assert result.get("pythonError") is None, result
    got, want = json.loads(result["value"]), expected_outside()
    np.testing.assert_allclose(got.pop("fft"), want.pop("fft"), rtol=1e-12)
    assert got == want
    assert result["snapshot"] == ("off" if config.get("snapshot") is False else "built")
    files = [entry.split(" ")[0] for entry in result["onDemand"]]
    assert sorted(files) == sorted(["python_stdlib.zip", next(DIST.glob("numpy-*.whl")).name,
                                    next(DIST.glob("webnn_polyfill-*.whl")).name]), result["onDemand"]


def test_a_module_that_cannot_be_fetched_fails_naming_it(browser, server):
    code = r"""
import json
errors = []
for _ in range(2):
    try:
        import statistics
    except ImportError as e:
        errors.append(str(e))
json.dumps(errors)
"""
    context = browser.new_context()
    try:
        context.route("**/python_stdlib.zip*", lambda route: route.fulfill(status=404, body="gone"))
        result = run_python(context, server, code, {"snapshot": False})
    finally:
        context.close()
    errors = json.loads(result["value"])
    assert len(errors) == 2 and errors[0] == errors[1], errors
    assert "'statistics'" in errors[0] and "python_stdlib.zip" in errors[0] and "404" in errors[0], errors[0]


def test_a_tampered_numpy_wheel_is_refused_naming_the_module(browser, server):
    wheel = next(DIST.glob("numpy-*.whl"))
    data = bytearray(wheel.read_bytes())
    data[len(data) // 2] ^= 1
    context = browser.new_context()
    try:
        context.route(f"**/{wheel.name}*", lambda route: route.fulfill(status=200, body=bytes(data)))
        result = run_python(context, server, "import numpy.fft", {"snapshot": False})
    finally:
        context.close()
    error = result.get("pythonError") or ""
    assert "ImportError" in error and "'numpy.fft'" in error and "failed verification" in error, result


def test_a_first_visit_at_10_mbit_s_does_not_fetch_the_build_snapshot(browser, server):
    """At Lighthouse's desktop setting (10 Mbit/s, 40 ms) the build-time snapshot
    would cost seconds to save about one: a normal start, and the snapshot is not
    requested (the profile makes its own for later visits)."""
    if not list(DIST.glob("webnn-engine-*.snapshot.gz")):
        pytest.skip("no build-time snapshot in dist/")
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(300_000)
        cdp = context.new_cdp_session(page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 40,
                                                      "downloadThroughput": 10e6 / 8, "uploadThroughput": 10e6 / 8})
        requested = []
        page.on("request", lambda r: requested.append(r.url.rsplit("/", 1)[-1]))
        page.goto(f"{server}/test-pages/python.html?config=%7B%7D")
        result = page.evaluate("window.result")
    finally:
        context.close()
    assert "error" not in result, result
    assert result["snapshot"] == "created" and result["choice"]["fetched"] is False, result
    assert result["choice"]["costMs"] > result["choice"]["savesMs"], result["choice"]
    assert not [u for u in requested if ".snapshot" in u], requested
