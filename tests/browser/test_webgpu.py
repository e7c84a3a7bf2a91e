"""The gpu device on WebGPU (SwiftShader, headless Chromium): every op the
webgpu backend puts on the GPU, run through MLTensor write/dispatch/read on
a gpu context and compared with the numpy reference kernels (a cpu context
with fast paths off) on the same data; the backend's stats must show that the
GPU ran it (a graph on the GPU, the op in its census, no partition)."""
import os

import numpy as np
import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS, MODELS

pytestmark = pytest.mark.browser

RNG = np.random.default_rng(16)
WEBGPU_ARGS = ["--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader"]


def operand(shape, dtype="float32", constant=False, low=-2.0, high=2.0, positive=False):
    if dtype in ("float32", "float16"):
        data = RNG.uniform(0.1 if positive else low, high, size=shape).astype(dtype)
        if dtype == "float16":  # travels as its bits (a Uint16Array on the page)
            data = data.view(np.uint16)
    elif dtype in ("uint8", "int8"):
        data = RNG.integers(int(low), int(high), size=shape).astype(dtype)
    else:
        data = RNG.integers(0 if dtype == "uint32" else -20, 20, size=shape).astype(dtype)
    return {"dataType": dtype, "shape": list(shape), "data": data.ravel().tolist(), "constant": constant}


def case(name, expr, ops, tol=1e-5, kernels=(), conv=None, **operands):
    """`kernels`: kernel variants (engineStats gpu_kernels, e.g. "conv2d.tiled") the graph must run;
    `conv`: run it on a gpu context whose planner forces that conv2d kernel ("tiled", "direct")."""
    return {"name": name, "expr": expr, "ops": ops, "tol": tol, "operands": operands, "kernels": list(kernels),
            "conv": conv}


def halves(values):
    """float16 data given as values (NaN, inf, subnormals...) as the bits the page sends."""
    return np.array(values, np.float16).view(np.uint16).tolist()


def given(dtype, shape, values, constant=False):
    """An operand with these exact values (64-bit ones as strings: beyond 2^53)."""
    if dtype.endswith("64"):
        values = [str(v) for v in values]
    return {"dataType": dtype, "shape": list(shape), "data": list(values), "constant": constant}


def nibbles(dtype, shape, values, constant=False):
    """int4/uint4 data as its packed bytes (element 2k in the low nibble)."""
    v = [int(x) & 15 for x in values] + [0]
    return {"dataType": dtype, "shape": list(shape), "constant": constant,
            "data": [v[k] | (v[k + 1] << 4) for k in range(0, len(values), 2)]}


BIG = 2 ** 40
H = dict(x=operand((2, 3, 5), "float16"))
# float16 results are rounded to float16 once per node on both devices: the GPU
# computes in f32 between an unpack and a pack step (no shader-f16 on SwiftShader).
F16 = 2e-3


NAN, INF = float("nan"), float("inf")
X = dict(x=operand((2, 3, 4)))
UNARY_FLOAT = ["abs", "neg", "ceil", "floor", "roundEven", "exp", "sin", "cos", "tan", "reciprocal", "sign",
               "identity", "erf", "relu", "sigmoid", "tanh", "gelu", "hardSwish", "softplus", "softsign"]

