"""Driving the browsers: Chromium with asyncio Playwright (run_all), Firefox and
WebKit through wpt_runner.engines in threads (run_all_sync).

Each job owns one browser with one profile that starts empty and lives for the
whole run (so the HTTP cache, and with it the polyfill's large runtime files and
its start-up snapshot, are shared by the pages of that job: the first page starts
cold, later ones warm, as under wptrunner) and loads one fresh page per test run.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
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
# --webgpu: WebGPU on in headless Chromium, on SwiftShader's CPU-emulated adapter
# (works on http://127.0.0.1 pages; no shader-f16).
WEBGPU_ARGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"]
POLL_S = 0.1
GRACE_S = 5.0          # after the deadline: time for testharness's timeout() to report
# --standard-timeouts: testharness.js's own harness timeouts (its settings'
# harness_timeout: normal 10 s, long 60 s) end the page; the runner waits that
# long plus STANDARD_EXTRA_S for loading and reporting, as wptrunner adds its own.
STANDARD_TIMEOUTS = {"normal": 10.0, "long": 60.0}
STANDARD_EXTRA_S = 15.0


def page_limit(run, base_timeout: float, standard: bool) -> float:
    """Seconds the runner gives one page."""
    if standard:
        return STANDARD_TIMEOUTS["long" if run.long else "normal"] + STANDARD_EXTRA_S
    return run.timeout(base_timeout)
MAX_ERRORS = 50
MAX_ERROR_LEN = 2000

# Returns the subtests finished since the last poll, and whether the page is
# complete.  Polling in small increments keeps the subtests that did finish
# even when the page later hangs for good.
_POLL = """(seen) => {
  const s = self.__wptRunner;
  if (!s) return null;
  return {complete: s.complete, fresh: s.results.slice(seen)};
}"""
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



def _outcome(state, forced, problem, limit, hung, seen):
    """(status, message, subtests) of a page that did not crash, from its harness state."""
    if state and state.get("complete"):
        status = state.get("status") or "ERROR"
        if forced and status == "OK":
            status = "TIMEOUT"
        return status, state.get("message"), list(state.get("tests") or [])
    # Never completed: a file-level TIMEOUT (or ERROR if loading failed),
    # keeping the subtests that did finish.
    message = problem or (f"the page did not complete within {limit:g}s"
                          + (" (it stopped responding)" if hung else ""))
    return ("ERROR" if problem else "TIMEOUT"), message, list(seen)

async def _guard(coro, seconds: float):
    """Await ``coro`` for at most ``seconds``; return (ok, value or exception).

    Playwright's own timeouts are not enough: with a renderer stuck in a
    busy loop some calls never return.
    """
    try:
        return True, await asyncio.wait_for(coro, max(0.05, seconds))
    except Exception as e:  # timeouts, closed targets, crashes
        return False, e


def _is_timeout(e) -> bool:
    return isinstance(e, (asyncio.TimeoutError, TimeoutError)) or type(e).__name__ == "TimeoutError"


def _short(e) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"


class _Hung(Exception):
    pass


async def _wait_complete(page, deadline: float, seen: list) -> bool:
    """Poll the page until testharness completes (True) or ``deadline`` (False).

    Subtests reported meanwhile are appended to ``seen``.  Raises _Hung when
    the page stops answering, or the Playwright error when it went away.
    """
    transient = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ok, st = await _guard(page.evaluate(_POLL, len(seen)), left)
        if not ok:
            if _is_timeout(st):
                raise _Hung()
            # e.g. "Execution context was destroyed" right after the commit
            transient += 1
            if transient > 20 or "closed" in str(st) or "crash" in str(st).lower():
                raise st
        elif st:
            seen.extend(st["fresh"])
            if st["complete"]:
                return True
        await asyncio.sleep(POLL_S)


async def run_one(context, run, base_url: str, base_timeout: float, standard: bool = False):
    """Load one test page and collect its results.

    Returns (FileResult, healthy); healthy is False when the page could not be
    cleaned up and the context should be replaced.
    """
    limit = page_limit(run, base_timeout, standard)
    errors, crashed, seen = [], [], []

    def add_error(text):
        if len(errors) < MAX_ERRORS:
            errors.append(text[:MAX_ERROR_LEN])

    t0 = time.monotonic()
    deadline = t0 + limit
    page = await context.new_page()
    page.on("console", lambda m: m.type == "error" and add_error(f"console: {m.text}"))
    page.on("pageerror", lambda e: add_error(f"uncaught: {e}"))
    page.on("crash", lambda *_: crashed.append(True))

    completed = hung = forced = False
    problem = None
    try:
        ok, e = await _guard(page.goto(base_url + run.url, wait_until="commit",
                                       timeout=limit * 1000), limit)
        if not ok:
            raise e
        completed = await _wait_complete(page, deadline, seen)
        if not completed:
            # Ask testharness.js to time out what is left and report.
            ok, called = await _guard(page.evaluate(_FORCE_TIMEOUT), GRACE_S)
            if not ok and _is_timeout(called):
                raise _Hung()
            if ok and called is True:
                forced = True
                completed = await _wait_complete(page, time.monotonic() + GRACE_S, seen)
    except _Hung:
        hung = True
    except Exception as e:
        if not _is_timeout(e):
            problem = _short(e)

    state = None
    if completed and not crashed:
        ok, value = await _guard(page.evaluate(_STATE), GRACE_S)
        state = value if ok else None
    duration = time.monotonic() - t0

    if crashed:
        status, message, subtests = "CRASH", "the page crashed", list(seen)
    else:
        status, message, subtests = _outcome(state, forced, problem, limit, hung, seen)
    backend = state.get("backend") if state else None

    healthy = True
    if run.scope == "serviceworker" and not hung and not crashed:
        ok, _ = await _guard(page.evaluate(_UNREGISTER_SW), GRACE_S)
        healthy = ok
    # Closing also ends a renderer stuck in a loop; the context (and its HTTP
    # cache) is replaced only when that fails.
    ok, _ = await _guard(page.close(), 10.0)
    healthy = healthy and ok
    return FileResult(run, status, message, subtests, errors, duration, backend), healthy


async def run_all(runs, base_url: str, *, jobs: int, timeout: float,
                  chromium: str | None = None, on_result=None, standard: bool = False,
                  info: dict | None = None, webgpu: bool = False) -> list:
    """Run all ``runs``; results come back in the order of ``runs``.
    ``webgpu``: launch Chromium with WEBGPU_ARGS.

    Each job is its own Chromium with a persistent (temporary) profile: only
    an on-disk HTTP cache keeps the polyfill's ~10 MB wasm (and V8's compiled
    code for it) across pages; an in-memory one drops entries that large.
    """
    from playwright.async_api import async_playwright

    if not runs:
        return []
    queue = asyncio.Queue()
    for i, r in enumerate(runs):
        queue.put_nowait((i, r))
    results = [None] * len(runs)

    async with async_playwright() as pw:
        async def new_context(profile):
            ctx = await pw.chromium.launch_persistent_context(
                profile, executable_path=chromium or chromium_path(),
                args=LAUNCH_ARGS + (WEBGPU_ARGS if webgpu else []),
                headless=True)
            if info is not None and ctx.browser:
                info.setdefault("browser", f"chromium {ctx.browser.version}")
            for p in ctx.pages:  # the initial blank tab
                await _guard(p.close(), 5.0)
            return ctx

        async def job(n):
            with tempfile.TemporaryDirectory(prefix=f"wpt_runner-{n}-") as profile:
                context = await new_context(profile)
                try:
                    while True:
                        try:
                            i, run = queue.get_nowait()
                        except asyncio.QueueEmpty:
                            return
                        try:
                            res, healthy = await run_one(context, run, base_url, timeout, standard)
                        except Exception as e:  # never drop a run
                            res = FileResult(run, "ERROR", f"runner error: {e!r}")
                            healthy = False
                        results[i] = res
                        if on_result:
                            on_result(res)
                        if not healthy:
                            await _guard(context.close(), 20.0)
                            context = await new_context(profile)
                finally:
                    await _guard(context.close(), 20.0)

        await asyncio.gather(*(job(n) for n in range(max(1, min(jobs, len(runs))))))
    return results


# ------------------------------------------------------------------ other engines
# Firefox and WebKit go through wpt_runner.engines' blocking interface: one
# thread per job, each with its own browser and profile.  The logic mirrors
# run_one() above.
def _call(js: str, *args) -> str:
    return f"({js})({', '.join(map(str, args))})"


def _wait_complete_sync(page, deadline: float, seen: list) -> bool:
    from .engines import EvaluationError

    transient = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            st = page.evaluate(_call(_POLL, len(seen)), timeout=max(0.5, left))
        except EvaluationError:
            # e.g. the document was replaced right after navigation
            transient += 1
            if transient > 20:
                raise
            st = None
        if st:
            seen.extend(st["fresh"])
            if st["complete"]:
                return True
        time.sleep(POLL_S)


def run_one_sync(page, run, base_url: str, base_timeout: float, standard: bool = False):
    """run_one() for an engines.Page; returns (FileResult, healthy)."""
    from .engines import EngineError, Timeout

    limit = page_limit(run, base_timeout, standard)
    seen = []
    t0 = time.monotonic()
    deadline = t0 + limit
    completed = hung = forced = False
    problem = None
    try:
        page.goto(base_url + run.url, timeout=limit)
        completed = _wait_complete_sync(page, deadline, seen)
        if not completed:
            called = page.evaluate(_call(_FORCE_TIMEOUT), timeout=GRACE_S)
            if called is True:
                forced = True
                completed = _wait_complete_sync(page, time.monotonic() + GRACE_S, seen)
    except Timeout:
        hung = True
    except EngineError as e:
        problem = _short(e)

    state = None
    if completed:
        try:
            state = page.evaluate(_call(_STATE), timeout=GRACE_S)
        except EngineError:
            state = None
    duration = time.monotonic() - t0
    errors = [e[:MAX_ERROR_LEN] for e in page.errors[:MAX_ERRORS]]

    status, message, subtests = _outcome(state, forced, problem, limit, hung, seen)
    backend = state.get("backend") if state else None

    healthy = not hung
    if run.scope == "serviceworker" and healthy:
        try:
            page.evaluate(_call(_UNREGISTER_SW), timeout=GRACE_S)
        except EngineError:
            healthy = False
    try:
        page.close()
    except EngineError:
        healthy = False
    return FileResult(run, status, message, subtests, errors, duration, backend), healthy


def run_all_sync(runs, base_url: str, *, engine: str, jobs: int, timeout: float,
                 on_result=None, info: dict | None = None, standard: bool = False) -> list:
    """run_all() for an engine of wpt_runner.engines; ``info`` gets the browser version."""
    import queue
    import threading

    from . import engines

    if not runs:
        return []
    todo = queue.Queue()
    for i, r in enumerate(runs):
        todo.put((i, r))
    results = [None] * len(runs)
    report_lock = threading.Lock()
    failures = []

    def job(n):
        with tempfile.TemporaryDirectory(prefix=f"wpt_runner-{engine}-{n}-") as profile:
            browser = None
            try:
                while True:
                    try:
                        i, run = todo.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        if browser is None:
                            browser = engines.launch(engine, profile=profile)
                            if info is not None:
                                info.setdefault("browser", f"{engine} {browser.version}")
                        res, healthy = run_one_sync(browser.new_page(), run, base_url, timeout, standard)
                    except Exception as e:  # never drop a run
                        res = FileResult(run, "ERROR", f"runner error: {e!r}")
                        healthy = False
                    results[i] = res
                    with report_lock:
                        if on_result:
                            on_result(res)
                    if not healthy and browser is not None:
                        try:
                            browser.close()
                        except Exception as e:
                            failures.append(repr(e))
                        browser = None
            finally:
                if browser is not None:
                    browser.close()

    threads = [threading.Thread(target=job, args=(n,), daemon=True)
               for n in range(max(1, min(jobs, len(runs))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results
