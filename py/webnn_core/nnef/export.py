"""Export a WebNN graph (built with the core's builder, or loaded from NNEF) as
an NNEF 1.0 model: a flat `graph.nnef` plus one `.dat` file per constant.

It walks the graph's normalised nodes (`Node.operands` and `Node.attrs`: the
spec attributes with every default applied), so the NNEF text follows the
graph as built, not any backend's compiled form. WebNN's right-aligned broadcasting is made
explicit with `unsqueeze` (NNEF aligns at the left); layouts other than
NCHW/OIHW/IOHW become transposes. Operations NNEF 1.0 cannot express exactly
(erf-based gelu, gru/lstm, scatter, cumulativeSum, quantizeLinear, ...) raise
`NNEFUnsupportedError`.
"""
from __future__ import annotations

import io
import math
import os
import tarfile

import numpy as np

from ..graph import reachable_nodes
from . import dat
from .errors import NNEFUnsupportedError
from .lexer import KEYWORDS

SMALL_CONSTANT = 16  # constants with at most this many items are written inline


def _dtype(webnn_type, logical=False):
    if webnn_type in ("float32", "float16"):
        return "scalar"
    if webnn_type == "uint8" and logical:
        return "logical"
    if webnn_type in ("int32", "int64", "int8", "uint32", "uint64", "int16"):
        return "integer"
    if webnn_type == "uint8":
        return "logical"
    raise NNEFUnsupportedError("export", f"data type {webnn_type} has no NNEF equivalent")


