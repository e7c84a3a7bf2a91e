"""A normal start (no snapshot) loads the Python it imports from the first-visit archives'
bytecode, not from source (issue 34: tools/start_archives.py, tools/compile_pyc.mjs), and an
error raised inside the core still reaches the page as the spec's typed error with no Python
text, though the bytecode has no source lines to show."""
import json
import re
import urllib.parse

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Where a start's modules come from: the stdlib start archive (zipimport) and site-packages.
LOADED = r"""
import json, sys
out = {}
for name, module in list(sys.modules.items()):
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) or ""
    if origin.startswith(("/lib/python312.zip/", "/lib/python3.12/site-packages/")):
        out[name] = [origin, type(spec.loader).__name__, getattr(module, "__cached__", None)]
json.dumps(out)
"""

# The matmul of ED "MLGraphBuilder/matmul()": sizeA[rankA - 1] != sizeB[rankB - 2] throws a
# TypeError; the core checks it (no op semantics in JS), its message names the label.
TYPED_ERROR = """async () => {
  const context = await navigator.ml.createContext({ deviceType: 'cpu' });
  const builder = new MLGraphBuilder(context);
  const a = builder.input('a', { dataType: 'float32', shape: [2, 3] });
  const b = builder.input('b', { dataType: 'float32', shape: [4, 5] });
  try {
    builder.matmul(a, b, { label: 'mm-label' });
    return { thrown: false };
  } catch (e) {
    return { thrown: true, name: e.name, message: String(e.message) };
  }
}"""
PYTHON_TEXT = re.compile(r"Traceback|File \"|\.pyc?\b|webnn_core|<frozen|line \d+, in")


def test_a_normal_start_loads_its_modules_from_bytecode(browser, server):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(300_000)
        query = urllib.parse.urlencode({"config": json.dumps({"buildSnapshot": False}), "code": LOADED})
        page.goto(f"{server}/test-pages/python.html?{query}")
        result = page.evaluate("window.result")
        assert "error" not in result and result.get("pythonError") is None, result
        assert result["snapshot"] != "restored", result  # a normal start: nothing restored
        error = page.evaluate(TYPED_ERROR)
    finally:
        context.close()
    loaded = json.loads(result["value"])
    numpy = {n: v for n, v in loaded.items() if n == "numpy" or n.startswith("numpy.")}
    core = {n: v for n, v in loaded.items() if n == "webnn_core" or n.startswith("webnn_core.")}
    stdlib = {n: v for n, v in loaded.items() if v[0].startswith("/lib/python312.zip/")}
    assert len(numpy) > 30 and len(core) > 30 and len(stdlib) > 50, (len(numpy), len(core), len(stdlib))
    for name in ("numpy", "numpy._core.numeric", "webnn_core", "webnn_core.bridge", "webnn_core.ops"):
        origin, loader, cached = loaded[name]
        assert origin.endswith(".pyc") and cached == origin and loader == "SourcelessFileLoader", (name, loaded[name])
    assert loaded["json.decoder"][0] == "/lib/python312.zip/json/decoder.pyc"
    assert loaded["json.decoder"][1] == "zipimporter"
    # Every module a start imported from the archives: bytecode, none compiled from source
    # (an extension module is its .so).
    from_source = sorted(n for n, (origin, _, _) in loaded.items() if not origin.endswith((".pyc", ".so")))
    assert from_source == []
    assert error["thrown"] and error["name"] == "TypeError", error
    assert "mm-label" in error["message"] and not PYTHON_TEXT.search(error["message"]), error
