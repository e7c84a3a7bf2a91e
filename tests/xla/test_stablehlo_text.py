"""The StableHLO importer on hand-written MLIR text (no JAX needed): the
conventions (positional arg<i>/result<i>, dtypes, rank 0), what JAX prints
that must load (hex blobs, quoted symbols, multi-result calls, the generic
form's module-wide argument numbering, loc info), and typed errors."""
from __future__ import annotations

import numpy as np
import pytest

from webnn_core.xla import NotExpressibleError, StableHLOError, StableHLOSyntaxError, load_stablehlo

PRETTY = """
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> loc("x"), %arg1: tensor<f32>) -> (tensor<2x3xf32> {jax.result_info = "result[0]"}, tensor<i1>, tensor<2xi32>) {
    %cst = stablehlo.constant dense<"0x0000803F000000400000404000008040000000C0000000BF"> : tensor<2x3xf32> loc(#loc1)
    %0:2 = call @"<lambda>"(%arg0, %cst) : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.multiply %0#1, %1 : tensor<2x3xf32>
    %3 = stablehlo.add %0#0, %2 : tensor<2x3xf32>
    %c = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.compare GT, %arg1, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<[7, -2]> : tensor<2xi32>
    return %3, %4, %c_0 : tensor<2x3xf32>, tensor<i1>, tensor<2xi32>
  } loc(#loc)
  func.func private @"<lambda>"(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
    %0 = stablehlo.subtract %arg0, %arg1 : tensor<2x3xf32>
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.maximum %arg1, %1 : tensor<2x3xf32>
    return %0, %2 : tensor<2x3xf32>, tensor<2x3xf32>
  }
}
#loc = loc(unknown)
#loc1 = loc("jit(f)/const"(#loc))
"""

CONST = np.array([[1, 2, 3], [4, -2, -0.5]], np.float32)


def reference(x, s):
    return (x - CONST) + CONST * s, s > 0, np.array([7, -2], np.int32)


def test_pretty_program_conventions():
    model = load_stablehlo(PRETTY)
    assert model.inputs == {"arg0": {"dataType": "float32", "shape": [2, 3]},
                            "arg1": {"dataType": "float32", "shape": []}}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = model.run({"arg0": x, "arg1": np.float32(2.0)})
    assert sorted(out) == ["result0", "result1", "result2"]
    exp = reference(x, np.float32(2.0))
    np.testing.assert_allclose(out["result0"], exp[0], rtol=1e-6)
    assert out["result1"].dtype == np.bool_ and out["result1"].shape == () and out["result1"] == exp[1]
    assert out["result2"].dtype == np.int32
    np.testing.assert_array_equal(out["result2"], exp[2])


