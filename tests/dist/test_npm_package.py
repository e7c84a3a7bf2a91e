"""The npm package: `npm pack` of dist/, installed into a fresh directory, used
from node_modules/webnn-polyfill/ by a page with a script tag, by a page with an
ES-module import, and through an esbuild bundle (examples/bundler/), each in
headless Chromium."""
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
EXAMPLE = ROOT / "examples" / "bundler"

pytestmark = pytest.mark.skipif(not (DIST / "package.json").exists() or not shutil.which("npm"),
                                reason="dist/ is not built or npm is missing (run ./dev build)")

# relu(x + 1) of the bundler example and x*2 - 1 of the pages below, computed by hand.
X = [-3.0, -1.0, 0.0, 2.0]
RELU_X_PLUS_1 = [0.0, 0.0, 1.0, 3.0]
TWICE_MINUS_1 = [-7.0, -3.0, -1.0, 3.0]

PAGE_CODE = """
async function run(ml, namespace) {
  const context = await ml.createContext();
  const b = new MLGraphBuilder(context);
  const x = b.input('x', { dataType: 'float32', shape: [4] });
  const two = b.constant({ dataType: 'float32', shape: [] }, new Float32Array([2]));
  const one = b.constant({ dataType: 'float32', shape: [] }, new Float32Array([1]));
  const graph = await b.build({ y: b.sub(b.mul(x, two), one) });
  const [tx, ty] = await Promise.all([
    context.createTensor({ dataType: 'float32', shape: [4], writable: true }),
    context.createTensor({ dataType: 'float32', shape: [4], readable: true })]);
  context.writeTensor(tx, new Float32Array(%s));
  context.dispatch(graph, { x: tx }, { y: ty });
  return { y: Array.from(new Float32Array(await context.readTensor(ty))), version: namespace.version,
           runtimeBase: namespace.runtimeBase, same: ml === navigator.ml };
}
""" % json.dumps(X)

SCRIPT_PAGE = f"""<!doctype html><meta charset=utf-8>
<script src="node_modules/webnn-polyfill/webnn-polyfill.js"></script>
<script>{PAGE_CODE}
window.result = run(navigator.ml, webnnPolyfill).catch((e) => ({{ error: `${{e.name}}: ${{e.message}}` }}));
</script>"""

# The bare specifier resolves through an import map to the package's "import"
# export (what a bundler or a CDN's import map would do).
MODULE_PAGE = f"""<!doctype html><meta charset=utf-8>
<script type="importmap">{{"imports": {{"webnn-polyfill": "./node_modules/webnn-polyfill/webnn-polyfill.mjs"}}}}</script>
<script type="module">
import webnnPolyfill, {{ ml }} from 'webnn-polyfill';
{PAGE_CODE}
window.result = run(ml, webnnPolyfill).catch((e) => ({{ error: `${{e.name}}: ${{e.message}}` }}));
</script>"""


