"""Element-wise unary, binary, comparison and logical ops against independent
references (Python's math module, exact integer arithmetic, hand-computed
values), the WebNN numerics choices the kernels pin, and validation errors."""
import math

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError
from webnn_core.ops.elementwise import erf, erfc

SPEC8 = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
NP = {t: np.dtype(t) for t in SPEC8}


def run(build, *inputs):
    """build(b, *operands) -> operand; inputs are (dtype, array) pairs."""
    ctx = Context()
    b = ctx.graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(np.shape(a))}) for i, (dt, a) in enumerate(inputs)]
    g = b.build({"y": build(b, *ops)})
    return ctx.compute(g, {f"x{i}": np.asarray(a, NP.get(dt)) for i, (dt, a) in enumerate(inputs)})["y"]


def raises(build, *descs):
    b = Context().graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(s)}) for i, (dt, s) in enumerate(descs)]
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, *ops)


def ulp_diff(a, b, dtype):
    """Distance in units in the last place, sign-magnitude like WPT's metric."""
    bits = {"float32": (np.int32, np.float32), "float16": (np.int16, np.float16)}[dtype]
    def key(v):
        i = np.asarray(v, bits[1]).view(bits[0]).astype(np.int64)
        return np.where(i < 0, -(i & (2 ** (8 * np.dtype(bits[0]).itemsize - 1) - 1)), i)
    return np.abs(key(a) - key(b))


GRID = np.concatenate([np.linspace(-20, 20, 4001), [0.0, -0.0, 1e-30, -1e-30, 1e-6, 0.5, -0.5]]).astype(np.float32)


# ------------------------------------------------------------------------- unary
@pytest.mark.parametrize("op,ref,domain", [
    ("cos", math.cos, None), ("sin", math.sin, None), ("tan", math.tan, None),
    ("exp", math.exp, lambda x: abs(x) <= 80), ("log", math.log, lambda x: x > 0),
    ("sqrt", math.sqrt, lambda x: x >= 0), ("reciprocal", lambda v: 1 / v, lambda x: x != 0), ("erf", math.erf, None),
    ("ceil", math.ceil, None), ("floor", math.floor, None), ("abs", abs, None), ("neg", lambda v: -v, None),
])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_float_unary_is_correctly_rounded(op, ref, domain, dtype):
    x = GRID.astype(dtype)
    if domain is not None:
        x = x[domain(x)]
    y = run(lambda b, a: getattr(b, op)(a), (dtype, x))
    assert y.dtype == np.dtype(dtype) and y.shape == x.shape
    expected = np.array([ref(float(v)) for v in x], np.float64).astype(dtype)
    # Computed in float64 and rounded once: at most 1 ULP off the correctly rounded value.
    assert ulp_diff(y, expected, dtype).max() <= 1, op


def test_float_unary_specials():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -1.0], np.float32)
    np.testing.assert_array_equal(run(lambda b, a: b.exp(a), ("float32", x)), np.array([np.inf, 0, np.nan, 1, math.exp(-1)], np.float32))
    np.testing.assert_array_equal(run(lambda b, a: b.log(a), ("float32", x)), [np.inf, np.nan, np.nan, -np.inf, np.nan])
    np.testing.assert_array_equal(run(lambda b, a: b.sqrt(a), ("float32", x)), [np.inf, np.nan, np.nan, 0, np.nan])
    np.testing.assert_array_equal(run(lambda b, a: b.reciprocal(a), ("float32", x)), [0, -0.0, np.nan, np.inf, -1])
    np.testing.assert_array_equal(run(lambda b, a: b.erf(a), ("float32", x)), [1, -1, np.nan, 0, np.float32(math.erf(-1))])


