"""MLGraphBuilder rules (SPEC §7.7 and the WPT refinements in digest §2.3/§3)."""
import numpy as np
import pytest

from webnn_core import Context, InvalidStateError, WebNNTypeError
from webnn_core.builder import MAX_TENSOR_BYTE_LENGTH

F32 = "float32"


def desc(shape, dtype=F32):
    return {"dataType": dtype, "shape": list(shape)}


@pytest.fixture
def b():
    return Context().graph_builder()


@pytest.mark.parametrize("shape", [[0], [2, 0], [2**32], [1] * 9])
def test_input_rejects_invalid_dimensions_and_rank(b, shape):
    with pytest.raises(WebNNTypeError):
        b.input("x", desc(shape))


def test_input_rejects_empty_name_and_unknown_type(b):
    with pytest.raises(WebNNTypeError):
        b.input("", desc([1]))
    with pytest.raises(WebNNTypeError):
        b.input("x", desc([1], "float64"))


def test_input_rejects_byte_length_over_the_limit(b):
    # (max + 1) / 4 float32 elements is one byte too many; max/4 elements fit.
    with pytest.raises(WebNNTypeError):
        b.input("x", desc([(MAX_TENSOR_BYTE_LENGTH + 1) // 4]))
    b.input("y", desc([MAX_TENSOR_BYTE_LENGTH // 4]))


def test_max_tensor_byte_length_is_3_mod_4():
    # WPT builds [(max+1)/4] and expects EnforceRange truncation to exceed max.
    assert MAX_TENSOR_BYTE_LENGTH % 4 == 3


def test_duplicate_input_names_are_accepted_by_input(b):
    # Chromium and WPT's validation helpers (validateSingleInputOperation & co. call
    # builder.input('input', ...) once per data type and shape on one builder) accept a
    # name the builder already has; the ED's input() step 3 would throw. README,
    # "Accepted beyond the 2026 IDL".
    for dtype, shape in [(F32, []), (F32, [2]), ("float16", [2, 3]), ("int32", [2, 3, 4])]:
        x = b.input("input", desc(shape, dtype))
        y = b.relu(x) if dtype != "int32" else b.abs(x)
        assert (y.dtype, y.shape) == (dtype, tuple(shape))


def test_duplicate_input_names_throw_at_build_when_the_graph_uses_both(b):
    x1 = b.input("x", desc([2]))
    x2 = b.input("x", desc([2]))
    with pytest.raises(WebNNTypeError, match=r"build: .*'x'"):
        b.build({"y": b.add(x1, x2)})
    with pytest.raises(WebNNTypeError, match=r"build: .*'x'"):  # through two outputs too
        b.build({"y1": b.relu(x1), "y2": b.relu(x2)})
    # The builder is still usable: a graph that uses only one of them builds.
    g = b.build({"y": b.add(x1, x1)})
    assert g.inputs.keys() == {"x"} and g.inputs["x"] is x1
    out = b.context.compute(g, {"x": np.array([1, -2], np.float32)})["y"]
    assert out.tolist() == [2, -4]


def test_unreachable_duplicate_input_names_do_not_count(b):
    # Only the inputs the outputs depend on are the graph's inputs (build() steps).
    b.input("x", desc([3]))  # never used
    x = b.input("x", desc([2]))
    unused = b.relu(b.input("x", desc([4])))  # used by an op, but not by the outputs
    g = b.build({"y": b.relu(x)})
    assert g.inputs.keys() == {"x"} and g.input_descriptors["x"]["shape"] == [2]
    assert unused.shape == (4,)
    b.context.graph_builder().input("x", desc([2]))  # another builder: unrelated


def test_constant_checks_byte_length_and_copies_now(b):
    with pytest.raises(WebNNTypeError):
        b.constant(desc([2]), bytes(7))
    data = bytearray(np.array([1.0, 2.0], np.float32).tobytes())
    c = b.constant(desc([2]), data)
    data[:] = bytes(8)  # later mutation must not leak into the constant
    ctx = b.context
    x = b.input("x", desc([2]))
    g = b.build({"y": b.add(x, c)})
    out = ctx.compute(g, {"x": np.zeros(2, np.float32)})["y"]
    assert out.tolist() == [1.0, 2.0]


def test_validation_errors_are_type_errors_with_the_label(b):
    x = b.input("x", desc([2], "int32"))
    with pytest.raises(WebNNTypeError, match=r"\[my_label\]"):
        b.sigmoid(x, label="my_label")  # sigmoid is float-only
    y = b.input("y", desc([3]))
    z = b.input("z", desc([2]))
    with pytest.raises(WebNNTypeError, match=r"\[add_lbl\]"):
        b.add(y, z, label="add_lbl")  # not broadcastable


def test_operand_from_another_builder_is_a_type_error():
    ctx = Context()
    b1, b2 = ctx.graph_builder(), ctx.graph_builder()
    x = b1.input("x", desc([2]))
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        b2.relu(x, label="lbl")
    with pytest.raises(WebNNTypeError):
        b2.build({"y": b1.relu(x)})


def test_build_rules(b):
    x = b.input("x", desc([2]))
    c = b.constant(desc([2]), np.ones(2, np.float32))
    for bad in ({}, {"": b.relu(x)}, {"y": x}, {"y": c}):
        with pytest.raises(WebNNTypeError):
            b.build(bad)
    assert not b.built  # failed validation leaves the builder usable
    graph = b.build({"y": b.relu(x)})
    assert b.built
    with pytest.raises(InvalidStateError):
        b.build({"y": b.relu(x)})
    with pytest.raises(InvalidStateError):
        b.relu(x)
    with pytest.raises(InvalidStateError):
        b.input("z", desc([1]))
    assert graph.input_descriptors == {"x": desc([2])}


def test_graph_inputs_are_only_those_reachable_from_the_outputs(b):
    x = b.input("x", desc([2]))
    unused = b.input("unused", desc([3]))
    b.relu(unused)
    graph = b.build({"y": b.relu(x)})
    assert set(graph.inputs) == {"x"}


def test_graph_without_inputs_runs():
    ctx = Context()
    b = ctx.graph_builder()
    c = b.constant(desc([2]), np.array([-1, 3], np.float32))
    g = b.build({"y": b.relu(c)})
    assert ctx.compute(g, {})["y"].tolist() == [0, 3]


def test_builder_on_destroyed_context_is_an_invalid_state():
    ctx = Context()
    b = ctx.graph_builder()
    x = b.input("x", desc([2]))
    ctx.destroy()
    with pytest.raises(InvalidStateError):
        ctx.graph_builder()
    with pytest.raises(InvalidStateError):
        b.relu(x)
    with pytest.raises(InvalidStateError):
        b.build({"y": x})


def test_constant_scalar_overload_casts_the_number(b):
    c = b.constant_scalar("int8", 300.0)
    assert c.shape == () and int(c.value) == 127
    c = b.constant_scalar("uint32", -5)
    assert int(c.value) == 0
