"""Compositional NNEF: fragment definitions, operator expressions, compile-time
evaluation (if/else, comprehensions, subscripts, built-ins, recursion), generic
fragments, and expanding standard compound operations into their spec bodies."""
import numpy as np
import pytest

from webnn_core.nnef import (NNEFSemanticError, NNEFSyntaxError, NNEFUnsupportedError, dat, load_model,
                             parse_string)

HEAD = "version 1.0;\nextension KHR_enable_fragment_definitions, KHR_enable_operator_expressions;\n"


def run(text, feeds, variables=None, **options):
    files = {"graph.nnef": text.encode()}
    for label, a in (variables or {}).items():
        files[label + ".dat"] = dat.write_tensor(a)
    model = load_model(files, **options)
    return model.run(feeds), model


def test_recursive_fragment_and_lazy_if():
    text = HEAD + """
fragment total( xs: tensor<scalar>[] ) -> ( y: tensor<scalar> )
{
    y = xs[0] + total(xs[1:]) if length_of(xs) > 1 else xs[0];
}
graph G( a, b ) -> ( y )
{
    a = external(shape = [2, 3]);
    b = external(shape = [2, 3]);
    y = total([a, b, a, b * 2.0]);
}
"""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((2, 3), np.float32)
    out, model = run(text, {"a": a, "b": b})
    np.testing.assert_array_equal(out["y"], 2 * a + 3 * b)
    assert [o.name for o in model.nnef.operations].count("add") == 3


def test_compile_time_expressions():
    text = HEAD + """
fragment tile_twice( x: tensor<scalar>, axes: integer[] ) -> ( y: tensor<scalar> )
{
    reps = [for i in range_of(shape_of(x)) yield 2 if i in axes else 1];
    y = tile(x, repeats = reps);
}
graph G( x ) -> ( y, z, w )
{
    x = external(shape = [1, 2, 3]);
    y = tile_twice(x, axes = [2]);
    n = 2 ^ 3 - length_of('abc') * 2;
    z = reshape(x, shape = [n, 3] if n > 0 else [6]);
    w = -x * (1.0 + scalar(n)) / 2.0 + scalar(integer(true));
}
"""
    x = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    out, model = run(text, {"x": x})
    np.testing.assert_array_equal(out["y"], np.tile(x, (1, 1, 2)))
    np.testing.assert_array_equal(out["z"], x.reshape(2, 3))
    np.testing.assert_allclose(out["w"], -x * 3.0 / 2.0 + 1.0)


def test_generic_fragment_with_integers():
    text = HEAD + """
fragment swap<?>( x: tensor<?> ) -> ( y: tensor<?> ) { y = transpose<?>(x, axes = [1, 0]); }
graph G( i ) -> ( t, g )
{
    i = external<integer>(shape = [2, 3]);
    t = swap(i);
    g = swap<integer>(i);
}
"""
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    out, _ = run(text, {"i": i})
    np.testing.assert_array_equal(out["t"], i.T)
    assert out["t"].dtype == np.int32


def test_tuple_results_and_result_names():
    text = HEAD + """
fragment stats( x: tensor<scalar> ) -> ( lo: tensor<scalar>, hi: tensor<scalar> )
{
    lo = min_reduce(x, axes = [1]);
    hi = max_reduce(x, axes = [1]);
}
graph G( x ) -> ( a, b )
{
    x = external(shape = [2, 5]);
    a, b = stats(x);
}
"""
    x = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    out, model = run(text, {"x": x})
    np.testing.assert_array_equal(out["a"], x.min(1, keepdims=True))
    np.testing.assert_array_equal(out["b"], x.max(1, keepdims=True))
    assert [o.outputs for o in model.nnef.operations if o.name != "external"] == [{"output": "a"}, {"output": "b"}]


COMPOUNDS = {
    "softmax": "y = softmax(x, axes = [1, 2]);",
    "local_response_normalization": "y = local_response_normalization(x, size = [1, 3, 1, 1], alpha = 0.1, beta = 0.75);",
    "local_contrast_normalization": "y = local_contrast_normalization(x, size = [1, 1, 3, 3], epsilon = 1e-3);",
    "l2_normalization": "y = l2_normalization(x, axes = [1], epsilon = 1e-3);",
    "selu": "y = selu(x);",
    "gelu": "y = gelu(x);",
    "silu": "y = silu(x);",
    "softplus": "y = softplus(x);",
    "elu": "y = elu(x, alpha = 0.5);",
    "prelu": "y = prelu(x, 0.25);",
    "rms_pool": "y = rms_pool(x, size = [1, 1, 2, 2], border = 'ignore');",
    "avg_pool": "y = avg_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2]);",
    "max_pool": "y = max_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], border = 'ignore');",
    "moments": "m, y = moments(x, axes = [2, 3]);",
    "batch_normalization": "y = batch_normalization(x, 0.5, 2.0, 0.1, 3.0, epsilon = 1e-3);",
    "min_max_linear_quantize": "y = min_max_linear_quantize(x, min = -1.0, max = 1.0, bits = 3, signed = true, "
                               "symmetric = false);",
    "zero_point_linear_quantize": "y = zero_point_linear_quantize(x, zero_point = 2, scale = 0.25, bits = 4, "
                                  "signed = true, symmetric = true);",
    "logarithmic_quantize": "y = logarithmic_quantize(x, max = 2.0, bits = 3);",
    "nearest_upsample": "y = nearest_upsample(x, factor = [2, 2]);",
    "area_downsample": "y = area_downsample(x, factor = [2, 2]);",
    "nearest_downsample": "y = nearest_downsample(x, factor = [2, 2]);",
    "clamp": "y = clamp(x, -0.5, 0.5);",
    "log2": "y = log2(abs(x) + 1.0);",
}


