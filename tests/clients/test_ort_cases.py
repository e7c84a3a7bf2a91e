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


def test_whole_network_tolerance_is_1e3_plus_1e3_of_the_reference():
    ref = np.array([0.0, 100.0, -2.0, np.nan])
    assert ort_web.network_mismatch(np.array([0.00099, 100.1009, -2.0029, np.nan]), ref) is None
    assert "1/4 values differ" in ort_web.network_mismatch(np.array([0.0011, 100.0, -2.0, np.nan]), ref)
    assert "1/4 values differ" in ort_web.network_mismatch(np.array([0.0, 100.1021, -2.0, np.nan]), ref)
    assert "1/4 values differ" in ort_web.network_mismatch(np.array([0.0, 100.0, -2.0, 0.0]), ref)
    assert "shape" in ort_web.network_mismatch(np.zeros((1, 4)), ref)
    # the issue-33 symptom: every probability 1.0 where the reference is a distribution
    probs = np.full(1000, 1e-3)
    assert "1000/1000 values differ" in ort_web.network_mismatch(np.ones(1000), probs)


_PLACED = "2026-11-28 19:41:31.31 [V:onnxruntime:, session_state.cc:1266 VerifyEachNodeIsAssignedToAnEp]"
_LISTED = "2026-11-28 19:41:31.31 [V:onnxruntime:, session_state.cc:1268 VerifyEachNodeIsAssignedToAnEp]"
_CAPABILITY = ("[W:onnxruntime:, webnn_execution_provider.cc:166 GetCapability] WebNNExecutionProvider::GetCapability, "
               "number of partitions supported by WebNN: 2 number of nodes in the graph: 4 number of nodes supported by WebNN: 3")


def _net_run(cpu_ops, outputs):
    log = [_CAPABILITY, f"{_PLACED}  Node(s) placed on [WebNNExecutionProvider]. Number of nodes: 2",
           f"{_PLACED}  Node(s) placed on [CPUExecutionProvider]. Number of nodes: {len(cpu_ops)}"]
    log += [f"{_LISTED}   {op} (n{i})" for i, op in enumerate(cpu_ops)]
    return {"log": log, "builds": 2, "dispatches": 2, "outputs": outputs}


def test_a_benchmark_net_runs_on_webnn_when_only_ops_without_an_ort_webnn_builder_are_elsewhere():
    case = ort_cases.Case("net", "nets", b"")
    ref = {"y": _out(np.array([0.25, 0.75], np.float32))}
    close = {"y": _out(np.array([0.2505, 0.7505], np.float32))}  # within 1e-3 + 1e-3·|ref|, not ORT's 1e-4
    v = ort_web.judge(case, "cpu", _net_run(["Sum"], close), ref, "wasm")
    assert (v.accepted, v.ran, v.matched) == (True, True, True), v
    v = ort_web.judge(case, "cpu", _net_run(["Conv"], close), ref, "wasm")
    assert v.accepted and not v.ran and "CPUExecutionProvider" in v.why
    wrong = {"y": _out(np.array([1.0, 1.0], np.float32))}
    v = ort_web.judge(case, "cpu", _net_run(["Sum"], wrong), ref, "wasm")
    assert v.ran and not v.matched
    assert ort_web.network_failures([v]) == [f"[cpu] net: {v.why}"]
    # a whole network of the models group the EP refused is ORT's choice, not a failure; a net must run
    refused = ort_web.judge(ort_cases.Case("lstm", "models", b""), "cpu", {"log": [], "builds": 0}, ref, "wasm")
    not_run = ort_web.judge(case, "cpu", {"log": [], "builds": 0, "error": "page: timeout"}, ref, "wasm")
    assert ort_web.network_failures([refused]) == [] and len(ort_web.network_failures([not_run])) == 1


def test_bench_ort_compares_every_output_with_the_wasm_ep():
    import bench_ort

    def page(*values):
        return {"models": {"m": {"outputs": {"y": {"dims": [len(values)], "data": list(values)}}}}}

    res = {"wasm1": page(0.25, 0.75), "webnn": page(0.2505, 0.75), "webnn1": page(1.0, 1.0)}
    checks = bench_ort.output_checks(res)
    assert checks[("webnn", "m")] is None and "2/2 values differ" in checks[("webnn1", "m")]
    res["webnn"]["models"]["m"] = {"error": "boom"}
    assert "boom" in bench_ort.output_checks(res)[("webnn", "m")]
    assert bench_ort.output_checks({"webnn": page(1.0)}) == {}  # no reference: nothing claimed
