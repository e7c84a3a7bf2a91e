"""Export: WebNN graphs built with the builder (or loaded from NNEF) written as
graph.nnef + .dat; the reference parser accepts the result, and re-importing it
gives bit-identical outputs on the numpy kernels (digest acceptance check 13)."""
import numpy as np
import pytest

from nnef_helpers import ref_nnef
from webnn_core import Context
from webnn_core.nnef import NNEFUnsupportedError, export_graph, load_model, parse_string, samples, save

RNG = np.random.default_rng(0)


def f32(*shape, lo=None):
    a = RNG.standard_normal(shape).astype(np.float32)
    return np.abs(a) + lo if lo is not None else a


def build_cases():
    """name -> (build(b) -> (outputs, input arrays))"""
    cases = {}

    def conv_net(b):
        x = b.input("image", {"dataType": "float32", "shape": [1, 3, 9, 9]})
        w = b.constant({"dataType": "float32", "shape": [4, 3, 3, 3]}, f32(4, 3, 3, 3))
        bias = b.constant({"dataType": "float32", "shape": [4]}, f32(4))
        y = b.relu(b.conv2d(x, w, padding=[1, 1, 1, 1], strides=[2, 2], bias=bias))
        dw = b.constant({"dataType": "float32", "shape": [4, 1, 3, 3]}, f32(4, 1, 3, 3))
        y = b.clamp(b.conv2d(y, dw, padding=[1, 1, 1, 1], groups=4), minValue=0.0, maxValue=6.0)
        hw = b.constant({"dataType": "float32", "shape": [3, 3, 4, 2]}, f32(3, 3, 4, 2))
        z = b.conv2d(y, hw, filterLayout="hwio")
        t = b.convTranspose2d(z, b.constant({"dataType": "float32", "shape": [2, 3, 3, 3]}, f32(2, 3, 3, 3)),
                              strides=[2, 2], padding=[1, 1, 1, 1], outputPadding=[1, 1])
        p = b.maxPool2d(y, windowDimensions=[2, 2], strides=[2, 2], roundingType="ceil")
        a = b.averagePool2d(y, windowDimensions=[3, 3], padding=[1, 1, 1, 1])
        l2 = b.l2Pool2d(y, windowDimensions=[2, 2])
        return {"t": t, "p": p, "a": a, "l2": l2}, {"image": f32(1, 3, 9, 9)}
    cases["conv-pool"] = conv_net

    def elementwise(b):
        x = b.input("x", {"dataType": "float32", "shape": [2, 3, 4]})
        v = b.input("v", {"dataType": "float32", "shape": [4]})
        pos = b.abs(x)
        outs = {
            "add": b.add(x, v), "sub": b.sub(v, x), "mul": b.mul(x, v), "div": b.div(x, b.add(b.abs(v), b.constant(
                {"dataType": "float32", "shape": [1]}, np.array([1.0], np.float32)))),
            "max": b.max(x, v), "min": b.min(x, v), "pow": b.pow(b.add(pos, b.constant_scalar("float32", 1.0)), v),
            "un": b.tanh(b.sigmoid(b.exp(b.neg(b.floor(b.ceil(b.sin(b.cos(b.tan(x))))))))),
            "sqrt": b.sqrt(b.log(b.add(pos, b.constant_scalar("float32", 1.0)))),
            "act": b.elu(b.leakyRelu(b.hardSwish(b.hardSigmoid(b.softsign(b.softplus(x)), alpha=0.3)), alpha=0.2)),
            "lin": b.linear(b.reciprocal(b.add(pos, b.constant_scalar("float32", 2.0))), alpha=2.0, beta=-1.0),
            "sign": b.sign(x),
            "where": b.where(b.greater(x, v), x, b.constant_scalar("float32", 0.5)),
            "logic": b.cast(b.logicalXor(b.lesser(x, v), b.logicalNot(b.equal(x, x))), "float32"),
            "cmp": b.cast(b.logicalAnd(b.greaterOrEqual(x, v), b.logicalOr(b.lesserOrEqual(x, v), b.notEqual(x, v))),
                          "float32"),
            "prelu": b.prelu(x, v),
        }
        return outs, {"x": f32(2, 3, 4), "v": f32(4)}
    cases["elementwise"] = elementwise

    def shapes(b):
        x = b.input("x", {"dataType": "float32", "shape": [2, 3, 4, 5]})
        idx = b.input("idx", {"dataType": "int32", "shape": [3]})
        parts = b.split(x, [2, 3], axis=3)
        outs = {
            "reshape": b.reshape(x, [6, 20]), "transpose": b.transpose(x, permutation=[3, 1, 0, 2]),
            "concat": b.concat([parts[1], parts[0]], 3), "slice": b.slice(x, [0, 1, 1, 0], [2, 2, 3, 5],
                                                                          strides=[1, 1, 2, 2]),
            "expand": b.expand(b.slice(parts[0], [0, 0, 0, 0], [2, 3, 4, 1]), [2, 2, 3, 4, 3]),
            "tile": b.tile(x, [1, 2, 1, 1]), "pad": b.pad(x, [0, 1, 0, 2], [0, 0, 1, 1], mode="reflection"),
            "pad2": b.pad(x, [1, 0, 0, 0], [0, 0, 2, 0], value=1.5),
            "gather": b.gather(x, idx, axis=3), "reverse": b.reverse(x, axes=[1, 3]),
            "tri": b.triangular(x, upper=False, diagonal=1),
        }
        return outs, {"x": f32(2, 3, 4, 5), "idx": np.array([4, 0, 2], np.int32)}
    cases["shapes"] = shapes

    def reductions(b):
        x = b.input("x", {"dataType": "float32", "shape": [2, 3, 4]})
        pos = b.add(b.abs(x), b.constant_scalar("float32", 0.5))
        return {
            "sum": b.reduceSum(x, axes=[1]), "mean": b.reduceMean(x, axes=[0, 2], keepDimensions=True),
            "max": b.reduceMax(x), "min": b.reduceMin(x, axes=[2]), "l1": b.reduceL1(x, axes=[1]),
            "l2": b.reduceL2(x, axes=[1]), "ss": b.reduceSumSquare(x, axes=[2]), "ls": b.reduceLogSum(pos, axes=[1]),
            "lse": b.reduceLogSumExp(x, axes=[1]),
            "argmax": b.argMax(x, 1), "argmin": b.argMin(x, 2, keepDimensions=True),
            "softmax": b.softmax(x, 2),
        }, {"x": f32(2, 3, 4)}
    cases["reductions"] = reductions

    def linalg_norm(b):
        a = b.input("a", {"dataType": "float32", "shape": [3, 4]})
        x = b.input("x", {"dataType": "float32", "shape": [2, 3, 4, 4]})
        w = b.constant({"dataType": "float32", "shape": [5, 4]}, f32(5, 4))
        c = b.constant({"dataType": "float32", "shape": [5]}, f32(5))
        c2 = b.constant({"dataType": "float32", "shape": [3, 5]}, f32(3, 5))
        ch = {k: b.constant({"dataType": "float32", "shape": [3]}, f32(3, lo=0.5)) for k in "mvsb"}
        return {
            "linear": b.gemm(a, w, c=c, bTranspose=True),
            "gemm": b.gemm(a, b.transpose(w), c=c2, alpha=0.5, beta=2.0),
            "gemmT": b.gemm(b.transpose(a), w, aTranspose=True, bTranspose=True),
            "matmul": b.matmul(x, b.reshape(x, [2, 3, 4, 4])),
            "bn": b.batchNormalization(x, ch["m"], ch["v"], scale=ch["s"], bias=ch["b"], epsilon=1e-3),
            "inorm": b.instanceNormalization(x, scale=ch["s"], bias=ch["b"]),
            "lnorm": b.layerNormalization(x, axes=[2, 3]),
            "up": b.resample2d(x, mode="linear", scales=[2.0, 2.0]),
            "upn": b.resample2d(x, sizes=[8, 12]),
        }, {"a": f32(3, 4), "x": f32(2, 3, 4, 4)}
    cases["linalg-norm"] = linalg_norm
    return cases


