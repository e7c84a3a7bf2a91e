"""The small ONNX cases of tools/bench_ort/layout_probe.py (which layout ORT's WebNN EP
builds conv2d in) are what their names say: checked with onnx's reference evaluator
against numpy, and the variants differ from the base case only where they claim to."""
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the PyPI onnx package is not installed (./dev setup installs it)")
from onnx.reference import ReferenceEvaluator  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "bench_ort"))
import layout_probe  # noqa: E402

X = np.random.default_rng(1).standard_normal((1, 16, 14, 14)).astype(np.float32)


def _run(model):
    (y,) = ReferenceEvaluator(model).run(None, {"x": X})
    return y


def _weights(model):
    return {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}


def _channel_shuffle(x, g):
    n, c, h, w = x.shape
    return x.reshape(n, g, c // g, h, w).transpose(0, 2, 1, 3, 4).reshape(n, c, h, w)


def _grouped_1x1(x, w, b, g):
    """A grouped 1x1 convolution in numpy (float64 accumulation, compared with a tolerance)."""
    n, c, h, wd = x.shape
    o = w.shape[0]
    xs = x.astype(np.float64).reshape(n, g, c // g, h * wd)
    ws = w.astype(np.float64).reshape(g, o // g, c // g)
    y = np.einsum("goc,ngcp->ngop", ws, xs).reshape(n, o, h, wd)
    return y + b.reshape(1, o, 1, 1)


@pytest.mark.parametrize("case", layout_probe.SMALL)
def test_small_cases_are_valid_onnx(case):
    m = layout_probe.small(case)
    onnx.checker.check_model(m, full_check=True)
    assert m.ir_version == 8 and m.opset_import[0].version == 9
    assert [i.name for i in m.graph.input] == ["x"]  # weights are constants, not graph inputs


def test_shuffle_is_a_channel_shuffle():
    np.testing.assert_array_equal(_run(layout_probe.small("shuffle")), _channel_shuffle(X, 4))


def test_conv_shuffle_and_its_4d_form_compute_the_same():
    five, four = layout_probe.small("conv_shuffle"), layout_probe.small("conv_shuffle4d")
    w = _weights(five)
    want = _channel_shuffle(_grouped_1x1(X, w["w"], w["b"], 4), 4)
    np.testing.assert_allclose(_run(five), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(_run(four), _run(five))
    assert [n.op_type for n in five.graph.node] == ["Conv", "Reshape", "Transpose", "Reshape"]
    assert [len(onnx.numpy_helper.to_array(t)) for t in five.graph.initializer if t.name == "s1"] == [5]
    assert [len(onnx.numpy_helper.to_array(t)) for t in four.graph.initializer if t.name == "s1"] == [4]


def test_conv_bn_is_a_conv_then_batch_normalization():
    # opset 15: onnx's reference BatchNormalization for opsets 9-14 applies its momentum default and
    # uses batch statistics (training semantics); the graph is the same at every opset
    m = layout_probe.small("conv_bn", opset=15)
    assert m.graph.node == layout_probe.small("conv_bn").graph.node
    w = _weights(m)
    conv = ReferenceEvaluator(onnx.helper.make_model(onnx.helper.make_graph(
        [m.graph.node[0]], "c", list(m.graph.input),
        [onnx.helper.make_tensor_value_info("c", onnx.TensorProto.FLOAT, None)], [m.graph.initializer[0]]),
        opset_imports=list(m.opset_import))).run(None, {"x": X})[0]
    scale = w["bn_s"] / np.sqrt(w["bn_v"] + 1e-5)
    want = (conv - w["bn_m"].reshape(1, -1, 1, 1)) * scale.reshape(1, -1, 1, 1) + w["bn_b"].reshape(1, -1, 1, 1)
    np.testing.assert_allclose(_run(m), want, rtol=1e-5, atol=1e-5)
    assert [n.op_type for n in m.graph.node] == ["Conv", "BatchNormalization"]


def test_grouped_and_depthwise_cases_have_their_groups():
    (g,) = [a.i for a in layout_probe.small("gconv").graph.node[0].attribute if a.name == "group"]
    (d,) = [a.i for a in layout_probe.small("dwconv").graph.node[0].attribute if a.name == "group"]
    assert (g, d) == (4, 16)
    m = layout_probe.small("gconv")
    w = _weights(m)
    np.testing.assert_allclose(_run(m), _grouped_1x1(X, w["w"], w["b"], 4), rtol=1e-5, atol=1e-5)


def test_variants_change_only_what_they_name():
    base = layout_probe.small("unit")
    v13 = layout_probe.small("unit", opset=13)
    ir3 = layout_probe.small("conv", ir=3, weights_as_inputs=True)
    assert v13.opset_import[0].version == 13 and v13.graph.node == base.graph.node
    np.testing.assert_array_equal(_run(v13), _run(base))
    assert ir3.ir_version == 3
    assert {i.name for i in ir3.graph.input} == {"x"} | {t.name for t in ir3.graph.initializer}


def test_summary_counts_builder_calls_by_layout():
    calls = [["conv2d", "nchw", "", 4], ["conv2d", "nhwc", "", 4], ["conv2d", "nchw", "", 4],
             ["maxPool2d", "nhwc", "", 4], ["transpose", "nchw", "02134", 5], ["reshape", "nchw", "", 5],
             ["relu", "nchw", "", 4]]
    assert layout_probe.summarise(calls) == {"conv nchw": 2, "conv nhwc": 1, "pool nhwc": 1, "transpose 02134": 1,
                                             "reshape 5-D": 1}
