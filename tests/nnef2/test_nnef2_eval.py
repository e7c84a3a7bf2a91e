"""Evaluation of SkriptND (seed §2.4-§2.13, Chapter 3): compile-time
expressions with packs and null propagation, binding order and affine
deduction, deferred attributes, interleaved @using/@assert with formatted
messages, generics, control flow unrolled at compile time, @lower index
analysis, and one typed error per rejected construct."""
from __future__ import annotations

import numpy as np
import pytest

from webnn_core.nnef.errors import NNEFSemanticError, NNEFSyntaxError, NNEFUnsupportedError
from webnn_core.nnef2 import load, shapes
from webnn_core.nnef2.expr import Evaluator, Tensor
from webnn_core.nnef2.instance import instantiate
from webnn_core.nnef2.parser import parse_expression, parse_module


def ev(text, **values):
    return Evaluator(values).eval(parse_expression(text))


@pytest.mark.parametrize("text, values, expected", [
    ("[1, b.., 4]", {"b": [2, 3]}, [1, 2, 3, 4]),
    ("[1 ..(3)]", {}, [1, 1, 1]),
    ("[x ..(c)]", {"x": 5, "c": False}, []),
    ("[0:n]", {"n": 3}, [0, 1, 2]),
    ("[6:0:-2]", {}, [6, 4, 2]),
    ("[(a, b)..]", {"a": [1, 2], "b": [3, 4]}, [1, 3, 2, 4]),
    ("a[::-1]", {"a": [1, 2, 3]}, [3, 2, 1]),
    ("a[m]", {"a": [1, 2, 3], "m": [True, False, True]}, [1, 3]),
    ("a[i] <- v", {"a": [0, 0, 0], "i": [0, 2], "v": [7, 8]}, [7, 0, 8]),
    ("x + ..", {"x": [1, 2, 3]}, 6), ("x * ..", {"x": []}, 1), ("x + ...", {"x": [1, 2, 3]}, [1, 3, 6]),
    ("x < ..", {"x": [1, 2, 2]}, False), ("x <= ..", {"x": [1, 2, 2]}, True), ("x != ..", {"x": [1, 2, 1]}, False),
    ("x := ..", {"x": [4, 4]}, 4), ("x := ..", {"x": [4, 5]}, None), ("x << ..", {"x": []}, None),
    ("7 / 2", {}, 3), ("7 \\ 2", {}, 4), ("-7 / 2", {}, -4), ("2 ** 10", {}, 1024), ("3 << 1", {}, 1),
    ("true ^ true", {}, False), ("false => x", {"x": None}, True),
    ("a + 1", {"a": None}, None), ("[1, a]", {"a": None}, None), ("a ?? 3", {"a": None}, 3), ("?a", {"a": None}, False),
    ("c ? 1", {"c": False}, None), ("s is 1 ? 0 : s", {"s": [1, 3]}, [0, 3]), ("x in [1, 2]", {"x": [2, 3]}, [True, False]),
    ("int(inf) > 1000000", {}, True), ("real(3) / 2.0", {}, 1.5), ("int()", {}, 0), ("`sqrt`(4.0)", {}, 2.0),
    ("\"v = {a + 2}\"", {"a": 40}, "v = 42"), ("'x\\{y\\}'", {}, "x{y}"),
    ("t.shape", {"t": Tensor("real", [2, 3])}, [2, 3]), ("t.rank", {"t": Tensor("real", [2, 3])}, 2),
    ("p.size", {"p": [1, 2]}, 2),
])
def test_expressions(text, values, expected):
    assert ev(text, **values) == expected


def op(text):
    return parse_module(text, "t.sknd", "t").operators[0]


