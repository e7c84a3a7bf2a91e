"""MLContext / MLTensor semantics (EXPL and digest §2.1, §3, §6.1) and opSupportLimits."""

import numpy as np
import pytest

from webnn_core import Context, InvalidStateError, WebNNTypeError


def desc(shape, dtype="float32", **flags):
    return {"dataType": dtype, "shape": list(shape), **flags}


def tdesc(shape, dtype="float32"):
    """A readable and writable tensor's descriptor."""
    return desc(shape, dtype, readable=True, writable=True)


def add_graph(ctx):
    b = ctx.graph_builder()
    a = b.input("a", desc([2]))
    c = b.input("b", desc([2]))
    return b.build({"out": b.add(a, c)})


def test_tensor_is_zero_initialised_and_write_copies_at_call_time():
    ctx = Context()
    t = ctx.create_tensor(tdesc([2]))
    assert ctx.read_tensor(t) == bytes(8)
    src = bytearray(np.array([1.5, 2.5], np.float32).tobytes())
    ctx.write_tensor(t, src)
    src[:] = bytes(8)
    assert np.frombuffer(ctx.read_tensor(t), np.float32).tolist() == [1.5, 2.5]


def test_write_requires_exact_byte_length():
    ctx = Context()
    t = ctx.create_tensor(tdesc([2]))
    for n in (4, 12, 0):
        with pytest.raises(WebNNTypeError):
            ctx.write_tensor(t, bytes(n))


def test_tensor_from_another_context_is_a_type_error():
    ctx, other = Context(), Context()
    t = other.create_tensor(tdesc([2]))
    with pytest.raises(WebNNTypeError):
        ctx.write_tensor(t, bytes(8))
    with pytest.raises(WebNNTypeError):
        ctx.read_tensor(t)


def test_destroyed_tensor_is_a_type_error_and_destroyed_context_invalid_state():
    # ED (2026-06-26) writeTensor/readTensor steps: a destroyed tensor is a TypeError;
    # a lost context stays InvalidStateError (WPT destroyContext).
    ctx = Context()
    t = ctx.create_tensor(tdesc([2]))
    t.destroy()
    with pytest.raises(WebNNTypeError):
        ctx.write_tensor(t, bytes(8))
    with pytest.raises(WebNNTypeError):
        ctx.read_tensor(t)
    live = ctx.create_tensor(tdesc([2]))
    ctx.destroy()
    with pytest.raises(InvalidStateError):
        ctx.read_tensor(live)
    with pytest.raises(InvalidStateError):
        ctx.create_tensor(tdesc([2]))


@pytest.mark.parametrize("flags", [{}, {"writable": True}, {"readable": True}])
def test_readable_and_writable_are_enforced(flags):
    """ED readTensor/writeTensor: TypeError unless created readable / writable."""
    ctx = Context()
    t = ctx.create_tensor(desc([2], **flags))
    if not flags.get("writable"):
        with pytest.raises(WebNNTypeError, match="writable"):
            ctx.write_tensor(t, bytes(8))
    else:
        ctx.write_tensor(t, bytes(8))
    if not flags.get("readable"):
        with pytest.raises(WebNNTypeError, match="readable"):
            ctx.read_tensor(t)
    else:
        assert ctx.read_tensor(t) == bytes(8)


def test_destroy_frees_arrays_at_once_and_context_destroy_destroys_everything():
    """Issue 15 #1: nothing waits for Python's cycle collector."""
    import gc
    import weakref

    gc.disable()
    try:
        ctx = Context()
        b = ctx.graph_builder()
        big = np.arange(1 << 16, dtype=np.float32)
        x = b.input("x", desc([1 << 16]))
        g = b.build({"y": b.add(x, b.constant(desc([1 << 16]), big.tobytes()))})
        const = next(iter(g.constants.values()))
        gone = weakref.ref(const.base if const.base is not None else const)
        del const
        g.destroy()
        assert gone() is None
        g2 = add_graph(ctx)
        t = ctx.create_tensor(tdesc([2]))
        ctx.destroy()
        assert g2.destroyed and t.destroyed and t.data is None and g2.nodes == []
    finally:
        gc.enable()


