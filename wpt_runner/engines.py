"""One small synchronous interface over the three browser engines.

    browser = engines.launch("firefox", profile=tmpdir)
    page = browser.new_page()
    page.goto("http://127.0.0.1:8000/x.html")
    value = page.evaluate("window.result")   # an expression; promises are awaited
    page.close(); browser.close()

The working set, all from Debian packages, npm and PyPI (see README "Browsers"):

* ``chromium``: Debian's ``chromium`` through Python Playwright (``executable_path``).
* ``firefox``: Debian's ``firefox-esr`` through npm ``puppeteer-core`` over WebDriver
  BiDi (headless).  Playwright's Firefox needs its own patched build, and Selenium
  needs geckodriver, which no registry here ships; Puppeteer speaks BiDi to the
  stock ESR.  Puppeteer runs in Node (``drivers/puppeteer-bridge.cjs``), driven over
  stdin/stdout with one JSON object per line.
* ``webkit``: WebKitGTK's ``MiniBrowser --automation`` through PyPI ``selenium``
  and ``WebKitWebDriver`` (Debian ``webkit2gtk-driver``).  WebKitGTK has no headless
  mode, so each browser gets its own ``Xvfb`` display (Debian ``xvfb``) unless
  ``$DISPLAY`` is already set (e.g. under ``xvfb-run``).

Methods are blocking and thread-safe per browser; several browsers may run in
parallel threads.  ``python -m wpt_runner.engines setup`` installs the npm part;
``python -m wpt_runner.engines check`` prints what is usable.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = ("chromium", "firefox", "webkit")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
FIREFOX = "/usr/bin/firefox-esr"
WEBKIT_DRIVER = "/usr/bin/WebKitWebDriver"
WEBKIT_BROWSER_DIRS = ("/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1", "/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1",
                       "/usr/libexec/webkit2gtk-4.1", "/usr/lib/webkit2gtk-4.1")
XVFB = "Xvfb"

# npm part of the working set, installed into .cache/node-drivers by `setup`
# (its own folder: tools/bench.py owns .cache/node's package.json).
PUPPETEER_VERSION = "24.43.1"   # the newest line that still runs on Debian's Node 18/20
NODE_DRIVERS = os.path.join(PROJECT_ROOT, ".cache", "node-drivers")
BRIDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "drivers", "puppeteer-bridge.cjs")


class EngineError(RuntimeError):
    """A driver-level failure (browser gone, page closed, command timed out)."""


class EvaluationError(EngineError):
    """The page's script threw; ``str()`` is the page's error message."""


class Timeout(EngineError):
    pass


# ------------------------------------------------------------------ discovery
def chromium_path() -> str:
    return os.environ.get("CHROMIUM", CHROMIUM)


def firefox_path() -> str:
    return os.environ.get("FIREFOX", FIREFOX)


def webkit_browser_path() -> str | None:
    if os.environ.get("WEBKIT_BROWSER"):
        return os.environ["WEBKIT_BROWSER"]
    for d in WEBKIT_BROWSER_DIRS:
        if os.path.isfile(os.path.join(d, "MiniBrowser")):
            return os.path.join(d, "MiniBrowser")
    return None


def _executable(path) -> bool:
    return bool(path) and os.path.isfile(path) and os.access(path, os.X_OK)


def _puppeteer_installed() -> bool:
    meta = os.path.join(NODE_DRIVERS, "node_modules", "puppeteer-core", "package.json")
    try:
        with open(meta, encoding="utf-8") as f:
            return json.load(f).get("version") == PUPPETEER_VERSION
    except (OSError, ValueError):
        return False


def unavailable(engine: str) -> str | None:
    """Why ``engine`` cannot be launched here (None when it can)."""
    if engine == "chromium":
        if not _executable(chromium_path()):
            return f"Chromium not found at {chromium_path()} (./dev setup installs Debian's chromium)"
        try:
            import playwright  # noqa: F401
        except ImportError:
            return "the playwright Python package is not installed (./dev setup)"
        return None
    if engine == "firefox":
        if not _executable(firefox_path()):
            return f"Firefox ESR not found at {firefox_path()} (./dev setup installs Debian's firefox-esr)"
        if not shutil.which("node"):
            return "node not found (Firefox is driven by npm puppeteer-core)"
        if not _puppeteer_installed():
            return (f"puppeteer-core {PUPPETEER_VERSION} is not installed in {NODE_DRIVERS} "
                    "(./dev setup)")
        return None
    if engine == "webkit":
        if not _executable(webkit_browser_path()):
            return "WebKitGTK MiniBrowser not found (./dev setup installs Debian's webkit2gtk-driver)"
        if not _executable(WEBKIT_DRIVER):
            return f"{WEBKIT_DRIVER} not found (./dev setup installs Debian's webkit2gtk-driver)"
        if not os.environ.get("DISPLAY") and not shutil.which(XVFB):
            return "no $DISPLAY and no Xvfb (./dev setup installs Debian's xvfb)"
        try:
            import selenium  # noqa: F401
        except ImportError:
            return "the selenium Python package is not installed (./dev setup)"
        return None
    return f"unknown engine {engine!r} (one of {', '.join(ENGINES)})"


def install_drivers(log=print) -> str | None:
    """Install puppeteer-core into .cache/node-drivers if needed; None when ready, else why not."""
    if _puppeteer_installed():
        return None
    npm = shutil.which("npm")
    if not npm:
        return "npm not found (puppeteer-core could not be installed)"
    os.makedirs(NODE_DRIVERS, exist_ok=True)
    with open(os.path.join(NODE_DRIVERS, "package.json"), "w", encoding="utf-8") as f:
        json.dump({"name": "webnn-polyfill-drivers", "private": True,
                   "description": "browser drivers for wpt_runner/engines.py (not committed)",
                   "dependencies": {"puppeteer-core": PUPPETEER_VERSION}}, f, indent=2)
        f.write("\n")
    log(f"installing puppeteer-core {PUPPETEER_VERSION} into {os.path.relpath(NODE_DRIVERS, PROJECT_ROOT)} (npm)")
    proc = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--loglevel=error"], cwd=NODE_DRIVERS,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or not _puppeteer_installed():
        return f"npm install failed: {(proc.stderr or proc.stdout).strip()[-500:]}"
    return None


def launch(engine: str, *, profile: str | None = None, args=(), playwright=None) -> "Browser":
    """Start ``engine`` with the profile directory ``profile`` (a fresh temporary one
    when None, removed on close).  ``args``: extra Chromium command-line switches;
    ``playwright``: a running sync Playwright to use for Chromium (a thread can run only one)."""
    why = unavailable(engine)
    if why:
        raise EngineError(why)
    if engine == "chromium":
        return ChromiumBrowser(profile, list(args), playwright)
    cls = {"firefox": FirefoxBrowser, "webkit": WebKitBrowser}[engine]
    return cls(profile, list(args))


def _async_wrap(expression: str) -> str:
    return f"(async () => ({expression}))()"


# ------------------------------------------------------------------ base classes
class Browser:
    name = ""
    version = ""

    def __init__(self, profile):
        self._tmp = None
        if profile is None:
            self._tmp = tempfile.TemporaryDirectory(prefix=f"engine-{self.name}-")
            profile = self._tmp.name
        self.profile = profile

    def new_page(self) -> "Page":
        raise NotImplementedError

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    def __init__(self):
        self.errors: list[str] = []   # uncaught exceptions and console errors, where the driver reports them

    def goto(self, url: str, timeout: float = 60.0) -> None:
        raise NotImplementedError

    def evaluate(self, expression: str, timeout: float = 60.0):
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


# ------------------------------------------------------------------ Chromium: Playwright
class ChromiumBrowser(Browser):
    """Playwright's sync API: use it from the thread that launched it."""
    name = "chromium"

    def __init__(self, profile, args, playwright=None):
        super().__init__(profile)
        from playwright.sync_api import sync_playwright

        self._own_pw = playwright is None
        self._pw = sync_playwright().start() if self._own_pw else playwright
        try:
            self._ctx = self._pw.chromium.launch_persistent_context(
                self.profile, executable_path=chromium_path(), args=CHROMIUM_ARGS + args, headless=True)
        except Exception:
            if self._own_pw:
                self._pw.stop()
            raise
        self.version = self._ctx.browser.version if self._ctx.browser else ""
        self._blank = list(self._ctx.pages)

    def new_page(self):
        page = ChromiumPage(self._ctx.new_page())
        for p in self._blank:   # the initial tab, once a page of ours keeps the browser open
            p.close()
        self._blank = []
        return page

    def close(self):
        try:
            self._ctx.close()
        finally:
            if self._own_pw:
                self._pw.stop()
            super().close()


