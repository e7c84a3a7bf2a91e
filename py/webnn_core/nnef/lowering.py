"""Lowering: a flat `NNEFGraph` onto an `MLGraphBuilder` (the core's
`GraphBuilder`), one NNEF operation at a time.

Conventions (see docs/nnef.md):
* data types: scalar -> float32 (float16/float64 weights are converted),
  integer -> int32 (range-checked), logical -> uint8 holding 0/1;
* NNEF broadcasting aligns shapes at the left: every binary/ternary operand of
  lower rank is reshaped with trailing 1s before the WebNN op;
* literals in tensor positions are rank-0 constants;
* sliding windows: padding/stride/dilation per NNEF (automatic padding, negative
  padding = cropping, border modes as explicit `pad`s; windows over any
  dimension become separable 1-D pool passes);
* `round` is floor(x + 0.5) (spec formula), `cast` to integer truncates toward
  zero (WebNN cast), `gelu` is x * sigmoid(1.702 x) unless gelu="exact";
* variables are constants; a variable that `update` targets becomes a graph
  input and the update's result an extra output (see `LoweredGraph.state`).

Operations with no WebNN expression raise `NNEFUnsupportedError` naming the
operation and its position.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import WebNNError
from ..ops import ops as webnn_ops
from ..schema import enum_values
from . import shapes as S
from .errors import NNEFDataError, NNEFSemanticError, NNEFUnsupportedError
from .stdlib import standard_fragments

WEBNN_TYPES = {"scalar": "float32", "integer": "int32", "logical": "uint8"}
NUMPY_TYPES = {"scalar": np.float32, "integer": np.int32, "logical": np.uint8}
PAD_MODES = {"constant": "constant", "replicate": "edge", "reflect": "reflection", "reflect-even": "symmetric"}

DIRECT_UNARY = {"copy": "identity", "neg": "neg", "rcp": "reciprocal", "exp": "exp", "log": "log", "sin": "sin",
                "cos": "cos", "tan": "tan", "tanh": "tanh", "abs": "abs", "floor": "floor", "ceil": "ceil",
                "sqrt": "sqrt", "sign": "sign", "not": "logicalNot", "relu": "relu", "sigmoid": "sigmoid",
                "softplus": "softplus"}
DIRECT_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "pow": "pow", "min": "min", "max": "max",
                 "lt": "lesser", "gt": "greater", "le": "lesserOrEqual", "ge": "greaterOrEqual", "eq": "equal",
                 "ne": "notEqual", "and": "logicalAnd", "or": "logicalOr"}
UNSUPPORTED = {
    "avg_roi_pool": "RoI pooling windows depend on run-time RoI values; WebNN has no crop or RoI operation",
    "max_roi_pool": "RoI pooling windows depend on run-time RoI values; WebNN has no crop or RoI operation",
    "roi_resample": "RoI resampling needs run-time coordinate arithmetic that WebNN cannot express",
    "avg_roi_align": "RoI align needs run-time coordinate arithmetic that WebNN cannot express",
    "max_roi_align": "RoI align needs run-time coordinate arithmetic that WebNN cannot express",
}


@dataclass
class LoweredGraph:
    """What lowering produced on the builder."""
    inputs: dict                 # NNEF graph input name -> Operand
    outputs: dict                # output name -> Operand (declared outputs, then update results)
    state: dict = field(default_factory=dict)       # variable input name -> update output name
    state_init: dict = field(default_factory=dict)  # variable input name -> initial numpy value
    operands: dict = field(default_factory=dict)    # every NNEF tensor name -> Operand


class Lowering:
    def __init__(self, graph, builder, gelu: str = "nnef", variables: str = "auto", quantization: bool = False):
        if gelu not in ("nnef", "exact"):
            raise ValueError("gelu must be 'nnef' or 'exact'")
        if variables not in ("auto", "constant", "state"):
            raise ValueError("variables must be 'auto', 'constant' or 'state'")
        self.g = graph
        self.b = builder
        self.gelu = gelu
        self.quantization = quantization
        updated = {op.inputs["variable"] for op in graph.operations if op.name == "update"}
        if updated and variables == "constant":
            self.stateful = set()
        else:
            self.stateful = updated
        self.variables = variables
        self.t = {}            # tensor name -> Operand
        self.shared = {}       # lower-cased label -> Operand
        self.state = {}
        self.state_init = {}
        self.extra_outputs = {}
        self.op = None

    # ------------------------------------------------------------------ plumbing
    def unsupported(self, reason, op=None):
        op = op or self.op
        p = op.pos
        return NNEFUnsupportedError(op.name, reason, p.file if p else None, p.line if p else None,
                                    p.column if p else None)

    def invalid(self, message):
        p = self.op.pos
        return NNEFSemanticError(f"operation '{self.op.name}': {message}", p.file if p else None,
                                 p.line if p else None, p.column if p else None)

    def w(self, name, *args, **options):
        """Call WebNN op `name` on the builder, naming the NNEF op in any failure."""
        if name not in webnn_ops():
            raise self.unsupported(f"it needs the WebNN operation '{name}', which this engine does not provide")
        try:
            return self.b.op(name, *args, **options)
        except WebNNError as e:
            raise self.invalid(f"WebNN {name} rejected the lowering: {e}") from None

    def const(self, array, dtype="float32"):
        array = np.asarray(array)
        try:
            return self.b.constant({"dataType": dtype, "shape": list(array.shape)}, array)
        except WebNNError as e:
            raise self.invalid(str(e)) from None

    def scalar(self, value, dtype="float32"):
        return self.b.constant_scalar(dtype, value)

    def get(self, value, dtype=None):
        """The operand for an operation input: a tensor, or a literal as a rank-0 constant."""
        if isinstance(value, str):
            return self.t[value]
        if isinstance(value, bool):
            return self.scalar(int(value), "uint8")
        if isinstance(value, int) and dtype in (None, "int32"):
            return self.scalar(value, "int32")
        return self.scalar(float(value) if dtype in (None, "float32") else value, dtype or "float32")

    def shape(self, name):
        return list(self.g.tensors[name].shape)

    def reshape(self, x, shape):
        shape = [int(d) for d in shape]
        if list(x.shape) == shape:
            return x
        return self.w("reshape", x, shape)

    def align(self, *xs):
        """NNEF left-aligned broadcasting: pad lower ranks with trailing 1s."""
        rank = max(len(x.shape) for x in xs)
        return [x if len(x.shape) in (0, rank) else self.reshape(x, list(x.shape) + [1] * (rank - len(x.shape)))
                for x in xs]

    def binary(self, name, a, b):
        a, b = self.align(a, b)
        return self.w(name, a, b)

    def is_literal(self, value):
        return not isinstance(value, (str, list))

    # ------------------------------------------------------------------ driver
    def run(self) -> LoweredGraph:
        standard = set(standard_fragments())
        for op in self.g.operations:
            self.op = op
            if op.name in UNSUPPORTED:
                raise self.unsupported(UNSUPPORTED[op.name])
            handler = getattr(self, "op_" + op.name, None) if op.name in standard else None
            if handler is None:
                raise self.unsupported("it is a custom operation without a body (no WebNN equivalent is known)")
            for name in op.output_names():
                shape = self.g.tensors[name].shape
                if shape is None:
                    raise self.unsupported("its result shape is unknown (it follows a custom operation)")
                if any(d == 0 for d in shape):
                    raise self.unsupported(f"its result '{name}' is empty (shape {shape}); WebNN has no empty tensors")
            results = handler(op)
            if not isinstance(results, tuple):
                results = (results,)
            for (key, names), value in zip(op.outputs.items(), results):
                if isinstance(names, list):
                    for n, v in zip(names, value):
                        self._set(n, v)
                else:
                    self._set(names, value)
            if self.quantization:
                self._fake_quantize(op)
        outputs = {}
        for name in self.g.outputs:
            operand = self.t[name]
            if operand.kind in ("input", "constant"):
                operand = self.w("identity", operand)
            outputs[name] = operand
        outputs.update(self.extra_outputs)
        inputs = {name: self.t[name] for name in self.g.inputs}
        return LoweredGraph(inputs, outputs, dict(self.state), dict(self.state_init), dict(self.t))

    def _set(self, name, operand):
        want = WEBNN_TYPES[self.g.tensors[name].dtype]
        if operand.dtype != want:
            raise self.invalid(f"internal: lowered '{name}' as {operand.dtype}, expected {want}")
        shape = self.g.tensors[name].shape
        if list(operand.shape) != list(shape):
            operand = self.reshape(operand, shape)
        self.t[name] = operand

    # ------------------------------------------------------------------ introducing
    def op_external(self, op):
        name = op.outputs["output"]
        try:
            return self.b.input(name, {"dataType": WEBNN_TYPES[op.dtype], "shape": list(op.attribs["shape"])})
        except WebNNError as e:
            raise self.invalid(str(e)) from None

    def op_constant(self, op):
        shape = list(op.attribs["shape"])
        value = np.asarray(op.attribs["value"])
        dtype = WEBNN_TYPES[op.dtype]
        value = value.astype(NUMPY_TYPES[op.dtype])
        data = np.full(shape, value[0], dtype=value.dtype) if value.size == 1 else value.reshape(shape)
        return self.const(data, dtype)

    def op_variable(self, op):
        name = op.outputs["output"]
        tensor = self.g.tensors[name]
        label = op.attribs["label"]
        data = tensor.data
        if name in self.stateful:
            dtype = WEBNN_TYPES[op.dtype]
            value = convert_data(data, op.dtype, label, tensor.shape) if data is not None else \
                np.zeros(tensor.shape, NUMPY_TYPES[op.dtype])
            self.state_init[name] = value
            try:
                return self.b.input(name, {"dataType": dtype, "shape": list(tensor.shape)})
            except WebNNError as e:
                raise self.invalid(str(e)) from None
        key = label.lower()
        if key in self.shared:
            return self.shared[key]
        if data is None:
            p = op.pos
            raise NNEFDataError(f"no data for variable '{label}' (expected '{label.lstrip('/')}.dat' in the model)",
                                p.file if p else None, p.line if p else None, p.column if p else None)
        operand = self.const(convert_data(data, op.dtype, label, tensor.shape), WEBNN_TYPES[op.dtype])
        self.shared[key] = operand
        return operand

    def op_update(self, op):
        var = op.inputs["variable"]
        if var not in self.stateful:
            if self.variables == "constant":
                raise self.unsupported("WebNN graphs are stateless; load with variables='state' (or 'auto') to turn "
                                       "updated variables into inputs and their updates into outputs")
            raise self.invalid(f"'variable' must be a tensor created by 'variable', found '{var}'")
        value = self.get(op.inputs["value"], WEBNN_TYPES[op.dtype])
        result = self.w("identity", self.reshape(value, self.shape(var)) if len(value.shape) else
                        self.w("expand", value, self.shape(var)))
        out = op.outputs["result"]
        self.state[var] = out
        self.extra_outputs[out] = result
        return result

    # ------------------------------------------------------------------ element-wise
    def _unary(self, webnn):
        def handler(op):
            return self.w(webnn, self.get(op.inputs["x"], WEBNN_TYPES.get(op.dtype or "scalar")))
        return handler

    def _binary(self, webnn):
        def handler(op):
            return self.binary(webnn, self.get(op.inputs["x"]), self.get(op.inputs["y"]))
        return handler

    def __getattr__(self, name):
        if name.startswith("op_"):
            nnef = name[3:]
            if nnef in DIRECT_UNARY:
                return self._unary(DIRECT_UNARY[nnef])
            if nnef in DIRECT_BINARY:
                return self._binary(DIRECT_BINARY[nnef])
        raise AttributeError(name)

    def x(self, op, key="x"):
        return self.get(op.inputs[key])

    def op_copy(self, op):
        return self.w("identity", self.get(op.inputs["x"], WEBNN_TYPES[op.dtype]))

    def op_round(self, op):
        # Spec §4.2.1: floor(x + 0.5) (ties round up; the reference executor rounds them away from zero).
        return self.w("floor", self.w("add", self.x(op), self.scalar(0.5)))

    def op_sqr(self, op):
        x = self.x(op)
        return self.w("mul", x, x)

    def op_rsqr(self, op):
        x = self.x(op)
        return self.w("reciprocal", self.w("mul", x, x))

    def op_rsqrt(self, op):
        return self.w("reciprocal", self.w("sqrt", self.x(op)))

    def op_log2(self, op):
        return self.w("mul", self.w("log", self.x(op)), self.scalar(1.0 / math.log(2.0)))

    def _exp_pair(self, x):
        return self.w("exp", x), self.w("exp", self.w("neg", x))

    def op_sinh(self, op):
        x = self.x(op)
        ep, en = self._exp_pair(x)
        big = self.w("mul", self.w("sub", ep, en), self.scalar(0.5))
        # Near 0 the difference cancels: use the Taylor series there (|x| < 0.5, error < 1e-9).
        x2 = self.w("mul", x, x)
        poly = self.scalar(1.0 / 5040.0)
        for c in (1.0 / 120.0, 1.0 / 6.0, 1.0):
            poly = self.w("add", self.w("mul", poly, x2), self.scalar(c))
        small = self.w("mul", poly, x)
        return self.w("where", self.w("lesser", self.w("abs", x), self.scalar(0.5)), small, big)

    def op_cosh(self, op):
        ep, en = self._exp_pair(self.x(op))
        return self.w("mul", self.w("add", ep, en), self.scalar(0.5))

    def op_asinh(self, op):
        x = self.x(op)
        a = self.w("abs", x)
        r = self.w("log", self.w("add", a, self.w("sqrt", self.w("add", self.w("mul", a, a), self.scalar(1.0)))))
        return self.w("mul", self.w("sign", x), r)

    def op_acosh(self, op):
        x = self.x(op)
        return self.w("log", self.w("add", x, self.w("sqrt", self.w("sub", self.w("mul", x, x), self.scalar(1.0)))))

    def op_atanh(self, op):
        x = self.x(op)
        one = self.scalar(1.0)
        ratio = self.w("div", self.w("add", one, x), self.w("sub", one, x))
        return self.w("mul", self.w("log", ratio), self.scalar(0.5))

    def atan(self, x):
        """atan by range reduction and a minimax polynomial (Cephes atanf, ~1e-7)."""
        sign = self.w("sign", x)
        a = self.w("abs", x)
        one = self.scalar(1.0)
        big = self.w("greater", a, self.scalar(2.414213562373095))
        mid = self.w("greater", a, self.scalar(0.4142135623730950))
        t_big = self.w("neg", self.w("reciprocal", a))
        t_mid = self.w("div", self.w("sub", a, one), self.w("add", a, one))
        t = self.w("where", big, t_big, self.w("where", mid, t_mid, a))
        base = self.w("where", big, self.scalar(math.pi / 2),
                      self.w("where", mid, self.scalar(math.pi / 4), self.scalar(0.0)))
        z = self.w("mul", t, t)
        p = self.scalar(8.05374449538e-2)
        for c in (-1.38776856032e-1, 1.99777106478e-1, -3.33329491539e-1):
            p = self.w("add", self.w("mul", p, z), self.scalar(c))
        y = self.w("add", self.w("mul", self.w("mul", p, z), t), t)
        return self.w("mul", sign, self.w("add", base, y))

    def op_atan(self, op):
        return self.atan(self.x(op))

    def asin(self, x):
        # asin x = 2 atan(x / (1 + sqrt(1 - x^2))): exact at +-1, no division by zero.
        one = self.scalar(1.0)
        root = self.w("sqrt", self.w("sub", one, self.w("mul", x, x)))
        return self.w("mul", self.atan(self.w("div", x, self.w("add", one, root))), self.scalar(2.0))

    def op_asin(self, op):
        return self.asin(self.x(op))

    def op_acos(self, op):
        return self.w("sub", self.scalar(math.pi / 2), self.asin(self.x(op)))

    def op_select(self, op):
        dtype = WEBNN_TYPES[op.dtype]
        c = self.get(op.inputs["condition"], "uint8")
        t = self.get(op.inputs["true_value"], dtype)
        f = self.get(op.inputs["false_value"], dtype)
        c, t, f = self.align(c, t, f)
        return self.w("where", c, t, f)

    def op_clamp(self, op):
        a, b = op.inputs["a"], op.inputs["b"]
        x = self.x(op)
        if self.is_literal(a) and self.is_literal(b) and float(a) <= float(b) and len(x.shape) >= len(
                self.shape(next(iter(op.output_names())))):
            return self.w("clamp", x, minValue=float(a), maxValue=float(b))
        return self.binary("max", self.binary("min", x, self.get(b)), self.get(a))

    # ------------------------------------------------------------------ activations
    def op_leaky_relu(self, op):
        return self.w("leakyRelu", self.x(op), alpha=float(op.attribs["alpha"]))

    def op_elu(self, op):
        return self.w("elu", self.x(op), alpha=float(op.attribs["alpha"]))

    def op_selu(self, op):
        y = self.w("elu", self.x(op), alpha=float(op.attribs["alpha"]))
        return self.w("mul", y, self.scalar(float(op.attribs["lambda"])))

    def op_gelu(self, op):
        x = self.x(op)
        if self.gelu == "exact":
            return self.w("gelu", x)
        return self.w("mul", x, self.w("sigmoid", self.w("mul", x, self.scalar(1.702))))

    def op_silu(self, op):
        x = self.x(op)
        return self.w("mul", x, self.w("sigmoid", x))

    def op_softabs(self, op):
        x = self.x(op)
        return self.w("sqrt", self.w("add", self.w("mul", x, x), self.scalar(float(op.attribs["epsilon"]))))

    def op_prelu(self, op):
        x = self.x(op)
        alpha = op.inputs["alpha"]
        if self.is_literal(alpha):
            return self.w("leakyRelu", x, alpha=float(alpha))
        a = self.get(alpha)
        out_shape = self.shape(op.outputs["y"])
        if len(a.shape) <= len(x.shape) and list(x.shape) == out_shape:
            a = self.reshape(a, list(a.shape) + [1] * (len(x.shape) - len(a.shape)))
            if all(s == 1 or s == d for s, d in zip(a.shape, x.shape)):
                return self.w("prelu", x, a)
        x, a = self.align(x, a)
        return self.w("where", self.w("lesser", x, self.scalar(0.0)), self.w("mul", a, x), x)

    def op_softmax(self, op):
        x = self.x(op)
        axes = list(op.attribs["axes"])
        if len(axes) == 1:
            return self.w("softmax", x, axes[0])
        m = self.w("reduceMax", x, axes=axes, keepDimensions=True)
        e = self.w("exp", self.w("sub", x, m))
        return self.w("div", e, self.w("reduceSum", e, axes=axes, keepDimensions=True))

    # ------------------------------------------------------------------ linear
    def op_linear(self, op):
        x, w = self.get(op.inputs["input"]), self.get(op.inputs["filter"])
        bias = op.inputs["bias"]
        out = self.shape(op.outputs["output"])
        if self.is_literal(bias) and float(bias) == 0.0:
            return self.w("gemm", x, w, bTranspose=True)
        c = self.get(bias)
        c = self.reshape(c, list(c.shape) + [1] * (2 - len(c.shape))) if 0 < len(c.shape) < 2 else c
        if len(c.shape) <= 2 and all(s in (1, d) for s, d in zip(c.shape, out)):
            return self.w("gemm", x, w, c=c, bTranspose=True)
        return self.binary("add", self.w("gemm", x, w, bTranspose=True), c)

    def op_matmul(self, op):
        a, b = self.get(op.inputs["A"]), self.get(op.inputs["B"])
        ta, tb = op.attribs["transposeA"], op.attribs["transposeB"]
        if len(a.shape) == 2 and len(b.shape) == 2:
            return self.w("gemm", a, b, aTranspose=bool(ta), bTranspose=bool(tb))
        if ta:
            a = self.w("transpose", a, permutation=_swap_last(len(a.shape)))
        if tb:
            b = self.w("transpose", b, permutation=_swap_last(len(b.shape)))
        return self.w("matmul", a, b)

    # ------------------------------------------------------------------ convolution
    def _crop_negative(self, x, pads):
        """Negative padding crops: slice it off, return (x, non-negative pads)."""
        if all(p >= 0 and q >= 0 for p, q in pads):
            return x, pads
        starts, sizes = [], []
        for d, (p, q) in zip(x.shape, pads):
            lo, hi = max(-p, 0), max(-q, 0)
            if lo + hi >= d:
                raise self.invalid(f"negative padding {pads} removes the whole input")
            starts.append(lo)
            sizes.append(d - lo - hi)
        return self.w("slice", x, starts, sizes), [(max(p, 0), max(q, 0)) for p, q in pads]

    def _explicit_pad(self, x, pads, border, value=0.0):
        if not any(p or q for p, q in pads):
            return x
        mode = PAD_MODES.get(border, "constant")
        if mode == "symmetric" and mode not in enum_values("MLPaddingMode"):
            return self._symmetric_pad(x, pads)
        opts = {"mode": mode}
        if mode == "constant":
            opts["value"] = value
        return self.w("pad", x, [p for p, _ in pads], [q for _, q in pads], **opts)

    def _symmetric_pad(self, x, pads):
        """reflect-even padding without WebNN's "symmetric" mode (gone from the 2026 IDL):
        per axis, the mirrored edge slices concatenated around the input."""
        for axis, (before, after) in enumerate(pads):
            if not before and not after:
                continue
            size = x.shape[axis]
            if before > size or after > size:
                raise self.unsupported(f"reflect-even padding wider than the input ({before}, {after} > {size})")
            parts = []
            for start, length in ((0, before), (size - after, after)):
                if length:
                    starts = [0] * len(x.shape)
                    sizes = list(x.shape)
                    starts[axis], sizes[axis] = start, length
                    parts.append(self.w("reverse", self.w("slice", x, starts, sizes), axes=[axis]))
                else:
                    parts.append(None)
            pieces = [p for p in (parts[0], x, parts[1]) if p is not None]
            x = self.w("concat", pieces, axis)
        return x

    def _conv(self, op, x, w, bias, attribs, out_shape):
        xs, ws = list(x.shape), list(w.shape)
        rank = len(xs)
        spatial = rank - 2
        if spatial > 2:
            raise self.unsupported(f"{spatial}-D convolution: WebNN conv2d is 2-D only")
        size = ws[2:]
        stride = list(attribs["stride"]) or [1] * spatial
        dilation = list(attribs["dilation"]) or [1] * spatial
        padding = [tuple(p) for p in attribs["padding"]] or [
            S.auto_padding(X, f, s, d) for X, f, s, d in zip(xs[2:], size, stride, dilation)]
        border = attribs["border"]
        groups = attribs["groups"] or xs[1]
        full = [(0, 0), (0, 0)] + padding
        x, full = self._crop_negative(x, full)
        if border != "constant":
            x = self._explicit_pad(x, full, border)
            full = [(0, 0)] * rank
        pads = full[2:]
        # to 4-D: append unit spatial dimensions
        extra = 2 - spatial
        x4 = self.reshape(x, list(x.shape) + [1] * extra)
        w4 = self.reshape(w, ws + [1] * extra)
        pads4 = pads + [(0, 0)] * extra
        stride4 = stride + [1] * extra
        dil4 = dilation + [1] * extra
        options = {"padding": [pads4[0][0], pads4[0][1], pads4[1][0], pads4[1][1]], "strides": stride4,
                   "dilations": dil4, "groups": groups}
        out_c = ws[0]
        b = self._channel_bias(bias, out_c)
        if b is not None:
            options["bias"] = b
        y = self.w("conv2d", x4, w4, **options)
        y = self.reshape(y, out_shape)
        if b is None and not (self.is_literal(bias) and float(bias) == 0.0):
            y = self.binary("add", y, self.get(bias))
        return y

    def _channel_bias(self, bias, channels):
        """A [C] operand for WebNN's `bias` option, or None (zero, or not channel-shaped)."""
        if self.is_literal(bias):
            if float(bias) == 0.0:
                return None
            return self.const(np.full([channels], float(bias), np.float32))
        b = self.get(bias)
        vol = int(np.prod(b.shape)) if b.shape else 1
        if list(b.shape) in ([1, channels], [channels]) or (vol == channels and all(
                d == 1 for i, d in enumerate(b.shape) if i != 1)):
            return self.reshape(b, [channels])
        if vol == 1:
            return self.w("expand", self.reshape(b, [1]), [channels])
        return None

    def op_conv(self, op):
        x, w = self.get(op.inputs["input"]), self.get(op.inputs["filter"])
        return self._conv(op, x, w, op.inputs["bias"], op.attribs, self.shape(op.outputs["output"]))

    def _deconv(self, op, x, w, bias, attribs, out_shape):
        xs, ws = list(x.shape), list(w.shape)
        rank = len(xs)
        spatial = rank - 2
        if spatial > 2:
            raise self.unsupported(f"{spatial}-D deconvolution: WebNN convTranspose2d is 2-D only")
        if attribs["border"] != "constant":
            raise self.unsupported(f"deconvolution with border '{attribs['border']}' (only 'constant' is supported)")
        size = ws[2:]
        stride = list(attribs["stride"]) or [1] * spatial
        dilation = list(attribs["dilation"]) or [1] * spatial
        ups = out_shape[2:]
        padding = [tuple(p) for p in attribs["padding"]] or [
            S.auto_padding(X, f, s, d) for X, f, s, d in zip(ups, size, stride, dilation)]
        groups = attribs["groups"] or xs[1]
        crop = [(max(-p, 0), max(-q, 0)) for p, q in padding]
        pads = [(max(p, 0), max(q, 0)) for p, q in padding]
        extra = 2 - spatial
        x4 = self.reshape(x, xs + [1] * extra)
        w4 = self.reshape(w, ws + [1] * extra)
        pads4 = pads + [(0, 0)] * extra
        stride4 = stride + [1] * extra
        dil4 = dilation + [1] * extra
        inner = [X - lo - hi for X, (lo, hi) in zip(ups, crop)] + [1] * extra
        options = {"padding": [pads4[0][0], pads4[0][1], pads4[1][0], pads4[1][1]], "strides": stride4,
                   "dilations": dil4, "groups": groups, "filterLayout": "iohw"}
        base = [(xx - 1) * s + (f - 1) * d + 1 - p - q for xx, s, f, d, (p, q) in
                zip(x4.shape[2:], stride4, list(w4.shape[2:]), dil4, pads4)]
        if base != inner:
            options["outputSizes"] = inner
        out_c = ws[1] * groups
        negative = any(lo or hi for lo, hi in crop)
        b = None if negative else self._channel_bias(bias, out_c)
        if b is not None:
            options["bias"] = b
        y = self.w("convTranspose2d", x4, w4, **options)
        y = self.reshape(y, list(out_shape[:2]) + inner[:spatial])
        if negative:
            y = self._explicit_pad(y, [(0, 0), (0, 0)] + crop, "constant")
        if b is None and not (self.is_literal(bias) and float(bias) == 0.0):
            y = self.binary("add", y, self.get(bias))
        return y

    def op_deconv(self, op):
        x, w = self.get(op.inputs["input"]), self.get(op.inputs["filter"])
        return self._deconv(op, x, w, op.inputs["bias"], op.attribs, self.shape(op.outputs["output"]))

    def op_separable_conv(self, op):
        x = self.get(op.inputs["input"])
        pf, qf = self.get(op.inputs["plane_filter"]), self.get(op.inputs["point_filter"])
        a = op.attribs
        mid_shape = S._separable_mid_shape(list(x.shape), list(pf.shape), a)
        mid = self._conv(op, x, pf, 0.0, dict(a, groups=0), mid_shape)
        a2 = {"border": "constant", "padding": [], "stride": [], "dilation": [], "groups": a["groups"]}
        return self._conv(op, mid, qf, op.inputs["bias"], a2, self.shape(op.outputs["output"]))

    def op_separable_deconv(self, op):
        x = self.get(op.inputs["input"])
        pf, qf = self.get(op.inputs["plane_filter"]), self.get(op.inputs["point_filter"])
        a = op.attribs
        a1 = {"border": "constant", "padding": [], "stride": [], "dilation": [], "groups": a["groups"],
              "output_shape": []}
        groups = a["groups"] or x.shape[1]
        mid_shape = [x.shape[0], qf.shape[1] * groups] + list(x.shape[2:])
        mid = self._deconv(op, x, qf, 0.0, a1, mid_shape)
        return self._deconv(op, mid, pf, op.inputs["bias"], dict(a, groups=0), self.shape(op.outputs["output"]))

    # ------------------------------------------------------------------ windows
    def _window_params(self, x, attribs, size=None):
        rank = len(x.shape)
        size = list(size if size is not None else attribs["size"])
        stride = list(attribs.get("stride", [])) or [1] * rank
        dilation = list(attribs.get("dilation", [])) or [1] * rank
        padding = [tuple(p) for p in attribs.get("padding", [])] or [
            S.auto_padding(X, f, s, d) for X, f, s, d in zip(x.shape, size, stride, dilation)]
        return size, padding, stride, dilation

    def window_reduce(self, x, kind, size, padding, stride, dilation, border):
        """Sum ('sum'), average ('avg') or maximum ('max') over NNEF windows on any dimensions."""
        x, padding = self._crop_negative(x, padding)
        if border in ("replicate", "reflect", "reflect-even"):
            x = self._explicit_pad(x, padding, border)
            padding = [(0, 0)] * len(padding)
        elif border == "constant" or kind == "sum":
            x = self._explicit_pad(x, padding, "constant")
            padding = [(0, 0)] * len(padding)
        # border 'ignore' on avg/max: the pools' own padding excludes the pad cells
        rank = len(x.shape)
        active = [d for d in range(rank) if size[d] > 1 or stride[d] > 1 or padding[d] != (0, 0)]
        pool = "maxPool2d" if kind == "max" else "averagePool2d"
        if not active:
            y = x
        elif rank == 4 and set(active) <= {2, 3}:
            y = self.w(pool, x, windowDimensions=size[2:], strides=stride[2:], dilations=dilation[2:],
                       padding=[padding[2][0], padding[2][1], padding[3][0], padding[3][1]])
        else:
            y = x
            for d in active:
                shape = list(y.shape)
                a = int(np.prod(shape[:d])) if d else 1
                bb = int(np.prod(shape[d + 1:])) if d + 1 < rank else 1
                t = self.reshape(y, [a, 1, shape[d], bb])
                t = self.w(pool, t, windowDimensions=[size[d], 1], strides=[stride[d], 1],
                           dilations=[dilation[d], 1], padding=[padding[d][0], padding[d][1], 0, 0])
                shape[d] = t.shape[2]
                y = self.reshape(t, shape)
        if kind == "sum":
            k = int(np.prod(size))
            if k != 1:
                y = self.w("mul", y, self.scalar(float(k)))
        return y

    def _box(self, op, x, attribs, normalize, size=None):
        size, padding, stride, dilation = self._window_params(x, attribs, size)
        return self.window_reduce(x, "avg" if normalize else "sum", size, padding, stride, dilation,
                                  attribs.get("border", "constant"))

    def op_box(self, op):
        return self._box(op, self.get(op.inputs["input"]), op.attribs, op.attribs["normalize"])

    def op_avg_pool(self, op):
        return self._box(op, self.get(op.inputs["input"]), op.attribs, True)

    def op_max_pool(self, op):
        x = self.get(op.inputs["input"])
        size, padding, stride, dilation = self._window_params(x, op.attribs)
        return self.window_reduce(x, "max", size, padding, stride, dilation, op.attribs["border"])

    def op_rms_pool(self, op):
        x = self.get(op.inputs["input"])
        return self.w("sqrt", self._box(op, self.w("mul", x, x), op.attribs, True))

    def _patches(self, x, attribs, fill_ignore):
        """The K = prod(size) shifted, strided windows of x, stacked on a new last axis."""
        size, padding, stride, dilation = self._window_params(x, attribs)
        border = attribs["border"]
        x, padding = self._crop_negative(x, padding)
        if border == "ignore":
            x = self._explicit_pad(x, padding, "constant", fill_ignore)
        else:
            x = self._explicit_pad(x, padding, border)
        out = [(X - ((f - 1) * d + 1)) // s + 1 for X, f, s, d in zip(x.shape, size, stride, dilation)]
        pieces = []
        for offset in np.ndindex(*size):
            starts = [o * d for o, d in zip(offset, dilation)]
            sizes = [(n - 1) * s + 1 for n, s in zip(out, stride)]
            p = self.w("slice", x, starts, sizes, strides=stride) if any(
                st != 0 or sz != X for st, sz, X in zip(starts, sizes, x.shape)) or any(s != 1 for s in stride) else x
            pieces.append(self.reshape(p, out + [1]))
        if len(pieces) > 1024:
            raise self.unsupported(f"a window of {len(pieces)} cells is too large to unroll")
        return (self.w("concat", pieces, len(out)) if len(pieces) > 1 else pieces[0]), out

    def _argmax_pool(self, op):
        x = self.get(op.inputs["input"])
        patches, out = self._patches(x, op.attribs, -math.inf)
        return self.w("argMax", patches, len(out), keepDimensions=False, outputDataType="int32")

    def op_argmax_pool(self, op):
        return self._argmax_pool(op)

    def op_sample(self, op):
        x = self.get(op.inputs["input"])
        patches, out = self._patches(x, op.attribs, 0.0)
        index = self.reshape(self.get(op.inputs["index"], "int32"), out + [1])
        return self.reshape(self.w("gatherElements", patches, index, axis=len(out)), out)

    def op_max_pool_with_index(self, op):
        return self.op_max_pool(op), self._argmax_pool(op)

    def op_desample(self, op):
        x = self.get(op.inputs["input"])
        index = self.get(op.inputs["index"], "int32")
        a = op.attribs
        out_shape = self.shape(op.outputs["output"])
        size, padding, stride, dilation = self._window_params(x, a)
        if padding and not a["padding"]:
            padding = [S.auto_padding(X, f, s, d) for X, f, s, d in zip(out_shape, size, stride, dilation)]
        rank = len(x.shape)
        if rank not in (3, 4) or any(size[d] != 1 or stride[d] != 1 or padding[d] != (0, 0) for d in (0, 1)):
            raise self.unsupported("desample is supported for windows over the spatial dimensions of 3-D and 4-D "
                                   "tensors only")
        c = x.shape[1]
        spatial = size[2:]
        total = None
        attribs = {"border": "constant", "padding": padding[2:], "stride": stride[2:], "dilation": dilation[2:],
                   "groups": 0}
        for k, offset in enumerate(np.ndindex(*spatial)):
            mask = self.w("equal", index, self.scalar(k, "int32"))
            picked = self.w("where", mask, x, self.scalar(0.0))
            filt = np.zeros([c, 1] + spatial, np.float32)
            filt[(slice(None), 0) + offset] = 1.0
            y = self._deconv(op, picked, self.const(filt), 0.0, attribs, out_shape)
            total = y if total is None else self.w("add", total, y)
        return total

    def op_debox(self, op):
        x = self.get(op.inputs["input"])
        a = op.attribs
        out_shape = self.shape(op.outputs["output"])
        rank = len(x.shape)
        size = list(a["size"])
        stride = list(a["stride"]) or [1] * rank
        dilation = list(a["dilation"]) or [1] * rank
        padding = [tuple(p) for p in a["padding"]] or [
            S.auto_padding(X, f, s, d) for X, f, s, d in zip(out_shape, size, stride, dilation)]
        if rank not in (3, 4) or any(size[d] != 1 or stride[d] != 1 or padding[d] != (0, 0) for d in (0, 1)):
            raise self.unsupported("debox is supported for windows over the spatial dimensions of 3-D and 4-D "
                                   "tensors only")
        if a["border"] not in ("constant", "ignore"):
            raise self.unsupported(f"debox with border '{a['border']}' (only 'constant' is supported)")
        c = x.shape[1]
        filt = np.ones([c, 1] + size[2:], np.float32)
        attribs = {"border": "constant", "padding": padding[2:], "stride": stride[2:], "dilation": dilation[2:],
                   "groups": 0}
        y = self._deconv(op, x, self.const(filt), 0.0, attribs, out_shape)
        if a["normalize"]:
            y = self.w("div", y, self.scalar(float(np.prod(size))))
        return y

    # ------------------------------------------------------------------ up/down-sampling
    def op_nearest_downsample(self, op):
        x = self.get(op.inputs["input"])
        factor = [1, 1] + list(op.attribs["factor"])
        out = self.shape(op.outputs["output"])
        if all(f == 1 for f in factor):
            return self.w("identity", x)
        sizes = [(n - 1) * f + 1 for n, f in zip(out, factor)]
        return self.w("slice", x, [0] * len(out), sizes, strides=factor)

    def op_area_downsample(self, op):
        x = self.get(op.inputs["input"])
        factor = [1, 1] + list(op.attribs["factor"])
        return self.window_reduce(x, "avg", factor, [(0, 0)] * len(factor), factor, [1] * len(factor), "constant")

    def op_nearest_upsample(self, op):
        x = self.get(op.inputs["input"])
        factor = list(op.attribs["factor"])
        out = self.shape(op.outputs["output"])
        shape = list(x.shape)
        inter, expanded = shape[:2], shape[:2]
        for d, f in zip(shape[2:], factor):
            inter += [d, 1]
            expanded += [d, f]
        return self.reshape(self.w("expand", self.reshape(x, inter), expanded), out)

    def op_multilinear_upsample(self, op):
        x = self.get(op.inputs["input"])
        factor = list(op.attribs["factor"])
        method, border = op.attribs["method"], op.attribs["border"]
        rank = len(x.shape)
        y = x
        for i, f in enumerate(factor):
            d = 2 + i
            if f == 1:
                continue
            m = interpolation_matrix(x.shape[d], f, method, border)
            if d == rank - 1:
                y = self.w("matmul", y, self.const(m.T.copy()))
            elif d == rank - 2:
                y = self.w("matmul", self.const(m), y)
            else:
                perm = list(range(rank))
                perm[d], perm[rank - 2] = perm[rank - 2], perm[d]
                y = self.w("transpose", y, permutation=perm)
                y = self.w("matmul", self.const(m), y)
                y = self.w("transpose", y, permutation=perm)
        return y

    # ------------------------------------------------------------------ reductions
    def _reduce(self, op, webnn):
        x = self.get(op.inputs["input"])
        axes = list(op.attribs["axes"])
        if not axes:
            return self.w("identity", x)
        return self.w(webnn, x, axes=axes, keepDimensions=True)

    def op_sum_reduce(self, op):
        return self._reduce(op, "reduceMean" if op.attribs["normalize"] else "reduceSum")

    def op_mean_reduce(self, op):
        return self._reduce(op, "reduceMean")

    def op_max_reduce(self, op):
        return self._reduce(op, "reduceMax")

    def op_min_reduce(self, op):
        return self._reduce(op, "reduceMin")

    def op_any_reduce(self, op):
        return self._reduce(op, "reduceMax")

    def op_all_reduce(self, op):
        return self._reduce(op, "reduceMin")

    def _arg_reduce(self, op, webnn):
        x = self.get(op.inputs["input"])
        axes = sorted(op.attribs["axes"])
        out = self.shape(op.outputs["output"])
        if not axes:
            return self.const(np.zeros(out, np.int32), "int32")
        if len(axes) == 1:
            return self.w(webnn, x, axes[0], keepDimensions=True, outputDataType="int32")
        # Several axes: the index is row-major over the reduced sub-volume.
        rank = len(x.shape)
        rest = [d for d in range(rank) if d not in axes]
        t = self.w("transpose", x, permutation=rest + axes) if rest + axes != list(range(rank)) else x
        vol = int(np.prod([x.shape[d] for d in axes]))
        t = self.reshape(t, [x.shape[d] for d in rest] + [vol])
        idx = self.w(webnn, t, len(rest), keepDimensions=False, outputDataType="int32")
        return self.reshape(idx, out)

    def op_argmax_reduce(self, op):
        return self._arg_reduce(op, "argMax")

    def op_argmin_reduce(self, op):
        return self._arg_reduce(op, "argMin")

    def op_moments(self, op):
        x = self.get(op.inputs["input"])
        axes = list(op.attribs["axes"])
        if not axes:
            zero = self.w("mul", x, self.scalar(0.0))
            return self.w("identity", x), zero
        mean = self.w("reduceMean", x, axes=axes, keepDimensions=True)
        diff = self.w("sub", x, mean)
        var = self.w("reduceMean", self.w("mul", diff, diff), axes=axes, keepDimensions=True)
        return mean, var

    # ------------------------------------------------------------------ shapes
    def _generic(self, op, key):
        return self.get(op.inputs[key], WEBNN_TYPES[op.dtype])

    def op_reshape(self, op):
        return self.reshape(self._generic(op, "input"), self.shape(op.outputs["output"]))

    def op_squeeze(self, op):
        return self.reshape(self._generic(op, "input"), self.shape(op.outputs["output"]))

    def op_unsqueeze(self, op):
        return self.reshape(self._generic(op, "input"), self.shape(op.outputs["output"]))

    def op_transpose(self, op):
        x = self._generic(op, "input")
        axes = list(op.attribs["axes"])
        perm = axes + list(range(len(axes), len(x.shape)))
        if perm == list(range(len(x.shape))):
            return self.w("identity", x)
        return self.w("transpose", x, permutation=perm)

    def op_split(self, op):
        x = self._generic(op, "value")
        axis = op.attribs["axis"]
        sizes = [self.shape(n)[axis] for n in op.outputs["values"]]
        if len(sizes) == 1:
            return [self.w("identity", x)]
        return self.w("split", x, sizes, axis=axis)

    def op_concat(self, op):
        dtype = WEBNN_TYPES[op.dtype]
        xs = [self.get(v, dtype) for v in op.inputs["values"]]
        if len(xs) == 1:
            return self.w("identity", xs[0])
        return self.w("concat", xs, op.attribs["axis"])

    def op_stack(self, op):
        dtype = WEBNN_TYPES[op.dtype]
        axis = op.attribs["axis"]
        xs = [self.get(v, dtype) for v in op.inputs["values"]]
        xs = [self.reshape(x, list(x.shape[:axis]) + [1] + list(x.shape[axis:])) for x in xs]
        return self.w("concat", xs, axis) if len(xs) > 1 else self.w("identity", xs[0])

    def op_unstack(self, op):
        x = self._generic(op, "value")
        axis = op.attribs["axis"]
        n = x.shape[axis]
        parts = self.w("split", x, n, axis=axis) if n > 1 else [self.w("identity", x)]
        return [self.reshape(p, list(x.shape[:axis]) + list(x.shape[axis + 1:])) for p in parts]

    def op_slice(self, op):
        x = self._generic(op, "input")
        a = op.attribs
        stride = list(a["stride"])
        deprecated = all(s == 1 for s in stride)
        stride = stride or [1] * len(a["axes"])
        rank = len(x.shape)
        starts, sizes, steps = [0] * rank, list(x.shape), [1] * rank
        flip = []
        for ax, b, e, s in zip(a["axes"], a["begin"], a["end"], stride):
            b, e, s, count = S.slice_bounds(op, x.shape[ax], b, e, s, deprecated)
            if count <= 0:
                raise self.unsupported("an empty slice; WebNN has no empty tensors")
            if s < 0:
                flip.append(ax)
                b = x.shape[ax] - 1 - b
                s = -s
            starts[ax], sizes[ax], steps[ax] = b, (count - 1) * s + 1, s
        if flip:
            x = self.w("reverse", x, axes=sorted(set(flip)))
        if starts == [0] * rank and sizes == list(x.shape) and steps == [1] * rank:
            return self.w("identity", x)
        if steps == [1] * rank:
            return self.w("slice", x, starts, sizes)
        return self.w("slice", x, starts, sizes, strides=steps)

    def op_pad(self, op):
        x = self.get(op.inputs["input"])
        padding = [tuple(p) for p in op.attribs["padding"]]
        x, padding = self._crop_negative(x, padding)
        if not any(p or q for p, q in padding):
            return self.w("identity", x)
        return self._explicit_pad(x, padding, op.attribs["border"], float(op.attribs["value"]))

    def op_tile(self, op):
        x = self._generic(op, "input")
        reps = list(op.attribs["repeats"])
        if all(r == 1 for r in reps):
            return self.w("identity", x)
        return self.w("tile", x, reps)

    def op_gather(self, op):
        x = self._generic(op, "input")
        idx = self.get(op.inputs["indices"], "int32")
        return self.w("gather", x, idx, axis=op.attribs["axis"])

    def op_cast(self, op):
        src = op.inputs["input"]
        x = self.get(src) if isinstance(src, str) else self.get(src, None)
        to = op.dtype
        if to == "logical":
            if x.dtype == "uint8":
                return self.w("notEqual", x, self.scalar(0, "uint8"))
            return self.w("notEqual", x, self.scalar(0, x.dtype) if x.dtype != "float32" else self.scalar(0.0))
        target = WEBNN_TYPES[to]
        if x.dtype == target:
            return self.w("identity", x)
        return self.w("cast", x, target)

    # ------------------------------------------------------------------ normalization
    def op_batch_normalization(self, op):
        x = self.get(op.inputs["input"])
        shape = list(x.shape)
        c = shape[1] if len(shape) >= 2 else None
        params = {k: op.inputs[k] for k in ("mean", "variance", "offset", "scale")}
        eps = float(op.attribs["epsilon"])
        if c is not None:
            chan = {k: self._channel_param(v, c) for k, v in params.items()}
            if all(v is not None for v in chan.values()):
                opts = {"axis": 1, "epsilon": eps}
                if not (self.is_literal(params["scale"]) and float(params["scale"]) == 1.0):
                    opts["scale"] = chan["scale"]
                if not (self.is_literal(params["offset"]) and float(params["offset"]) == 0.0):
                    opts["bias"] = chan["offset"]
                return self.w("batchNormalization", x, chan["mean"], chan["variance"], **opts)
        mean, var, off, sc = (self.get(params[k]) for k in ("mean", "variance", "offset", "scale"))
        centered = self.binary("sub", x, mean)
        denom = self.w("sqrt", self.w("add", var, self.scalar(eps)))
        return self.binary("add", self.binary("div", self.binary("mul", centered, sc), denom), off)

    def _channel_param(self, value, channels):
        if self.is_literal(value):
            return self.const(np.full([channels], float(value), np.float32))
        p = self.get(value)
        shape = list(p.shape)
        if shape in ([1, channels], [channels] if channels == 1 else [1, channels]):
            return self.reshape(p, [channels])
        if int(np.prod(shape)) == 1:
            return self.w("expand", self.reshape(p, [1]), [channels])
        if len(shape) >= 2 and shape[0] == 1 and shape[1] == channels and all(d == 1 for d in shape[2:]):
            return self.reshape(p, [channels])
        return None

    def _norm_denominator(self, sigma, bias, epsilon):
        t = sigma
        if bias != 0.0:
            t = self.w("add", t, self.scalar(bias))
        return self.w("max", t, self.scalar(epsilon))

    def op_l1_normalization(self, op):
        x = self.get(op.inputs["input"])
        a = op.attribs
        s = self.w("reduceL1", x, axes=list(a["axes"]), keepDimensions=True) if a["axes"] else self.w("abs", x)
        return self.w("div", x, self._norm_denominator(s, float(a["bias"]), float(a["epsilon"])))

    def op_l2_normalization(self, op):
        x = self.get(op.inputs["input"])
        a = op.attribs
        s = self.w("reduceL2", x, axes=list(a["axes"]), keepDimensions=True) if a["axes"] else self.w("abs", x)
        return self.w("div", x, self._norm_denominator(s, float(a["bias"]), float(a["epsilon"])))

    def _local_mean(self, x, size):
        return self._box(self.op, x, {"border": "constant", "padding": [], "stride": [], "dilation": []}, True, size)

    def op_local_response_normalization(self, op):
        x = self.get(op.inputs["input"])
        a = op.attribs
        box = self._local_mean(self.w("mul", x, x), a["size"])
        sigma = self.w("add", self.w("mul", box, self.scalar(float(a["alpha"]))), self.scalar(float(a["bias"])))
        return self.w("div", x, self.w("pow", sigma, self.scalar(float(a["beta"]))))

    def op_local_mean_normalization(self, op):
        x = self.get(op.inputs["input"])
        return self.w("sub", x, self._local_mean(x, op.attribs["size"]))

    def _local_variance(self, x, a):
        sigma = self.w("sqrt", self._local_mean(self.w("mul", x, x), a["size"]))
        return self.w("div", x, self._norm_denominator(sigma, float(a["bias"]), float(a["epsilon"])))

    def op_local_variance_normalization(self, op):
        return self._local_variance(self.get(op.inputs["input"]), op.attribs)

    def op_local_contrast_normalization(self, op):
        x = self.get(op.inputs["input"])
        centered = self.w("sub", x, self._local_mean(x, op.attribs["size"]))
        return self._local_variance(centered, op.attribs)

    # ------------------------------------------------------------------ quantization
    def _round(self, x):
        return self.w("floor", self.w("add", x, self.scalar(0.5)))

    def min_max_quantize(self, x, lo, hi, bits, signed, symmetric):
        r = float(2 ** bits - 1 - int(signed and symmetric))
        z = self.binary("max", self.binary("min", x, hi), lo)
        span = self.binary("sub", hi, lo)
        q = self._round(self.w("mul", self.binary("div", self.binary("sub", z, lo), span), self.scalar(r)))
        return self.binary("add", self.binary("mul", self.w("div", q, self.scalar(r)), span), lo)

    def op_min_max_linear_quantize(self, op):
        a = op.attribs
        return self.min_max_quantize(self.x(op), self.get(op.inputs["min"]), self.get(op.inputs["max"]), a["bits"],
                                     a["signed"], a["symmetric"])

    def op_linear_quantize(self, op):
        return self.min_max_quantize(self.x(op), self.get(op.inputs["min"]), self.get(op.inputs["max"]),
                                     op.attribs["bits"], False, False)

    def zero_point_quantize(self, x, zero_point, scale, bits, signed, symmetric):
        zp = np.asarray(zero_point, np.float32)
        sc = np.asarray(scale, np.float32)
        zp_op = self.const(zp) if zp.ndim else self.scalar(float(zp))
        sc_op = self.const(sc) if sc.ndim else self.scalar(float(sc))
        x, zp_op, sc_op = self.align(x, zp_op, sc_op)
        z = self.w("add", self._round(self.w("div", x, sc_op)), zp_op)
        r = float(2 ** (bits - 1) - 1 if signed else 2 ** bits - 1)
        lo = 0.0 if not signed else (-r if symmetric else -r - 1.0)
        q = self.w("clamp", z, minValue=lo, maxValue=r)
        return self.w("mul", self.w("sub", q, zp_op), sc_op)

    def op_zero_point_linear_quantize(self, op):
        a = op.attribs
        return self.zero_point_quantize(self.x(op), a["zero_point"], a["scale"], a["bits"], a["signed"],
                                        a["symmetric"])

    def op_logarithmic_quantize(self, op):
        x = self.x(op)
        mx = self.get(op.inputs["max"])
        r = float(2 ** op.attribs["bits"] - 1)
        m = self.w("ceil", self.w("mul", self.w("log", mx), self.scalar(1.0 / math.log(2.0))))
        l2 = self.w("mul", self.w("log", self.w("abs", x)), self.scalar(1.0 / math.log(2.0)))
        c = self.binary("max", self.binary("min", l2, m), self.w("sub", m, self.scalar(r)))
        q = self._round(c)
        return self.w("mul", self.w("sign", x), self.w("pow", self.scalar(2.0), q))

    def _fake_quantize(self, op):
        """Apply graph.quant hints (option quantization=True) to the operation's results."""
        for name in op.output_names():
            q = self.g.tensors[name].quantization
            if not q or self.g.tensors[name].dtype != "scalar":
                continue
            algo = q["op-name"]
            x = self.t[name]
            if algo in ("min_max_linear_quantize", "linear_quantize"):
                lo, hi = (self._param(q[k]) for k in ("min", "max"))
                y = self.min_max_quantize(x, lo, hi, q["bits"], q.get("signed", False), q.get("symmetric", False))
            elif algo == "zero_point_linear_quantize":
                y = self.zero_point_quantize(x, q["zero_point"], q["scale"], q["bits"], q["signed"], q["symmetric"])
            elif algo == "logarithmic_quantize":
                raise self.unsupported("logarithmic quantization hints in graph.quant are not applied")
            else:
                raise self.unsupported(f"quantization algorithm '{algo}' from graph.quant")
            self.t[name] = self.reshape(y, self.g.tensors[name].shape)

    def _param(self, value):
        arr = np.asarray(value, np.float32)
        return self.const(arr) if arr.ndim else self.scalar(float(arr))

    # ------------------------------------------------------------------ misc
    def op_copy_n(self, op):
        x = self._generic(op, "x")
        return [self.w("identity", x) for _ in op.outputs["y"]]

    def op_add_n(self, op):
        xs = [self.get(v) for v in op.inputs["x"]]
        if not xs:
            return self.const(np.zeros(self.shape(op.outputs["y"]), np.float32))
        y = xs[0] if len(xs) > 1 else self.w("identity", xs[0])
        for x in xs[1:]:
            y = self.binary("add", y, x)
        return y


def _swap_last(rank):
    perm = list(range(rank))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return perm


def interpolation_matrix(n, factor, method, border):
    """M[i, j]: weight of input j in output i of 1-D multilinear up-sampling (spec §4.3.4)."""
    out = n * factor
    m = np.zeros((out, n), np.float64)
    for i in range(out):
        if method == "asymmetric":
            pos = i / factor
        elif method == "symmetric":
            pos = (i - (factor - 1) / 2) / factor
        else:  # aligned
            pos = i * (n - 1) / (out - 1) if out > 1 else 0.0
        j = math.floor(pos)
        u = pos - j
        for idx, weight in ((j, 1.0 - u), (j + 1, u)):
            if weight == 0.0:
                continue
            k = _border_index(idx, n, border)
            if k is not None:
                m[i, k] += weight
    return m.astype(np.float32)


def _border_index(i, n, border):
    if 0 <= i < n:
        return i
    if border == "constant":
        return None
    if border == "replicate":
        return min(max(i, 0), n - 1)
    if n == 1:
        return 0
    if border == "reflect":
        period = 2 * (n - 1)
        i = i % period
        return i if i < n else period - i
    period = 2 * n  # reflect-even
    i = i % period
    return i if i < n else period - 1 - i


def convert_data(data, dtype, label, shape):
    """A variable's stored data as the WebNN type of its NNEF data type."""
    arr = np.asarray(data)
    if list(arr.shape) != list(shape):
        raise NNEFDataError(f"variable '{label}': data shape {list(arr.shape)} does not match the declared {shape}")
    if dtype == "scalar":
        if arr.dtype.kind not in "fiub":
            raise NNEFDataError(f"variable '{label}': cannot use {arr.dtype} data as scalar")
        return arr.astype(np.float32, copy=False)
    if dtype == "integer":
        if arr.dtype.kind not in "iu":
            raise NNEFDataError(f"variable '{label}': integer variables need integer data, found {arr.dtype}")
        if arr.size and (arr.min() < -2**31 or arr.max() > 2**31 - 1):
            raise NNEFDataError(f"variable '{label}': values exceed the int32 range")
        return arr.astype(np.int32, copy=False)
    if arr.dtype.kind not in "bui":
        raise NNEFDataError(f"variable '{label}': logical variables need bool data, found {arr.dtype}")
    return (arr != 0).astype(np.uint8)