def test_dispatch_runs_in_call_order_and_reads_snapshot():
    ctx = Context()
    g = add_graph(ctx)
    a, b_, out = (ctx.create_tensor(tdesc([2])) for _ in range(3))
    ctx.write_tensor(a, np.array([1, 2], np.float32).tobytes())
    ctx.write_tensor(b_, np.array([10, 20], np.float32).tobytes())
    ctx.dispatch(g, {"a": a, "b": b_}, {"out": out})
    first = ctx.read_tensor(out)
    ctx.write_tensor(a, np.array([100, 200], np.float32).tobytes())  # must not leak into the earlier read
    ctx.dispatch(g, {"a": a, "b": b_}, {"out": out})
    assert np.frombuffer(first, np.float32).tolist() == [11, 22]
    assert np.frombuffer(ctx.read_tensor(out), np.float32).tolist() == [110, 220]
    # Inputs are not modified, and outputs can feed the next dispatch.
    assert np.frombuffer(ctx.read_tensor(a), np.float32).tolist() == [100, 200]
    out2 = ctx.create_tensor(tdesc([2]))
    ctx.dispatch(g, {"a": out, "b": out}, {"out": out2})
    assert np.frombuffer(ctx.read_tensor(out2), np.float32).tolist() == [220, 440]


@pytest.mark.parametrize("case", ["missing", "extra", "shape", "dtype", "dup_out", "in_is_out"])
def test_dispatch_validation(case):
    ctx = Context()
    g = add_graph(ctx)
    a, b_, out = (ctx.create_tensor(tdesc([2])) for _ in range(3))
    inputs, outputs = {"a": a, "b": b_}, {"out": out}
    if case == "missing":
        inputs = {"a": a}
    elif case == "extra":
        outputs = {"out": out, "zzz": ctx.create_tensor(tdesc([2]))}
    elif case == "shape":
        inputs = {"a": a, "b": ctx.create_tensor(tdesc([3]))}
    elif case == "dtype":
        inputs = {"a": a, "b": ctx.create_tensor(tdesc([2], "int32"))}
    elif case == "dup_out":
        g = ctx.graph_builder()
        x = g.input("x", desc([2]))
        g = g.build({"p": g.relu(x), "q": g.relu(x)})
        inputs, outputs = {"x": a}, {"p": out, "q": out}
    elif case == "in_is_out":
        outputs = {"out": a}
    with pytest.raises(WebNNTypeError):
        ctx.dispatch(g, inputs, outputs)


def test_dispatch_destroyed_graph_or_context():
    ctx = Context()
    g = add_graph(ctx)
    ts = {n: ctx.create_tensor(tdesc([2])) for n in ("a", "b", "out")}
    g.destroyed = True
    with pytest.raises(InvalidStateError):
        ctx.dispatch(g, {"a": ts["a"], "b": ts["b"]}, {"out": ts["out"]})
    g2 = add_graph(ctx)
    ctx.destroy()
    with pytest.raises(InvalidStateError):
        ctx.dispatch(g2, {"a": ts["a"], "b": ts["b"]}, {"out": ts["out"]})


def test_op_support_limits_computed_once_per_backend_class_and_fresh_per_call(monkeypatch):
    """ORT's WebNN EP asks every new context (one per session): the table is computed
    once per backend class and each call returns its own dictionary."""
    from webnn_core import context as context_module

    monkeypatch.setattr(context_module, "_LIMITS_JSON", {})
    computed = []
    real = context_module.Context._compute_op_support_limits
    monkeypatch.setattr(context_module.Context, "_compute_op_support_limits",
                        lambda self: computed.append(type(self.backend)) or real(self))
    a, b = Context("cpu"), Context("cpu")
    first = a.op_support_limits()
    first["relu"]["input"]["dataTypes"].append("mutated")
    first["preferredInputLayout"] = "mutated"
    second = b.op_support_limits()
    assert second == real(b) and second is not first
    assert "mutated" not in second["relu"]["input"]["dataTypes"] and second["preferredInputLayout"] == "nchw"
    assert a.op_support_limits() == second
    assert len(computed) == 1
