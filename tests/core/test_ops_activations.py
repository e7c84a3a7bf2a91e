"""Activations against the spec's formulas written directly with Python's math
module, plus clamp/softmax/prelu specifics and validation errors."""
import math

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

SPEC8 = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]
FLOAT = ["float32", "float16"]


def run(build, *inputs):
    ctx = Context()
    b = ctx.graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(np.shape(a))}) for i, (dt, a) in enumerate(inputs)]
    g = b.build({"y": build(b, *ops)})
    return ctx.compute(g, {f"x{i}": np.asarray(a, dt) for i, (dt, a) in enumerate(inputs)})["y"]


def raises(build, *descs):
    b = Context().graph_builder()
    ops = [b.input(f"x{i}", {"dataType": dt, "shape": list(s)}) for i, (dt, s) in enumerate(descs)]
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, *ops)


def ulp_diff(a, b, dtype):
    itype = {"float32": np.int32, "float16": np.int16}[dtype]
    def key(v):
        i = np.asarray(v, dtype).view(itype).astype(np.int64)
        return np.where(i < 0, -(i & (2 ** (8 * np.dtype(itype).itemsize - 1) - 1)), i)
    return np.abs(key(a) - key(b))


def _softplus(x):
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


def _sigmoid(x):
    return 1 / (1 + math.exp(-x)) if x > -700 else 0.0


F32 = lambda v: float(np.float32(v))  # noqa: E731  (alpha/beta are cast to the input type)

# name, options, reference f(x) per the spec's expressions
FORMULAS = [
    ("relu", {}, lambda x: max(0.0, x)),
    ("sigmoid", {}, _sigmoid),
    ("tanh", {}, math.tanh),
    ("elu", {}, lambda x: max(0.0, x) + 1.0 * (math.exp(min(0.0, x)) - 1)),
    ("elu", {"alpha": 0.5}, lambda x: max(0.0, x) + 0.5 * (math.exp(min(0.0, x)) - 1)),
    ("gelu", {}, lambda x: 0.5 * x * math.erfc(-x / math.sqrt(2))),
    ("hardSigmoid", {}, lambda x: max(0.0, min(1.0, F32(0.2) * x + 0.5))),
    ("hardSigmoid", {"alpha": 0.5, "beta": 0.25}, lambda x: max(0.0, min(1.0, 0.5 * x + 0.25))),
    ("hardSwish", {}, lambda x: x * max(0.0, min(6.0, x + 3)) / 6),
    ("leakyRelu", {}, lambda x: max(0.0, x) + F32(0.01) * min(0.0, x)),
    ("leakyRelu", {"alpha": 0.25}, lambda x: max(0.0, x) + 0.25 * min(0.0, x)),
    ("linear", {}, lambda x: x),
    ("linear", {"alpha": 1.5, "beta": 0.25}, lambda x: 1.5 * x + 0.25),
    ("softplus", {}, _softplus),
    ("softsign", {}, lambda x: x / (1 + abs(x))),
]
GRID = np.concatenate([np.linspace(-12, 12, 2401), [0.0, -0.0, 1e-7, -1e-7, 80.0, -80.0]]).astype(np.float32)


@pytest.mark.parametrize("op,options,ref", FORMULAS, ids=[f"{f[0]}{f[1]}" for f in FORMULAS])
def test_float32_against_formula(op, options, ref):
    y = run(lambda b, x: getattr(b, op)(x, **options), ("float32", GRID))
    want = np.array([ref(float(v)) for v in GRID]).astype(np.float32)
    # float64 evaluation, one rounding: within 1 ULP of the exact value (WPT allows 1-34).
    assert ulp_diff(y, want, "float32").max() <= 1, op


@pytest.mark.parametrize("op,options,ref", [f for f in FORMULAS if "alpha" not in f[1] and f[0] not in ("leakyRelu", "elu", "hardSigmoid")])
def test_float16_against_formula(op, options, ref):
    x = np.linspace(-10, 10, 801).astype(np.float16)
    y = run(lambda b, a: getattr(b, op)(a, **options), ("float16", x))
    assert y.dtype == np.float16
    want = np.array([ref(float(v)) for v in x]).astype(np.float16)
    assert ulp_diff(y, want, "float16").max() <= 1, op


