"""MLGraphBuilder: input/constant/build and the generic op entry point.

Every op call goes through `GraphBuilder.op()`, which applies the steps common
to all ops (state check, the IDL's option defaults and enum checks from the
generated schema, cross-builder check, data types from the op's `limits`, ranks
from the spec's tables, output descriptor checks) around the op's own `infer`,
and turns validation failures into TypeErrors carrying the op's label. JS, the
importers and Python callers all come through here.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, schema
from .errors import Invalid, InvalidStateError, UnknownError, WebNNTypeError
from .graph import Graph, Node, Operand, normalise_call
from .ops import ops
from .registry import MAX_RANK
from .spec_ranks import RANKS
MAX_DIMENSION = 2**32 - 1
# Chromium's value; WPT needs it to be 3 mod 4 (see digest §2.1).
MAX_TENSOR_BYTE_LENGTH = 2**31 - 1


def check_descriptor(dtype, shape, allowed, what: str) -> tuple:
    """The spec's "check dimensions" plus the data type limit. Raises Invalid."""
    if dtype not in dtypes.ALL_TYPES:
        raise Invalid(f"{what}: unknown data type {dtype!r}")
    if dtype not in allowed:
        raise Invalid(f"{what}: data type {dtype} is not supported")
    shape = tuple(shape)
    if len(shape) > MAX_RANK:
        raise Invalid(f"{what}: rank {len(shape)} exceeds the maximum rank {MAX_RANK}")
    for d in shape:
        if not isinstance(d, int) or isinstance(d, bool) or d < 1 or d > MAX_DIMENSION:
            raise Invalid(f"{what}: every dimension must be an integer in [1, {MAX_DIMENSION}], got {list(shape)}")
    if dtypes.byte_length(dtype, shape) > MAX_TENSOR_BYTE_LENGTH:
        raise Invalid(f"{what}: byte length exceeds the maximum tensor byte length {MAX_TENSOR_BYTE_LENGTH}")
    return shape


def _labelled(label: str, what: str, message) -> WebNNTypeError:
    prefix = f"[{label}] " if label else ""
    return WebNNTypeError(f"{prefix}{what}: {message}")


class GraphBuilder:
    def __init__(self, context):
        if context.destroyed:
            raise InvalidStateError("MLGraphBuilder: the context is destroyed")
        self.context = context
        self.built = False
        self._operand_count = 0

    # -- bookkeeping -------------------------------------------------------
    def next_operand_id(self) -> int:
        self._operand_count += 1
        return self._operand_count

    def _check_state(self, what: str) -> None:
        if self.context.destroyed:
            raise InvalidStateError(f"{what}: the context is destroyed")
        if self.built:
            raise InvalidStateError(f"{what}: build() has already been called on this builder")

    def _own(self, operand, what: str, label: str = ""):
        if not isinstance(operand, Operand) or operand.builder is not self:
            raise _labelled(label, what, "an operand was created by another MLGraphBuilder")
        return operand

    # -- inputs and constants ---------------------------------------------
    def input(self, name: str, descriptor: dict) -> Operand:
        """A graph input. A name the builder already has is accepted here, unlike the
        ED's input() step 3, as shipping Chromium and WPT's validation helpers do (they
        call input('input', ...) many times on one builder); build() rejects a graph
        whose outputs depend on two inputs of one name (graph.Graph). README,
        "Accepted beyond the 2026 IDL"."""
        self._check_state("input")
        if not isinstance(name, str) or name == "":
            raise WebNNTypeError("input: the name must not be empty")
        limits = self.context.io_types["input"]
        try:
            shape = check_descriptor(descriptor["dataType"], descriptor["shape"], limits, f"input '{name}'")
        except Invalid as e:
            raise WebNNTypeError(str(e)) from None
        return Operand(self, descriptor["dataType"], shape, "input", name=name)

    def constant(self, descriptor: dict, data) -> Operand:
        """`data`: raw bytes (or any buffer) of exactly the descriptor's byte length,
        or a numpy array of the matching dtype."""
        self._check_state("constant")
        dtype = descriptor["dataType"]
        try:
            shape = check_descriptor(dtype, descriptor["shape"], self.context.io_types["constant"], "constant")
        except Invalid as e:
            raise WebNNTypeError(str(e)) from None
        value = _array_from(dtype, shape, data, "constant")
        return Operand(self, dtype, shape, "constant", value=value)

    def constant_scalar(self, dtype: str, value) -> Operand:
        """The `constant(type, MLNumber value)` overload: a 0-D constant."""
        self._check_state("constant")
        if dtype not in self.context.io_types["constant"]:
            raise WebNNTypeError(f"constant: data type {dtype} is not supported")
        return Operand(self, dtype, (), "constant", value=np.array(dtypes.cast_number(value, dtype)))

    def constant_tensor(self, tensor) -> Operand:
        """The `constant(MLTensor)` overload: an operand holding a constant tensor's data."""
        if getattr(tensor, "context", None) is not self.context or not hasattr(tensor, "constant"):
            raise WebNNTypeError("constant: the tensor belongs to another context")
        if tensor.destroyed:
            raise WebNNTypeError("constant: the tensor is destroyed")
        if not tensor.constant:
            raise WebNNTypeError("constant: the tensor was not created by createConstantTensor()")
        self._check_state("constant")
        return Operand(self, tensor.dtype, tensor.shape, "constant", value=self.context.constant_value(tensor))

    # -- ops ------------------------------------------------------------------
    def op(self, name: str, *args, **options):
        op = ops().get(name)
        if op is None:
            raise WebNNTypeError(f"unknown operation {name!r}")
        label = options.pop("label", "") or ""
        self._check_state(name)
        if len(args) < len(op.params):
            args = args + tuple(op.param_defaults[p] for p in op.params[len(args):] if p in op.param_defaults)
        if len(args) != len(op.params):
            raise WebNNTypeError(f"{name}: expected {len(op.params)} arguments, got {len(args)}")
        if not self.context.backend.supports(op):
            raise _labelled(label, name, "the operation is not supported by this context's backend")
        try:
            schema.normalize_args(name, args)
            options = schema.normalize_options(name, options)
            operands = {}
            for key, value in zip(op.params, args):
                if self._check_operand_argument(op, key, value, label):
                    operands[key] = value
            for key in op.option_operands:
                if options.get(key) is not None:
                    self._check_operand_argument(op, key, options[key], label)
                    operands[key] = options[key]
            _check_ranks(op, operands)
            inferred = op.infer(*args, **options)
            for dtype, shape in inferred.outputs:
                check_descriptor(dtype, shape, dtypes.ALL_TYPES, "output")
        except Invalid as e:
            raise _labelled(label, name, e) from None
        operands, attrs = normalise_call(op, args, options)
        node = Node(op, inferred.inputs, operands, attrs, label, inferred.attrs)
        node.outputs = [Operand(self, dt, shp, "output", node=node) for dt, shp in inferred.outputs]
        return node.outputs if getattr(op, "returns_sequence", False) else node.outputs[0]

    def _check_operand_argument(self, op, key, value, label):
        """Check an operand argument's builder and data type; False if `key` is no operand."""
        if isinstance(value, (list, tuple)) and key in op.limits:  # e.g. concat's inputs
            for v in value:
                self._check_operand_argument(op, key, v, label)
            return True
        if key not in op.limits:
            return False  # not an operand parameter (axis, newShape, ...)
        self._own(value, op.name, label)
        if value.dtype not in op.limits[key]:
            raise Invalid(f"{key}: data type {value.dtype} is not supported (supported: {', '.join(op.limits[key])})")
        return True

    def __getattr__(self, name):
        # builder.relu(x), builder.conv2d(x, w, padding=[...]) for Python callers.
        if name.startswith("_") or name not in ops():
            raise AttributeError(name)

        def method(*args, **options):
            if args and isinstance(args[-1], dict):  # no positional parameter takes a dict: it is the options
                options = {**args[-1], **options}
                args = args[:-1]
            return self.op(name, *args, **options)

        return method

    # -- build ------------------------------------------------------------------
    def build(self, outputs: dict) -> Graph:
        if self.context.destroyed:
            raise InvalidStateError("build: the context is destroyed")
        if self.built:
            raise InvalidStateError("build: build() has already been called on this builder")
        if not outputs:
            raise WebNNTypeError("build: at least one output is required")
        for name, operand in outputs.items():
            if name == "":
                raise WebNNTypeError("build: output names must not be empty")
            self._own(operand, "build")
            if operand.kind in ("input", "constant"):
                raise WebNNTypeError(f"build: output '{name}' is a graph {operand.kind}; outputs must be computed by an operation")
        graph = Graph(self.context, dict(outputs))
        # A shadow context (timeline worker) plans nothing: the worker's context plans its copy.
        graph.plan = None if self.context.shadow else self.context.backend.plan(graph)
        self.built = True
        self.context.adopt_graph(graph)
        return graph


