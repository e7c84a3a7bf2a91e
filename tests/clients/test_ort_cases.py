"""tools/ort_cases.py builds ORT's op tests as ORT's runner does (static shapes added), and
tools/ort_web.tensors_equal is ORT's TensorResultValidator for webnn (checked on hand-made data)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the onnx package builds the models (pip install -r requirements-dev.txt)")

import ort_cases  # noqa: E402
import ort_web  # noqa: E402


def _out(array, type_="float32"):
    import base64
    return {"type": type_, "dims": list(array.shape), "data": base64.b64encode(np.ascontiguousarray(array).tobytes()).decode()}


def test_tolerances_are_ort_webnn_ones():
    ref = ort_cases.Feed("float32", [3], np.array([1.0, 0.0, np.nan], np.float32))
    assert ort_web.tensors_equal(_out(np.array([1.0, 0.00009, np.nan], np.float32)), ref) is None
    assert ort_web.tensors_equal(_out(np.array([1.0000005, 0.0, np.nan], np.float32)), ref) is None
    assert "differ" in ort_web.tensors_equal(_out(np.array([1.0, 0.0002, np.nan], np.float32)), ref)
    assert "NaN" in ort_web.tensors_equal(_out(np.array([1.0, 0.0, 0.0], np.float32)), ref)
    assert "shape" in ort_web.tensors_equal(_out(np.zeros((1, 3), np.float32)), ref)
    ints = ort_cases.Feed("int64", [2], np.array([1, 2], np.int64))
    assert ort_web.tensors_equal(_out(np.array([1, 2], np.int64), "int64"), ints) is None
    assert ort_web.tensors_equal(_out(np.array([1, 3], np.int64), "int64"), ints)
    assert "type" in ort_web.tensors_equal(_out(np.array([1, 2], np.int32), "int32"), ints)


def test_op_case_is_a_one_node_model_with_the_case_static_shapes():
    test = {"name": "t", "operator": "Clip", "attributes": [{"name": "x", "data": 1, "type": "int"}],
            "cases": []}
    case = {"name": "c", "inputs": [{"data": [1, -2, 3, 4, 5, 6], "dims": [2, 3], "type": "float32"},
                                    {"data": None, "type": "float32"},
                                    {"data": [300], "dims": [], "type": "uint8"}],
            "outputs": [{"data": [1, 0, 1, 1, 1, 1], "dims": [2, 3], "type": "float32"}]}
    built = ort_cases.op_case(test, case, 21, "clip")
    model = onnx.load_from_string(built.model)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", 21)]
    [node] = model.graph.node
    assert (node.op_type, list(node.input), list(node.output)) == ("Clip", ["input_0", "", "input_2"], ["output_0"])
    dims = [[d.dim_value for d in v.type.tensor_type.shape.dim] for v in model.graph.input]
    assert dims == [[2, 3], []]
    assert built.feeds["input_2"].array.tolist() == 44  # wraps like the JS Uint8Array ORT's runner fills


def test_the_test_data_gives_the_issue_case_counts():
    data = ort_web.testdata()
    if data is None:
        pytest.skip(f"no ORT test data in {ort_web.TESTDATA} (ort-testdata-{ort_web.ORT_VERSION}.tar.xz)")
    assert len(ort_cases.op_cases(data)) == 646
    assert len(ort_cases.webnn_node_tests(data)) == 296
