"""The IDL version is a build flag: the schema generated from the March-2025 IDL
(WPT snapshot 0556bbc's interfaces/webnn.idl) drives the same core with that
draft's dictionaries, enums and opSupportLimits keys."""
import pytest

import idl_schema
from webnn_core import Context, WebNNTypeError, schema


@pytest.fixture
def schema_2025(tmp_path, monkeypatch):
    out = idl_schema.generate("2025-03", tmp_path / "idl_schema.json")
    monkeypatch.setattr(schema, "SCHEMA_FILE", out)
    schema.schema.cache_clear()
    schema._members.cache_clear()
    yield schema.schema()
    schema.schema.cache_clear()
    schema._members.cache_clear()


def test_generated_schemas_differ_where_the_idls_do(tmp_path):
    import json

    new = json.loads(idl_schema.generate("2026-09", tmp_path / "new.json").read_text())
    old = json.loads(idl_schema.generate("2025-03", tmp_path / "old.json").read_text())
    assert set(new["ops"]) - set(old["ops"]) == {"isNaN", "isInfinite", "roundEven"}
    assert set(old["ops"]) <= set(new["ops"])
    assert new["ops"]["cast"]["params"][1][0] == "dataType" and old["ops"]["cast"]["params"][1][0] == "type"
    pool = lambda s: {m[0]: m[2] for m in s["dictionaries"]["MLPool2dOptions"]}  # noqa: E731
    assert pool(new)["outputShapeRounding"] == "floor" and "roundingType" not in pool(new)
    assert pool(old)["roundingType"] == "floor" and "outputShapeRounding" not in pool(old)
    assert new["aliases"] == {"MLPool2dOptions": {"roundingType": "outputShapeRounding"}} and old["aliases"] == {}
    assert "symmetric" in old["enums"]["MLPaddingMode"] and "symmetric" not in new["enums"]["MLPaddingMode"]
    assert {"output0", "output1", "output2"} <= set(new["supportLimits"]["ops"]["lstm"])
    assert "outputs" in old["supportLimits"]["ops"]["lstm"] and "output0" not in old["supportLimits"]["ops"]["lstm"]
    # Extensions apply to both: deviceType, int4/uint4.
    for s in (new, old):
        assert any(m[0] == "deviceType" for m in s["dictionaries"]["MLContextOptions"])
        assert {"int4", "uint4"} <= set(s["enums"]["MLOperandDataType"])


def test_core_follows_the_2025_schema(schema_2025):
    ctx = Context()
    limits = ctx.op_support_limits()
    assert "isNaN" not in limits
    # One `outputs` entry: the output data types, ranks covering output0 (3) and output1 (4).
    assert limits["gru"]["outputs"] == {"dataTypes": ["float32", "float16"], "rankRange": {"min": 3, "max": 4}}
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [1, 1, 5, 5]})
    assert b.maxPool2d(x, windowDimensions=[2, 2], strides=[2, 2], roundingType="ceil").shape == (1, 1, 3, 3)
    assert b.pad(x, [0, 0, 1, 1], [0, 0, 1, 1], mode="symmetric").shape == (1, 1, 7, 7)
    with pytest.raises(WebNNTypeError, match="MLPaddingMode"):
        b.pad(x, [0, 0, 1, 1], [0, 0, 1, 1], mode="mirror")
