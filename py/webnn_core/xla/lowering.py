"""XLA semantics as compositions of public WebNN graph-builder calls.

Shared by the XLA builder (`builder.py`) and the StableHLO importer
(`stablehlo.py`). Each function takes the WebNN `GraphBuilder` first and plain
Python/numpy values for everything XLA fixes at build time. The recipe numbers
(R3, R5, ...) are those of the XLA digest (docs/xla.md repeats them).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .. import dtypes
from .errors import NotExpressibleError, XlaTypeError

# XLA / StableHLO element types -> WebNN data types. PRED (i1) is uint8 0/1.
ELEMENT_TYPES = {
    "pred": "uint8", "i1": "uint8",
    "s8": "int8", "i8": "int8", "u8": "uint8", "ui8": "uint8",
    "s32": "int32", "i32": "int32", "u32": "uint32", "ui32": "uint32",
    "s64": "int64", "i64": "int64", "u64": "uint64", "ui64": "uint64",
    "f16": "float16", "f32": "float32",
}
# Element types XLA has and WebNN lacks.
MISSING_TYPES = ("f64", "bf16", "s16", "i16", "u16", "ui16", "s4", "u4", "i4", "ui4", "c64", "c128",
                 "complex", "f8E4M3FN", "f8E5M2", "tuple", "token")

# The reductions a recognised two-argument computation lowers to.
REDUCERS = {"add": "reduceSum", "mul": "reduceProduct", "max": "reduceMax", "min": "reduceMin",
            "and": "reduceMin", "or": "reduceMax"}
COMBINE = {"add": "add", "mul": "mul", "max": "max", "min": "min", "and": "min", "or": "max"}
MAX_UNROLLED_WINDOW = 256


def webnn_type(element_type: str, op: str = "") -> str:
    t = ELEMENT_TYPES.get(element_type)
    if t is None:
        raise NotExpressibleError(op or "type", f"element type {element_type} has no WebNN data type "
                                  "(WebNN has float32/16, int8/32/64, uint8/32/64)")
    return t


def identity_of(kind: str, dtype: str):
    """The neutral element of a reduction kind for a WebNN dtype."""
    if kind == "add" or kind == "or":
        return 0
    if kind == "mul" or kind == "and":
        return 1
    info = np.finfo if dtype.startswith("float") else np.iinfo
    if kind == "max":
        return -math.inf if dtype.startswith("float") else int(info(dtypes.numpy_dtype(dtype)).min)
    return math.inf if dtype.startswith("float") else int(info(dtypes.numpy_dtype(dtype)).max)


# ----------------------------------------------------------------- basics
def const(b, value, dtype: str):
    arr = np.asarray(value, dtype=dtypes.numpy_dtype(dtype))
    return b.constant({"dataType": dtype, "shape": list(arr.shape)}, arr)


def reshape(b, x, shape):
    shape = tuple(int(d) for d in shape)
    return x if tuple(x.shape) == shape else b.reshape(x, list(shape))


def transpose(b, x, perm):
    perm = [int(p) for p in perm]
    return x if perm == list(range(len(perm))) else b.transpose(x, permutation=perm)


def broadcast_in_dim(b, x, shape, dims):
    """StableHLO broadcast_in_dim / XLA R2: operand dim i goes to result dim dims[i]."""
    shape, dims = tuple(shape), list(dims)
    if len(dims) != len(x.shape) or len(set(dims)) != len(dims) or any(d < 0 or d >= len(shape) for d in dims):
        raise XlaTypeError(f"broadcast_in_dim: dims {dims} do not map rank {len(x.shape)} into rank {len(shape)}")
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise XlaTypeError(f"broadcast_in_dim: operand dim {i} (size {x.shape[i]}) cannot become size {shape[d]}")
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    x = transpose(b, x, order)
    sorted_dims = sorted(dims)
    full = [1] * len(shape)
    for pos, d in enumerate(sorted_dims):
        full[d] = x.shape[pos]
    x = reshape(b, x, full)
    return x if tuple(full) == shape else b.expand(x, list(shape))


def to_pred(b, x):
    """R16: nonzero -> 1 (never cast(x, uint8): 0.5 or 256 would become 0)."""
    return b.notEqual(x, const(b, 0, x.dtype))


def convert(b, x, to: str, *, from_pred: bool = False, to_pred_: bool = False):
    if to_pred_:
        return to_pred(b, x) if not from_pred else x
    if from_pred or x.dtype != to:
        return b.cast(x, to) if x.dtype != to else b.identity(x)
    return x


# ----------------------------------------------------------------- data movement
def np_general_pad(arr, value, low, high, interior):
    """numpy general pad (used for masks of runtime pad values)."""
    out = arr
    for d, (lo, hi, it) in enumerate(zip(low, high, interior)):
        n = out.shape[d]
        if it and n > 1:
            shape = list(out.shape)
            shape[d] = n + (n - 1) * it
            grown = np.full(shape, value, dtype=out.dtype)
            index = [slice(None)] * out.ndim
            index[d] = slice(None, None, it + 1)
            grown[tuple(index)] = out
            out = grown
        width = [(0, 0)] * out.ndim
        width[d] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, width, constant_values=value)
        index = [slice(None)] * out.ndim
        index[d] = slice(max(-lo, 0), out.shape[d] - max(-hi, 0))
        out = out[tuple(index)]
    return out


def pad(b, x, low, high, interior, value=0, value_operand=None):
    """R3: XLA Pad. Negative edges crop, interior padding goes between elements.
    `value` is the build-time fill; a runtime `value_operand` is applied through
    a constant 0/1 mask."""
    rank = len(x.shape)
    low, high, interior = list(low), list(high), list(interior or [0] * rank)
    if not (len(low) == len(high) == len(interior) == rank):
        raise XlaTypeError(f"pad: the padding config has {len(low)} entries, the operand rank is {rank}")
    if any(i < 0 for i in interior):
        raise XlaTypeError("pad: interior padding must be >= 0")
    out_shape = []
    for n, lo, hi, it in zip(x.shape, low, high, interior):
        size = lo + hi + n + max(n - 1, 0) * it
        if size < 1:
            raise XlaTypeError(f"pad: dimension of size {n} with ({lo}, {hi}, {it}) would be empty")
        out_shape.append(size)
    if rank == 0 or (not any(low) and not any(high) and not any(interior)):
        return x
    if value_operand is not None:
        padded = pad(b, x, low, high, interior, 0)
        mask = np_general_pad(np.ones(x.shape, np.uint8), 0, low, high, interior)
        fill = b.expand(reshape(b, value_operand, [1] * rank), out_shape) if rank else value_operand
        return b.where(const(b, mask, "uint8"), padded, fill)
    for d in range(rank):
        n, it = x.shape[d], interior[d]
        if it and n > 1:
            shape = list(x.shape)
            x = reshape(b, x, shape[:d + 1] + [1] + shape[d + 1:])
            begin, end = [0] * (rank + 1), [0] * (rank + 1)
            end[d + 1] = it
            x = b.pad(x, begin, end, mode="constant", value=value)
            x = reshape(b, x, shape[:d] + [n * (1 + it)] + shape[d + 1:])
            sizes = list(x.shape)
            sizes[d] = n + (n - 1) * it
            x = b.slice(x, [0] * rank, sizes)
    begin = [max(v, 0) for v in low]
    end = [max(v, 0) for v in high]
    if any(begin) or any(end):
        x = b.pad(x, begin, end, mode="constant", value=value)
    crop_lo = [max(-v, 0) for v in low]
    crop_hi = [max(-v, 0) for v in high]
    if any(crop_lo) or any(crop_hi):
        x = b.slice(x, crop_lo, [s - lo - hi for s, lo, hi in zip(x.shape, crop_lo, crop_hi)])
    return x


def slice_(b, x, start, limit, strides=None):
    """XLA Slice: [start, limit) with strides; never empty."""
    rank = len(x.shape)
    strides = list(strides or [1] * rank)
    if not (len(start) == len(limit) == len(strides) == rank):
        raise XlaTypeError(f"slice: start/limit/strides must have {rank} entries")
    sizes = []
    for d in range(rank):
        if not (0 <= start[d] < limit[d] <= x.shape[d]) or strides[d] < 1:
            raise XlaTypeError(f"slice: dim {d}: [{start[d]}, {limit[d]}) step {strides[d]} is not a "
                               f"non-empty range inside size {x.shape[d]}")
        sizes.append(-(-(limit[d] - start[d]) // strides[d]))
    if list(start) == [0] * rank and sizes == list(x.shape):
        return x
    if all(s == 1 for s in strides):
        return b.slice(x, list(start), sizes)
    # WebNN's sizes are the extent read from the input; the output has ceil(size / stride)
    return b.slice(x, list(start), [lim - st for st, lim in zip(start, limit)], strides=strides)


def concatenate(b, xs, dim):
    if not xs:
        raise XlaTypeError("concatenate: at least one operand is required")
    rank = len(xs[0].shape)
    if rank == 0 or not 0 <= dim < rank:
        raise XlaTypeError(f"concatenate: dimension {dim} is not in [0, {rank}) (the operand rank)")
    return xs[0] if len(xs) == 1 else b.concat(list(xs), dim)


def _scalar_index(b, s, dtype="int32"):
    s = reshape(b, s, [])
    return s if s.dtype == dtype else b.cast(s, dtype)


def dynamic_slice(b, x, starts, sizes):
    """R6: clamp each runtime start so the window fits, then gather iota + start."""
    if len(starts) != len(x.shape) or len(sizes) != len(x.shape):
        raise XlaTypeError(f"dynamic_slice: need {len(x.shape)} start indices and slice sizes")
    for d, (n, size) in enumerate(zip(x.shape, sizes)):
        if not 1 <= size <= n:
            raise XlaTypeError(f"dynamic_slice: slice size {size} of dim {d} is not in [1, {n}]")
        if size == n:
            continue
        s = b.clamp(_scalar_index(b, starts[d]), minValue=0, maxValue=n - size)
        idx = b.add(const(b, np.arange(size, dtype=np.int32), "int32"), s)
        x = b.gather(x, idx, axis=d)
    return x


def dynamic_update_slice(b, x, update, starts):
    """R7: writes `update` into `x` at runtime starts (clamped so it fits)."""
    rank = len(x.shape)
    if len(update.shape) != rank or len(starts) != rank:
        raise XlaTypeError("dynamic_update_slice: update rank and start count must equal the operand rank")
    if any(u > n for u, n in zip(update.shape, x.shape)):
        raise XlaTypeError(f"dynamic_update_slice: update {list(update.shape)} does not fit in {list(x.shape)}")
    if update.dtype != x.dtype:
        raise XlaTypeError("dynamic_update_slice: update and operand element types differ")
    g, mask = update, None
    for d in range(rank):
        n, u = x.shape[d], update.shape[d]
        s = b.clamp(_scalar_index(b, starts[d]), minValue=0, maxValue=n - u)
        rel = b.sub(const(b, np.arange(n, dtype=np.int32), "int32"), s)
        inside = b.logicalAnd(b.greaterOrEqual(rel, const(b, 0, "int32")), b.lesser(rel, const(b, u, "int32")))
        g = b.gather(g, b.clamp(rel, minValue=0, maxValue=u - 1), axis=d)
        shape = [1] * rank
        shape[d] = n
        inside = reshape(b, inside, shape)
        mask = inside if mask is None else b.logicalAnd(mask, inside)
    if mask is None:
        return update
    return b.where(b.expand(mask, list(x.shape)), g, x)


def reverse(b, x, dims):
    dims = sorted(set(int(d) for d in dims))
    if any(not 0 <= d < len(x.shape) for d in dims):
        raise XlaTypeError(f"reverse: dimensions {dims} out of range for rank {len(x.shape)}")
    dims = [d for d in dims if x.shape[d] > 1]
    return b.reverse(x, axes=dims) if dims else x


def iota(shape, dim, dtype):
    arr = np.arange(shape[dim]).reshape([-1 if i == dim else 1 for i in range(len(shape))])
    return np.broadcast_to(arr, shape).astype(dtypes.numpy_dtype(dtype))


# ----------------------------------------------------------------- arithmetic
def rem(b, x, y):
    """R8: C fmod; the result takes the dividend's sign."""
    if x.dtype.startswith("float"):
        q = b.div(x, y)
        t = b.where(b.lesser(q, const(b, 0, x.dtype)), b.ceil(q), b.floor(q))
        return b.sub(x, b.mul(y, t))
    return b.sub(x, b.mul(y, b.div(x, y)))  # the core's integer div truncates toward zero


