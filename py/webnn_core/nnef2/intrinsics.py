"""Standard-library operators -> WebNN builder calls.

Each mapping receives the evaluated instance (attributes after defaults, and
every symbol the SkriptND definition computes: aligned shapes, paddings,
output extents ...) and the input operands, and returns the output
operand(s). The composer checks every result's shape against the shape the
SkriptND text gives, so a mapping can never silently disagree with the
definition. Operators missing here are inlined from their @compose body or
lowered from @lower where possible (compose.py)."""
from __future__ import annotations

import math

import numpy as np

from ..nnef.errors import NNEFUnsupportedError
from .dtypes import NUMPY_TYPES, WEBNN_TYPES

MAPPING = {}


def op(*names):
    def register(fn):
        for n in names:
            MAPPING[n] = fn
        return fn
    return register


def unsupported(inst, reason):
    return NNEFUnsupportedError(inst.op.qualified, reason)


def reshape(c, x, shape):
    shape = [int(d) for d in shape]
    if list(x.shape) == shape:
        return x
    return c.op("reshape", x, shape)


def scalar(c, value, like):
    """A 0-D constant of `like`'s data type."""
    dtype = {"float32": "real", "int32": "int", "uint8": "bool"}.get(like.dtype, "real")
    return c.const(np.array(value), dtype)


def identity_if_same(c, x, y):
    return c.op("identity", x) if x is y else y


# -- element-wise -----------------------------------------------------------------
UNARY = {"math.iden": "identity", "math.neg": "neg", "math.abs": "abs", "math.sign": "sign", "math.cos": "cos",
         "math.not": "logicalNot", "math.rcp": "reciprocal", "math.sqrt": "sqrt", "math.exp": "exp",
         "math.log": "log", "math.sin": "sin", "math.tan": "tan", "math.tanh": "tanh", "math.floor": "floor",
         "math.ceil": "ceil", "nn.sigmoid": "sigmoid", "nn.softplus": "softplus", "nn.erf": "erf",
         "math.erf": "erf"}


def _unary(name):
    return lambda c, inst, x: c.op(name, x)


for _q, _w in UNARY.items():
    MAPPING[_q] = _unary(_w)


@op("math.sqr")
def _sqr(c, inst, x):
    return c.op("mul", x, x)


@op("math.rsqr")
def _rsqr(c, inst, x):
    return c.op("reciprocal", c.op("mul", x, x))


@op("math.rsqrt")
def _rsqrt(c, inst, x):
    return c.op("reciprocal", c.op("sqrt", x))


@op("math.log2")
def _log2(c, inst, x):
    return c.op("div", c.op("log", x), scalar(c, math.log(2.0), x))


@op("math.cosh", "math.sinh")
def _hyperbolic(c, inst, x):
    e, f = c.op("exp", x), c.op("exp", c.op("neg", x))
    both = c.op("add" if inst.op.name == "cosh" else "sub", e, f)
    return c.op("mul", both, scalar(c, 0.5, x))


@op("math.round")
def _round(c, inst, x):
    # round half away from zero: sign(x) * floor(|x| + 0.5)
    return c.op("mul", c.op("sign", x), c.op("floor", c.op("add", c.op("abs", x), scalar(c, 0.5, x))))


def aligned(c, inst, x, key):
    """Operand x reshaped to its aligned (padded) shape from the definition's @using."""
    return reshape(c, x, inst.env[key])


BINARY = {"math.add": "add", "math.sub": "sub", "math.mul": "mul", "math.div": "div", "math.pow": "pow",
          "math.min": "min", "math.max": "max", "math.lt": "lesser", "math.gt": "greater",
          "math.le": "lesserOrEqual", "math.ge": "greaterOrEqual", "math.eq": "equal", "math.ne": "notEqual",
          "math.and": "logicalAnd", "math.or": "logicalOr", "math.xor": "logicalXor"}


