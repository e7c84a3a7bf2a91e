"""Shared fixtures: a local server (tools/serve.py), headless Debian Chromium
(Playwright: ``browser``, ``page``) and any of the three engines through
wpt_runner.engines (``engine``, ``engine_browser``, ``epage``).

``--browser chromium|firefox|webkit|all`` (or a comma list) picks the engines that
tests taking ``engine`` run in (default chromium); tests marked ``all_engines``
(the cross-engine smoke set) always run in all three."""
import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
MODELS = Path(os.environ.get("WEBNN_MODELS", ROOT.parent / "shared" / "models"))
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from wpt_runner import engines  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--browser", default="chromium", metavar="LIST",
                     help="engines for the engine-parametrised browser tests: chromium, firefox, "
                          "webkit, a comma list, or all (default chromium)")


def selected_engines(config) -> list:
    value = config.getoption("--browser")
    names = list(engines.ENGINES) if value == "all" else [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in engines.ENGINES]
    if bad:
        raise pytest.UsageError(f"--browser: unknown engine(s) {', '.join(bad)} (one of {', '.join(engines.ENGINES)}, all)")
    return names


def pytest_generate_tests(metafunc):
    if "engine" in metafunc.fixturenames:
        names = (list(engines.ENGINES) if metafunc.definition.get_closest_marker("all_engines")
                 else selected_engines(metafunc.config))
        metafunc.parametrize("engine", names, scope="session")


def pytest_configure(config):
    # The core reads the schema generated from the IDL (tools/idl_schema.mjs); make sure it exists.
    import idl_schema

    idl_schema.ensure()


def browser_unavailable() -> str | None:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return f"Chromium not found at {CHROMIUM} (run ./dev setup)"
    if not (ROOT / "dist" / "webnn-polyfill.js").exists():
        return "dist/ is not built (run ./dev build)"
    return None


@pytest.fixture(scope="session")
def server():
    import serve

    mounts = {**serve.default_mounts(), "/test-pages/": ROOT / "tests" / "browser" / "pages"}
    srv = serve.start(mounts=mounts)
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


@pytest.fixture(scope="module")
def fuzz_server():
    """The fuzz page (tests/fuzz/) served with the polyfill: the fuzz smoke test and the
    differential test's browser slice."""
    import serve

    srv = serve.start(mounts={**serve.default_mounts(), "/fuzz/": ROOT / "tests" / "fuzz"})
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


@pytest.fixture(scope="session")
def playwright():
    reason = browser_unavailable()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright):
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    pg = context.new_page()
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def launch_engine(engine, request, **kw):
    """engines.launch(), skipping the test when the engine is missing here; Chromium
    reuses the session's Playwright (one sync Playwright per thread)."""
    if not (ROOT / "dist" / "webnn-polyfill.js").exists():
        pytest.skip("dist/ is not built (run ./dev build)")
    why = engines.unavailable(engine)
    if why:
        pytest.skip(f"{engine}: {why}")
    if engine == "chromium":
        kw["playwright"] = request.getfixturevalue("playwright")
    return engines.launch(engine, **kw)


def page_result(browser, url: str, expression: str = "window.result", timeout: float = 180):
    """Open `url` in a new tab of an engines browser, evaluate `expression`, close the tab."""
    page = browser.new_page()
    try:
        page.goto(url)
        return page.evaluate(expression, timeout=timeout)
    finally:
        page.close()


@pytest.fixture(scope="session")
def engine_browser(engine, request):
    """One browser (one profile) per engine for the whole session."""
    b = launch_engine(engine, request)
    yield b
    b.close()


@pytest.fixture
def epage(engine_browser):
    """A fresh page (tab) of ``engine_browser``; ``epage.errors`` collects uncaught errors where the
    engine's driver reports them (Chromium, Firefox; WebKit's WebDriver has no such event)."""
    pg = engine_browser.new_page()
    yield pg
    pg.close()
