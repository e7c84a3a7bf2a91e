"""NNEF 2.0 constant packs (seed 004 §2.7) and packs of tensors through operator
arguments and results (§2.10).

§2.7: "It is also possible to define a pack of constants. The pack length must be
explicitly defined, and in that case the value must be defined by a list of values,
whose length equals the pack length, each item defining one constant in the pack. In
this case, the (possibly different) value of each constant can only be uniform (though
their shapes may vary)." So `ws: real[r, c]..(3) = [a, b, d];` is three r-by-c
constants filled with a, b and d. The references below are numpy arrays built from
that sentence; errors are checked against positions found in the source text."""
from __future__ import annotations

import re

import numpy as np
import pytest

from webnn_core.context import Context
from webnn_core.nnef.errors import NNEFSemanticError, NNEFUnsupportedError
from webnn_core.nnef2 import export_graph, load, shapes

IMPORTS = "import layout;\nimport math;\n"


def pos_of(text, needle, nth=0):
    """'line:column' (1-based) of the nth occurrence of `needle` in `text`."""
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    line = text.count("\n", 0, at) + 1
    return f"{line}:{at - (text.rfind(chr(10), 0, at) + 1) + 1}"


def packs(values, shape, dtype=np.float32):
    return [np.full(shape, v, dtype=dtype) for v in values]


GRAPH = IMPORTS + """
graph G {
    @attrib { rows: int = 2; cols: int = 3; vals: real..(3) = [0.5, -1.0, 2.0]; }
    @input { x: real[rows, cols]; }
    @output {
        cat: real[rows, 3 * cols];
        stk: real[3, rows, cols];
        summed: real[rows, cols];
        scaled: real[rows, 3 * cols];
        second: real[rows, cols];
        ints: int[2, 4];
    }
    @constant {
        ws: real[rows, cols]..(3) = [0.5, -1, 2.0];
        vs: real[rows, cols]..(ws.size) = vals;
        ks: int[2, 2]..(2) = [7, -3];
    }
    @compose {
        cat = layout.concat{axis=1}(ws);
        stk = layout.stack{axis=0}(vs);
        summed = with acc: real[rows, cols] = 0.0 for w : ws do math.add(acc, w);
        ys = for w : ws do math.mul(x, w);
        scaled = layout.concat{axis=1}(ys);
        second = math.add(x, ws[1]);
        ints = layout.concat{axis=1}(ks);
    }
}
"""


def graph_reference(x, rows=2, cols=3, vals=(0.5, -1.0, 2.0)):
    ws = packs([0.5, -1.0, 2.0], (rows, cols))
    vs = packs(vals, (rows, cols))
    ks = packs([7, -3], (2, 2), np.int32)
    return {"cat": np.concatenate(ws, axis=1), "stk": np.stack(vs, axis=0),
            "summed": ws[0] + ws[1] + ws[2], "scaled": np.concatenate([x * w for w in ws], axis=1),
            "second": x + ws[1], "ints": np.concatenate(ks, axis=1)}


def test_constant_pack_in_a_graph_runs_and_matches_numpy():
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    out = load({"main.sknd": GRAPH}).run({"x": x})
    want = graph_reference(x)
    assert set(out) == set(want)
    for name, ref in want.items():
        assert out[name].dtype == ref.dtype, name
        np.testing.assert_array_equal(out[name], ref, err_msg=name)


def test_constant_pack_shapes_and_values_follow_the_attributes():
    x = np.random.default_rng(1).standard_normal((4, 1)).astype(np.float32)
    model = load({"main.sknd": GRAPH}, attrs={"rows": 4, "cols": 1, "vals": [3.0, 0.25, -8.0]})
    out = model.run({"x": x})
    for name, ref in graph_reference(x, 4, 1, (3.0, 0.25, -8.0)).items():
        np.testing.assert_array_equal(out[name], ref, err_msg=name)
    _, outs, _ = shapes({"main.sknd": GRAPH}, attrs={"rows": 5, "cols": 7})
    assert list(outs["cat"].shape) == [5, 21] and list(outs["stk"].shape) == [3, 5, 7]


