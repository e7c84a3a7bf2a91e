"""gather/gatherElements/gatherND/scatterElements/scatterND against plain index
loops written from the definitions, with the WPT index rule: a negative index
wraps once (i += dim), then is clamped to [0, dim - 1]."""
import itertools

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError


def fix(i, dim):
    i = int(i)
    if i < 0:
        i += dim
    return min(max(i, 0), dim - 1)


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


def cells(shape):
    return itertools.product(*(range(n) for n in shape))


# --------------------------------------------------------------------------- gather
def test_gather_clamps_as_wpt_verified():
    x = np.array([10, 20], np.float32)
    idx = np.array([-2, 10, -10, -1, 0, 1], np.int64)
    y = run(lambda b, v, i: b.gather(v, i), ("float32", x), ("int64", idx))
    np.testing.assert_array_equal(y, [10, 20, 10, 20, 10, 20])


@pytest.mark.parametrize("itype", ["int32", "uint32", "int64"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_axis_against_loop(itype, axis):
    rng = np.random.default_rng(axis)
    x = rng.integers(-100, 100, size=(2, 3, 4)).astype(np.int32)
    lo = 0 if itype == "uint32" else -9
    idx = rng.integers(lo, 9, size=(2, 2)).astype(itype)
    y = run(lambda b, v, i: b.gather(v, i, axis=axis), ("int32", x), (itype, idx))
    assert y.shape == x.shape[:axis] + idx.shape + x.shape[axis + 1:]
    for p in cells(y.shape):
        before, ip, after = p[:axis], p[axis:axis + 2], p[axis + 2:]
        assert y[p] == x[before + (fix(idx[ip], x.shape[axis]),) + after]


def test_gather_scalar_indices_and_uint32_max():
    x = np.array([1, 2, 3], np.int64)
    y = run(lambda b, v, i: b.gather(v, i), ("int64", x), ("uint32", np.array(2**32 - 1, np.uint32)))
    assert y.shape == () and y == 3
    x4 = np.array([[-8, 7], [1, -1]], np.int8)
    y = run(lambda b, v, i: b.gather(v, i, axis=1), ("int4", x4), ("int32", np.array([1, 0], np.int32)))
    np.testing.assert_array_equal(y, [[7, -8], [-1, 1]])


def test_gather_validation():
    raises(lambda b, x, i: b.gather(x, i, label="lbl"), ("float16", []), ("int64", [1]))
    raises(lambda b, x, i: b.gather(x, i, axis=4, label="lbl"), ("float16", [1, 2, 3]), ("int32", [5, 6]))
    raises(lambda b, x, i: b.gather(x, i, label="lbl"), ("float16", [1, 2, 3, 4]), ("float32", [5, 6]))
    raises(lambda b, x, i: b.gather(x, i, label="lbl"), ("float16", [1, 2, 3, 4]), ("uint64", [5, 6]))
    raises(lambda b, x, i: b.gather(x, i, axis=2, label="lbl"), ("float32", [1, 3, 3, 4]), ("int32", [(2**31 - 1) // 4]))


# ------------------------------------------------------------------- gatherElements
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_gather_elements_against_loop(axis):
    rng = np.random.default_rng(10 + axis)
    x = rng.standard_normal((3, 4, 2)).astype(np.float32)
    ishape = list(x.shape)
    ishape[axis] = 5
    idx = rng.integers(-8, 8, size=ishape).astype(np.int32)
    y = run(lambda b, v, i: b.gatherElements(v, i, axis=axis), ("float32", x), ("int32", idx))
    assert y.shape == idx.shape
    for p in cells(y.shape):
        q = list(p)
        q[axis] = fix(idx[p], x.shape[axis])
        assert y[p] == x[tuple(q)]


def test_gather_elements_clamp_example():
    x = np.arange(6, dtype=np.float32)
    y = run(lambda b, v, i: b.gatherElements(v, i), ("float32", x), ("int64", np.array([7, -1, -7], np.int64)))
    np.testing.assert_array_equal(y, [5, 5, 0])


def test_gather_elements_validation():
    raises(lambda b, x, i: b.gatherElements(x, i, label="lbl"), ("float32", []), ("int32", []))
    raises(lambda b, x, i: b.gatherElements(x, i, axis=4, label="lbl"), ("float32", [1, 2, 3]), ("int32", [1, 2, 3]))
    raises(lambda b, x, i: b.gatherElements(x, i, label="lbl"), ("float32", [1, 2, 3]), ("float32", [1, 2, 3]))
    raises(lambda b, x, i: b.gatherElements(x, i, label="lbl"), ("float32", [1, 2, 3]), ("int32", [1, 2]))
    raises(lambda b, x, i: b.gatherElements(x, i, axis=3, label="lbl"), ("float32", [1, 2, 3, 4]), ("int32", [3, 2, 3, 4]))


# ------------------------------------------------------------------------- gatherND
def test_gather_nd_against_loop():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 1000, size=(2, 3, 4, 2)).astype(np.uint32)
    for k in (1, 2, 3, 4):
        idx = rng.integers(-5, 6, size=(3, 2, k)).astype(np.int64)
        y = run(lambda b, v, i: b.gatherND(v, i), ("uint32", x), ("int64", idx))
        assert y.shape == idx.shape[:-1] + x.shape[k:]
        for p in cells(idx.shape[:-1]):
            lead = tuple(fix(idx[p][j], x.shape[j]) for j in range(k))
            np.testing.assert_array_equal(y[p], x[lead])


def test_gather_nd_clamp_examples():
    x = np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2)
    y = run(lambda b, v, i: b.gatherND(v, i), ("float32", x), ("int32", np.array([[-2, -2, -2]], np.int32)))
    np.testing.assert_array_equal(y, [x[0, 0, 0]])
    x = np.arange(16, dtype=np.float32)
    y = run(lambda b, v, i: b.gatherND(v, i), ("float32", x), ("uint32", np.array([[16], [20], [3]], np.uint32)))
    np.testing.assert_array_equal(y, [15, 15, 3])


def test_gather_nd_validation():
    raises(lambda b, x, i: b.gatherND(x, i, label="lbl"), ("float32", []), ("int32", [1, 1, 1]))
    raises(lambda b, x, i: b.gatherND(x, i, label="lbl"), ("float32", [1, 1, 1]), ("int32", []))
    raises(lambda b, x, i: b.gatherND(x, i, label="lbl"), ("float32", [1, 2, 3]), ("float32", [1, 1, 1]))
    raises(lambda b, x, i: b.gatherND(x, i, label="lbl"), ("float32", [1, 2, 3]), ("int32", [1, 1, 4]))
    raises(lambda b, x, i: b.gatherND(x, i, label="lbl"), ("float32", [2, 2, 3, 3, 4]), ("int32", [(2**31 - 1) // 4, 1, 1]))


# ------------------------------------------------------------------ scatterElements
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_elements_against_loop(axis):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    # A permutation slice along `axis` so every written cell is distinct.
    if axis == 0:
        idx = np.array([[2, 0, 1, -1], [0, 2, -4, 1]], np.int32)
    else:
        idx = np.array([[3, 0], [1, -2], [-4, 3]], np.int32)
    upd = -np.arange(1, idx.size + 1, dtype=np.float32).reshape(idx.shape)
    y = run(lambda b, v, i, u: b.scatterElements(v, i, u, axis=axis), ("float32", x), ("int32", idx), ("float32", upd))
    ref = x.copy()
    for p in cells(idx.shape):
        q = list(p)
        q[axis] = fix(idx[p], x.shape[axis])
        ref[tuple(q)] = upd[p]
    np.testing.assert_array_equal(y, ref)


def test_scatter_elements_out_of_range_is_clamped():
    x = np.zeros(4, np.int32)
    y = run(lambda b, v, i, u: b.scatterElements(v, i, u), ("int32", x),
            ("int64", np.array([99, -99], np.int64)), ("int32", np.array([5, 6], np.int32)))
    np.testing.assert_array_equal(y, [6, 0, 0, 5])


def test_scatter_elements_validation():
    f = lambda b, x, i, u, **o: b.scatterElements(x, i, u, label="lbl", **o)  # noqa: E731
    raises(lambda b, x, i, u: f(b, x, i, u, axis=2), ("float32", [3, 3]), ("int32", [2, 3]), ("float32", [2, 3]))
    raises(f, ("float32", [3, 3]), ("int32", [2, 3]), ("float16", [2, 3]))
    raises(f, ("float32", []), ("int32", []), ("float32", []))
    raises(f, ("float32", [3, 3]), ("int32", [2, 3, 3]), ("float32", [2, 3, 3]))
    raises(f, ("float32", [3, 3]), ("int32", [2, 4]), ("float32", [2, 4]))
    raises(lambda b, x, i, u: f(b, x, i, u, axis=1), ("float32", [3, 3]), ("int32", [2, 2]), ("float32", [2, 2]))
    raises(f, ("float32", [3, 3]), ("int32", [2, 3]), ("float32", [2, 3, 3]))
    raises(f, ("float32", [3, 3]), ("int32", [2, 3]), ("float32", [2, 4]))
    raises(f, ("float32", [3, 3]), ("uint64", [2, 3]), ("float32", [2, 3]))


# ----------------------------------------------------------------------- scatterND
def test_scatter_nd_against_loop():
    x = np.arange(4 * 4 * 4, dtype=np.int64).reshape(4, 4, 4)
    idx = np.array([[0, 1], [-1, 2], [2, 9]], np.int32)    # k = 2: rows of 4
    upd = -np.arange(12, dtype=np.int64).reshape(3, 4)
    y = run(lambda b, v, i, u: b.scatterND(v, i, u), ("int64", x), ("int32", idx), ("int64", upd))
    ref = x.copy()
    for r in range(3):
        ref[fix(idx[r, 0], 4), fix(idx[r, 1], 4)] = upd[r]
    np.testing.assert_array_equal(y, ref)
    y = run(lambda b, v, i, u: b.scatterND(v, i, u), ("int64", x), ("uint32", np.array([[1], [3]], np.uint32)),
            ("int64", np.zeros((2, 4, 4), np.int64)))
    ref = x.copy()
    ref[[1, 3]] = 0
    np.testing.assert_array_equal(y, ref)


def test_scatter_nd_full_index_uint4():
    x = np.array([[1, 2], [3, 4]], np.uint8)
    y = run(lambda b, v, i, u: b.scatterND(v, i, u), ("uint4", x), ("int64", np.array([[1, 0], [0, 1]], np.int64)),
            ("uint4", np.array([15, 0], np.uint8)))
    np.testing.assert_array_equal(y, [[1, 0], [15, 4]])


def test_scatter_nd_validation():
    f = lambda b, x, i, u: b.scatterND(x, i, u, label="lbl")  # noqa: E731
    raises(f, ("float32", [4, 4, 4]), ("int32", [2, 1]), ("float16", [2, 4, 4]))
    raises(f, ("float32", []), ("int32", [2, 1]), ("float32", [2, 4, 4]))
    raises(f, ("float32", [4, 4, 4]), ("int32", []), ("float32", [2, 4, 4]))
    raises(f, ("float32", [4, 4, 4]), ("int32", [2, 4]), ("float32", [2, 4, 4]))
    raises(f, ("float32", [4, 4, 4]), ("int32", [2, 1]), ("float32", [2, 3, 4]))


def test_limits_and_inputs_untouched():
    limits = Context().op_support_limits()
    for op in ("gather", "gatherElements", "gatherND"):
        assert set(limits[op]) == {"input", "indices", "output"}
        assert limits[op]["indices"]["dataTypes"] == ["int32", "uint32", "int64"]
    for op in ("scatterElements", "scatterND"):
        assert set(limits[op]) == {"input", "indices", "updates", "output"}
    x = np.arange(4, dtype=np.float32)
    idx = np.array([-1, 0], np.int32)
    keep_x, keep_i = x.copy(), idx.copy()
    run(lambda b, v, i, u: b.scatterElements(v, i, u), ("float32", x), ("int32", idx), ("float32", np.ones(2, np.float32)))
    np.testing.assert_array_equal(x, keep_x)
    np.testing.assert_array_equal(idx, keep_i)