def _binary(name):
    def lower(c, inst, x, y):
        a, b = aligned(c, inst, x, "ex"), aligned(c, inst, y, "ey")
        if name == "div" and inst.types.get("T") == "int":
            raise unsupported(inst, "integer division (WebNN div truncates; SkriptND '/' floors)")
        z = c.op(name, a, b)
        return expand_to(c, z, inst.outputs[0][2])
    return lower


for _q, _w in BINARY.items():
    MAPPING[_q] = _binary(_w)


def expand_to(c, z, shape):
    return z if list(z.shape) == list(shape) else c.op("expand", z, list(shape))


@op("math.mod")
def _mod(c, inst, x, y):
    if inst.types.get("T") == "int":
        raise unsupported(inst, "integer modulo (WebNN has no integer floor division)")
    a, b = aligned(c, inst, x, "ex"), aligned(c, inst, y, "ey")
    return expand_to(c, c.op("sub", a, c.op("mul", c.op("floor", c.op("div", a, b)), b)), inst.outputs[0][2])


@op("math.select")
def _select(c, inst, cond, x, y):
    z = c.op("where", aligned(c, inst, cond, "ec"), aligned(c, inst, x, "ex"), aligned(c, inst, y, "ey"))
    return expand_to(c, z, inst.outputs[0][2])


@op("math.clamp")
def _clamp(c, inst, x, a, b):
    z = c.op("min", c.op("max", aligned(c, inst, x, "ex"), aligned(c, inst, a, "ea")), aligned(c, inst, b, "eb"))
    return expand_to(c, z, inst.outputs[0][2])


@op("math.axpb")
def _axpb(c, inst, a, x, b):
    z = c.op("add", c.op("mul", aligned(c, inst, a, "ea"), aligned(c, inst, x, "ex")), aligned(c, inst, b, "eb"))
    return expand_to(c, z, inst.outputs[0][2])


@op("math.axpby")
def _axpby(c, inst, a, x, b, y):
    ax = c.op("mul", aligned(c, inst, a, "ea"), aligned(c, inst, x, "ex"))
    by = c.op("mul", aligned(c, inst, b, "eb"), aligned(c, inst, y, "ey"))
    return expand_to(c, c.op("add", ax, by), inst.outputs[0][2])


# -- reductions ---------------------------------------------------------------------------
def _axes(inst, key="axes"):
    d = len(inst.inputs[0].shape)
    return sorted({a + d if a < 0 else a for a in inst.attrs[key]})


def _reduce(name):
    def lower(c, inst, x):
        y = c.op(name, x, axes=_axes(inst), keepDimensions=True)
        return reshape(c, y, inst.outputs[0][2])
    return lower


for _q, _w in {"math.min_reduce": "reduceMin", "math.max_reduce": "reduceMax", "math.sum_reduce": "reduceSum",
               "math.prod_reduce": "reduceProduct", "math.mean_reduce": "reduceMean"}.items():
    MAPPING[_q] = _reduce(_w)


@op("math.lp_reduce")
def _lp_reduce(c, inst, x):
    p = inst.attrs["p"]
    if p not in (1.0, 2.0):
        raise unsupported(inst, f"p = {p} (WebNN has reduceL1 and reduceL2)")
    y = c.op("reduceL1" if p == 1.0 else "reduceL2", x, axes=_axes(inst), keepDimensions=True)
    return reshape(c, y, inst.outputs[0][2])


@op("math.any_reduce", "math.all_reduce")
def _logical_reduce(c, inst, x):
    f = c.op("cast", x, "float32")
    y = c.op("reduceMax" if inst.op.name == "any_reduce" else "reduceMin", f, axes=_axes(inst), keepDimensions=True)
    return reshape(c, c.op("cast", y, "uint8"), inst.outputs[0][2])


@op("math.argmax", "math.argmin")
def _arg(c, inst, x):
    d = len(inst.inputs[0].shape)
    axis = inst.attrs["axis"] % d
    y = c.op("argMax" if inst.op.name == "argmax" else "argMin", x, axis, keepDimensions=True,
             outputDataType="int32")
    return reshape(c, y, inst.outputs[0][2])


