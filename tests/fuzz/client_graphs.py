"""Random conv nets shaped like what real WebNN clients build, with numpy references.

`client_graph(rng)` returns (spec, expected) in the format of tests/fuzz/graphs.py (the
fuzz page's runGraph builds it; tests/fuzz/differential.py builds it in CPython), the
expected outputs computed here in float64 with numpy, each op written from the spec's
definition (conv2d, pools with ceil rounding and padding excluded from averages, LRN as
ONNX Runtime decomposes it), independently of webnn_core.

Styles, the layouts real clients use:
  ort122  ONNX Runtime Web 1.22's WebNN EP when the context prefers NHWC: the NCHW input
          transposed to NHWC, conv2d with inputLayout nhwc and filterLayout ohwi (ihwo for
          depthwise), pools and concats in NHWC, NCHW-only steps (a per-channel scale, a
          channel shuffle) wrapped in transposes back and forth, a transpose back to NCHW
          before the head;
  ort130  ONNX Runtime Web 1.30: everything NCHW (oihw filters);
  nhwc    a client that is NHWC throughout (TF.js style): NHWC input, no transposes.
Blocks: convs (k x k, strides, dilations, asymmetric padding, grouped, depthwise with and
without a channel multiplier) with relu/clamp or none, max/average/global pools (ceil
rounding, padding), SqueezeNet fire modules (concat of two expands), residual adds,
ShuffleNet channel shuffles (reshape -> transpose -> reshape), LRN's channel average
(pad -> transpose -> averagePool2d 1 x k -> transpose), skip concats of earlier values;
heads: global average pool -> reshape -> gemm/matmul -> softmax. Odd channel counts and
spatial sizes; sometimes an intermediate value is a graph output too.
"""
from __future__ import annotations

import math

import numpy as np

STYLES = ("ort122", "ort130", "nhwc")
TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


class Reject(Exception):
    """The block drawn makes no valid graph here (a window wholly in padding, ...)."""


# ------------------------------------------------------------ numpy references (NCHW, float64)
def conv_ref(x, w, bias, padding, strides, dilations, groups):
    """x [N, C, H, W], w OIHW [O, C/g, KH, KW]; padding [top, bottom, left, right]."""
    t, b, left, right = padding
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (left, right)))
    n, c, h, wd = xp.shape
    o, ig, kh, kw = w.shape
    (sh, sw), (dh, dw) = strides, dilations
    oh = (h - ((kh - 1) * dh + 1)) // sh + 1
    ow = (wd - ((kw - 1) * dw + 1)) // sw + 1
    if oh < 1 or ow < 1:
        raise Reject("conv output empty")
    og = o // groups
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for g in range(groups):
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch[:, g * ig:(g + 1) * ig],
                                                       w[g * og:(g + 1) * og, :, i, j])
    if bias is not None:
        y += bias.reshape(1, -1, 1, 1)
    return y