CASES = [
    # WGSL's sin/cos are accurate to 2^-11 absolute on [-pi, pi] (WebGPU spec), tan follows from them.
    *[case(f"{op}-f32", f"b.{op}(x)", [op], tol=1e-3 if op in ("sin", "cos", "tan") else 2e-5, **X) for op in UNARY_FLOAT],
    # Near tan's poles WGSL's own tan is far off (SwiftShader: -23.7329 for -23.7312): ours reduces by pi/2.
    case("tan-near-poles", "b.tan(x)", ["tan"], tol=1e-5, x={"dataType": "float32", "shape": [8], "constant": False,
         "data": [1.6129, -1.5299, 4.7, -14.13, 10.99, 0.7853982, 100.0, -3.0]}),
    case("log-f32", "b.log(x)", ["log"], tol=2e-5, x=operand((2, 3, 4), positive=True)),
    case("sqrt-f32", "b.sqrt(x)", ["sqrt"], x=operand((2, 3, 4), positive=True)),
    case("leakyRelu", "b.leakyRelu(x, {alpha: 0.3})", ["leakyRelu"], **X),
    case("elu", "b.elu(x, {alpha: 0.7})", ["elu"], tol=2e-5, **X),
    case("hardSigmoid", "b.hardSigmoid(x, {alpha: 0.3, beta: 0.4})", ["hardSigmoid"], **X),
    case("linear", "b.linear(x, {alpha: 1.5, beta: -0.5})", ["linear"], **X),
    case("clamp-f32", "b.clamp(x, {minValue: -0.5, maxValue: 0.75})", ["clamp"], **X),
    case("clamp-i32", "b.clamp(x, {minValue: -3, maxValue: 5})", ["clamp"], x=operand((3, 5), "int32")),
    case("relu-i32", "b.relu(x)", ["relu"], x=operand((3, 5), "int32")),
    case("abs-neg-i32", "b.neg(b.abs(x))", ["abs", "neg"], x=operand((3, 5), "int32")),
    *[case(f"{op}-broadcast", f"b.{op}(a, c)", [op], a=operand((2, 3, 4)), c=operand((3, 1), constant=True))
      for op in ("add", "sub", "mul", "div", "max", "min")],
    case("pow", "b.pow(a, c)", ["pow"], tol=2e-5, a=operand((2, 3), positive=True), c=operand((3,))),
    case("add-i32", "b.add(a, c)", ["add"], a=operand((4, 3), "int32"), c=operand((3,), "int32")),
    case("div-u32", "b.div(a, c)", ["div"], a=operand((4, 3), "uint32"), c=operand((4, 1), "uint32")),
    case("mul-min-i32", "b.min(b.mul(a, c), a)", ["mul", "min"], a=operand((4, 3), "int32"), c=operand((4, 3), "int32")),
    case("prelu", "b.prelu(x, s)", ["prelu"], x=operand((2, 3, 4)), s=operand((4,), constant=True)),
    case("cast-f32-i32", "b.cast(x, 'int32')", ["cast"], x=operand((3, 4), low=-50, high=50)),
    case("cast-i32-f32", "b.cast(x, 'float32')", ["cast"], x=operand((3, 4), "int32")),
    case("matmul", "b.matmul(a, c)", ["matmul"], tol=1e-4, a=operand((5, 37)), c=operand((37, 19), constant=True)),
    case("matmul-batched-broadcast", "b.matmul(a, c)", ["matmul"], tol=1e-4,
         a=operand((2, 1, 6, 20)), c=operand((3, 20, 7))),
    case("gemm", "b.gemm(a, c, {c: d, alpha: 0.5, beta: 2, aTranspose: true, bTranspose: true})", ["gemm"], tol=1e-4,
         a=operand((18, 5)), c=operand((7, 18), constant=True), d=operand((7,), constant=True)),
    case("erf-gelu-tanh-chain", "b.tanh(b.gelu(b.erf(x)))", ["erf", "gelu", "tanh"], tol=2e-5, **X),
    case("conv2d-gelu-fused", "b.gelu(b.conv2d(x, w))", ["conv2d", "gelu"], tol=1e-4,
         x=operand((1, 2, 4, 4)), w=operand((3, 2, 2, 2), constant=True)),
    case("gemm-relu-fused", "b.relu(b.gemm(a, c))", ["gemm", "relu"], tol=1e-4, a=operand((4, 9)), c=operand((9, 3))),
    case("conv2d-nchw-bias-relu", "b.relu(b.conv2d(x, w, {padding: [1, 1, 1, 1], bias: c}))", ["conv2d", "relu"],
         tol=1e-4, x=operand((1, 3, 7, 6)), w=operand((4, 3, 3, 3), constant=True), c=operand((4,), constant=True)),
    case("conv2d-nhwc-ohwi-strided", "b.conv2d(x, w, {strides: [2, 2], dilations: [1, 2], padding: [0, 1, 2, 1],"
         " inputLayout: 'nhwc', filterLayout: 'ohwi'})", ["conv2d"], tol=1e-4,
         x=operand((2, 8, 9, 3)), w=operand((5, 2, 3, 3), constant=True)),
    case("conv2d-grouped-hwio-clamp", "b.clamp(b.conv2d(x, w, {groups: 2, filterLayout: 'hwio'}), {minValue: 0, maxValue: 6})",
         ["conv2d", "clamp"], tol=1e-4, x=operand((1, 4, 5, 5)), w=operand((3, 3, 2, 6), constant=True)),
    case("conv2d-depthwise-nhwc-ihwo", "b.conv2d(x, w, {groups: 4, inputLayout: 'nhwc', filterLayout: 'ihwo', padding: [1, 1, 1, 1]})",
         ["conv2d"], tol=1e-4, kernels=["conv2d.direct"], x=operand((1, 6, 6, 4)), w=operand((1, 3, 3, 4), constant=True)),
    # The tiled conv2d (implicit GEMM, >= 16 output channels per group): tiles of 32 pixels x 32
    # channels (64 x 16 for 16-channel groups), K in steps of 16; every size below leaves a
    # remainder in the pixels, the channels and K unless said otherwise. On SwiftShader the
    # planner's "auto" tiles only spatial filters with K >= 64 (kernels/conv.py), so most of
    # these run on a context told to tile (conv="tiled").
    case("conv2d-tiled-nhwc-ohwi-3x3-bias-relu", "b.relu(b.conv2d(x, w, {padding: [1, 1, 1, 1], bias: c,"
         " inputLayout: 'nhwc', filterLayout: 'ohwi'}))", ["conv2d", "relu"], tol=1e-4, kernels=["conv2d.tiled"],
         conv="tiled", x=operand((1, 9, 7, 5)), w=operand((19, 3, 3, 5), constant=True), c=operand((19,), constant=True)),
    case("conv2d-tiled-nchw-1x1-batch2", "b.conv2d(x, w)", ["conv2d"], tol=1e-4, kernels=["conv2d.tiled"], conv="tiled",
         x=operand((2, 21, 5, 6)), w=operand((17, 21, 1, 1), constant=True)),
    case("conv2d-tiled-nhwc-1x1-input-filter", "b.conv2d(x, w, {inputLayout: 'nhwc', filterLayout: 'ohwi'})", ["conv2d"],
         tol=1e-4, kernels=["conv2d.tiled"], conv="tiled", x=operand((1, 5, 7, 40)), w=operand((33, 1, 1, 40))),
    case("conv2d-tiled-strided-dilated-hwio-relu6", "b.clamp(b.conv2d(x, w, {strides: [2, 3], dilations: [2, 1],"
         " padding: [1, 2, 0, 1], filterLayout: 'hwio'}), {minValue: 0, maxValue: 6})", ["conv2d", "clamp"], tol=1e-4,
         kernels=["conv2d.tiled"], conv="tiled", x=operand((1, 3, 11, 13)), w=operand((3, 3, 3, 33), constant=True)),
    case("conv2d-tiled-grouped-ihwo", "b.conv2d(x, w, {groups: 2, filterLayout: 'ihwo', bias: c})", ["conv2d"],
         tol=1e-4, kernels=["conv2d.tiled"], conv="tiled", x=operand((1, 6, 7, 7)), w=operand((3, 3, 3, 36)),
         c=operand((36,))),  # a filter that is no constant: read in place through its strides
    # 16 channels, 8x8 pixels: exactly one 64 x 16 tile, K = 64 (no remainder anywhere).
    case("conv2d-tiled-exact-tile-nhwc-1x1", "b.conv2d(x, w, {inputLayout: 'nhwc', filterLayout: 'ohwi'})", ["conv2d"],
         tol=1e-4, kernels=["conv2d.tiled"], conv="tiled", x=operand((1, 8, 8, 64)), w=operand((16, 1, 1, 64), constant=True)),
    case("conv2d-tiled-f16-gelu", "b.gelu(b.conv2d(x, w, {padding: [1, 0, 1, 0]}))", ["conv2d", "gelu"], tol=F16,
         kernels=["conv2d.tiled"], conv="tiled", x=operand((1, 4, 9, 9), "float16", low=-1, high=1),
         w=operand((16, 4, 3, 3), "float16", low=-0.5, high=0.5, constant=True)),
    # "auto" on SwiftShader: SqueezeNet's first layer (shrunk: 7x7 stride 2 on 3 channels,
    # "same-upper" padding, 96 outputs, K = 147) is tiled; a pointwise conv stays direct.
    case("conv2d-auto-tiled-7x7-s2-nhwc-bias-relu", "b.relu(b.conv2d(x, w, {strides: [2, 2], padding: [2, 3, 2, 3],"
         " bias: c, inputLayout: 'nhwc', filterLayout: 'ohwi'}))", ["conv2d", "relu"], tol=1e-4, kernels=["conv2d.tiled"],
         x=operand((1, 23, 21, 3)), w=operand((96, 7, 7, 3), constant=True), c=operand((96,), constant=True)),
    case("conv2d-auto-direct-pointwise", "b.conv2d(x, w, {inputLayout: 'nhwc', filterLayout: 'ohwi'})", ["conv2d"],
         tol=1e-4, kernels=["conv2d.direct"], x=operand((1, 5, 7, 40)), w=operand((33, 1, 1, 40), constant=True)),
    # Told "direct", a wide conv that "auto" would tile runs the direct kernel.
    case("conv2d-forced-direct-7x7", "b.conv2d(x, w, {strides: [2, 2], inputLayout: 'nhwc', filterLayout: 'ohwi'})",
         ["conv2d"], tol=1e-4, kernels=["conv2d.direct"], conv="direct", x=operand((1, 11, 9, 3)),
         w=operand((20, 7, 7, 3), constant=True)),
    case("averagePool2d-padded", "b.averagePool2d(x, {windowDimensions: [3, 3], padding: [1, 1, 1, 1], strides: [2, 2]})",
         ["averagePool2d"], x=operand((1, 2, 7, 7))),
    case("averagePool2d-global", "b.averagePool2d(x)", ["averagePool2d"], x=operand((1, 3, 5, 4))),
    case("maxPool2d-ceil-nhwc", "b.maxPool2d(x, {windowDimensions: [3, 3], strides: [2, 2], layout: 'nhwc',"
         " outputShapeRounding: 'ceil'})", ["maxPool2d"], x=operand((1, 8, 8, 3))),
    case("maxPool2d-i32", "b.maxPool2d(x, {windowDimensions: [2, 2]})", ["maxPool2d"], x=operand((1, 2, 4, 4), "int32")),
    case("l2Pool2d", "b.l2Pool2d(x, {windowDimensions: [2, 2], strides: [2, 2]})", ["l2Pool2d"], tol=1e-5,
         x=operand((1, 2, 4, 6))),
    *[case(f"{op}", f"b.{op}(x, {{axes: [0, 2]}})", [op], tol=2e-5, x=operand((3, 4, 5), positive=True))
      for op in ("reduceSum", "reduceMean", "reduceMax", "reduceMin", "reduceProduct", "reduceL1", "reduceL2",
                 "reduceSumSquare", "reduceLogSum", "reduceLogSumExp")],
    case("reduceSum-keep-all", "b.reduceSum(x, {keepDimensions: true})", ["reduceSum"], tol=2e-5, x=operand((3, 4, 5))),
    case("reduceMax-i32", "b.reduceMax(x, {axes: [1]})", ["reduceMax"], x=operand((3, 4), "int32")),
    case("softmax-axis1", "b.softmax(x, 1)", ["softmax"], tol=1e-5, x=operand((2, 5, 3))),
    case("batchNormalization", "b.batchNormalization(x, m, v, {scale: s, bias: c, axis: 1, epsilon: 1e-3})",
         ["batchNormalization"], tol=2e-5, x=operand((2, 3, 4)), m=operand((3,), constant=True),
         v=operand((3,), constant=True, positive=True), s=operand((3,), constant=True), c=operand((3,), constant=True)),
    case("instanceNormalization-nhwc", "b.instanceNormalization(x, {scale: s, layout: 'nhwc'})",
         ["instanceNormalization"], tol=1e-4, x=operand((2, 3, 4, 5)), s=operand((5,), constant=True)),
    case("layerNormalization-axes", "b.layerNormalization(x, {bias: c, axes: [2, 0]})", ["layerNormalization"],
         tol=1e-4, x=operand((3, 2, 4)), c=operand((4, 3), constant=True)),
    case("concat-transpose-reshape", "b.reshape(b.transpose(b.concat([a, c], 1), {permutation: [2, 0, 1]}), [4, 10])",
         ["concat", "transpose", "reshape"], a=operand((2, 3, 4)), c=operand((2, 2, 4), constant=True)),
    case("slice-expand", "b.expand(b.slice(x, [0, 1, 1], [1, 2, 3], {strides: [1, 1, 2]}), [3, 2, 2])",
         ["slice", "expand"], x=operand((2, 4, 5))),
    case("gather-i32-negative", "b.gather(x, k, {axis: 1})", ["gather"], x=operand((2, 5, 3)),
         k=operand((2, 2), "int32", constant=True)),
    case("gatherElements-u32", "b.gatherElements(x, k, {axis: 0})", ["gatherElements"], x=operand((3, 4), "int32"),
         k=operand((2, 4), "uint32")),
    case("argMax-keep", "b.argMax(x, 1, {keepDimensions: true})", ["argMax"], x=operand((3, 5, 2))),
    case("argMin-i32", "b.argMin(x, 0)", ["argMin"], x=operand((4, 3), "int32")),
    # uint8 (boolean) tensors are packed four to a word: odd sizes check the padding.
    *[case(f"{op}-broadcast", f"b.{op}(a, c)", [op], a=operand((3, 5), "int32"), c=operand((5,), "int32"))
      for op in ("equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual")],
    case("lesser-f32-odd", "b.lesser(a, c)", ["lesser"], a=operand((7,)), c=operand((1,))),
    case("logical-chain", "b.logicalXor(b.logicalAnd(b.greater(a, c), b.logicalNot(b.equal(a, c))), b.logicalOr(p, q))",
         ["logicalXor", "logicalAnd", "logicalOr", "logicalNot", "greater", "equal"],
         a=operand((3, 3), "int32"), c=operand((3, 3), "int32"), p=operand((3, 3), "uint8", low=0, high=3),
         q=operand((3, 1), "uint8", low=0, high=3)),
    # NaN and infinities come in as data: WGSL leaves log(-1) and 1/0 to the implementation.
    case("isNaN-isInfinite", "[b.isNaN(x), b.isInfinite(b.neg(x))]", ["isNaN", "isInfinite"],
         x={**operand((2, 5)), "data": [NAN, INF, -INF, 0.0, 1.5, -2.0, NAN, 3.0, INF, -0.0]}),
    case("where-broadcast", "b.where(b.greater(x, t), t, f)", ["where", "greater"], x=operand((2, 3, 1)),
         t=operand((3, 4)), f=operand((1, 4), constant=True)),
    # float16: packed two halves per u32 word, computed in f32.
    *[case(f"{op}-f16", f"b.{op}(x)", [op], tol=F16, **H) for op in ("abs", "neg", "exp", "relu", "sigmoid", "tanh",
                                                                     "erf", "gelu", "floor", "sign", "softsign")],
    case("add-broadcast-f16", "b.add(a, c)", ["add"], tol=F16, a=operand((3, 5), "float16"),
         c=operand((5,), "float16", constant=True)),
    case("mul-sub-chain-f16", "b.sub(b.mul(a, c), a)", ["mul", "sub"], tol=F16, a=operand((4, 3), "float16"),
         c=operand((4, 1), "float16")),
    case("matmul-f16", "b.matmul(a, c)", ["matmul"], tol=1e-2, a=operand((3, 9), "float16"),
         c=operand((9, 5), "float16", constant=True)),
    case("conv2d-bias-relu-f16", "b.relu(b.conv2d(x, w, {padding: [1, 1, 1, 1], bias: c}))", ["conv2d", "relu"],
         tol=1e-2, x=operand((1, 2, 5, 5), "float16"), w=operand((4, 2, 3, 3), "float16", constant=True),
         c=operand((4,), "float16", constant=True)),
    case("reduceMean-softmax-f16", "[b.reduceMean(x, {axes: [1]}), b.softmax(x, 2)]", ["reduceMean", "softmax"],
         tol=F16, **H),
    case("transpose-concat-slice-f16", "b.slice(b.concat([b.transpose(x), y], 0), [1, 0, 0], [3, 3, 2])",
         ["transpose", "concat", "slice"], x=operand((2, 3, 5), "float16"), y=operand((2, 3, 2), "float16")),
    case("reshape-f16-odd", "b.reshape(x, [5, 3])", ["reshape"], x=operand((3, 5), "float16")),
    case("gather-where-greater-f16", "b.where(b.greater(x, c), b.gather(x, k, {axis: 0}), c)",
         ["where", "greater", "gather"], x=operand((3, 5), "float16"), c=operand((5,), "float16"),
         k=operand((3,), "int32", constant=True)),
    # Rounding to nearest even, overflow to inf, subnormals, NaN, -0.
    case("cast-f32-f16-edges", "b.cast(x, 'float16')", ["cast"],
         x={"dataType": "float32", "shape": [12], "constant": False,
            "data": [1.0009765625, 1.00048828125, 1.00146484375, 65504.0, 65520.0, 70000.0, -1e9, 6e-8, 2.9e-8,
                     1e-4, -0.0, NAN]}),
    case("cast-f16-f32-i32", "[b.cast(x, 'float32'), b.cast(x, 'int32')]", ["cast"],
         x={"dataType": "float16", "shape": [9], "constant": False,
            "data": halves([0.5, -2.75, 65504, -65504, 6e-8, 1e-5, INF, -INF, -0.0])}),
    # int8 / uint8: packed four per word, computed as i32 / u32 and wrapped to 8 bits.
    case("add-mul-int8-wrap", "b.mul(b.add(a, c), c)", ["add", "mul"], a=operand((3, 7), "int8", low=-128, high=127),
         c=operand((7,), "int8", low=-5, high=5)),
    case("abs-neg-int8", "b.neg(b.abs(x))", ["abs", "neg"],
         x={"dataType": "int8", "shape": [5], "constant": False, "data": [-128, -1, 0, 5, 127]}),
    case("cast-f32-int8-uint8-saturate", "[b.cast(x, 'int8'), b.cast(x, 'uint8')]", ["cast"],
         x={"dataType": "float32", "shape": [7], "constant": False, "data": [-300.5, -128.9, -1.5, 0.7, 127.9, 254.5, 1e6]}),
    case("cast-int8-uint8-f32", "[b.cast(a, 'float32'), b.cast(c, 'float32'), b.cast(a, 'uint8')]", ["cast"],
         a=operand((2, 5), "int8", low=-128, high=127), c=operand((5,), "uint8", low=0, high=255)),
    case("sub-uint8-wrap-clamp", "b.clamp(b.sub(a, c), {minValue: 3, maxValue: 200})", ["sub", "clamp"],
         a=operand((6,), "uint8", low=0, high=255), c=operand((6,), "uint8", low=0, high=255)),
    case("equal-uint8-transpose", "b.equal(b.transpose(a), c)", ["equal", "transpose"],
         a=operand((3, 2), "uint8", low=0, high=3), c=operand((2, 3), "uint8", low=0, high=3, constant=True)),
    # Integer pow: square and multiply, wrapping; negative exponents truncated (1, +-1, 0; 0^-n = 0).
    case("pow-int32-uint32-int8-uint8", "[b.pow(a, e), b.pow(u, v), b.pow(c, f), b.pow(g, h)]", ["pow"],
         a=given("int32", [8], [3, -3, 2, 1, -1, -1, 0, 7]), e=given("int32", [8], [20, 21, 31, -5, -3, -4, -2, 33]),
         u=given("uint32", [4], [3, 65537, 4294967295, 0]), v=given("uint32", [4], [21, 3, 7, 0]),
         c=given("int8", [5], [3, -3, 2, -1, 5]), f=given("int8", [5], [5, 7, 7, -3, 127]),
         g=given("uint8", [4], [3, 16, 255, 2]), h=given("uint8", [4], [6, 2, 3, 200])),
    case("cumulativeSum", "[b.cumulativeSum(x, 1), b.cumulativeSum(x, 2, {exclusive: true, reversed: true})]",
         ["cumulativeSum"], tol=1e-5, x=operand((2, 3, 5))),
    case("cumulativeSum-i32-f16", "[b.cumulativeSum(a, 0, {reversed: true}), b.cumulativeSum(h, 1, {exclusive: true})]",
         ["cumulativeSum"], tol=F16, a=operand((4, 3), "int32"), h=operand((2, 6), "float16", low=0, high=1)),
    case("triangular", "[b.triangular(x), b.triangular(x, {upper: false, diagonal: -1}), b.triangular(x, {diagonal: 2})]",
         ["triangular"], x=operand((2, 4, 5))),
    case("triangular-i8", "b.triangular(x, {upper: false, diagonal: 1})", ["triangular"], x=operand((3, 3), "int8", low=-9, high=9)),
    case("pad-reflection-edge", "[b.pad(x, [2, 1], [1, 3], {mode: 'reflection'}), b.pad(x, [3, 0], [1, 4],"
         " {mode: 'edge'})]", ["pad"], x=operand((3, 4))),
    case("gatherND", "[b.gatherND(x, k), b.gatherND(x, j)]", ["gatherND"], x=operand((3, 4, 2)),
         k={"dataType": "int32", "shape": [2, 2], "constant": False, "data": [0, 1, -1, -5]},
         j={"dataType": "uint32", "shape": [2, 1, 3], "constant": True, "data": [2, 3, 1, 0, 0, 9]}),
    case("scatterElements", "b.scatterElements(x, k, u, {axis: 1})", ["scatterElements"], x=operand((3, 4)),
         k={"dataType": "int32", "shape": [3, 2], "constant": False, "data": [0, 3, -1, 1, 2, 2]},
         u=operand((3, 2))),
    case("scatterND-f16", "b.scatterND(x, k, u)", ["scatterND"], tol=F16, x=operand((4, 3), "float16"),
         k={"dataType": "int32", "shape": [3, 1], "constant": True, "data": [2, 0, -1]}, u=operand((3, 3), "float16")),
    case("convTranspose2d", "b.convTranspose2d(x, w, {strides: [2, 2], padding: [1, 0, 0, 1], outputPadding: [1, 0]})",
         ["convTranspose2d"], tol=1e-4, x=operand((1, 3, 4, 5)), w=operand((3, 2, 3, 3), constant=True)),
    case("convTranspose2d-nhwc-ohwi-groups-bias-relu", "b.relu(b.convTranspose2d(x, w, {groups: 2, dilations: [2, 1],"
         " inputLayout: 'nhwc', filterLayout: 'ohwi', bias: c}))", ["convTranspose2d", "relu"], tol=1e-4,
         x=operand((2, 3, 3, 4)), w=operand((3, 2, 2, 4), constant=True), c=operand((6,), constant=True)),
    case("convTranspose2d-f16-hwoi-sizes", "b.convTranspose2d(x, w, {strides: [3, 2], outputSizes: [9, 7],"
         " filterLayout: 'hwoi'})", ["convTranspose2d"], tol=1e-2, x=operand((1, 2, 3, 3), "float16"),
         w=operand((2, 2, 3, 2), "float16", constant=True)),
    case("resample2d-nearest-linear", "[b.resample2d(x, {scales: [2, 1.5]}), b.resample2d(x, {mode: 'linear',"
         " sizes: [3, 7], axes: [1, 2]}), b.resample2d(x, {mode: 'linear', scales: [0.5, 0.5]})]", ["resample2d"],
         tol=1e-5, x=operand((1, 2, 4, 5))),
    case("resample2d-f16", "b.resample2d(x, {mode: 'linear', sizes: [5, 3]})", ["resample2d"], tol=F16,
         x=operand((1, 1, 3, 4), "float16")),
    case("quantizeLinear-int8-uint8", "[b.quantizeLinear(x, s, z), b.quantizeLinear(x, t, u)]", ["quantizeLinear"],
         x={"dataType": "float32", "shape": [2, 4], "constant": False,
            "data": [0.5, 1.5, 2.5, -0.5, 1000, -1000, NAN, 3.25]},
         s=operand((2, 1), constant=True, positive=True), z=operand((2, 1), "int8", low=-3, high=3, constant=True),
         t=operand((1, 4), positive=True), u=operand((1, 4), "uint8", low=0, high=9)),
    case("dequantizeLinear-uint8-int8-blocks", "[b.dequantizeLinear(a, s, z), b.dequantizeLinear(c, t, v)]",
         ["dequantizeLinear"], tol=1e-6, a=operand((2, 4), "uint8", low=0, high=255),
         s=operand((2, 2), constant=True), z=operand((2, 2), "uint8", low=0, high=255, constant=True),
         c=operand((3, 2), "int8", low=-128, high=127), t=operand((1, 2)), v=operand((1, 2), "int8", low=-128, high=127)),
    case("lstm-both-sequence", "b.lstm(x, w, r, 3, 4, {bias: c, recurrentBias: d, peepholeWeight: p, initialHiddenState: h,"
         " initialCellState: k, returnSequence: true, direction: 'both', layout: 'ifgo'})", ["lstm"], tol=1e-5,
         x=operand((3, 2, 5), low=-1, high=1), w=operand((2, 16, 5), low=-0.5, high=0.5, constant=True),
         r=operand((2, 16, 4), low=-0.5, high=0.5, constant=True), c=operand((2, 16)), d=operand((2, 16)),
         p=operand((2, 12)), h=operand((2, 2, 4)), k=operand((2, 2, 4))),
    case("lstm-backward-relu", "b.lstm(x, w, r, 2, 3, {direction: 'backward', activations: ['sigmoid', 'relu', 'tanh']})",
         ["lstm"], tol=1e-5, x=operand((2, 1, 4), low=-1, high=1), w=operand((1, 12, 4), low=-0.5, high=0.5),
         r=operand((1, 12, 3), low=-0.5, high=0.5)),
    case("gru-reset-after-sequence", "b.gru(x, w, r, 3, 4, {bias: c, recurrentBias: d, initialHiddenState: h,"
         " returnSequence: true, direction: 'both'})", ["gru"], tol=1e-5, x=operand((3, 2, 5), low=-1, high=1),
         w=operand((2, 12, 5), low=-0.5, high=0.5, constant=True), r=operand((2, 12, 4), low=-0.5, high=0.5),
         c=operand((2, 12)), d=operand((2, 12), constant=True), h=operand((2, 2, 4))),
    case("gru-reset-before-rzn", "b.gru(x, w, r, 2, 3, {resetAfter: false, layout: 'rzn', recurrentBias: d})", ["gru"],
         tol=1e-5, x=operand((2, 3, 2), low=-1, high=1), w=operand((1, 9, 2), low=-0.5, high=0.5),
         r=operand((1, 9, 3), low=-0.5, high=0.5), d=operand((1, 9))),
    case("lstmCell-gruCell", "[...b.lstmCell(x, w, r, h, k, 4, {bias: c, peepholeWeight: p}), b.gruCell(x, v, s, h, 4,"
         " {resetAfter: false, recurrentBias: d})]", ["lstmCell", "gruCell"], tol=1e-5, x=operand((2, 3), low=-1, high=1),
         w=operand((16, 3), low=-0.5, high=0.5), r=operand((16, 4), low=-0.5, high=0.5), h=operand((2, 4)),
         k=operand((2, 4)), c=operand((16,)), p=operand((12,)), v=operand((12, 3), low=-0.5, high=0.5),
         s=operand((12, 4), low=-0.5, high=0.5), d=operand((12,))),
    case("lstm-f16", "b.lstm(x, w, r, 2, 3, {bias: c})", ["lstm"], tol=5e-3, x=operand((2, 2, 3), "float16", low=-1, high=1),
         w=operand((1, 12, 3), "float16", low=-0.5, high=0.5), r=operand((1, 12, 3), "float16", low=-0.5, high=0.5),
         c=operand((1, 12), "float16")),
    # int64/uint64: two words per element, seen through 32 bits only where exact.
    case("gather-gatherND-int64-indices", "[b.gather(x, k, {axis: 1}), b.gatherND(x, j)]", ["gather", "gatherND"],
         x=operand((2, 5)), k=given("int64", [4], [1, -1, BIG, -BIG]),
         j=given("int64", [2, 2], [1, -BIG, -1, 3], constant=True)),
    case("argMax-argMin-int64", "[b.argMax(x, 1, {outputDataType: 'int64'}), b.argMin(x, 0, {outputDataType: 'int64'})]",
         ["argMax", "argMin"], x=operand((3, 4))),
    case("sign-clamp-int64", "[b.sign(x), b.clamp(x, {minValue: -7, maxValue: 100000})]", ["sign", "clamp"],
         x=given("int64", [6], [BIG, -BIG, 0, 5, -3, 2 ** 63 - 1])),
    case("cast-int64-uint64-narrow", "[b.cast(x, 'int32'), b.cast(x, 'uint8'), b.cast(u, 'uint32'), b.cast(b.cast(x,"
         " 'int8'), 'int64'), b.cast(b.cast(u, 'uint8'), 'uint64')]", ["cast"],
         x=given("int64", [4], [BIG + 5, -BIG - 7, -1, 300]), u=given("uint64", [3], [2 ** 64 - 1, BIG + 9, 7])),
    case("cast-i32-u32-int64", "[b.cast(x, 'int64'), b.cast(x, 'uint64'), b.cast(u, 'int64')]", ["cast"],
         x=operand((3, 2), "int32"), u=given("uint32", [3], [4294967295, 2147483648, 7])),
    # 64-bit <-> float: one rounding to nearest even, truncation and saturation.
    case("cast-float-int64", "[b.cast(x, 'int64'), b.cast(x, 'uint64'), b.cast(h, 'int64')]", ["cast"],
         x=given("float32", [8], [1.5e19, -9.3e18, 9.2e18, -2.5, 3.99, NAN, 4294967296.0 * 3 + 2 ** 12, -1e10]),
         h=given("float16", [3], halves([65504, -0.5, -1000]))),
    case("cast-int64-float", "[b.cast(x, 'float32'), b.cast(x, 'float16'), b.cast(u, 'float32')]", ["cast"],
         x=given("int64", [7], [2 ** 63 - 1, -2 ** 63, 16777217, 16777219, -(2 ** 40) - 2 ** 16 - 1, 65519, 65520]),
         u=given("uint64", [3], [2 ** 64 - 1, 2 ** 53 + 2 ** 29, 2 ** 53 + 2 ** 29 + 1])),
    case("clamp-int64-uint64-wide-bounds", "[b.clamp(x, {minValue: -2, maxValue: 4147483645}), b.clamp(u, {minValue: 5,"
         " maxValue: 5294967290})]", ["clamp"], x=given("int64", [6], [-4147483648, 4147483647, -4, 5, -(2 ** 62), 2 ** 62]),
         u=given("uint64", [4], [5294967295, 127, 5, 0])),
    case("dequantize-int4-quantize-uint4", "[b.dequantizeLinear(a, s, z), b.dequantizeLinear(b.quantizeLinear(x, t, u),"
         " t, u)]", ["dequantizeLinear", "quantizeLinear"], tol=1e-6, a=nibbles("int4", [2, 3], [-8, -1, 0, 3, 7, 5]),
         s=operand((2, 1), constant=True), z=nibbles("int4", [2, 1], [1, -2], constant=True),
         x=operand((4,), low=-3, high=20), t=given("float32", [4], [2, 1, 0.5, 1]),
         u=nibbles("uint4", [4], [0, 3, 8, 15], constant=True)),
    # int4/uint4 buffers pack eight nibbles per word; odd sizes check the last one.
    case("identity-where-int4-uint4", "[b.identity(a), b.where(c, a, b.reverse(a)), b.identity(u), b.where(c, b.reverse(u), u)]",
         ["identity", "where"], a=nibbles("int4", [5], [-8, -1, 0, 3, 7]), u=nibbles("uint4", [5], [0, 3, 8, 15, 9]),
         c=given("uint8", [5], [1, 0, 0, 1, 0])),
    case("quantize-int4-cast-uint4-outputs", "[b.quantizeLinear(x, s, z), b.cast(b.reshape(a, [7]), 'uint4'),"
         " b.transpose(a)]", ["quantizeLinear", "cast", "transpose"],
         x=given("float32", [5], [-20, -3.5, 0.4, 2.5, 99]), s=given("float32", [1], [1.0], constant=True),
         z=nibbles("int4", [1], [-1], constant=True), a=nibbles("int4", [7, 1], [-8, -1, 0, 3, 7, 5, -3])),
    # int64/uint64 arithmetic on both words: carries and borrows across the words, wrapping
    # past 2^63 / 2^64 (numpy's), the low 64 bits of products, signed vs unsigned order.
    case("add-sub-mul-int64-broadcast", "[b.add(x, c), b.sub(x, c), b.mul(x, c), b.mul(x, x)]", ["add", "sub", "mul"],
         x=given("int64", [2, 4], [2 ** 32 - 1, -1, 2 ** 63 - 1, -2 ** 63, 3 * 2 ** 31 + 5, -(2 ** 40) - 3, 0, 123456789012]),
         c=given("int64", [4], [1, 2 ** 32 + 7, -2 ** 31, 987654321987], constant=True)),
    case("add-sub-mul-uint64", "[b.add(u, v), b.sub(u, v), b.mul(u, v)]", ["add", "sub", "mul"],
         u=given("uint64", [5], [2 ** 64 - 1, 2 ** 32, 5, 2 ** 63, 0xFFFFFFFF]),
         v=given("uint64", [5], [1, 1, 7, 2 ** 63 + 3, 0xFFFFFFFF])),
    case("max-min-int64-uint64", "[b.max(x, y), b.min(x, y), b.max(u, v), b.min(u, v)]", ["max", "min"],
         x=given("int64", [4], [-1, 2 ** 40, -(2 ** 40), 5]), y=given("int64", [4], [1, 2 ** 40 + 1, -(2 ** 40) + 1, 5]),
         u=given("uint64", [3], [2 ** 64 - 1, 2 ** 32, 3]), v=given("uint64", [3], [1, 2 ** 32 - 1, 2 ** 33])),
    case("compare-int64-uint64", "[b.equal(x, y), b.notEqual(x, y), b.greater(x, y), b.greaterOrEqual(x, y),"
         " b.lesser(x, y), b.lesserOrEqual(x, y), b.greater(u, v), b.lesser(u, v)]",
         ["equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual"],
         x=given("int64", [2, 3], [-1, 2 ** 40, -(2 ** 40), 5, 2 ** 32, -(2 ** 63)]),
         y=given("int64", [3], [1, 2 ** 40, -(2 ** 40) + 1]),
         u=given("uint64", [3], [2 ** 64 - 1, 2 ** 32, 3]), v=given("uint64", [1], [2 ** 32])),
    case("where-int64", "b.where(c, x, y)", ["where"], c=given("uint8", [2, 3], [1, 0, 1, 0, 0, 1]),
         x=given("int64", [3], [2 ** 62, -5, -(2 ** 50)]), y=given("int64", [2, 1], [7, -(2 ** 63)])),
    # argMin/argMax of 64-bit inputs: two-word compares (ties and values beyond 32 bits decide).
    case("argMax-argMin-of-int64-uint64", "[b.argMax(x, 1), b.argMin(x, 0, {outputDataType: 'int64'}), b.argMax(u, 0),"
         " b.argMin(u, 0, {outputDataType: 'int64'})]", ["argMax", "argMin"],
         x=given("int64", [3, 4], [-1, 2 ** 40, 2 ** 40 + 1, 2 ** 40 + 1, -(2 ** 63), 2 ** 63 - 1, 5, -(2 ** 32),
                                   7, 7, -(2 ** 40), 2 ** 32]),
         u=given("uint64", [5], [2 ** 32, 2 ** 64 - 1, 2 ** 63, 2 ** 64 - 1, 0])),
    # reduceMax/reduceMin of 64-bit inputs over several axes and all of them.
    case("reduceMax-reduceMin-int64-uint64", "[b.reduceMax(x, {axes: [0, 2]}), b.reduceMin(x, {axes: [1],"
         " keepDimensions: true}), b.reduceMin(x), b.reduceMax(u), b.reduceMin(u, {axes: [0]}), b.reduceMax(x, {axes: []})]",
         ["reduceMax", "reduceMin"],
         x=given("int64", [2, 3, 2], [-1, 2 ** 40, -(2 ** 63), 2 ** 63 - 1, 5, -(2 ** 32), 7, -(2 ** 40), 2 ** 32, 0,
                                      -2, 2 ** 40 + 1]),
         u=given("uint64", [2, 2], [2 ** 32, 2 ** 64 - 1, 2 ** 63, 3])),
    # cumulativeSum: two-word adds in order, wrapping past 2^63 - 1 and 2^64 - 1.
    case("cumulativeSum-int64-uint64", "[b.cumulativeSum(x, 1), b.cumulativeSum(x, 0, {exclusive: true, reversed: true}),"
         " b.cumulativeSum(u, 0, {reversed: true}), b.cumulativeSum(u, 0, {exclusive: true})]", ["cumulativeSum"],
         x=given("int64", [2, 4], [2 ** 63 - 1, 1, 2 ** 32 - 1, -(2 ** 40), -5, -(2 ** 63), 2 ** 31, 7]),
         u=given("uint64", [4], [2 ** 64 - 1, 2, 2 ** 32 - 1, 2 ** 63])),
    # pow by squaring (wraps), negative exponents truncated (1, +-1, 0; 0^-n = 0).
    case("pow-int64-uint64", "[b.pow(x, e), b.pow(u, v)]", ["pow"],
         x=given("int64", [10], [3, -3, 2, 2, -2, 1, -1, -1, 0, 7]),
         e=given("int64", [10], [40, 39, 63, 64, 63, -5, -3, -4, -2, 2 ** 62 + 1]),
         u=given("uint64", [5], [3, 2 ** 32 + 1, 2 ** 64 - 1, 0, 5]), v=given("uint64", [5], [41, 3, 2 ** 63 + 1, 0, 27])),
    # div truncates toward zero, x/0 = 0, -2^63 / -1 wraps; magnitudes across both words.
    case("div-int64-uint64", "[b.div(x, y), b.div(u, v)]", ["div"],
         x=given("int64", [12], [7, -7, 7, -7, -(2 ** 63), -(2 ** 63), 2 ** 63 - 1, 5, -(2 ** 40) - 3, 123456789012345,
                                 2 ** 63 - 1, 0]),
         y=given("int64", [12], [2, 2, -2, -2, -1, 3, 1, 0, 2 ** 20 + 1, -(2 ** 33) - 7, -(2 ** 63), -5]),
         u=given("uint64", [6], [2 ** 64 - 1, 2 ** 64 - 1, 2 ** 64 - 1, 2 ** 63 + 5, 9, 2 ** 40]),
         v=given("uint64", [6], [2 ** 63 + 1, 3, 2 ** 32 + 1, 2 ** 63 + 5, 0, 2 ** 64 - 1])),
    # maxPool2d and identity of 64-bit values: two-word compares, both words copied.
    case("maxPool2d-identity-int64-uint64", "[b.maxPool2d(x, {windowDimensions: [2, 2], padding: [1, 0, 0, 1]}),"
         " b.maxPool2d(u, {windowDimensions: [1, 2], strides: [1, 2], layout: 'nhwc'}), b.identity(x), b.identity(u)]",
         ["maxPool2d", "identity"],
         x=given("int64", [1, 1, 2, 3], [-(2 ** 63), -(2 ** 40), -5, -(2 ** 32), 2 ** 40 + 1, -(2 ** 63) + 1]),
         u=given("uint64", [1, 1, 4, 1], [2 ** 63, 2 ** 64 - 1, 5, 2 ** 32])),
    # Data movement of 64-bit values: each element moves as both words (vec2<u32>); indices of
    # the gather family stay 32-bit views (int64 indices, clamped).
    case("data-movement-int64-uint64", "[b.transpose(x), b.slice(x, [0, 1], [2, 2]), b.concat([x, x], 0),"
         " b.pad(x, [1, 0], [0, 2], {value: -(2 ** 40)}), b.tile(u, [2]), b.reverse(x), b.expand(u, [2, 4]),"
         " b.triangular(x, {upper: false}), ...b.split(u, 2), b.gather(x, k, {axis: 1}), b.gatherElements(x, j, {axis: 0}),"
         " b.gatherND(x, m), b.scatterND(u, n, v), b.scatterElements(x, j, b.slice(x, [1, 0], [1, 3]), {axis: 0})]",
         ["transpose", "slice", "concat", "pad", "tile", "reverse", "expand", "triangular", "split", "gather",
          "gatherElements", "gatherND", "scatterND", "scatterElements"],
         x=given("int64", [2, 3], [2 ** 62 + 1, -5, -(2 ** 50) - 3, 7, 2 ** 63 - 1, -(2 ** 63)]),
         u=given("uint64", [4], [2 ** 64 - 1, 2 ** 33 + 1, 0, 5]), k=given("int64", [3], [2, -1, BIG]),
         j=given("int32", [1, 3], [1, 0, 1], constant=True), m=given("int32", [2, 2], [1, 2, 0, 0]),
         n=given("int32", [1, 1], [2], constant=True), v=given("uint64", [1], [2 ** 64 - 2])),
    case("split-pad-tile-reverse", "b.split(x, [1, 3], {axis: 1}).map((o, i) => i ? b.reverse(b.tile(o, [1, 1, 2])) :"
         " b.pad(o, [1, 0, 2], [0, 1, 0], {value: 7}))", ["split", "pad", "tile", "reverse"], x=operand((2, 4, 3), "int32")),
]