class ChromiumPage(Page):
    def __init__(self, page):
        super().__init__()
        self._page = page
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))
        page.on("console", lambda m: m.type == "error" and self.errors.append(f"console: {m.text}"))

    def goto(self, url, timeout=60.0):
        self._page.goto(url, wait_until="domcontentloaded", timeout=timeout * 1000)

    def evaluate(self, expression, timeout=60.0):
        from playwright.sync_api import Error, TimeoutError as PWTimeout

        self._page.set_default_timeout(timeout * 1000)
        try:
            return self._page.evaluate(_async_wrap(expression))
        except PWTimeout as e:
            raise Timeout(str(e)) from None
        except Error as e:
            text = str(e).splitlines()[0]
            raise EvaluationError(text.removeprefix("Page.evaluate: ")) from None

    def close(self):
        self._page.close()


# ------------------------------------------------------------------ Firefox: puppeteer-core in Node
class FirefoxBrowser(Browser):
    name = "firefox"

    def __init__(self, profile, args):
        super().__init__(profile)
        env = dict(os.environ, WEBNN_NODE_DRIVERS=NODE_DRIVERS)
        self._proc = subprocess.Popen(["node", BRIDGE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, encoding="utf-8", env=env,
                                      bufsize=1)
        self._lock = threading.Lock()
        self._next = 0
        self._waiting: dict[int, queue.Queue] = {}
        self._pages: dict[int, FirefoxPage] = {}
        self._stderr: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        try:
            info = self.call("launch", timeout=90, executablePath=firefox_path(), userDataDir=self.profile)
        except Exception:
            self._kill()
            raise
        self.version = info.get("version", "").split("/")[-1]   # "firefox/153.7.0" -> "153.7.0"

    def _read(self):
        for line in self._proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "event" in msg:
                page = self._pages.get(msg.get("page"))
                if page is not None:
                    page.errors.append(msg.get("text", ""))
                continue
            q = self._waiting.pop(msg.get("id"), None)
            if q is not None:
                q.put(msg)
        for q in list(self._waiting.values()):   # the bridge exited
            q.put({"error": "the browser bridge exited: " + " ".join(self._stderr[-5:])[-500:]})

    def _read_stderr(self):
        for line in self._proc.stderr:
            self._stderr.append(line.rstrip())
            del self._stderr[:-50]

    def call(self, op: str, timeout: float = 60.0, **params):
        q: queue.Queue = queue.Queue(1)
        with self._lock:
            self._next += 1
            n = self._next
            self._waiting[n] = q
            try:
                self._proc.stdin.write(json.dumps({"id": n, "op": op, "timeout": timeout * 1000, **params}) + "\n")
                self._proc.stdin.flush()
            except (OSError, ValueError) as e:
                self._waiting.pop(n, None)
                raise EngineError(f"the browser bridge is gone: {e}") from None
        try:
            msg = q.get(timeout=timeout + 5)
        except queue.Empty:
            self._waiting.pop(n, None)
            raise Timeout(f"firefox: {op} did not answer within {timeout:g}s") from None
        if "error" in msg:
            kind = msg.get("kind")
            cls = EvaluationError if kind == "evaluation" else Timeout if kind == "timeout" else EngineError
            raise cls(msg["error"])
        return msg.get("value")

    def new_page(self):
        pid = self.call("newPage")
        page = FirefoxPage(self, pid)
        self._pages[pid] = page
        return page

    def _kill(self):
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()

    def close(self):
        try:
            self.call("close", timeout=20)
        except EngineError:
            pass
        self._kill()
        super().close()


class FirefoxPage(Page):
    def __init__(self, browser: FirefoxBrowser, pid: int):
        super().__init__()
        self._browser, self._pid = browser, pid

    def goto(self, url, timeout=60.0):
        self._browser.call("goto", timeout=timeout, page=self._pid, url=url)

    def evaluate(self, expression, timeout=60.0):
        return self._browser.call("evaluate", timeout=timeout, page=self._pid,
                                  expression=_async_wrap(expression))

    def close(self):
        self._browser._pages.pop(self._pid, None)
        self._browser.call("closePage", timeout=20, page=self._pid)


# ------------------------------------------------------------------ WebKit: Selenium + WebKitWebDriver
def _die_with_parent():
    """In the child before exec: SIGTERM when the Python process dies, however it dies."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _Xvfb:
    """A private X display: ``Xvfb -displayfd`` picks a free display number.

    It also bounds the browser's lifetime: MiniBrowser (which WebKitWebDriver
    leaves running when it is killed) exits when its display goes away, and the
    display goes away with this process."""

    def __init__(self):
        r, w = os.pipe()
        self.proc = subprocess.Popen([XVFB, "-displayfd", str(w), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                                     pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)
        os.close(w)
        with os.fdopen(r) as f:
            number = f.readline().strip()
        if not number:
            self.proc.kill()
            raise EngineError("Xvfb did not start")
        self.display = f":{number}"

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class WebKitBrowser(Browser):
    """One WebDriver session; its windows are the pages (one command at a time)."""
    name = "webkit"

    def __init__(self, profile, args):
        super().__init__(profile)
        from selenium import webdriver
        from selenium.webdriver.webkitgtk.options import Options
        from selenium.webdriver.webkitgtk.service import Service

        self._xvfb = None if os.environ.get("DISPLAY") else _Xvfb()
        env = dict(os.environ)
        if self._xvfb:
            env["DISPLAY"] = self._xvfb.display
        # Safari and WebKit's other ports give cross-origin-isolated pages SharedArrayBuffer;
        # the GLib ports (GTK, WPE) do not pass the switch to their web process yet
        # (https://bugs.webkit.org/show_bug.cgi?id=317847), so WebKitGTK would test the polyfill
        # without it.  JavaScriptCore's own option turns it on; crossOriginIsolated still gates it.
        env.setdefault("JSC_useSharedArrayBuffer", "1")
        opts = Options()
        opts.binary_location = webkit_browser_path()
        opts.add_argument("--automation")
        opts.page_load_strategy = "normal"   # goto returns after the load event
        self._lock = threading.RLock()
        try:
            self._driver = webdriver.WebKitGTK(options=opts, service=Service(
                executable_path=WEBKIT_DRIVER, env=env, log_output=subprocess.DEVNULL))
        except Exception:
            if self._xvfb:
                self._xvfb.stop()
            raise
        self.version = self._driver.capabilities.get("browserVersion", "")
        atexit.register(self.close)
        self._closed = False
        self._blank = self._current = self._driver.current_window_handle
        self._timeouts = None

    def _set_timeouts(self, seconds: float):
        if self._timeouts != seconds:
            self._driver.set_script_timeout(seconds)
            self._driver.set_page_load_timeout(seconds)
            self._timeouts = seconds

    def new_page(self):
        with self._lock:
            if self._blank is not None:
                handle, self._blank = self._blank, None
            else:
                self._driver.switch_to.new_window("tab")
                handle = self._current = self._driver.current_window_handle
            return WebKitPage(self, handle)

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            self._driver.quit()
        except Exception:
            pass
        if self._xvfb:
            self._xvfb.stop()
        super().close()


_SELENIUM_EVAL = """
const done = arguments[arguments.length - 1];
Promise.resolve().then(() => %s).then(
  (value) => done({value: value === undefined ? null : value}),
  (e) => done({error: (e && e.name ? e.name + ': ' : '') + String(e && e.message !== undefined ? e.message : e)}));