def pool_size(size, k, s, d, pb, pe, ceil):
    span = size + pb + pe - ((k - 1) * d + 1)
    if span < 0:
        raise Reject("window larger than the padded input")
    return (-(-span // s) if ceil else span // s) + 1


def pool_ref(x, kind, window, padding, strides, dilations, ceil):
    """max/average over the taps inside the input (padding and the ceil overhang excluded)."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = window, strides, dilations
    t, b, left, right = padding
    oh, ow = pool_size(h, kh, sh, dh, t, b, ceil), pool_size(w, kw, sw, dw, left, right, ceil)
    y = np.zeros((n, c, oh, ow))
    for r in range(oh):
        rows = [r * sh - t + i * dh for i in range(kh)]
        rows = [p for p in rows if 0 <= p < h]
        for q in range(ow):
            cols = [q * sw - left + j * dw for j in range(kw)]
            cols = [p for p in cols if 0 <= p < w]
            if not rows or not cols:
                raise Reject("a pool window lies wholly in the padding")
            win = x[:, :, rows][:, :, :, cols]
            y[:, :, r, q] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return y


def softmax_ref(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ------------------------------------------------------------ the builder
class _Net:
    def __init__(self, rng, style):
        self.rng = rng
        self.style = style
        self.values = {}  # id -> float64 array, in the graph's own layout
        self.spec = {"inputs": [], "constants": [], "nodes": [], "outputs": []}
        self.n = 0
        self.zone = "nchw" if style == "ort130" else "nhwc"  # layout of the conv zone

    def new_id(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def leaf(self, value, kind):
        value = np.asarray(value, np.float32).astype(np.float64)
        vid = self.new_id("in" if kind == "inputs" else "c")
        self.values[vid] = value
        self.spec[kind].append({"id": vid, "shape": list(value.shape), "data": value.reshape(-1).tolist()})
        return vid

    def const(self, value):
        return self.leaf(value, "constants")

    def node(self, op, args, options, value):
        vid = self.new_id("v")
        self.values[vid] = value
        self.spec["nodes"].append({"id": vid, "op": op, "args": args, "options": options})
        return vid

    # -- layout helpers: values of the conv zone are 4-D in self.zone's layout
    def nchw(self, vid):
        v = self.values[vid]
        return v if self.zone == "nchw" else v.transpose(TO_NCHW)

    def from_nchw(self, y):
        return y if self.zone == "nchw" else y.transpose(TO_NHWC)

    def channels(self, vid):
        return self.nchw(vid).shape[1]

    def caxis(self):
        return 1 if self.zone == "nchw" else 3

    def transpose(self, vid, perm):
        return self.node("transpose", [{"ref": vid}], {"permutation": list(perm)}, self.values[vid].transpose(perm))

    def weights(self, shape, fan_in):
        return self.rng.uniform(-1, 1, shape) * (1.5 / math.sqrt(fan_in))

    # -- blocks
    def conv(self, vid, out_ch, k, strides=(1, 1), padding=None, dilations=(1, 1), groups=1, act=None,
             bias=True):
        rng = self.rng
        x = self.nchw(vid)
        c = x.shape[1]
        kh, kw = (k, k) if isinstance(k, int) else k
        if padding is None:
            padding = [(kh - 1) // 2 * dilations[0], kh // 2 * dilations[0],
                       (kw - 1) // 2 * dilations[1], kw // 2 * dilations[1]]
        w = self.weights((out_ch, c // groups, kh, kw), c // groups * kh * kw)
        w = np.asarray(w, np.float32).astype(np.float64)
        b = np.asarray(rng.uniform(-0.5, 0.5, out_ch), np.float32).astype(np.float64) if bias else None
        y = conv_ref(x, w, b, padding, strides, dilations, groups)
        opts = {"padding": list(padding), "strides": list(strides), "dilations": list(dilations)}
        if groups != 1:
            opts["groups"] = groups
        kind = "inputs" if rng.random() < 0.08 else "constants"  # a filter fed at dispatch: packed per call
        if self.zone == "nchw":
            wid = self.leaf(w, kind)
        else:
            opts["inputLayout"] = "nhwc"
            if groups == c and c // groups == 1 and rng.random() < 0.8:
                wid = self.leaf(w.transpose(1, 2, 3, 0), kind)  # ihwo: ORT's depthwise filters
                opts["filterLayout"] = "ihwo"
            else:
                wid = self.leaf(w.transpose(0, 2, 3, 1), kind)  # ohwi
                opts["filterLayout"] = "ohwi"
        if b is not None:
            opts["bias"] = {"ref": self.leaf(b, kind)}
        out = self.node("conv2d", [{"ref": vid}, {"ref": wid}], opts, self.from_nchw(y))
        return self.activation(out, act)

    def activation(self, vid, act):
        x = self.values[vid]
        if act == "relu":
            return self.node("relu", [{"ref": vid}], {}, np.maximum(x, 0))
        if act == "relu6":
            return self.node("clamp", [{"ref": vid}], {"minValue": 0, "maxValue": 6}, np.clip(x, 0, 6))
        if act == "clamp":
            lo = float(np.float32(self.rng.choice([-1.0, -0.25, 0.0])))
            hi = float(np.float32(self.rng.choice([0.5, 1.5, 3.0])))
            return self.node("clamp", [{"ref": vid}], {"minValue": lo, "maxValue": hi}, np.clip(x, lo, hi))
        if act == "hardSwish":  # MobileNetV3
            return self.node("hardSwish", [{"ref": vid}], {}, x * np.clip(x + 3, 0, 6) / 6)
        if act == "leakyRelu":
            return self.node("leakyRelu", [{"ref": vid}], {"alpha": 0.125}, np.where(x >= 0, x, 0.125 * x))
        if act == "sigmoid":
            return self.node("sigmoid", [{"ref": vid}], {}, 1 / (1 + np.exp(-x)))
        return vid

    def random_act(self):
        return self.rng.choice(["relu", "relu", "relu6", "clamp", "hardSwish", "leakyRelu", None])

    def squeeze_excite(self, vid):
        """MobileNetV3/EfficientNet's squeeze-and-excitation: global average pool, 1x1 conv
        + relu, 1x1 conv + sigmoid, then the value times that per-channel gate (a
        broadcasting mul: [N, C, 1, 1] over [N, C, H, W], or [N, 1, 1, C] in NHWC)."""
        c = self.channels(vid)
        gap = self.pool(vid, kind="avg", global_=True)
        r = self.conv(gap, max(1, c // 4), 1, act="relu")
        gate = self.conv(r, c, 1, act="sigmoid")
        return self.node("mul", [{"ref": vid}, {"ref": gate}], {}, self.values[vid] * self.values[gate])

    def random_conv(self, vid):
        rng = self.rng
        c = self.channels(vid)
        _, _, h, w = self.nchw(vid).shape
        kind = rng.integers(6)
        if kind == 0 and c > 1:  # depthwise, sometimes with a channel multiplier
            mult = 1 if rng.random() < 0.75 else 2
            k = int(rng.choice([3, 3, 5]))
            s = int(rng.choice([1, 1, 2]))
            return self.conv(vid, c * mult, min(k, max(h, w)), strides=(s, s), groups=c, act=self.random_act())
        if kind == 1 and c > 1:  # grouped (ShuffleNet's 1x1 group convs)
            divisors = [g for g in range(2, c + 1) if c % g == 0 and g < c]
            if divisors:
                g = int(rng.choice(divisors))
                return self.conv(vid, g * int(rng.integers(1, 4)), 1, groups=g, act=self.random_act())
        if kind == 2:  # strided with asymmetric padding and maybe dilation
            k = int(rng.choice([2, 3]))
            d = int(rng.choice([1, 1, 2]))
            pad = [int(p) for p in rng.integers(0, k, 4)]
            s = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
            return self.conv(vid, int(rng.integers(1, 17)), k, strides=s, padding=pad, dilations=(d, d),
                             act=self.random_act())
        k = int(rng.choice([1, 1, 3, 3, 5, 7])) if kind < 5 else int(rng.choice([1, 3]))
        k = min(k, max(1, h), max(1, w)) if k > 1 else 1
        return self.conv(vid, int(rng.choice([1, 2, 3, 5, 7, 8, 12, 16, 17, 24])), k, act=self.random_act())

    def pool(self, vid, kind=None, global_=False):
        rng = self.rng
        kind = kind or rng.choice(["max", "avg"])
        x = self.nchw(vid)
        _, _, h, w = x.shape
        opts = {}
        if global_:
            window, padding, strides, ceil = (h, w), [0, 0, 0, 0], (1, 1), False
        else:
            k = int(rng.choice([2, 3, 3]))
            window = (min(k, h + 1), min(k, w + 1))
            s = int(rng.choice([1, 2, 2]))
            strides = (s, s)
            padding = [int(p) for p in rng.integers(0, 2, 4)] if rng.random() < 0.5 else [0, 0, 0, 0]
            ceil = bool(rng.random() < 0.5)
            opts = {"windowDimensions": list(window), "strides": list(strides)}
            if any(padding):
                opts["padding"] = padding
            if ceil:
                opts["outputShapeRounding"] = "ceil"
        y = pool_ref(x, kind, window, padding, strides, (1, 1), ceil)
        if not global_ and rng.random() < 0.2:  # the same sizes given as outputSizes (ORT passes them)
            opts["outputSizes"] = [int(y.shape[2]), int(y.shape[3])]
            opts.pop("outputShapeRounding", None)
        if self.zone == "nhwc":
            opts["layout"] = "nhwc"
        op = "maxPool2d" if kind == "max" else "averagePool2d"
        return self.node(op, [{"ref": vid}], opts, self.from_nchw(y))

    def fire(self, vid):
        rng = self.rng
        if rng.random() < 0.3:  # SqueezeNet's later fire modules: wide expands, big 3x3 filters
            s = int(rng.choice([16, 24, 32]))
            e1, e3 = int(rng.choice([4, 16, 64])), int(rng.choice([16, 48, 64]))
        else:
            s = int(rng.choice([2, 3, 4, 5, 8]))
            e1, e3 = int(rng.choice([3, 4, 7, 8, 16])), int(rng.choice([3, 4, 5, 8, 16]))
        sq = self.conv(vid, s, 1, act="relu")
        a = self.conv(sq, e1, 1, act="relu")
        b = self.conv(sq, e3, 3, act="relu")
        return self.concat([a, b])

    def concat(self, ids):
        axis = self.caxis()
        value = np.concatenate([self.values[i] for i in ids], axis=axis)
        return self.node("concat", [[{"ref": i} for i in ids], axis], {}, value)

    def residual(self, vid):
        c = self.channels(vid)
        y = self.conv(vid, c, int(self.rng.choice([1, 3])), act=self.rng.choice(["relu", None]))
        out = self.node("add", [{"ref": vid}, {"ref": y}], {}, self.values[vid] + self.values[y])
        return self.activation(out, self.rng.choice(["relu", "relu6", "clamp", None]))

    def shuffle(self, vid, groups=None):
        """ShuffleNet's channel shuffle, in NCHW (ORT 1.22 wraps it in transposes)."""
        c = self.channels(vid)
        if groups is None:
            groups = [g for g in range(2, c) if c % g == 0]
            if not groups:
                raise Reject("no channel shuffle of a prime channel count")
            g = int(self.rng.choice(groups))
        else:
            g = groups
        src = vid
        if self.zone == "nhwc":
            if self.style == "nhwc":  # an NHWC client shuffles the last axis
                n, h, w, _ = self.values[vid].shape
                r = self.node("reshape", [{"ref": vid}, [n, h, w, g, c // g]], {}, self.values[vid].reshape(n, h, w, g, c // g))
                t = self.transpose(r, [0, 1, 2, 4, 3])
                return self.node("reshape", [{"ref": t}, [n, h, w, c]], {}, self.values[t].reshape(n, h, w, c))
            src = self.transpose(vid, TO_NCHW)
        n, _, h, w = self.values[src].shape
        r = self.node("reshape", [{"ref": src}, [n, g, c // g, h, w]], {}, self.values[src].reshape(n, g, c // g, h, w))
        t = self.transpose(r, [0, 2, 1, 3, 4])
        y = self.node("reshape", [{"ref": t}, [n, c, h, w]], {}, self.values[t].reshape(n, c, h, w))
        return y if self.zone == "nchw" else self.transpose(y, TO_NHWC)

    def channel_scale(self, vid):
        """A per-channel multiply with a [1, C, 1, 1] constant (an NCHW-only step: ORT 1.22
        wraps it in transposes), sometimes a scalar add or a sigmoid instead."""
        rng = self.rng
        src = self.transpose(vid, TO_NCHW) if self.zone == "nhwc" and self.style == "ort122" else vid
        x = self.values[src]
        pick = rng.integers(3)
        if pick == 0 and len(x.shape) == 4:
            shape = [1, x.shape[1], 1, 1] if src != vid or self.zone == "nchw" else [1, 1, 1, x.shape[3]]
            s = self.const(rng.uniform(0.5, 1.5, shape))
            y = self.node("mul", [{"ref": src}, {"ref": s}], {}, x * self.values[s])
        elif pick == 1:
            s = self.const(np.float32(rng.uniform(-1, 1)).reshape(()))
            y = self.node("add", [{"ref": src}, {"ref": s}], {}, x + self.values[s])
        else:
            y = self.node("sigmoid", [{"ref": src}], {}, 1 / (1 + np.exp(-x)))
        return self.transpose(y, TO_NHWC) if src != vid else y

    def split_half(self, vid):
        """The two channel halves of a value by WebNN split (ShuffleNetV2's channel split);
        each half is its own split call taking one output (spec node "index")."""
        c = self.channels(vid)
        if c % 2:
            raise Reject("odd channel count")
        axis = self.caxis()
        halves = np.split(self.values[vid], 2, axis=axis)
        ids = []
        for i, half in enumerate(halves):
            ids.append(self.node("split", [{"ref": vid}, 2], {"axis": axis}, half))
            self.spec["nodes"][-1]["index"] = i
        return ids

    def shufflenet_v2(self, vid):
        """ShuffleNetV2's basic unit: split the channels in half, one half through
        1x1 conv + relu, 3x3 depthwise, 1x1 conv + relu, concat with the other, shuffle (g 2)."""
        a, b = self.split_half(vid)
        c = self.channels(b)
        y = self.conv(b, c, 1, act="relu")
        y = self.conv(y, c, 3, groups=c)
        y = self.conv(y, c, 1, act="relu")
        return self.shuffle(self.concat([a, y]), groups=2)

    def explicit_pad(self, vid):
        """A pad step before an unpadded conv (TF-style SAME padding, or reflection/edge)."""
        rng = self.rng
        x = self.values[vid]
        mode = str(rng.choice(["constant", "constant", "reflection", "edge"]))
        _, _, h, w = self.nchw(vid).shape
        t, b, left, right = (int(v) for v in rng.integers(0, 3, 4))
        if mode == "reflection" and (max(t, b) >= h or max(left, right) >= w):
            mode = "constant"
        pads = [(0, 0), (0, 0), (t, b), (left, right)]
        if self.zone == "nhwc":
            pads = [pads[i] for i in TO_NHWC]
        np_mode = {"constant": "constant", "reflection": "reflect", "edge": "edge"}[mode]
        opts = {} if mode == "constant" else {"mode": mode}
        padded = self.node("pad", [{"ref": vid}, [p[0] for p in pads], [p[1] for p in pads]], opts,
                           np.pad(x, pads, mode=np_mode))
        return self.conv(padded, int(rng.choice([3, 5, 8])), 3, padding=[0, 0, 0, 0], act=self.random_act())

    def batch_norm(self, vid):
        rng = self.rng
        c = self.channels(vid)
        mean, var = self.const(rng.uniform(-1, 1, c)), self.const(rng.uniform(0.5, 2, c))
        scale, bias = self.const(rng.uniform(0.5, 1.5, c)), self.const(rng.uniform(-0.5, 0.5, c))
        shape = [1, c, 1, 1] if self.zone == "nchw" else [1, 1, 1, c]
        p = {k: self.values[v].reshape(shape) for k, v in (("m", mean), ("v", var), ("s", scale), ("b", bias))}
        y = (self.values[vid] - p["m"]) / np.sqrt(p["v"] + np.float32(1e-5)) * p["s"] + p["b"]
        out = self.node("batchNormalization", [{"ref": vid}, {"ref": mean}, {"ref": var}],
                        {"scale": {"ref": scale}, "bias": {"ref": bias}, "axis": self.caxis()}, y)
        return self.activation(out, self.rng.choice(["relu", None]))

    def concat_spatial(self, vid):
        """A concat along the height (not the channels): stays NCHW for the layout pass."""
        axis = 2 if self.zone == "nchw" else 1
        other = self.activation(vid, "relu")
        value = np.concatenate([self.values[vid], self.values[other]], axis=axis)
        return self.node("concat", [[{"ref": vid}, {"ref": other}], axis], {}, value)

    def lrn(self, vid):
        """LRN across channels as ONNX Runtime's WebNN EP builds it: square, zero-pad the
        channels (last axis of an NHWC value), transpose, averagePool2d with a 1 x k
        window, transpose back, then x / (bias + alpha * avg) ** beta."""
        rng = self.rng
        if self.style == "ort122" and rng.random() < 0.7:
            return self.lrn_ort122(vid)
        src = vid if self.zone == "nhwc" else self.transpose(vid, TO_NHWC)
        x = self.values[src]
        c = x.shape[3]
        k = int(rng.choice([3, 5]))
        p0 = (k - 1) // 2
        p1 = k - 1 - p0
        sq = self.node("mul", [{"ref": src}, {"ref": src}], {}, x * x)
        padded = np.pad(x * x, ((0, 0), (0, 0), (0, 0), (p0, p1)))
        pd = self.node("pad", [{"ref": sq}, [0, 0, 0, p0], [0, 0, 0, p1]], {}, padded)
        t1 = self.transpose(pd, TO_NHWC)
        win = np.stack([padded[..., i:i + c] for i in range(k)]).mean(axis=0)
        pool = self.node("averagePool2d", [{"ref": t1}], {"windowDimensions": [1, k], "layout": "nhwc"},
                         win.transpose(TO_NHWC))
        avg = self.transpose(pool, TO_NCHW)
        alpha = self.const(np.float32(1e-1).reshape(()))
        bias = self.const(np.float32(1.0).reshape(()))
        beta = self.const(np.float32(0.75).reshape(()))
        scaled = self.node("mul", [{"ref": avg}, {"ref": alpha}], {}, win * np.float64(np.float32(0.1)))
        den0 = self.node("add", [{"ref": scaled}, {"ref": bias}], {}, self.values[scaled] + 1)
        den = self.node("pow", [{"ref": den0}, {"ref": beta}], {}, self.values[den0] ** 0.75)
        y = self.node("div", [{"ref": src}, {"ref": den}], {}, x / self.values[den])
        return y if self.zone == "nhwc" else self.transpose(y, TO_NCHW)

    def lrn_ort122(self, vid):
        """LRN as ORT 1.22's WebNN EP builds it in an NHWC graph (tests/kernels/test_compile.py
        ort_lrn_unit): to NCHW, x^2 (pow 2), to NHWC, channel pad, transpose, 1 x k average
        pool, two transposes back to NCHW, the scalar steps and the div in NCHW, to NHWC."""
        rng = self.rng
        xc = self.transpose(vid, TO_NCHW)
        x = self.values[xc]
        c = x.shape[1]
        k = int(rng.choice([3, 5]))
        p0 = (k - 1) // 2
        p1 = k - 1 - p0
        two = self.const(np.float32(2.0).reshape(()))
        sqc = self.node("pow", [{"ref": xc}, {"ref": two}], {}, x ** 2)
        sq = self.transpose(sqc, TO_NHWC)
        padded = np.pad(self.values[sq], ((0, 0), (0, 0), (0, 0), (p0, p1)))
        pd = self.node("pad", [{"ref": sq}, [0, 0, 0, p0], [0, 0, 0, p1]], {}, padded)
        t1 = self.transpose(pd, TO_NHWC)
        win = np.stack([padded[..., i:i + c] for i in range(k)]).mean(axis=0)  # NHWC
        pool = self.node("averagePool2d", [{"ref": t1}], {"windowDimensions": [1, k], "layout": "nhwc"},
                         win.transpose(TO_NHWC))
        avg = self.transpose(self.transpose(pool, TO_NCHW), TO_NCHW)
        alpha = float(np.float32(rng.choice([1e-4, 0.1, 0.5])))
        a = self.const(np.float32(alpha).reshape(()))
        bias = self.const(np.float32(1.0).reshape(()))
        beta = self.const(np.float32(0.75).reshape(()))
        scaled = self.node("mul", [{"ref": avg}, {"ref": a}], {}, self.values[avg] * alpha)
        den0 = self.node("add", [{"ref": scaled}, {"ref": bias}], {}, self.values[scaled] + 1)
        den = self.node("pow", [{"ref": den0}, {"ref": beta}], {}, self.values[den0] ** 0.75)
        y = self.node("div", [{"ref": xc}, {"ref": den}], {}, x / self.values[den])
        return self.transpose(y, TO_NHWC)

    def head(self, vid):
        """Global average pool (or the value itself, flattened), reshape, gemm/matmul, softmax."""
        rng = self.rng
        if rng.random() < 0.7 or self.values[vid][0].size > 2048:  # (a flattened head's weights stay small)
            vid = self.pool(vid, kind="avg" if rng.random() < 0.8 else "max", global_=True)
        if self.style == "ort122":
            vid = self.transpose(vid, TO_NCHW)
        x = self.values[vid]
        n = x.shape[0]
        if rng.random() < 0.25:  # SqueezeNet's head: softmax of the 4-D pooled value, over its channels
            axis = 3 if self.style == "nhwc" else 1
            return self.node("softmax", [{"ref": vid}, axis], {}, softmax_ref(x, axis))
        flat = self.node("reshape", [{"ref": vid}, [n, int(np.prod(x.shape[1:]))]], {}, x.reshape(n, -1))
        k = x[0].size
        classes = int(rng.choice([1, 3, 5, 10, 64, 100]))
        w = np.asarray(self.weights((k, classes), k), np.float32).astype(np.float64)
        if rng.random() < 0.6:
            c_shape = [[classes], [classes], [1, classes], [], [1, 1], [n, classes]][int(rng.integers(6))]
            b = np.asarray(rng.uniform(-0.5, 0.5, c_shape), np.float32).astype(np.float64)
            bT = bool(rng.random() < 0.5)
            wid = self.const(w.T if bT else w)
            cid = self.leaf(b, "inputs" if rng.random() < 0.1 else "constants")
            opts = {"c": {"ref": cid}}
            if bT:
                opts["bTranspose"] = True
            alpha, beta = 1.0, 1.0
            if rng.random() < 0.2:
                alpha, beta = float(rng.choice([0.5, 1.0, 2.0])), float(rng.choice([0.0, 0.5, 1.0]))
                opts.update(alpha=alpha, beta=beta)
            a = flat
            if rng.random() < 0.1:  # the activations handed over transposed
                a = self.transpose(flat, [1, 0])
                opts["aTranspose"] = True
            logits = self.node("gemm", [{"ref": a}, {"ref": wid}], opts, alpha * (self.values[flat] @ w) + beta * b)
        else:
            wid = self.const(w)
            logits = self.node("matmul", [{"ref": flat}, {"ref": wid}], {}, self.values[flat] @ w)
        return self.node("softmax", [{"ref": logits}, 1], {}, softmax_ref(self.values[logits], 1))


def layer_norm_ref(x, scale, bias, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * scale + bias


def transformer_graph(rng):
    """A transformer block as ONNX Runtime's WebNN EP builds one (gemm projections,
    attention heads by reshape -> transpose, batched matmuls, softmax, layerNormalization,
    gelu through erf, residual adds): the exact64 fast paths (erf, layerNormalization),
    the GEMM epilogues and the binary kernels."""
    net = _Net(rng, "transformer")
    if rng.random() < 0.3:  # big enough for the batched matmul kernel (>= 32^3 per head)
        t, heads = int(rng.integers(32, 72)), int(rng.choice([1, 2]))
        d = heads * int(rng.choice([32, 48]))
    else:
        t = int(rng.integers(2, 24))
        heads = int(rng.choice([1, 2, 4]))
        d = heads * int(rng.choice([2, 4, 8, 16]))
    x = net.leaf(np.round(rng.uniform(-2, 2, (t, d)), 3), "inputs")

    def ln(vid):
        scale = net.const(rng.uniform(0.5, 1.5, d))
        bias = net.const(rng.uniform(-0.5, 0.5, d))
        eps = float(rng.choice([1e-5, 1e-6]))
        v = layer_norm_ref(net.values[vid], net.values[scale], net.values[bias], np.float32(eps))
        return net.node("layerNormalization", [{"ref": vid}],
                        {"axes": [1], "scale": {"ref": scale}, "bias": {"ref": bias}, "epsilon": eps}, v)

    def dense(vid, n_out):
        k = net.values[vid].shape[1]
        w = net.const(net.weights((k, n_out), k))
        c = net.const(rng.uniform(-0.5, 0.5, n_out))
        return net.node("gemm", [{"ref": vid}, {"ref": w}], {"c": {"ref": c}},
                        net.values[vid] @ net.values[w] + net.values[c])

    def split_heads(vid):
        r = net.node("reshape", [{"ref": vid}, [1, t, heads, d // heads]], {}, net.values[vid].reshape(1, t, heads, d // heads))
        return net.transpose(r, [0, 2, 1, 3])

    def scalar(v):
        return net.const(np.float32(v).reshape(()))

    h = ln(x)
    q, k, v = (split_heads(dense(h, d)) for _ in range(3))
    kt = net.transpose(k, [0, 1, 3, 2])
    scores = net.node("matmul", [{"ref": q}, {"ref": kt}], {}, net.values[q] @ net.values[kt])
    sc = float(np.float32(1 / math.sqrt(d // heads)))
    scaled = net.node("mul", [{"ref": scores}, {"ref": scalar(sc)}], {}, net.values[scores] * sc)
    att = net.node("softmax", [{"ref": scaled}, 3], {}, softmax_ref(net.values[scaled], 3))
    ctx = net.node("matmul", [{"ref": att}, {"ref": v}], {}, net.values[att] @ net.values[v])
    merged = net.transpose(ctx, [0, 2, 1, 3])
    flat = net.node("reshape", [{"ref": merged}, [t, d]], {}, net.values[merged].reshape(t, d))
    o = dense(flat, d)
    r1 = net.node("add", [{"ref": x}, {"ref": o}], {}, net.values[x] + net.values[o])
    up = dense(ln(r1), 4 * d)
    u = net.values[up]
    half = net.node("mul", [{"ref": up}, {"ref": scalar(0.5)}], {}, u * 0.5)
    inv = float(np.float32(1 / math.sqrt(2)))
    e_in = net.node("mul", [{"ref": up}, {"ref": scalar(inv)}], {}, u * inv)
    erf = net.node("erf", [{"ref": e_in}], {}, np.vectorize(math.erf)(net.values[e_in]))
    one = net.node("add", [{"ref": erf}, {"ref": scalar(1.0)}], {}, net.values[erf] + 1)
    gelu = net.node("mul", [{"ref": half}, {"ref": one}], {}, net.values[half] * net.values[one])
    down = dense(gelu, d)
    out = net.node("add", [{"ref": r1}, {"ref": down}], {}, net.values[r1] + net.values[down])
    outputs = [out] + ([att] if rng.random() < 0.3 else [])
    net.spec["outputs"] = sorted(outputs)
    from graphs import _prune

    spec = _prune(net.spec)
    spec["style"] = "transformer"
    return spec, {o: net.values[o] for o in spec["outputs"]}


BLOCKS = ("conv", "conv", "conv", "pool", "fire", "residual", "shuffle", "scale", "lrn", "skip", "se", "shufflev2",
          "pad", "bn", "hconcat")


def client_graph(rng: np.random.Generator, style: str | None = None, max_blocks: int = 6):
    """(spec, expected outputs {id: float64 array}) of one random client-shaped net."""
    style = style or str(rng.choice(STYLES + ("transformer",), p=[0.3, 0.3, 0.3, 0.1]))
    if style == "transformer":
        return transformer_graph(rng)
    net = _Net(rng, style)
    n = 1 if rng.random() < 0.8 else 2
    if rng.random() < 0.25:  # big enough for the layout kernels (>= 4096 elements) and splits
        c = int(rng.choice([8, 12, 16, 17, 24, 32]))
        h, w = int(rng.integers(12, 36)), int(rng.integers(12, 36))
    else:
        c = int(rng.choice([1, 2, 3, 3, 4, 5, 7, 8, 16]))
        h, w = int(rng.integers(3, 20)), int(rng.integers(3, 20))
    data = np.round(rng.uniform(-2, 2, (n, c, h, w)), 3)
    if style == "nhwc":
        cur = net.leaf(data.transpose(TO_NHWC), "inputs")
    else:
        cur = net.leaf(data, "inputs")
        if style == "ort122":
            cur = net.transpose(cur, TO_NHWC)
    zone = [cur]  # values of the conv zone (for skip concats)
    extra_outputs = []
    for _ in range(int(rng.integers(1, max_blocks + 1))):
        block = str(rng.choice(BLOCKS))
        mark = (len(net.spec["nodes"]), len(net.spec["constants"]), net.n)
        try:
            if block == "conv":
                new = net.random_conv(cur)
            elif block == "pool":
                new = net.pool(cur)
            elif block == "fire":
                new = net.fire(cur)
            elif block == "residual":
                new = net.residual(cur)
            elif block == "shuffle":
                new = net.shuffle(cur)
            elif block == "scale":
                new = net.channel_scale(cur)
            elif block == "lrn":
                new = net.lrn(cur)
            elif block == "se":
                new = net.squeeze_excite(cur)
            elif block == "shufflev2":
                new = net.shufflenet_v2(cur)
            elif block == "pad":
                new = net.explicit_pad(cur)
            elif block == "bn":
                new = net.batch_norm(cur)
            elif block == "hconcat":
                new = net.concat_spatial(cur)
            else:  # concat with an earlier value of the same spatial size (a second reader)
                same = [v for v in zone[:-1] if net.nchw(v).shape[2:] == net.nchw(cur).shape[2:]
                        and net.nchw(v).shape[0] == net.nchw(cur).shape[0]]
                if not same or rng.random() < 0.2:
                    new = net.concat([cur, cur])  # the same value twice
                else:
                    new = net.concat([cur, same[int(rng.integers(len(same)))]])
        except Reject:
            del net.spec["nodes"][mark[0]:]
            del net.spec["constants"][mark[1]:]
            continue
        if float(np.abs(net.values[new]).max()) > 1e4:  # keep magnitudes sane
            del net.spec["nodes"][mark[0]:]
            del net.spec["constants"][mark[1]:]
            continue
        cur = new
        zone.append(cur)
        if rng.random() < 0.15:
            extra_outputs.append(cur)
    if rng.random() < 0.85:
        try:
            cur = net.head(cur)
        except Reject:
            pass
    elif style == "ort122":
        cur = net.transpose(cur, TO_NCHW)
    if cur == net.spec["inputs"][0]["id"]:
        cur = net.node("relu", [{"ref": cur}], {}, np.maximum(net.values[cur], 0))
    outputs = sorted({cur, *[o for o in extra_outputs if o != net.spec["inputs"][0]["id"]]})
    net.spec["outputs"] = outputs
    net.spec["style"] = style
    from graphs import _prune

    spec = _prune(net.spec)
    spec["style"] = style
    return spec, {o: net.values[o] for o in outputs}