CASES = build_cases()


def run(graph, ctx, feeds):
    return ctx.compute(graph, feeds)


@pytest.mark.parametrize("name", sorted(CASES))
def test_export_round_trip(name, tmp_path):
    ctx = Context(options={"fastPaths": False})  # the numpy reference kernels: re-import must be bit-identical
    b = ctx.graph_builder()
    outputs, feeds = CASES[name](b)
    graph = b.build(outputs)
    expected = run(graph, ctx, feeds)
    path = str(tmp_path / "model")
    mapping = save(graph, path, name="Exported")
    text = open(path + "/graph.nnef").read()
    parse_string(text)  # our parser accepts it
    if ref_nnef is not None:
        g = ref_nnef.load_graph(path)  # the reference parser (and its .dat reader) accepts it
        ref_nnef.infer_shapes(g)
        for webnn_name, nnef_name in mapping["outputs"].items():
            assert list(g.tensors[nnef_name].shape) == list(outputs[webnn_name].shape), webnn_name
    model = load_model(path, context=ctx)
    got = model.run({mapping["inputs"][k]: v for k, v in feeds.items()})
    for webnn_name, nnef_name in mapping["outputs"].items():
        want = expected[webnn_name]
        have = got[nnef_name]
        assert have.shape == want.shape, webnn_name
        if webnn_name in ("lse", "inorm", "lnorm", "ls", "l2", "sqrt", "lin", "gemm", "gemmT", "act", "un", "pad2",
                          "div", "pow", "bn", "up", "ss"):
            # composed in NNEF (exp/log, moments, matmul + mul + add, ...): equal up to float rounding
            np.testing.assert_allclose(have.astype(np.float64), want.astype(np.float64), rtol=2e-5, atol=2e-6,
                                       err_msg=webnn_name)
        else:
            assert np.array_equal(have.astype(want.dtype), want), webnn_name