@op("math.moments")
def _moments(c, inst, x):
    axes = _axes(inst)
    mean = c.op("reduceMean", x, axes=axes, keepDimensions=True)
    diff = c.op("sub", x, mean)
    var = c.op("reduceMean", c.op("mul", diff, diff), axes=axes, keepDimensions=True)
    return [reshape(c, mean, inst.outputs[0][2]), reshape(c, var, inst.outputs[1][2])]


# -- linear algebra ------------------------------------------------------------------------
@op("linalg.matmul")
def _matmul(c, inst, a, b, z=None):
    if inst.attrs["transA"]:
        a = c.op("transpose", a, permutation=_swap_last(a.shape))
    if inst.attrs["transB"]:
        b = c.op("transpose", b, permutation=_swap_last(b.shape))
    y = c.op("matmul", a, b)
    if z is not None:
        y = c.op("add", y, z)
    return reshape(c, y, inst.outputs[0][2])


def _swap_last(shape):
    r = len(shape)
    return list(range(r - 2)) + [r - 1, r - 2]


@op("linalg.dot")
def _dot(c, inst, x, y, b=None):
    z = c.op("reduceSum", c.op("mul", x, y), axes=[0], keepDimensions=False)
    if b is not None:
        z = c.op("add", z, b)
    return reshape(c, z, inst.outputs[0][2])


@op("linalg.outer")
def _outer(c, inst, x, y):
    return c.op("mul", reshape(c, x, [x.shape[0], 1]), reshape(c, y, [1, y.shape[0]]))


@op("nn.linear")
def _linear(c, inst, x, w, b=None):
    if len(x.shape) != 2:
        raise unsupported(inst, f"a rank-{len(x.shape)} input (WebNN gemm is 2-D)")
    opts = {"bTranspose": True}
    if b is not None:
        opts["c"] = b
    return c.op("gemm", x, w, **opts)


# -- layout ------------------------------------------------------------------------------------
@op("layout.reshape", "layout.flatten", "layout.unflatten", "layout.squeeze", "layout.unsqueeze")
def _reshape(c, inst, x):
    return c.op("reshape", x, list(inst.outputs[0][2]))


@op("layout.constant")
def _constant(c, inst):
    dtype = inst.outputs[0][1]
    shape = inst.outputs[0][2]
    value = inst.attrs["value"]
    array = np.array(value, dtype=NUMPY_TYPES[dtype]).reshape(shape)
    return _computed(c, array, dtype)


@op("layout.tensor")
def _uniform(c, inst):
    dtype = inst.outputs[0][1]
    return _computed(c, np.full(inst.outputs[0][2], inst.attrs["value"], dtype=NUMPY_TYPES[dtype]), dtype)


@op("layout.range")
def _range(c, inst):
    dtype = inst.outputs[0][1]
    first, stride = inst.attrs["first"], inst.attrs["stride"]
    n = inst.outputs[0][2][0]
    return _computed(c, np.array([first + k * stride for k in range(n)], dtype=NUMPY_TYPES[dtype]), dtype)


@op("layout.shape")
def _shape(c, inst, x):
    return _computed(c, np.array(list(x.shape), dtype=np.int32), "int")


def _computed(c, array, dtype):
    # a WebNN graph output must be computed by an operation: constants pass through identity
    return c.op("identity", c.const(array, dtype))


@op("layout.cast")
def _cast(c, inst, x):
    return c.op("cast", x, WEBNN_TYPES[inst.outputs[0][1]])


@op("layout.concat")
def _concat(c, inst, xs):
    d = len(xs[0].shape)
    return c.op("concat", list(xs), inst.attrs["axis"] % d)


@op("layout.split")
def _split(c, inst, x):
    d = len(x.shape)
    return [list(c.op("split", x, list(inst.attrs["sizes"]), axis=inst.attrs["axis"] % d))]


