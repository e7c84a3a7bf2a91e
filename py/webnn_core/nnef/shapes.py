"""Shape inference and argument validity for every NNEF 1.0 standard operation
(spec chapter 4). Shapes are lists of ints; NNEF tensors are conceptually
infinite-rank with trailing singleton dimensions, so binary operations align
shapes at the *left* (a [1,C] bias broadcasts against [N,C,H,W]).

`infer_operation(op, tensors)` validates the operation's arguments, then sets
the shapes of its result tensors; errors are `NNEFSemanticError`s that name the
operation and the parameter (the caller adds the position).
"""
from __future__ import annotations

from .errors import NNEFSemanticError

CONV_BORDERS = ("constant", "replicate", "reflect", "reflect-even")
WINDOW_BORDERS = ("ignore",) + CONV_BORDERS
UPSAMPLE_METHODS = ("symmetric", "asymmetric", "aligned")
LABEL_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./\\")

UNARY = ("copy", "neg", "rcp", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
         "asinh", "acosh", "atanh", "abs", "sign", "not", "floor", "ceil", "round", "sqr", "sqrt", "rsqr", "rsqrt",
         "log2", "sigmoid", "relu", "leaky_relu", "elu", "selu", "gelu", "silu", "softplus", "softabs", "cast")
BINARY = ("add", "sub", "mul", "div", "pow", "lt", "gt", "le", "ge", "eq", "ne", "and", "or", "min", "max")
REDUCE = ("sum_reduce", "max_reduce", "min_reduce", "argmax_reduce", "argmin_reduce", "all_reduce", "any_reduce",
          "mean_reduce")
POOLS = ("box", "argmax_pool", "max_pool", "avg_pool", "rms_pool", "max_pool_with_index")


class ShapeError(NNEFSemanticError):
    pass


def fail(op, message):
    raise ShapeError(f"operation '{op.name}': {message}")


def broadcast(op, *shapes):
    """Left-aligned broadcasting (spec §4.2.2): missing trailing dims are 1."""
    rank = max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        dims = {s[d] if d < len(s) else 1 for s in shapes}
        dims.discard(1)
        if len(dims) > 1:
            fail(op, "arguments are not broadcast compatible (" + " vs ".join(str(list(s)) for s in shapes) + ")")
        out.append(dims.pop() if dims else 1)
    return out


def volume(shape):
    v = 1
    for d in shape:
        v *= d
    return v


def result_count(name, attribs, inputs, tensors):
    """The number of tensors an array-valued result holds, or None."""
    if name == "split":
        return len(attribs["ratios"])
    if name == "copy_n":
        return attribs["times"]
    if name == "unstack":
        v = inputs["value"]
        shape = tensors[v].shape if isinstance(v, str) else []
        if shape is None:
            return None
        axis = attribs["axis"]
        return shape[axis] if 0 <= axis < len(shape) else 1
    return None


def _shape(value, tensors):
    if isinstance(value, str):
        return tensors[value].shape
    if isinstance(value, list):
        return [_shape(v, tensors) for v in value]
    return []  # a literal stands for a singleton tensor


def _has_unknown(s):
    if s is None:
        return True
    return any(_has_unknown(x) for x in s if x is None or isinstance(x, list))


class PerItem(list):
    """An array result whose items have different shapes (split)."""


def infer_operation(op, tensors, standard=True):
    shapes = {k: _shape(v, tensors) for k, v in op.inputs.items()}
    if not standard or op.name not in RULES or any(_has_unknown(s) for s in shapes.values()):
        return  # custom operations (and what follows them) have unknown shapes
    results = RULES[op.name](op, shapes, op.attribs)
    if len(op.outputs) == 1:
        results = [results]
    for (key, names), shape in zip(op.outputs.items(), results):
        if isinstance(names, list):
            if isinstance(shape, PerItem):
                if len(shape) != len(names):
                    fail(op, f"'{key}' has {len(shape)} results, {len(names)} identifiers are assigned")
                for n, sh in zip(names, shape):
                    tensors[n].shape = list(sh)
            else:
                for n in names:
                    tensors[n].shape = list(shape)
        else:
            tensors[names].shape = list(shape)