GENERIC = """
"builtin.module"() <{sym_name = "jit_g"}> ({
  "func.func"() <{function_type = (tensor<3xf32>) -> tensor<3xf32>, sym_name = "helper", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.tanh"(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{function_type = (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>, sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg10: tensor<3xf32>, %arg11: tensor<3xf32>):
    %1 = "func.call"(%arg11) <{callee = @helper}> : (tensor<3xf32>) -> tensor<3xf32>
    %2 = "stablehlo.divide"(%arg10, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%2) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""


def test_generic_form_parameters_are_positional():
    model = load_stablehlo(GENERIC)
    assert list(model.inputs) == ["arg0", "arg1"]  # not arg10/arg11
    a = np.array([1, 2, 3], np.float32)
    b = np.array([0.5, -1, 2], np.float32)
    y, = model(a, b)
    np.testing.assert_allclose(y, a / np.tanh(b), rtol=1e-6)


def test_weights_turn_parameters_into_constants(tmp_path):
    path = tmp_path / "w.npz"
    np.savez(path, arg1=np.array([1, 1, 1], np.float32))
    model = load_stablehlo(GENERIC, weights=str(path))
    assert list(model.inputs) == ["arg0"]
    y, = model(np.array([2, 4, 6], np.float32))
    np.testing.assert_allclose(y, np.array([2, 4, 6]) / np.tanh(1.0), rtol=1e-6)
    with pytest.raises(StableHLOError, match="arg7"):
        load_stablehlo(GENERIC, weights={"arg7": np.zeros(3, np.float32)})
    with pytest.raises(StableHLOError, match="shape"):
        load_stablehlo(GENERIC, weights={"arg0": np.zeros(4, np.float32)})


def _program(body, args="%arg0: tensor<4xf32>", result="tensor<4xf32>"):
    return f"""module @m {{
  func.func public @main({args}) -> {result} {{
{body}
  }}
}}"""


@pytest.mark.parametrize("name, op, reason", [
    ('stablehlo.custom_call', '%0 = stablehlo.custom_call @foo(%arg0) {backend_config = ""} : (tensor<4xf32>) -> tensor<4xf32>', "extension"),
    ('stablehlo.sort', '%0 = "stablehlo.sort"(%arg0) <{dimension = 0 : i64}> ({\n ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
     '  %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n'
     '  stablehlo.return %c : tensor<i1>\n }) : (tensor<4xf32>) -> tensor<4xf32>', "sort"),
    ('stablehlo.bitcast_convert', '%0 = stablehlo.bitcast_convert %arg0 : (tensor<4xf32>) -> tensor<4xi32>', "bit"),
    ('stablehlo.atan2', '%0 = stablehlo.atan2 %arg0, %arg0 : tensor<4xf32>', "atan2"),
    ('stablehlo.while', '%c = stablehlo.constant dense<0> : tensor<i32>\n'
     '%0:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %arg0) : tensor<i32>, tensor<4xf32>\n'
     ' cond {\n  %1 = stablehlo.compare LT, %iterArg, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
     '  stablehlo.return %1 : tensor<i1>\n } do {\n  stablehlo.return %iterArg, %iterArg_0 : tensor<i32>, tensor<4xf32>\n }',
     "loop"),
    ('stablehlo.rng_bit_generator', '%0 = stablehlo.rng_bit_generator %arg0, algorithm = DEFAULT : (tensor<4xf32>) -> tensor<4xf32>', "random"),
    ('stablehlo.shift_left', '%0 = stablehlo.shift_left %arg0, %arg0 : tensor<4xf32>', "shift"),
])
def test_inexpressible_ops_name_op_and_line(name, op, reason):
    text = _program("    " + op + "\n    return %arg0 : tensor<4xf32>")
    with pytest.raises(NotExpressibleError) as e:
        load_stablehlo(text)
    line = 3 + op[:op.index("%0")].count("\n")
    assert str(e.value).startswith(f"{line}:")  # the op's line:column
    assert f"{name}: cannot be expressed in WebNN" in str(e.value)
    assert reason in str(e.value)
    assert e.value.js_name == "NotSupportedError"


def test_dynamic_shapes_are_not_expressible():
    with pytest.raises(NotExpressibleError, match=r"^2:\d+: tensor<\?x4xf32>: .*static shapes"):
        load_stablehlo(_program("    return %arg0 : tensor<?x4xf32>", "%arg0: tensor<?x4xf32>", "tensor<?x4xf32>"))


def test_f64_is_not_expressible():
    with pytest.raises(NotExpressibleError, match="f64"):
        load_stablehlo(_program("    return %arg0 : tensor<4xf64>", "%arg0: tensor<4xf64>", "tensor<4xf64>"))


@pytest.mark.parametrize("text, where", [
    ("module @m {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>\n", "end"),
    ("module @m {\n  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = stablehlo.add %arg0 ? %arg0\n  }\n}", "3:30"),
    ("module @m { } }", "1:15"),
])
def test_malformed_text_is_a_syntax_error(text, where):
    with pytest.raises(StableHLOSyntaxError) as e:
        load_stablehlo(text)
    assert where in str(e.value)
    assert e.value.js_name == "SyntaxError"


def test_semantic_errors_name_the_line():
    undefined = _program("    %0 = stablehlo.add %arg0, %nope : tensor<4xf32>\n    return %0 : tensor<4xf32>")
    with pytest.raises(StableHLOError, match=r"3:5: .*undefined value %nope"):
        load_stablehlo(undefined)
    wrong_shape = _program("    %0 = stablehlo.reshape %arg0 : (tensor<4xf32>) -> tensor<3xf32>\n    return %0 : tensor<3xf32>",
                           result="tensor<3xf32>")
    with pytest.raises(StableHLOError, match="3:5"):
        load_stablehlo(wrong_shape)
    with pytest.raises(StableHLOError, match="no @main"):
        load_stablehlo("module @m {\n  func.func private @f(%arg0: tensor<f32>) -> tensor<f32> {\n"
                       "    return %arg0 : tensor<f32>\n  }\n  func.func private @g(%arg0: tensor<f32>) -> tensor<f32> {\n"
                       "    return %arg0 : tensor<f32>\n  }\n}")


def test_unrecognised_reduction_body_is_not_expressible():
    body = """    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
     reducer(%a: tensor<f32>, %b: tensor<f32>)  {
      %1 = stablehlo.subtract %a, %b : tensor<f32>
      stablehlo.return %1 : tensor<f32>
    }
    return %0 : tensor<f32>"""
    with pytest.raises(NotExpressibleError, match="stablehlo.reduce.*subtract"):
        load_stablehlo(_program(body, result="tensor<f32>"))


def test_identity_program_returns_a_copy_of_the_input():
    model = load_stablehlo(_program("    return %arg0, %arg0 : tensor<4xf32>, tensor<4xf32>",
                                    result="(tensor<4xf32>, tensor<4xf32>)"))
    x = np.array([1, -2, 3, 4], np.float32)
    a, b = model(x)
    np.testing.assert_array_equal(a, x)
    np.testing.assert_array_equal(b, x)


# ------------------------------------------------------------------ zero-size values
# JAX folds gathers/scatters of empty index lists itself; what it would print
# without that folding (the 2-row versions JAX prints, with 0 rows):
EMPTY_INDEX_PROGRAM = """
module @jit_f {
  func.func public @main(%arg0: tensor<3x4xf32>, %arg1: tensor<0xi32>, %arg2: tensor<0x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<0xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<0xi32>, tensor<0xi32>) -> tensor<0xi1>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<0xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<0xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<0xi1>, tensor<0xi32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<0xi32>) -> tensor<0x1xi32>
    %6 = "stablehlo.scatter"(%arg0, %5, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      stablehlo.return %arg4 : tensor<f32>
    }) : (tensor<3x4xf32>, tensor<0x1xi32>, tensor<0x4xf32>) -> tensor<3x4xf32>
    %7 = "stablehlo.gather"(%arg0, %5) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<0x1xi32>) -> tensor<0x4xf32>
    %8 = stablehlo.concatenate %7, %arg0, %7, dim = 0 : (tensor<0x4xf32>, tensor<3x4xf32>, tensor<0x4xf32>) -> tensor<3x4xf32>
    %9 = stablehlo.add %6, %8 : tensor<3x4xf32>
    return %6, %9 : tensor<3x4xf32>, tensor<3x4xf32>
  }
}
"""


def test_scatter_and_gather_of_no_indices():
    """A scatter of no updates leaves the operand; a gather of no rows is empty and
    drops out of the concatenate; the zero-size parameters are no graph inputs."""
    model = load_stablehlo(EMPTY_INDEX_PROGRAM)
    assert list(model.inputs) == ["arg0"]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    same, doubled = model(x, np.zeros(0, np.int32), np.zeros((0, 4), np.float32))
    np.testing.assert_array_equal(same, x)
    np.testing.assert_array_equal(doubled, 2 * x)


def test_empty_operand_without_a_rule_is_a_typed_error():
    """A gather with a zero-length index vector (a broadcast in disguise) has a
    non-empty result from an empty operand and no folding rule: a typed error."""
    text = """