def test_binding_order_of_the_draft_example():
    # seed §2.6.1: y binds d first, then x's remaining pack t is unambiguous
    d = op("""operator Op {
        @attrib { r: int; a: optional int; b: int..(d) = 0; c: int = 2 * d + r; }
        @input { x: real[s..(r), z..(d), t..]; y: real[s..(r), z..(d)]; }
        @output { o: real[t.., c]; }
    }""")
    inst = instantiate(d, {"r": 1}, [Tensor("real", [5, 6, 7, 8, 9]), Tensor("real", [5, 6, 7])])
    assert inst.env["d"] == 2 and inst.env["t"] == [8, 9] and inst.env["b"] == [0, 0] and inst.attrs["c"] == 5
    assert inst.outputs == [("o", "real", [8, 9, 5])]
    with pytest.raises(NNEFSemanticError, match="cannot be bound unambiguously"):
        instantiate(op("""operator Amb { @input { x: real[s.., t..]; } @output { y: real[s..]; } }"""),
                    {}, [Tensor("real", [1, 2])])


def test_affine_deduction_and_checks():
    d = op("""operator A { @attrib { n: int; } @input { x: real[m, k + 1, s..(2 * e), n / 2]; }
        @output { y: real[m, k, e]; } }""")
    assert instantiate(d, {"n": 8}, [Tensor("real", [3, 5, 1, 1, 1, 1, 4])]).outputs[0][2] == [3, 4, 2]
    with pytest.raises(NNEFSemanticError, match="an extent of 't.A' input 'x' must be 4, got 5"):
        instantiate(d, {"n": 8}, [Tensor("real", [3, 5, 1, 1, 5])])
    with pytest.raises(NNEFSemanticError, match="no integer 'e'"):
        instantiate(d, {"n": 8}, [Tensor("real", [3, 5, 1, 4])])


def test_interleaved_asserts_with_formatted_messages():
    d = op("""operator Div {
        @attrib { a: int; b: int; c: int; }
        @using { r = a / b; }
        @assert {
            b > 0: "b must be positive", b;
            a % b == 0: "a must be divisible by b", a, 'divisor': b;
            r + c == 42: "r + c must be 42, got {r + c}";
        }
    }""")
    instantiate(d, {"a": 8, "b": 2, "c": 38}, [])
    with pytest.raises(NNEFSemanticError, match=r"t.sknd:5:13: 't.Div': b must be positive \(b = 0\)"):
        instantiate(d, {"a": 8, "b": 0, "c": 1}, [])       # checked before r = a / b divides by zero
    with pytest.raises(NNEFSemanticError, match=r"a must be divisible by b \(a = 7, divisor = 2\)"):
        instantiate(d, {"a": 7, "b": 2, "c": 1}, [])
    with pytest.raises(NNEFSemanticError, match=r"r \+ c must be 42, got 5"):
        instantiate(d, {"a": 8, "b": 2, "c": 1}, [])


def test_null_skips_asserts_and_omits_extents():
    d = op("""operator N { @attrib { a: optional int; k: bool = false; }
        @input { x: real[n]; } @output { y: real[n, a, 1 ..(k)]; }
        @assert { a > 0: "a must be positive"; } }""")
    assert instantiate(d, {}, [Tensor("real", [3])]).outputs[0][2] == [3]
    assert instantiate(d, {"a": 2, "k": True}, [Tensor("real", [3])]).outputs[0][2] == [3, 2, 1]
    with pytest.raises(NNEFSemanticError, match="a must be positive"):
        instantiate(d, {"a": -1}, [Tensor("real", [3])])


def test_generics():
    d = op("""operator G { @dtype { T: num; S: type = bool; } @attrib { v: T; }
        @input { x: T[n]; } @output { y: S[n]; } }""")
    assert instantiate(d, {"v": 1.0}, [Tensor("real", [2])]).outputs == [("y", "bool", [2])]
    assert instantiate(d, {"v": 1}, [Tensor("int", [2])], ["int", "real"]).outputs == [("y", "real", [2])]
    with pytest.raises(NNEFSemanticError, match="must be of type real, got int"):
        instantiate(d, {"v": 1.0}, [Tensor("int", [2])], ["real"])
    with pytest.raises(NNEFSemanticError, match="generic type 'T: num' cannot be 'str'"):
        instantiate(d, {"v": "a"}, [])
    with pytest.raises(NNEFSemanticError, match="generic type 'T' cannot be deduced"):
        instantiate(op("operator H { @dtype { T: num; } @output { y: T[1]; } }"), {}, [])


