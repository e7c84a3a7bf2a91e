"""StableHLO importer vs JAX: every case of jax_cases.py, in the pretty form
JAX prints, in MLIR's generic form, and with debug locations; plus whole models
(an MLP, a CNN with pooling, a transformer block, an embedding lookup).
Expected values are JAX's own outputs (independent of the polyfill)."""
from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is a test-only dev dependency (pip install jax==0.10.2 jaxlib==0.10.2)")
import jax.numpy as jnp  # noqa: E402

from webnn_core.xla import load_stablehlo  # noqa: E402

from . import jax_cases  # noqa: E402

CASES = {name: (f, args) for name, f, args in jax_cases.cases()}
FORMS = ("pretty", "generic", "debug")


def export(f, args, form="pretty"):
    lowered = jax.jit(f).lower(*args)
    if form == "generic":
        return lowered.compiler_ir("stablehlo").operation.get_asm(print_generic_op_form=True, enable_debug_info=True)
    return lowered.as_text(debug_info=form == "debug")


_EXPECTED = {}


def jax_outputs(f, args):
    """JAX's own results (compiled once per function: XLA compiles dominate the run time)."""
    if id(f) not in _EXPECTED:
        out = jax.jit(f)(*args)
        _EXPECTED[id(f)] = [np.asarray(e) for e in (out if isinstance(out, (tuple, list)) else (out,))]
    return _EXPECTED[id(f)]


def assert_matches_jax(f, args, got):
    expected = jax_outputs(f, args)
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        e = np.asarray(e)
        assert g.dtype == e.dtype, f"result {i}: dtype {g.dtype}, JAX {e.dtype}"
        assert g.shape == e.shape, f"result {i}: shape {g.shape}, JAX {e.shape}"
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(g, e, err_msg=f"result {i}")
        else:
            np.testing.assert_allclose(g, e, rtol=2e-5, atol=2e-5, err_msg=f"result {i}")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_jax(name, form):
    f, args = CASES[name]
    model = load_stablehlo(export(f, args, form))
    assert_matches_jax(f, args, model(*args))


def _dense(key, n_in, n_out):
    k1, k2 = jax.random.split(key)
    return (jax.random.normal(k1, (n_in, n_out)) / np.sqrt(n_in), jax.random.normal(k2, (n_out,)) * 0.1)


def mlp(params, x):
    for w, b in params[:-1]:
        x = jax.nn.gelu(x @ w + b)
    w, b = params[-1]
    return jax.nn.log_softmax(x @ w + b)


