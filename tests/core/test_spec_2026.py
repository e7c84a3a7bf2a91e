"""The 2026 IDL in the core: opSupportLimits (MLTensorLimits with rankRange from the
spec's tensor-limits tables, output0..2, the new ops), the builder's rank checks,
defaults and enum checks from the generated schema for Python callers, and the
new ops isNaN / isInfinite / roundEven against independent references."""
import math
import re
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError, schema

ROOT = Path(__file__).resolve().parents[2]
IDL_2026 = ROOT / "spec" / "webnn-2026-09.idl"
SPEC_BS = ROOT.parent / "shared" / "spec" / "webnn-ED-2026-06-26.bs"
pytestmark = pytest.mark.skipif(schema.idl_name() != IDL_2026.name,
                                reason=f"the schema was built from {schema.idl_name()} (./dev build --idl ...)")


def idl_dictionary(name: str) -> dict:
    """member -> type of one IDL dictionary, read from the IDL text with a regex
    (independently of the webidl2-generated schema)."""
    text = IDL_2026.read_text()
    bodies = re.findall(r"dictionary %s(?:\s*:\s*\w+)?\s*\{(.*?)\};" % name, text, re.S)  # with the partials
    assert bodies, name
    return {m.group(2): m.group(1) for body in bodies for m in re.finditer(r"^\s*(?:\[\w+\]\s*)?([\w ]+?)\s+(\w+);", body, re.M)}


def desc(shape, dtype="float32"):
    return {"dataType": dtype, "shape": list(shape)}


def builder():
    return Context().graph_builder()


# ----------------------------------------------------------------- opSupportLimits
def test_op_support_limits_has_every_member_of_the_2026_idl():
    limits = Context().op_support_limits()
    top = idl_dictionary("MLOpSupportLimits")
    assert set(limits) == set(top)
    assert limits["maxTensorByteLength"] == 2**31 - 1
    for name, type_ in top.items():
        if type_ == "MLTensorLimits":
            entry = {name: limits[name]}
        elif type_.endswith("SupportLimits"):
            assert set(limits[name]) == set(idl_dictionary(type_)), name
            entry = limits[name]
        else:
            continue
        for key, value in entry.items():
            assert set(value) == {"dataTypes", "rankRange"}, (name, key)
            assert 0 <= value["rankRange"]["min"] <= value["rankRange"]["max"] <= 8, (name, key)
            assert value["dataTypes"], (name, key)


@pytest.mark.parametrize("op,key,rank_range", [
    # From the spec's tensor-limits tables (allowed ranks; N = the engine's maximum rank, 8).
    ("conv2d", "input", (4, 4)), ("conv2d", "bias", (1, 1)), ("convTranspose2d", "filter", (4, 4)),
    ("gemm", "c", (0, 2)), ("gemm", "output", (2, 2)), ("matmul", "a", (2, 8)),
    ("gru", "output0", (3, 3)), ("gru", "output1", (4, 4)), ("gruCell", "bias", (1, 1)),
    ("lstm", "output2", (4, 4)), ("lstmCell", "output1", (2, 2)),
    ("concat", "inputs", (1, 8)), ("concat", "output", (1, 8)), ("triangular", "input", (2, 8)),
    ("add", "a", (0, 8)), ("batchNormalization", "output", (1, 8)), ("batchNormalization", "mean", (1, 1)),
    ("isNaN", "a", (0, 8)), ("roundEven", "input", (0, 8)), ("resample2d", "input", (4, 4)),
    ("split", "outputs", (1, 8)), ("prelu", "slope", (0, 8)), ("argMax", "input", (1, 8)),
])
def test_rank_ranges_follow_the_spec_tables(op, key, rank_range):
    r = Context().op_support_limits()[op][key]["rankRange"]
    assert (r["min"], r["max"]) == rank_range


def test_new_ops_limits():
    limits = Context().op_support_limits()
    for op in ("isNaN", "isInfinite"):
        assert limits[op]["a"]["dataTypes"] == ["float32", "float16"]
        assert limits[op]["output"]["dataTypes"] == ["uint8"]
    assert limits["roundEven"]["input"]["dataTypes"] == ["float32", "float16"]
    assert "outputs" not in limits["gru"] and "outputs" not in limits["lstmCell"]