def npm(*args, cwd):
    return subprocess.run(["npm", *args, "--no-audit", "--no-fund", "--loglevel=error"], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    """(tarball, npm pack's JSON report)."""
    out = tmp_path_factory.mktemp("pack")
    report = json.loads(npm("pack", str(DIST), "--json", "--pack-destination", str(out), cwd=out))[0]
    return out / report["filename"], report


@pytest.fixture(scope="module")
def app(packed, tmp_path_factory):
    """A fresh project with the tarball installed (offline) and the bundler example built."""
    tarball, _ = packed
    app = tmp_path_factory.mktemp("app")
    (app / "package.json").write_text('{"name": "fresh-app", "private": true}\n')
    npm("install", "--offline", "--ignore-scripts", str(tarball), cwd=app)
    (app / "script.html").write_text(SCRIPT_PAGE)
    (app / "module.html").write_text(MODULE_PAGE)
    # The example's own devDependency, esbuild, is this checkout's (npm ci): no network in tests.
    for name in ("esbuild", "@esbuild"):
        os.symlink(ROOT / "node_modules" / name, app / "node_modules" / name)
    bundler = app / "bundler"
    bundler.mkdir()
    for name in ("main.js", "index.html", "build.mjs"):
        shutil.copy(EXAMPLE / name, bundler / name)
    subprocess.run(["node", "build.mjs"], cwd=bundler, check=True, capture_output=True, text=True)
    return app


@pytest.fixture(scope="module")
def app_server(app):
    import serve

    srv = serve.start(mounts={"/": app})
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def version():
    return json.loads((DIST / "package.json").read_text())["version"]


def test_package_json_fields_and_shared_version(packed):
    _, report = packed
    meta = json.loads((DIST / "package.json").read_text())
    import webnn_core
    assert report["name"] == meta["name"] == "webnn-polyfill"
    assert report["version"] == meta["version"] == webnn_core.__version__
    assert meta["main"] == "./webnn-polyfill.js" and meta["module"] == "./webnn-polyfill.mjs"
    assert meta["exports"]["."]["import"] == "./webnn-polyfill.mjs"
    assert meta["exports"]["."]["default"] == "./webnn-polyfill.js"
    assert meta["exports"]["./runtime/*"] == "./*"
    assert meta["sideEffects"] == ["./webnn-polyfill.js", "./webnn-polyfill.mjs"]
    packed_files = {f["path"] for f in report["files"]}
    wheel = f"webnn_polyfill-{webnn_core.__version__}-py3-none-any.whl"
    for needed in ["package.json", "README.md", "webnn-polyfill.js", "webnn-polyfill.mjs", "pyodide.js",
                   "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json", wheel]:
        assert needed in packed_files, needed
    assert set(meta["webnnPolyfill"]["runtime"]) <= packed_files
    assert wheel in meta["webnnPolyfill"]["runtime"] and "webnn-polyfill.js" not in meta["webnnPolyfill"]["runtime"]


def test_tarball_is_what_npm_installs(packed, app):
    tarball, _ = packed
    with tarfile.open(tarball) as tar:
        names = sorted(n.removeprefix("package/") for n in tar.getnames())
    installed = sorted(p.relative_to(app / "node_modules" / "webnn-polyfill").as_posix()
                       for p in (app / "node_modules" / "webnn-polyfill").rglob("*") if p.is_file())
    assert names == installed


def test_node_resolves_the_exports(app):
    code = ("const r = (s) => require.resolve(s).split('node_modules/')[1];"
            "console.log(JSON.stringify([r('webnn-polyfill'), r('webnn-polyfill/script'),"
            " r('webnn-polyfill/runtime/pyodide.asm.wasm')]));")
    out = subprocess.run(["node", "-e", code], cwd=app, check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == ["webnn-polyfill/webnn-polyfill.js", "webnn-polyfill/webnn-polyfill.js",
                               "webnn-polyfill/pyodide.asm.wasm"]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize("page_name", ["script.html", "module.html"])
def test_page_uses_the_installed_package(page, app_server, page_name):
    page.goto(f"{app_server}/{page_name}")
    result = page.evaluate("window.result")
    assert result == {"y": TWICE_MINUS_1, "version": version(), "same": True,
                      "runtimeBase": f"{app_server}/node_modules/webnn-polyfill/"}
    assert page.errors == []


@pytest.mark.browser
@pytest.mark.slow
def test_esbuild_bundle_finds_the_runtime_files(page, app, app_server):
    bundle = (app / "bundler" / "out" / "app.js").read_text()
    assert "node_modules/webnn-polyfill" in bundle  # esbuild inlined the package's module
    page.goto(f"{app_server}/bundler/index.html")
    result = page.evaluate("window.result")
    assert result == {"y": RELU_X_PLUS_1, "version": version(), "runtimeBase": f"{app_server}/bundler/out/"}
    assert page.locator("#out").text_content().startswith("relu(x + 1) = [0,0,1,3]")