def test_constant_pack_items_may_differ_in_shape():
    # '..t' gives each item of the pack its own extent (seed §2.3, §2.6); values stay uniform
    text = IMPORTS + """
graph G {
    @attrib { t: int..(3) = [1, 2, 4]; }
    @input { x: real[2, 7]; }
    @output { y: real[2, 7]; }
    @constant { cs: real[2, ..t]..(3) = [1.5, -2.0, 0.0]; }
    @compose {
        c = layout.concat{axis=1}(cs);
        y = math.mul(x, c);
    }
}
"""
    x = np.random.default_rng(2).standard_normal((2, 7)).astype(np.float32)
    c = np.concatenate([np.full((2, 1), 1.5), np.full((2, 2), -2.0), np.zeros((2, 4))], axis=1).astype(np.float32)
    np.testing.assert_array_equal(load({"main.sknd": text}).run({"x": x})["y"], x * c)


FRAGMENTS = IMPORTS + """
operator scale_each {
    @input { xs: real[m, n]..(k); s: real[m, n]; }
    @output { ys: real[m, n]..(k); }
    @compose { ys = for x : xs do math.mul(x, s); }
}
operator offsets {
    @attrib { v: real..(k); n: int; }
    @output { cs: real[n]..(k); }
    @constant { c: real[n]..(k) = v; }
    @compose { cs = c; }
}
operator sum_all {
    @input { xs: real[n]..(k); }
    @output { y: real[n]; }
    @compose { y = with acc: real[n] = 0.0 for x : xs do math.add(acc, x); }
}
operator head_tail {
    @input { xs: real[n]..(k); }
    @output { h: real[n]; t: real[n]..(k - 1); }
    @compose { [h, t..] = xs; }
}
graph G {
    @input { x: real[2, 3]; z: real[4]; }
    @output { a: real[2, 9]; b: real[3, 4]; c: real[4]; d: real[4]; e: real[8]; }
    @constant { ws: real[2, 3]..(3) = [0.5, -1.0, 2.0]; }
    @compose {
        ys..(3) = scale_each(ws, x);
        a = layout.concat{axis=1}(ys);
        os..(3) = offsets{v=[1.0, 10.0, 100.0], n=4}();
        ps = for o : os do math.add(o, z);
        b = layout.stack{axis=0}(ps);
        c = sum_all(os);
        d = sum_all([os.., z]);
        h, rest..(2) = head_tail(os);
        e = layout.concat{axis=0}(rest);
    }
}
"""


def test_constant_packs_through_operator_arguments_and_results():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    z = rng.standard_normal(4).astype(np.float32)
    ws = packs([0.5, -1.0, 2.0], (2, 3))
    os_ = packs([1.0, 10.0, 100.0], (4,))
    out = load({"main.sknd": FRAGMENTS}).run({"x": x, "z": z})
    np.testing.assert_array_equal(out["a"], np.concatenate([x * w for w in ws], axis=1))
    np.testing.assert_array_equal(out["b"], np.stack([o + z for o in os_]))
    np.testing.assert_array_equal(out["c"], (os_[0] + os_[1]) + os_[2])
    np.testing.assert_array_equal(out["d"], ((os_[0] + os_[1]) + os_[2]) + z)
    np.testing.assert_array_equal(out["e"], np.concatenate(os_[1:]))


def test_exported_constant_pack_model_runs_the_same():
    """The NNEF 2.0 exporter sees ordinary WebNN constants: export and reload agree."""
    x = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    z = np.random.default_rng(5).standard_normal(4).astype(np.float32)
    model = load({"main.sknd": FRAGMENTS}, Context())
    want = model.run({"x": x, "z": z})
    text, files = export_graph(model.graph, "Exported")
    got = load({"main.sknd": text.encode(), **files}).run({"x": x, "z": z})
    for name in want:
        np.testing.assert_array_equal(got[name], want[name], err_msg=name)


def graph_with(constant, compose="y = math.add(x, x);", attrib=""):
    return IMPORTS + f"""
graph G {{
    @attrib {{ {attrib} }}
    @input {{ x: real[2]; }}
    @output {{ y: real[2]; }}
    @constant {{ {constant} }}
    @compose {{ {compose} }}
}}
"""