def cnn(params, x):
    k1, k2, w = params
    x = jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    x = jax.nn.relu(x)
    x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    x = jax.lax.conv_general_dilated(x, k2, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    x = jax.nn.relu(x)
    x = jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4
    x = x.mean(axis=(1, 2))
    return jax.nn.softmax(x @ w), jnp.argmax(x @ w, axis=-1)


def layer_norm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b


def transformer_block(p, x):
    q, k, v = x @ p["wq"], x @ p["wk"], x @ p["wv"]
    b, t, d = x.shape
    heads = 2
    split = lambda z: z.reshape(b, t, heads, d // heads).transpose(0, 2, 1, 3)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    att = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(d // heads)
    mask = jnp.tril(jnp.ones((t, t), bool))
    att = jax.nn.softmax(jnp.where(mask, att, -1e9), axis=-1)
    y = jnp.einsum("bhqk,bhkd->bhqd", att, v).transpose(0, 2, 1, 3).reshape(b, t, d)
    x = layer_norm(x + y @ p["wo"], p["g1"], p["b1"])
    h = jax.nn.gelu(x @ p["w1"], approximate=True) @ p["w2"]
    return layer_norm(x + h, p["g2"], p["b2"])


def embed_model(table, ids):
    e = table[ids]
    return e.sum(axis=1), jnp.take(table, ids[:, 0], axis=0)


def _models():
    key = jax.random.PRNGKey(0)
    keys = jax.random.split(key, 12)
    rng = np.random.default_rng(3)
    mlp_params = [_dense(keys[0], 16, 32), _dense(keys[1], 32, 32), _dense(keys[2], 32, 10)]
    cnn_params = (jax.random.normal(keys[3], (3, 3, 1, 8)) * 0.3, jax.random.normal(keys[4], (3, 3, 8, 8)) * 0.2,
                  jax.random.normal(keys[5], (8, 10)))
    d = 8
    tp = {n: jax.random.normal(k, s) * 0.3 for (n, s), k in zip(
        [("wq", (d, d)), ("wk", (d, d)), ("wv", (d, d)), ("wo", (d, d)), ("w1", (d, 16)), ("w2", (16, d))], keys[6:])}
    tp.update(g1=jnp.ones(d), b1=jnp.zeros(d), g2=jnp.full(d, 1.1), b2=jnp.full(d, 0.1))
    table = jax.random.normal(keys[11], (20, 6))
    return {
        "mlp": (lambda x: mlp(mlp_params, x), (rng.standard_normal((4, 16)).astype(np.float32),)),
        "cnn": (lambda x: cnn(cnn_params, x), (rng.standard_normal((2, 12, 12, 1)).astype(np.float32),)),
        "transformer_block": (lambda x: transformer_block(tp, x), (rng.standard_normal((2, 5, d)).astype(np.float32),)),
        "embedding": (lambda ids: embed_model(table, ids), (rng.integers(0, 20, (3, 4)).astype(np.int32),)),
    }


MODELS = _models()


@pytest.mark.parametrize("form", ("pretty", "generic"))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_jax(name, form):
    f, args = MODELS[name]
    model = load_stablehlo(export(f, args, form))
    assert_matches_jax(f, args, model(*args))


def test_weights_as_parameters():
    """Parameters can be supplied as weights (npz keys arg<i>): they become constants."""
    w = np.random.default_rng(1).standard_normal((16, 10)).astype(np.float32)
    x = np.random.default_rng(2).standard_normal((3, 16)).astype(np.float32)
    f = lambda w, x: jax.nn.softmax(x @ w)  # noqa: E731
    model = load_stablehlo(export(f, (w, x)), weights={"arg0": w})
    assert list(model.inputs) == ["arg1"]
    assert_matches_jax(f, (w, x), model(x))


def test_zero_size_parameter_is_not_a_graph_input():
    """A zero-size parameter carries no data: it is no graph input, yet the program
    runs and matches JAX (keep_unused so JAX keeps it in @main's signature)."""
    e = np.zeros((0, 4), np.float32)
    a = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    f = lambda e, a: (jnp.concatenate([e, a, e]), e.sum(0) + a[0])  # noqa: E731
    model = load_stablehlo(jax.jit(f, keep_unused=True).lower(e, a).as_text())
    assert list(model.inputs) == ["arg1"] and model.input_names == ["arg0", "arg1"]
    assert_matches_jax(f, (e, a), model(e, a))
    assert_matches_jax(f, (e, a), [v for _, v in sorted(model.run({"arg1": a}).items())])


@pytest.mark.parametrize("form", FORMS)
def test_empty_output_is_rejected_by_name(form):
    """Empty intermediates fold away, but a graph cannot output an empty tensor:
    the error names the output."""
    from webnn_core.xla import NotExpressibleError

    x = np.ones((3, 4), np.float32)
    f = lambda a: (a * 2, a[:, :0] + 1)  # noqa: E731
    with pytest.raises(NotExpressibleError) as err:
        load_stablehlo(export(f, (x,), form))
    msg = str(err.value)
    assert "result 1" in msg and "'result1'" in msg and "tensor<3x0xf32>" in msg and "no elements" in msg, msg


@pytest.mark.parametrize("form", FORMS)
def test_custom_call_is_named_with_its_target(form):
    """jnp.linalg.cholesky lowers to a LAPACK custom_call whose attributes hold
    `tensor<2xindex>` layouts the importer cannot read; the error still names the
    custom_call and its call target (read here from the text independently)."""
    import re

    from webnn_core.xla import NotExpressibleError

    a = np.array([[4, 2, 0], [2, 5, 1], [0, 1, 3]], np.float32)
    text = export(jnp.linalg.cholesky, (a,), form)
    found = re.search(r'custom_call"?\s*(?:@|\(.*?call_target_name = ")([\w.]+)', text, re.S)
    assert found, text
    target = found.group(1)
    with pytest.raises(NotExpressibleError) as err:
        load_stablehlo(text)
    msg = str(err.value)
    assert "stablehlo.custom_call" in msg and f"@{target}" in msg, msg
    line = 1 + text[:text.index("custom_call")].count("\n")
    assert msg.startswith(f"{line}:"), msg