# ------------------------------------------------------------------------- helpers
def _check_axes(op, axes, rank, what="axes", unique=True):
    for a in axes:
        if not 0 <= a < rank:
            fail(op, f"'{what}' item {a} is out of range for rank {rank}")
    if unique and len(set(axes)) != len(axes):
        fail(op, f"'{what}' {list(axes)} contains duplicates")


def _check_border(op, border, allowed):
    if border not in allowed:
        fail(op, f"'border' must be one of {', '.join(repr(b) for b in allowed)}, found '{border}'")


def window(op, name, count, attribs, default_size=None):
    """Validated (size, padding|None, stride, dilation) for `count` dimensions."""
    size = list(attribs["size"]) if default_size is None else list(default_size)
    if len(size) != count:
        fail(op, f"expected 'size' of length {count}, found {size}")
    if any(s <= 0 for s in size):
        fail(op, f"'size' items must be positive, found {size}")
    padding = attribs.get("padding", [])
    stride = list(attribs.get("stride", [])) or [1] * count
    dilation = list(attribs.get("dilation", [])) or [1] * count
    if padding and len(padding) != count:
        fail(op, f"expected 'padding' of length {count}, found {list(padding)}")
    if len(stride) != count:
        fail(op, f"expected 'stride' of length {count}, found {stride}")
    if len(dilation) != count:
        fail(op, f"expected 'dilation' of length {count}, found {dilation}")
    if any(s <= 0 for s in stride):
        fail(op, f"'stride' items must be positive, found {stride}")
    if any(d <= 0 for d in dilation):
        fail(op, f"'dilation' items must be positive, found {dilation}")
    return size, ([tuple(p) for p in padding] if padding else None), stride, dilation


