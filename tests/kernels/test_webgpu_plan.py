"""The webgpu backend's Python side, natively (no browser): what the planner
makes of a graph (plain data, fusion, buffer reuse, the reason a graph is
placed on the cpu fallback), the command protocol, and tensor residency.
Running the WGSL itself is tests/browser/test_webgpu.py's job."""
import json

import numpy as np
import pytest

from webnn_core import Context
from webnn_core.backends.webgpu import GpuTensor, WebGPUBackend
from webnn_core.errors import NotSupportedError

ACTIVE = {"webgpu": {"token": 7, "adapter": "test adapter"}}


def gpu_context():
    return Context("gpu", options=ACTIVE)


def conv_graph(ctx):
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [1, 4, 8, 8]})
    w = b.constant({"dataType": "float32", "shape": [6, 4, 3, 3]}, np.ones((6, 4, 3, 3), np.float32))
    bias = b.constant({"dataType": "float32", "shape": [6]}, np.arange(6, dtype=np.float32))
    y = b.relu(b.conv2d(x, w, padding=[1, 1, 1, 1], bias=bias))
    z = b.averagePool2d(y)
    s = b.softmax(b.reshape(z, [1, 6]), 1)
    return b.build({"s": s, "y": y})


def test_without_webgpu_a_gpu_context_runs_the_cpu_kernels_and_says_why():
    ctx = Context("gpu")
    assert isinstance(ctx.backend, WebGPUBackend) and ctx.backend.active is False
    status = ctx.backend.status()
    assert status["webgpu"] is False and "cpu kernels" in status["reason"]
    g = conv_graph(ctx)
    assert g.plan.gpu is None and ctx.backend.drain() == []
    out = ctx.compute(g, {"x": np.ones((1, 4, 8, 8), np.float32)})
    assert out["s"].shape == (1, 6)
    # The reason JS found is kept.
    assert Context("gpu", options={"webgpu": {"reason": "no adapter"}}).backend.status()["reason"] == "no adapter"


def test_plan_is_plain_data_with_fusion_and_constants():
    ctx = gpu_context()
    g = conv_graph(ctx)
    plan = g.plan.gpu
    assert plan is not None and g.plan.reason is None
    # conv2d + bias + relu is one shader writing the graph output y directly.
    assert dict(plan.ops) == {"conv2d": 1, "relu": 1, "averagePool2d": 1, "reshape": 1, "softmax": 1}
    assert plan.fused == 1 and len(plan.steps) == 4
    kinds = [s["kind"] for s in plan.slots]
    assert kinds.count("input") == 1 and kinds.count("output") == 2 and kinds.count("constant") == 2
    assert plan.slots[plan.inputs["x"]]["bytes"] == 4 * 4 * 8 * 8
    commands = ctx.backend.drain()
    assert [c[0] for c in commands].count("write") == 2  # weights and bias, once, at build()
    sent = next(c[2] for c in commands if c[0] == "plan")
    json.dumps(sent)  # what JS gets is JSON
    assert sent["slots"][plan.inputs["x"]] == -1 and sent["slots"][plan.outputs["s"]] == -2
    assert all(len(step[2]) == 3 for step in sent["steps"])
    conv_wgsl = plan.shaders[plan.steps[0][0]]
    assert "fn act0_(x: f32) -> f32 { return select(x, 0.0, x < 0.0); }" in conv_wgsl
    assert "var acc: f32 = b_[oc];" in conv_wgsl  # bias fused as the accumulator's start


def test_elementwise_chains_fuse_and_temporaries_are_reused():
    ctx = gpu_context()
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [64]})
    y = x
    for _ in range(6):
        y = b.add(b.exp(b.neg(y)), x)
    g = b.build({"y": b.clamp(b.sigmoid(y), minValue=0.25)})
    plan = g.plan.gpu
    # The first neg takes exp as its epilogue, each add the next neg -> exp, the
    # last add sigmoid -> clamp: 7 shaders run for 20 nodes.
    assert len(plan.steps) == 7 and plan.fused == 13
    assert "return act1_(act0_(x));" in plan.shaders[plan.steps[-1][0]]
    temps = [s for s in plan.slots if s["kind"] == "temp"]
    assert len(temps) == 2  # 12 intermediates live in two buffers


