"""Reductions, argMin/argMax and cumulativeSum against plain-Python references
(explicit loops over index tuples with math.fsum / exact integers), the
integer wrap-around we pin, and the validation rules WPT checks."""
import itertools
import math

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

SPEC8 = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
FLOAT = ["float32", "float16"]
F32_I32 = ["float32", "float16", "int32", "uint32"]
REDUCE_LIMITS = {
    "reduceL1": F32_I32, "reduceL2": FLOAT, "reduceLogSum": FLOAT, "reduceLogSumExp": FLOAT,
    "reduceMax": SPEC8, "reduceMean": FLOAT, "reduceMin": SPEC8, "reduceProduct": F32_I32,
    "reduceSum": F32_I32, "reduceSumSquare": F32_I32,
}
# The spec's reduction functions over a list of Python numbers.
REF = {
    "reduceL1": lambda v: math.fsum(abs(x) for x in v),
    "reduceL2": lambda v: math.sqrt(math.fsum(x * x for x in v)),
    "reduceLogSum": lambda v: math.log(math.fsum(v)),
    "reduceLogSumExp": lambda v: math.log(math.fsum(math.exp(x) for x in v)),
    "reduceMax": max,
    "reduceMean": lambda v: math.fsum(v) / len(v),
    "reduceMin": min,
    "reduceProduct": math.prod,
    "reduceSum": math.fsum,
    "reduceSumSquare": lambda v: math.fsum(x * x for x in v),
}


def data_types(entry):
    """An opSupportLimits entry without its rankRanges (tested in test_spec_2026.py)."""
    return {k: {"dataTypes": v["dataTypes"]} for k, v in entry.items()}


def run(build, dtype, x):
    ctx = Context()
    b = ctx.graph_builder()
    g = b.build({"y": build(b, b.input("x", {"dataType": dtype, "shape": list(np.shape(x))}))})
    return ctx.compute(g, {"x": np.asarray(x, dtype)})["y"]


def raises(build, dtype, shape):
    b = Context().graph_builder()
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, b.input("x", {"dataType": dtype, "shape": list(shape)}))


def reference(op, x, axes, keep):
    """Apply REF[op] to every group of elements that share the non-reduced indices."""
    x = np.asarray(x)
    rank = x.ndim
    axes = tuple(range(rank)) if axes is None else tuple(axes)
    kept = [d for d in range(rank) if d not in axes]
    out_shape = [x.shape[d] for d in kept]
    out = np.empty(out_shape, np.float64)
    for idx in itertools.product(*[range(x.shape[d]) for d in kept]):
        group = []
        for red in itertools.product(*[range(x.shape[d]) for d in axes]):
            full = [0] * rank
            for d, i in zip(kept, idx):
                full[d] = i
            for d, i in zip(axes, red):
                full[d] = i
            group.append(float(x[tuple(full)]))
        out[idx] = REF[op](group)
    if keep:
        out = out.reshape([1 if d in axes else x.shape[d] for d in range(rank)])
    return out


