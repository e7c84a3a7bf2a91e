"""cast, quantizeLinear and dequantizeLinear against the formulas written out
element by element in Python, plus the validation rules WPT checks."""
import itertools
import math

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

STORE = {"int4": np.int8, "uint4": np.uint8}
RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int4": (-8, 7), "uint4": (0, 15)}


def run(build, *inputs):
    ctx = Context()
    b = ctx.graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(np.shape(a))}) for i, (dt, a) in enumerate(inputs)]
    g = b.build({"y": build(b, *ops)})
    return ctx.compute(g, {f"x{i}": np.asarray(a) for i, (_, a) in enumerate(inputs)})["y"]


def raises(build, *descs):
    ctx = Context()
    b = ctx.graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(s)}) for i, (dt, s) in enumerate(descs)]
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, *ops)


def cast1(values, src, dst, store=None):
    x = np.array(values, dtype=store or src)
    return run(lambda b, v: b.cast(v, dst), (src, x))


# ----------------------------------------------------------------------------- cast
def test_cast_float_to_int_truncates_and_saturates():
    y = cast1([1.9, -1.9, 2.5, -0.5, 3e9, -3e9, math.nan, math.inf, -math.inf], "float32", "int32")
    assert y.tolist() == [1, -1, 2, 0, 2**31 - 1, -(2**31), 0, 2**31 - 1, -(2**31)]
    assert cast1([-1.5, 255.9, 256.0, 1e10], "float32", "uint8").tolist() == [0, 255, 255, 255]
    assert cast1([1e20, -1.0], "float32", "uint64").tolist() == [2**64 - 1, 0]
    assert cast1([1e19, -1e19], "float32", "int64").tolist() == [2**63 - 1, -(2**63)]
    assert cast1([7.9, -8.9, 100.0], "float16", "int4").tolist() == [7, -8, 7]
    assert cast1([15.5, -3.0], "float32", "uint4").tolist() == [15, 0]


def test_cast_int_to_int_wraps():
    assert cast1([300, -1, 128, -129], "int32", "int8").tolist() == [44, -1, -128, 127]
    assert cast1([-1, 256, 257], "int32", "uint8").tolist() == [255, 0, 1]
    assert cast1([2**32 - 1, 2**31], "uint32", "int32").tolist() == [-1, -(2**31)]
    assert cast1([-1], "int64", "uint64").tolist() == [2**64 - 1]
    assert cast1([2**64 - 1], "uint64", "int64").tolist() == [-1]
    assert cast1([2**40 + 5], "int64", "int32").tolist() == [5]
    assert cast1([9, -9, 8, 15], "int32", "int4").tolist() == [-7, 7, -8, -1]
    assert cast1([-1, 16, 17], "int32", "uint4").tolist() == [15, 0, 1]
    assert cast1([-8, 7], "int4", "uint8", store=np.int8).tolist() == [248, 7]


def test_cast_to_float_rounds_to_nearest():
    assert cast1([2**24 + 1, 2**24 + 3], "int32", "float32").tolist() == [2.0**24, 2.0**24 + 4]
    y = cast1([70000.0, 1.0 + 2**-11, 1.0 + 3 * 2**-11], "float32", "float16")
    assert y[0] == np.inf and y[1] == 1.0 and y[2] == np.float16(1.0 + 2**-9)
    y = cast1([2**64 - 1], "uint64", "float32")
    assert y[0] == np.float32(2.0**64)
    assert cast1([-8, 7], "int4", "float32", store=np.int8).tolist() == [-8.0, 7.0]


