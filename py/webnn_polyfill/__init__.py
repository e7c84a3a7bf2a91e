"""WebNN's graph API on numpy, in CPython, without a browser.

The same engine as the browser polyfill (`webnn_core`), with the interfaces of
the W3C WebNN API. Names are accepted in both spellings: the IDL's
(`createContext`, `batchNormalization`, `filterLayout=`) and Python's
(`create_context`, `batch_normalization`, `filter_layout=`), as PyPI `pywebnn`
writes them. Calls are synchronous (there is no event loop to resolve promises):

    import numpy as np
    from webnn_polyfill import ml, MLGraphBuilder

    context = ml.create_context()                      # or ml.createContext({"deviceType": "cpu"})
    builder = MLGraphBuilder(context)
    x = builder.input("x", {"dataType": "float32", "shape": [1, 1, 3, 3]})
    w = builder.constant(np.ones((1, 1, 2, 2), np.float32))
    y = builder.relu(builder.conv2d(x, w, padding=[0, 1, 0, 1]))
    graph = builder.build({"y": y})
    out = context.compute(graph, {"x": np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)})
    out["y"]                                           # a numpy array, shape (1, 1, 3, 3)

Errors are the core's: `WebNNTypeError` (the JS TypeError), `DataError`,
`InvalidStateError`, `NotSupportedError`, `OperationError`, all `WebNNError`.
"""
from __future__ import annotations

import re

import numpy as np

from webnn_core import __version__
from webnn_core import dtypes
from webnn_core.builder import GraphBuilder
from webnn_core.context import Context, Tensor
from webnn_core.errors import (DataError, InvalidStateError, NotSupportedError, OperationError, WebNNError,
                               WebNNTypeError)
from webnn_core.ops import ops

__all__ = ["ml", "ML", "MLContext", "MLGraphBuilder", "MLOperand", "MLGraph", "MLTensor", "__version__",
           "WebNNError", "WebNNTypeError", "DataError", "InvalidStateError", "NotSupportedError", "OperationError"]


def _camel(name: str) -> str:
    """`filter_layout` -> `filterLayout`; IDL names pass through unchanged."""
    return re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)


def _snake(name: str) -> str:
    """`batchNormalization` -> `batch_normalization`, `gatherND` -> `gather_nd`, `isNaN` -> `is_nan`."""
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


def _dictionary(value, what: str) -> dict:
    """A WebIDL dictionary from a dict with IDL or snake_case keys."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WebNNTypeError(f"{what} must be a dict, not {type(value).__name__}")
    return {_camel(k): v for k, v in value.items()}


def _descriptor(value, what: str) -> dict:
    d = _dictionary(value, what)
    if "dataType" not in d or "shape" not in d:
        raise WebNNTypeError(f"{what}: a descriptor needs dataType and shape")
    return {**d, "shape": [int(s) for s in d["shape"]]}


def _data_type_of(array: np.ndarray, what: str) -> str:
    for name in dtypes.ALL_TYPES:
        if name not in dtypes.FOUR_BIT and np.dtype(dtypes.numpy_dtype(name)) == array.dtype:
            return name
    raise WebNNTypeError(f"{what}: numpy dtype {array.dtype} has no WebNN data type")


class ML:
    """`navigator.ml`: makes contexts."""

    def create_context(self, options=None, *, device_type: str | None = None, power_preference: str | None = None,
                       fast_paths: bool | None = None) -> "MLContext":
        """`options`: {"deviceType", "powerPreference"} (or the keywords);
        `fast_paths=False` runs the numpy reference kernels only."""
        o = _dictionary(options, "createContext: options")
        backend = {"fastPaths": fast_paths} if fast_paths is not None else None
        core = Context(device_type or o.get("deviceType", "cpu"), power_preference or o.get("powerPreference", "default"),
                       backend)
        return MLContext(core)

    createContext = create_context


ml = ML()


class MLContext:
    __slots__ = ("_core",)

    def __init__(self, core: Context):
        self._core = core

    @property
    def device_type(self) -> str:
        return self._core.device_type

    def create_graph_builder(self) -> "MLGraphBuilder":  # pywebnn's spelling of MLGraphBuilder(context)
        return MLGraphBuilder(self)

    def op_support_limits(self) -> dict:
        return self._core.op_support_limits()

    def compute(self, graph: "MLGraph", inputs: dict, outputs: dict | None = None) -> dict:
        """Run `graph` on numpy arrays; returns {name: ndarray}. With `outputs`
        ({name: ndarray}), also copies each result into the given array."""
        results = self._core.compute(_unwrap_graph(graph, "compute"), {k: np.asarray(v) for k, v in inputs.items()})
        for name, target in (outputs or {}).items():
            if name not in results:
                raise WebNNTypeError(f"compute: the graph has no output '{name}'")
            if not isinstance(target, np.ndarray) or target.size != results[name].size:
                raise WebNNTypeError(f"compute: output '{name}' needs an array of {results[name].size} elements")
            target.reshape(-1)[...] = results[name].reshape(-1)
        return results

    def create_tensor(self, descriptor) -> "MLTensor":
        return MLTensor(self._core.create_tensor(_descriptor(descriptor, "createTensor")))

    def create_constant_tensor(self, descriptor, data) -> "MLTensor":
        d = _descriptor(descriptor, "createConstantTensor")
        tensor = self._core.create_tensor({**d, "writable": True})
        self._core.write_tensor(tensor, data)
        tensor.writable = False
        return MLTensor(tensor)

    def write_tensor(self, tensor: "MLTensor", data) -> None:
        """`data`: a numpy array of the tensor's element count, or bytes of its byte length."""
        self._core.write_tensor(_unwrap_tensor(tensor, "writeTensor"), data)

    def read_tensor(self, tensor: "MLTensor", out: np.ndarray | None = None) -> np.ndarray:
        """The tensor's contents as a numpy array of its data type and shape (a
        copy); with `out`, copied into that array as well."""
        core = _unwrap_tensor(tensor, "readTensor")
        if not core.readable:
            raise WebNNTypeError("readTensor: the tensor is not readable")
        array = self._core.read_array(core)
        if out is not None:
            out.reshape(-1)[...] = array.reshape(-1)
        return array

    def dispatch(self, graph: "MLGraph", inputs: dict, outputs: dict) -> None:
        self._core.dispatch(_unwrap_graph(graph, "dispatch"),
                            {k: _unwrap_tensor(v, "dispatch") for k, v in inputs.items()},
                            {k: _unwrap_tensor(v, "dispatch") for k, v in outputs.items()})

    def destroy(self) -> None:
        self._core.destroy()

    createTensor = create_tensor
    createConstantTensor = create_constant_tensor
    writeTensor = write_tensor
    readTensor = read_tensor
    opSupportLimits = op_support_limits
    deviceType = device_type