# ------------------------------------------------------------------- rank checks
@pytest.mark.parametrize("make", [
    lambda b: b.conv2d(b.input("x", desc([1, 3, 4])), b.input("w", desc([1, 3, 1, 1])), label="L"),
    lambda b: b.conv2d(b.input("x", desc([1, 3, 4, 4])), b.input("w", desc([1, 3, 1, 1])),
                       bias=b.input("c", desc([1, 1])), label="L"),
    lambda b: b.gemm(b.input("a", desc([2, 2])), b.input("b", desc([2, 2])), c=b.input("c", desc([1, 2, 2])), label="L"),
    lambda b: b.matmul(b.input("a", desc([2])), b.input("b", desc([2, 2])), label="L"),
    lambda b: b.batchNormalization(b.input("x", desc([1, 2, 3])), b.input("m", desc([2, 1])),
                                   b.input("v", desc([2])), label="L"),
    lambda b: b.quantizeLinear(b.input("x", desc([2, 2])), b.input("s", desc([2])),
                               b.input("z", desc([2], "uint8")), label="L"),
    lambda b: b.triangular(b.input("x", desc([3])), label="L"),
    lambda b: b.resample2d(b.input("x", desc([1, 2, 3])), label="L"),
    lambda b: b.gatherElements(b.input("x", desc([2, 2])), b.input("i", desc([2], "int32")), label="L"),
    lambda b: b.softmax(b.input("x", desc([])), 0, label="L"),
])
def test_builder_enforces_the_allowed_ranks_with_labelled_type_errors(make):
    with pytest.raises(WebNNTypeError, match=r"^\[L\] \w+: .*rank"):
        make(builder())


# ------------------------------------------------- defaults and enums from the schema
def test_python_callers_get_the_same_enum_type_errors_as_js():
    b = builder()
    x = b.input("x", desc([1, 1, 4, 4]))
    w = b.input("w", desc([1, 1, 1, 1]))
    with pytest.raises(WebNNTypeError, match=r"^\[c\] conv2d: .*'bogus' is not a valid value for enumeration "
                                             r"MLConv2dFilterOperandLayout"):
        b.conv2d(x, w, filterLayout="bogus", label="c")
    with pytest.raises(WebNNTypeError, match="MLInputOperandLayout"):
        b.maxPool2d(x, layout="NHWC")  # was silently a wrong shape
    with pytest.raises(WebNNTypeError, match="MLOperandDataType"):
        b.cast(x, "float64")
    with pytest.raises(WebNNTypeError, match="MLPaddingMode"):
        b.pad(x, [0, 0, 1, 1], [0, 0, 1, 1], mode="symmetric")  # removed from the 2026 IDL
    with pytest.raises(WebNNTypeError, match=r"unknown option 'filterLayuot'"):
        b.conv2d(x, w, filterLayuot="ohwi")
    with pytest.raises(WebNNTypeError, match="MLRecurrentNetworkActivation"):
        b.gruCell(b.input("a", desc([1, 2])), b.input("b", desc([3, 2])), b.input("c", desc([3, 1])),
                  b.input("h", desc([1, 1])), 1, activations=["sigmoid", "softmax"])


def test_idl_defaults_apply_to_python_callers():
    b = builder()
    x = b.input("x", desc([1, 2, 5, 5]))
    # MLPool2dOptions: layout "nchw", outputShapeRounding "floor" (window = whole input).
    assert b.averagePool2d(x).shape == (1, 2, 1, 1)
    # MLConv2dOptions: inputLayout "nchw", filterLayout "oihw", groups 1.
    assert b.conv2d(x, b.input("w", desc([3, 2, 3, 3]))).shape == (1, 3, 3, 3)


def test_rounding_type_is_an_alias_of_output_shape_rounding():
    b = builder()
    x = b.input("x", desc([1, 1, 5, 5]))
    opts = dict(windowDimensions=[2, 2], strides=[2, 2])
    assert b.maxPool2d(x, **opts).shape == (1, 1, 2, 2)
    assert b.maxPool2d(x, outputShapeRounding="ceil", **opts).shape == (1, 1, 3, 3)
    assert b.maxPool2d(x, roundingType="ceil", **opts).shape == (1, 1, 3, 3)
    # The 2026 name wins when both are given.
    assert b.maxPool2d(x, roundingType="ceil", outputShapeRounding="floor", **opts).shape == (1, 1, 2, 2)


# ------------------------------------------------------------------ the new ops
def run(op, dtype, values):
    ctx = Context()
    b = ctx.graph_builder()
    x = b.input("x", desc([len(values)], dtype))
    g = b.build({"y": getattr(b, op)(x)})
    return ctx.compute(g, {"x": np.asarray(values, dtype)})["y"]


def f16_class(bits: int) -> str:
    """IEEE 754 binary16 classification from the bits alone."""
    exponent, mantissa = (bits >> 10) & 0x1F, bits & 0x3FF
    if exponent == 0x1F:
        return "nan" if mantissa else "inf"
    return "finite"


F16_BITS = [0x7C01, 0x7E00, 0x7FFF, 0xFC01, 0xFE00, 0xFFFF, 0x7D55,  # NaNs: quiet, signalling, negative
            0x7C00, 0xFC00,  # +-inf
            0x7BFF, 0xFBFF, 0x0001, 0x8000, 0x0000, 0x3C00]  # finite: max, -max, subnormal, -0, 0, 1


@pytest.mark.parametrize("op,cls", [("isNaN", "nan"), ("isInfinite", "inf")])
def test_is_nan_and_is_infinite_on_float16_bit_patterns(op, cls):
    values = np.array(F16_BITS, np.uint16).view(np.float16)
    y = run(op, "float16", values)
    assert y.dtype == np.uint8
    assert y.tolist() == [int(f16_class(b) == cls) for b in F16_BITS]