def test_cast_shape_and_validation():
    y = cast1(np.ones((2, 3)), "float32", "int64")
    assert y.shape == (2, 3) and y.dtype == np.int64
    raises(lambda b, x: b.cast(x, "int64", label="lbl"), ("int8", [(2**31 - 1) // 2]))


# ------------------------------------------------------------------ quantizeLinear
def ref_quantize(x, scale, zp, dtype):
    lo, hi = RANGE[dtype]
    q = round(float(np.float32(x) / np.float32(scale)))  # Python round: half to even
    return max(lo, min(hi, q + int(zp)))


def ref_dequantize(x, scale, zp):
    return (int(x) - int(zp)) * float(scale)


def block_ref(shape, pshape):
    """Map an input index to its parameter index (left-pad, then block = in/param)."""
    pad = (1,) * (len(shape) - len(pshape)) + tuple(pshape)
    off = len(shape) - len(pshape)
    return lambda p: tuple(p[d] // (shape[d] // pad[d]) for d in range(len(shape)))[off:]


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int4", "uint4"])
def test_quantize_half_even_and_clamp(dtype):
    x = np.array([2.5, 3.5, -2.5, -0.5, 0.5, 1000.0, -1000.0, 1.49], np.float32)
    # scale and zeroPoint have the input's rank (2026 spec: "same rank as input").
    zp = np.array([1 if dtype.startswith("u") else 0], STORE.get(dtype, dtype))
    scale = np.array([1.0], np.float32)
    y = run(lambda b, v, s, z: b.quantizeLinear(v, s, z), ("float32", x), ("float32", scale), (dtype, zp))
    assert y.dtype == np.dtype(STORE.get(dtype, dtype))
    assert y.tolist() == [ref_quantize(v, scale[0], zp[0], dtype) for v in x]
    assert y.tolist()[:5] == ([3, 5, 0, 1, 1] if dtype.startswith("u") else [2, 4, -2, 0, 0])


def test_quantize_negative_scale_and_nan():
    x = np.array([1.0, -2.0, 6.0, math.nan], np.float32)
    y = run(lambda b, v, s, z: b.quantizeLinear(v, s, z), ("float32", x),
            ("float32", np.array([-0.5], np.float32)), ("uint8", np.array([128], np.uint8)))
    assert y.tolist()[:3] == [126, 132, 116]
    assert y[3] == 128  # implementation choice: NaN quantizes to the zero point


@pytest.mark.parametrize("xshape,pshape", [
    ((3, 2, 5), (3, 2, 5)), ((3, 2, 5), (1, 1, 5)), ((3, 2, 5), (1, 1, 1)), ((6, 4, 5), (2, 2, 1)),
    ((1, 4, 1), (1, 2, 1)), ((3, 4), (1, 2)), ((6,), (2,)),
])
def test_quantize_blockwise_against_loop(xshape, pshape):
    rng = np.random.default_rng(len(xshape) * 10 + len(pshape))
    x = (rng.standard_normal(xshape) * 20).astype(np.float32)
    scale = rng.uniform(0.3, 3.0, pshape).astype(np.float32)
    zp = rng.integers(-20, 20, pshape).astype(np.int8)
    y = run(lambda b, v, s, z: b.quantizeLinear(v, s, z), ("float32", x), ("float32", scale), ("int8", zp))
    assert y.shape == xshape
    pick = block_ref(xshape, pshape)
    for p in itertools.product(*(range(n) for n in xshape)):
        assert y[p] == ref_quantize(x[p], scale[pick(p)], zp[pick(p)], "int8")


def test_quantize_float16_input():
    x = np.array([1.0, 2.0, 3.0, -7.0], np.float16)
    y = run(lambda b, v, s, z: b.quantizeLinear(v, s, z), ("float16", x),
            ("float16", np.array([0.5], np.float16)), ("int4", np.array([-1], np.int8)))
    assert y.tolist() == [1, 3, 5, -8]


# ---------------------------------------------------------------- dequantizeLinear
@pytest.mark.parametrize("dtype,values,zp", [
    ("int8", [-128, 0, 127, 5], -3),
    ("uint8", [0, 255, 128, 7], 128),
    ("int4", [-8, 7, 0, -1], -5),
    ("uint4", [0, 15, 8, 3], 12),
    ("int32", [2**31 - 1, -(2**31), 0, 12345], -7),
])
def test_dequantize_per_tensor(dtype, values, zp):
    x = np.array(values, STORE.get(dtype, dtype))
    scale = np.array([1.1202747821807861], np.float32)
    y = run(lambda b, v, s, z: b.dequantizeLinear(v, s, z), (dtype, x), ("float32", scale),
            (dtype, np.array([zp], STORE.get(dtype, dtype))))
    assert y.dtype == np.float32
    assert y.tolist() == [float(np.float32(ref_dequantize(v, scale[0], zp))) for v in values]


@pytest.mark.parametrize("xshape,pshape", [((6, 4, 5), (3, 2, 1)), ((1, 1, 2, 2), (1, 1, 2, 2)), ((3, 2, 5), (1, 1, 5))])
def test_dequantize_blockwise_against_loop(xshape, pshape):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, xshape).astype(np.uint8)
    scale = rng.uniform(-3, 3, pshape).astype(np.float32)
    zp = rng.integers(0, 256, pshape).astype(np.uint8)
    y = run(lambda b, v, s, z: b.dequantizeLinear(v, s, z), ("uint8", x), ("float32", scale), ("uint8", zp))
    pick = block_ref(xshape, pshape)
    for p in itertools.product(*(range(n) for n in xshape)):
        assert y[p] == np.float32(ref_dequantize(x[p], scale[pick(p)], zp[pick(p)]))


def test_dequantize_float16_scale():
    y = run(lambda b, v, s, z: b.dequantizeLinear(v, s, z), ("int8", np.array([100, -100], np.int8)),
            ("float16", np.array([0.1], np.float16)), ("int8", np.array([1], np.int8)))
    assert y.dtype == np.float16
    assert y.tolist() == [float(np.float16(99 * float(np.float16(0.1)))), float(np.float16(-101 * float(np.float16(0.1))))]


# ---------------------------------------------------------------------- validation
Q = lambda b, x, s, z: b.quantizeLinear(x, s, z, label="lbl")  # noqa: E731
D = lambda b, x, s, z: b.dequantizeLinear(x, s, z, label="lbl")  # noqa: E731


def test_quantize_validation():
    raises(Q, ("float32", [3, 2, 5]), ("float32", [2, 1, 5]), ("int8", [2, 1, 5]))
    raises(Q, ("float32", [3, 2, 5]), ("float32", [5]), ("int8", [2, 5]))
    raises(Q, ("float32", [3, 2, 5]), ("float16", [3, 1, 5]), ("int8", [3, 1, 5]))
    raises(Q, ("int32", [3, 2, 5]), ("float32", [5]), ("int8", [5]))
    raises(Q, ("float32", [3, 2, 5]), ("int32", [5]), ("uint8", [5]))
    raises(Q, ("float32", [3, 2, 5]), ("float32", [5]), ("float16", [5]))
    raises(Q, ("float32", [3, 2, 5]), ("float32", [2]), ("int8", [2]))
    raises(Q, ("float32", [5]), ("float32", [1, 5]), ("int8", [1, 5]))


def test_dequantize_validation():
    raises(D, ("uint8", [3, 2, 5]), ("float32", [2]), ("uint8", [2]))
    raises(D, ("uint8", [3, 2, 5]), ("float32", [5]), ("uint8", [2]))
    raises(D, ("int8", [3, 2, 5]), ("float32", [5]), ("uint8", [5]))
    raises(D, ("float16", [3, 2, 5]), ("float32", [5]), ("int8", [5]))
    raises(D, ("int8", [3, 2, 5]), ("float32", [5]), ("int32", [5]))
    raises(D, ("uint8", [3, 2, 5]), ("int32", [5]), ("uint8", [5]))
    raises(D, ("int8", [(2**31 - 1) // 5, 5]), ("float32", [5]), ("int8", [5]))


def test_quantization_limits():
    limits = Context().op_support_limits()
    for op in ("quantizeLinear", "dequantizeLinear"):
        assert set(limits[op]) == {"input", "scale", "zeroPoint", "output"}
    assert set(limits["quantizeLinear"]["output"]["dataTypes"]) == {"int8", "uint8", "int4", "uint4"}
    assert "int32" in limits["dequantizeLinear"]["input"]["dataTypes"]