def graph(body, decls="@input { x: real[2, 3]; } @output { y: real[2, 3]; }", extra=""):
    return {"main.sknd": f"import math;\nimport nn;\nimport layout;\n{extra}\ngraph G {{ {decls} @compose {{ {body} }} }}\n"}


X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2


def run(files, **inputs):
    return load(files).run(inputs or {"x": X})


def test_static_if_and_unrolled_loops():
    body = "y = if k > 1 then math.neg(x) elif k == 1 then nn.relu(x) else x;"
    decls = "@attrib { k: int = 1; } @input { x: real[2, 3]; } @output { y: real[2, 3]; }"
    np.testing.assert_array_equal(run(graph(body, decls))["y"], np.maximum(X, 0))
    np.testing.assert_array_equal(load(graph(body, decls), attrs={"k": 2}).run({"x": X})["y"], -X)
    # folding loop over a pack, unrolled; a loop with an index and a count; a block body
    add_all = """operator add_all { @input { xs: real[n]..(k); } @output { y: real[n]; }
        @compose { y = with sum: real[n] = 0.0 for x : xs unroll math.add(sum, x); } }"""
    files = graph("[a, b, c] = layout.unstack{axis=0}(x); y = add_all([a, b, c]);",
                  "@input { x: real[3, 4]; } @output { y: real[4]; }", add_all)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(run(files, x=x)["y"], x.sum(0))
    body = "y = with s = x do..(i -> 3) { t = math.mul(s, 2.0); u = math.add(t, i); yield u; };"
    np.testing.assert_array_equal(run(graph(body))["y"], ((X * 2 + 0) * 2 + 1) * 2 + 2)
    body = "ys = for a : [x, x] do nn.relu(a); y = math.add(ys[0], ys[1]);"
    np.testing.assert_array_equal(run(graph(body))["y"], 2 * np.maximum(X, 0))


def test_custom_compose_with_labels_and_optional_promotion():
    ops = """operator lin { @input { x: real[m, k]; w: real[n, k]; b: optional real[n]; } @output { y: real[m, n]; }
        @compose { t = linalg.matmul{transB=true}(x, w); y = if ?b then math.add(t, b) else t; } }"""
    files = graph("y = lin(x, w, b); z = lin(x, w);", "@input { x: real[2, 3]; w: real[4, 3]; b: real[4]; } "
                  "@output { y: real[2, 4]; z: real[2, 4]; }", "import linalg;\n" + ops)
    w, b = np.ones((4, 3), np.float32), np.arange(4, dtype=np.float32)
    out = run(files, x=X, w=w, b=b)
    np.testing.assert_allclose(out["y"], X @ w.T + b)
    np.testing.assert_allclose(out["z"], X @ w.T)


LOWERED = """
operator my_matmul {
    @input { A: real[m, k]; B: real[k, n]; Z: optional real[m, n]; }
    @output { C: real[m, n]; }
    @lower {
        C[i, j] = Z[i, j] ?? 0.0, i < m, j < n;
        C[i, j] += A[i, l] * B[l, j], i < m, l < k, j < n;
    }
}
operator poly {
    @input { x: real[s..]; }
    @output { y: real[s..]; }
    @lower { z = x[i..] * x[i..], y[i..] = z + z * `sin`(x[i..]), i < s; }
}
operator colmax {
    @input { x: real[m, n]; }
    @output { y: real[n]; }
    @lower { y[j,] = -inf, j < n; y[j,] >= x[i, j], i < m, j < n; }
}
operator diag {
    @input { x: real[n, n]; }
    @output { y: real[n, n]; }
    @lower { y[i, j] = i == j ? x[j, i] : 0.0, i < n, j < n; }
}
"""