@op("layout.stack")
def _stack(c, inst, xs):
    rank = len(xs[0].shape) + 1
    axis = inst.attrs["axis"] % rank
    parts = [reshape(c, x, list(x.shape[:axis]) + [1] + list(x.shape[axis:])) for x in xs]
    return reshape(c, c.op("concat", parts, axis), inst.outputs[0][2])


@op("layout.unstack")
def _unstack(c, inst, x):
    d = len(x.shape)
    axis = inst.attrs["axis"] % d
    parts = c.op("split", x, x.shape[axis], axis=axis)
    return [[reshape(c, p, s) for p, s in zip(parts, inst.outputs[0][2])]]


@op("layout.tile")
def _tile(c, inst, x):
    reps = [1] * len(x.shape)
    for a, r in zip(_axes(inst), inst.attrs["repeats"]):
        reps[a] = r
    return c.op("tile", x, reps)


@op("layout.broadcast")
def _broadcast(c, inst, x):
    return c.op("expand", x, list(inst.outputs[0][2]))


@op("layout.transpose")
def _transpose(c, inst, x):
    # '_perm' (absolute dimensions) reorders the dimensions from 'axis' on; the others stay
    perm, axis = inst.env.get("_perm"), inst.env.get("_axis", 0)
    d = len(x.shape)
    if perm is None or axis is None:
        raise unsupported(inst, "this form of transpose")
    full = list(range(axis)) + list(perm)
    full += [k for k in range(d) if k not in full]
    return c.op("transpose", x, permutation=full)


@op("layout.slice")
def _slice(c, inst, x):
    d = len(x.shape)
    starts, sizes, strides = [0] * d, list(x.shape), [1] * d
    out = inst.outputs[0][2]
    reverse = []
    for a, b, s in zip(_axes(inst), inst.env["_begin"], inst.attrs["stride"]):
        if s < 0:
            # a negative stride walks down from 'begin': reverse the axis and walk up
            reverse.append(a)
            starts[a] = x.shape[a] - 1 - b
            strides[a] = -s
        else:
            starts[a] = b
            strides[a] = s
        sizes[a] = max((out[a] - 1) * strides[a] + 1, 0) if out[a] else 0
    if reverse:
        x = c.op("reverse", x, axes=reverse)
    return c.op("slice", x, starts, sizes, strides=strides)


@op("layout.pad")
def _pad(c, inst, x, value=None):
    before = [int(v) for v in inst.env["before"]]
    after = [int(v) for v in inst.env["after"]]
    mode = {"CONSTANT": "constant", "REPLICATE": "edge", "REFLECT": "reflection"}.get(inst.attrs["method"])
    if mode is None:
        raise unsupported(inst, f"method '{inst.attrs['method']}' (WebNN pad has constant, edge, reflection)")
    opts = {"mode": mode}
    if value is not None:
        if inst.inputs[1].value is None:
            raise unsupported(inst, "a computed padding value (WebNN pad takes a number)")
        opts["value"] = float(np.asarray(inst.inputs[1].value).reshape(()))
    return c.op("pad", x, before, after, **opts)


@op("layout.gather")
def _gather(c, inst, data, index):
    return c.op("gather", data, index, axis=inst.attrs["axis"] % len(data.shape))


# -- neural network -------------------------------------------------------------------------------
LAYOUTS = {"NCX": "nchw", "NXC": "nhwc"}
FILTERS = {"NCX": "oihw", "NXC": "ohwi", "XCN": "hwio", "CXN": "ihwo"}


def _to2d(c, inst, x, d, channels_last, what):
    """1-D spatial -> 2-D with a unit extent; 2-D as is; else unsupported."""
    if d == 2:
        return x
    if d == 1:
        s = list(x.shape)
        return reshape(c, x, s + [1] if not channels_last else s[:2] + [1] + s[2:])
    raise unsupported(inst, f"{d}-D {what} (WebNN has 2-D ones)")


