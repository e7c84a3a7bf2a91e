"""The ONNX models of the ORT-web benchmark (tools/bench_ort.py), built with the
PyPI `onnx` package and seeded random weights (the same bytes every time).

- squeezenet, shufflenet, inception_v1, resnet50: onnx's shipped "light" nets
  (onnx/backend/test/data/light: the model zoo's graphs whose weights were
  replaced by ConstantOfShape nodes); every float weight becomes a seeded
  random initializer (He-scaled filters, batch-norm statistics near identity),
  weights leave the graph inputs (IR 8), so every runtime sees constants.
- shufflenet_add: an EXTRA row, not a benchmark model of issue 17: ShuffleNet with
  each 2-input `Sum` rewritten as `Add` (the same weights, the same maths: one
  float32 addition per element either way). ORT's WebNN EP has no builder for
  ONNX `Sum`, so it cuts the real ShuffleNet into 14 WebNN graphs with its own
  wasm Sum between them; with `Add` it hands the polyfill the whole network as
  one graph. The row shows the polyfill without ORT's partition boundaries; it
  never replaces the real ShuffleNet row.
- mlp: 2 layers on a 4x64 input (MatMul+Add+Relu, MatMul+Add).
- transformer: one pre-norm encoder block, 16 tokens x 64 features, 4 heads,
  feed-forward 256 with erf GELU (opset 17: LayerNormalization).
- resnet50_add (a variant, only when asked for with --models): ResNet50 with each
  two-input Sum written as Add, for the same reason (17 WebNN graphs -> 1).
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

LIGHT_NETS = {"squeezenet": "light_squeezenet", "shufflenet": "light_shufflenet",
              "inception_v1": "light_inception_v1", "resnet50": "light_resnet50"}
TITLES = {"squeezenet": "SqueezeNet 1.0 (onnx light net)", "shufflenet": "ShuffleNet (onnx light net)",
          "shufflenet_add": "extra: ShuffleNet, Sum→Add (one WebNN partition; not the benchmark model)",
          "inception_v1": "Inception v1 (onnx light net)", "resnet50": "ResNet50 (onnx light net)",
          "mlp": "2-layer MLP (4x64)", "transformer": "one transformer block (16 tokens)"}
MODELS = list(TITLES)
# A light net with each two-input Sum as Add (the same function): ORT's WebNN EP (1.30) has no Sum
# builder, so it cuts ShuffleNet and ResNet50 into 14 and 17 WebNN graphs around their residual Sums;
# with Add it hands each network over as one graph. shufflenet_add is in the default list as a
# labelled extra row; resnet50_add only runs when asked for.
SUM_AS_ADD = {"shufflenet_add": "shufflenet", "resnet50_add": "resnet50"}
TITLES["resnet50_add"] = "extra: ResNet50, Sum→Add (one WebNN partition; not the benchmark model)"
VERSION = 1  # bump when a model changes: cached files are rebuilt


def _light(name: str, seed: int):
    import onnx
    from onnx import helper, numpy_helper

    path = Path(os.path.dirname(onnx.__file__)) / "backend" / "test" / "data" / "light" / f"{LIGHT_NETS[name]}.onnx"
    m = onnx.load(str(path))
    g = m.graph
    rng = np.random.default_rng(seed)
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    # weight name -> shape, from ConstantOfShape nodes and float initializers
    shapes = {}
    nodes = []
    for n in g.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            shapes[n.output[0]] = tuple(int(d) for d in inits[n.input[0]])
        else:
            nodes.append(n)
    for k, v in inits.items():
        if v.dtype == np.float32:
            shapes[k] = v.shape
    role = {}  # weight -> (consumer op, input slot)
    for n in nodes:
        for i, x in enumerate(n.input):
            if x in shapes:
                role.setdefault(x, (n.op_type, i))
    weights = []
    for w, shape in sorted(shapes.items()):
        op, slot = role.get(w, ("", 0))
        if op == "BatchNormalization":
            value = {1: 1 + 0.1 * rng.standard_normal(shape), 2: 0.1 * rng.standard_normal(shape),
                     3: 0.1 * rng.standard_normal(shape), 4: 1 + 0.2 * rng.random(shape)}[slot]
        elif len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            value = rng.standard_normal(shape) * np.sqrt(1.0 / fan_in)
        else:
            value = 0.05 * rng.standard_normal(shape)
        weights.append(numpy_helper.from_array(np.asarray(value, np.float32), w))
    kept = [t for t in g.initializer if t.name not in shapes and not t.name.endswith("__SHAPE")]
    produced = {o for n in nodes for o in n.output}
    inputs = [i for i in g.input if i.name not in shapes and i.name not in inits and i.name not in produced]
    graph = helper.make_graph(nodes, name, inputs, list(g.output), initializer=kept + weights)
    model = helper.make_model(graph, opset_imports=list(m.opset_import), producer_name="webnn-polyfill bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def sum_as_add(model):
    """A copy of `model` whose 2-input Sum nodes are Add nodes (elementwise, same
    shapes in the light nets: the same float32 addition); everything else unchanged."""
    import onnx

    out = onnx.ModelProto()
    out.CopyFrom(model)
    for n in out.graph.node:
        if n.op_type == "Sum" and len(n.input) == 2:
            n.op_type = "Add"
    out.graph.name = model.graph.name + "_sum_as_add"
    onnx.checker.check_model(out)
    return out


def _mlp(seed: int):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    w = lambda name, *shape: numpy_helper.from_array(  # noqa: E731
        (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32), name)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h2"]), helper.make_node("MatMul", ["h2", "w2"], ["h3"]),
             helper.make_node("Add", ["h3", "b2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 64])],
                              initializer=[w("w1", 64, 64), w("b1", 64), w("w2", 64, 64), w("b2", 64)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _transformer(seed: int, tokens=16, d=64, heads=4, ffn=256):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    inits = []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(name, *shape):
        return const(name, (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32))

    hd = d // heads
    N = helper.make_node
    nodes = [N("LayerNormalization", ["x", const("ln1_g", np.ones(d, np.float32)), const("ln1_b", np.zeros(d, np.float32))],
               ["n1"], axis=-1, epsilon=1e-5)]
    const("heads_shape", np.array([1, tokens, heads, hd], np.int64))
    const("model_shape", np.array([1, tokens, d], np.int64))
    for p in "qkv":
        nodes += [N("MatMul", ["n1", weight(f"w{p}", d, d)], [f"{p}0"]),
                  N("Add", [f"{p}0", weight(f"b{p}", d)], [f"{p}1"]),
                  N("Reshape", [f"{p}1", "heads_shape"], [f"{p}2"]),
                  N("Transpose", [f"{p}2"], [f"{p}3"], perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3])]
    nodes += [N("MatMul", ["q3", "k3"], ["s0"]),
              N("Mul", ["s0", const("scale", np.array(1 / np.sqrt(hd), np.float32))], ["s1"]),
              N("Softmax", ["s1"], ["p"], axis=-1),
              N("MatMul", ["p", "v3"], ["a0"]),
              N("Transpose", ["a0"], ["a1"], perm=[0, 2, 1, 3]),
              N("Reshape", ["a1", "model_shape"], ["a2"]),
              N("MatMul", ["a2", weight("wo", d, d)], ["o0"]),
              N("Add", ["o0", weight("bo", d)], ["o1"]),
              N("Add", ["x", "o1"], ["r1"]),
              N("LayerNormalization", ["r1", const("ln2_g", np.ones(d, np.float32)),
                                       const("ln2_b", np.zeros(d, np.float32))], ["n2"], axis=-1, epsilon=1e-5),
              N("MatMul", ["n2", weight("w1", d, ffn)], ["f0"]),
              N("Add", ["f0", weight("b1", ffn)], ["f1"]),
              # GELU as BERT exports it: 0.5 x (1 + erf(x / sqrt 2))
              N("Mul", ["f1", const("inv_sqrt2", np.array(1 / np.sqrt(2), np.float32))], ["g0"]),
              N("Erf", ["g0"], ["g1"]),
              N("Add", ["g1", const("one", np.array(1, np.float32))], ["g2"]),
              N("Mul", ["f1", "g2"], ["g3"]),
              N("Mul", ["g3", const("half", np.array(0.5, np.float32))], ["g4"]),
              N("MatMul", ["g4", weight("w2", ffn, d)], ["f2"]),
              N("Add", ["f2", weight("b2", d)], ["f3"]),
              N("Add", ["r1", "f3"], ["y"])]
    graph = helper.make_graph(nodes, "transformer_block",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, tokens, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, tokens, d])],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build(name: str, seed: int = 17):
    """The onnx.ModelProto of one benchmark model."""
    if name in LIGHT_NETS:
        return _light(name, seed)
    if name in SUM_AS_ADD:
        return sum_as_add(_light(SUM_AS_ADD[name], seed))
    return {"mlp": _mlp, "transformer": _transformer}[name](seed)


def ensure(folder: Path, names=MODELS) -> dict:
    """Write folder/<name>.onnx for each model (cached by VERSION); returns
    {name: {"file", "inputs": [(name, shape)]}}."""
    import onnx

    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for name in names:
        path = folder / f"{name}.v{VERSION}.onnx"
        if not path.exists():
            model = build(name)
            tmp = path.with_suffix(".tmp")
            onnx.save(model, str(tmp))
            tmp.replace(path)
        model = onnx.load(str(path), load_external_data=False)
        inits = {t.name for t in model.graph.initializer}
        inputs = [(i.name, [d.dim_value for d in i.type.tensor_type.shape.dim])
                  for i in model.graph.input if i.name not in inits]
        out[name] = {"file": path.name, "inputs": inputs, "title": TITLES[name]}
    return out