def round_nearest_even(b, x):
    r = b.floor(b.add(x, const(b, 0.5, x.dtype)))
    tie = b.equal(b.sub(r, x), const(b, 0.5, x.dtype))
    half = b.mul(r, const(b, 0.5, x.dtype))
    odd = b.notEqual(b.floor(half), half)
    return b.where(b.logicalAnd(tie, odd), b.sub(r, const(b, 1, x.dtype)), r)


def round_nearest_afz(b, x):
    r = b.floor(b.add(b.abs(x), const(b, 0.5, x.dtype)))
    return b.where(b.lesser(x, const(b, 0, x.dtype)), b.neg(r), r)


def is_finite(b, x):
    """R12: x - x is 0 exactly for finite x (NaN for inf and NaN)."""
    return b.equal(b.sub(x, x), const(b, 0, x.dtype))


def clamp(b, lo, x, hi, lo_value=None, hi_value=None):
    """XLA Clamp(min, operand, max) = min(max(x, lo), hi). WebNN clamp only for
    build-time scalar bounds with lo <= hi."""
    if lo_value is not None and hi_value is not None and np.ndim(lo_value) == 0 and np.ndim(hi_value) == 0 \
            and lo_value <= hi_value:
        return b.clamp(x, minValue=float(lo_value) if x.dtype.startswith("float") else int(lo_value),
                       maxValue=float(hi_value) if x.dtype.startswith("float") else int(hi_value))
    return b.min(b.max(x, lo), hi)