def many_batches(b, x):
    """16384 * x^2 through a matmul of 65536 batches: more than one dispatch's z."""
    y = b.reshape(b.expand(b.reshape(x, [1, 4, 1, 1]), [16384, 4, 1, 1]), [65536, 1, 1])
    return b.reduceSum(b.reshape(b.matmul(y, y), [16384, 4]), axes=[0])


@pytest.mark.parametrize("build, reason", [
    # Every op and data type of the limits has a kernel; what remains are the device's limits.
    (many_batches, "matmul: 65536 batches exceed one dispatch"),
])
def test_graphs_without_kernels_go_to_the_cpu_fallback_with_the_reason(build, reason):
    ctx = gpu_context()
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [4]})
    g = b.build({"y": build(b, x)})
    assert g.plan.gpu is None and reason in g.plan.reason
    status = ctx.backend.status()
    assert status["counts"]["graphs_cpu"] == 1 and reason in status["partitions"][0]["reason"]


def test_tensor_residency_and_command_order():
    ctx = gpu_context()
    backend = ctx.backend
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [4]})
    g = b.build({"y": b.abs(x)})
    backend.drain()
    tx = ctx.create_tensor({"dataType": "float32", "shape": [4], "writable": True, "readable": True})
    ty = ctx.create_tensor({"dataType": "float32", "shape": [4], "readable": True})
    ctx.write_tensor(tx, np.array([-1, 2, -3, 4], np.float32))
    ctx.dispatch(g, {"x": tx}, {"y": ty})
    commands = backend.drain()
    assert [c[0] for c in commands] == ["buffer", "buffer", "write", "run"]
    assert commands[3][2] == [tx.data.buffer, ty.data.buffer]
    assert isinstance(ty.data, GpuTensor) and ty.data.array is None  # only the GPU has it now
    assert ctx.device_read(ty) == {"buffer": ty.data.buffer, "bytes": 16}
    assert ctx.device_read(tx) is None  # the host copy of a write is current
    # A GPU result cannot feed a graph on the cpu fallback synchronously.
    b2 = ctx.graph_builder()
    z = b2.input("z", {"dataType": "float32", "shape": [4]})
    g2 = b2.build({"w": many_batches(b2, z)})  # cpu fallback
    tw = ctx.create_tensor({"dataType": "float32", "shape": [4], "readable": True})
    with pytest.raises(NotSupportedError, match="last written by a graph that ran on the GPU"):
        ctx.dispatch(g2, {"z": ty}, {"w": tw})
    # A host result of a cpu-placed graph is uploaded once when a GPU graph reads it.
    ctx.dispatch(g2, {"z": tx}, {"w": tw})
    assert tw.data.array.tolist() == [16384.0, 65536.0, 147456.0, 262144.0] and not tw.data.on_gpu
    b3 = ctx.graph_builder()
    v = b3.input("v", {"dataType": "float32", "shape": [4]})
    g3 = b3.build({"u": b3.neg(v)})
    tu = ctx.create_tensor({"dataType": "float32", "shape": [4], "readable": True})
    backend.drain()
    ctx.dispatch(g3, {"v": tw}, {"u": tu})
    assert [c[0] for c in backend.drain()] == ["write", "run"] and backend.counts["uploads"] == 1
    # Destroying frees the device's buffers and plans.
    buffer, plan_id = ty.data.buffer, g3.plan.id
    ty.destroy()
    g3.destroy()
    assert backend.drain() == [["free", buffer], ["drop", plan_id]]


def test_two_gpu_contexts_share_nothing():
    a, b = gpu_context(), Context("gpu", options={"webgpu": {"token": 8, "adapter": "x"}})
    assert a.backend is not b.backend and a.backend.fallback is not b.backend.fallback
    conv_graph(a)
    assert b.backend.drain() == [] and a.backend.drain() != []