def fmt(value) -> str:
    """An NNEF literal."""
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise NNEFUnsupportedError("export", f"the value {v} cannot be written as an NNEF literal")
        text = repr(v)
        if "e" in text and "." not in text.split("e")[0]:
            mant, exp = text.split("e")
            text = f"{mant}.0e{exp}"
        return text
    if isinstance(value, str):
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(value, tuple):
        return "(" + ", ".join(fmt(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    raise TypeError(value)


class Exporter:
    def __init__(self, graph, name="G"):
        self.graph = graph
        self.name = _identifier(name, set())
        self.lines = []
        self.files = {}
        self.names = {}       # operand id -> NNEF identifier
        self.used = set()
        self.dtypes = {}      # NNEF identifier -> NNEF dtype
        self.counter = 0
        self.node = None
        self.const_cache = {}
        self.folded = {}
        from .api import EXPORT_HINTS
        hints = EXPORT_HINTS.get(graph) or {}
        self.hint_names = hints.get("names", {})
        self.hint_labels = hints.get("labels", {})
        self.labels_used = set()

    # ------------------------------------------------------------------ plumbing
    def unsupported(self, reason):
        op = self.node.op.name if self.node is not None else "export"
        return NNEFUnsupportedError(op, f"cannot export to NNEF: {reason}")

    def fresh(self, base="t"):
        while True:
            self.counter += 1
            name = f"{base}{self.counter}"
            if name not in self.used:
                self.used.add(name)
                return name

    def emit(self, lhs, op, args, dtype=None, generic=None):
        """Append `lhs = op<generic>(args);`; args: positional idents, then (name, value) attributes."""
        parts = []
        for a in args:
            if isinstance(a, tuple) and len(a) == 2 and isinstance(a[0], str) and a[0].startswith("="):
                parts.append(f"{a[0][1:]} = {fmt(a[1]) if not isinstance(a[1], Ident) else a[1]}")
            else:
                parts.append(a if isinstance(a, (str, Ident)) else fmt(a))
        gen = f"<{generic}>" if generic else ""
        lhs_text = lhs if isinstance(lhs, str) else "[" + ", ".join(lhs) + "]"
        self.lines.append(f"    {lhs_text} = {op}{gen}({', '.join(str(p) for p in parts)});")
        if dtype is not None:
            for n in ([lhs] if isinstance(lhs, str) else lhs):
                self.dtypes[n] = dtype

    def tmp(self, op, args, dtype="scalar", generic=None):
        name = self.fresh()
        self.emit(name, op, args, dtype, generic)
        return name

    def const_like(self, operand):
        """(value, WebNN type, origin operand id) for constants and reshaped/transposed constants."""
        if operand.kind == "constant":
            return np.asarray(operand.value), operand.dtype, operand.id
        return self.folded.get(operand.id)

    def ref(self, operand):
        if operand.id not in self.names:
            c = self.const_like(operand)
            if c is not None:
                self.names[operand.id] = self.constant(c[0], c[1], c[2])
        return self.names[operand.id]

    def ref_as(self, operand, shape=None, perm=None):
        """`operand` reshaped (or transposed); constants are written in that form directly."""
        c = self.const_like(operand)
        if c is not None:
            value = c[0]
            if perm is not None:
                value = np.transpose(value, perm)
            if shape is not None:
                value = value.reshape(shape)
            if list(value.shape) == list(c[0].shape) and perm is None:
                return self.ref(operand)
            key = (operand.id, tuple(value.shape), tuple(perm) if perm is not None else None)
            if key not in self.const_cache:
                self.const_cache[key] = self.constant(value, c[1], c[2])
            return self.const_cache[key]
        ident = self.ref(operand)
        d, g = self._generic(ident)
        if perm is not None and list(perm) != list(range(len(perm))):
            ident = self.tmp("transpose", [ident, ("=axes", list(perm))], d, g)
        if shape is not None and list(shape) != list(operand.shape):
            ident = self.tmp("reshape", [ident, ("=shape", list(shape))], d, g)
        return ident

    # ------------------------------------------------------------------ graph
    def run(self):
        g = self.graph
        outputs = list(g.outputs.values())
        nodes = reachable_nodes(outputs)
        out_names = {}
        for name, operand in g.outputs.items():
            out_names.setdefault(operand.id, _identifier(name, self.used))
        params = []
        for name, operand in g.inputs.items():
            ident = _identifier(name, self.used)
            self.names[operand.id] = ident
            params.append((name, ident, operand))
        for _, ident, operand in params:
            dtype = _dtype(operand.dtype)
            self.emit(ident, "external", [("=shape", list(operand.shape))], dtype,
                      None if dtype == "scalar" else dtype)
        for node in nodes:
            self.node = node
            handler = getattr(self, "op_" + node.op.name, None)
            if handler is None:
                raise self.unsupported(f"WebNN '{node.op.name}' has no exact NNEF 1.0 equivalent")
            args, options = node.call_args()
            src = node.inputs[0] if node.inputs else None
            if node.op.name in ("reshape", "transpose") and src is not None and node.outputs[0].id not in out_names \
                    and self.const_like(src) is not None:
                value, wtype, origin = self.const_like(src)
                if node.op.name == "reshape":
                    value = value.reshape(node.outputs[0].shape)
                else:
                    perm = options.get("permutation")
                    value = np.transpose(value, None if perm is None else list(perm))
                self.folded[node.outputs[0].id] = (value, wtype, origin)
                continue
            mark = len(self.lines)
            result = handler(node, *args, **options)
            results = result if isinstance(result, list) else [result]
            for operand, ident in zip(node.outputs, results):
                want = out_names.get(operand.id)
                if want is None and operand.id in self.hint_names:
                    hinted = self.hint_names[operand.id]
                    if hinted not in self.used and _identifier(hinted, set()) == hinted:
                        want = hinted
                        self.used.add(hinted)
                if want is not None and len(results) == 1 and len(self.lines) > mark and \
                        self.lines[-1].startswith(f"    {ident} = "):
                    self.lines[-1] = f"    {want} = " + self.lines[-1][len(f"    {ident} = "):]
                    self.dtypes[want] = self.dtypes.pop(ident, "scalar")
                    ident = want
                self.names[operand.id] = ident
        self.node = None
        results = []
        for name, operand in g.outputs.items():
            ident = self.names[operand.id]
            want = out_names[operand.id]
            if ident != want:
                generic = self.dtypes.get(ident, "scalar")
                self.emit(want, "copy", [ident], generic, None if generic == "scalar" else generic)
                self.names[operand.id] = want
            results.append(want)
        header = [f"version 1.0;", "", f"graph {self.name}( {', '.join(p[1] for p in params)} ) -> "
                  f"( {', '.join(dict.fromkeys(results))} )", "{"]
        text = "\n".join(header + self.lines + ["}"]) + "\n"
        mapping = {"inputs": {p[0]: p[1] for p in params},
                   "outputs": {name: self.names[o.id] for name, o in g.outputs.items()}}
        return text, self.files, mapping

    def constant(self, value, webnn_type, operand_id=None):
        """Emit a constant (inline) or variable (.dat file); returns its identifier."""
        dtype = _dtype(webnn_type)
        label = self.hint_labels.get(operand_id)
        if label is not None and label.lower() not in self.labels_used:
            self.labels_used.add(label.lower())
            ident = _identifier(self.hint_names.get(operand_id, "c"), self.used)
            data = value.astype(bool) if dtype == "logical" else value
            self.files[label.lstrip("/") + ".dat"] = dat.write_tensor(data)
            self.emit(ident, "variable", [("=shape", list(value.shape)), ("=label", label)], dtype,
                      None if dtype == "scalar" else dtype)
            return ident
        if webnn_type == "uint8" and not np.isin(value, (0, 1)).all():
            raise NNEFUnsupportedError("constant", "uint8 constants other than 0/1 have no NNEF equivalent")
        ident = self.fresh("c")
        generic = None if dtype == "scalar" else dtype
        if value.size <= SMALL_CONSTANT and (dtype != "scalar" or np.isfinite(value).all()):
            items = [bool(v) if dtype == "logical" else (int(v) if dtype == "integer" else float(v))
                     for v in value.reshape(-1)]
            if len(set(items)) == 1 and items:
                items = items[:1]
            self.emit(ident, "constant", [("=shape", list(value.shape)), ("=value", items)], dtype, generic)
        else:
            label = ident
            data = value.astype(bool) if dtype == "logical" else value
            if data.dtype == np.uint32 or data.dtype == np.uint64:
                data = data.astype(np.int64)
            self.files[label + ".dat"] = dat.write_tensor(data)
            self.emit(ident, "variable", [("=shape", list(value.shape)), ("=label", label)], dtype, generic)
        return ident

    # ------------------------------------------------------------------ helpers
    def scalar_only(self, *operands):
        for o in operands:
            if o is not None and o.dtype not in ("float32", "float16"):
                raise self.unsupported(f"NNEF arithmetic is defined on scalar tensors only, found {o.dtype}")

    def aligned(self, operand, rank):
        if 0 < len(operand.shape) < rank:
            return self.ref_as(operand, [1] * (rank - len(operand.shape)) + list(operand.shape))
        return self.ref(operand)

    def operands_aligned(self, *operands):
        rank = max(len(o.shape) for o in operands)
        return [self.aligned(o, rank) for o in operands]

    def out_dtype(self, node):
        return _dtype(node.outputs[0].dtype)

    # ------------------------------------------------------------------ element-wise
    def _unary(nnef):
        def handler(self, node, x, **o):
            self.scalar_only(x)
            return self.tmp(nnef, [self.ref(x)])
        return handler

    for _w, _n in {"abs": "abs", "ceil": "ceil", "cos": "cos", "exp": "exp", "floor": "floor", "log": "log",
                   "neg": "neg", "reciprocal": "rcp", "sin": "sin", "sqrt": "sqrt", "tan": "tan", "tanh": "tanh",
                   "sigmoid": "sigmoid", "relu": "relu", "sign": "sign", "softplus": "softplus"}.items():
        locals()["op_" + _w] = _unary(_n)

    def _binary(nnef, logical_out=False):
        def handler(self, node, a, b, **o):
            self.scalar_only(a, b)
            x, y = self.operands_aligned(a, b)
            return self.tmp(nnef, [x, y], "logical" if logical_out else "scalar")
        return handler

    for _w, _n in {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min",
                   "pow": "pow"}.items():
        locals()["op_" + _w] = _binary(_n)
    for _w, _n in {"equal": "eq", "notEqual": "ne", "greater": "gt", "greaterOrEqual": "ge", "lesser": "lt",
                   "lesserOrEqual": "le"}.items():
        locals()["op_" + _w] = _binary(_n, True)
    del _w, _n

    def _logical(self, a, b):
        x, y = self.operands_aligned(a, b)
        return x, y

    def op_logicalAnd(self, node, a, b, **o):
        return self.tmp("and", list(self._logical(a, b)), "logical")

    def op_logicalOr(self, node, a, b, **o):
        return self.tmp("or", list(self._logical(a, b)), "logical")

    def op_logicalXor(self, node, a, b, **o):
        x, y = self._logical(a, b)
        either = self.tmp("or", [x, y], "logical")
        both = self.tmp("and", [x, y], "logical")
        return self.tmp("and", [either, self.tmp("not", [both], "logical")], "logical")

    def op_logicalNot(self, node, a, **o):
        return self.tmp("not", [self.ref(a)], "logical")

    def op_identity(self, node, x, **o):
        dtype = self.dtypes.get(self.ref(x), "scalar")
        return self.tmp("copy", [self.ref(x)], dtype, None if dtype == "scalar" else dtype)

    def op_elu(self, node, x, alpha=1.0, **o):
        return self.tmp("elu", [self.ref(x), ("=alpha", float(alpha))])

    def op_leakyRelu(self, node, x, alpha=0.01, **o):
        return self.tmp("leaky_relu", [self.ref(x), ("=alpha", float(alpha))])

    def op_linear(self, node, x, alpha=1.0, beta=0.0, **o):
        t = self.tmp("mul", [self.ref(x), float(alpha)])
        return self.tmp("add", [t, float(beta)])

    def op_hardSigmoid(self, node, x, alpha=0.2, beta=0.5, **o):
        t = self.tmp("add", [self.tmp("mul", [self.ref(x), float(alpha)]), float(beta)])
        return self.tmp("clamp", [t, 0.0, 1.0])

    def op_hardSwish(self, node, x, **o):
        t = self.tmp("clamp", [self.tmp("add", [self.ref(x), 3.0]), 0.0, 6.0])
        return self.tmp("div", [self.tmp("mul", [self.ref(x), t]), 6.0])

    def op_softsign(self, node, x, **o):
        return self.tmp("div", [self.ref(x), self.tmp("add", [self.tmp("abs", [self.ref(x)]), 1.0])])

    def op_clamp(self, node, x, minValue=None, maxValue=None, **o):
        self.scalar_only(x)
        lo = None if minValue is None or float(minValue) == -math.inf else float(minValue)
        hi = None if maxValue is None or float(maxValue) == math.inf else float(maxValue)
        if lo is not None and hi is not None:
            return self.tmp("clamp", [self.ref(x), lo, hi])
        if lo is not None:
            return self.tmp("max", [self.ref(x), lo])
        if hi is not None:
            return self.tmp("min", [self.ref(x), hi])
        return self.tmp("copy", [self.ref(x)])

    def op_where(self, node, c, t, f, **o):
        dtype = self.out_dtype(node)
        cc, tt, ff = self.operands_aligned(c, t, f)
        return self.tmp("select", [cc, tt, ff], dtype, None if dtype == "scalar" else dtype)

    def op_prelu(self, node, x, slope, **o):
        return self.tmp("prelu", [self.ref(x), self.aligned(slope, len(x.shape))])

    def op_softmax(self, node, x, axis, **o):
        return self.tmp("softmax", [self.ref(x), ("=axes", [int(axis)])])

    def op_cast(self, node, x, type, **o):
        src, dst = x.dtype, type
        if dst in ("float32", "float16"):
            if src in ("float32", "float16"):
                return self.tmp("copy", [self.ref(x)])
            return self.tmp("cast", [self.ref(x)], "scalar", "scalar")
        if dst in ("int32", "int64") and src not in ("uint8",):
            return self.tmp("cast", [self.ref(x)], "integer", "integer")
        raise self.unsupported(f"cast from {src} to {dst}")

    # ------------------------------------------------------------------ layout helpers
    def to_nchw(self, ident, layout):
        if layout == "nhwc":
            return self.tmp("transpose", [ident, ("=axes", [0, 3, 1, 2])])
        return ident

    def from_nchw(self, ident, layout):
        if layout == "nhwc":
            return self.tmp("transpose", [ident, ("=axes", [0, 2, 3, 1])])
        return ident

    def permuted(self, operand, perm):
        """`operand` transposed by `perm` (constants are transposed in the file)."""
        if list(perm) == list(range(len(perm))):
            return self.ref(operand)
        return self.ref_as(operand, perm=perm)

    def bias_2d(self, bias):
        if bias is None:
            return 0.0
        return self.ref_as(bias, [1, bias.shape[0]])

    # ------------------------------------------------------------------ convolution / pooling
    def op_conv2d(self, node, x, w, padding=None, strides=None, dilations=None, groups=1, inputLayout="nchw",
                  filterLayout="oihw", bias=None, **o):
        self.scalar_only(x, w)
        to_oihw = {"oihw": [0, 1, 2, 3], "hwio": [3, 2, 0, 1], "ohwi": [0, 3, 1, 2], "ihwo": [3, 0, 1, 2]}[filterLayout]
        p = list(padding or [0, 0, 0, 0])
        y = self.tmp("conv", [self.to_nchw(self.ref(x), inputLayout), self.permuted(w, to_oihw), self.bias_2d(bias),
                              ("=border", "constant"), ("=padding", [(p[0], p[1]), (p[2], p[3])]),
                              ("=stride", list(strides or [1, 1])), ("=dilation", list(dilations or [1, 1])),
                              ("=groups", int(groups))])
        return self.from_nchw(y, inputLayout)

    def op_convTranspose2d(self, node, x, w, padding=None, strides=None, dilations=None, outputPadding=None,
                           outputSizes=None, groups=1, inputLayout="nchw", filterLayout="iohw", bias=None, **o):
        self.scalar_only(x, w)
        to_iohw = {"iohw": [0, 1, 2, 3], "hwoi": [3, 2, 0, 1], "ohwi": [3, 0, 1, 2]}[filterLayout]
        p = list(padding or [0, 0, 0, 0])
        out = list(node.outputs[0].shape)
        if inputLayout == "nhwc":
            out = [out[0], out[3], out[1], out[2]]
        y = self.tmp("deconv", [self.to_nchw(self.ref(x), inputLayout), self.permuted(w, to_iohw), self.bias_2d(bias),
                                ("=border", "constant"), ("=padding", [(p[0], p[1]), (p[2], p[3])]),
                                ("=stride", list(strides or [1, 1])), ("=dilation", list(dilations or [1, 1])),
                                ("=output_shape", out), ("=groups", int(groups))])
        return self.from_nchw(y, inputLayout)

    def _pool(self, node, x, nnef, windowDimensions=None, padding=None, strides=None, dilations=None,
              layout="nchw", outputShapeRounding="floor", outputSizes=None, square=False):
        self.scalar_only(x)
        in_hw = list(node.inputs[0].shape[2:4] if layout == "nchw" else node.inputs[0].shape[1:3])
        out_shape = node.outputs[0].shape
        out_hw = list(out_shape[2:4] if layout == "nchw" else out_shape[1:3])
        window = list(windowDimensions if windowDimensions is not None else in_hw)
        pads = list(padding if padding is not None else [0, 0, 0, 0])
        st = list(strides if strides is not None else [1, 1])
        dil = list(dilations if dilations is not None else [1, 1])
        # ceil rounding / outputSizes: extend the end padding; 'ignore' leaves it out of the reduction
        for k in range(2):
            fd = (window[k] - 1) * dil[k] + 1
            need = (out_hw[k] - 1) * st[k] + fd - (in_hw[k] + pads[2 * k] + pads[2 * k + 1])
            if need > 0:
                pads[2 * k + 1] += need
        xi = self.to_nchw(self.ref(x), layout)
        if square:
            xi = self.tmp("sqr", [xi])
        y = self.tmp(nnef, [xi, ("=size", [1, 1] + window),
                            ("=border", "constant" if square else "ignore"),
                            ("=padding", [(0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])]),
                            ("=stride", [1, 1] + st), ("=dilation", [1, 1] + dil)])
        if square:
            y = self.tmp("sqrt", [y])
        return self.from_nchw(y, layout)

    def op_averagePool2d(self, node, x, **o):
        return self._pool(node, x, "avg_pool", **o)

    def op_maxPool2d(self, node, x, **o):
        return self._pool(node, x, "max_pool", **o)

    def op_l2Pool2d(self, node, x, **o):
        return self._pool(node, x, "box", square=True, **o)

    # ------------------------------------------------------------------ reductions
    def _reduce(self, node, x, nnef, axes, keep, pre=None, post=None):
        self.scalar_only(x)
        rank = len(x.shape)
        axes = list(range(rank)) if axes is None else [int(a) for a in axes]
        ident = self.ref(x)
        if pre:
            ident = self.tmp(pre, [ident])
        if axes:
            y = self.tmp(nnef, [ident, ("=axes", axes)])
        else:
            y = self.tmp("copy", [ident])
        if post:
            y = self.tmp(post, [y])
        if not keep and axes:
            y = self.tmp("squeeze", [y, ("=axes", axes)])
        return y

    def op_reduceSum(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "sum_reduce", axes, keepDimensions)

    def op_reduceMean(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "mean_reduce", axes, keepDimensions)

    def op_reduceMax(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "max_reduce", axes, keepDimensions)

    def op_reduceMin(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "min_reduce", axes, keepDimensions)

    def op_reduceL1(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "sum_reduce", axes, keepDimensions, pre="abs")

    def op_reduceL2(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "sum_reduce", axes, keepDimensions, pre="sqr", post="sqrt")

    def op_reduceSumSquare(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "sum_reduce", axes, keepDimensions, pre="sqr")

    def op_reduceLogSum(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "sum_reduce", axes, keepDimensions, post="log")

    def op_reduceLogSumExp(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce(node, x, "sum_reduce", axes, keepDimensions, pre="exp", post="log")

    def _arg(self, node, x, axis, keepDimensions, nnef):
        self.scalar_only(x)
        y = self.tmp(nnef, [self.ref(x), ("=axes", [int(axis)])], "integer")
        if not keepDimensions:
            y = self.tmp("squeeze", [y, ("=axes", [int(axis)])], "integer", "integer")
        return y

    def op_argMax(self, node, x, axis, keepDimensions=False, outputDataType="int32", **o):
        return self._arg(node, x, axis, keepDimensions, "argmax_reduce")

    def op_argMin(self, node, x, axis, keepDimensions=False, outputDataType="int32", **o):
        return self._arg(node, x, axis, keepDimensions, "argmin_reduce")

    # ------------------------------------------------------------------ shapes
    def _generic(self, ident):
        d = self.dtypes.get(ident, "scalar")
        return d, (None if d == "scalar" else d)

    def op_reshape(self, node, x, newShape, **o):
        d, g = self._generic(self.ref(x))
        return self.tmp("reshape", [self.ref(x), ("=shape", [int(v) for v in newShape])], d, g)

    def op_transpose(self, node, x, permutation=None, **o):
        d, g = self._generic(self.ref(x))
        perm = list(range(len(x.shape)))[::-1] if permutation is None else [int(p) for p in permutation]
        return self.tmp("transpose", [self.ref(x), ("=axes", perm)], d, g)

    def op_concat(self, node, inputs, axis, **o):
        d, g = self._generic(self.ref(inputs[0]))
        return self.tmp("concat", ["[" + ", ".join(self.ref(i) for i in inputs) + "]", ("=axis", int(axis))], d, g)

    def op_split(self, node, x, splits, axis=0, **o):
        d, g = self._generic(self.ref(x))
        sizes = [o.shape[axis] for o in node.outputs]
        names = [self.fresh() for _ in sizes]
        self.emit(names, "split", [self.ref(x), ("=axis", int(axis)), ("=ratios", sizes)], d, g)
        return names

    def op_slice(self, node, x, starts, sizes, strides=None, **o):
        d, g = self._generic(self.ref(x))
        axes, begin, end, stride = [], [], [], []
        for ax, (s, n) in enumerate(zip(starts, sizes)):
            st = 1 if strides is None else int(strides[ax])
            if s == 0 and n == x.shape[ax] and st == 1:
                continue
            axes.append(ax)
            begin.append(int(s))
            end.append(int(s + n))
            stride.append(st)
        if not axes:
            return self.tmp("copy", [self.ref(x)], d, g)
        args = [self.ref(x), ("=axes", axes), ("=begin", begin), ("=end", end)]
        if any(s != 1 for s in stride):
            args.append(("=stride", stride))
        return self.tmp("slice", args, d, g)

    def op_reverse(self, node, x, axes=None, **o):
        d, g = self._generic(self.ref(x))
        axes = list(range(len(x.shape))) if axes is None else [int(a) for a in axes]
        if not axes:
            return self.tmp("copy", [self.ref(x)], d, g)
        return self.tmp("slice", [self.ref(x), ("=axes", axes), ("=begin", [-1] * len(axes)),
                                  ("=end", [-(x.shape[a] + 1) for a in axes]), ("=stride", [-1] * len(axes))], d, g)

    def op_expand(self, node, x, newShape, **o):
        d, g = self._generic(self.ref(x))
        new = [int(v) for v in newShape]
        ident = self.aligned(x, len(new))
        old = [1] * (len(new) - len(x.shape)) + list(x.shape)
        reps = [n // s for n, s in zip(new, old)]
        if all(r == 1 for r in reps):
            return self.tmp("copy", [ident], d, g)
        return self.tmp("tile", [ident, ("=repeats", reps)], d, g)

    def op_tile(self, node, x, repetitions, **o):
        d, g = self._generic(self.ref(x))
        return self.tmp("tile", [self.ref(x), ("=repeats", [int(r) for r in repetitions])], d, g)

    def op_pad(self, node, x, beginningPadding, endingPadding, mode="constant", value=0, **o):
        self.scalar_only(x)
        border = {"constant": "constant", "edge": "replicate", "reflection": "reflect", "symmetric": "reflect-even"}[mode]
        pads = [(int(b), int(e)) for b, e in zip(beginningPadding, endingPadding)]
        return self.tmp("pad", [self.ref(x), ("=padding", pads), ("=border", border), ("=value", float(value))])

    def op_gather(self, node, x, indices, axis=0, **o):
        d, g = self._generic(self.ref(x))
        if indices.dtype not in ("int32", "int64", "uint32"):
            raise self.unsupported(f"gather indices of type {indices.dtype}")
        return self.tmp("gather", [self.ref(x), self.ref(indices), ("=axis", int(axis))], d, g)

    def op_triangular(self, node, x, upper=True, diagonal=0, **o):
        self.scalar_only(x)
        rows, cols = x.shape[-2:]
        offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
        mask = (offset >= diagonal) if upper else (offset <= diagonal)
        label = self.fresh("c")
        self.files[label + ".dat"] = dat.write_tensor(mask.astype(np.float32))
        self.emit(label, "variable", [("=shape", [rows, cols]), ("=label", label)], "scalar")
        m = label if len(x.shape) == 2 else self.tmp("unsqueeze", [label, ("=axes", list(range(len(x.shape) - 2)))])
        return self.tmp("mul", [self.ref(x), m])

    # ------------------------------------------------------------------ linear algebra
    def op_matmul(self, node, a, b, **o):
        self.scalar_only(a, b)
        x, y = self.operands_aligned(a, b)
        return self.tmp("matmul", [x, y])

    def op_gemm(self, node, a, b, c=None, alpha=1.0, beta=1.0, aTranspose=False, bTranspose=False, **o):
        self.scalar_only(a, b, c)
        m, n = node.outputs[0].shape
        if (c is not None and alpha == 1.0 and beta == 1.0 and not aTranspose and bTranspose
                and list(c.shape) in ([1, n], [n])):
            return self.tmp("linear", [self.ref(a), self.ref(b), self.ref_as(c, [1, n])])
        if c is None and alpha == 1.0 and not aTranspose and bTranspose:
            return self.tmp("linear", [self.ref(a), self.ref(b), 0.0])
        y = self.tmp("matmul", [self.ref(a), self.ref(b), ("=transposeA", bool(aTranspose)),
                                ("=transposeB", bool(bTranspose))])
        if alpha != 1.0:
            y = self.tmp("mul", [y, float(alpha)])
        if c is not None and beta != 0.0:
            cc = self.aligned(c, 2)
            if beta != 1.0:
                cc = self.tmp("mul", [cc, float(beta)])
            y = self.tmp("add", [y, cc])
        return y

    # ------------------------------------------------------------------ normalization
    def _param_along(self, p, axis, rank):
        if p is None:
            return None
        shape = [1] * rank
        shape[axis] = p.shape[0]
        return self.ref_as(p, shape[:axis + 1])

    def op_batchNormalization(self, node, x, mean, variance, scale=None, bias=None, axis=1, epsilon=1e-5, **o):
        self.scalar_only(x, mean, variance, scale, bias)
        rank = len(x.shape)
        args = [self.ref(x), self._param_along(mean, axis, rank), self._param_along(variance, axis, rank),
                self._param_along(bias, axis, rank) or 0.0, self._param_along(scale, axis, rank) or 1.0]
        return self.tmp("batch_normalization", args + [("=epsilon", float(epsilon))])

    def _normalize(self, x, axes, scale, bias, epsilon, param_shape):
        mean = self.fresh()
        var = self.fresh()
        self.emit(f"{mean}, {var}", "moments", [self.ref(x), ("=axes", list(axes))])
        self.dtypes[mean] = self.dtypes[var] = "scalar"
        y = self.tmp("div", [self.tmp("sub", [self.ref(x), mean]),
                             self.tmp("sqrt", [self.tmp("add", [var, float(epsilon)])])])
        for p, op in ((scale, "mul"), (bias, "add")):
            if p is not None:
                y = self.tmp(op, [y, self.ref_as(p, param_shape)])
        return y

    def op_instanceNormalization(self, node, x, scale=None, bias=None, epsilon=1e-5, layout="nchw", **o):
        self.scalar_only(x, scale, bias)
        if layout != "nchw":
            raise self.unsupported("instanceNormalization with layout nhwc")
        return self._normalize(x, [2, 3], scale, bias, epsilon, [1, x.shape[1]])

    def op_layerNormalization(self, node, x, scale=None, bias=None, axes=None, epsilon=1e-5, **o):
        self.scalar_only(x, scale, bias)
        rank = len(x.shape)
        axes = list(range(1, rank)) if axes is None else [int(a) for a in axes]
        shape = [x.shape[d] if d in axes else 1 for d in range(rank)]
        if axes != sorted(axes) and (scale is not None or bias is not None):
            raise self.unsupported("layerNormalization with unsorted axes and scale/bias")
        if not axes:
            raise self.unsupported("layerNormalization without axes")
        return self._normalize(x, axes, scale, bias, epsilon, shape)

    def op_resample2d(self, node, x, mode="nearest-neighbor", scales=None, sizes=None, axes=None, **o):
        self.scalar_only(x)
        axes = [2, 3] if axes is None else list(axes)
        out = node.outputs[0].shape
        factors = [out[a] // x.shape[a] if out[a] % x.shape[a] == 0 else None for a in axes]
        if axes != [2, 3] or None in factors:
            raise self.unsupported("resample2d other than integer up-scaling of axes [2, 3]")
        if all(f == 1 for f in factors):
            return self.tmp("copy", [self.ref(x)])
        if mode == "nearest-neighbor":
            return self.tmp("nearest_upsample", [self.ref(x), ("=factor", factors)])
        return self.tmp("multilinear_upsample", [self.ref(x), ("=factor", factors), ("=method", "symmetric"),
                                                 ("=border", "replicate")])


class Ident(str):
    pass


def _identifier(name, used):
    base = "".join(c if (c.isascii() and (c.isalnum() or c == "_")) else "_" for c in str(name)) or "t"
    if base[0].isdigit() or base in KEYWORDS:
        base = "_" + base
    ident, k = base, 1
    while ident in used:
        k += 1
        ident = f"{base}_{k}"
    used.add(ident)
    return ident


def export_graph(graph, name: str = "G"):
    """(graph.nnef text, {path: .dat bytes}, {'inputs': {...}, 'outputs': {...}} name mapping)."""
    return Exporter(graph, name).run()


def save(graph, path: str, name: str = "G"):
    """Write a built WebNN graph as an NNEF model: a folder, or a .tar/.tgz/.tar.gz archive."""
    text, files, mapping = export_graph(graph, name)
    files = {"graph.nnef": text.encode(), **files}
    write_files(files, path)
    return mapping


def write_files(files: dict, path: str):
    if path.endswith((".tgz", ".tar.gz", ".tar")):
        mode = "w:gz" if path.endswith(("gz",)) else "w"
        with tarfile.open(path, mode) as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                info.mtime = 0
                tar.addfile(info, io.BytesIO(data))
        return
    os.makedirs(path, exist_ok=True)
    for name, data in files.items():
        target = os.path.join(path, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(data)