@pytest.mark.parametrize("op", ["isNaN", "isInfinite"])
def test_is_nan_and_is_infinite_on_float32(op):
    bits = [0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x00000001, 0x80000000]
    values = np.array(bits, np.uint32).view(np.float32)
    expected = []
    for b in bits:
        v = struct.unpack("<f", struct.pack("<I", b))[0]
        expected.append(int(math.isnan(v) if op == "isNaN" else math.isinf(v)))
    assert run(op, "float32", values).tolist() == expected


@pytest.mark.parametrize("op", ["isNaN", "isInfinite"])
def test_is_nan_rejects_integer_input(op):
    b = builder()
    with pytest.raises(WebNNTypeError, match=r"^\[q\] "):
        getattr(b, op)(b.input("x", desc([2], "int32")), label="q")


def test_round_even_ties_to_even():
    # The spec's own example, then ties, signs and specials (Python's round() is ties-to-even).
    example = [0.1, 0.9, 1.1, 1.9, -3.5, -2.5, -1.5, 1.5, 2.5, 3.5]
    assert run("roundEven", "float32", example).tolist() == [0.0, 1.0, 1.0, 2.0, -4.0, -2.0, -2.0, 2.0, 2.0, 4.0]
    values = [0.5, -0.5, 4.5, 5.5, -0.4, 8388607.5, 1e30, float("inf"), float("-inf")]
    y = run("roundEven", "float32", values)
    for v, got in zip(values, y.tolist()):
        v = float(np.float32(v))
        want = float(round(v)) if math.isfinite(v) else v
        assert got == want and math.copysign(1, got) == math.copysign(1, v), (v, got)
    assert math.isnan(run("roundEven", "float32", [float("nan")])[0])
    half = [0.5, 1.5, 2.5, -2.5, 1024.5, 2047.0, 65504.0]  # 1024.5 is not a float16: rounds to 1024 first
    y16 = run("roundEven", "float16", half)
    assert y16.dtype == np.float16
    assert y16.tolist() == [float(round(float(np.float16(v)))) for v in half]


# ------------------------------------------------------------- the committed table
@pytest.mark.skipif(not SPEC_BS.is_file(), reason=f"the spec source {SPEC_BS} is not in this checkout")
def test_spec_ranks_table_matches_the_spec_source():
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "spec_ranks.py"), "--bs", str(SPEC_BS), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# ------------------------------------------------- createConstantTensor / constant(tensor)
def test_constant_tensor_feeds_builder_constant():
    ctx = Context()
    weights = np.array([1.5, -2.0, 4.0], np.float32)
    t = ctx.create_constant_tensor(desc([3]), weights.tobytes())
    assert t.constant and not t.readable and not t.writable
    b = ctx.graph_builder()
    x = b.input("x", desc([3]))
    g = b.build({"y": b.mul(x, b.constant_tensor(t))})
    got = ctx.compute(g, {"x": np.array([2, 2, 2], np.float32)})["y"]
    assert got.tolist() == [3.0, -4.0, 8.0]


def test_constant_tensor_rules():
    ctx = Context()
    with pytest.raises(WebNNTypeError, match="bytes"):
        ctx.create_constant_tensor(desc([3]), bytes(8))
    t = ctx.create_constant_tensor(desc([2]), bytes(8))
    with pytest.raises(WebNNTypeError, match="not readable"):
        ctx.read_tensor(t)
    with pytest.raises(WebNNTypeError, match="not writable"):
        ctx.write_tensor(t, bytes(8))
    plain = ctx.create_tensor(desc([2]))
    with pytest.raises(WebNNTypeError, match="createConstantTensor"):
        ctx.graph_builder().constant_tensor(plain)
    with pytest.raises(WebNNTypeError, match="another context"):
        Context().graph_builder().constant_tensor(t)
    b = ctx.graph_builder()
    g = b.build({"y": b.relu(b.input("x", desc([2])))})
    with pytest.raises(WebNNTypeError, match="constant tensor"):
        ctx.dispatch(g, {"x": t}, {"y": ctx.create_tensor(desc([2]))})
    t.destroy()
    with pytest.raises(WebNNTypeError, match="destroyed"):
        ctx.graph_builder().constant_tensor(t)


def test_every_schema_type_has_a_js_converter():
    """Each type code the generated schema uses is one js/src/webidl.js converts
    (caught MLNumber resolving to its typedef's union)."""
    js = (ROOT / "js" / "src" / "webidl.js").read_text()
    converters = set(re.findall(r"^  '([\w!]+)':", js, re.M)) | {"operand"}
    s = schema.schema()
    known = converters | set(s["enums"]) | set(s["dictionaries"])

    def base_codes(code):
        for part in code.split("|"):
            yield part[:-2] if part.endswith("[]") else part

    used = [m[1] for d in s["dictionaries"].values() for m in d] + \
           [p[1] for op in s["ops"].values() for p in op["params"]]
    unknown = {c for code in used for c in base_codes(code)} - known - {"u64!"}  # u64!: only in limits
    assert not unknown