@op("nn.conv")
def _conv(c, inst, x, w, b=None):
    env = inst.env
    d = len(env["ix"])
    fmt, ffmt = inst.attrs["data_format"], inst.attrs["filter_format"]
    if fmt not in LAYOUTS:
        raise unsupported(inst, f"data_format '{fmt}'")
    stride, dilation = list(inst.attrs["stride"]), list(inst.attrs["dilation"])
    begin = list(env["offset"])
    end = [(o - 1) * s + f - i - bg for o, s, f, i, bg in zip(env["ox"], stride, env["fd"], env["ix"], begin)]
    x4 = _to2d(c, inst, x, d, fmt == "NXC", "convolution")
    w4 = _to2d(c, inst, w, d, ffmt in ("NXC",), "convolution") if ffmt in ("NCX", "NXC") else \
        (w if d == 2 else reshape(c, w, [w.shape[0], 1] + list(w.shape[1:])) if ffmt in ("XCN", "CXN") and d == 1
         else w)
    if d == 1:
        begin, end, stride, dilation = begin + [0], end + [0], stride + [1], dilation + [1]
    opts = {"padding": [begin[0], end[0], begin[1], end[1]], "strides": stride, "dilations": dilation,
            "groups": env["g"], "inputLayout": LAYOUTS[fmt], "filterLayout": FILTERS[ffmt]}
    if b is not None:
        opts["bias"] = b
    y = c.op("conv2d", x4, w4, **opts)
    return reshape(c, y, inst.outputs[0][2])


@op("nn.deconv")
def _deconv(c, inst, x, w, b=None):
    env = inst.env
    d = len(env["ix"])
    fmt, ffmt = inst.attrs["data_format"], inst.attrs["filter_format"]
    if fmt != "NCX" or ffmt != "NCX" or d != 2:
        raise unsupported(inst, f"{d}-D deconvolution with data_format '{fmt}', filter_format '{ffmt}' "
                                f"(mapped: 2-D, NCX)")
    begin = list(env["offset"])
    end = [p - o for p, o in zip(env["paddings"], begin)]
    opts = {"padding": [begin[0], end[0], begin[1], end[1]], "strides": list(inst.attrs["stride"]),
            "dilations": list(inst.attrs["dilation"]), "groups": env["g"], "filterLayout": "iohw",
            "outputSizes": list(env["ox"])}
    if b is not None:
        opts["bias"] = b
    return c.op("convTranspose2d", x, w, **opts)


