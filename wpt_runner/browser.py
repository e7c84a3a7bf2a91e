"""Driving headless Chromium with asyncio Playwright.

One browser; each job owns one browser context (so the HTTP cache, and with
it the polyfill's large runtime files, is shared by the pages of that job)
and loads one fresh page per test run.
"""

from __future__ import annotations

import asyncio
import os
import time

from .results import FileResult

DEFAULT_CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
POLL_MS = 100
GRACE_S = 5.0          # after the deadline: time for testharness's timeout() to report
MAX_ERRORS = 50
MAX_ERROR_LEN = 2000

_COMPLETE = "() => !!(self.__wptRunner && self.__wptRunner.complete)"
_STATE = "() => self.__wptRunner || null"
_FORCE_TIMEOUT = """() => {
  if (!self.__wptRunner || typeof timeout !== 'function') return false;
  timeout();
  return true;
}"""
_UNREGISTER_SW = """async () => {
  if (!navigator.serviceWorker) return 0;
  const regs = await navigator.serviceWorker.getRegistrations();
  await Promise.all(regs.map(r => r.unregister()));
  return regs.length;
}"""


def chromium_path() -> str:
    return os.environ.get("CHROMIUM", DEFAULT_CHROMIUM)


async def _guard(coro, seconds: float):
    """Await ``coro`` for at most ``seconds``; return (ok, value)."""
    try:
        return True, await asyncio.wait_for(coro, seconds)
    except Exception as e:  # timeouts, closed targets, crashes
        return False, e


async def run_one(context, run, base_url: str, base_timeout: float):
    """Load one test page and collect its results.

    Returns (FileResult, healthy); healthy is False when the page could not be
    cleaned up and the context should be replaced.
    """
    from playwright.async_api import TimeoutError as PWTimeout

    limit = run.timeout(base_timeout)
    errors = []
    crashed = []

    def add_error(text):
        if len(errors) < MAX_ERRORS:
            errors.append(text[:MAX_ERROR_LEN])

    t0 = time.monotonic()
    page = await context.new_page()
    page.on("console", lambda m: m.type == "error" and add_error(f"console: {m.text}"))
    page.on("pageerror", lambda e: add_error(f"uncaught: {e}"))
    page.on("crash", lambda *_: crashed.append(True))

    completed = False
    problem = None
    try:
        await page.goto(base_url + run.url, wait_until="commit", timeout=limit * 1000)
        left = max(0.1, limit - (time.monotonic() - t0))
        await page.wait_for_function(_COMPLETE, polling=POLL_MS, timeout=left * 1000)
        completed = True
    except PWTimeout:
        pass
    except Exception as e:
        problem = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"

    forced = False
    if not completed and not crashed:
        # Ask testharness.js to time out the remaining subtests and report.
        ok, called = await _guard(page.evaluate(_FORCE_TIMEOUT), GRACE_S)
        if ok and called is True:
            forced = True
            try:
                await page.wait_for_function(_COMPLETE, polling=POLL_MS, timeout=GRACE_S * 1000)
                completed = True
            except Exception:
                pass

    state = None
    if not crashed:
        ok, value = await _guard(page.evaluate(_STATE), GRACE_S)
        state = value if ok else None
    duration = time.monotonic() - t0

    if crashed:
        status, message = "CRASH", "the page crashed"
        subtests = []
    elif state and state.get("complete"):
        status, message = state.get("status") or "ERROR", state.get("message")
        subtests = list(state.get("tests") or [])
    else:
        # Never completed: a file-level TIMEOUT (or ERROR if loading failed),
        # keeping whichever subtests did finish.
        status = "ERROR" if problem else "TIMEOUT"
        message = problem or f"the page did not complete within {limit:g}s"
        subtests = list((state or {}).get("results") or [])
    if completed and forced and status == "OK":
        status = "TIMEOUT"

    healthy = True
    if run.scope == "serviceworker" and not crashed:
        ok, _ = await _guard(page.evaluate(_UNREGISTER_SW), GRACE_S)
        healthy = healthy and ok
    ok, _ = await _guard(page.close(), 10.0)
    healthy = healthy and ok and not crashed
    return FileResult(run, status, message, subtests, errors, duration), healthy


async def run_all(runs, base_url: str, *, jobs: int, timeout: float,
                  chromium: str | None = None, on_result=None) -> list:
    """Run all ``runs``; results come back in the order of ``runs``."""
    from playwright.async_api import async_playwright

    if not runs:
        return []
    queue = asyncio.Queue()
    for i, r in enumerate(runs):
        queue.put_nowait((i, r))
    results = [None] * len(runs)

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=chromium or chromium_path(), args=LAUNCH_ARGS, headless=True)

        async def job():
            context = await browser.new_context()
            try:
                while True:
                    try:
                        i, run = queue.get_nowait()
                    except asyncio.QueueEmpty:
                        return
                    try:
                        res, healthy = await run_one(context, run, base_url, timeout)
                    except Exception as e:  # never drop a run
                        res = FileResult(run, "ERROR", f"runner error: {e!r}")
                        healthy = False
                    results[i] = res
                    if on_result:
                        on_result(res)
                    if not healthy:
                        await _guard(context.close(), 10.0)
                        context = await browser.new_context()
            finally:
                await _guard(context.close(), 10.0)

        try:
            await asyncio.gather(*(job() for _ in range(max(1, min(jobs, len(runs))))))
        finally:
            await _guard(browser.close(), 20.0)
    return results