def test_lower_bodies_become_webnn():
    files = graph("p = my_matmul(x, w); q = poly(x); r = colmax(x); t = diag(sq); u = my_matmul(x, w, z);",
                  "@input { x: real[2, 3]; w: real[3, 4]; sq: real[3, 3]; z: real[2, 4]; } "
                  "@output { p: real[2, 4]; q: real[2, 3]; r: real[3]; t: real[3, 3]; u: real[2, 4]; }", LOWERED)
    rng = np.random.default_rng(5)
    w, sq, z = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (3, 3), (2, 4)))
    out = run(files, x=X, w=w, sq=sq, z=z)
    np.testing.assert_allclose(out["p"], X @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["u"], X @ w + z, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["q"], X * X + X * X * np.sin(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(out["r"], X.max(0))
    np.testing.assert_array_equal(out["t"], np.diag(np.diag(sq)))


REJECTED = [
    # (model files, error type, message pattern) - one per construct the importer rejects
    (graph("c = math.lt(x, x); y = if c then nn.relu(x) else x;"), NNEFUnsupportedError,
     r"main.sknd:5:\d+: operation 'if' is not supported: the condition is a tensor"),
    (graph("y = with s = x while math.lt(s, s) do nn.relu(s);"), NNEFUnsupportedError,
     r"main.sknd:5:\d+: operation 'while' is not supported"),
    ({"main.sknd": "graph G { @input { x: real[s|10]; } @output { y: real[s]; } }"}, NNEFUnsupportedError,
     r"main.sknd:1:\d+: .*dynamic shape"),
    (graph("y = f(x);", extra="operator f { @input { x: real[n, m]; } @output { y: real[~|4, m]; } }"),
     NNEFUnsupportedError, r"main.sknd:\d+:\d+: operation 'main.f' is not supported: output 'y' has a dynamic shape"),
    (graph("y = box(x);", extra="""operator box { @input { x: real[m, n]; } @output { y: real[m, n]; }
        @lower { y[i, j] += x[|i + k - 1|, j], i < m, j < n, k < 3; } }"""), NNEFUnsupportedError,
     r"operation 'main.box' is not supported: its @lower body: the tensor index"),
    (graph("y = x;", "@input { x: real[2, 3]; } @output { y: real[2, 3]; } @variable { w: real[3]; } "
                     "@update { w = math.neg(w); }"), NNEFUnsupportedError, r"@update"),
    (graph("y = nn.nonexistent(x);"), NNEFSemanticError, r"main.sknd:5:\d+: operator 'nonexistent' is not defined"),
    (graph("y = nn.relu{beta=1.0}(x);"), NNEFSemanticError, r"'nn.relu' has no attribute 'beta'"),
    (graph("y = nn.conv(x, x);"), NNEFUnsupportedError,
     r"main.sknd:5:\d+: operation 'nn.conv' is not supported: 0-D convolution"),
    (graph("y = math.add(x, z);", "@input { x: real[2, 3]; z: real[4]; } @output { y: real[2, 3]; }"),
     NNEFSemanticError, r"main.sknd:5:\d+: 'math.add': incompatible argument shapes for broadcasting \(\[2, 3\] vs "
                        r"\[1, 4\] after alignment\)"),
    (graph("y = image.max_roi_pool{output_size=[2, 2]}(x, x, x);"), (NNEFSemanticError, NNEFUnsupportedError),
     r"main.sknd:5:\d+:"),
    (graph("y = math.neg(x)"), NNEFSyntaxError, r"main.sknd:5:\d+: expected ';'"),
    (graph("y = math.neg(q);"), NNEFSemanticError, r"main.sknd:5:\d+: unknown identifier 'q'"),
]


@pytest.mark.parametrize("files, error, pattern", REJECTED)
def test_rejected_constructs_are_typed_positioned_errors(files, error, pattern):
    with pytest.raises(error, match=pattern):
        load(files)


def test_stdlib_asserts_are_reported_at_the_invocation():
    files = graph("y = nn.conv{stride=0}(a, w);", "@input { a: real[1, 2, 5, 5]; w: real[3, 2, 3, 3]; } "
                                                "@output { y: real[1, 3, 5, 5]; }")
    with pytest.raises(NNEFSemanticError, match=r"main.sknd:5:\d+: 'nn.conv': 'stride' must be positive \(stride = "
                                                r"\[0, 0\]\) \[stdlib/nn.sknd:\d+:\d+\]"):
        shapes(files)
