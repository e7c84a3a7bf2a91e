"""MLContext and MLTensor: tensors, dispatch and opSupportLimits().

Execution is synchronous in call order: `dispatch` runs the graph before it
returns, `write_tensor` copies at call time, `read_tensor` snapshots at call
time. That alone gives the MLTensor timeline its required ordering; the JS shim
adds the promise settling and the destroy-while-pending rechecks.

A tensor's array is never written in place: writes and dispatches replace it.
So a read snapshot is the array itself, and a dispatch output may share memory
with an input or a constant without a copy.

A context owns its tensors and graphs: destroying it destroys them, and
destroying either frees its arrays at once.
"""
from __future__ import annotations

import json
import weakref

import numpy as np

from . import dtypes, schema
from .backends import create_backend
from .builder import MAX_TENSOR_BYTE_LENGTH, GraphBuilder, check_descriptor
from .errors import Invalid, InvalidStateError, NotSupportedError, UnknownError, WebNNTypeError
from .ops import ops
from .registry import MAX_RANK

DEVICE_TYPES = ("cpu", "gpu", "npu")

# MLOpSupportLimits as JSON text, per (context class, backend class, preferred layout, IDL).
# The table depends only on what is fixed when the engine is imported: the op registry,
# the IDL schema (a build flag; tests switch it), Context.io_types and the backend class (Backend.supports and
# op_support_limits answer per class, not per instance). So it is computed once per
# process (ORT's WebNN EP asks once per session, on a context of its own) and kept as an
# immutable str: every caller parses its own fresh copy. A backend whose limits came to
# depend on its instance (a device's features) must add that to the key.
_LIMITS_JSON: dict = {}
POWER_PREFERENCES = ("default", "high-performance", "low-power")


class Tensor:
    def __init__(self, context, dtype, shape, readable, writable, constant=False, exportable=False):
        self.context = context
        self.constant = constant  # createConstantTensor(): immutable, only for builder.constant(tensor)
        # createExportableTensor(): may be rented to the page's GPUDevice (exportToGPU); while
        # `exported`, WebNN may not touch it (the page's GPUBuffer has exclusive access).
        self.exportable = exportable
        self.exported = False
        self.dtype = dtype
        self.shape = tuple(shape)
        self.readable = bool(readable)
        self.writable = bool(writable)
        self.destroyed = False
        if context.shadow and not constant:
            self.data = None  # the timeline worker holds the contents (Context.shadow)
            return
        if context.shadow:  # a constant tensor's bytes stay for builder.constant(tensor)
            self.data = dtypes.zeros(dtype, self.shape)
            return
        # The backend's storage (numpy for cpu), zero-initialised as the tests expect.
        try:
            self.data = context.backend.allocate(dtype, self.shape)
        except MemoryError:
            raise UnknownError(f"createTensor: could not allocate {dtypes.byte_length(dtype, shape)} bytes") from None

    @property
    def descriptor(self):
        return {"dataType": self.dtype, "shape": list(self.shape)}

    def destroy(self):
        if not self.destroyed and not self.context.shadow:
            self.context.backend.free(self.data)
        self.destroyed = True
        self.exported = False
        self.data = None