def _check_ranks(op, operands: dict) -> None:
    """The spec's allowed ranks (spec_ranks.RANKS, also reported by opSupportLimits)."""
    table = RANKS.get(op.name, {})
    for key, value in operands.items():
        for operand in value if isinstance(value, (list, tuple)) else (value,):
            rule = table.get(key)
            rank = len(operand.shape)
            if isinstance(rule, str):
                other = operands.get(rule)
                if isinstance(other, (list, tuple)):
                    other = other[0] if other else None
                if other is not None and rank != len(other.shape):
                    raise Invalid(f"{key} must have the rank of {rule} ({len(other.shape)}), got rank {rank}")
                continue
            lo, hi = op.rank_range(key)
            if not lo <= rank <= hi:
                allowed = str(lo) if lo == hi else f"{lo} to {hi}"
                raise Invalid(f"{key} must have rank {allowed}, got rank {rank}")


def _array_from(dtype, shape, data, what):
    if hasattr(data, "read_into"):  # a dtypes.ByteSource: size checked before the one copy
        if data.nbytes != dtypes.byte_length(dtype, shape):
            raise WebNNTypeError(f"{what}: the buffer has {data.nbytes} bytes, the descriptor needs {dtypes.byte_length(dtype, shape)}")
        try:
            return dtypes.from_source(dtype, shape, data)
        except MemoryError:
            raise UnknownError(f"{what}: could not allocate {data.nbytes} bytes") from None
    if isinstance(data, np.ndarray):
        if data.dtype != dtypes.numpy_dtype(dtype) or data.shape != tuple(shape):
            if data.size != dtypes.element_count(shape):
                raise WebNNTypeError(f"{what}: the array has {data.size} elements, the descriptor needs {dtypes.element_count(shape)}")
            data = data.reshape(shape)
        if dtype in dtypes.FOUR_BIT:  # as packing into nibbles would: keep the low 4 bits
            return dtypes.wrap_integer(data, dtype)
        return np.array(data, dtype=dtypes.numpy_dtype(dtype), copy=True)
    data = memoryview(data).cast("B")
    expected = dtypes.byte_length(dtype, shape)
    if data.nbytes != expected:
        raise WebNNTypeError(f"{what}: the buffer has {data.nbytes} bytes, the descriptor needs {expected}")
    return dtypes.from_bytes(dtype, shape, data)
