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


def test_bench_table_shows_the_partitions_and_labels_the_extra_row():
    """tools/bench_ort.py's table: ORT's WebNN calls per run from the page's counts, and the
    Sum→Add row printed as an extra with the reason under the table (only when it ran)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
    import bench_ort

    def run(ms, calls=None):
        m = {"medianMs": ms, "minMs": ms, "createMs": 10.0, "output": [1.0, 2.0]}
        if calls:
            m["callsPerRun"] = dict(zip(("write", "dispatch", "read"), calls))
        return m

    res = {k: {"label": k, "models": {}} for k in ("wasm1", "wasmN", "webnn1", "webnn")}
    for k in res:
        res[k]["models"]["shufflenet"] = run(20.0, (14, 14, 27) if k.startswith("webnn") else None)
        res[k]["models"]["shufflenet_add"] = run(10.0, (1, 1, 1) if k.startswith("webnn") else None)
    text = bench_ort.table(res, ["shufflenet", "shufflenet_add"])
    rows = [line for line in text.splitlines() if line.startswith("| ShuffleNet") or line.startswith("| extra:")]
    assert rows[0].startswith("| ShuffleNet (onnx light net) |") and rows[0].endswith("| 14 / 14 / 27 |")
    assert rows[1].startswith("| extra: ShuffleNet, Sum→Add") and rows[1].endswith("| 1 / 1 / 1 |")
    assert 'The "extra" row is not a benchmark model' in text
    assert 'The "extra" row' not in bench_ort.table(res, ["shufflenet"])


@pytest.mark.parametrize("name, base, sums", [("shufflenet_add", "shufflenet", 13), ("resnet50_add", "resnet50", 16)])
def test_sum_as_add_variants_differ_only_in_the_residual_sums(name, base, sums):
    """The variants (tools/bench_ort/models.SUM_AS_ADD) are the light net with its two-input Sums as Add."""
    a, b = models.build(base), models.build(name)
    assert [n.op_type for n in a.graph.node].count("Sum") == sums
    assert [n.op_type for n in b.graph.node].count("Sum") == 0
    assert [(n.op_type, list(n.input)) for n in b.graph.node] == [
        ("Add" if n.op_type == "Sum" else n.op_type, list(n.input)) for n in a.graph.node]
    assert [t.raw_data for t in a.graph.initializer] == [t.raw_data for t in b.graph.initializer]
    assert (name in models.MODELS) == (name == "shufflenet_add")  # resnet50_add only when asked for