def test_alpha_beta_are_cast_to_the_input_type():
    # SPEC: options.alpha/beta are cast to the input's data type before use.
    a16 = float(np.float16(0.01))  # 0.0099945...
    x = np.array([-1000, -300, 5], np.float16)
    y = run(lambda b, v: b.leakyRelu(v), ("float16", x))
    np.testing.assert_array_equal(y, np.array([-1000 * a16, -300 * a16, 5], np.float64).astype(np.float16))
    y = run(lambda b, v: b.linear(v, alpha=1 / 3, beta=0.1), ("float16", np.array([3000], np.float16)))
    assert y[0] == np.float16(3000 * float(np.float16(1 / 3)) + float(np.float16(0.1)))


def test_gelu_negative_tail_is_not_flushed():
    x = np.array([-10, -14, -5], np.float32)
    y = run(lambda b, v: b.gelu(v), ("float32", x))
    want = np.array([0.5 * float(v) * math.erfc(-float(v) / math.sqrt(2)) for v in x], np.float32)
    assert y[0] != 0 and ulp_diff(y, want, "float32").max() <= 1


@pytest.mark.parametrize("dtype", ["int32", "int8"])
def test_relu_integers(dtype):
    x = np.array([-128, -1, 0, 1, 127], dtype)
    np.testing.assert_array_equal(run(lambda b, v: b.relu(v), (dtype, x)), np.array([0, 0, 0, 1, 127], dtype))


def test_nan_passes_through():
    x = np.array([np.nan], np.float32)
    for op, _, _ in FORMULAS:
        assert np.isnan(run(lambda b, v: getattr(b, op)(v), ("float32", x))[0]), op


# ------------------------------------------------------------------------- clamp
def test_clamp_float():
    x = np.array([-np.inf, -2, 0.5, 3, np.inf, np.nan], np.float32)
    y = run(lambda b, v: b.clamp(v, minValue=-1, maxValue=1), ("float32", x))
    np.testing.assert_array_equal(y, [-1, -1, 0.5, 1, 1, np.nan])
    np.testing.assert_array_equal(run(lambda b, v: b.clamp(v, maxValue=0), ("float32", x)), [-np.inf, -2, 0, 0, 0, np.nan])
    np.testing.assert_array_equal(run(lambda b, v: b.clamp(v), ("float32", x)), x)
    np.testing.assert_array_equal(run(lambda b, v: b.clamp(v, minValue=0, maxValue=0), ("float32", x[:5])), [0] * 5)


@pytest.mark.parametrize("dtype,lo,hi,want", [
    ("uint8", -5, 2.5, [0, 2, 2]),          # -5 -> 0, 2.5 -> 2 (half to even)
    ("int8", -1000.0, 3.5, [-3, 4, 4]),     # -1000 -> -128, 3.5 -> 4
    ("uint64", 2, 2**64 - 1, [2, 5, 2**64 - 1]),
    ("int64", -2**63, 1, [-3, 1, 1]),
])
def test_clamp_bounds_are_cast_to_the_input_type(dtype, lo, hi, want):
    x = {"uint8": [0, 5, 255], "int8": [-3, 5, 127], "uint64": [0, 5, 2**64 - 1], "int64": [-3, 5, 2**62]}[dtype]
    y = run(lambda b, v: b.clamp(v, minValue=lo, maxValue=hi), (dtype, np.array(x, dtype)))
    np.testing.assert_array_equal(y, np.array(want, dtype))


def test_clamp_validation():
    raises(lambda b, x: b.clamp(x, minValue=3.0, maxValue=1.0, label="lbl"), ("float32", [1, 2, 3]))
    raises(lambda b, x: b.clamp(x, minValue=-math.inf, label="lbl"), ("float32", []))
    raises(lambda b, x: b.clamp(x, minValue=5, maxValue=4, label="lbl"), ("int32", [2]))


# ----------------------------------------------------------------------- softmax
def _softmax_ref(x, axis):
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        row = [float(v) for v in x[idx]]
        m = max(row)
        e = [math.exp(v - m) for v in row]
        out[idx] = [v / math.fsum(e) for v in e]
    return np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_axis(axis):
    x = np.random.default_rng(1).uniform(-50, 50, (3, 4, 5)).astype(np.float32)
    y = run(lambda b, v: b.softmax(v, axis), ("float32", x))
    assert ulp_diff(y, _softmax_ref(x, axis).astype(np.float32), "float32").max() <= 2


def test_softmax_legacy_2d_and_large_values():
    x = np.array([[1000, 1000, 999], [-1000, 0, 1000]], np.float32)
    y = run(lambda b, v: b.softmax(v), ("float32", x))
    np.testing.assert_allclose(y, _softmax_ref(x, 1), rtol=1e-6)
    y16 = run(lambda b, v: b.softmax(v, 1), ("float16", x.astype(np.float16)))
    assert y16.dtype == np.float16 and np.all(np.isfinite(y16))