# ----------------------------------------------------------------- dot / conv
def dot_general(b, lhs, rhs, lhs_batch, rhs_batch, lhs_contract, rhs_contract):
    """DotGeneral: transpose both sides to [batch.., M, K] x [batch.., K, N], matmul, reshape.
    Integers: R13 (broadcast multiply + reduceSum)."""
    lr, rr = len(lhs.shape), len(rhs.shape)
    lb, rb, lc, rc = map(list, (lhs_batch, rhs_batch, lhs_contract, rhs_contract))
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise XlaTypeError("dot_general: batching and contracting dimension lists must pair up")
    for a, c in zip(lb + lc, rb + rc):
        if lhs.shape[a] != rhs.shape[c]:
            raise XlaTypeError(f"dot_general: lhs dim {a} (size {lhs.shape[a]}) and rhs dim {c} "
                               f"(size {rhs.shape[c]}) must match")
    lf = [d for d in range(lr) if d not in lb and d not in lc]
    rf = [d for d in range(rr) if d not in rb and d not in rc]
    batch = [lhs.shape[d] for d in lb]
    m = int(np.prod([lhs.shape[d] for d in lf], dtype=np.int64))
    n = int(np.prod([rhs.shape[d] for d in rf], dtype=np.int64))
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    a = reshape(b, transpose(b, lhs, lb + lf + lc), batch + [m, k])
    c = reshape(b, transpose(b, rhs, rb + rc + rf), batch + [k, n])
    if lhs.dtype.startswith("float"):
        out = b.matmul(a, c)
    else:
        prod = b.mul(reshape(b, a, batch + [m, k, 1]), reshape(b, c, batch + [1, k, n]))
        out = b.reduceSum(prod, axes=[len(batch) + 1])
    return reshape(b, out, batch + [lhs.shape[d] for d in lf] + [rhs.shape[d] for d in rf])


