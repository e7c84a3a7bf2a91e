"""The page's half of a timeline-worker context (Context(shadow=True), issue 32): it makes
every check an ordinary context makes, with the same errors in the same order, but holds
no tensor contents and runs nothing; a graph it builds goes to the worker's context as
plain IR + constants (bridge.graph_export / graph_constants / load_graph) and computes
there what numpy computes."""
import json

import numpy as np
import pytest

from webnn_core import bridge


def call(method, args, data=None):
    return json.loads(bridge.call(method, json.dumps(args), data))


def ok(method, args, data=None):
    reply = call(method, args, data)
    assert "error" not in reply, reply
    return reply["ok"]


def o(handle):
    return {"$o": handle}


def context(shadow):
    return ok("create_context", ["cpu", "default", {"shadow": True} if shadow else {}])


def small_graph(ctx):
    b = ok("new_builder", [o(ctx)])
    x = ok("builder_input", [o(b), "x", {"dataType": "float32", "shape": [2, 3]}])
    w = ok("builder_constant", [o(b), {"dataType": "float32", "shape": [3, 2]}],
           np.arange(6, dtype=np.float32).tobytes())
    y = ok("builder_op", [o(b), "matmul", [o(x[0]), o(w[0])], {}])
    z = ok("builder_op", [o(b), "relu", [o(y[0])], {"label": "theRelu"}])
    return ok("builder_build", [o(b), {"$r": [["z", o(z[0])]]}])


def misuse(ctx, graph):
    """A sequence of calls, each answered by the context: the replies, errors included."""
    out = []
    t_in = ok("create_tensor", [o(ctx), {"dataType": "float32", "shape": [2, 3], "writable": True}])
    t_out = ok("create_tensor", [o(ctx), {"dataType": "float32", "shape": [2, 2], "readable": True}])
    t_bad = ok("create_tensor", [o(ctx), {"dataType": "int32", "shape": [2, 2], "readable": True}])
    out.append(call("write_tensor", [o(ctx), o(t_in)], b"\0" * 12))  # wrong size
    out.append(call("write_tensor", [o(ctx), o(t_out)], b"\0" * 16))  # not writable
    out.append(call("read_tensor", [o(ctx), o(t_in)]).get("error"))  # not readable
    out.append(call("dispatch", [o(ctx), o(graph), {"$r": [["x", o(t_in)]]}, {"$r": [["z", o(t_bad)]]}]))
    out.append(call("dispatch", [o(ctx), o(graph), {"$r": [["x", o(t_in)]]}, {"$r": [["y", o(t_out)]]}]))
    out.append(call("create_tensor", [o(ctx), {"dataType": "float32", "shape": [2, -3]}]))
    ok("destroy_tensor", [o(t_out)])
    out.append(call("dispatch", [o(ctx), o(graph), {"$r": [["x", o(t_in)]]}, {"$r": [["z", o(t_out)]]}]))
    out.append(call("read_tensor", [o(ctx), o(t_out)]).get("error"))
    b = ok("new_builder", [o(ctx)])
    a = ok("builder_input", [o(b), "a", {"dataType": "float32", "shape": [2, 3]}])
    c = ok("builder_input", [o(b), "c", {"dataType": "float32", "shape": [4, 3]}])
    out.append(call("builder_op", [o(b), "add", [o(a[0]), o(c[0])], {"label": "myAdd"}]))
    ok("destroy_context", [o(ctx)])
    out.append(call("create_tensor", [o(ctx), {"dataType": "float32", "shape": [2]}]))
    return out


def test_a_shadow_context_answers_every_misuse_as_an_ordinary_one():
    ordinary = context(False)
    shadow = context(True)
    expected = misuse(ordinary, small_graph(ordinary)["graph"])
    got = misuse(shadow, small_graph(shadow)["graph"])
    assert got == expected
    errors = [r["error"] if isinstance(r, dict) and "error" in r else r for r in expected]
    assert sum(1 for e in errors if e) == 10  # every call above but the first two creations is refused
    assert any("myAdd" in e[1] for e in errors if e)


def test_a_shadow_holds_no_contents_and_its_export_computes_what_numpy_does():
    shadow = context(True)
    worker = context(False)
    built = small_graph(shadow)
    exported = ok("graph_export", [o(built["graph"])])
    reply = call("graph_constants", [o(built["graph"])])
    constants = bridge._last_out[0].copy()
    assert reply["bytes"][1] == constants.nbytes == 24
    # The shadow's graph kept no constant after handing them over.
    graph = bridge._objects[built["graph"]]
    assert all(op.value is None for node in graph.nodes for op in node.inputs if op is not None and op.kind == "constant")
    t = ok("create_tensor", [o(shadow), {"dataType": "float32", "shape": [2, 3], "writable": True, "readable": True}])
    assert bridge._objects[t].data is None
    assert ok("read_tensor", [o(shadow), o(t)]) == {"gpuRead": {"remote": 24}}

    loaded = ok("load_graph", [o(worker), exported["document"], exported["sizes"]], constants.tobytes())
    assert loaded["inputNames"] == built["inputNames"] and loaded["outputNames"] == built["outputNames"]
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    t_in = ok("create_tensor", [o(worker), {"dataType": "float32", "shape": [2, 3], "writable": True}])
    t_out = ok("create_tensor", [o(worker), {"dataType": "float32", "shape": [2, 2], "readable": True}])
    ok("write_tensor", [o(worker), o(t_in)], x.tobytes())
    ok("dispatch", [o(worker), o(loaded["graph"]), {"$r": [["x", o(t_in)]]}, {"$r": [["z", o(t_out)]]}])
    call("read_tensor", [o(worker), o(t_out)])
    got = bridge._last_out[0].view(np.float32).reshape(2, 2)
    np.testing.assert_array_equal(got, np.maximum(x @ np.arange(6, dtype=np.float32).reshape(3, 2), 0))