class Context:
    # Every data type the engine stores, also the 4-bit ones WPT uses.
    io_types = {"input": dtypes.ALL_TYPES, "constant": dtypes.ALL_TYPES, "output": dtypes.ALL_TYPES}

    def __init__(self, device_type: str = "cpu", power_preference: str = "default", options: dict | None = None,
                 gpu_device=None, shadow: bool = False):
        """`options`: backend options (`backends.create_backend`), e.g.
        {"fastPaths": False} or {"backend": "webgpu"}; `gpu_device`: the
        GPUDevice createContext() was given, for the webgpu backend.

        `shadow`: the context of a page whose timeline runs in a worker (js/src/timeline.js,
        docs/architecture.md "The timeline worker"). It makes every check this context
        would make (builder, tensors, bindings, destroyed state, in the same order, with
        the same errors) but holds no tensor contents, plans nothing and runs nothing:
        the worker's own context, given the same calls, does. Its backend answers
        capabilities (opSupportLimits, supports) as the worker's does."""
        self.shadow = bool(shadow)
        if device_type not in DEVICE_TYPES:
            raise NotSupportedError(f"createContext: unsupported deviceType {device_type!r}")
        if power_preference not in POWER_PREFERENCES:
            raise NotSupportedError(f"createContext: unsupported powerPreference {power_preference!r}")
        self.device_type = device_type
        self.power_preference = power_preference
        self.destroyed = False
        # What destroy() must release (weak: a collected tensor or graph frees itself).
        self._tensors = weakref.WeakSet()
        self._graphs = weakref.WeakSet()
        try:
            self.backend = create_backend(device_type, options, gpu_device)
        except ValueError as e:
            raise NotSupportedError(f"createContext: {e}") from None

    def _check_alive(self, what):
        if self.destroyed:
            raise InvalidStateError(f"{what}: the context is destroyed")

    # -- capabilities ---------------------------------------------------------
    def op_support_limits(self) -> dict:
        """MLOpSupportLimits with the members of the IDL the schema was built from: what
        the op registry allows, narrowed to what this context's backend runs (a fresh
        dictionary per call)."""
        return json.loads(self.op_support_limits_json())

    def op_support_limits_json(self) -> str:
        """op_support_limits() as JSON text, computed once per backend class (see _LIMITS_JSON)."""
        key = (type(self), type(self.backend), self.backend.preferred_input_layout, schema.idl_name())
        text = _LIMITS_JSON.get(key)
        if text is None:
            text = _LIMITS_JSON[key] = json.dumps(self._compute_op_support_limits(), allow_nan=False)
        return text

    def _compute_op_support_limits(self) -> dict:
        registry = ops()
        members = schema.schema()["supportLimits"]["ops"]
        per_op = self.backend.op_support_limits(
            {name: registry[name].support_limits(keys) for name, keys in members.items()}, registry)
        any_rank = {"min": 0, "max": MAX_RANK}
        return {
            "preferredInputLayout": self.backend.preferred_input_layout,
            "maxTensorByteLength": MAX_TENSOR_BYTE_LENGTH,
            **{k: {"dataTypes": list(v), "rankRange": dict(any_rank)} for k, v in self.io_types.items()},
            **per_op,
        }

    def graph_builder(self) -> GraphBuilder:
        return GraphBuilder(self)

    # -- tensors ---------------------------------------------------------------
    def _checked_shape(self, descriptor: dict, io_kind: str, method: str) -> tuple:
        """The descriptor's shape once this context is alive and the descriptor is valid
        for `io_kind` tensors ("input" or "constant"); TypeError otherwise."""
        self._check_alive(method)
        try:
            return check_descriptor(descriptor["dataType"], descriptor["shape"], self.io_types[io_kind], method)
        except Invalid as e:
            raise WebNNTypeError(str(e)) from None

    def create_tensor(self, descriptor: dict) -> Tensor:
        shape = self._checked_shape(descriptor, "input", "createTensor")
        tensor = Tensor(self, descriptor["dataType"], shape, descriptor.get("readable", False), descriptor.get("writable", False))
        self._tensors.add(tensor)
        return tensor

    def create_exportable_tensor(self, descriptor: dict, device_problem: str | None = None) -> Tensor:
        """createExportableTensor(descriptor, gpuDevice): a tensor this context can rent to
        that GPUDevice (export_tensor). `device_problem`: why the JS shim cannot share
        this context's buffers with the given device (None: it is the context's own)."""
        shape = self._checked_shape(descriptor, "input", "createExportableTensor")
        why = device_problem or self.backend.export_problem(descriptor["dataType"], shape)
        if why:
            raise NotSupportedError(f"createExportableTensor: {why}")
        tensor = Tensor(self, descriptor["dataType"], shape, descriptor.get("readable", False),
                        descriptor.get("writable", False), exportable=True)
        self._tensors.add(tensor)
        return tensor

    def export_tensor(self, tensor: Tensor) -> dict:
        """exportToGPU(tensor): rent the tensor to its GPUDevice. Returns what the
        backend hands the JS shim to make the page's GPUBuffer from ({"buffer", "bytes"});
        the buffer's contents are the tensor's as of now (every earlier write and dispatch)."""
        self._check_tensor(tensor, "exportToGPU")
        if not tensor.exportable:
            raise WebNNTypeError("exportToGPU: the tensor is not exportable (create it with createExportableTensor())")
        tensor.exported = True
        return self.backend.export(tensor.data)

    def return_tensor(self, tensor: Tensor) -> None:
        """The page destroyed the GPUBuffer exportToGPU() gave it: the tensor is WebNN's
        again, with the contents the page's GPU work left in that buffer."""
        if isinstance(tensor, Tensor) and tensor.context is self and tensor.exported:
            tensor.exported = False
            if not tensor.destroyed:
                self.backend.returned(tensor.data)

    def constant_value(self, tensor: Tensor):
        """A constant tensor's contents as an array (builder.constant(tensor))."""
        return tensor.data if self.shadow else self.backend.read(tensor.data)

    def adopt_graph(self, graph) -> None:
        """Called by the builder: the graph is destroyed with this context."""
        self._graphs.add(graph)

    def create_constant_tensor(self, descriptor: dict, data) -> Tensor:
        """createConstantTensor(): neither readable nor writable, filled now from `data`
        (bytes-like of exactly the byte length, or a numpy array of that shape)."""
        shape = self._checked_shape(descriptor, "constant", "createConstantTensor")
        tensor = Tensor(self, descriptor["dataType"], shape, False, False, constant=True)
        self._fill(tensor, data, "createConstantTensor")
        self._tensors.add(tensor)
        return tensor

    def _check_tensor(self, tensor, what):
        # The ED's order: wrong context, destroyed (both TypeError), then lost context.
        if not isinstance(tensor, Tensor) or tensor.context is not self:
            raise WebNNTypeError(f"{what}: the tensor belongs to another context")
        if tensor.destroyed and not self.destroyed:
            raise WebNNTypeError(f"{what}: the tensor is destroyed")
        self._check_alive(what)
        if tensor.exported:
            raise WebNNTypeError(f"{what}: the tensor is exported to WebGPU (destroy the GPUBuffer exportToGPU() "
                                 "returned to give it back to WebNN)")

    def write_tensor(self, tensor: Tensor, data) -> None:
        """Copy `data` (bytes-like or a dtypes.ByteSource of exactly the tensor's
        byte length, or a numpy array of its shape) into the tensor now."""
        self._check_tensor(tensor, "writeTensor")
        if tensor.constant:
            raise WebNNTypeError("writeTensor: a constant tensor is not writable")
        if not tensor.writable:
            raise WebNNTypeError("writeTensor: the tensor is not writable (it was created without writable: true)")
        self._fill(tensor, data, "writeTensor")

    def _fill(self, tensor: Tensor, data, what: str) -> None:
        if isinstance(data, np.ndarray) and data.dtype != np.uint8:
            if data.size != dtypes.element_count(tensor.shape):
                raise WebNNTypeError(f"{what}: the array's element count does not match the tensor")
            array = np.array(data, dtype=dtypes.numpy_dtype(tensor.dtype)).reshape(tensor.shape)
            tensor.data = self.backend.write(tensor.data, array)
            return
        source = data if hasattr(data, "read_into") else dtypes.ByteSource(data)
        expected = dtypes.byte_length(tensor.dtype, tensor.shape)
        if source.nbytes != expected:
            raise WebNNTypeError(f"{what}: the source has {source.nbytes} bytes, the tensor has {expected}")
        if self.shadow and not tensor.constant:
            return  # checked; the worker's context copies the bytes
        try:
            array = dtypes.from_source(tensor.dtype, tensor.shape, source)
        except MemoryError:
            raise UnknownError(f"{what}: could not allocate {expected} bytes") from None
        tensor.data = array if self.shadow else self.backend.write(tensor.data, array)

    def _check_readable(self, tensor: Tensor) -> None:
        self._check_tensor(tensor, "readTensor")
        if tensor.constant:
            raise WebNNTypeError("readTensor: a constant tensor is not readable")
        if not tensor.readable:
            raise WebNNTypeError("readTensor: the tensor is not readable (it was created without readable: true)")

    def device_read(self, tensor: Tensor):
        """None when `read_view` can answer now; else what the JS shim must read
        from the device (the webgpu backend's GPU-only contents), as of now."""
        self._check_readable(tensor)
        if self.shadow:  # checked; the worker's context reads it
            return {"remote": dtypes.byte_length(tensor.dtype, tensor.shape)}
        return self.backend.device_read(tensor.data)

    def read_view(self, tensor: Tensor) -> np.ndarray:
        """The tensor's contents as of now: a C-contiguous uint8 array that is
        never written again (no copy when the data already is contiguous)."""
        self._check_readable(tensor)
        try:
            return dtypes.contiguous_bytes(tensor.dtype, self.backend.read(tensor.data))
        except MemoryError:
            raise UnknownError("readTensor: could not allocate the bytes to read") from None

    def read_tensor(self, tensor: Tensor) -> bytes:
        """The tensor's contents as raw bytes, as of now."""
        return self.read_view(tensor).tobytes()

    def read_array(self, tensor: Tensor) -> np.ndarray:
        self._check_tensor(tensor, "readTensor")
        return np.array(self.backend.read(tensor.data), copy=True)

    # -- execution --------------------------------------------------------------
    def dispatch(self, graph, inputs: dict, outputs: dict) -> None:
        self._check_alive("dispatch")
        if graph.context is not self:
            raise WebNNTypeError("dispatch: the graph belongs to another context")
        if graph.destroyed:
            raise InvalidStateError("dispatch: the graph is destroyed")
        self._check_bindings("input", graph.inputs, inputs)
        self._check_bindings("output", graph.outputs, outputs)
        out_tensors = list(outputs.values())
        if len({id(t) for t in out_tensors}) != len(out_tensors):
            raise WebNNTypeError("dispatch: the same tensor is bound to two outputs")
        if {id(t) for t in out_tensors} & {id(t) for t in inputs.values()}:
            raise WebNNTypeError("dispatch: a tensor is bound both as an input and as an output")
        if self.shadow:
            return  # checked; the worker's context runs it
        self.run(graph, inputs, outputs)

    def run(self, graph, inputs: dict, outputs: dict) -> None:
        """dispatch() of a call a shadow context checked already (the timeline worker: the
        page's shadow made every check of this very call, against the same state, and calls
        reach the worker in call order): only what keeps the run sound is looked at again."""
        if self.destroyed or graph.destroyed:
            raise InvalidStateError("dispatch: the context or the graph is destroyed")
        feeds, targets = {}, {}
        for name, t in inputs.items():
            if t.destroyed:
                raise InvalidStateError("dispatch: a tensor is destroyed")
            feeds[name] = t.data
        for name, t in outputs.items():
            if t.destroyed:
                raise InvalidStateError("dispatch: a tensor is destroyed")
            targets[name] = t.data
        results = self.backend.dispatch(graph.plan, feeds, targets)
        for name, tensor in outputs.items():
            tensor.data = results[name]

    def _check_bindings(self, what, operands: dict, tensors: dict):
        if set(tensors) != set(operands):
            missing = sorted(set(operands) - set(tensors))
            extra = sorted(set(tensors) - set(operands))
            raise WebNNTypeError(f"dispatch: the {what} names do not match the graph's (missing {missing}, unknown {extra})")
        for name, tensor in tensors.items():
            if not isinstance(tensor, Tensor):
                raise WebNNTypeError(f"dispatch: {what} '{name}' is not an MLTensor")
            self._check_tensor(tensor, "dispatch")
            if tensor.constant:
                raise WebNNTypeError(f"dispatch: {what} '{name}' is a constant tensor (use it through builder.constant(tensor))")
            operand = operands[name]
            if tensor.dtype != operand.dtype or tensor.shape != operand.shape:
                raise WebNNTypeError(
                    f"dispatch: {what} '{name}' is {tensor.dtype}{list(tensor.shape)}, "
                    f"the graph expects {operand.dtype}{list(operand.shape)}")

    def compute(self, graph, inputs: dict) -> dict:
        """Run `graph` on arrays (name -> ndarray or raw bytes); return name -> ndarray.
        The engine behind the deprecated MLContext.compute() and Python callers."""
        self._check_alive("compute")
        if graph.context is not self:
            raise WebNNTypeError("compute: the graph belongs to another context")
        if graph.destroyed:
            raise InvalidStateError("compute: the graph is destroyed")
        if set(inputs) != set(graph.inputs):
            raise WebNNTypeError(f"compute: inputs must be exactly {sorted(graph.inputs)}")
        feeds = {}
        for name, operand in graph.inputs.items():
            value = inputs[name]
            if isinstance(value, np.ndarray):
                if value.size != dtypes.element_count(operand.shape):
                    raise WebNNTypeError(f"compute: input '{name}' has the wrong number of elements")
                value = value.astype(dtypes.numpy_dtype(operand.dtype), copy=False).reshape(operand.shape)
            else:
                view = memoryview(value).cast("B")
                if view.nbytes != dtypes.byte_length(operand.dtype, operand.shape):
                    raise WebNNTypeError(f"compute: input '{name}' has the wrong byte length")
                value = dtypes.from_bytes(operand.dtype, operand.shape, view)
            feeds[name] = value
        results = self.backend.execute(graph.plan, feeds)
        return {name: np.array(v, copy=True) for name, v in results.items()}

    def destroy(self):
        """The spec's "lose" steps: every tensor and graph of the context is destroyed."""
        self.destroyed = True
        for tensor in list(self._tensors):
            tensor.destroy()
        for graph in list(self._graphs):
            graph.destroy()
        if not self.shadow:
            self.backend.close()
