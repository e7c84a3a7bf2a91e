"""webnn_polyfill: the Python API over the core (in-process; the wheel install
is tests/dist/test_python_package.py). Expected values come from numpy."""
import numpy as np
import pytest

import webnn_polyfill as webnn
from webnn_polyfill import MLGraphBuilder, ml


@pytest.fixture
def context():
    return ml.create_context()


def test_idl_and_snake_case_names_build_the_same_graph(context):
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 4)).astype(np.float32)
    mean, var = np.array([0.5, -1, 2], np.float32), np.array([1, 4, 0.25], np.float32)
    scale, bias = np.array([2, 1, 0.5], np.float32), np.array([0, 1, -1], np.float32)
    shape = [1, 3, 1, 1]
    expected = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-3) * scale.reshape(shape) + bias.reshape(shape)
    results = []
    for spelling in ("idl", "snake"):
        b = MLGraphBuilder(context) if spelling == "idl" else context.create_graph_builder()
        inp = b.input("x", {"dataType": "float32", "shape": list(x.shape)} if spelling == "idl" else
                      {"data_type": "float32", "shape": x.shape})
        c = [b.constant(a) for a in (mean, var, scale, bias)]
        if spelling == "idl":
            y = b.batchNormalization(inp, c[0], c[1], {"scale": c[2], "bias": c[3], "epsilon": 1e-3})
        else:
            y = b.batch_normalization(inp, c[0], c[1], scale=c[2], bias=c[3], epsilon=1e-3)
        results.append(context.compute(b.build({"y": y}), {"x": x})["y"])
    for r in results:
        np.testing.assert_allclose(r, expected, rtol=1e-5, atol=1e-5)


def test_options_keys_in_both_spellings(context):
    b = MLGraphBuilder(context)
    x = b.input("x", [1, 3, 3, 1], "float32")  # pywebnn's input(name, shape, data_type)
    w = b.constant(np.ones((2, 2, 1, 1), np.float32))  # hwio
    y1 = b.conv2d(x, w, input_layout="nhwc", filter_layout="hwio")
    y2 = b.conv2d(x, w, {"inputLayout": "nhwc", "filterLayout": "hwio"})
    g = b.build({"a": y1, "b": y2})
    image = np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1)
    out = context.compute(g, {"x": image})
    box = np.array([[image[0, i:i + 2, j:j + 2, 0].sum() for j in range(2)] for i in range(2)]).reshape(1, 2, 2, 1)
    np.testing.assert_array_equal(out["a"], box)
    np.testing.assert_array_equal(out["b"], box)
    assert y1.shape == [1, 2, 2, 1] and y1.data_type == y1.dataType == "float32"


def test_sequence_results_constants_and_gather_nd(context):
    b = MLGraphBuilder(context)
    a = b.input("a", {"dataType": "float32", "shape": [2, 2]})
    parts = b.split(b.concat([a, a], 0), 2)
    assert isinstance(parts, list) and [p.shape for p in parts] == [[2, 2], [2, 2]]
    idx = b.constant({"dataType": "int32", "shape": [2, 2]}, np.array([[0, 1], [1, 0]], np.int32))
    g1 = b.gather_nd(parts[1], idx)
    s = b.add(g1, b.constant("float32", 0.5))
    out = context.compute(b.build({"p0": parts[0], "s": s}), {"a": np.array([[1, 2], [3, 4]], np.float32)})
    np.testing.assert_array_equal(out["p0"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(out["s"], [2.5, 3.5])


def test_tensors_dispatch_and_read(context):
    b = MLGraphBuilder(context)
    x = b.input("x", {"dataType": "int32", "shape": [4]})
    g = b.build({"y": b.mul(x, x)})
    tx = context.createTensor({"dataType": "int32", "shape": [4], "writable": True})
    ty = context.create_tensor({"dataType": "int32", "shape": [4], "readable": True})
    context.writeTensor(tx, np.array([1, -2, 3, -4], np.int32))
    context.dispatch(g, {"x": tx}, {"y": ty})
    out = np.zeros(4, np.int32)
    got = context.readTensor(ty, out)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [1, 4, 9, 16])
    np.testing.assert_array_equal(out, [1, 4, 9, 16])
    with pytest.raises(webnn.WebNNTypeError, match="not readable"):
        context.read_tensor(tx)
    filled = np.zeros(4, np.int32)
    context.compute(g, {"x": np.array([5, 6, 7, 8], np.int32)}, {"y": filled})
    np.testing.assert_array_equal(filled, [25, 36, 49, 64])


def test_errors_are_typed(context):
    with pytest.raises(webnn.WebNNTypeError):
        MLGraphBuilder("not a context")
    b = MLGraphBuilder(context)
    x = b.input("x", {"dataType": "float32", "shape": [2, 3]})
    with pytest.raises(webnn.WebNNTypeError, match="lbl"):
        b.matmul(x, x, label="lbl")  # [2,3] x [2,3]: inner dimensions differ
    with pytest.raises(AttributeError):
        b.no_such_operation
    with pytest.raises(webnn.NotSupportedError):
        ml.create_context(device_type="tpu")
    g = b.build({"y": b.relu(x)})
    with pytest.raises(webnn.InvalidStateError):
        b.relu(x)  # after build()
    context.destroy()
    with pytest.raises(webnn.InvalidStateError):
        context.compute(g, {"x": np.zeros((2, 3), np.float32)})


def test_graph_describes_its_inputs_and_outputs(context):
    b = MLGraphBuilder(context)
    x = b.input("x", {"dataType": "float16", "shape": [3]})
    g = b.build({"y": b.cast(x, "int32")})
    assert g.inputs == {"x": {"dataType": "float16", "shape": [3]}}
    assert g.outputs == {"y": {"dataType": "int32", "shape": [3]}}


def test_numpy_reference_kernels_give_the_same_result():
    x = np.random.default_rng(3).standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = np.random.default_rng(4).standard_normal((3, 2, 3, 3)).astype(np.float32)
    # conv2d by numpy: sliding-window dot products (no padding, stride 1).
    windows = np.lib.stride_tricks.sliding_window_view(x[0], (3, 3), axis=(1, 2))  # (2, 3, 3, 3, 3)
    expected = np.einsum("cijkl,ockl->oij", windows, w)[None]
    for fast in (True, False):
        context = ml.create_context(fast_paths=fast)
        b = MLGraphBuilder(context)
        y = b.conv2d(b.input("x", [1, 2, 5, 5], "float32"), b.constant(w))
        out = context.compute(b.build({"y": y}), {"x": x})["y"]
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)
