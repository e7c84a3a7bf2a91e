"""XlaBuilder: XLA's ComputationBuilder operations (seed 003, as corrected in the
XLA digest) with XLA's exact semantics, lowered onto the public WebNN graph
builder as they are called.

    xb = XlaBuilder("f")
    x = xb.Parameter(0, [3], "s32", "x")
    y = xb.Clamp(xb.ConstantR0(0, "s32"), x, xb.ConstantR0(6, "s32"))
    comp = xb.Build(y)
    comp.run(np.array([-1, 5, 9], np.int32))   # -> (array([0, 5, 6]),)

Computation-valued arguments (Call, Map, Reduce, ReduceWindow,
SelectAndScatter) take an `XlaComputation` built with another XlaBuilder;
each op records its call, so the computation can be recognised (a single
Add/Mul/Max/Min/And/Or of its two parameters) or replayed on whole tensors
(Map, Call). Ops WebNN cannot express raise `NotExpressibleError` naming the op
and why; wrong arguments raise `XlaTypeError`.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np

from .. import dtypes
from ..context import Context
from ..errors import WebNNError
from . import lowering as L
from .errors import NotExpressibleError, XlaTypeError

XLA_TYPES = ("pred", "s8", "s32", "s64", "u8", "u32", "u64", "f16", "f32")
NUMPY = {"pred": np.bool_, "s8": np.int8, "s32": np.int32, "s64": np.int64, "u8": np.uint8, "u32": np.uint32,
         "u64": np.uint64, "f16": np.float16, "f32": np.float32}
FROM_NUMPY = {np.dtype(v): k for k, v in NUMPY.items()}
# Ops a Map body may contain: elementwise only (R18).
ELEMENTWISE = {"Add", "Sub", "Mul", "Div", "Rem", "Max", "Min", "And", "Or", "Eq", "Ne", "Ge", "Gt", "Le", "Lt",
               "Abs", "Ceil", "Cos", "Exp", "Floor", "IsFinite", "Log", "Not", "Neg", "Sign", "Tanh", "Sqrt",
               "Rsqrt", "Sin", "Pow", "Select", "Clamp", "ConvertElementType", "ConstantLiteral", "ConstantR0",
               "Parameter"}
KINDS = {"Add": "add", "Mul": "mul", "Max": "max", "Min": "min", "And": "and", "Or": "or"}


class XlaOp:
    """A value of an XlaBuilder: its WebNN operand (or tuple), XLA element type and shape."""

    __slots__ = ("builder", "operand", "etype", "record", "items")

    def __init__(self, builder, operand, etype, items=None):
        self.builder = builder
        self.operand = operand
        self.etype = etype
        self.record = None      # (op name, args, kwargs) as called
        self.items = items      # the elements of a Tuple

    @property
    def shape(self):
        return tuple(self.operand.shape)

    def __repr__(self):
        return f"XlaOp({self.etype}{list(self.shape) if self.operand is not None else '(tuple)'})"


class XlaComputation:
    """A built computation: its parameters and root, runnable on the WebNN core."""

    def __init__(self, builder, root):
        self.builder = builder
        self.root = root
        self._graph = None

    @property
    def parameters(self):
        return [self.builder.params[i] for i in sorted(self.builder.params)]

    def binary_kind(self):
        """'add'/'mul'/'max'/'min'/'and'/'or' when the body is that op on its two
        parameters (in either order), else None."""
        rec = self.root.record
        params = self.parameters
        if rec is None or len(params) != 2 or rec[0] not in KINDS:
            return None
        args = rec[1][:2]
        if {id(a) for a in args} == {id(p) for p in params} and not rec[2].get("broadcast_dimensions"):
            return KINDS[rec[0]]
        return None

    def compare_kind(self):
        rec = self.root.record
        params = self.parameters
        if rec is not None and rec[0] in ("Ge", "Gt") and len(params) == 2 and \
                [id(a) for a in rec[1][:2]] == [id(p) for p in params]:
            return rec[0]
        return None

    def ops(self):
        """The op names in the body (post-order, no duplicates)."""
        seen, out = set(), []

        def walk(v):
            if id(v) in seen or not isinstance(v, XlaOp):
                return
            seen.add(id(v))
            if v.record:
                for a in v.record[1]:
                    for item in (a if isinstance(a, (list, tuple)) else [a]):
                        walk(item)
                out.append(v.record[0])
        walk(self.root)
        return out

    def replay(self, target, args):
        """Re-issue the body's calls on `target` (an XlaBuilder) with `args` as parameters."""
        params = self.parameters
        if len(args) != len(params):
            raise XlaTypeError(f"the computation takes {len(params)} arguments, got {len(args)}")
        memo = {id(p): a for p, a in zip(params, args)}

        def val(v):
            if isinstance(v, XlaOp):
                if id(v) not in memo:
                    name, a, kw = v.record
                    if name == "Parameter":
                        raise XlaTypeError("the computation uses a parameter that was not passed")
                    if name == "ConstantLiteral":
                        memo[id(v)] = target.ConstantLiteral(*a, **kw)
                    else:
                        memo[id(v)] = getattr(target, name)(*[val(x) for x in a],
                                                            **{k: val(x) for k, x in kw.items()})
                return memo[id(v)]
            if isinstance(v, (list, tuple)):
                return type(v)(val(x) for x in v)
            return v
        return val(self.root)

    # -- running -----------------------------------------------------------
    def outputs(self):
        root = self.root
        return list(root.items) if root.items is not None else [root]

    def graph(self):
        if self._graph is None:
            b = self.builder.b
            outs, seen = {}, set()
            for i, o in enumerate(self.outputs()):
                operand = o.operand
                if operand.kind != "output" or operand.id in seen:
                    operand = b.identity(operand)
                seen.add(operand.id)
                outs[f"out{i}"] = operand
            self._graph = b.build(outs)
        return self._graph

    def run(self, *args):
        """Run with one array per parameter (in parameter order); returns a tuple of arrays."""
        params = self.parameters
        if len(args) != len(params):
            raise XlaTypeError(f"{self.builder.name}: expected {len(params)} arguments, got {len(args)}")
        graph = self.graph()
        # parameters the root does not depend on are not graph inputs
        feeds = {p.operand.name: np.asarray(a) for p, a in zip(params, args) if p.operand.name in graph.inputs}
        results = self.builder.context.compute(graph, feeds)
        out = []
        for i, o in enumerate(self.outputs()):
            arr = results[f"out{i}"]
            out.append(arr.astype(np.bool_) if o.etype == "pred" else arr)
        return tuple(out)