@pytest.mark.parametrize("dtype,lo", [("int32", -2**31), ("int8", -128)])
def test_abs_neg_integers_wrap(dtype, lo):
    x = np.array([lo, lo + 1, -3, 0, 5], dtype)
    np.testing.assert_array_equal(run(lambda b, a: b.abs(a), (dtype, x)), np.array([lo, -(lo + 1), 3, 0, 5], dtype))
    np.testing.assert_array_equal(run(lambda b, a: b.neg(a), (dtype, x)), np.array([lo, -(lo + 1), 3, 0, -5], dtype))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "int8"])
def test_sign(dtype):
    vals = [-5, -1, 0, 2, 100] + ([-np.inf, np.inf] if dtype.startswith("float") else [])
    want = [-1, -1, 0, 1, 1] + ([-1, 1] if dtype.startswith("float") else [])
    np.testing.assert_array_equal(run(lambda b, a: b.sign(a), (dtype, np.array(vals, dtype))), np.array(want, dtype))


def test_identity_all_types_including_int4():
    for dtype in SPEC8:
        x = np.arange(6, dtype=dtype).reshape(2, 3)
        np.testing.assert_array_equal(run(lambda b, a: b.identity(a), (dtype, x)), x)
    ctx = Context()
    b = ctx.graph_builder()
    g = b.build({"y": b.identity(b.input("x", {"dataType": "int4", "shape": [4]}))})
    np.testing.assert_array_equal(ctx.compute(g, {"x": np.array([-8, -1, 0, 7], np.int8)})["y"], [-8, -1, 0, 7])


# --------------------------------------------------------------------------- erf
def test_erf_dense_grid_against_math_erf():
    x = np.concatenate([np.linspace(-8, 8, 400001), np.geomspace(1e-300, 1, 2000), -np.geomspace(1e-300, 1, 2000)])
    got = erf(x)
    want = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(got - want) / np.maximum(np.abs(want), 1e-300)) < 1e-14
    # ... so every float32 input rounds to the correctly rounded float32 result (<= 1 ULP).
    x32 = np.linspace(-5, 5, 200001).astype(np.float32)
    y = run(lambda b, a: b.erf(a), ("float32", x32))
    assert ulp_diff(y, np.array([math.erf(float(v)) for v in x32]).astype(np.float32), "float32").max() <= 1


def test_erfc_tail_is_relatively_accurate():
    x = np.linspace(-6, 27, 200001)
    want = np.array([math.erfc(v) for v in x])
    ok = want > 1e-300
    assert np.max(np.abs(erfc(x)[ok] - want[ok]) / want[ok]) < 1e-12
    assert erf(np.array([np.nan]))[0] != erf(np.array([np.nan]))[0]
    np.testing.assert_array_equal(erfc(np.array([np.inf, -np.inf, 0.0])), [0, 2, 1])


def test_erf_inputs_not_modified():
    x = np.linspace(-3, 3, 11)
    keep = x.copy()
    erf(x), erfc(x)
    np.testing.assert_array_equal(x, keep)


# ------------------------------------------------------------------------ binary
def wrap(values, dtype):
    bits = np.dtype(dtype).itemsize * 8
    out = []
    for v in values:
        v %= 2 ** bits
        if np.dtype(dtype).kind == "i" and v >= 2 ** (bits - 1):
            v -= 2 ** bits
        out.append(v)
    return np.array(out, dtype)


