"""The cases tools/ort_web.py runs in ONNX Runtime Web: ONNX models with static input shapes
and their feeds, built with the PyPI `onnx` package.

- op_cases(dir): ORT's operator test data (js/web/test/data/ops/*.jsonc), one one-node model per
  case, built as ORT's own runner builds it (js/web/test/test-runner.ts, ProtoOpTestContext:
  node `operator` in the test's opset domain, inputs `input_i`, outputs `output_i`, omitted
  ones as ''; the opset defaults to the highest node-test opset, script/test-runner-cli.ts),
  except that every input gets the case's own static shape (the WebNN EP refuses dynamic ones).
- node_cases(dir): the ONNX backend node tests that suite-test-list.jsonc lists for `webnn`
  and the bundle holds (the opset-21 folder), inputs pinned to the shapes of test_data_set_0.
- model_cases(): whole networks: an MLP, a CNN with pooling and resize, a transformer block
  (Gather embeddings, LayerNormalization, attention-style MatMul/Softmax), an LSTM and a GRU.

Every case is a Case(name, group, model bytes, feeds, expected) where `expected` is the data's
own expected outputs when it has them (a second, independent reference).
"""
from __future__ import annotations

import json
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# test-runner.ts: model.irVersion = onnx.Version.IR_VERSION of ORT's bundled onnx proto.
IR_VERSION = 10
DTYPES = {"float32": np.float32, "float16": np.float16, "float64": np.float64, "int32": np.int32,
          "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64, "int8": np.int8, "uint8": np.uint8,
          "int16": np.int16, "uint16": np.uint16, "bool": np.bool_, "int4": np.int8, "uint4": np.uint8}
ELEM_TYPES = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "float64": TensorProto.DOUBLE,
              "int32": TensorProto.INT32, "uint32": TensorProto.UINT32, "int64": TensorProto.INT64,
              "uint64": TensorProto.UINT64, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8,
              "int16": TensorProto.INT16, "uint16": TensorProto.UINT16, "bool": TensorProto.BOOL,
              "int4": TensorProto.INT4, "uint4": TensorProto.UINT4, "string": TensorProto.STRING}
TYPE_NAMES = {v: k for k, v in ELEM_TYPES.items()}


@dataclass
class Feed:
    """One input or output: ORT's type name, dims and a numpy array (int4/uint4 unpacked)."""
    type: str
    dims: list
    array: np.ndarray


@dataclass
class Case:
    name: str
    group: str  # "ops", "node", "models" or "nets" (tools/ort_web.net_cases)
    model: bytes  # the ONNX bytes (empty when `url` serves them)
    feeds: dict = field(default_factory=dict)  # input name -> Feed
    expected: dict = field(default_factory=dict)  # output name -> Feed (the data's own answer)
    nodes: int = 1
    url: str = ""  # where the page fetches the model (large models: tools/ort_web.OrtPage serves /ortmodels/)


# ------------------------------------------------------------------ the test data bundle
def unpack(bundle: Path, into: Path) -> Path:
    """Unpack ../shared/ort-testdata/ort-testdata-<v>.tar.xz into `into` (once); returns the folder
    holding ops/, node/ and suite-test-list.jsonc."""
    marker = into / ".unpacked"
    if not marker.exists() or marker.read_text() != bundle.name:
        into.mkdir(parents=True, exist_ok=True)
        with tarfile.open(bundle) as tar:
            tar.extractall(into, filter="data")
        marker.write_text(bundle.name)
    return into


def read_jsonc(path: Path):
    """JSON with // and /* */ comments and trailing commas (ORT's .jsonc files)."""
    text, out, i, in_string = path.read_text(), [], 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\":
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif text.startswith("/*", i):
            i = text.index("*/", i) + 2
            continue
        else:
            out.append(c)
        i += 1
    return json.loads(re.sub(r",(\s*[\]}])", r"\1", "".join(out)))


def max_node_opset(data: Path) -> int:
    """script/test-runner-cli.ts: an op test without an opset gets the highest node-test opset."""
    return max(int(p.name[len("opset"):]) for p in (data / "node").iterdir() if p.name.startswith("opset"))


# ------------------------------------------------------------------ op test data
def _attribute(a: dict) -> onnx.AttributeProto:
    kind, value = a["type"], a["data"]
    if kind == "float":
        return helper.make_attribute(a["name"], float(value), attr_type=onnx.AttributeProto.FLOAT)
    if kind == "int":
        return helper.make_attribute(a["name"], int(value), attr_type=onnx.AttributeProto.INT)
    if kind == "string":
        return helper.make_attribute(a["name"], str(value), attr_type=onnx.AttributeProto.STRING)
    if kind == "floats":
        return helper.make_attribute(a["name"], [float(v) for v in value], attr_type=onnx.AttributeProto.FLOATS)
    if kind == "ints":
        return helper.make_attribute(a["name"], [int(v) for v in value], attr_type=onnx.AttributeProto.INTS)
    if kind == "strings":
        return helper.make_attribute(a["name"], [str(v) for v in value], attr_type=onnx.AttributeProto.STRINGS)
    raise ValueError(f"unsupported attribute type {kind}")  # as test-runner.ts


