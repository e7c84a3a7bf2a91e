"""The 2026 IDL's new members and ops through the real polyfill in Chromium,
against values from the spec text (its roundEven example, MLTensorLimits tables)
and IEEE 754 classification (engine-parametrised: --browser)."""
import pytest

from conftest import page_result

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def result(engine_browser, server):
    r = page_result(engine_browser, f"{server}/test-pages/spec2026.html")
    assert "error" not in r, r
    return r


def test_context_members(result):
    assert result["accelerated"] is True and result["notAccelerated"] is False
    # A tensor made by createTensor() is not exportable (test_webgpu_interop.py has the rest).
    assert result["exportToGPU"].startswith("TypeError") and "not exportable" in result["exportToGPU"]
    assert result["exportable"].startswith("TypeError")  # {} is no GPUDevice


def test_op_support_limits(result):
    assert result["gruKeys"] == sorted(["input", "weight", "recurrentWeight", "bias", "recurrentBias",
                                        "initialHiddenState", "output0", "output1"])
    assert result["conv2dInput"] == {"min": 4, "max": 4}
    assert result["gemmC"] == {"min": 0, "max": 2}
    assert result["isNaN"]["a"]["dataTypes"] == ["float32", "float16"]
    assert result["isNaN"]["output"] == {"dataTypes": ["uint8"], "rankRange": {"min": 0, "max": 8}}
    assert result["roundEven"] == ["float32", "float16"]
    assert result["quantizeKeys"] == ["input", "output", "scale", "zeroPoint"]


def test_new_ops(result):
    # x = [NaN, +inf, -inf, 0, -3.5, 2.5, 0.5, -0.5]
    assert result["isNaNOut"] == [1, 0, 0, 0, 0, 0, 0, 0]
    assert result["isInfiniteOut"] == [0, 1, 1, 0, 0, 0, 0, 0]
    assert result["roundEvenOut"] == [0, -4, 2, 0, "-0"]  # ties to even, sign kept
    assert result["isNaNF16"] == [1, 1, 1, 0, 0]


def test_constant_tensors(result):
    assert result["constantTensor"] == [True, False, False]
    assert result["constantTensorOut"] == [11, 22, 33]
    assert result["readConstant"].startswith("TypeError")
    assert result["constantOfPlain"].startswith("TypeError")
    assert result["constantLength"] == 1
    assert result["shortConstantBuffer"].startswith("TypeError")


def test_schema_checks_and_aliases(result):
    assert result["bogusLayout"].startswith("TypeError") and "MLConv2dFilterOperandLayout" in result["bogusLayout"]
    assert result["rank3Conv"].startswith("TypeError: [c1] conv2d") and "rank" in result["rank3Conv"]
    assert result["symmetric"].startswith("TypeError") and "MLPaddingMode" in result["symmetric"]
    assert result["pools"] == [[1, 1, 2, 2], [1, 1, 3, 3], [1, 1, 3, 3], [1, 1, 2, 2]]
    assert result["castDataType"] == "int32" and result["scalar"] == "float16" and result["clampNumber"] == "float32"