@pytest.fixture(scope="module")
def webgpu_page(playwright, server):
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS + WEBGPU_ARGS)
    context = browser.new_context()
    page = context.new_page()
    page.goto(f"{server}/test-pages/webgpu.html")
    why = page.evaluate("window.webgpuReady")
    if why:
        browser.close()
        pytest.skip(f"WebGPU unavailable in this Chromium ({why})")
    yield page
    browser.close()


@pytest.fixture(scope="module")
def op_results(webgpu_page):
    cases = [{k: c[k] for k in ("name", "expr", "operands", "conv")} for c in CASES]
    return webgpu_page.evaluate("(cases) => window.runCases(cases)", cases)


def test_gpu_context_uses_webgpu(op_results):
    status = op_results["status"]
    assert status["backend"] == "webgpu" and status["webgpu"] is True, status
    assert op_results["webgpu"]["available"] is True
    # The global's tally (what the WPT runner's --webgpu report reads): every case's graph on the GPU.
    graphs = op_results["webgpu"]["graphs"]
    assert graphs["gpu"] >= len(CASES) and graphs["dispatchesGpu"] >= len(CASES), graphs
    assert graphs["cpu"] == 0 and graphs["dispatchesCpu"] == 0 and graphs["reasons"] == {}, graphs


@pytest.mark.parametrize("c", CASES, ids=[c["name"] for c in CASES])
def test_op_on_gpu_matches_numpy_reference(op_results, c):
    result = next(r for r in op_results["results"] if r["name"] == c["name"])
    assert "error" not in result, result.get("error")
    # The GPU ran it: one more graph placed on the GPU, a GPU dispatch, the op in the census.
    before, after = result["before"], result["after"]
    assert after.get("graphs_gpu", 0) == before.get("graphs_gpu", 0) + 1, result["partitions"]
    assert after.get("graphs_cpu", 0) == before.get("graphs_cpu", 0)
    assert after.get("dispatches_gpu", 0) == before.get("dispatches_gpu", 0) + 1
    for op in c["ops"]:
        assert result["gpuOps"].get(op, 0) >= 1, (op, result["gpuOps"])
    for kernel in c["kernels"]:
        assert result["kernels"].get(kernel, 0) > result["kernelsBefore"].get(kernel, 0), (kernel, result["kernels"])
    for name, ref in result["cpu"].items():
        got = result["gpu"][name]
        assert got["shape"] == ref["shape"] and got["dataType"] == ref["dataType"]
        if ref["dataType"].endswith("64"):  # exact, as decimal strings
            assert got["data"] == ref["data"], c["name"]
            continue
        expected = np.array(ref["data"], dtype=np.float64)
        actual = np.array(got["data"], dtype=np.float64)
        if ref["dataType"] == "float16":  # the page sends the bits
            expected = np.array(ref["data"], np.uint16).view(np.float16).astype(np.float64)
            actual = np.array(got["data"], np.uint16).view(np.float16).astype(np.float64)
        if ref["dataType"] in ("float32", "float16"):
            np.testing.assert_allclose(actual, expected, rtol=c["tol"], atol=c["tol"], err_msg=c["name"])
        else:
            np.testing.assert_array_equal(actual, expected, err_msg=c["name"])