@pytest.mark.parametrize("constant, needle, message", [
    ("ws: real[2]..(3) = [0.5, -1.0];", "[0.5", r"constant pack 'ws' has length 3 but its value list has 2 items"),
    ("ws: real[2]..(2) = [0.5, -1.0, 2.0];", "[0.5",
     r"constant pack 'ws' has length 2 but its value list has 3 items"),
    ("ws: real[2]..(n) = [0.5];", "[0.5", r"constant pack 'ws' has length 2 but its value list has 1 items"),
    ("ws: real[2]..(3) = 0.5;", "0.5", r"constant pack 'ws' needs a list of 3 values, one per constant"),
    ("ws: real[2].. = [0.5, 1.0];", "..", r"constant pack 'ws' must state its length"),
    ("ws: int[2]..(2) = [1, 2.5];", "[1", r"constant 'ws' is int, so its value cannot be 2.5 \(real\)"),
    ("ws: real[2]..(2) = [1.0, true];", "[1.0", r"constant 'ws' is real, so its value cannot be true \(bool\)"),
    ("ws: real[2]..(2) = [i, i], i < 2;", ("2;", 1), r"constant pack 'ws': each constant of a pack is uniform"),
    ("ws: real[2]..(m) = [1.0];", "m)", r"constant pack 'ws': its length needs 'm', which is not known"),
])
def test_constant_pack_errors_are_positioned(constant, needle, message):
    text = graph_with(constant, attrib="n: int = 2;")
    where = pos_of(text, *needle) if isinstance(needle, tuple) else pos_of(text, needle)
    with pytest.raises(NNEFSemanticError, match=rf"^main\.sknd:{where}: {message}"):
        load({"main.sknd": text})


def test_uniform_constant_of_the_wrong_type_is_an_error():
    # before: np.full silently truncated 0.5 to 0 for an int constant
    text = graph_with("c: int[2] = 0.5;")
    with pytest.raises(NNEFSemanticError, match=rf"^main\.sknd:{pos_of(text, '0.5')}: constant 'c' is int, "
                                                r"so its value cannot be 0.5"):
        load({"main.sknd": text})


def test_operator_pack_result_must_match_its_declaration():
    text = IMPORTS + """
operator three {
    @input { x: real[n]; }
    @output { ys: real[n]..(3); }
    @compose { ys = [x, x]; }
}
graph G {
    @input { x: real[2]; }
    @output { y: real[6]; }
    @compose {
        ys..(3) = three(x);
        y = layout.concat{axis=0}(ys);
    }
}
"""
    where = pos_of(text, "ys: real[n]..(3)")
    with pytest.raises(NNEFSemanticError, match=rf"^main\.sknd:{where}: 'main.three': output 'ys' is declared a "
                                                r"pack of 3 tensors but composed as a pack of 2"):
        load({"main.sknd": text})
    bad_shape = text.replace("ys = [x, x];", "w = layout.concat{axis=0}([x, x]); ys = [x, x, w];")
    with pytest.raises(NNEFSemanticError, match=rf"^main\.sknd:{where}: 'main.three': item 2 of output 'ys' is "
                                                r"declared real\[2\] but composed as real\[4\]"):
        load({"main.sknd": bad_shape})


def test_constant_pack_as_a_graph_output_is_a_typed_unsupported_error():
    text = IMPORTS + """
graph G {
    @input { x: real[2]; }
    @output { y: real[2]; ws: real[2]..(2); }
    @constant { cs: real[2]..(2) = [1.0, 2.0]; }
    @compose { y = math.add(x, x); ws = cs; }
}
"""
    with pytest.raises(NNEFUnsupportedError, match=rf"^main\.sknd:{pos_of(text, 'ws: real')}: .*graph output 'ws' "
                                                   r"is a pack of tensors"):
        load({"main.sknd": text})


def test_quantizing_a_constant_pack_is_a_typed_unsupported_error():
    text = IMPORTS + """
import quant;
graph G {
    @input { x: real[2]; }
    @output { y: real[2]; }
    @constant { cs: real[2]..(2) = [1.0, 2.0]; }
    @compose { y = math.add(x, cs[0]); }
    @quantize { cs: quant.zero_point_linear_quantize{zero_point=0, scale=0.5, bits=8}; }
}
"""
    with pytest.raises(NNEFUnsupportedError, match=rf"^main\.sknd:{pos_of(text, 'cs: quant')}: .*'cs' is a pack "
                                                   r"of tensors"):
        load({"main.sknd": text}, quantization=True)


def test_error_messages_carry_no_python_text():
    text = graph_with("ws: real[2]..(3) = [0.5];")
    with pytest.raises(NNEFSemanticError) as info:
        load({"main.sknd": text})
    assert not re.search(r"Traceback|File \"|Error:", str(info.value).split(": ", 1)[1])