def test_softmax_validation():
    raises(lambda b, x: b.softmax(x, 4, label="lbl"), ("float16", [3, 1, 5, 2]))
    raises(lambda b, x: b.softmax(x, 3, label="lbl"), ("int32", [3, 1, 5, 2]))
    raises(lambda b, x: b.softmax(x, 0, label="lbl"), ("float32", []))
    raises(lambda b, x: b.softmax(x, None, label="lbl"), ("float32", [1, 4, 3]))  # legacy form needs 2-D


# ------------------------------------------------------------------------- prelu
@pytest.mark.parametrize("slope_shape", [[3, 2, 5], [5], [], [2, 5], [2, 1]])
def test_prelu_slope_broadcasts_onto_input(slope_shape):
    rng = np.random.default_rng(2)
    x = rng.uniform(-5, 5, (3, 2, 5)).astype(np.float32)
    s = rng.uniform(0, 1, slope_shape).astype(np.float32)
    y = run(lambda b, v, w: b.prelu(v, w), ("float32", x), ("float32", s))
    sb = np.broadcast_to(s, x.shape)
    want = [max(0.0, float(v)) + float(w) * min(0.0, float(v)) for v, w in zip(x.ravel(), sb.ravel())]
    np.testing.assert_array_equal(y.ravel(), np.array(want, np.float32))


def test_prelu_int8_wraps():
    y = run(lambda b, v, w: b.prelu(v, w), ("int8", np.array([-100, -3, 4], np.int8)), ("int8", np.array([2, 2, 2], np.int8)))
    np.testing.assert_array_equal(y, np.array([56, -6, 4], np.int8))  # -200 wraps to 56


def test_prelu_validation():
    raises(lambda b, x, s: b.prelu(x, s, label="lbl"), ("float32", [3, 2, 5]), ("float32", [2]))
    raises(lambda b, x, s: b.prelu(x, s, label="lbl"), ("float32", [3, 2, 5]), ("int32", [3, 2, 5]))
    raises(lambda b, x, s: b.prelu(x, s, label="lbl"), ("float32", [5]), ("float32", [2, 5]))  # not bidirectional
    raises(lambda b, x, s: b.prelu(x, s, label="lbl"), ("uint8", [5]), ("uint8", [5]))


# -------------------------------------------------------------------- validation
ACTIVATION_LIMITS = {
    **{op: FLOAT for op in ("elu", "gelu", "hardSigmoid", "hardSwish", "leakyRelu", "linear", "sigmoid",
                            "softmax", "softplus", "softsign", "tanh")},
    "relu": ["float32", "float16", "int32", "int8"],
    "clamp": SPEC8,
}


def data_types(entry):
    """An opSupportLimits entry without its rankRanges (tested in test_spec_2026.py)."""
    return {k: {"dataTypes": v["dataTypes"]} for k, v in entry.items()}


def test_support_limits_match_wpt_table():
    limits = Context().op_support_limits()
    for op, types in ACTIVATION_LIMITS.items():
        assert data_types(limits[op]) == {"input": {"dataTypes": types}, "output": {"dataTypes": types}}, op
    signed = ["float32", "float16", "int32", "int8"]
    assert data_types(limits["prelu"]) == {k: {"dataTypes": signed} for k in ("input", "slope", "output")}


@pytest.mark.parametrize("op", sorted(set(ACTIVATION_LIMITS) - {"softmax"}))
def test_single_input_dtype_and_rank_enforcement(op):
    b = Context().graph_builder()
    for dtype in SPEC8:
        for shape in ([], [2], [2, 3], [2, 3, 4], [2, 3, 4, 5], [2, 3, 4, 5, 6]):
            x = b.input(f"input{dtype}{len(shape)}", {"dataType": dtype, "shape": shape})
            if dtype in ACTIVATION_LIMITS[op]:
                y = getattr(b, op)(x)
                assert (y.dtype, y.shape) == (dtype, tuple(shape))
            else:
                with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
                    getattr(b, op)(x, label="lbl")


def test_input_from_another_builder():
    other = Context().graph_builder().input("x", {"dataType": "float32", "shape": [2, 2]})
    b = Context().graph_builder()
    for op in ("relu", "gelu", "elu", "clamp"):
        with pytest.raises(WebNNTypeError):
            getattr(b, op)(other)