@pytest.mark.slow
@pytest.mark.parametrize("model, weights_dir, conv2d, concat", [
    ("squeezenet", "squeezenet1.0_nhwc", 26, 8), ("mobilenetv2", "mobilenetv2_nhwc", 53, 0)])
def test_model_runs_wholly_on_gpu(webgpu_page, server, model, weights_dir, conv2d, concat):
    """SqueezeNet classifies test.jpg as "lesser panda" on the gpu device; both models
    run as one GPU graph (no partition) and agree with the cpu device."""
    if not (MODELS / weights_dir / "weights").exists():
        pytest.skip(f"{weights_dir} weights not found under {MODELS}")
    page = webgpu_page.context.new_page()
    page.set_default_timeout(600_000)
    page.goto(f"{server}/test-pages/models_gpu.html")
    runs = int(os.environ.get("WEBGPU_MODEL_RUNS", "1"))  # more for timings (docs/performance.md)
    result = page.evaluate(f"window.runModel('{model}', {runs})")
    page.close()
    assert "error" not in result, result
    # Timings (each run: write, dispatch, read) for docs; run with -s to see them.
    print(f"\n{model}: gpu {[round(t) for t in result['gpuTimes']]} ms, cpu {[round(t) for t in result['cpuTimes']]} ms"
          f" (adapter: {result['webgpu']['adapter']})")
    if model == "squeezenet":
        assert result["gpuTop5"][0]["label"] == "lesser panda", result["gpuTop5"]
    assert [t["label"] for t in result["gpuTop5"]] == [t["label"] for t in result["cpuTop5"]]
    assert result["maxDiff"] < 1e-4, result["maxDiff"]
    backend = result["backend"]
    assert backend["webgpu"] is True and backend["partitions"] == [], backend
    counts = backend["counts"]
    assert counts.get("graphs_gpu") == 1 and counts.get("dispatches_gpu") == runs and counts.get("dispatches_cpu", 0) == 0
    assert backend["gpu_ops"]["conv2d"] == runs * conv2d and backend["gpu_ops"].get("concat", 0) == runs * concat


