"""The backend seam: each context owns its backend, so two contexts with
different backend options never share switches, plans, profiles or
fallback reasons; opSupportLimits() is the registry narrowed to the
context's backend, per context."""
import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError
from webnn_core.backends import CpuBackend, WebGPUBackend
from webnn_core.ops import ops

RNG = np.random.default_rng(3)
W = RNG.standard_normal((6, 3, 3, 4)).astype(np.float32)


def conv_relu(ctx):
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [1, 8, 8, 4]})
    w = b.constant({"dataType": "float32", "shape": [6, 3, 3, 4]}, W)
    return b.build({"y": b.relu(b.conv2d(x, w, inputLayout="nhwc", filterLayout="ohwi", padding=[1, 1, 1, 1]))})


def reference_conv_relu(x, w):
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = np.zeros((1, 8, 8, 6))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nhwc,oc->nhwo", xp[:, i:i + 8, j:j + 8, :], w[:, i, j, :].astype(np.float64))
    return np.maximum(out, 0)


def test_two_contexts_with_different_fast_path_options_do_not_interfere(native):
    fast_ctx = Context("cpu", options={"fastPaths": True})
    ref_ctx = Context("cpu", options={"fastPaths": False})
    assert fast_ctx.backend is not ref_ctx.backend
    g_fast, g_ref = conv_relu(fast_ctx), conv_relu(ref_ctx)
    # Compile results live in each backend's plan; the built graphs' nodes are untouched.
    assert [n.op.name for n in g_fast.plan.nodes] == ["conv2d+relu"]
    assert [n.op.name for n in g_ref.plan.nodes] == ["conv2d", "relu"]
    for g in (g_fast, g_ref):
        assert all(not k.startswith("_") for n in g.nodes for k in n.attrs)
    x = RNG.standard_normal((1, 8, 8, 4)).astype(np.float32)
    fast_ctx.backend.set_profiling(True)
    ref_ctx.backend.set_profiling(True)
    y_fast = fast_ctx.compute(g_fast, {"x": x})["y"]
    y_ref = ref_ctx.compute(g_ref, {"x": x})["y"]
    np.testing.assert_allclose(y_fast, reference_conv_relu(x, W), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(y_ref, reference_conv_relu(x, W), rtol=1e-4, atol=1e-4)
    assert fast_ctx.backend.profile()["conv2d+relu"]["fast_calls"] == 1
    assert ref_ctx.backend.profile()["conv2d"]["fast_calls"] == 0
    assert set(ref_ctx.backend.profile()) == {"conv2d", "relu"}
    # Switching one context's fast paths leaves the other's alone.
    fast_ctx.backend.set_fast_paths(False)
    assert ref_ctx.backend.fast_paths is False and Context("cpu").backend.fast_paths is True
    ref_ctx.backend.set_fast_paths(True)
    assert fast_ctx.backend.fast_paths is False
    # Fallback reasons are per backend too.
    b = ref_ctx.graph_builder()
    h = b.input("h", {"dataType": "float16", "shape": [1, 4, 4, 2]})
    wh = b.constant({"dataType": "float16", "shape": [2, 1, 1, 2]}, np.ones((2, 1, 1, 2), np.float16))
    ref_ctx.compute(b.build({"y": b.conv2d(h, wh, inputLayout="nhwc", filterLayout="ohwi")}),
                    {"h": np.ones((1, 4, 4, 2), np.float16)})
    assert "float32 only" in ref_ctx.backend.fallback_reasons["conv2d"]
    assert "conv2d" not in fast_ctx.backend.fallback_reasons


def test_device_types_pick_their_backend():
    assert isinstance(Context("cpu").backend, CpuBackend)
    gpu = Context("gpu")
    assert isinstance(gpu.backend, WebGPUBackend) and gpu.backend.gpu_device is None
    assert gpu.backend.fallback is not Context("gpu").backend.fallback  # nothing shared
    assert isinstance(Context("gpu", options={"backend": "cpu"}).backend, CpuBackend)


class NoSoftmax(CpuBackend):
    """A backend that cannot run softmax, and runs add on float32 only."""

    def supports(self, op):
        return op.name != "softmax"

    def op_support_limits(self, registry_limits, registry):
        limits = super().op_support_limits(registry_limits, registry)
        limits["add"] = {k: {"dataTypes": ["float32"]} for k in limits["add"]}
        return limits


def test_op_support_limits_are_the_registry_narrowed_per_context():
    plain, narrow = Context("cpu"), Context("cpu")
    narrow.backend = NoSoftmax()
    full = plain.op_support_limits()
    for name, op in ops().items():  # the registry, all of it
        assert full[name] == op.support_limits()
    limits = narrow.op_support_limits()
    assert "softmax" not in limits and "softmax" in full
    assert limits["add"]["a"]["dataTypes"] == ["float32"] and "int32" in full["add"]["a"]["dataTypes"]
    assert plain.op_support_limits() == full  # asking the other context changed nothing
    assert limits["preferredInputLayout"] == narrow.backend.preferred_input_layout
    b = narrow.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [2, 3]})
    with pytest.raises(WebNNTypeError, match=r"\[sm\] softmax: .*not supported by this context"):
        b.softmax(x, 1, label="sm")
    b2 = plain.graph_builder()
    b2.softmax(b2.input("x", {"dataType": "float32", "shape": [2, 3]}), 1)  # fine on the other context


def test_unknown_backend_is_not_supported():
    from webnn_core import NotSupportedError

    with pytest.raises(NotSupportedError, match="unknown backend"):
        Context("cpu", options={"backend": "tpu"})
