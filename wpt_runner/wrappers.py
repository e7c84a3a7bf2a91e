"""Generated test wrappers (HTML pages and the worker script) for ``.any.js``
and ``.window.js`` test sources, with WebNN polyfill injection."""

from __future__ import annotations

import html
import json
import posixpath
import re

from .manifest import Meta, normalize_variant

POLYFILL_MOUNT = "/_webnn_polyfill/"
POLYFILL_SCRIPT = POLYFILL_MOUNT + "webnn-polyfill.js"
CONFIG_GLOBAL = "WEBNN_POLYFILL_CONFIG"


def _js(value) -> str:
    """A JS literal safe to embed inside an inline <script>."""
    return (json.dumps(value, ensure_ascii=False)
            .replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def _global_js(is_window: bool) -> str:
    w = "true" if is_window else "false"
    k = "false" if is_window else "true"
    return ("self.GLOBAL = {\n"
            f"  isWindow: function() {{ return {w}; }},\n"
            f"  isWorker: function() {{ return {k}; }},\n"
            "  isShadowRealm: function() { return false; },\n"
            "};\n")


def _head(meta: Meta) -> list:
    lines = ["<!doctype html>", "<meta charset=utf-8>"]
    if meta.timeout == "long":
        lines.append('<meta name="timeout" content="long">')
    if meta.title:
        lines.append(f"<title>{html.escape(meta.title)}</title>")
    return lines


def _window_polyfill(config) -> list:
    if config is None:
        return []
    return [f"<script>self.{CONFIG_GLOBAL} = {_js(config)};</script>",
            f'<script src="{POLYFILL_SCRIPT}"></script>']


def _harness_tags() -> list:
    return ['<script src="/resources/testharness.js"></script>',
            '<script src="/resources/testharnessreport.js"></script>']


def window_html(source_url: str, meta: Meta, polyfill_config) -> str:
    """``X.any.html`` / ``X.window.html``: run the test in the window itself.

    ``source_url`` is the absolute URL path of the ``.js`` test source.
    """
    lines = _head(meta)
    lines += _window_polyfill(polyfill_config)
    lines.append("<script>\n" + _global_js(True) + "</script>")
    lines += _harness_tags()
    lines += [f'<script src="{_attr(s)}"></script>' for s in meta.scripts]
    lines.append("<div id=log></div>")
    lines.append(f'<script src="{_attr(source_url)}"></script>')
    return "\n".join(lines) + "\n"


def worker_script_url(source_url: str) -> str:
    assert source_url.endswith(".any.js"), source_url
    return source_url[: -len(".js")] + ".worker.js"


def sw_scope(source_url: str, variant: str) -> str:
    """A service worker scope unique to one test file + variant.

    It lies below the worker script's directory (the largest scope a script
    may claim without ``Service-Worker-Allowed``) and matches no real file.
    """
    base = posixpath.basename(source_url)
    tag = re.sub(r"[^A-Za-z0-9_.-]+", "_", variant.lstrip("?#")) or "default"
    return f"./__wpt_sw_scope__/{base}/{tag}/"


def worker_html(source_url: str, meta: Meta, scope: str, variant: str = "") -> str:
    """``X.any.{worker,sharedworker,serviceworker}.html``: a window that starts
    the test in a worker and collects its results with fetch_tests_from_worker.

    The polyfill is injected in the worker script, not in this window.
    """
    variant = normalize_variant(variant) if variant else ""
    script = _js(worker_script_url(source_url) + variant)
    lines = _head(meta)
    lines += _harness_tags()
    lines.append("<div id=log></div>")
    if scope == "dedicatedworker":
        # The worker posts the polyfill's gpu-graph tally (WORKER_BACKEND_JS);
        # report-hook.js reports it as this page's backend.
        body = (f"const worker = new Worker({script});\n"
                'worker.addEventListener("message", function(e) {\n'
                '  if (e.data && e.data.type === "wpt-runner-backend") self.__wptRunnerWorkerBackend = e.data.backend;\n'
                "});\n"
                "fetch_tests_from_worker(worker);")
    elif scope == "sharedworker":
        body = f"fetch_tests_from_worker(new SharedWorker({script}));"
    elif scope == "serviceworker":
        body = (
            "(async function() {\n"
            f"  const scope = {_js(sw_scope(source_url, variant))};\n"
            "  const old = await navigator.serviceWorker.getRegistration(scope);\n"
            "  if (old) await old.unregister();\n"
            f"  const reg = await navigator.serviceWorker.register({script}, {{scope}});\n"
            "  fetch_tests_from_worker(reg.installing || reg.waiting || reg.active);\n"
            "})();"
        )
    else:
        raise ValueError(f"not a worker scope: {scope}")
    lines.append(f"<script>\n{body}\n</script>")
    return "\n".join(lines) + "\n"


# In a dedicated worker: after each subtest result (so before testharness's
# "complete" message), post the polyfill's tally of this global's gpu-context
# graphs (engineStats.webgpu.graphs) to the window (`wpt-runner-backend`
# messages, which testharness ignores). Shared and service workers have no
# such channel to their window; their pages report no backend.
WORKER_BACKEND_JS = """add_result_callback(function() {
  try {
    var stats = self.webnnPolyfill && self.webnnPolyfill.engineStats.webgpu;
    if (typeof self.postMessage !== "function" || !stats || !stats.graphs) return;
    var g = stats.graphs, reasons = {};
    for (var k in g.reasons) reasons[k] = g.reasons[k];
    self.postMessage({type: "wpt-runner-backend", backend: {available: stats.available, adapter: stats.adapter,
      reason: stats.reason, gpu: g.gpu, cpu: g.cpu, dispatchesGpu: g.dispatchesGpu,
      dispatchesCpu: g.dispatchesCpu, reasons: reasons}});
  } catch (e) {}
});"""


def worker_js(source_url: str, meta: Meta, polyfill_config) -> str:
    """``X.any.worker.js``: the script every worker flavour runs.

    The polyfill comes first, as a synchronous top-level importScripts (the
    only kind a service worker allows after installation).
    """
    out = []
    if polyfill_config is not None:
        out.append(f"self.{CONFIG_GLOBAL} = {_js(polyfill_config)};")
        out.append(f"importScripts({_js(POLYFILL_SCRIPT)});")
    out.append(_global_js(False).rstrip("\n"))
    out.append('importScripts("/resources/testharness.js");')
    if polyfill_config is not None:
        out.append(WORKER_BACKEND_JS)
    if meta.title:
        out.append(f"self.META_TITLE = {_js(meta.title)};")
    for s in meta.scripts:
        out.append(f"importScripts({_js(s)});")
    out.append(f"importScripts({_js(source_url)});")
    out.append("done();")
    return "\n".join(out) + "\n"