func.func public @main(%arg0: tensor<3x4xf32>) -> tensor<2x3x4xf32> {
  %c = stablehlo.constant dense<> : tensor<2x0xi32>
  %0 = "stablehlo.gather"(%arg0, %c) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2], index_vector_dim = 1>, slice_sizes = array<i64: 3, 4>}> : (tensor<3x4xf32>, tensor<2x0xi32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
"""
    with pytest.raises(NotExpressibleError, match=r"^4:\d+: stablehlo\.gather: .*operand 1 \(tensor<2x0xi32>\) has no "
                                                  r"elements"):
        load_stablehlo(text)


CUSTOM_CALL_AFTER_INDEX = """
module @m {
  func.func public @main(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %0 = call @helper(%arg0) : (tensor<3xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
  func.func private @helper(%arg0: tensor<3xf32>) -> tensor<3xf32> {
    %c = stablehlo.constant dense<[0]> : tensor<1xindex>
    %0 = stablehlo.custom_call @my_native_kernel(%arg0, %c) {operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]} : (tensor<3xf32>, tensor<1xindex>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
"""
CUSTOM_CALL_GENERIC = """
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3xf32>) -> tensor<3xf32>, sym_name = "main"}> ({
  ^bb0(%arg0: tensor<3xf32>):
    %0 = "stablehlo.constant"() <{value = dense<[0]> : tensor<1xindex>}> : () -> tensor<1xindex>
    %1 = "stablehlo.custom_call"(%arg0, %0) <{call_target_name = "lapack_sgesdd_ffi", operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>]}> : (tensor<3xf32>, tensor<1xindex>) -> tensor<3xf32>
    "func.return"(%1) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
"""


@pytest.mark.parametrize("text, target, where", [(CUSTOM_CALL_AFTER_INDEX, "@my_native_kernel", "9:5"),
                                                 (CUSTOM_CALL_GENERIC, "@lapack_sgesdd_ffi", "6:5")])
def test_custom_call_is_named_before_earlier_failures(text, target, where):
    """An `index` constant the importer cannot read comes first in the text; the
    error still names the custom_call that makes the program inexpressible."""
    with pytest.raises(NotExpressibleError) as err:
        load_stablehlo(text)
    msg = str(err.value)
    assert msg.startswith(f"{where}: stablehlo.custom_call: ") and f"call target {target}" in msg, msg


def test_unused_parameter_is_accepted_but_not_a_graph_input():
    """A parameter no result depends on (here once its only use folded away) is no
    graph input; `inputs` lists what a dispatch feeds, the call still takes it."""
    text = """
func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.slice %arg1 [0:0] : (tensor<3xf32>) -> tensor<0xf32>
  %1 = stablehlo.concatenate %0, %arg0, dim = 0 : (tensor<0xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = stablehlo.negate %1 : tensor<3xf32>
  return %2 : tensor<3xf32>
}
"""
    model = load_stablehlo(text)
    assert model.inputs == {"arg0": {"dataType": "float32", "shape": [3]}}
    x = np.array([1, -2, 3], np.float32)
    np.testing.assert_array_equal(model(x, x * 0)[0], -x)
    np.testing.assert_array_equal(model.run({"arg0": x})["result0"], -x)
    with pytest.raises(StableHLOError, match="arg1: shape"):
        model.run({"arg0": x, "arg1": np.zeros(2, np.float32)})