def _pool_params(c, inst, x):
    env = inst.env
    r = len(x.shape)
    axes = _axes(inst)
    if r != 4 or axes != [2, 3]:
        raise unsupported(inst, f"pooling over axes {axes} of a rank-{r} tensor (WebNN pools are 2-D over "
                                f"NCHW's spatial axes)")
    size, stride, dilation = list(inst.attrs["size"]), list(inst.attrs["stride"]), list(inst.attrs["dilation"])
    begin = list(env.get("offset") or [p // 2 for p in env["paddings"]])
    end = [p - b for p, b in zip(env["paddings"], begin)]
    return size, stride, dilation, begin, end


def _window_opts(inst, size, stride, dilation, begin, end):
    opts = {"windowDimensions": size, "strides": stride, "dilations": dilation,
            "padding": [begin[0], end[0], begin[1], end[1]]}
    if inst.attrs.get("ceil_mode"):
        opts["roundingType"] = "ceil"
    return opts


@op("nn.max_pool")
def _max_pool(c, inst, x):
    size, stride, dilation, begin, end = _pool_params(c, inst, x)
    return c.op("maxPool2d", x, **_window_opts(inst, size, stride, dilation, begin, end))


@op("nn.avg_pool", "nn.sum_pool")
def _avg_pool(c, inst, x):
    size, stride, dilation, begin, end = _pool_params(c, inst, x)
    if inst.op.name == "sum_pool" or not inst.attrs.get("ignore_border", True):
        # the window's padded cells count (as zeros): pad explicitly, then pool without padding
        if any(begin + end):
            x = c.op("pad", x, [0, 0] + begin, [0, 0] + end, mode="constant", value=0.0)
        begin, end = [0, 0], [0, 0]
    y = c.op("averagePool2d", x, **_window_opts(inst, size, stride, dilation, begin, end))
    if inst.op.name == "sum_pool":
        y = c.op("mul", y, scalar(c, float(np.prod(size)), x))
    return y


@op("nn.rms_pool", "nn.lp_pool")
def _power_pool(c, inst, x):
    # (mean or sum of |x|^p over the window)^(1/p): rms_pool is p = 2 with the mean
    p = 2.0 if inst.op.name == "rms_pool" else float(inst.attrs["p"])
    size, stride, dilation, begin, end = _pool_params(c, inst, x)
    mean = inst.op.name == "rms_pool" and inst.attrs.get("ignore_border", True)
    xp = c.op("pow", c.op("abs", x), scalar(c, p, x))
    if not mean and any(begin + end):
        xp = c.op("pad", xp, [0, 0] + begin, [0, 0] + end, mode="constant", value=0.0)
        begin, end = [0, 0], [0, 0]
    y = c.op("averagePool2d", xp, **_window_opts(inst, size, stride, dilation, begin, end))
    if inst.op.name == "lp_pool":
        y = c.op("mul", y, scalar(c, float(np.prod(size)), x))
    return c.op("pow", y, scalar(c, 1.0 / p, x))


@op("nn.relu")
def _relu(c, inst, x):
    alpha, top = inst.attrs["alpha"], inst.attrs["max"]
    if alpha is None:
        y = c.op("relu", x) if top is None else c.op("clamp", x, minValue=0.0, maxValue=float(top))
        return y
    y = c.op("leakyRelu", x, alpha=float(alpha))
    if top is not None:
        y = c.op("min", y, scalar(c, float(top), x))
    return y


@op("nn.prelu")
def _prelu(c, inst, x, alpha):
    axis = inst.attrs["axis"] % len(x.shape)
    shape = [1] * len(x.shape)
    if len(alpha.shape) == 1:
        shape[axis] = alpha.shape[0]
        alpha = reshape(c, alpha, shape)
    return c.op("prelu", x, alpha)


@op("nn.thresholded_relu")
def _thresholded_relu(c, inst, x):
    keep = c.op("greater", x, scalar(c, float(inst.attrs["theta"]), x))
    return c.op("where", keep, x, scalar(c, 0.0, x))


@op("nn.gelu")
def _gelu(c, inst, x):
    mode = inst.env.get("approximation") or inst.attrs.get("approximate")
    if mode in (None, "EXACT", "NONE"):
        return c.op("gelu", x)
    if mode == "SIGMOID":
        return c.op("mul", x, c.op("sigmoid", c.op("mul", x, scalar(c, 1.702, x))))
    if mode == "TANH":
        cube = c.op("mul", c.op("mul", x, x), x)
        inner = c.op("mul", c.op("add", x, c.op("mul", cube, scalar(c, 0.044715, x))),
                     scalar(c, math.sqrt(2.0 / math.pi), x))
        return c.op("mul", c.op("mul", x, scalar(c, 0.5, x)), c.op("add", c.op("tanh", inner), scalar(c, 1.0, x)))
    raise unsupported(inst, f"approximation '{mode}'")


@op("nn.softmax")
def _softmax(c, inst, x):
    axes = _axes(inst)
    if len(axes) == 1:
        return c.op("softmax", x, axes[0])
    m = c.op("reduceMax", x, axes=axes, keepDimensions=True)
    e = c.op("exp", c.op("sub", x, m))
    return c.op("div", e, c.op("reduceSum", e, axes=axes, keepDimensions=True))


@op("nn.batch_norm")
def _batch_norm(c, inst, x, mean, variance, bias=None, scale=None):
    opts = {"axis": inst.env["align"], "epsilon": float(inst.attrs["epsilon"])}
    if scale is not None:
        opts["scale"] = scale
    if bias is not None:
        opts["bias"] = bias
    return c.op("batchNormalization", x, mean, variance, **opts)


@op("nn.elu")
def _elu(c, inst, x):
    return c.op("elu", x, alpha=float(inst.attrs.get("alpha", 1.0)))


@op("nn.silu")
def _silu(c, inst, x):
    return c.op("mul", x, c.op("sigmoid", x))


# -- image ----------------------------------------------------------------------------------------------
@op("image.nearest_upsample")
def _nearest_upsample(c, inst, x):
    axes = _axes(inst)
    factor = list(inst.attrs["factor"])
    keep = [(a, f) for a, f in zip(axes, factor) if f != 1]
    if not keep:
        return c.op("identity", x)
    if len(keep) > 2:
        raise unsupported(inst, "upsampling along more than two axes (WebNN resample2d is 2-D)")
    ax = [a for a, _ in keep]
    scales = [float(f) for _, f in keep]
    if len(ax) == 1:
        ax.append(ax[0] + 1 if ax[0] + 1 < len(x.shape) else ax[0] - 1)
        scales.append(1.0)
        if ax[1] < ax[0]:
            ax.reverse()
            scales.reverse()
    return c.op("resample2d", x, mode="nearest-neighbor", scales=scales, axes=ax)


@op("image.nearest_downsample")
def _nearest_downsample(c, inst, x):
    d = len(x.shape)
    strides = [1] * d
    for a, f in zip(_axes(inst), inst.attrs["factor"]):
        strides[a] = f
    out = inst.outputs[0][2]
    sizes = [max((o - 1) * s + 1, 0) for o, s in zip(out, strides)]
    return c.op("slice", x, [0] * d, sizes, strides=strides)


# -- quantization (fake quantization: quantize, then dequantize, as the definitions' @lower) ------------
def _per_channel(c, inst, x, values, dtype="real"):
    """A per-channel attribute as a constant broadcasting along channel_axis."""
    axis = inst.attrs["channel_axis"] % len(x.shape)
    shape = [1] * len(x.shape)
    if len(set(values)) == 1:
        return c.const(np.array(values[0]), dtype)
    shape[axis] = len(values)
    return c.const(np.array(values).reshape(shape), dtype)


def _round_half_away(c, x):
    return c.op("mul", c.op("sign", x), c.op("floor", c.op("add", c.op("abs", x), scalar(c, 0.5, x))))


@op("quant.zero_point_linear_quantize")
def _zero_point_quantize(c, inst, x):
    zp = _per_channel(c, inst, x, [float(v) for v in inst.attrs["zero_point"]])
    sc = _per_channel(c, inst, x, [float(v) for v in inst.attrs["scale"]])
    lo, hi = float(inst.env["m"]), float(inst.env["r"])
    q = c.op("add", _round_half_away(c, c.op("div", x, sc)), zp)
    q = c.op("min", c.op("max", q, scalar(c, lo, x)), scalar(c, hi, x))
    return c.op("mul", c.op("sub", q, zp), sc)


@op("quant.min_max_linear_quantize")
def _min_max_quantize(c, inst, x):
    mn = _per_channel(c, inst, x, [float(v) for v in inst.attrs["min"]])
    mx = _per_channel(c, inst, x, [float(v) for v in inst.attrs["max"]])
    r, p = float(inst.env["r"]), float(inst.env["p"])
    sc = c.op("sub", mx, mn)
    clamped = c.op("min", c.op("max", x, mn), mx)
    q = c.op("sub", _round_half_away(c, c.op("mul", c.op("div", c.op("sub", clamped, mn), sc), scalar(c, r, x))),
             scalar(c, p, x))
    return c.op("add", c.op("mul", c.op("div", c.op("add", q, scalar(c, p, x)), scalar(c, r, x)), sc), mn)