X = np.random.default_rng(0).uniform(0.5, 3, (2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("op", sorted(REDUCE_LIMITS))
@pytest.mark.parametrize("axes,keep", [(None, False), (None, True), ([1], False), ([0, 2], True), ([2, 0], False), ([], False)])
def test_reduce_float32_against_reference(op, axes, keep):
    opts = {"keepDimensions": keep} if axes is None else {"axes": axes, "keepDimensions": keep}
    y = run(lambda b, x: getattr(b, op)(x, **opts), "float32", X)
    want = reference(op, X, axes, keep).astype(np.float32)
    assert y.shape == want.shape and y.dtype == np.float32
    # float64 accumulation, one rounding.
    np.testing.assert_allclose(y, want, rtol=2e-7, atol=0)


@pytest.mark.parametrize("op", sorted(REDUCE_LIMITS))
def test_reduce_float16_rounds_once(op):
    x = X.astype(np.float16)
    y = run(lambda b, v: getattr(b, op)(v, axes=[1, 2]), "float16", x)
    want = reference(op, x, [1, 2], False)
    np.testing.assert_array_equal(y, want.astype(np.float16))


@pytest.mark.parametrize("op", sorted(REDUCE_LIMITS))
def test_reduce_scalar_and_empty_axes(op):
    # A scalar reduces to a scalar; axes=[] keeps the shape and applies the function per element.
    s = run(lambda b, v: getattr(b, op)(v), "float32", np.float32(2.5))
    assert s.shape == () and s == np.float32(REF[op]([2.5]))
    e = run(lambda b, v: getattr(b, op)(v, axes=[]), "float32", X)
    assert e.shape == X.shape
    np.testing.assert_allclose(e, reference(op, X, [], False).astype(np.float32), rtol=2e-7)


def test_reduce_log_sum_exp_is_stable():
    y = run(lambda b, v: b.reduceLogSumExp(v), "float32", np.array([1000, 1000, -np.inf], np.float32))
    assert y == np.float32(1000 + math.log(2))
    y = run(lambda b, v: b.reduceLogSumExp(v, axes=[1]), "float32", np.array([[-np.inf, -np.inf], [np.inf, 1]], np.float32))
    np.testing.assert_array_equal(y, [-np.inf, np.inf])


def test_reduce_integer_types_are_exact_and_wrap():
    # Pinned: integer reductions equal the exact result modulo 2^32 (two's complement for int32).
    x = np.array([[2**31 - 1, 1], [-2**31, -1], [70000, 70000]], np.int32)
    np.testing.assert_array_equal(run(lambda b, v: b.reduceSum(v, axes=[1]), "int32", x), [-2**31, 2**31 - 1, 140000])
    np.testing.assert_array_equal(run(lambda b, v: b.reduceProduct(v, axes=[1]), "int32", x),
                                  np.array([(2**31 - 1), -2**31, (70000 * 70000 + 2**31) % 2**32 - 2**31], np.int64))
    np.testing.assert_array_equal(run(lambda b, v: b.reduceL1(v, axes=[1]), "int32", x), [-2**31, -2**31 + 1, 140000])
    np.testing.assert_array_equal(run(lambda b, v: b.reduceSumSquare(v, axes=[1]), "int32", np.array([[46341, 0]], np.int32)),
                                  [(46341**2 + 2**31) % 2**32 - 2**31])
    u = np.array([2**32 - 1, 2, 3], np.uint32)
    assert run(lambda b, v: b.reduceSum(v), "uint32", u) == 4
    assert run(lambda b, v: b.reduceProduct(v), "uint32", u) == (2**32 - 1) * 6 % 2**32
    big = np.full(1000, 2**30, np.int32)
    assert run(lambda b, v: b.reduceSum(v), "int32", big) == (1000 * 2**30 + 2**31) % 2**32 - 2**31


@pytest.mark.parametrize("dtype", SPEC8)
def test_reduce_max_min_all_types(dtype):
    info = np.iinfo(dtype) if dtype not in FLOAT else None
    vals = [3, 7, 1, 7] if info is None else [int(info.max), 0, int(info.min), 5]
    x = np.array(vals, dtype).reshape(2, 2)
    np.testing.assert_array_equal(run(lambda b, v: b.reduceMax(v, axes=[0]), dtype, x), np.max(np.array(vals, object).reshape(2, 2), axis=0).astype(dtype))
    assert run(lambda b, v: b.reduceMin(v), dtype, x) == min(vals)


def test_reduce_max_nan_propagates():
    assert np.isnan(run(lambda b, v: b.reduceMax(v), "float32", np.array([1, np.nan, 3], np.float32)))


def test_reduce_validation():
    for op, types in REDUCE_LIMITS.items():
        raises(lambda b, x: getattr(b, op)(x, axes=[4], label="lbl"), "float32", [1, 2, 5, 5])
        raises(lambda b, x: getattr(b, op)(x, axes=[0, 1, 1], label="lbl"), "float32", [1, 2, 5, 5])
        raises(lambda b, x: getattr(b, op)(x, axes=[0], label="lbl"), "float32", [])
        b = Context().graph_builder()
        for dtype in SPEC8:
            x = b.input(f"input{dtype}", {"dataType": dtype, "shape": [2, 3, 4]})
            if dtype in types:
                y = getattr(b, op)(x)
                assert (y.dtype, y.shape) == (dtype, ())
            else:
                with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
                    getattr(b, op)(x, label="lbl")
        y = getattr(b, op)(b.input("x157", {"dataType": "float32", "shape": [1, 3, 5, 5]}), axes=[0, 1])
        assert y.shape == (5, 5)
        y = getattr(b, op)(b.input("x159", {"dataType": "float32", "shape": [1, 3, 4, 4]}), keepDimensions=True)
        assert y.shape == (1, 1, 1, 1)


# ------------------------------------------------------------ argMin / argMax
def _arg_ref(x, axis, pick):
    moved = np.moveaxis(x, axis, -1)
    out = np.empty(moved.shape[:-1], np.int64)
    for idx in np.ndindex(moved.shape[:-1]):
        row = list(moved[idx])
        out[idx] = row.index(pick(row))  # first occurrence
    return out


@pytest.mark.parametrize("dtype", SPEC8)
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_arg_min_max_first_index_on_ties(dtype, axis):
    x = np.random.default_rng(axis).integers(0, 4, (3, 4, 5)).astype(dtype)  # many ties
    for op, pick in (("argMin", min), ("argMax", max)):
        y = run(lambda b, v: getattr(b, op)(v, axis), dtype, x)
        assert y.dtype == np.int32
        np.testing.assert_array_equal(y, _arg_ref(x, axis, pick), err_msg=op)


def test_arg_min_max_keep_dimensions_and_int64():
    x = np.array([[1, 9, 9], [5, 0, 0]], np.float32)
    y = run(lambda b, v: b.argMax(v, 1, keepDimensions=True, outputDataType="int64"), "float32", x)
    assert y.dtype == np.int64 and y.shape == (2, 1)
    np.testing.assert_array_equal(y, [[1], [0]])
    np.testing.assert_array_equal(run(lambda b, v: b.argMin(v, 0), "float32", x), [0, 1, 1])


def test_arg_min_max_validation():
    limits = Context().op_support_limits()
    for op in ("argMin", "argMax"):
        assert data_types(limits[op]) == {"input": {"dataTypes": SPEC8}, "output": {"dataTypes": ["int32", "int64"]}}
        raises(lambda b, x: getattr(b, op)(x, 4, label="lbl"), "float32", [1, 2, 3, 4])
        raises(lambda b, x: getattr(b, op)(x, 0, label="lbl"), "float32", [])
        raises(lambda b, x: getattr(b, op)(x, 0, outputDataType="uint32", label="lbl"), "float32", [2])
        # shape[axis] > the output type's max is a TypeError, unreachable under maxTensorByteLength:
        b = Context().graph_builder()
        y = getattr(b, op)(b.input("x200", {"dataType": "uint8", "shape": [2**31 - 1, 1]}), 0, outputDataType="int32")
        assert (y.dtype, y.shape) == ("int32", (1,))
        assert getattr(b, op)(b.input("x202", {"dataType": "float32", "shape": [1, 2, 3, 4]}), 1).shape == (1, 3, 4)


# --------------------------------------------------------------- cumulativeSum
def _cumsum_ref(x, axis, exclusive, reversed_):
    moved = np.moveaxis(np.asarray(x, object), axis, -1)
    out = np.empty(moved.shape, object)
    for idx in np.ndindex(moved.shape[:-1]):
        row = list(moved[idx])
        n = len(row)
        for i in range(n):
            js = range(i, n) if reversed_ else range(0, i + 1)
            out[idx + (i,)] = sum(row[j] for j in js if not (exclusive and j == i))
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reversed_", [False, True])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_cumulative_sum(exclusive, reversed_, axis):
    x = np.random.default_rng(3).integers(-50, 50, (2, 3, 4))
    for dtype in ("float32", "int32", "int64"):
        y = run(lambda b, v: b.cumulativeSum(v, axis, exclusive=exclusive, reversed=reversed_), dtype, x.astype(dtype))
        assert y.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(y, _cumsum_ref(x, axis, exclusive, reversed_).astype(dtype))


def test_cumulative_sum_float_rounds_once_and_ints_wrap():
    x = np.array([1, 2**-30, 2**-30, 2**-30, 2**-30], np.float32)  # float32 sequential adds would lose these
    y = run(lambda b, v: b.cumulativeSum(v, 0), "float32", x)
    np.testing.assert_array_equal(y, np.array([math.fsum(x[:i + 1].astype(float)) for i in range(5)], np.float32))
    w = run(lambda b, v: b.cumulativeSum(v, 0), "int32", np.array([2**31 - 1, 1, 1], np.int32))
    np.testing.assert_array_equal(w, [2**31 - 1, -2**31, -2**31 + 1])
    u = run(lambda b, v: b.cumulativeSum(v, 0, reversed=True), "uint64", np.array([2**64 - 1, 2], np.uint64))
    np.testing.assert_array_equal(u, np.array([1, 2], np.uint64))
    h = run(lambda b, v: b.cumulativeSum(v, 0, exclusive=True), "float16", np.array([1, 2, 3], np.float16))
    np.testing.assert_array_equal(h, [0, 1, 3])


def test_cumulative_sum_validation():
    limits = Context().op_support_limits()
    types = ["float32", "float16", "int32", "uint32", "int64", "uint64"]
    assert data_types(limits["cumulativeSum"]) == {"input": {"dataTypes": types}, "output": {"dataTypes": types}}
    raises(lambda b, x: b.cumulativeSum(x, 0, label="lbl"), "float32", [])
    raises(lambda b, x: b.cumulativeSum(x, 3, label="lbl"), "float32", [1, 2, 3])
    raises(lambda b, x: b.cumulativeSum(x, 0, label="lbl"), "int8", [3])
    b = Context().graph_builder()
    y = b.cumulativeSum(b.input("x", {"dataType": "float32", "shape": [3, 2, 5]}), 1, exclusive=True)
    assert (y.dtype, y.shape) == ("float32", (3, 2, 5))
