"""Shared fixtures: a local server (tools/serve.py) and headless Debian Chromium."""
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