"""


class WebKitPage(Page):
    def __init__(self, browser: WebKitBrowser, handle: str):
        super().__init__()
        self._browser, self._handle = browser, handle

    def _run(self, fn, timeout):
        from selenium.common.exceptions import TimeoutException, WebDriverException

        b = self._browser
        with b._lock:
            try:
                b._set_timeouts(timeout)
                if b._current != self._handle:
                    b._driver.switch_to.window(self._handle)
                    b._current = self._handle
                return fn(b._driver)
            except TimeoutException as e:
                raise Timeout(f"webkit: {(e.msg or '').strip() or 'timed out'}") from None
            except WebDriverException as e:
                raise EngineError(f"webkit: {(e.msg or str(e)).strip()}") from None

    def goto(self, url, timeout=60.0):
        # WebKitWebDriver may answer at readyState "interactive", before deferred and
        # module scripts ran: wait for the load event, as the other drivers do for theirs.
        deadline = time.monotonic() + timeout
        self._run(lambda d: d.get(url), timeout)
        while self._run(lambda d: d.execute_script("return document.readyState"), timeout) != "complete":
            if time.monotonic() > deadline:
                raise Timeout(f"webkit: {url} did not finish loading within {timeout:g}s")
            time.sleep(0.05)

    def evaluate(self, expression, timeout=60.0):
        out = self._run(lambda d: d.execute_async_script(_SELENIUM_EVAL % _async_wrap(expression)), timeout)
        if not isinstance(out, dict):
            raise EngineError(f"webkit: unexpected script result {out!r}")
        if "error" in out:
            raise EvaluationError(out["error"])
        return out.get("value")

    def close(self):
        b = self._browser
        with b._lock:
            try:
                if len(b._driver.window_handles) <= 1:
                    # The session ends with its last window: keep it, blank, for the next page.
                    self._run(lambda d: d.get("about:blank"), 20)
                    b._blank = self._handle
                    return
                self._run(lambda d: d.close(), 20)
                # WebDriver's New Window needs an open current window ("no such window"
                # otherwise): make one of the remaining tabs current.
                b._current = b._driver.window_handles[0]
                b._driver.switch_to.window(b._current)
            except Exception:
                pass


# ------------------------------------------------------------------ command line
def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["setup"]:
        why = install_drivers(log=lambda m: print(f"engines: {m}", file=sys.stderr))
        if why:
            print(f"engines: {why}", file=sys.stderr)
            return 1
        return 0
    if argv[:1] == ["check"]:
        bad = 0
        for e in ENGINES:
            why = unavailable(e)
            print(f"{e:9} {'ok' if not why else why}")
            bad += why is not None
        return 1 if bad else 0
    print("usage: python -m wpt_runner.engines setup|check", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