def _xla_op(fn):
    """Record each call (for recognising and replaying computations) and turn
    WebNN validation errors into XlaTypeErrors naming the XLA op."""
    @functools.wraps(fn)
    def wrapper(self, *args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            for item in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(item, XlaOp) and item.builder is not self:
                    raise XlaTypeError(f"{fn.__name__}: an operand belongs to another XlaBuilder")
        try:
            out = fn(self, *args, **kwargs)
        except (XlaTypeError, NotExpressibleError):
            raise
        except WebNNError as e:
            raise XlaTypeError(f"{fn.__name__}: {e}") from None
        if isinstance(out, XlaOp) and out.record is None:
            out.record = (fn.__name__, args, kwargs)
        return out
    return wrapper


class XlaBuilder:
    def __init__(self, name: str = "xla", context=None):
        self.name = name
        self.context = context or Context()
        self.b = self.context.graph_builder()
        self.params = {}

    # -- helpers -----------------------------------------------------------
    def _new(self, operand, etype, items=None):
        return XlaOp(self, operand, etype, items)

    def _check_type(self, etype, op):
        if etype not in XLA_TYPES:
            raise NotExpressibleError(op, f"element type {etype} has no WebNN data type") if etype in \
                ("f64", "bf16", "s16", "u16", "c64") else XlaTypeError(f"{op}: unknown element type {etype!r}")
        return L.ELEMENT_TYPES[etype]

    def _same_type(self, op, *xs):
        if len({x.etype for x in xs}) > 1:
            raise XlaTypeError(f"{op}: element types differ ({', '.join(x.etype for x in xs)})")

    def _binary(self, op, webnn, lhs, rhs, broadcast_dimensions, out_etype=None):
        """XLA's broadcasting: equal shapes, a scalar, or explicit broadcast_dimensions (R2)."""
        self._same_type(op, lhs, rhs)
        a, c = lhs.operand, rhs.operand
        if lhs.shape != rhs.shape and lhs.shape != () and rhs.shape != ():
            if broadcast_dimensions is None:
                raise XlaTypeError(f"{op}: shapes {list(lhs.shape)} and {list(rhs.shape)} differ; pass "
                                   "broadcast_dimensions for the lower-rank operand")
            if len(lhs.shape) < len(rhs.shape):
                a = L.broadcast_in_dim(self.b, a, rhs.shape, broadcast_dimensions)
            else:
                c = L.broadcast_in_dim(self.b, c, lhs.shape, broadcast_dimensions)
        return self._new(webnn(a, c), out_etype or lhs.etype)

    # -- builder primitives -------------------------------------------------
    @_xla_op
    def Parameter(self, number: int, shape, etype: str = "f32", name: str | None = None):
        if number in self.params:
            raise XlaTypeError(f"Parameter: number {number} is already used")
        dtype = self._check_type(etype, "Parameter")
        p = self._new(self.b.input(name or f"p{number}", {"dataType": dtype, "shape": list(shape)}), etype)
        self.params[number] = p
        return p

    @_xla_op
    def ConstantLiteral(self, value, etype: str | None = None):
        arr = np.asarray(value)
        etype = etype or FROM_NUMPY.get(arr.dtype) or ("f32" if arr.dtype.kind == "f" else "s32")
        dtype = self._check_type(etype, "ConstantLiteral")
        return self._new(L.const(self.b, arr.astype(NUMPY[etype]).astype(dtypes.numpy_dtype(dtype)), dtype), etype)

    def ConstantR0(self, value, etype: str | None = None):
        return self.ConstantLiteral(np.asarray(value) if etype is None else value, etype)

    def ConstantR1(self, values, etype: str | None = None):
        return self.ConstantLiteral(np.asarray(values) if etype is None else values, etype)

    def ConstantR2(self, values, etype: str | None = None):
        return self.ConstantLiteral(np.asarray(values) if etype is None else values, etype)

    def Build(self, root=None) -> XlaComputation:
        if root is None:
            raise XlaTypeError("Build: a root operation is required")
        if isinstance(root, (list, tuple)):
            root = self.Tuple(*root)
        return XlaComputation(self, root)

    # -- B rows: Call, Tuple, GetTupleElement --------------------------------
    @_xla_op
    def Call(self, computation: XlaComputation, *args):
        return computation.replay(self, list(args))

    @_xla_op
    def Tuple(self, *elements):
        return self._new(None, "tuple", items=list(elements))

    @_xla_op
    def GetTupleElement(self, tuple_, index: int):
        if tuple_.items is None:
            raise XlaTypeError("GetTupleElement: the operand is not a tuple")
        if not 0 <= index < len(tuple_.items):
            raise XlaTypeError(f"GetTupleElement: index {index} out of range for a {len(tuple_.items)}-tuple")
        return tuple_.items[index]

    # -- shapes and data movement -------------------------------------------
    @_xla_op
    def Broadcast(self, operand, broadcast_sizes):
        """New major dims: out shape = sizes ++ operand shape."""
        shape = list(broadcast_sizes) + list(operand.shape)
        if not broadcast_sizes:
            return self._new(self.b.identity(operand.operand), operand.etype)
        return self._new(self.b.expand(L.reshape(self.b, operand.operand, [1] * len(broadcast_sizes)
                                                 + list(operand.shape)), shape), operand.etype)

    @_xla_op
    def Collapse(self, operand, dimensions):
        dims = list(dimensions)
        if not dims or dims != list(range(dims[0], dims[0] + len(dims))) or dims[-1] >= len(operand.shape):
            raise XlaTypeError(f"Collapse: dimensions {dims} must be an in-order run of consecutive dims")
        shape = list(operand.shape)
        merged = int(np.prod(shape[dims[0]:dims[-1] + 1]))
        return self._new(self.b.reshape(operand.operand, shape[:dims[0]] + [merged] + shape[dims[-1] + 1:]),
                         operand.etype)

    @_xla_op
    def Reshape(self, operand, new_sizes, dimensions=None):
        """Flatten in `dimensions` order (row-major), refill row-major into new_sizes."""
        x = operand.operand
        if dimensions is not None:
            if sorted(dimensions) != list(range(len(operand.shape))):
                raise XlaTypeError(f"Reshape: dimensions {list(dimensions)} is not a permutation")
            x = L.transpose(self.b, x, dimensions)
        if int(np.prod(new_sizes)) != int(np.prod(operand.shape)):
            raise XlaTypeError(f"Reshape: {list(operand.shape)} and {list(new_sizes)} differ in element count")
        return self._new(self.b.reshape(x, list(new_sizes)), operand.etype)

    @_xla_op
    def Transpose(self, operand, permutation):
        if sorted(permutation) != list(range(len(operand.shape))):
            raise XlaTypeError(f"Transpose: {list(permutation)} is not a permutation of the dims")
        return self._new(self.b.transpose(operand.operand, permutation=list(permutation)), operand.etype)

    @_xla_op
    def Rev(self, operand, dimensions):
        out = L.reverse(self.b, operand.operand, dimensions)
        return self._new(out if out is not operand.operand else self.b.identity(out), operand.etype)

    @_xla_op
    def ConcatInDim(self, operands, dimension: int):
        self._same_type("ConcatInDim", *operands)
        return self._new(L.concatenate(self.b, [o.operand for o in operands], dimension), operands[0].etype)

    def Concatenate(self, operands, dimension: int):
        return self.ConcatInDim(operands, dimension)

    @_xla_op
    def Slice(self, operand, start_indices, limit_indices, strides=None):
        out = L.slice_(self.b, operand.operand, list(start_indices), list(limit_indices), strides)
        return self._new(out if out is not operand.operand else self.b.identity(out), operand.etype)

    @_xla_op
    def DynamicSlice(self, operand, start_indices, slice_sizes):
        starts = self._starts("DynamicSlice", start_indices, operand)
        out = L.dynamic_slice(self.b, operand.operand, starts, list(slice_sizes))
        return self._new(out if out is not operand.operand else self.b.identity(out), operand.etype)

    @_xla_op
    def DynamicUpdateSlice(self, operand, update, start_indices):
        starts = self._starts("DynamicUpdateSlice", start_indices, operand)
        return self._new(L.dynamic_update_slice(self.b, operand.operand, update.operand, starts), operand.etype)

    def _starts(self, op, start_indices, operand):
        """The seed's form: one rank-1 array of start indices."""
        rank = len(operand.shape)
        if start_indices.shape != (rank,) or start_indices.etype not in ("s32", "s64", "u32"):
            raise XlaTypeError(f"{op}: start_indices must be an integer array of shape [{rank}]")
        return [self.b.slice(start_indices.operand, [d], [1]) for d in range(rank)]

    @_xla_op
    def Pad(self, operand, padding_value, padding_config):
        """padding_config: [(low, high, interior)] per dim; edges may be negative."""
        self._same_type("Pad", operand, padding_value)
        if padding_value.shape != ():
            raise XlaTypeError("Pad: the padding value must be a scalar")
        low, high, interior = zip(*padding_config) if padding_config else ((), (), ())
        fill = self._known_scalar(padding_value)
        if fill is None:
            out = L.pad(self.b, operand.operand, low, high, interior, 0, value_operand=padding_value.operand)
        else:
            out = L.pad(self.b, operand.operand, low, high, interior, fill)
        return self._new(out if out is not operand.operand else self.b.identity(out), operand.etype)

    @staticmethod
    def _known_scalar(x):
        o = x.operand
        if o is not None and o.kind == "constant" and o.value is not None and o.value.size == 1:
            return o.value.reshape(-1)[0].item()
        return None

    # -- elementwise binary ----------------------------------------------------
    def _arith(name, webnn):  # noqa: N805 - a method factory
        def op(self, lhs, rhs, broadcast_dimensions=None):
            if lhs.etype == "pred":
                raise XlaTypeError(f"{name}: arithmetic on PRED")
            return self._binary(name, getattr(self.b, webnn), lhs, rhs, broadcast_dimensions)
        op.__name__ = name
        return _xla_op(op)  # named first: the record and the error messages use it

    Add = _arith("Add", "add")
    Sub = _arith("Sub", "sub")
    Mul = _arith("Mul", "mul")
    Div = _arith("Div", "div")
    Max = _arith("Max", "max")
    Min = _arith("Min", "min")
    Pow = _arith("Pow", "pow")

    @_xla_op
    def Rem(self, lhs, rhs, broadcast_dimensions=None):
        return self._binary("Rem", lambda a, c: L.rem(self.b, a, c), lhs, rhs, broadcast_dimensions)

    def _logic(name, webnn):  # noqa: N805
        def op(self, lhs, rhs, broadcast_dimensions=None):
            if lhs.etype != "pred":
                raise NotExpressibleError(name, f"bitwise {name} of {lhs.etype} (WebNN's logical ops take "
                                          "booleans only and it has no integer bit ops)")
            return self._binary(name, getattr(self.b, webnn), lhs, rhs, broadcast_dimensions)
        op.__name__ = name
        return _xla_op(op)  # named first: the record and the error messages use it

    And = _logic("And", "logicalAnd")
    Or = _logic("Or", "logicalOr")

    def _compare(name, webnn):  # noqa: N805
        def op(self, lhs, rhs, broadcast_dimensions=None):
            return self._binary(name, getattr(self.b, webnn), lhs, rhs, broadcast_dimensions, "pred")
        op.__name__ = name
        return _xla_op(op)  # named first: the record and the error messages use it

    Eq = _compare("Eq", "equal")
    Ne = _compare("Ne", "notEqual")
    Ge = _compare("Ge", "greaterOrEqual")
    Gt = _compare("Gt", "greater")
    Le = _compare("Le", "lesserOrEqual")
    Lt = _compare("Lt", "lesser")

    # -- elementwise unary ----------------------------------------------------
    def _unary(name, webnn, float_only=False):  # noqa: N805
        def op(self, operand):
            if float_only and not operand.etype.startswith("f"):
                raise XlaTypeError(f"{name}: needs a floating-point operand, got {operand.etype}")
            return self._new(getattr(self.b, webnn)(operand.operand), operand.etype)
        op.__name__ = name
        return _xla_op(op)  # named first: the record and the error messages use it

    Ceil = _unary("Ceil", "ceil", True)
    Cos = _unary("Cos", "cos", True)
    Sin = _unary("Sin", "sin", True)
    Exp = _unary("Exp", "exp", True)
    Floor = _unary("Floor", "floor", True)
    Log = _unary("Log", "log", True)
    Tanh = _unary("Tanh", "tanh", True)
    Sqrt = _unary("Sqrt", "sqrt", True)
    Sign = _unary("Sign", "sign")

    @_xla_op
    def Abs(self, operand):
        if operand.etype.startswith("u"):
            return self._new(self.b.identity(operand.operand), operand.etype)
        return self._new(self.b.abs(operand.operand), operand.etype)

    @_xla_op
    def Neg(self, operand):
        if operand.etype.startswith("u"):  # wraps, like XLA
            return self._new(self.b.sub(L.const(self.b, 0, operand.operand.dtype), operand.operand), operand.etype)
        return self._new(self.b.neg(operand.operand), operand.etype)

    @_xla_op
    def Rsqrt(self, operand):
        return self._new(self.b.reciprocal(self.b.sqrt(operand.operand)), operand.etype)

    @_xla_op
    def Not(self, operand):
        if operand.etype != "pred":
            raise NotExpressibleError("Not", f"bitwise not of {operand.etype} (WebNN has logicalNot only)")
        return self._new(self.b.logicalNot(operand.operand), "pred")

    LogicalNot = Not

    @_xla_op
    def IsFinite(self, operand):
        return self._new(L.is_finite(self.b, operand.operand), "pred")

    @_xla_op
    def Clamp(self, min, operand, max):  # noqa: A002 - XLA's argument names and order: (min, operand, max)
        self._same_type("Clamp", min, operand, max)
        for bound in (min, max):
            if bound.shape not in ((), operand.shape):
                raise XlaTypeError("Clamp: min and max must be scalars or have the operand's shape")
        return self._new(L.clamp(self.b, min.operand, operand.operand, max.operand,
                                 self._known_scalar(min), self._known_scalar(max)), operand.etype)

    @_xla_op
    def Select(self, pred, on_true, on_false):
        if pred.etype != "pred":
            raise XlaTypeError(f"Select: the predicate must be PRED, got {pred.etype}")
        if on_true.items is not None:  # tuple select with a scalar predicate
            return self.Tuple(*[self.Select(pred, t, f) for t, f in zip(on_true.items, on_false.items)])
        self._same_type("Select", on_true, on_false)
        if on_true.shape != on_false.shape or pred.shape not in ((), on_true.shape):
            raise XlaTypeError("Select: on_true and on_false must have one shape, pred that shape or scalar")
        return self._new(self.b.where(pred.operand, on_true.operand, on_false.operand), on_true.etype)

    @_xla_op
    def ConvertElementType(self, operand, new_element_type: str):
        dtype = self._check_type(new_element_type, "ConvertElementType")
        x = operand.operand
        if new_element_type == "pred":
            out = self.b.identity(x) if operand.etype == "pred" else L.to_pred(self.b, x)
        else:
            out = self.b.cast(x, dtype)
        return self._new(out, new_element_type)

    @_xla_op
    def ReducePrecision(self, operand, exponent_bits: int, mantissa_bits: int):
        if operand.etype == "f32" and (exponent_bits, mantissa_bits) == (8, 23):
            return self._new(self.b.identity(operand.operand), "f32")
        if operand.etype.startswith("f") and (exponent_bits, mantissa_bits) == (5, 10):
            x = self.b.cast(self.b.cast(operand.operand, "float16"), operand.operand.dtype)
            return self._new(x, operand.etype)
        raise NotExpressibleError("ReducePrecision", f"rounding to {exponent_bits} exponent / {mantissa_bits} "
                                  "mantissa bits needs bit-level ops WebNN lacks (only f16 and f32 round trips "
                                  "are expressible)")

    # -- linear algebra -------------------------------------------------------
    @_xla_op
    def Dot(self, lhs, rhs):
        self._same_type("Dot", lhs, rhs)
        return self._new(L.dot(self.b, lhs.operand, rhs.operand), lhs.etype)

    @_xla_op
    def DotGeneral(self, lhs, rhs, lhs_contracting_dims, rhs_contracting_dims, lhs_batch_dims=(), rhs_batch_dims=()):
        self._same_type("DotGeneral", lhs, rhs)
        return self._new(L.dot_general(self.b, lhs.operand, rhs.operand, lhs_batch_dims, rhs_batch_dims,
                                       lhs_contracting_dims, rhs_contracting_dims), lhs.etype)

    @_xla_op
    def Conv(self, lhs, rhs, window_strides, padding: str):
        """lhs [B, F, spatial...], rhs [O, I, spatial...]; padding 'SAME' or 'VALID'."""
        nsp = len(lhs.shape) - 2
        pads = self._padding("Conv", padding, lhs.shape[2:], rhs.shape[2:], window_strides)
        return self.ConvWithGeneralPadding(lhs, rhs, window_strides, pads, [1] * nsp, [1] * nsp)

    @_xla_op
    def ConvWithGeneralPadding(self, lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                               feature_group_count: int = 1):
        self._same_type("ConvWithGeneralPadding", lhs, rhs)
        nsp = len(lhs.shape) - 2
        if len(rhs.shape) != nsp + 2 or nsp < 1:
            raise XlaTypeError("Conv: lhs and rhs must both have rank spatial + 2")
        sp = list(range(2, 2 + nsp))
        out = L.convolution(self.b, lhs.operand, rhs.operand, input_dims=(0, 1, sp), kernel_dims=(0, 1, sp),
                            output_dims=(0, 1, sp), strides=window_strides, padding=padding,
                            lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                            feature_group_count=feature_group_count, op="Conv")
        return self._new(out, lhs.etype)

    @staticmethod
    def _padding(op, padding, sizes, window, strides, dilations=None):
        if isinstance(padding, str):
            if padding.upper() == "VALID":
                return [[0, 0]] * len(sizes)
            if padding.upper() == "SAME":
                return L.same_padding(list(sizes), list(window), list(strides), dilations)
            raise XlaTypeError(f"{op}: padding must be 'SAME', 'VALID' or (low, high) pairs")
        return [list(p) for p in padding]

    # -- normalisation ------------------------------------------------------------
    def _feature_shape(self, operand, feature_index):
        shape = [1] * len(operand.shape)
        shape[feature_index] = operand.shape[feature_index]
        return shape

    @_xla_op
    def BatchNormInference(self, operand, scale, offset, mean, variance, epsilon: float, feature_index: int):
        y = self.b.batchNormalization(operand.operand, mean.operand, variance.operand, scale=scale.operand,
                                      bias=offset.operand, axis=feature_index, epsilon=float(epsilon))
        return self._new(y, operand.etype)

    @_xla_op
    def BatchNormTraining(self, operand, scale, offset, epsilon: float, feature_index: int):
        """R14: biased batch moments over every dim but the feature; returns (y, mean, var)."""
        b, x = self.b, operand.operand
        axes = [d for d in range(len(operand.shape)) if d != feature_index]
        mean = b.reduceMean(x, axes=axes)
        diff = b.sub(x, b.reshape(mean, self._feature_shape(operand, feature_index)))
        var = b.reduceMean(b.mul(diff, diff), axes=axes)
        y = b.batchNormalization(x, mean, var, scale=scale.operand, bias=offset.operand, axis=feature_index,
                                 epsilon=float(epsilon))
        return self.Tuple(self._new(y, operand.etype), self._new(mean, operand.etype), self._new(var, operand.etype))

    @_xla_op
    def BatchNormGrad(self, operand, scale, mean, variance, grad_output, epsilon: float, feature_index: int):
        """Gradients wrt (x, scale, offset), with the corrected formulas (digest E6)."""
        b, x, dy = self.b, operand.operand, grad_output.operand
        fshape = self._feature_shape(operand, feature_index)
        axes = [d for d in range(len(operand.shape)) if d != feature_index]
        inv_std = b.reciprocal(b.sqrt(b.add(variance.operand, L.const(b, epsilon, x.dtype))))
        xhat = b.mul(b.sub(x, b.reshape(mean.operand, fshape)), b.reshape(inv_std, fshape))
        grad_offset = b.reduceSum(dy, axes=axes)
        grad_scale = b.reduceSum(b.mul(dy, xhat), axes=axes)
        mean_dy = b.reduceMean(dy, axes=axes, keepDimensions=True)
        mean_dy_xhat = b.reduceMean(b.mul(dy, xhat), axes=axes, keepDimensions=True)
        grad_x = b.mul(b.reshape(b.mul(scale.operand, inv_std), fshape),
                       b.sub(b.sub(dy, mean_dy), b.mul(xhat, mean_dy_xhat)))
        return self.Tuple(*(self._new(v, operand.etype) for v in (grad_x, grad_scale, grad_offset)))

    # -- computations -----------------------------------------------------------------
    def _kind(self, op, computation):
        if not isinstance(computation, XlaComputation):
            raise XlaTypeError(f"{op}: expected an XlaComputation")
        kind = computation.binary_kind()
        if kind is None:
            raise NotExpressibleError(op, f"the computation ({', '.join(computation.ops())}) is not a single "
                                      "Add/Mul/Max/Min/And/Or of its two parameters")
        return kind

    @_xla_op
    def Map(self, operands, computation, dimensions=None, static_operands=()):
        """R18: the scalar computation applied to whole tensors (elementwise bodies only)."""
        if not isinstance(computation, XlaComputation):
            raise XlaTypeError("Map: expected an XlaComputation")
        bad = sorted(set(computation.ops()) - ELEMENTWISE)
        if bad:
            raise NotExpressibleError("Map", f"the computation uses {', '.join(bad)}; only elementwise bodies "
                                      "can be applied to whole tensors")
        if static_operands:
            raise NotExpressibleError("Map", "static operands are not supported")
        shapes = {o.shape for o in operands}
        if len(shapes) != 1:
            raise XlaTypeError("Map: all operands must have one shape")
        shape = shapes.pop()
        out = computation.replay(self, list(operands))
        if out.shape != shape:
            out = self._new(self.b.expand(L.reshape(self.b, out.operand, [1] * len(shape)), list(shape)), out.etype)
        if out.operand.kind != "output":
            out = self._new(self.b.identity(out.operand), out.etype)
        return out

    @_xla_op
    def Reduce(self, operand, init_value, computation, dimensions_to_reduce):
        kind = self._kind("Reduce", computation)
        self._same_type("Reduce", operand, init_value)
        if init_value.shape != ():
            raise XlaTypeError("Reduce: init_value must be a scalar")
        out = L.reduce(self.b, operand.operand, kind, dimensions_to_reduce, self._known_scalar(init_value),
                       init_value.operand, op="Reduce")
        return self._new(out, operand.etype)

    @_xla_op
    def ReduceWindow(self, operand, init_value, computation, window_dimensions, window_strides, padding="VALID"):
        kind = self._kind("ReduceWindow", computation)
        self._same_type("ReduceWindow", operand, init_value)
        pads = self._padding("ReduceWindow", padding, operand.shape, window_dimensions, window_strides)
        out = L.reduce_window(self.b, operand.operand, kind, window_dimensions, window_strides, pads,
                              init_value=self._known_scalar(init_value), init_operand=init_value.operand,
                              op="ReduceWindow")
        return self._new(out, operand.etype)

    @_xla_op
    def SelectAndScatter(self, operand, select, window_dimensions, window_strides, padding, source, init_value,
                         scatter):
        """R19 for select = Ge/Gt and scatter = Add: per window, the first (Ge) or
        last (Gt) maximal element receives the source value; the rest get init."""
        sel = select.compare_kind() if isinstance(select, XlaComputation) else None
        if sel is None:
            raise NotExpressibleError("SelectAndScatter", "the select computation must be Ge or Gt of its two "
                                      "parameters (WebNN has no scatter to run an arbitrary selection)")
        if self._kind("SelectAndScatter", scatter) != "add":
            raise NotExpressibleError("SelectAndScatter", "the scatter computation must be Add")
        b, x = self.b, operand.operand
        rank = len(operand.shape)
        window, strides = list(window_dimensions), list(window_strides)
        pads = self._padding("SelectAndScatter", padding, operand.shape, window, strides)
        lowest = L.identity_of("max", x.dtype)
        xp = L.pad(b, x, [p[0] for p in pads], [p[1] for p in pads], None, lowest)
        out_shape = [(xp.shape[d] - window[d]) // strides[d] + 1 for d in range(rank)]
        if list(source.shape) != out_shape:
            raise XlaTypeError(f"SelectAndScatter: source shape {list(source.shape)} must be the window grid "
                               f"{out_shape}")
        offsets = list(itertools.product(*(range(w) for w in window)))
        if len(offsets) > L.MAX_UNROLLED_WINDOW:
            raise NotExpressibleError("SelectAndScatter", f"a {window} window is too large to unroll")
        best = choice = None
        take_op = b.greater if sel == "Ge" else b.greaterOrEqual
        for i, off in enumerate(offsets):
            part = L.slice_(b, xp, list(off), [off[d] + (out_shape[d] - 1) * strides[d] + 1 for d in range(rank)],
                            strides)
            if best is None:
                best, choice = part, L.const(b, np.zeros(out_shape, np.int32), "int32")
                continue
            take = take_op(part, best)
            best = b.where(take, part, best)
            choice = b.where(take, L.const(b, i, "int32"), choice)
        zero = L.const(b, 0, source.operand.dtype)
        acc = None
        for i, off in enumerate(offsets):
            picked = b.where(b.equal(choice, L.const(b, i, "int32")), source.operand, zero)
            high = [xp.shape[d] - off[d] - (out_shape[d] - 1) * strides[d] - 1 for d in range(rank)]
            placed = L.pad(b, picked, list(off), high, [s - 1 for s in strides], 0)
            acc = placed if acc is None else b.add(acc, placed)
        acc = L.pad(b, acc, [-p[0] for p in pads], [-p[1] for p in pads], None, 0)
        return self._new(b.add(acc, init_value.operand), operand.etype)

    # -- X rows: typed errors ---------------------------------------------------------
    def While(self, condition, body, init):
        raise NotExpressibleError("While", "WebNN graphs are static DAGs with no loops; unroll a static trip "
                                  "count, or loop on the host over repeated compute() calls")

    def Infeed(self, shape, etype="f32"):
        raise NotExpressibleError("Infeed", "WebNN has no device streams; the only ingress is graph inputs")

    def CrossReplicaSum(self, operand):
        raise NotExpressibleError("CrossReplicaSum", "WebNN has no replicas or collectives")

    def CustomCall(self, call_target_name, operands, shape):
        raise NotExpressibleError("CustomCall", f"WebNN has no extension hook to call {call_target_name!r}")

    def RngBernoulli(self, mean, shape):
        raise NotExpressibleError("RngBernoulli", "WebNN has no random number generation (graphs are "
                                  "deterministic); feed samples as an input")

    def RngNormal(self, mu, sigma, shape):
        raise NotExpressibleError("RngNormal", "WebNN has no random number generation (graphs are "
                                  "deterministic); feed samples as an input")

    def RngUniform(self, a, b, shape):
        raise NotExpressibleError("RngUniform", "WebNN has no random number generation (graphs are "
                                  "deterministic); feed samples as an input")

    def Sort(self, operand):
        raise NotExpressibleError("Sort", "WebNN has no sort, top-k or general scatter operation")


__all__ = ["XlaBuilder", "XlaComputation", "XlaOp", "XLA_TYPES"]
