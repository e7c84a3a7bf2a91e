"""The ONNX models of ./dev bench ort (tools/bench_ort/models.py): well formed,
weights as constants (no graph inputs but the data), and the two built by hand
compute what their numpy definitions say (onnx's reference evaluator)."""
import math
import sys
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="the PyPI onnx package is not installed (./dev setup installs it)")
from onnx.reference import ReferenceEvaluator  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "bench_ort"))
import models  # noqa: E402


@pytest.mark.parametrize("name", ["squeezenet", "shufflenet"])
def test_light_nets_have_constant_weights(name):
    m = models.build(name)
    onnx.checker.check_model(m)
    inits = {t.name for t in m.graph.initializer}
    assert [i.name for i in m.graph.input if i.name not in inits] == [i.name for i in m.graph.input]
    assert len(m.graph.input) == 1 and [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim] == [1, 3, 224, 224]
    assert not any(n.op_type == "ConstantOfShape" for n in m.graph.node)
    # every float weight a node reads is an initializer, and seeded: the same bytes twice
    again = {t.name: t.raw_data for t in models.build(name).graph.initializer}
    assert all(again[t.name] == t.raw_data for t in m.graph.initializer)


def _weights(m):
    return {t.name: onnx.numpy_helper.to_array(t) for t in m.graph.initializer}


def test_mlp_matches_numpy():
    m = models.build("mlp")
    w = _weights(m)
    x = np.random.default_rng(0).standard_normal((4, 64)).astype(np.float32)
    (y,) = ReferenceEvaluator(m).run(None, {"x": x})
    h = np.maximum(x @ w["w1"] + w["b1"], 0)
    np.testing.assert_allclose(y, h @ w["w2"] + w["b2"], rtol=1e-5, atol=1e-5)


def test_transformer_block_matches_numpy():
    m = models.build("transformer")
    w = _weights(m)
    x = np.random.default_rng(1).standard_normal((1, 16, 64)).astype(np.float64)

    def ln(v):
        return (v - v.mean(-1, keepdims=True)) / np.sqrt(v.var(-1, keepdims=True) + 1e-5)

    n1 = ln(x)
    q, k, v = ((n1 @ w[f"w{p}"] + w[f"b{p}"]).reshape(1, 16, 4, 16).transpose(0, 2, 1, 3) for p in "qkv")
    s = q @ k.transpose(0, 1, 3, 2) / 4.0
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    a = (p @ v).transpose(0, 2, 1, 3).reshape(1, 16, 64)
    r1 = x + a @ w["wo"] + w["bo"]
    f = ln(r1) @ w["w1"] + w["b1"]
    gelu = 0.5 * f * (1 + np.vectorize(math.erf)(f / math.sqrt(2)))
    expected = r1 + gelu @ w["w2"] + w["b2"]
    (y,) = ReferenceEvaluator(m).run(None, {"x": x.astype(np.float32)})
    np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_shufflenet_add_is_shufflenet_with_each_sum_as_add():
    """The extra bench row: every node, weight and attribute of the benchmark's ShuffleNet,
    each 2-input Sum an Add of two same-shaped tensors (one float32 addition either way)."""
    real, extra = models.build("shufflenet"), models.build("shufflenet_add")
    onnx.checker.check_model(extra)
    assert [(t.name, t.raw_data) for t in extra.graph.initializer] == [(t.name, t.raw_data) for t in real.graph.initializer]
    assert list(extra.graph.input) == list(real.graph.input) and list(extra.graph.output) == list(real.graph.output)
    assert len(extra.graph.node) == len(real.graph.node)
    rewritten = 0
    for a, b in zip(real.graph.node, extra.graph.node):
        if a.op_type == "Sum":
            assert b.op_type == "Add" and len(a.input) == 2
            assert (list(a.input), list(a.output), list(a.attribute)) == (list(b.input), list(b.output), list(b.attribute))
            rewritten += 1
        else:
            assert a == b
    assert rewritten == 13 and not any(n.op_type == "Sum" for n in extra.graph.node)
    # no broadcasting: both operands of every Add have the same inferred shape
    inferred = onnx.shape_inference.infer_shapes(extra)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in inferred.graph.value_info}
    for n in extra.graph.node:
        if n.op_type == "Add":
            assert shapes[n.input[0]] == shapes[n.input[1]] and len(shapes[n.input[0]]) == 4