def _feed(t: dict) -> Feed:
    dtype = np.dtype(DTYPES[t["type"]])
    if dtype.kind in "iu" and dtype.itemsize < 8:
        # like the JS typed array ORT's runner fills: out-of-range integers wrap
        array = np.array(t["data"], dtype=np.int64).astype(dtype)
    else:
        array = np.array(t["data"], dtype=dtype)
    return Feed(t["type"], list(t["dims"]), array.reshape(t["dims"]))


def op_case(test: dict, case: dict, default_opset: int, file: str) -> Case:
    opset = test.get("opset") or {"domain": "", "version": default_opset}
    inputs, outputs = case["inputs"], case["outputs"]
    node = helper.make_node(test["operator"], [f"input_{i}" if t.get("data") is not None else ""
                                               for i, t in enumerate(inputs)],
                            [f"output_{i}" if t.get("data") is not None else "" for i, t in enumerate(outputs)],
                            name=test["operator"], domain=opset.get("domain") or None)
    node.attribute.extend(_attribute(a) for a in test.get("attributes") or [])
    graph_inputs = [helper.make_tensor_value_info(f"input_{i}", ELEM_TYPES[t["type"]], list(t["dims"]))
                    for i, t in enumerate(inputs) if t.get("data") is not None]
    graph_outputs = [helper.make_tensor_value_info(f"output_{i}", ELEM_TYPES[t["type"]], None)
                     for i, t in enumerate(outputs) if t.get("data") is not None]
    graph = helper.make_graph([node], test["name"], graph_inputs, graph_outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(opset.get("domain", ""), opset["version"])])
    model.ir_version = IR_VERSION
    return Case(name=f"{file}: {test['name']} / {case['name']}", group="ops", model=model.SerializeToString(),
                feeds={f"input_{i}": _feed(t) for i, t in enumerate(inputs) if t.get("data") is not None},
                expected={f"output_{i}": _feed(t) for i, t in enumerate(outputs) if t.get("data") is not None})


def op_cases(data: Path) -> list:
    default_opset = max_node_opset(data)
    cases = []
    for path in sorted((data / "ops").glob("*.jsonc")):
        for test in read_jsonc(path):
            for case in test["cases"]:
                cases.append(op_case(test, case, default_opset, path.stem))
    return cases


# ------------------------------------------------------------------ ONNX node tests
def webnn_node_tests(data: Path) -> list:
    """The names suite-test-list.jsonc lists under webnn.node that the bundle's opset folders hold
    (an `opset{7,8}/name` entry names other opsets: not in the bundle)."""
    listed = read_jsonc(data / "suite-test-list.jsonc")["webnn"]["node"]
    folders = [p for p in sorted((data / "node").iterdir()) if p.name.startswith("opset")]
    found = []
    for entry in listed:
        if "/" in entry:
            continue
        for folder in folders:
            if (folder / entry / "model.onnx").exists():
                found.append(folder / entry)
    return found


def _tensor_feed(path: Path) -> tuple:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    array = numpy_helper.to_array(t)
    return t.name, Feed(TYPE_NAMES[t.data_type], list(array.shape), array)


def node_case(folder: Path) -> Case:
    model = onnx.load(str(folder / "model.onnx"))
    data_set = folder / "test_data_set_0"
    initializers = {i.name for i in model.graph.initializer}
    real_inputs = [v for v in model.graph.input if v.name not in initializers]
    feeds, expected = {}, {}
    for i, value in enumerate(real_inputs):
        path = data_set / f"input_{i}.pb"
        if path.exists():
            _, feed = _tensor_feed(path)
            feeds[value.name] = feed
            # pin the input to the data's static shape
            shape = value.type.tensor_type.shape
            del shape.dim[:]
            for d in feed.dims:
                shape.dim.add().dim_value = d
    for i, value in enumerate(model.graph.output):
        path = data_set / f"output_{i}.pb"
        if path.exists():
            expected[value.name] = _tensor_feed(path)[1]
    return Case(name=f"{folder.parent.name}/{folder.name}", group="node", model=model.SerializeToString(),
                feeds=feeds, expected=expected, nodes=len(model.graph.node))