def test_tensor_timeline_on_gpu(webgpu_page):
    r = webgpu_page.evaluate("window.timeline()")
    assert r["values"] == {"r1": [3, 5, 7, 9], "rx": [10, 20, 30, 40], "r2": [21, 41, 61, 81],
                           "r3": [13, 33, 53, 73]}
    assert r["order"] == ["r1", "rx", "r2", "r3"]  # reads settle in call order
    assert r["destroyed"] == "InvalidStateError"
    c = r["counts"]
    assert c["graphs_gpu"] == 2 and c["dispatches_gpu"] == 4 and c.get("dispatches_cpu", 0) == 0, c
    assert c["writes"] == 2 and c.get("uploads", 0) == 0, c  # writeTensor went to the GPU at once
    assert c["readbacks"] == 4, c  # r1, r2 (BYOB), r3 and the destroyed one mapped staging buffers; rx did not


def test_context_on_a_given_gpudevice_uses_that_device(webgpu_page):
    r = webgpu_page.evaluate("window.givenDevice()")
    assert r["y"] == [1, 2, 3] and r["webgpu"] is True and r["accelerated"] is True
    assert "given to createContext" in r["adapter"]
    # Destroying the page's device loses the context built on it, and no other.
    assert "lost" in r["lost"], r["lost"]
    assert r["afterLoss"] == "InvalidStateError"
    assert r["otherLost"] is False


def test_ops_without_wgsl_kernel_are_partitioned_and_counted(webgpu_page):
    r = webgpu_page.evaluate("window.partition()")
    assert r["y"] == [16384, 65536, 147456, 262144] and r["w"] == [-1, -2, -3, -4]
    assert len(r["partitions"]) == 1 and "65536 batches exceed one dispatch" in r["partitions"][0]["reason"], r["partitions"]
    assert r["counts"]["graphs_cpu"] == 1 and r["counts"]["dispatches_cpu"] == 1 and r["counts"]["graphs_gpu"] == 1
    assert r["refused"].startswith("NotSupportedError: dispatch: input 'x' was last written by a graph that ran on the GPU")