def dot(b, lhs, rhs):
    """XLA Dot: vec.vec -> scalar, mat.vec -> vec, mat.mat -> mat (R13)."""
    if len(lhs.shape) not in (1, 2) or len(rhs.shape) not in (1, 2):
        raise XlaTypeError("Dot: operands must have rank 1 or 2")
    return dot_general(b, lhs, rhs, [], [], [len(lhs.shape) - 1], [0])


def convolution(b, lhs, rhs, *, input_dims, kernel_dims, output_dims, strides=None, padding=None,
                lhs_dilation=None, rhs_dilation=None, feature_group_count=1, batch_group_count=1,
                reverse_=None, op="convolution"):
    """R10. `input_dims` = (batch, feature, [spatial...]), `kernel_dims` =
    (out feature, in feature, [spatial...]), `output_dims` = (batch, feature,
    [spatial...]): the positions of each role in the operand shapes."""
    (ib, if_, isp), (ko, ki, ksp), (ob, of, osp) = input_dims, kernel_dims, output_dims
    nsp = len(isp)
    if batch_group_count != 1:
        raise NotExpressibleError(op, "batch_group_count > 1 has no WebNN equivalent (conv2d has groups only)")
    if nsp not in (1, 2):
        raise NotExpressibleError(op, f"{nsp} spatial dimensions; WebNN convolves exactly 2 (1 is reshaped to 2)")
    if not lhs.dtype.startswith("float"):
        raise NotExpressibleError(op, f"element type {lhs.dtype}: WebNN conv2d takes float32/float16 only")
    strides = list(strides or [1] * nsp)
    padding = [list(p) for p in (padding or [[0, 0]] * nsp)]
    lhs_dilation = list(lhs_dilation or [1] * nsp)
    rhs_dilation = list(rhs_dilation or [1] * nsp)
    x = transpose(b, lhs, [ib, if_] + list(isp))
    w = transpose(b, rhs, [ko, ki] + list(ksp))
    if reverse_ and any(reverse_):
        w = reverse(b, w, [2 + i for i, r in enumerate(reverse_) if r])
    if any(d > 1 for d in lhs_dilation):
        x = pad(b, x, [0] * (2 + nsp), [0] * (2 + nsp), [0, 0] + [d - 1 for d in lhs_dilation], 0)
    lo = [p[0] for p in padding]
    hi = [p[1] for p in padding]
    if any(v < 0 for v in lo + hi):  # negative padding crops the input
        x = pad(b, x, [0, 0] + [min(v, 0) for v in lo], [0, 0] + [min(v, 0) for v in hi], None, 0)
        lo, hi = [max(v, 0) for v in lo], [max(v, 0) for v in hi]
    if nsp == 1:
        x = reshape(b, x, list(x.shape[:2]) + [1, x.shape[2]])
        w = reshape(b, w, list(w.shape[:2]) + [1, w.shape[2]])
        strides, rhs_dilation, lo, hi = [1] + strides, [1] + rhs_dilation, [0] + lo, [0] + hi
    y = b.conv2d(x, w, padding=[lo[0], hi[0], lo[1], hi[1]], strides=strides, dilations=rhs_dilation,
                 groups=int(feature_group_count))
    if nsp == 1:
        y = reshape(b, y, [y.shape[0], y.shape[1], y.shape[3]])
    # y is [batch, feature, spatial...]; place each at its output position.
    perm = [0] * (2 + nsp)
    perm[ob], perm[of] = 0, 1
    for i, pos in enumerate(osp):
        perm[pos] = 2 + i
    return transpose(b, y, perm)


