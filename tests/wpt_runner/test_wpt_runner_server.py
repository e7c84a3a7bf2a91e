"""Unit tests for the HTTP server (plain HTTP requests, no browser)."""

import os
import urllib.error
import urllib.request

import pytest

from wpt_runner.server import Server

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixture")


@pytest.fixture(scope="module")
def server():
    with Server(FIXTURE, os.path.join(FIXTURE, "polyfill"), {"replaceNative": True}) as srv:
        yield srv


def get(server, path):
    try:
        with urllib.request.urlopen(server.url + path, timeout=10) as r:
            return r.status, r.headers, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode("utf-8", "replace")


@pytest.mark.parametrize("path", [
    "/webnn/isolated.https.any.html",
    "/webnn/isolated.https.any.worker.html",
    "/webnn/isolated.https.any.sharedworker.html",
    "/webnn/isolated.https.any.serviceworker.html",
    "/webnn/isolated.https.any.worker.js",
])
def test_generated_wrappers_get_source_headers(server, path):
    status, headers, body = get(server, path)
    assert status == 200
    assert headers["Cross-Origin-Embedder-Policy"] == "require-corp"
    assert headers["Cross-Origin-Opener-Policy"] == "same-origin"
    ctype = "text/javascript" if path.endswith(".js") else "text/html"
    assert headers["Content-Type"].startswith(ctype)
    assert "/resources/testharness.js" in body


def test_wrappers_without_headers_file(server):
    status, headers, body = get(server, "/webnn/scopes.https.any.html?cpu")
    assert status == 200 and "Cross-Origin-Embedder-Policy" not in headers
    assert '<script src="/_webnn_polyfill/webnn-polyfill.js"></script>' in body
    status, _, body = get(server, "/webnn/window_only.window.html")
    assert status == 200 and '<script src="/webnn/window_only.window.js"></script>' in body


def test_worker_page_passes_variant_on(server):
    _, _, body = get(server, "/webnn/scopes.https.any.sharedworker.html?gpu")
    assert 'new SharedWorker("/webnn/scopes.https.any.worker.js?gpu")' in body


def test_static_file_and_resources_headers(server):
    status, headers, body = get(server, "/resources/testharness.js")
    assert status == 200
    assert headers["X-Fixture"] == "resources-headers"
    assert headers["Content-Type"] == "text/javascript; charset=utf-8"
    assert "stand-in" in body


def test_own_testharnessreport(server):
    status, _, body = get(server, "/resources/testharnessreport.js")
    assert status == 200 and "__wptRunner" in body and "add_completion_callback" in body


def test_webidl_parser_mapping(server):
    status, _, body = get(server, "/resources/WebIDLParser.js")
    assert status == 200 and "FIXTURE_WEBIDL2" in body


def test_polyfill_files(server):
    status, headers, body = get(server, "/_webnn_polyfill/webnn-polyfill.js")
    assert status == 200 and "navigator" in body
    assert headers["Cache-Control"] == "max-age=3600"
    assert headers["Cross-Origin-Resource-Policy"] == "same-origin"
    status, headers, _ = get(server, "/_webnn_polyfill/runtime.wasm")
    assert status == 200 and headers["Content-Type"] == "application/wasm"
    assert headers["Cross-Origin-Resource-Policy"] == "same-origin"


@pytest.mark.parametrize("path", [
    "/webnn/missing.https.any.html",
    "/nothing.js",
    "/_webnn_polyfill/missing.js",
    "/_webnn_polyfill/../resources/testharness.js",
    "/webnn/",
])
def test_not_found(server, path):
    assert get(server, path)[0] == 404


def test_no_polyfill_mount_without_polyfill(fixture_tree):
    with Server(fixture_tree, None, None) as srv:
        assert get(srv, "/_webnn_polyfill/webnn-polyfill.js")[0] == 404
        _, _, body = get(srv, "/webnn/scopes.https.any.worker.js?cpu")
        assert "webnn-polyfill" not in body


def test_idl_option_replaces_interfaces_webnn_idl(tmp_path):
    idl = tmp_path / "other.idl"
    idl.write_text("interface Substituted {};\n")
    with Server(FIXTURE, None, None, idl=str(idl)) as srv:
        status, headers, body = get(srv, "/interfaces/webnn.idl")
    assert status == 200 and body == "interface Substituted {};\n"
    assert "idl" in headers["Content-Type"] or "text" in headers["Content-Type"]
