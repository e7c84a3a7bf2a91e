"""Unit tests: generated wrapper pages and the worker script."""

from wpt_runner import wrappers
from wpt_runner.manifest import parse_meta

SRC = "/webnn/conformance_tests/add.https.any.js"
META = parse_meta("// META: title=Add <ops>\n// META: global=window,worker\n"
                  "// META: script=../resources/utils.js\n// META: timeout=long\n")
CONFIG = {"replaceNative": True}


def _order(text, *needles):
    positions = [text.index(n) for n in needles]
    assert positions == sorted(positions), list(zip(needles, positions))


def test_window_html_injects_polyfill_first():
    page = wrappers.window_html(SRC, META, CONFIG)
    _order(page,
           '<script>self.WEBNN_POLYFILL_CONFIG = {"replaceNative": true};</script>',
           '<script src="/_webnn_polyfill/webnn-polyfill.js"></script>',
           "self.GLOBAL = {",
           '<script src="/resources/testharness.js"></script>',
           '<script src="/resources/testharnessreport.js"></script>',
           '<script src="../resources/utils.js"></script>',
           f'<script src="{SRC}"></script>')
    assert '<meta name="timeout" content="long">' in page
    assert "<title>Add &lt;ops&gt;</title>" in page
    assert "isWindow: function() { return true; }" in page


def test_window_html_without_polyfill():
    page = wrappers.window_html(SRC, META, None)
    assert "webnn-polyfill" not in page and "WEBNN_POLYFILL_CONFIG" not in page


def test_config_cannot_break_out_of_script():
    page = wrappers.window_html(SRC, META, {"x": "</script><script>alert(1)"})
    assert "</script><script>alert" not in page
    assert "\\u003c/script\\u003e" in page


def test_worker_js():
    js = wrappers.worker_js(SRC, META, CONFIG)
    lines = js.splitlines()
    assert lines[0] == 'self.WEBNN_POLYFILL_CONFIG = {"replaceNative": true};'
    assert lines[1] == 'importScripts("/_webnn_polyfill/webnn-polyfill.js");'
    _order(js, "isWorker: function() { return true; }",
           'importScripts("/resources/testharness.js");',
           'self.META_TITLE = "Add \\u003cops\\u003e";',
           'importScripts("../resources/utils.js");',
           f'importScripts("{SRC}");', "done();")
    assert lines[-1] == "done();"
    # After each result the worker posts the polyfill's gpu-graph tally to its window.
    _order(js, 'importScripts("/resources/testharness.js");', 'type: "wpt-runner-backend"', f'importScripts("{SRC}");')
    bare = wrappers.worker_js(SRC, META, None)
    assert "webnn-polyfill" not in bare and "wpt-runner-backend" not in bare


def test_worker_pages():
    script = "/webnn/conformance_tests/add.https.any.worker.js?cpu"
    dedicated = wrappers.worker_html(SRC, META, "dedicatedworker", "?cpu")
    assert f'const worker = new Worker("{script}");' in dedicated and "fetch_tests_from_worker(worker);" in dedicated
    # It keeps the gpu-graph tally the worker posts (report-hook.js reports it).
    assert '"wpt-runner-backend") self.__wptRunnerWorkerBackend = e.data.backend' in dedicated
    shared = wrappers.worker_html(SRC, META, "sharedworker", "?cpu")
    assert f'fetch_tests_from_worker(new SharedWorker("{script}"));' in shared
    service = wrappers.worker_html(SRC, META, "serviceworker", "?cpu")
    assert f'navigator.serviceWorker.register("{script}", {{scope}})' in service
    assert '"./__wpt_sw_scope__/add.https.any.js/cpu/"' in service
    assert "fetch_tests_from_worker(reg.installing" in service
    for page in (dedicated, shared, service):
        # the polyfill runs in the worker, not in the hosting window
        assert "webnn-polyfill" not in page
        _order(page, "/resources/testharness.js", "/resources/testharnessreport.js",
               "fetch_tests_from_worker")
    assert wrappers.worker_html(SRC, META, "dedicatedworker").count(
        '"/webnn/conformance_tests/add.https.any.worker.js"') == 1


def test_sw_scopes_differ_per_file_and_variant():
    a = wrappers.sw_scope(SRC, "?cpu")
    assert a != wrappers.sw_scope(SRC, "?gpu")
    assert a != wrappers.sw_scope("/webnn/x/sub.https.any.js", "?cpu")
    assert wrappers.sw_scope(SRC, "?op=add&device=cpu").endswith("/op_add_device_cpu/")
