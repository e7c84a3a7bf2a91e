"""WebNN graph -> NNEF 2.0 (SkriptND `main.sknd` + `main.<G>.<var>.dat`), and
NNEF 1.0 -> 2.0 conversion (load the 1.0 model as a WebNN graph, export that).

Each WebNN operation becomes one invocation of a standard-library operator
with the same semantics (2.0's right-aligned broadcasting, 1-D biases and
begin/end paddings are WebNN's). Operations without a faithful 2.0 form raise
NNEFUnsupportedError naming them - never an approximate export."""
from __future__ import annotations

import math
import os

import numpy as np

from ..nnef import dat
from ..nnef.errors import NNEFUnsupportedError
from ..nnef.export import reachable_nodes

SMALL_CONSTANT = 16
TYPES = {"float32": "real", "int32": "int", "uint8": "bool"}
LAYOUT = {"nchw": "NCX", "nhwc": "NXC"}
FILTER = {"oihw": "NCX", "ohwi": "NXC", "hwio": "XCN", "ihwo": "CXN"}
KEYWORDS = {"import", "operator", "graph", "public", "optional", "true", "false", "inf", "pi", "if", "then",
            "elif", "else", "with", "for", "do", "unroll", "while", "yield", "is", "in", "type", "arith", "num",
            "int", "real", "bool", "str"}


def lit(v) -> str:
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(lit(x) for x in v) + "]"
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, str):
        return "'" + v + "'"
    v = float(v)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if math.isnan(v):
        raise NNEFUnsupportedError("constant", "NaN has no SkriptND literal")
    text = repr(v)
    return text if ("." in text or "e" in text) else text + ".0"


def identifier(name, used):
    base = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in str(name)) or "t"
    if base[0].isdigit():
        base = "t_" + base
    if base in KEYWORDS:
        base += "_"
    out, k = base, 1
    while out in used:
        k += 1
        out = f"{base}_{k}"
    used.add(out)
    return out


