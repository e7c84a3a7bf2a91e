"""Unit tests: META parsing, test discovery and run selection."""

import pytest

from wpt_runner import manifest
from wpt_runner.manifest import Run, expand_runs, parse_meta


def test_parse_meta_all_keys():
    meta = parse_meta(
        "// META: title=some title\n"
        "// META: global=window,worker\n"
        "// META: variant=?cpu\n"
        "// META: variant=op=add&device=gpu\n"
        "// META: script=/resources/WebIDLParser.js\n"
        "// META: script=../resources/utils.js\n"
        "// META: timeout=long\n"
        "\n"
        "'use strict';\n"
        "// META: script=ignored-after-code.js\n")
    assert meta.title == "some title"
    assert meta.globals == {"window", "dedicatedworker", "sharedworker", "serviceworker"}
    assert meta.variants == ["?cpu", "?op=add&device=gpu"]
    assert meta.scripts == ["/resources/WebIDLParser.js", "../resources/utils.js"]
    assert meta.timeout == "long"


def test_parse_meta_defaults():
    meta = parse_meta("// a comment\ntest(() => {});\n")
    assert meta.globals == {"window", "dedicatedworker"}
    assert meta.variants == [] and meta.scripts == []
    assert meta.timeout == "normal" and meta.title is None


@pytest.mark.parametrize("spec,expected", [
    ("window", {"window"}),
    ("worker", {"dedicatedworker", "sharedworker", "serviceworker"}),
    ("dedicatedworker,sharedworker", {"dedicatedworker", "sharedworker"}),
    ("window,worker,!sharedworker", {"window", "dedicatedworker", "serviceworker"}),
    ("!dedicatedworker", {"window"}),
    ("window,shadowrealm,jsshell", {"window"}),
])
def test_global_spec(spec, expected):
    globals_, _ = manifest.parse_global_spec(spec)
    assert globals_ == expected


def test_scope_list_rejects_unknown():
    assert manifest.parse_scope_list("window,worker") == set(manifest.SCOPES)
    with pytest.raises(ValueError):
        manifest.parse_scope_list("window,bogus")


@pytest.mark.parametrize("variant,device,label", [
    ("?cpu", "cpu", "cpu"),
    ("?op=add&device=npu", "npu", "npu"),
    ("?1-10", None, "1-10"),
    ("", None, "default"),
])
def test_variant_device(variant, device, label):
    assert manifest.variant_device(variant) == device
    assert manifest.variant_label(variant) == label


def test_run_urls_and_timeout():
    src = "webnn/conformance_tests/add.https.any.js"
    assert Run(src, "window", "?cpu", False).url == \
        "/webnn/conformance_tests/add.https.any.html?cpu"
    assert Run(src, "dedicatedworker", "", False).url == \
        "/webnn/conformance_tests/add.https.any.worker.html"
    assert Run(src, "sharedworker", "?gpu", False).url.endswith(".any.sharedworker.html?gpu")
    assert Run(src, "serviceworker", "", True).url.endswith(".any.serviceworker.html")
    assert Run("webnn/x.window.js", "window", "", False).url == "/webnn/x.window.html"
    assert Run(src, "window", "", False).timeout(60) == 60
    assert Run(src, "window", "", True).timeout(60) == 60 * manifest.LONG_TIMEOUT_MULTIPLIER


def test_discover_skips_resources(fixture_tree):
    sources = manifest.discover_sources(fixture_tree, ["webnn"])
    assert "webnn/scopes.https.any.js" in sources
    assert "webnn/window_only.window.js" in sources
    assert not any("/resources/" in s for s in sources)


def test_expand_all_globals_and_variants(fixture_tree):
    sources = ["webnn/scopes.https.any.js"]
    urls = {r.url for r in expand_runs(fixture_tree, sources)}
    assert len(urls) == 4 * 3
    assert "/webnn/scopes.https.any.serviceworker.html?npu" in urls


def test_expand_selects_devices_scopes_and_filters(fixture_tree):
    sources = manifest.discover_sources(fixture_tree, ["webnn"])
    runs = expand_runs(fixture_tree, sources, scopes={"window"}, devices={"cpu"},
                       patterns=["webnn/scopes.https.any.js", "*window_only*"])
    assert [r.url for r in runs] == ["/webnn/scopes.https.any.html?cpu",
                                     "/webnn/window_only.window.html"]
    # a plain directory matches everything below it
    runs = expand_runs(fixture_tree, sources, patterns=["webnn/timeout"])
    assert {r.source for r in runs} == {"webnn/timeout/long.https.any.js", "webnn/timeout/hang.https.any.js",
                                        "webnn/timeout/never_done.https.any.js"}
    assert [r.long for r in runs if r.source.endswith("long.https.any.js")] == [True]
    # URL globs work too
    runs = expand_runs(fixture_tree, sources, patterns=["/webnn/*.any.sharedworker.html*"])
    assert {r.scope for r in runs} == {"sharedworker"}


def test_split_patterns():
    assert manifest.split_patterns(["a,b", " c "]) == ["a", "b", "c"]
    assert manifest.split_patterns(None) == []