@pytest.mark.parametrize("dtype", ["float16", "int8", "int64"])
def test_constants_of_every_width_cross_intact(dtype):
    shadow = context(True)
    worker = context(False)
    b = ok("new_builder", [o(shadow)])
    x = ok("builder_input", [o(b), "x", {"dataType": dtype, "shape": [4]}])
    raw = {"float16": np.array([1.5, -2, 65504, 0.25], np.float16).tobytes(),
           "int8": np.array([-128, 5, 127, 0], np.int8).tobytes(),
           "int64": np.array([-2**63, 2**62 + 1, -1, 7], np.int64).tobytes()}[dtype]
    c = ok("builder_constant", [o(b), {"dataType": dtype, "shape": [4]}], raw)
    y = ok("builder_op", [o(b), "add", [o(x[0]), o(c[0])], {}])
    built = ok("builder_build", [o(b), {"$r": [["y", o(y[0])]]}])
    exported = ok("graph_export", [o(built["graph"])])
    call("graph_constants", [o(built["graph"])])
    loaded = ok("load_graph", [o(worker), exported["document"], exported["sizes"]], bridge._last_out[0].tobytes())
    t_in = ok("create_tensor", [o(worker), {"dataType": dtype, "shape": [4], "writable": True}])
    t_out = ok("create_tensor", [o(worker), {"dataType": dtype, "shape": [4], "readable": True}])
    ok("write_tensor", [o(worker), o(t_in)], bytes(len(raw)))  # zeros: y is the constant itself
    ok("dispatch", [o(worker), o(loaded["graph"]), {"$r": [["x", o(t_in)]]}, {"$r": [["y", o(t_out)]]}])
    call("read_tensor", [o(worker), o(t_out)])
    assert bridge._last_out[0].tobytes() == raw


def test_the_exported_constants_are_the_bytes_the_page_gave():
    """graph_constants hands over each constant's bytes as WebNN took them (packed nibbles
    for int4/uint4, odd counts included; -0 and denormals bit for bit), end to end in the
    document's order (first use: here the order they were made in), copied once from the
    shadow's values (graph_export only views them)."""
    shadow = context(True)
    b = ok("new_builder", [o(shadow)])
    given = []

    def constant(dtype, shape, raw):
        given.append(raw)
        return o(ok("builder_constant", [o(b), {"dataType": dtype, "shape": shape}], raw)[0])

    outputs = []
    f32 = constant("float32", [4], np.array([1.5, -0.0, np.inf, 3e-45], np.float32).tobytes())
    outputs.append(["f32", o(ok("builder_op", [o(b), "identity", [f32], {}])[0])])
    f16 = constant("float16", [3], np.array([65504, -2, 0.5], np.float16).tobytes())
    outputs.append(["f16", o(ok("builder_op", [o(b), "identity", [f16], {}])[0])])
    # five int4 nibbles (and a padding one), three uint4 ones
    for dtype, n, raw, zero in (("int4", 5, bytes([0x7F, 0x08, 0x0A]), bytes([0x21, 0x43, 0x05])),
                                ("uint4", 3, bytes([0xF1, 0x03]), bytes([0x12, 0x03]))):
        q = constant(dtype, [n], raw)
        scale = constant("float32", [n], np.arange(1, n + 1, dtype=np.float32).tobytes())
        zp = constant(dtype, [n], zero)
        outputs.append([dtype, o(ok("builder_op", [o(b), "dequantizeLinear", [q, scale, zp], {}])[0])])
    built = ok("builder_build", [o(b), {"$r": outputs}])
    exported = ok("graph_export", [o(built["graph"])])
    call("graph_constants", [o(built["graph"])])
    assert exported["sizes"] == [len(r) for r in given]
    assert bridge._last_out[0].tobytes() == b"".join(given)


def test_the_workers_run_computes_what_numpy_does_and_refuses_destroyed_objects():
    """bridge.run_fast (the timeline worker's dispatch: the page's shadow checked the call)
    computes what numpy computes, and still refuses a destroyed tensor, graph or context
    with InvalidStateError rather than running on what they no longer hold."""
    ctx = context(False)
    built = small_graph(ctx)
    x = np.array([[1, -2, 3], [-4, 5, -6]], np.float32)
    t_in = ok("create_tensor", [o(ctx), {"dataType": "float32", "shape": [2, 3], "writable": True}])
    t_out = ok("create_tensor", [o(ctx), {"dataType": "float32", "shape": [2, 2], "readable": True}])
    ok("write_tensor", [o(ctx), o(t_in)], x.tobytes())
    assert bridge.run_fast(ctx, built["graph"], t_in, t_out) is None
    call("read_tensor", [o(ctx), o(t_out)])
    got = bridge._last_out[0].view(np.float32).reshape(2, 2)
    np.testing.assert_array_equal(got, np.maximum(x @ np.arange(6, dtype=np.float32).reshape(3, 2), 0))

    ok("destroy_tensor", [o(t_out)])
    assert json.loads(bridge.run_fast(ctx, built["graph"], t_in, t_out))["error"][0] == "InvalidStateError"
    t_out2 = ok("create_tensor", [o(ctx), {"dataType": "float32", "shape": [2, 2], "readable": True}])
    ok("destroy_graph", [o(built["graph"])])
    assert json.loads(bridge.run_fast(ctx, built["graph"], t_in, t_out2))["error"][0] == "InvalidStateError"
    ok("destroy_context", [o(ctx)])
    assert json.loads(bridge.run_fast(ctx, built["graph"], t_in, t_out2))["error"][0] == "InvalidStateError"