# ----------------------------------------------------------------- reductions
def reduce(b, x, kind, dims, init_value=None, init_operand=None, op="reduce"):
    """R17: a recognised computation -> reduceX over dims; the init is combined
    once unless it is the identity (XLA may apply it any number of times)."""
    if kind not in REDUCERS:
        raise NotExpressibleError(op, f"the computation is {kind!r}; only add, mul, max, min, and, or are recognised")
    dims = sorted(int(d) for d in dims)
    if any(not 0 <= d < len(x.shape) for d in dims):
        raise XlaTypeError(f"{op}: dimensions {dims} out of range for rank {len(x.shape)}")
    y = getattr(b, REDUCERS[kind])(x, axes=dims) if dims else b.identity(x)
    if init_operand is not None and (init_value is None or init_value != identity_of(kind, x.dtype)):
        y = getattr(b, COMBINE[kind])(y, init_operand)
    return y


def same_padding(sizes, window, strides, dilations=None):
    """XLA SAME: the output keeps ceil(n / stride); the odd cell goes high."""
    dilations = dilations or [1] * len(sizes)
    pads = []
    for n, k, s, d in zip(sizes, window, strides, dilations):
        eff = (k - 1) * d + 1
        total = max((-(-n // s) - 1) * s + eff - n, 0)
        pads.append([total // 2, total - total // 2])
    return pads


def reduce_window(b, x, kind, window, strides=None, padding=None, base_dilations=None, window_dilations=None,
                  init_value=None, init_operand=None, op="reduce_window"):
    """R9. Max over two dims of a 4-D float tensor with a -inf init is maxPool2d;
    anything else recognised is unrolled over the window offsets."""
    rank = len(x.shape)
    if kind not in REDUCERS:
        raise NotExpressibleError(op, f"the computation is {kind!r}; only add, mul, max, min, and, or are recognised")
    window = list(window)
    strides = list(strides or [1] * rank)
    base = list(base_dilations or [1] * rank)
    wdil = list(window_dilations or [1] * rank)
    pads = [list(p) for p in (padding or [[0, 0]] * rank)]
    if not (len(window) == len(strides) == len(base) == len(wdil) == len(pads) == rank):
        raise XlaTypeError(f"{op}: window attributes must have {rank} entries")
    fill = init_value if init_value is not None else identity_of(kind, x.dtype)
    if any(d > 1 for d in base):
        if init_value is None:
            raise NotExpressibleError(op, "base dilation with a runtime init value")
        x = pad(b, x, [0] * rank, [0] * rank, [d - 1 for d in base], fill)
    active = [d for d in range(rank) if window[d] > 1 or strides[d] > 1 or pads[d] != [0, 0] or wdil[d] > 1]
    identity = identity_of(kind, x.dtype)
    if (kind == "max" and x.dtype.startswith("float") and rank == 4 and len(active) <= 2
            and all(p >= 0 for d in active for p in pads[d])):
        # the pooled pair: the active dims, topped up with inactive (size-1 window) ones
        sp = sorted(active + [d for d in reversed(range(rank)) if d not in active][:2 - len(active)])
        rest = [d for d in range(rank) if d not in sp]
        perm = rest + sp
        y = b.maxPool2d(transpose(b, x, perm), windowDimensions=[window[d] for d in sp],
                        strides=[strides[d] for d in sp], dilations=[wdil[d] for d in sp],
                        padding=[pads[sp[0]][0], pads[sp[0]][1], pads[sp[1]][0], pads[sp[1]][1]])
        y = transpose(b, y, list(np.argsort(perm)))
    else:
        offsets = int(np.prod(window))
        if offsets > MAX_UNROLLED_WINDOW:
            raise NotExpressibleError(op, f"a {window} window ({offsets} offsets) is too large to unroll "
                                      f"(limit {MAX_UNROLLED_WINDOW}) and matches no WebNN pooling op")
        if init_value is None and any(p != [0, 0] for p in pads):
            raise NotExpressibleError(op, "padding with a runtime init value")
        x = pad(b, x, [p[0] for p in pads], [p[1] for p in pads], None, fill)
        out = []
        for d in range(rank):
            eff = (window[d] - 1) * wdil[d] + 1
            if x.shape[d] < eff:
                raise XlaTypeError(f"{op}: the window ({eff}) is larger than padded dim {d} ({x.shape[d]})")
            out.append((x.shape[d] - eff) // strides[d] + 1)
        y = None
        for offset in itertools.product(*(range(w) for w in window)):
            start = [o * wdil[d] for d, o in enumerate(offset)]
            limit = [start[d] + (out[d] - 1) * strides[d] + 1 for d in range(rank)]
            part = slice_(b, x, start, limit, strides)
            y = part if y is None else getattr(b, COMBINE[kind])(y, part)
        if y is x or y.kind != "output":
            y = b.identity(y)
    if init_operand is not None and (init_value is None or init_value != identity):
        y = getattr(b, COMBINE[kind])(y, init_operand)
    return y


# ----------------------------------------------------------------- gather
def gather(b, x, indices, *, offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes,
           operand_batching_dims=(), start_indices_batching_dims=(), op="gather"):
    """StableHLO gather when every indexed dim is collapsed with slice size 1 and
    every other dim is taken whole (embeddings, take, x[i, j]): gatherND on the
    operand transposed so the indexed dims lead, then the result's dims are put
    where offset_dims says. Operand batching dims (take_along_axis) become extra
    iota index components. Indices are clamped like XLA (in range, never wrapped)."""
    rank = len(x.shape)
    smap = list(start_index_map)
    collapsed = list(collapsed_slice_dims)
    if len(operand_batching_dims) != len(start_indices_batching_dims):
        raise XlaTypeError(f"{op}: operand and start-indices batching dimensions must pair up")
    if sorted(collapsed) != sorted(smap) or any(slice_sizes[d] != 1 for d in smap) \
            or any(slice_sizes[d] != x.shape[d] for d in range(rank)
                   if d not in smap and d not in operand_batching_dims):
        raise NotExpressibleError(op, "only gathers of whole slices along collapsed index dimensions lower "
                                  "(gatherND); this one takes partial windows")
    if indices.dtype not in ("int32", "int64", "uint32"):
        indices = b.cast(indices, "int32")
    ishape = list(indices.shape)
    if index_vector_dim == len(ishape):
        indices = reshape(b, indices, ishape + [1])
    else:
        perm = [d for d in range(len(ishape)) if d != index_vector_dim] + [index_vector_dim]
        indices = transpose(b, indices, perm)
    k = indices.shape[-1]
    if k != len(smap):
        raise XlaTypeError(f"{op}: the index vector has {k} entries, start_index_map has {len(smap)}")
    # A batching dim pair (take_along_axis) is one more index component: the iota
    # of the indices' batch dim, into the operand's batching dim.
    for obd, sibd in zip(operand_batching_dims, start_indices_batching_dims):
        pos = sibd if sibd < index_vector_dim or index_vector_dim == len(ishape) else sibd - 1
        component = iota(tuple(indices.shape[:-1]) + (1,), pos, indices.dtype)
        indices = b.concat([indices, const(b, component, indices.dtype)], len(indices.shape) - 1)
        smap.append(obd)
        if slice_sizes[obd] != 1:
            raise XlaTypeError(f"{op}: slice size of batching dim {obd} must be 1")
    upper = np.array([x.shape[d] - 1 for d in smap], dtype=dtypes.numpy_dtype(indices.dtype))
    indices = b.min(b.max(indices, const(b, 0, indices.dtype)), const(b, upper, indices.dtype))
    rest = [d for d in range(rank) if d not in smap]
    y = b.gatherND(transpose(b, x, smap + rest), indices)
    nbatch = len(indices.shape) - 1
    out_rank = nbatch + len(rest)
    offset_dims = list(offset_dims)
    batch_pos = [p for p in range(out_rank) if p not in offset_dims]
    perm = [0] * out_rank
    for i, p in enumerate(batch_pos):
        perm[p] = i
    for i, p in enumerate(offset_dims):
        perm[p] = nbatch + i
    return transpose(b, y, perm)


__all__ = [n for n in dir() if not n.startswith("_")]