def test_device_limits_bound_the_plan_and_the_tensors():
    ctx = Context("gpu", options={"webgpu": {"token": 9, "adapter": "small",
                                             "limits": {"maxStorageBufferBindingSize": 1024, "maxBufferSize": 2048}}})
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [512]})
    g = b.build({"y": b.relu(x)})
    assert g.plan.gpu is None and "exceeds the device's maxStorageBufferBindingSize (1024)" in g.plan.reason
    small = ctx.create_tensor({"dataType": "float32", "shape": [512], "writable": True})
    big = ctx.create_tensor({"dataType": "float32", "shape": [1024], "writable": True})
    assert small.data.buffer is not None and big.data.buffer is None  # past maxBufferSize: host only


def test_packed_types_are_unpacked_before_and_packed_after_each_node():
    """float16 / int8 / uint8 live packed in their buffers (2 or 4 per u32 word);
    each node computes wide (f32 / i32 / u32) between an unpack and a pack step,
    constants go up wide once, reshape copies packed words, and the logical
    family reads uint8 packed."""
    ctx = gpu_context()
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float16", "shape": [3, 5]})
    c = b.constant({"dataType": "float16", "shape": [5]}, np.arange(5, dtype=np.float16))
    y = b.reshape(b.exp(b.add(x, c)), [15])
    flags = b.greater(b.input("i", {"dataType": "int8", "shape": [7]}), b.constant(
        {"dataType": "int8", "shape": [7]}, np.zeros(7, np.int8)))
    g = b.build({"y": y, "f": b.logicalNot(flags)})
    plan = g.plan.gpu
    assert plan is not None, g.plan.reason
    labels = [label for *_, label in plan.steps]
    texts = [plan.shaders[sh] for sh, *_ in plan.steps]
    # add (exp fused on as its epilogue): unpack x, add, pack; reshape: one word copy;
    # greater: unpack i, compare (uint8 out packed); logicalNot: packed in and out.
    assert len(plan.steps) == 3 + 1 + 2 + 1, labels
    assert labels == ["add"] * 3 + ["reshape"] + ["greater"] * 2 + ["logicalNot"]
    assert sum("fn f16_to_f32_" in t for t in texts) == 1 and sum("fn f32_to_f16_" in t for t in texts) == 1
    assert sum("<< 24u) >> 24u" in t for t in texts) == 1  # int8 sign extension
    assert plan.slots[plan.inputs["x"]]["bytes"] == 32  # 15 halves -> 8 words
    assert plan.slots[plan.inputs["i"]]["bytes"] == 8 and plan.slots[plan.outputs["f"]]["bytes"] == 8
    consts = list(plan.constants.values())
    assert sorted(str(a.dtype) for a in consts) == ["float32", "int32"]  # uploaded wide
    assert consts[0].tolist() == [0, 1, 2, 3, 4] or consts[1].tolist() == [0, 1, 2, 3, 4]


def _conv(ctx, x_shape, w_shape, layout="nhwc", filter_layout="ohwi", constant=True, **options):
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": list(x_shape)})
    desc = {"dataType": "float32", "shape": list(w_shape)}
    w = b.constant(desc, np.arange(np.prod(w_shape), dtype=np.float32).reshape(w_shape)) if constant else b.input("w", desc)
    y = b.conv2d(x, w, inputLayout=layout, filterLayout=filter_layout, **options)
    return b.build({"y": y})


@pytest.mark.parametrize("adapter, x_shape, w_shape, groups, expected", [
    # A real GPU: every group of >= 16 output channels is tiled, pointwise included.
    ("nvidia rtx", (1, 56, 56, 24), (144, 1, 1, 24), 1, "conv2d.tiled"),
    ("nvidia rtx", (1, 55, 55, 16), (64, 3, 3, 16), 1, "conv2d.tiled"),
    ("nvidia rtx", (1, 9, 9, 8), (15, 3, 3, 8), 1, "conv2d.direct"),  # 15 channels: direct
    ("nvidia rtx", (1, 9, 9, 32), (32, 3, 3, 1), 32, "conv2d.direct"),  # depthwise
    # SwiftShader: only spatial filters with K = kh * kw * channels >= 64.
    ("google swiftshader", (1, 56, 56, 24), (144, 1, 1, 24), 1, "conv2d.direct"),
    ("google swiftshader", (1, 55, 55, 16), (64, 3, 3, 16), 1, "conv2d.tiled"),  # K = 144
    ("google swiftshader", (1, 224, 224, 3), (32, 3, 3, 3), 1, "conv2d.direct"),  # K = 27
])
def test_conv2d_kernel_choice_follows_the_adapter(adapter, x_shape, w_shape, groups, expected):
    ctx = Context("gpu", options={"webgpu": {"token": 7, "adapter": adapter}})
    assert ctx.backend.plan_options["emulated"] is ("swiftshader" in adapter)
    g = _conv(ctx, x_shape, w_shape if groups == 1 else (1, 3, 3, 32),
              filter_layout="ohwi" if groups == 1 else "ihwo", groups=groups)
    assert dict(g.plan.gpu.kernels) == {expected: 1}


