"""The documented numeric conventions and policies (docs/nnef.md): round is
floor(x + 0.5), cast to integer truncates, sign(0) = 0, gelu is NNEF's sigmoid
form unless gelu="exact", 'ignore' and 'constant' borders differ at the edges,
and variables targeted by `update` become state."""
import math

import numpy as np
import pytest

from webnn_core.nnef import NNEFUnsupportedError, dat, load_model


def model(body, decl="x = external(shape = [4]);", outputs="y", **options):
    params = ", ".join(line.split("=")[0].strip() for line in decl.split(";") if line.strip())
    text = (f"version 1.0;\ngraph G( {params} ) -> ( {outputs} )\n{{\n    {decl}\n    {body}\n}}\n")
    return load_model({"graph.nnef": text.encode(), "state.dat": dat.write_tensor(np.zeros(4, np.float32))},
                      **options)


def test_round_is_floor_x_plus_half():
    x = np.array([-2.5, -0.5, 0.5, 2.5], np.float32)
    assert model("y = round(x);").run({"x": x})["y"].tolist() == [-2.0, 0.0, 1.0, 3.0]


def test_cast_to_integer_truncates_and_sign_of_zero():
    x = np.array([-1.5, -0.5, 0.0, 1.7], np.float32)
    assert model("y = cast<integer>(x);").run({"x": x})["y"].tolist() == [-1, 0, 0, 1]
    assert model("y = sign(x);").run({"x": x})["y"].tolist() == [-1.0, -1.0, 0.0, 1.0]
    assert model("y = cast<logical>(x);").run({"x": x})["y"].tolist() == [1, 1, 0, 1]


def test_gelu_definitions():
    x = np.array([-3.0, -1.0, 0.5, 2.0], np.float32)
    nnef = model("y = gelu(x);").run({"x": x})["y"]
    np.testing.assert_allclose(nnef, x / (1 + np.exp(-1.702 * x)), rtol=1e-6)
    exact = model("y = gelu(x);", gelu="exact").run({"x": x})["y"]
    np.testing.assert_allclose(exact, [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x], rtol=1e-6)
    assert np.abs(nnef - exact).max() > 1e-3


def test_ignore_and_constant_borders_differ_at_the_edges():
    decl = "x = external(shape = [1, 1, 3, 3]);"
    x = np.arange(1, 10, dtype=np.float32).reshape(1, 1, 3, 3)
    pads = "padding = [(0,0), (0,0), (1,1), (1,1)]"
    ignore = model(f"y = avg_pool(x, size = [1,1,3,3], {pads}, border = 'ignore');", decl).run({"x": x})["y"]
    const = model(f"y = avg_pool(x, size = [1,1,3,3], {pads}, border = 'constant');", decl).run({"x": x})["y"]
    assert ignore[0, 0, 0, 0] == pytest.approx((1 + 2 + 4 + 5) / 4)
    assert const[0, 0, 0, 0] == pytest.approx((1 + 2 + 4 + 5) / 9)
    assert ignore[0, 0, 1, 1] == const[0, 0, 1, 1] == pytest.approx(5.0)
    neg = -x
    mx_ignore = model(f"y = max_pool(x, size = [1,1,3,3], {pads}, border = 'ignore');", decl).run({"x": neg})["y"]
    mx_const = model(f"y = max_pool(x, size = [1,1,3,3], {pads}, border = 'constant');", decl).run({"x": neg})["y"]
    assert mx_ignore[0, 0, 0, 0] == -1.0 and mx_const[0, 0, 0, 0] == 0.0


def test_update_policy():
    body = "s = variable(shape = [4], label = 'state');\n    n = add(s, x);\n    y = update(s, n);"
    m = model(body)
    assert m.state == {"s": "y"}
    assert set(m.graph.inputs) == {"x", "s"} and m.inputs == {"x": {"dataType": "float32", "shape": [4]}}
    one = np.ones(4, np.float32)
    assert m.run({"x": one})["y"].tolist() == [1.0] * 4
    assert m.run({"x": one})["y"].tolist() == [2.0] * 4
    m.reset_state()
    assert m.run({"x": one})["y"].tolist() == [1.0] * 4
    with pytest.raises(NNEFUnsupportedError) as info:
        model(body, variables="constant")
    assert info.value.op == "update" and info.value.line == 7