class MLOperand:
    __slots__ = ("_core",)

    def __init__(self, core):
        self._core = core

    @property
    def data_type(self) -> str:
        return self._core.dtype

    @property
    def shape(self) -> list:
        return list(self._core.shape)

    dataType = data_type

    def __repr__(self):
        return f"MLOperand({self._core.dtype}{list(self._core.shape)})"


class MLGraph:
    __slots__ = ("_core",)

    def __init__(self, core):
        self._core = core

    @property
    def inputs(self) -> dict:
        """{name: {"dataType", "shape"}} of the graph's inputs."""
        return {name: op.descriptor for name, op in self._core.inputs.items()}

    @property
    def outputs(self) -> dict:
        return {name: op.descriptor for name, op in self._core.outputs.items()}

    def destroy(self) -> None:
        self._core.destroyed = True


class MLTensor:
    __slots__ = ("_core",)

    def __init__(self, core: Tensor):
        self._core = core

    @property
    def data_type(self) -> str:
        return self._core.dtype

    @property
    def shape(self) -> list:
        return list(self._core.shape)

    @property
    def readable(self) -> bool:
        return self._core.readable

    @property
    def writable(self) -> bool:
        return self._core.writable

    def destroy(self) -> None:
        self._core.destroy()

    dataType = data_type


def _unwrap_graph(graph, what):
    if not isinstance(graph, MLGraph):
        raise WebNNTypeError(f"{what}: the graph is not an MLGraph")
    return graph._core


def _unwrap_tensor(tensor, what):
    if not isinstance(tensor, MLTensor):
        raise WebNNTypeError(f"{what}: {tensor!r} is not an MLTensor")
    return tensor._core


def _unwrap(value):
    """Operands (also inside lists and option dicts) -> the core's operands."""
    if isinstance(value, MLOperand):
        return value._core
    if isinstance(value, (list, tuple)):
        return [_unwrap(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _wrap(result):
    return [MLOperand(r) for r in result] if isinstance(result, list) else MLOperand(result)


# IDL operation names, and each one's snake_case name.
_OPS = {**{name: name for name in ops()}, **{_snake(name): name for name in ops()}}


class MLGraphBuilder:
    """`MLGraphBuilder(context)`. Operations by IDL or snake_case name, options as
    a trailing dict and/or keyword arguments (IDL or snake_case keys)."""

    def __init__(self, context: MLContext):
        if not isinstance(context, MLContext):
            raise WebNNTypeError("MLGraphBuilder: the argument is not an MLContext")
        self._core = GraphBuilder(context._core)

    def input(self, name: str, descriptor, data_type: str | None = None) -> MLOperand:
        """`input(name, {"dataType", "shape"})`, or pywebnn's `input(name, shape, data_type)`."""
        if data_type is not None:
            descriptor = {"dataType": data_type, "shape": descriptor}
        return MLOperand(self._core.input(name, _descriptor(descriptor, f"input '{name}'")))

    def constant(self, descriptor, data=None) -> MLOperand:
        """`constant({"dataType", "shape"}, data)` with an array or bytes;
        `constant(array)` (the array's own data type and shape); or
        `constant("float32", 1.5)`, a scalar."""
        if isinstance(descriptor, str):
            return MLOperand(self._core.constant_scalar(descriptor, data))
        if data is None:
            array = np.ascontiguousarray(descriptor)
            descriptor = {"dataType": _data_type_of(array, "constant"), "shape": list(array.shape)}
            data = array
        return MLOperand(self._core.constant(_descriptor(descriptor, "constant"), data))

    def build(self, outputs: dict) -> MLGraph:
        if not isinstance(outputs, dict):
            raise WebNNTypeError("build: outputs must be a dict of name -> MLOperand")
        for name, operand in outputs.items():
            if not isinstance(operand, MLOperand):
                raise WebNNTypeError(f"build: output '{name}' is not an MLOperand")
        return MLGraph(self._core.build({name: op._core for name, op in outputs.items()}))

    def __getattr__(self, name):
        op_name = _OPS.get(name)
        if op_name is None:
            raise AttributeError(f"MLGraphBuilder has no operation {name!r}")

        def operation(*args, **options):
            if args and isinstance(args[-1], dict):  # the IDL's trailing options dictionary
                options = {**args[-1], **options}
                args = args[:-1]
            opts = {_camel(k): _unwrap(v) for k, v in options.items()}
            return _wrap(self._core.op(op_name, *[_unwrap(a) for a in args], **opts))

        operation.__name__ = name
        return operation

    def __dir__(self):
        return sorted({*super().__dir__(), *_OPS})