def node_cases(data: Path) -> list:
    return [node_case(folder) for folder in webnn_node_tests(data)]


# ------------------------------------------------------------------ whole networks
def _model(name: str, nodes: list, inputs: dict, outputs: list, weights: dict, opset: int = 21) -> Case:
    """inputs: name -> array (the feed, static shape); weights: initializers."""
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), list(v.shape))
         for k, v in inputs.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        [numpy_helper.from_array(v, k) for k, v in weights.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = IR_VERSION
    # strict shape inference fills in the outputs' shapes and catches a malformed network here
    model = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    onnx.checker.check_model(model)
    feeds = {k: Feed(TYPE_NAMES[helper.np_dtype_to_tensor_dtype(v.dtype)], list(v.shape), v) for k, v in inputs.items()}
    return Case(name=name, group="models", model=model.SerializeToString(), feeds=feeds, nodes=len(nodes))


def _rand(rng, *shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def mlp(rng) -> Case:
    w = {"w1": _rand(rng, 64, 128, scale=0.15), "b1": _rand(rng, 128), "w2": _rand(rng, 128, 32, scale=0.1),
         "b2": _rand(rng, 32), "w3": _rand(rng, 32, 10, scale=0.2), "b3": _rand(rng, 10)}
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"]), helper.make_node("Relu", ["h1"], ["a1"]),
             helper.make_node("MatMul", ["a1", "w2"], ["m2"]), helper.make_node("Add", ["m2", "b2"], ["h2"]),
             helper.make_node("Sigmoid", ["h2"], ["a2"]), helper.make_node("Gemm", ["a2", "w3", "b3"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["probs"], axis=-1)]
    return _model("MLP (Gemm, MatMul, Relu, Sigmoid, Softmax)", nodes, {"x": _rand(rng, 4, 64, scale=1)},
                  ["probs"], w)


def cnn(rng) -> Case:
    w = {"c1w": _rand(rng, 8, 3, 3, 3, scale=0.3), "c1b": _rand(rng, 8, scale=0.1),
         "c2w": _rand(rng, 16, 8, 3, 3, scale=0.15), "c2b": _rand(rng, 16, scale=0.1),
         "c3w": _rand(rng, 16, 1, 3, 3, scale=0.3),
         "bn_s": (1 + _rand(rng, 16, scale=0.1)), "bn_b": _rand(rng, 16, scale=0.1),
         "bn_m": _rand(rng, 16, scale=0.1), "bn_v": (0.5 + np.abs(_rand(rng, 16))),
         "fcw": _rand(rng, 16, 10, scale=0.3), "fcb": _rand(rng, 10, scale=0.1),
         "scales": np.array([1, 1, 2, 2], np.float32), "shape": np.array([1, -1], np.int64)}
    nodes = [
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c2", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["r2"]),
        helper.make_node("Resize", ["r2", "", "scales"], ["up"], mode="linear"),
        helper.make_node("Conv", ["up", "c3w"], ["dw"], group=16, pads=[1, 1, 1, 1]),
        helper.make_node("AveragePool", ["dw"], ["p2"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=0),
        helper.make_node("GlobalAveragePool", ["p2"], ["g"]),
        helper.make_node("Reshape", ["g", "shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fcw", "fcb"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"]),
    ]
    return _model("CNN (Conv, depthwise Conv, BatchNorm, MaxPool, AveragePool, Resize, Gemm)", nodes,
                  {"x": _rand(rng, 1, 3, 16, 16, scale=1)}, ["probs"], w)


def transformer_block(rng, seq: int = 8, dim: int = 32, heads: int = 4, vocab: int = 50) -> Case:
    hd = dim // heads
    w = {"emb": _rand(rng, vocab, dim, scale=0.5), "pos": _rand(rng, seq, dim, scale=0.1),
         "ln1_s": 1 + _rand(rng, dim, scale=0.1), "ln1_b": _rand(rng, dim, scale=0.1),
         "wq": _rand(rng, dim, dim, scale=0.2), "wk": _rand(rng, dim, dim, scale=0.2),
         "wv": _rand(rng, dim, dim, scale=0.2), "wo": _rand(rng, dim, dim, scale=0.2),
         "bq": _rand(rng, dim, scale=0.05), "bo": _rand(rng, dim, scale=0.05),
         "ln2_s": 1 + _rand(rng, dim, scale=0.1), "ln2_b": _rand(rng, dim, scale=0.1),
         "w1": _rand(rng, dim, 4 * dim, scale=0.2), "b1": _rand(rng, 4 * dim, scale=0.05),
         "w2": _rand(rng, 4 * dim, dim, scale=0.1), "b2": _rand(rng, dim, scale=0.05),
         "heads_shape": np.array([1, seq, heads, hd], np.int64), "merge_shape": np.array([1, seq, dim], np.int64),
         "scale": np.array(1 / np.sqrt(hd), np.float32),
         "mask": np.triu(np.full((seq, seq), -1e4, np.float32), 1)}
    mk = helper.make_node
    nodes = [
        mk("Gather", ["emb", "ids"], ["tok"], axis=0),
        mk("Add", ["tok", "pos"], ["x"]),
        mk("LayerNormalization", ["x", "ln1_s", "ln1_b"], ["h"], axis=-1, epsilon=1e-5),
        mk("MatMul", ["h", "wq"], ["q0"]), mk("Add", ["q0", "bq"], ["q1"]),
        mk("MatMul", ["h", "wk"], ["k1"]), mk("MatMul", ["h", "wv"], ["v1"]),
    ]
    for n in ("q", "k", "v"):
        nodes.append(mk("Reshape", [f"{n}1", "heads_shape"], [f"{n}2"]))
        nodes.append(mk("Transpose", [f"{n}2"], [f"{n}3"], perm=[0, 2, 3, 1] if n == "k" else [0, 2, 1, 3]))
    nodes += [
        mk("MatMul", ["q3", "k3"], ["s0"]), mk("Mul", ["s0", "scale"], ["s1"]), mk("Add", ["s1", "mask"], ["s2"]),
        mk("Softmax", ["s2"], ["attn"], axis=-1), mk("MatMul", ["attn", "v3"], ["o0"]),
        mk("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]), mk("Reshape", ["o1", "merge_shape"], ["o2"]),
        mk("MatMul", ["o2", "wo"], ["o3"]), mk("Add", ["o3", "bo"], ["o4"]), mk("Add", ["x", "o4"], ["r1"]),
        mk("LayerNormalization", ["r1", "ln2_s", "ln2_b"], ["h2"], axis=-1, epsilon=1e-5),
        mk("MatMul", ["h2", "w1"], ["f0"]), mk("Add", ["f0", "b1"], ["f1"]),
        mk("Gelu", ["f1"], ["f2"]),
        mk("MatMul", ["f2", "w2"], ["f3"]), mk("Add", ["f3", "b2"], ["f4"]), mk("Add", ["r1", "f4"], ["y"]),
    ]
    ids = rng.integers(0, vocab, (1, seq)).astype(np.int64)
    return _model("transformer block (Gather, LayerNorm, MatMul/Softmax attention, Gelu)", nodes, {"ids": ids},
                  ["y"], w)


def lstm(rng, seq: int = 6, batch: int = 2, inp: int = 8, hidden: int = 16) -> Case:
    w = {"W": _rand(rng, 2, 4 * hidden, inp, scale=0.3), "R": _rand(rng, 2, 4 * hidden, hidden, scale=0.3),
         "B": _rand(rng, 2, 8 * hidden, scale=0.1)}
    nodes = [helper.make_node("LSTM", ["x", "W", "R", "B"], ["Y", "Y_h", "Y_c"], hidden_size=hidden,
                              direction="bidirectional")]
    return _model("LSTM (bidirectional)", nodes, {"x": _rand(rng, seq, batch, inp, scale=1)}, ["Y", "Y_h", "Y_c"], w)


def gru(rng, seq: int = 6, batch: int = 2, inp: int = 8, hidden: int = 16, linear_before_reset: int = 0) -> Case:
    w = {"W": _rand(rng, 1, 3 * hidden, inp, scale=0.3), "R": _rand(rng, 1, 3 * hidden, hidden, scale=0.3),
         "B": _rand(rng, 1, 6 * hidden, scale=0.1), "h0": _rand(rng, 1, batch, hidden, scale=0.5)}
    nodes = [helper.make_node("GRU", ["x", "W", "R", "B", "", "h0"], ["Y", "Y_h"], hidden_size=hidden,
                              linear_before_reset=linear_before_reset)]
    return _model(f"GRU (linear_before_reset={linear_before_reset})", nodes,
                  {"x": _rand(rng, seq, batch, inp, scale=1)}, ["Y", "Y_h"], w)


MODELS = {"mlp": mlp, "cnn": cnn, "transformer": transformer_block, "lstm": lstm, "gru": gru,
          # ORT's WebNN EP never reads linear_before_reset (ort_web.KNOWN_ORT): kept to show it
          "gru-lbr": lambda rng: gru(rng, linear_before_reset=1)}


def model_cases(names=None) -> list:
    # one seeded generator per network: each one's weights are the same whichever are picked
    return [build(np.random.default_rng([20260918, i])) for i, (key, build) in enumerate(MODELS.items())
            if names is None or key in names]