@pytest.mark.parametrize("choice", ["tiled", "direct"])
def test_conv2d_kernel_can_be_forced_by_the_page(choice):
    options = {"webgpu": {"token": 7, "adapter": "google swiftshader",
                          "limits": {"maxBufferSize": 1 << 28, "plannerOptions": {"conv2d": choice}}}}
    ctx = Context("gpu", options=options)
    assert "plannerOptions" not in ctx.backend.limits and ctx.backend.plan_options["conv2d"] == choice
    g = _conv(ctx, (1, 9, 9, 8), (4, 3, 3, 8))  # "auto" would run this direct (4 channels)
    assert dict(g.plan.gpu.kernels) == {f"conv2d.{choice}": 1}
    # An unknown choice is "auto".
    options["webgpu"]["limits"]["plannerOptions"] = {"conv2d": "fastest"}
    assert Context("gpu", options=options).backend.plan_options["conv2d"] == "auto"


def test_tiled_conv2d_uploads_its_constant_filter_rearranged_and_padded_once():
    ctx = Context("gpu", options={"webgpu": {"token": 7, "adapter": "nvidia"}})
    g = _conv(ctx, (1, 5, 5, 3), (20, 3, 3, 3), layout="nhwc", filter_layout="ohwi")
    plan = g.plan.gpu
    (filt,) = [a for a in plan.constants.values()]  # the OHWI original is not uploaded
    # [groups][K rounded to 16][channels rounded to 32], K = (ky, kx, ci) with ci fastest.
    w = np.arange(20 * 27, dtype=np.float32).reshape(20, 3, 3, 3)
    assert filt.shape == (1, 32, 32)
    np.testing.assert_array_equal(filt[0, :27, :20], w.reshape(20, 27).T)
    assert not filt[0, 27:].any() and not filt[0, :, 20:].any()
    # A filter that is a graph input is read in place.
    g2 = _conv(ctx, (1, 5, 5, 3), (20, 3, 3, 3), constant=False)
    assert g2.plan.gpu.constants == {} and dict(g2.plan.gpu.kernels) == {"conv2d.tiled": 1}


def test_every_listed_type_of_the_element_wise_and_reduction_ops_plans_on_the_gpu():
    """No silent cpu fallback: each one- or two-input op of the gpu context's
    opSupportLimits() (element-wise, reductions, pools, argMin/argMax, ...) plans
    on the GPU for every data type it lists."""
    limits = gpu_context().op_support_limits()
    tried = declined = 0
    for op, entry in sorted(limits.items()):
        if not isinstance(entry, dict):
            continue
        params = [k for k, v in entry.items() if k != "output" and isinstance(v, dict) and "dataTypes" in v]
        if params not in (["a", "b"], ["input"], ["a"]):
            continue
        for dtype in entry[params[0]]["dataTypes"]:
            ctx = gpu_context()
            b = ctx.graph_builder()
            x = b.input("x", {"dataType": dtype, "shape": [1, 1, 2, 2]})
            try:
                y = getattr(b, op)(x, x) if params == ["a", "b"] else getattr(b, op)(x)
            except Exception:  # ops needing more arguments (reshape, slice, ...): covered elsewhere
                continue
            g = b.build({"y": y[0] if isinstance(y, list) else y})
            tried += 1
            declined += g.plan.gpu is None
            assert g.plan.gpu is not None, (op, dtype, g.plan.reason)
    assert tried > 250 and declined == 0, tried  # 275 op/type pairs when written