@pytest.mark.parametrize("op", sorted(COMPOUNDS))
def test_compound_bodies_match_direct_lowering(op):
    body = COMPOUNDS[op]
    outs = "m, y" if body.startswith("m,") else "y"
    text = (HEAD + f"graph G( x ) -> ( {outs} )\n{{\n    x = external(shape = [1, 4, 6, 6]);\n    {body}\n}}\n")
    x = np.random.default_rng(1).standard_normal((1, 4, 6, 6)).astype(np.float32)
    direct, _ = run(text, {"x": x})
    expanded, model = run(text, {"x": x}, lowered=[op])
    assert op not in [o.name for o in model.nnef.operations]
    np.testing.assert_allclose(expanded["y"], direct["y"], rtol=1e-5, atol=1e-5)


def test_custom_primitive_is_a_typed_unsupported_error():
    text = HEAD + ("fragment my_op( x: tensor<scalar> ) -> ( y: tensor<scalar> );\n"
                   "graph G( x ) -> ( y )\n{\n    x = external(shape = [2]);\n    y = my_op(x);\n}\n")
    g = parse_string(text)
    assert g.tensors["y"].shape is None  # a custom operation: no shape rule
    with pytest.raises(NNEFUnsupportedError) as info:
        load_model({"graph.nnef": text.encode()})
    assert info.value.op == "my_op" and (info.value.line, info.value.column) == (7, 9)


def test_fragments_can_stay_unexpanded():
    text = HEAD + ("fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = relu(x); }\n"
                   "graph G( x ) -> ( y )\n{\n    x = external(shape = [2]);\n    y = f(x);\n}\n")
    assert [o.name for o in parse_string(text).operations] == ["external", "relu"]
    assert [o.name for o in parse_string(text, expand_fragments=False).operations] == ["external", "f"]


@pytest.mark.parametrize("fragment,message", [
    ("fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { x = relu(x); y = x; }", "cannot be assigned"),
    ("fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar>, z: tensor<scalar> ) { y = relu(x); }", "'z'"),
    ("fragment f( a: scalar, x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = relu(x); }", "must precede"),
    ("fragment f( x: tensor<scalar> ) -> ( y: scalar ) { y = 1.0; }", "must be a tensor"),
    ("fragment f( x: tensor<?> ) -> ( y: tensor<?> ) { y = copy(x); }", "not declared generic"),
    ("fragment f<?>( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = copy(x); }", "no generic"),
    ("fragment f( x: tensor<scalar>, k: integer = 1.5 ) -> ( y: tensor<scalar> ) { y = copy(x); }", "default value"),
    ("fragment relu( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = x; }", "standard operation"),
    ("fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = x + 1; }", "cannot be cast"),
    ("fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = external(shape = [1]); }", "not allowed"),
    ("fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { [a, b] = x; y = a; }", "cannot assign"),
])
def test_fragment_errors(fragment, message):
    text = HEAD + fragment + "\ngraph G( x ) -> ( x2 )\n{\n    x = external(shape = [2]);\n    x2 = relu(x);\n}\n"
    with pytest.raises(NNEFSemanticError, match=message):
        parse_string(text)


def test_runaway_recursion_is_an_error():
    text = HEAD + ("fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = f(x); }\n"
                   "graph G( x ) -> ( y )\n{\n    x = external(shape = [2]);\n    y = f(x);\n}\n")
    with pytest.raises(NNEFSemanticError, match="recurses too deeply"):
        parse_string(text)


def test_expression_errors_are_positioned():
    text = HEAD + "graph G( x ) -> ( y )\n{\n    x = external(shape = [2]);\n    y = x + [1, 2][5];\n}\n"
    with pytest.raises(NNEFSemanticError) as info:
        parse_string(text)
    assert (info.value.line, info.value.column) == (6, 20) and "out of range" in str(info.value)
    with pytest.raises(NNEFSyntaxError):
        parse_string(HEAD + "graph G( x ) -> ( y )\n{\n    x = external(shape = [2]);\n    y = (x + ;\n}\n")