@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64", "int8", "uint8"])
def test_integer_add_sub_mul_wrap(dtype):
    info = np.iinfo(dtype)
    a = [int(info.max), int(info.min), 7, int(info.max) // 3]
    b = [1, 1 if info.min == 0 else -1, 3, 5]
    A, B = np.array(a, dtype), np.array(b, dtype)
    for op, f in (("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y)):
        got = run(lambda bb, x, y: getattr(bb, op)(x, y), (dtype, A), (dtype, B))
        np.testing.assert_array_equal(got, wrap([f(x, y) for x, y in zip(a, b)], dtype), err_msg=op)


def test_integer_div_truncates_toward_zero_and_by_zero_is_zero():
    a = np.array([7, -7, 7, -7, 5, -2**31, 0, 9], np.int32)
    b = np.array([2, 2, -2, -2, 0, -1, 0, 3], np.int32)
    # WebNN leaves integer div open; we pin C-style truncation, x/0 = 0, INT_MIN/-1 wraps.
    np.testing.assert_array_equal(run(lambda bb, x, y: bb.div(x, y), ("int32", a), ("int32", b)),
                                  [3, -3, -3, 3, 0, -2**31, 0, 3])
    u = run(lambda bb, x, y: bb.div(x, y), ("uint8", np.array([255, 7, 3], np.uint8)), ("uint8", np.array([2, 0, 4], np.uint8)))
    np.testing.assert_array_equal(u, [127, 0, 0])
    i8 = run(lambda bb, x, y: bb.div(x, y), ("int8", np.array([-128, -9], np.int8)), ("int8", np.array([-1, 4], np.int8)))
    np.testing.assert_array_equal(i8, [-128, -2])


def test_float_div_by_zero():
    y = run(lambda bb, x, z: bb.div(x, z), ("float32", np.array([1, -1, 0], np.float32)), ("float32", np.zeros(3, np.float32)))
    np.testing.assert_array_equal(y, [np.inf, -np.inf, np.nan])


def test_integer_pow():
    a = np.array([2, 3, -2, 1, -1, -1, 2, 0, 0, 5, 3], np.int32)
    b = np.array([10, 21, 3, -5, -3, -4, -1, -2, 0, 0, 40], np.int32)
    # Negative exponents give the truncated real result (0**-n is 0, like x/0);
    # overflow wraps like repeated multiplication.
    want = [1024, wrap([3 ** 21], "int32")[0], -8, 1, -1, 1, 0, 0, 1, 1, wrap([3 ** 40], "int32")[0]]
    np.testing.assert_array_equal(run(lambda bb, x, y: bb.pow(x, y), ("int32", a), ("int32", b)), want)
    u = run(lambda bb, x, y: bb.pow(x, y), ("uint8", np.array([2, 3], np.uint8)), ("uint8", np.array([9, 5], np.uint8)))
    np.testing.assert_array_equal(u, [0, 243])


def test_float_pow():
    a = np.array([2, 2, -8, 4, -2, 0], np.float32)
    b = np.array([0.5, -3, 1 / 3, 0.5, 3, -1], np.float32)
    want = [math.sqrt(2), 0.125, np.nan, 2, -8, np.inf]  # negative base, fractional exponent: NaN
    y = run(lambda bb, x, z: bb.pow(x, z), ("float32", a), ("float32", b))
    np.testing.assert_array_equal(y, np.array(want, np.float32))


def test_max_min_propagate_nan_and_broadcast():
    a = np.array([[1, np.nan, 3], [-0.5, 2, np.inf]], np.float32)
    b = np.array([2, 0, np.nan], np.float32)
    # The spec defines no NaN rule; we propagate NaN (IEEE 754-2019 maximum/minimum).
    np.testing.assert_array_equal(run(lambda bb, x, y: bb.max(x, y), ("float32", a), ("float32", b)),
                                  [[2, np.nan, np.nan], [2, 2, np.nan]])
    np.testing.assert_array_equal(run(lambda bb, x, y: bb.min(x, y), ("float32", a), ("float32", b)),
                                  [[1, np.nan, np.nan], [-0.5, 0, np.nan]])
    u = run(lambda bb, x, y: bb.max(x, y), ("uint64", np.array([2**64 - 1, 0], np.uint64)), ("uint64", np.array([1, 5], np.uint64)))
    np.testing.assert_array_equal(u, np.array([2**64 - 1, 5], np.uint64))


def test_binary_broadcast_shapes():
    a = np.arange(8 * 6, dtype=np.float32).reshape(8, 1, 6, 1)
    b = np.arange(7 * 5, dtype=np.float32).reshape(7, 1, 5)
    y = run(lambda bb, x, z: bb.add(x, z), ("float32", a), ("float32", b))
    assert y.shape == (8, 7, 6, 5)
    assert y[3, 4, 2, 1] == a[3, 0, 2, 0] + b[4, 0, 1]
    s = run(lambda bb, x, z: bb.sub(x, z), ("int32", np.array(5, np.int32)), ("int32", np.array([1, 2], np.int32)))
    np.testing.assert_array_equal(s, [4, 3])


def test_float16_rounds_once_to_nearest_even():
    # Pinned: float16 results equal the exact result rounded once to nearest-even
    # (the sum/product of two float16 values is exact in float64).
    rng = np.random.default_rng(0)
    a = rng.standard_normal(4000).astype(np.float16) * np.float16(50)
    b = rng.standard_normal(4000).astype(np.float16)
    b[b == 0] = 1
    for op, f in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide)):
        got = run(lambda bb, x, y: getattr(bb, op)(x, y), ("float16", a), ("float16", b))
        np.testing.assert_array_equal(got, f(a.astype(np.float64), b.astype(np.float64)).astype(np.float16), err_msg=op)
    # Ties: 2048 + 1 is halfway between 2048 and 2050 -> even (2048); 2048 + 3 -> 2052.
    t = run(lambda bb, x, y: bb.add(x, y), ("float16", np.array([2048, 2048], np.float16)), ("float16", np.array([1, 3], np.float16)))
    np.testing.assert_array_equal(t, [2048, 2052])
    big = run(lambda bb, x, y: bb.mul(x, y), ("float16", np.array([300], np.float16)), ("float16", np.array([300], np.float16)))
    assert np.isinf(big[0])


# -------------------------------------------------------------- comparison/logic
@pytest.mark.parametrize("dtype", SPEC8)
def test_comparisons(dtype):
    a = np.array([1, 2, 3, 0], dtype)
    b = np.array([2, 2, 1, 0], dtype)
    for op, f in (("equal", np.equal), ("notEqual", np.not_equal), ("greater", np.greater),
                  ("greaterOrEqual", np.greater_equal), ("lesser", np.less), ("lesserOrEqual", np.less_equal)):
        y = run(lambda bb, x, z: getattr(bb, op)(x, z), (dtype, a), (dtype, b))
        assert y.dtype == np.uint8
        np.testing.assert_array_equal(y, [int(f(int(p), int(q))) for p, q in zip(a, b)], err_msg=op)


def test_comparisons_with_nan():
    a = np.array([np.nan, np.nan, 1], np.float32)
    b = np.array([np.nan, 1, np.nan], np.float32)
    for op, want in (("equal", [0, 0, 0]), ("notEqual", [1, 1, 1]), ("greater", [0, 0, 0]),
                     ("greaterOrEqual", [0, 0, 0]), ("lesser", [0, 0, 0]), ("lesserOrEqual", [0, 0, 0])):
        np.testing.assert_array_equal(run(lambda bb, x, z: getattr(bb, op)(x, z), ("float32", a), ("float32", b)), want)


def test_logical_ops_treat_nonzero_as_true():
    a = np.array([0, 0, 2, 255], np.uint8)
    b = np.array([0, 8, 0, 1], np.uint8)
    for op, want in (("logicalAnd", [0, 0, 0, 1]), ("logicalOr", [0, 1, 1, 1]), ("logicalXor", [0, 1, 1, 0])):
        np.testing.assert_array_equal(run(lambda bb, x, z: getattr(bb, op)(x, z), ("uint8", a), ("uint8", b)), want)
    np.testing.assert_array_equal(run(lambda bb, x: bb.logicalNot(x), ("uint8", a)), [1, 1, 0, 0])


# -------------------------------------------------------------------- validation
UNARY_LIMITS = {
    **{op: ["float32", "float16"] for op in ("ceil", "cos", "erf", "exp", "floor", "log", "reciprocal", "sin", "sqrt", "tan")},
    "abs": ["float32", "float16", "int32", "int8"], "neg": ["float32", "float16", "int32", "int8"],
    "sign": ["float32", "float16", "int32", "int64", "int8"],
}


def data_types(entry):
    """An opSupportLimits entry without its rankRanges (tested in test_spec_2026.py)."""
    return {k: {"dataTypes": v["dataTypes"]} for k, v in entry.items()}


def test_support_limits_match_wpt_table():
    limits = Context().op_support_limits()
    for op, types in UNARY_LIMITS.items():
        assert data_types(limits[op]) == {"input": {"dataTypes": types}, "output": {"dataTypes": types}}, op
    assert set(SPEC8) <= set(limits["identity"]["input"]["dataTypes"])
    for op in ("add", "sub", "mul", "div", "max", "min", "pow"):
        assert data_types(limits[op]) == {k: {"dataTypes": SPEC8} for k in ("a", "b", "output")}
    for op in ("equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual"):
        assert data_types(limits[op]) == {"a": {"dataTypes": SPEC8}, "b": {"dataTypes": SPEC8}, "output": {"dataTypes": ["uint8"]}}
    for op in ("logicalAnd", "logicalOr", "logicalXor"):
        assert data_types(limits[op]) == {k: {"dataTypes": ["uint8"]} for k in ("a", "b", "output")}
    assert data_types(limits["logicalNot"]) == {"a": {"dataTypes": ["uint8"]}, "output": {"dataTypes": ["uint8"]}}


@pytest.mark.parametrize("op", sorted(UNARY_LIMITS))
def test_unary_dtype_and_rank_enforcement(op):
    b = Context().graph_builder()
    for dtype in SPEC8:
        for shape in ([], [2], [2, 3], [2, 3, 4], [2, 3, 4, 5], [2, 3, 4, 5, 6]):
            x = b.input(f"input{dtype}{len(shape)}", {"dataType": dtype, "shape": shape})
            if dtype in UNARY_LIMITS[op]:
                y = getattr(b, op)(x)
                assert (y.dtype, y.shape) == (dtype, tuple(shape))
            else:
                with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
                    getattr(b, op)(x, label="lbl")


@pytest.mark.parametrize("op", ["add", "pow", "equal", "logicalAnd"])
def test_binary_validation(op):
    dt = "uint8" if op == "logicalAnd" else "float32"
    raises(lambda b, x, y: getattr(b, op)(x, y, label="lbl"), (dt, [4, 2]), (dt, [4]))        # not broadcastable
    raises(lambda b, x, y: getattr(b, op)(x, y, label="lbl"), (dt, [2, 3, 4]), (dt, [1, 5]))
    raises(lambda b, x, y: getattr(b, op)(x, y, label="lbl"), (dt, [4, 2]), ("int32", [1]))     # dtypes differ
    b = Context().graph_builder()
    big = b.input("a", {"dataType": dt, "shape": [(2**31 - 1) // np.dtype(dt).itemsize, 1]})
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):                                       # output too large
        getattr(b, op)(big, b.input("b", {"dataType": dt, "shape": [1, 5]}), label="lbl")
    other = Context().graph_builder().input("x", {"dataType": dt, "shape": [2, 2]})
    with pytest.raises(WebNNTypeError):
        getattr(b, op)(other, b.input("y", {"dataType": dt, "shape": [2, 2]}))


def test_logical_ops_reject_non_uint8():
    raises(lambda b, x, y: b.logicalOr(x, y, label="lbl"), ("float32", [2]), ("float32", [2]))
    raises(lambda b, x: b.logicalNot(x, label="lbl"), ("int8", [2]))


def test_kernels_do_not_modify_inputs():
    a = np.array([-3, 5, -7], np.int32)
    b = np.array([2, 0, -2], np.int32)
    a0, b0 = a.copy(), b.copy()
    for op in ("div", "pow", "max"):
        run(lambda bb, x, y: getattr(bb, op)(x, y), ("int32", a), ("int32", b))
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)