class Exporter:
    def __init__(self, graph, name="G"):
        self.graph = graph
        self.used = set()
        self.name = identifier(name, set())
        self.names = {}            # operand id -> identifier
        self.lines = []
        self.constants = []
        self.variables = []
        self.files = {}
        self.modules = set()
        self.counter = 0
        from ..nnef.api import EXPORT_HINTS
        hints = EXPORT_HINTS.get(graph) or {}
        self.hint_names = hints.get("names", {})
        self.node = None

    def unsupported(self, reason):
        op = self.node.op.name if self.node is not None else "export"
        return NNEFUnsupportedError(op, f"cannot export to NNEF 2.0: {reason}")

    def type_of(self, operand):
        t = TYPES.get(operand.dtype)
        if t is None:
            raise self.unsupported(f"data type {operand.dtype} (SkriptND int/real/bool map to int32/float32/uint8)")
        return t

    def fresh(self, base="t"):
        self.counter += 1
        return identifier(f"{base}{self.counter}", self.used)

    def ref(self, operand):
        if operand.id not in self.names:
            if operand.kind != "constant":
                raise self.unsupported(f"operand {operand.id} is used before it is computed")
            self.names[operand.id] = self.constant(operand)
        return self.names[operand.id]

    def constant(self, operand):
        value = np.asarray(operand.value)
        t = self.type_of(operand)
        hinted = self.hint_names.get(operand.id)
        name = identifier(hinted if hinted else "c", self.used) if hinted else self.fresh("c")
        shape = lit(list(value.shape))
        if value.size <= SMALL_CONSTANT and (t != "real" or np.isfinite(value).all()):
            items = [bool(v) if t == "bool" else (int(v) if t == "int" else float(v)) for v in value.reshape(-1)]
            init = lit(items[0]) if len(set(items)) == 1 and items else lit(items)
            self.constants.append(f"        {name}: {t}{shape} = {init};")
        else:
            self.variables.append(f"        {name}: {t}{shape};")
            data = value.astype(bool) if t == "bool" else value
            self.files[f"main.{self.name}.{name}.dat"] = dat.write_tensor(data)
        return name

    def emit(self, op, args, attrs=None, outputs=1, generic=None, lhs=None):
        module = op.split(".")[0]
        self.modules.add(module)
        attr = ""
        if attrs:
            attr = "{" + ", ".join(f"{k}={lit(v)}" for k, v in attrs.items() if v is not None) + "}"
            attr = "" if attr == "{}" else attr
        gen = f"<{generic}>" if generic else ""
        names = lhs or [self.fresh() for _ in range(outputs)]
        left = ", ".join(names) if not isinstance(lhs, str) else lhs
        self.lines.append(f"        {left} = {op}{gen}{attr}({', '.join(args)});")
        return names if outputs != 1 or isinstance(lhs, list) else names[0]

    # -- graph ----------------------------------------------------------------------------
    def run(self):
        g = self.graph
        outputs = list(g.outputs.values())
        inputs = []
        for name, operand in g.inputs.items():
            ident = identifier(name, self.used)
            self.names[operand.id] = ident
            inputs.append(f"        {ident}: {self.type_of(operand)}{lit(list(operand.shape))};")
        for node in reachable_nodes(outputs):
            self.node = node
            handler = getattr(self, "op_" + node.op.name, None)
            if handler is None:
                raise self.unsupported(f"WebNN '{node.op.name}' has no exporter to a standard 2.0 operator")
            args, options = node.call_args()
            result = handler(node, *args, **options)
            results = result if isinstance(result, list) else [result]
            for operand, ident in zip(node.outputs, results):
                self.names[operand.id] = ident
        self.node = None
        outs = []
        for name, operand in g.outputs.items():
            ident = identifier(name, self.used)
            self.lines.append(f"        {ident} = math.iden({self.ref(operand)});")
            self.modules.add("math")
            outs.append(f"        {ident}: {self.type_of(operand)}{lit(list(operand.shape))};")
        text = [f"# exported by webnn_core.nnef2 from a WebNN graph"]
        text += [f"import {m};" for m in sorted(self.modules)]
        text += ["", f"graph {self.name} {{", "    @input {", *inputs, "    }", "    @output {", *outs, "    }"]
        if self.constants:
            text += ["    @constant {", *self.constants, "    }"]
        if self.variables:
            text += ["    @variable {", *self.variables, "    }"]
        text += ["    @compose {", *self.lines, "    }", "}", ""]
        return "\n".join(text), self.files

    # -- element-wise -------------------------------------------------------------------------
    def unary(name):
        return lambda self, node, x, **o: self.emit(name, [self.ref(x)])

    op_identity = unary("math.iden")
    op_neg = unary("math.neg")
    op_abs = unary("math.abs")
    op_sign = unary("math.sign")
    op_sqrt = unary("math.sqrt")
    op_exp = unary("math.exp")
    op_log = unary("math.log")
    op_sin = unary("math.sin")
    op_cos = unary("math.cos")
    op_tan = unary("math.tan")
    op_tanh = unary("math.tanh")
    op_floor = unary("math.floor")
    op_ceil = unary("math.ceil")
    op_reciprocal = unary("math.rcp")
    op_logicalNot = unary("math.not")
    op_relu = unary("nn.relu")
    op_sigmoid = unary("nn.sigmoid")
    op_softplus = unary("nn.softplus")
    op_gelu = unary("nn.gelu")

    def binary(name):
        return lambda self, node, a, b, **o: self.emit(name, [self.ref(a), self.ref(b)])

    op_add, op_sub, op_mul, op_div = binary("math.add"), binary("math.sub"), binary("math.mul"), binary("math.div")
    op_pow, op_min, op_max = binary("math.pow"), binary("math.min"), binary("math.max")
    op_equal, op_notEqual = binary("math.eq"), binary("math.ne")
    op_lesser, op_lesserOrEqual = binary("math.lt"), binary("math.le")
    op_greater, op_greaterOrEqual = binary("math.gt"), binary("math.ge")
    op_logicalAnd, op_logicalOr, op_logicalXor = binary("math.and"), binary("math.or"), binary("math.xor")
    del unary, binary

    def op_where(self, node, c, a, b, **o):
        return self.emit("math.select", [self.ref(c), self.ref(a), self.ref(b)])

    def op_clamp(self, node, x, minValue=None, maxValue=None, **o):
        lo = -math.inf if minValue is None else float(minValue)
        hi = math.inf if maxValue is None else float(maxValue)
        if lo == 0.0 and math.isinf(hi):
            return self.emit("nn.relu", [self.ref(x)])
        if lo == 0.0:
            return self.emit("nn.relu", [self.ref(x)], {"max": hi})
        return self.emit("math.clamp", [self.ref(x), lit(lo), lit(hi)])

    def op_leakyRelu(self, node, x, alpha=0.01, **o):
        return self.emit("nn.relu", [self.ref(x)], {"alpha": float(alpha)})

    def op_elu(self, node, x, alpha=1.0, **o):
        return self.emit("nn.elu", [self.ref(x)], {"alpha": float(alpha)})

    def op_linear(self, node, x, alpha=1.0, beta=0.0, **o):
        return self.emit("math.axpb", [lit(float(alpha)), self.ref(x), lit(float(beta))])

    def op_softmax(self, node, x, axis, **o):
        return self.emit("nn.softmax", [self.ref(x)], {"axes": [int(axis)]})

    def op_cast(self, node, x, type, **o):
        t = TYPES.get(type)
        if t is None:
            raise self.unsupported(f"cast to {type}")
        return self.emit("layout.cast", [self.ref(x)], generic=t)

    # -- windows ----------------------------------------------------------------------------------
    def op_conv2d(self, node, x, w, padding=None, strides=None, dilations=None, groups=1, inputLayout="nchw",
                  filterLayout="oihw", bias=None, **o):
        p = list(padding or [0, 0, 0, 0])
        attrs = {"padding": [p[0], p[2], p[1], p[3]], "stride": list(strides or [1, 1]),
                 "dilation": list(dilations or [1, 1]), "groups": int(groups),
                 "data_format": LAYOUT[inputLayout], "filter_format": FILTER[filterLayout]}
        args = [self.ref(x), self.ref(w)] + ([self.ref(bias)] if bias is not None else [])
        return self.emit("nn.conv", args, attrs)

    def op_convTranspose2d(self, node, x, w, padding=None, strides=None, dilations=None, groups=1,
                           filterLayout="iohw", inputLayout="nchw", bias=None, **o):
        if filterLayout != "iohw" or inputLayout != "nchw":
            raise self.unsupported(f"convTranspose2d with {inputLayout}/{filterLayout} layouts")
        p = list(padding or [0, 0, 0, 0])
        attrs = {"padding": [p[0], p[2], p[1], p[3]], "stride": list(strides or [1, 1]),
                 "dilation": list(dilations or [1, 1]), "groups": int(groups),
                 "output_size": list(node.outputs[0].shape[2:])}
        args = [self.ref(x), self.ref(w)] + ([self.ref(bias)] if bias is not None else [])
        return self.emit("nn.deconv", args, attrs)

    def _pool(self, op, x, windowDimensions=None, padding=None, strides=None, dilations=None, layout="nchw",
              roundingType="floor", outputSizes=None, **o):
        if layout != "nchw":
            raise self.unsupported(f"pooling in layout {layout}")
        size = list(windowDimensions or list(x.shape[2:]))
        p = list(padding or [0, 0, 0, 0])
        attrs = {"size": size, "stride": list(strides or [1, 1]), "dilation": list(dilations or [1, 1]),
                 "padding": [p[0], p[2], p[1], p[3]], "ceil_mode": roundingType == "ceil" or None}
        if outputSizes is not None:
            raise self.unsupported("pooling with explicit outputSizes")
        return self.emit(op, [self.ref(x)], attrs)

    def op_maxPool2d(self, node, x, **o):
        return self._pool("nn.max_pool", x, **o)

    def op_averagePool2d(self, node, x, **o):
        return self._pool("nn.avg_pool", x, **o)

    # -- shapes ---------------------------------------------------------------------------------
    def op_reshape(self, node, x, newShape, **o):
        return self.emit("layout.reshape", [self.ref(x)], {"shape": [int(d) for d in newShape]})

    def op_transpose(self, node, x, permutation=None, **o):
        perm = list(permutation) if permutation is not None else list(range(len(x.shape)))[::-1]
        return self.emit("layout.transpose", [self.ref(x)], {"perm": perm})

    def op_concat(self, node, inputs, axis, **o):
        return self.emit("layout.concat", ["[" + ", ".join(self.ref(i) for i in inputs) + "]"], {"axis": int(axis)})

    def op_split(self, node, x, splits, axis=0, **o):
        sizes = [int(o.shape[axis]) for o in node.outputs]
        names = [self.fresh() for _ in sizes]
        self.emit("layout.split", [self.ref(x)], {"axis": int(axis), "sizes": sizes}, lhs="[" + ", ".join(names) + "]")
        return names

    def op_slice(self, node, x, starts, sizes, strides=None, **o):
        strides = list(strides or [1] * len(starts))
        axes = [a for a in range(len(starts)) if starts[a] != 0 or sizes[a] != x.shape[a] or strides[a] != 1]
        if not axes:
            return self.emit("math.iden", [self.ref(x)])
        begin = [int(starts[a]) for a in axes]
        end = [int(starts[a] + (sizes[a] - 1) * strides[a] + 1) if sizes[a] else int(starts[a]) for a in axes]
        return self.emit("layout.slice", [self.ref(x)], {"axes": axes, "begin": begin, "end": end,
                                                          "stride": [int(strides[a]) for a in axes]})

    def op_pad(self, node, x, beginningPadding, endingPadding, mode="constant", value=0, **o):
        method = {"constant": "CONSTANT", "edge": "REPLICATE", "reflection": "REFLECT"}.get(mode)
        if method is None:
            raise self.unsupported(f"pad mode {mode}")
        args = [self.ref(x)] + ([lit(float(value))] if mode == "constant" and float(value) != 0.0 else [])
        return self.emit("layout.pad", args, {"padding": [int(v) for v in list(beginningPadding) +
                                                          list(endingPadding)], "method": method})

    def op_expand(self, node, x, newShape, **o):
        shape = [int(d) for d in newShape]
        ref = self.ref(x)
        if len(x.shape) < len(shape):
            ref = self.emit("layout.reshape", [ref], {"shape": [1] * (len(shape) - len(x.shape)) + list(x.shape)})
        return self.emit("layout.broadcast", [ref], {"shape": shape})

    def op_tile(self, node, x, repetitions, **o):
        return self.emit("layout.tile", [self.ref(x)], {"repeats": [int(r) for r in repetitions]})

    def op_gather(self, node, x, indices, axis=0, **o):
        return self.emit("layout.gather", [self.ref(x), self.ref(indices)], {"axis": int(axis)})

    # -- reductions, linear algebra, normalisation ------------------------------------------------------
    def _reduce(self, name, x, axes, keepDimensions):
        axes = list(range(len(x.shape))) if axes is None else [int(a) for a in axes]
        return self.emit(name, [self.ref(x)], {"axes": axes, "squeeze": not keepDimensions})

    def op_reduceSum(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce("math.sum_reduce", x, axes, keepDimensions)

    def op_reduceMean(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce("math.mean_reduce", x, axes, keepDimensions)

    def op_reduceMax(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce("math.max_reduce", x, axes, keepDimensions)

    def op_reduceMin(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce("math.min_reduce", x, axes, keepDimensions)

    def op_reduceProduct(self, node, x, axes=None, keepDimensions=False, **o):
        return self._reduce("math.prod_reduce", x, axes, keepDimensions)

    def op_argMax(self, node, x, axis, keepDimensions=False, outputDataType="int32", **o):
        if outputDataType != "int32":
            raise self.unsupported(f"argMax to {outputDataType}")
        return self.emit("math.argmax", [self.ref(x)], {"axis": int(axis), "squeeze": not keepDimensions})

    def op_argMin(self, node, x, axis, keepDimensions=False, outputDataType="int32", **o):
        if outputDataType != "int32":
            raise self.unsupported(f"argMin to {outputDataType}")
        return self.emit("math.argmin", [self.ref(x)], {"axis": int(axis), "squeeze": not keepDimensions})

    def op_matmul(self, node, a, b, **o):
        return self.emit("linalg.matmul", [self.ref(a), self.ref(b)])

    def op_gemm(self, node, a, b, c=None, alpha=1.0, beta=1.0, aTranspose=False, bTranspose=False, **o):
        y = self.emit("linalg.matmul", [self.ref(a), self.ref(b)],
                      {"transA": bool(aTranspose) or None, "transB": bool(bTranspose) or None})
        if float(alpha) != 1.0:
            y = self.emit("math.mul", [y, lit(float(alpha))])
        if c is not None:
            cc = self.ref(c)
            if float(beta) != 1.0:
                cc = self.emit("math.mul", [cc, lit(float(beta))])
            y = self.emit("math.add", [y, cc])
        return y

    def op_batchNormalization(self, node, x, mean, variance, scale=None, bias=None, axis=1, epsilon=1e-5, **o):
        args = [self.ref(x), self.ref(mean), self.ref(variance)]
        if bias is not None or scale is not None:
            args.append(self.ref(bias) if bias is not None else "~")
        if scale is not None:
            args.append(self.ref(scale))
        return self.emit("nn.batch_norm", args, {"epsilon": float(epsilon), "channel_axis": int(axis)})

    def op_prelu(self, node, x, slope, **o):
        neg = self.emit("math.mul", [self.ref(x), self.ref(slope)])
        cond = self.emit("math.lt", [self.ref(x), "0.0"])
        return self.emit("math.select", [cond, neg, self.ref(x)])

    def op_hardSwish(self, node, x, **o):
        t = self.emit("nn.relu", [self.emit("math.add", [self.ref(x), "3.0"])], {"max": 6.0})
        return self.emit("math.div", [self.emit("math.mul", [self.ref(x), t]), "6.0"])

    def op_hardSigmoid(self, node, x, alpha=0.2, beta=0.5, **o):
        y = self.emit("math.axpb", [lit(float(alpha)), self.ref(x), lit(float(beta))])
        return self.emit("math.clamp", [y, "0.0", "1.0"])

    def op_resample2d(self, node, x, mode="nearest-neighbor", scales=None, sizes=None, axes=None, **o):
        axes = list(axes) if axes is not None else [2, 3]
        out = node.outputs[0].shape
        factors = [out[a] // x.shape[a] for a in axes]
        if mode != "nearest-neighbor" or any(out[a] != x.shape[a] * f for a, f in zip(axes, factors)):
            raise self.unsupported(f"resample2d ({mode}) other than integer-factor nearest upsampling")
        return self.emit("image.nearest_upsample", [self.ref(x)], {"axes": axes, "factor": factors})


def export_graph(graph, name="G"):
    """-> (main.sknd text, {file name: .dat bytes})"""
    return Exporter(graph, name).run()


def write(text, files, dest):
    """Write a model as a folder, or as a .tgz/.tar.gz archive when dest ends so."""
    entries = {"main.sknd": text.encode(), **files}
    if dest.endswith((".tgz", ".tar.gz")):
        from ..nnef.samples import to_tgz
        with open(dest, "wb") as f:
            f.write(to_tgz(entries))
        return dest
    os.makedirs(dest, exist_ok=True)
    for path, data in entries.items():
        with open(os.path.join(dest, path), "wb") as f:
            f.write(data)
    return dest


def convert(source, dest=None, **options):
    """NNEF 1.0 model (folder/.tgz/...) -> NNEF 2.0: (text, files), also written to
    `dest` (folder or .tgz) when given. Options go to the 1.0 loader."""
    from ..nnef.api import load_model
    model = load_model(source, **options)
    text, files = export_graph(model.graph, model.nnef.name)
    if dest:
        write(text, files, dest)
    return text, files