def auto_padding(extent, size, stride, dilation):
    """Spec §4.3: pad so that the down-scaled extent is ceil(X/s); extra at the end."""
    fd = (size - 1) * dilation + 1
    out = -(-extent // stride)
    total = max((out - 1) * stride + fd - extent, 0)
    return (total // 2, total - total // 2)


def downscale(op, extent, size, pad, stride, dilation):
    fd = (size - 1) * dilation + 1
    span = pad[0] + extent + pad[1] - fd
    if span < 0:
        fail(op, f"the padded input extent ({pad[0]} + {extent} + {pad[1]}) is smaller than the dilated window ({fd})")
    return span // stride + 1


def upscale(extent, size, pad, stride, dilation):
    fd = (size - 1) * dilation + 1
    return (extent - 1) * stride + fd - (pad[0] + pad[1])


def resolve_padding(op, in_shape, size, padding, stride, dilation):
    if padding is None:
        return [auto_padding(x, f, s, d) for x, f, s, d in zip(in_shape, size, stride, dilation)]
    return padding


def resolve_up_padding(op, in_shape, out_shape, size, padding, stride, dilation):
    """Padding of a reverse (up-scaling) op in the up-scaled space: explicit,
    or automatic for the up-scaled extents (`output_shape`, else x*s)."""
    if padding is not None:
        return padding
    return [auto_padding(X, f, s, d) for X, f, s, d in zip(out_shape, size, stride, dilation)]


# ------------------------------------------------------------------------- rules
def _same(op, s, a):
    return list(s["x"] if "x" in s else s["input"])


def _binary(op, s, a):
    return broadcast(op, s["x"], s["y"])


def _select(op, s, a):
    return broadcast(op, s["condition"], s["true_value"], s["false_value"])


def _clamp(op, s, a):
    out = broadcast(op, s["x"], s["a"], s["b"])
    return out


def _prelu(op, s, a):
    return broadcast(op, s["x"], s["alpha"])


def _introduce(op, s, a):
    shape = list(a["shape"])
    if any(d <= 0 for d in shape):
        fail(op, f"'shape' items must be positive, found {shape}")
    if op.name == "constant":
        n = len(a["value"])
        if n != volume(shape) and n != 1:
            fail(op, f"'value' has {n} items; the shape {shape} needs {volume(shape)} (or 1)")
    if op.name == "variable":
        label = a["label"]
        if not label:
            fail(op, "'label' must not be empty")
        bad = sorted(set(label) - LABEL_CHARS)
        if bad:
            fail(op, f"'label' {label!r} contains characters outside [a-zA-Z0-9_-./\\]: {''.join(bad)!r}")
    return shape


def _conv_like(op, s, a, reverse):
    x, w = s["input"], s["filter"]
    if len(w) != len(x):
        fail(op, f"the rank of 'filter' {w} must equal the rank of 'input' {x}")
    if len(x) < 2:
        fail(op, f"'input' must have rank >= 2, found {x}")
    _check_border(op, a["border"], CONV_BORDERS)
    spatial = len(x) - 2
    size, padding, stride, dilation = window(op, "conv", spatial, a, default_size=w[2:])
    groups = a["groups"]
    if groups < 0:
        fail(op, f"'groups' must be non-negative, found {groups}")
    if not reverse:
        groups = groups or x[1]
        if w[0] % groups:
            fail(op, f"'groups' ({groups}) must divide the filter's batch dimension ({w[0]})")
        if w[1] * groups != x[1]:
            fail(op, f"the filter's channel dimension ({w[1]}) times 'groups' ({groups}) must equal the input "
                     f"channels ({x[1]})")
        out_c = w[0]
    else:
        groups = groups or x[1]
        if w[0] != x[1]:
            fail(op, f"the filter's batch dimension ({w[0]}) must equal the input channels ({x[1]})")
        if w[0] % groups:
            fail(op, f"'groups' ({groups}) must divide the input channels ({w[0]})")
        out_c = w[1] * groups
    b = s["bias"]
    if len(b) > 2 or (len(b) >= 1 and b[0] != 1) or (len(b) == 2 and b[1] not in (1, out_c)) or any(
            d != 1 for d in b[2:]):
        fail(op, f"'bias' must have shape [1, {out_c}] (or be singular), found {b}")
    if not reverse:
        pads = resolve_padding(op, x[2:], size, padding, stride, dilation)
        return [x[0], out_c] + [downscale(op, *t) for t in zip(x[2:], size, pads, stride, dilation)]
    out_shape = list(a.get("output_shape", []))
    if out_shape:
        if len(out_shape) != len(x):
            fail(op, f"'output_shape' must have {len(x)} items, found {out_shape}")
        if out_shape[0] != x[0] or out_shape[1] != out_c:
            fail(op, f"'output_shape' {out_shape} disagrees with the batch ({x[0]}) and channels ({out_c})")
        ups = out_shape[2:]
        pads = resolve_up_padding(op, x[2:], ups, size, padding, stride, dilation)
        for X, xx, f, p, st, d in zip(ups, x[2:], size, pads, stride, dilation):
            if downscale(op, X, f, p, st, d) != xx:
                fail(op, f"'output_shape' {out_shape} does not down-scale to the input shape {x}")
        return out_shape
    if padding is None:
        ups = [xx * st for xx, st in zip(x[2:], stride)]
        return [x[0], out_c] + ups
    outs = [upscale(*t) for t in zip(x[2:], size, padding, stride, dilation)]
    if any(o <= 0 for o in outs):
        fail(op, f"the output extents {outs} are not positive")
    return [x[0], out_c] + outs


def _conv(op, s, a):
    return _conv_like(op, s, a, False)


def _deconv(op, s, a):
    return _conv_like(op, s, a, True)


def _pool(op, s, a, borders=WINDOW_BORDERS):
    x = s["input"]
    _check_border(op, a["border"], borders)
    size, padding, stride, dilation = window(op, op.name, len(x), a)
    pads = resolve_padding(op, x, size, padding, stride, dilation)
    return [downscale(op, *t) for t in zip(x, size, pads, stride, dilation)]


def _pool_with_index(op, s, a):
    out = _pool(op, s, a)
    return [out, out]


def _sample(op, s, a):
    out = _pool(op, {"input": s["input"]}, a)
    if list(s["index"]) != out:
        fail(op, f"'index' shape {s['index']} must equal the output shape {out}")
    return out


def _debox(op, s, a):
    x = s["input"]
    _check_border(op, a["border"], WINDOW_BORDERS)
    size, padding, stride, dilation = window(op, op.name, len(x), a)
    return _up_window(op, x, size, padding, stride, dilation, a.get("output_shape", []))


def _up_window(op, x, size, padding, stride, dilation, out_shape):
    out_shape = list(out_shape)
    if out_shape:
        if len(out_shape) != len(x):
            fail(op, f"'output_shape' must have {len(x)} items, found {out_shape}")
        pads = resolve_up_padding(op, x, out_shape, size, padding, stride, dilation)
        for X, xx, f, p, st, d in zip(out_shape, x, size, pads, stride, dilation):
            if downscale(op, X, f, p, st, d) != xx:
                fail(op, f"'output_shape' {out_shape} does not down-scale to the input shape {x}")
        return out_shape
    if padding is None:
        return [xx * st for xx, st in zip(x, stride)]
    outs = [upscale(*t) for t in zip(x, size, padding, stride, dilation)]
    if any(o <= 0 for o in outs):
        fail(op, f"the output extents {outs} are not positive")
    return outs


def _desample(op, s, a):
    x = s["input"]
    _check_border(op, a["border"], ("constant", "ignore"))
    size, padding, stride, dilation = window(op, op.name, len(x), a)
    if list(s["index"]) != list(x):
        fail(op, f"'index' shape {s['index']} must equal the input shape {x}")
    return _up_window(op, x, size, padding, stride, dilation, a.get("output_shape", []))


def _factor(op, x, a):
    factor = list(a["factor"])
    if len(factor) != len(x) - 2:
        fail(op, f"'factor' must have {len(x) - 2} items (one per spatial dimension), found {factor}")
    if any(f <= 0 for f in factor):
        fail(op, f"'factor' items must be positive, found {factor}")
    return factor


def _downsample(op, s, a):
    x = s["input"]
    factor = _factor(op, x, a)
    for d, f in zip(x[2:], factor):
        if d % f:
            fail(op, f"the input extents {x[2:]} must be divisible by 'factor' {factor}")
    return x[:2] + [d // f for d, f in zip(x[2:], factor)]


def _upsample(op, s, a):
    x = s["input"]
    factor = _factor(op, x, a)
    if op.name == "multilinear_upsample":
        if a["method"] not in UPSAMPLE_METHODS:
            fail(op, f"'method' must be one of {', '.join(repr(m) for m in UPSAMPLE_METHODS)}, found '{a['method']}'")
        _check_border(op, a["border"], CONV_BORDERS)
    return x[:2] + [d * f for d, f in zip(x[2:], factor)]


def _reduce(op, s, a):
    x = s["input"]
    axes = list(a["axes"])
    _check_axes(op, axes, len(x))
    return [1 if i in axes else d for i, d in enumerate(x)]


def _moments(op, s, a):
    out = _reduce(op, s, a)
    return [out, out]


def _reshape(op, s, a):
    x = s["input"]
    shape = list(a["shape"])
    start, count = a["axis_start"], a["axis_count"]
    if not 0 <= start <= len(x):
        fail(op, f"'axis_start' {start} is out of range for rank {len(x)}")
    if count == -1:
        count = len(x) - start
    if count < 0 or start + count > len(x):
        fail(op, f"'axis_count' {a['axis_count']} is out of range for 'axis_start' {start} and rank {len(x)}")
    part = x[start:start + count]
    if sum(1 for d in shape if d == -1) > 1 or any(d < -1 for d in shape):
        fail(op, f"'shape' items must be non-negative, with at most one -1, found {shape}")
    new = []
    for i, d in enumerate(shape):
        if d == 0:
            if i >= len(part):
                fail(op, f"'shape' item {i} is 0 but the input has no corresponding extent")
            new.append(part[i])
        else:
            new.append(d)
    total = volume(part)
    if -1 in new:
        known = volume([d for d in new if d != -1])
        if known == 0 or total % known:
            fail(op, f"'shape' {shape} does not divide the input volume {total}")
        new[new.index(-1)] = total // known
    elif volume(new) != total:
        fail(op, f"'shape' {shape} has volume {volume(new)}, the input (axes {start}..{start + count - 1}) has {total}")
    return x[:start] + new + x[start + count:]


def _squeeze(op, s, a):
    x = s["input"]
    axes = list(a["axes"])
    _check_axes(op, axes, len(x))
    for ax in axes:
        if x[ax] != 1:
            fail(op, f"cannot squeeze axis {ax} of extent {x[ax]}")
    return [d for i, d in enumerate(x) if i not in axes]


def _unsqueeze(op, s, a):
    x = list(s["input"])
    axes = list(a["axes"])
    rank = len(x) + len(axes)
    _check_axes(op, axes, rank)
    out, it = [], iter(x)
    for i in range(rank):
        out.append(1 if i in axes else next(it))
    return out


def _transpose(op, s, a):
    x = s["input"]
    axes = list(a["axes"])
    if len(axes) > len(x):
        fail(op, f"'axes' {axes} is longer than the rank {len(x)}")
    if sorted(axes) != list(range(len(axes))):
        fail(op, f"'axes' {axes} must be a permutation of 0..{len(axes) - 1}")
    return [x[i] for i in axes] + list(x[len(axes):])


def _split(op, s, a):
    x = s["value"]
    axis, ratios = a["axis"], list(a["ratios"])
    _check_axes(op, [axis], len(x), "axis")
    if not ratios or any(r <= 0 for r in ratios):
        fail(op, f"'ratios' must be positive, found {ratios}")
    total = sum(ratios)
    if x[axis] % total:
        fail(op, f"the sum of 'ratios' ({total}) must divide the extent {x[axis]} of axis {axis}")
    unit = x[axis] // total
    return PerItem(x[:axis] + [r * unit] + x[axis + 1:] for r in ratios)


def _concat(op, s, a):
    xs = s["values"]
    if not xs:
        fail(op, "'values' must not be empty")
    axis = a["axis"]
    first = xs[0]
    _check_axes(op, [axis], len(first), "axis")
    total = 0
    for x in xs:
        if len(x) != len(first) or any(x[d] != first[d] for d in range(len(x)) if d != axis):
            fail(op, f"shapes {first} and {x} differ outside axis {axis}")
        total += x[axis]
    return first[:axis] + [total] + first[axis + 1:]


def _stack(op, s, a):
    xs = s["values"]
    if not xs:
        fail(op, "'values' must not be empty")
    axis = a["axis"]
    first = xs[0]
    _check_axes(op, [axis], len(first) + 1, "axis")
    for x in xs:
        if list(x) != list(first):
            fail(op, f"all 'values' must have the same shape, found {first} and {x}")
    return first[:axis] + [len(xs)] + first[axis:]


def _unstack(op, s, a):
    x = s["value"]
    axis = a["axis"]
    _check_axes(op, [axis], len(x), "axis")
    return x[:axis] + x[axis + 1:]


def slice_bounds(op, extent, begin, end, stride, deprecated_end):
    """Normalized (begin, end, stride, count) of one sliced axis (spec §4.5.4)."""
    if stride == 0:
        fail(op, "'stride' items must be non-zero")
    if end == 0 and deprecated_end:
        end = extent
    if begin < 0:
        begin += extent
    if end < 0:
        end += extent
    begin = max(-1, min(begin, extent))
    end = max(-1, min(end, extent))
    if stride > 0:
        ok = 0 <= begin <= end <= extent
    else:
        ok = -1 <= end <= begin <= extent - 1
    if not ok:
        fail(op, f"slice range [{begin}:{end}:{stride}] is invalid for an axis of extent {extent}")
    count = -(-(end - begin) // stride)
    return begin, end, stride, count


def _slice(op, s, a):
    x = list(s["input"])
    axes, begin, end = list(a["axes"]), list(a["begin"]), list(a["end"])
    stride = list(a.get("stride", []))
    if not (len(axes) == len(begin) == len(end)):
        fail(op, "'axes', 'begin' and 'end' must have the same length")
    if stride and len(stride) != len(axes):
        fail(op, "'stride' must be empty or as long as 'axes'")
    _check_axes(op, axes, len(x))
    deprecated = all(st == 1 for st in stride)
    stride = stride or [1] * len(axes)
    out = list(x)
    for ax, b, e, st in zip(axes, begin, end, stride):
        out[ax] = slice_bounds(op, x[ax], b, e, st, deprecated)[3]
    return out


def _pad(op, s, a):
    x = s["input"]
    padding = [tuple(p) for p in a["padding"]]
    _check_border(op, a["border"], CONV_BORDERS)
    if len(padding) != len(x):
        fail(op, f"expected 'padding' of length {len(x)}, found {padding}")
    out = [d + p + q for d, (p, q) in zip(x, padding)]
    if any(o <= 0 for o in out):
        fail(op, f"the padded shape {out} is not positive")
    return out


def _tile(op, s, a):
    x = s["input"]
    repeats = list(a["repeats"])
    if len(repeats) != len(x):
        fail(op, f"'repeats' must have {len(x)} items, found {repeats}")
    if any(r <= 0 for r in repeats):
        fail(op, f"'repeats' items must be positive, found {repeats}")
    return [d * r for d, r in zip(x, repeats)]


def _gather(op, s, a):
    x, idx = s["input"], s["indices"]
    axis = a["axis"]
    _check_axes(op, [axis], len(x), "axis")
    return x[:axis] + list(idx) + x[axis + 1:]


def _matmul(op, s, a):
    A_, B_ = list(s["A"]), list(s["B"])
    if len(A_) < 2 or len(B_) < 2:
        fail(op, f"'A' {A_} and 'B' {B_} must have rank >= 2")
    if len(A_) != len(B_):
        fail(op, f"'A' {A_} and 'B' {B_} must have the same rank")
    m, k = (A_[-1], A_[-2]) if a["transposeA"] else (A_[-2], A_[-1])
    k2, n = (B_[-1], B_[-2]) if a["transposeB"] else (B_[-2], B_[-1])
    if k != k2:
        fail(op, f"inner dimensions of 'A' {A_} and 'B' {B_} disagree ({k} vs {k2})")
    return broadcast(op, A_[:-2], B_[:-2]) + [m, n]


def _linear(op, s, a):
    x, w = list(s["input"]), list(s["filter"])
    if len(x) != 2 or len(w) != 2:
        fail(op, f"'input' {x} and 'filter' {w} must be rank 2")
    if x[1] != w[1]:
        fail(op, f"the input features ({x[1]}) must equal the filter's ({w[1]})")
    return broadcast(op, [x[0], w[0]], s["bias"])


def _separable_conv(op, s, a):
    x, pf, qf = s["input"], s["plane_filter"], s["point_filter"]
    class _Op:
        name = op.name
    a1 = dict(a, groups=0)
    mid = _conv_like(_Op, {"input": x, "filter": pf, "bias": []}, a1, False)
    a2 = {"border": "constant", "padding": [], "stride": [], "dilation": [], "groups": a["groups"]}
    return _conv_like(_Op, {"input": mid, "filter": qf, "bias": s["bias"]}, a2, False)


def _separable_deconv(op, s, a):
    x, pf, qf = s["input"], s["plane_filter"], s["point_filter"]
    class _Op:
        name = op.name
    a1 = {"border": "constant", "padding": [], "stride": [], "dilation": [], "groups": a["groups"], "output_shape": []}
    mid = _conv_like(_Op, {"input": x, "filter": qf, "bias": []}, a1, True)
    a2 = dict(a, groups=0)
    return _conv_like(_Op, {"input": mid, "filter": pf, "bias": s["bias"]}, a2, True)


def _local_norm(op, s, a):
    x = s["input"]
    window(op, op.name, len(x), {"size": a["size"]})
    return list(x)


def _axes_norm(op, s, a):
    x = s["input"]
    _check_axes(op, list(a["axes"]), len(x))
    return list(x)


def _softmax(op, s, a):
    x = s["x"]
    _check_axes(op, list(a["axes"]), len(x))
    return list(x)


def _batch_norm(op, s, a):
    x = s["input"]
    out = broadcast(op, x, s["mean"], s["variance"], s["offset"], s["scale"])
    if out != list(x):
        fail(op, f"'mean', 'variance', 'offset' and 'scale' must broadcast to the input shape {x}")
    return list(x)


def _quantize(op, s, a):
    x = s["x"]
    others = [s[k] for k in ("min", "max") if k in s]
    out = broadcast(op, x, *others)
    if "bits" in a and a["bits"] <= 0:
        fail(op, f"'bits' must be positive, found {a['bits']}")
    return out


def _update(op, s, a):
    if list(s["variable"]) != list(s["value"]):
        fail(op, f"the shape of 'value' {s['value']} must equal the shape of 'variable' {s['variable']}")
    return list(s["variable"])


def _copy_n(op, s, a):
    if a["times"] <= 0:
        fail(op, f"'times' must be positive, found {a['times']}")
    return list(s["x"])


def _add_n(op, s, a):
    xs = s["x"]
    if not xs:
        return []
    return broadcast(op, *xs)


def _roi(op, s, a):
    x, rois, bi = s["input"], s["rois"], s["batch_index"]
    if len(x) < 3:
        fail(op, f"'input' must have rank >= 3, found {x}")
    size = list(a["output_size"])
    if len(size) != len(x) - 2 or any(d <= 0 for d in size):
        fail(op, f"'output_size' must have {len(x) - 2} positive items, found {size}")
    n = rois[0] if rois else 1
    if len(rois) != 2 or rois[1] != 2 * (len(x) - 2):
        fail(op, f"'rois' must have shape [N, {2 * (len(x) - 2)}], found {rois}")
    if not (list(bi) in ([n], [n, 1])):
        fail(op, f"'batch_index' must have shape [{n}] (or [{n}, 1]), found {bi}")
    if "sampling_rate" in a:
        rate = list(a["sampling_rate"])
        if len(rate) != len(size) or any(r <= 0 for r in rate):
            fail(op, f"'sampling_rate' must have {len(size)} positive items, found {rate}")
    if "method" in a and a["method"] not in UPSAMPLE_METHODS:
        fail(op, f"'method' must be one of {', '.join(UPSAMPLE_METHODS)}, found '{a['method']}'")
    if "resize_method" in a and a["resize_method"] not in UPSAMPLE_METHODS:
        fail(op, f"'resize_method' must be one of {', '.join(UPSAMPLE_METHODS)}, found '{a['resize_method']}'")
    return [n, x[1]] + size


RULES = {name: _same for name in UNARY}
RULES.update({name: _binary for name in BINARY})
RULES.update({name: _reduce for name in REDUCE})
RULES.update({
    "external": _introduce, "constant": _introduce, "variable": _introduce,
    "select": _select, "clamp": _clamp, "prelu": _prelu, "softmax": _softmax,
    "conv": _conv, "deconv": _deconv,
    "box": _pool, "argmax_pool": _pool, "max_pool": _pool, "avg_pool": _pool, "rms_pool": _pool,
    "max_pool_with_index": _pool_with_index, "sample": _sample, "debox": _debox, "desample": _desample,
    "nearest_downsample": _downsample, "area_downsample": _downsample,
    "nearest_upsample": _upsample, "multilinear_upsample": _upsample,
    "moments": _moments, "reshape": _reshape, "squeeze": _squeeze, "unsqueeze": _unsqueeze,
    "transpose": _transpose, "split": _split, "concat": _concat, "stack": _stack, "unstack": _unstack,
    "slice": _slice, "pad": _pad, "tile": _tile, "gather": _gather, "matmul": _matmul, "linear": _linear,
    "separable_conv": _separable_conv, "separable_deconv": _separable_deconv,
    "local_response_normalization": _local_norm, "local_mean_normalization": _local_norm,
    "local_variance_normalization": _local_norm, "local_contrast_normalization": _local_norm,
    "l1_normalization": _axes_norm, "l2_normalization": _axes_norm, "batch_normalization": _batch_norm,
    "min_max_linear_quantize": _quantize, "zero_point_linear_quantize": _quantize, "linear_quantize": _quantize,
    "logarithmic_quantize": _quantize, "update": _update, "copy_n": _copy_n, "add_n": _add_n,
    "avg_roi_pool": _roi, "max_roi_pool": _roi, "roi_resample": _roi, "avg_roi_align": _roi, "max_roi_align": _roi,
})


def _separable_mid_shape(x, plane_filter, attribs):
    """Shape after the depth-wise (plane) stage of separable_conv."""
    class _Op:
        name = "separable_conv"
    return _conv_like(_Op, {"input": x, "filter": plane_filter, "bias": []}, dict(attribs, groups=0), False)
