"""A built graph as plain data (webnn_core.plain): node attributes are the
normalised spec attributes only, the graph saves as JSON + constant bytes,
and the loaded graph runs to byte-identical outputs in a fresh context;
also for every WPT conformance graph of the native loop (tools/wpt_native.py)."""
import json
import math
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from webnn_core import Context
from webnn_core.plain import from_json, to_json, to_plain

ROOT = Path(__file__).resolve().parents[2]


def _is_plain(value) -> bool:
    if isinstance(value, (list,)):
        return all(_is_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_plain(v) for k, v in value.items())
    return value is None or type(value) in (bool, int, float, str)


def sample_graph(ctx):
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [1, 2, 4, 4]})
    w = b.constant({"dataType": "float32", "shape": [3, 2, 3, 3]}, np.linspace(-1, 1, 54, dtype=np.float32))
    y = b.conv2d(x, w, padding=[1, 1, 1, 1], label="conv")
    y = b.clamp(y, minValue=-2.5, maxValue=0.5)
    p = b.pad(y, [0, 0, 1, 1], [0, 0, 0, 0], value=-math.inf)
    s1, s2 = b.split(y, [1, 2], axis=1)
    codes = b.constant({"dataType": "int4", "shape": [4]}, np.array([-8, -1, 0, 7], np.int8))
    c = b.cast(codes, "float32")
    z = b.constant_scalar("float32", -0.0)
    r = b.add(b.reduceSum(s2, axes=[1], keepDimensions=True), z)
    return b.build({"pad": p, "first": s1, "sum": r, "codes": c})


def test_node_attrs_are_normalised_spec_attributes_only():
    ctx = Context("cpu")
    g = sample_graph(ctx)
    conv = next(n for n in g.nodes if n.op.name == "conv2d")
    # every option present, defaults applied, spec names; operands kept apart
    assert conv.attrs["groups"] == 1 and conv.attrs["inputLayout"] == "nchw" and conv.attrs["filterLayout"] == "oihw"
    assert conv.attrs["padding"] == [1, 1, 1, 1] and set(conv.operands) == {"input", "filter"}
    assert conv.label == "conv" and "label" not in conv.attrs
    split = next(n for n in g.nodes if n.op.name == "split")
    assert split.attrs == {"splits": [1, 2], "axis": 1}
    for node in g.nodes:
        assert _is_plain(node.attrs), (node.op.name, node.attrs)
        assert not any(k.startswith("_") for k in node.attrs)
    # what the backend derived lives in its plan, not in the graph
    assert "filter_perm" not in conv.attrs
    assert any("filter_perm" in step.attrs for step in g.plan.nodes)


def test_kernel_params_are_those_infer_derives_and_fresh_per_plan():
    """A node keeps the kernel parameters infer gave at the call (a plan does not run infer
    again): equal to what infer derives from the node's spec attributes, a fresh dict per
    call (plans add their caches to it), and derived again when not kept (a node made from
    plain data, or parameters that are no immutable values)."""
    ctx = Context("cpu")
    g = sample_graph(ctx)
    for node in g.nodes:
        args, options = node.call_args()
        again = node.op.infer(*args, **options).attrs
        first = node.kernel_params()
        assert first == again, node.op.name
        first["_cache"] = 1
        for v in first.values():
            if isinstance(v, list):
                v.append("changed")
        assert node.kernel_params() == again
    conv = next(n for n in g.nodes if n.op.name == "conv2d")
    assert conv.inferred is not None
    # a node made without them (or with parameters that are no immutable values) derives them
    from webnn_core.graph import Node
    bare = Node(conv.op, conv.inputs, conv.operands, conv.attrs, "")
    assert bare.inferred is None and bare.kernel_params() == conv.kernel_params()
    assert Node(conv.op, conv.inputs, conv.operands, conv.attrs, "", {"w": [[1], 2]}).inferred is None
    g2 = from_json(Context("cpu"), *to_json(g))
    assert next(n for n in g2.nodes if n.op.name == "conv2d").kernel_params() == conv.kernel_params()


def test_round_trip_through_json_runs_identically():
    ctx = Context("cpu")
    g = sample_graph(ctx)
    feeds = {"x": np.linspace(-3, 3, 32, dtype=np.float32).reshape(1, 2, 4, 4)}
    want = ctx.compute(g, feeds)
    text, buffers = to_json(g)
    document = json.loads(text)  # plain JSON, no NaN/Infinity literals
    assert document["format"] == "webnn-graph/1" and all(isinstance(b, bytes) for b in buffers)
    assert next(n for n in document["nodes"] if n["op"] == "pad")["attrs"]["value"] == {"$n": "-Infinity"}
    other = Context("cpu")
    g2 = from_json(other, text, buffers)
    got = other.compute(g2, feeds)
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].tobytes() == want[name].tobytes(), name
    # independent expectations for the parts numpy states directly
    np.testing.assert_array_equal(want["codes"], [-8, -1, 0, 7])
    assert (want["pad"][0, :, 0, :] == -np.inf).all()
    np.testing.assert_array_equal(want["first"], np.clip(want["first"], -2.5, 0.5))
    assert to_plain(g2)[0] == document  # saving the loaded graph gives the same document


def test_doubles_json_cannot_hold_are_tagged():
    from webnn_core.plain import _decode, _encode

    values = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.5, [2, -0.0]]
    encoded = _encode(values)
    assert encoded[:4] == [{"$n": "NaN"}, {"$n": "Infinity"}, {"$n": "-Infinity"}, {"$n": "-0"}]
    back = _decode(json.loads(json.dumps(encoded, allow_nan=False)))
    assert math.isnan(back[0]) and back[1:3] == [math.inf, -math.inf]
    assert math.copysign(1, back[3]) < 0 and math.copysign(1, back[6][1]) < 0
    with pytest.raises(TypeError, match="not plain data"):
        _encode(np.zeros(2))


def test_loading_checks_the_document():
    ctx = Context("cpu")
    text, buffers = to_json(sample_graph(ctx))
    document = json.loads(text)
    document["nodes"][0]["outputs"][0]["shape"] = [9, 9]
    with pytest.raises(ValueError, match="the document says"):
        from_json(Context("cpu"), json.dumps(document), buffers)
    with pytest.raises(ValueError, match="not a webnn-graph/1 document"):
        from_json(Context("cpu"), json.dumps({"format": "x"}), buffers)


def _wpt_native():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import wpt_native
    finally:
        sys.path.remove(str(ROOT / "tools"))
    return wpt_native


@pytest.mark.slow
def test_every_wpt_conformance_graph_round_trips():
    wpt_native = _wpt_native()
    root = wpt_native.default_wpt_root()
    if root is None:
        pytest.skip("no WPT tree (set WPT_DIR or extract one into ~/.cache/pywebnn/wpt/)")
    if shutil.which("node") is None:
        pytest.skip("node is needed to read the WPT cases (tools/wpt_cases.js)")
    files = wpt_native.conformance_files(root, [])
    cases = wpt_native.load_cases(root, files)
    assert len(cases) > 1500
    problems = []
    for case in cases:
        ok, msg = wpt_native.run_case(case, check_round_trip=True)
        if not ok and ("round trip" in msg or msg.startswith("CRASH")):
            problems.append(f"{case['name']}: {msg}")
    assert not problems, problems[:10]