def test_loaded_model_exports_with_labels_and_names(tmp_path):
    files = samples.alexnet_files(divisor=8, image=224, seed=1)
    model = load_model(files)
    text, dats, mapping = export_graph(model.graph, "AlexNet")
    assert sorted(dats) == sorted(k for k in files if k.endswith(".dat"))
    for k in dats:
        assert dats[k] == files[k]  # byte-identical weights
    assert "conv1 = conv(input, kernel1, bias1," in text
    assert "output = softmax(" in text
    x = RNG.standard_normal((1, 3, 224, 224)).astype(np.float32)
    again = load_model({"graph.nnef": text.encode(), **dats})
    assert np.array_equal(again.run({"input": x})["output"], model.run({"input": x})["output"])


@pytest.mark.parametrize("op", ["gelu", "erf", "cumulativeSum", "integer-add"])
def test_unsupported_exports_raise_typed_errors(op):
    ctx = Context()
    b = ctx.graph_builder()
    if op == "integer-add":
        x = b.input("x", {"dataType": "int32", "shape": [3]})
        y = b.add(x, x)
    else:
        x = b.input("x", {"dataType": "float32", "shape": [3]})
        y = b.cumulativeSum(x, 0) if op == "cumulativeSum" else getattr(b, op)(x)
    with pytest.raises(NNEFUnsupportedError) as info:
        export_graph(b.build({"y": y}))
    assert info.value.op == ("add" if op == "integer-add" else op)


def test_tgz_export(tmp_path):
    ctx = Context()
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [2, 2]})
    graph = b.build({"y": b.relu(x)})
    save(graph, str(tmp_path / "m.tgz"))
    model = load_model(str(tmp_path / "m.tgz"))
    assert model.run({"x": np.array([[-1, 2], [3, -4]], np.float32)})["y"].tolist() == [[0, 2], [3, 0]]
