"""The JS shim's single door into the core.

JS calls `call(method, payload, data=None)`:
  * `payload` is a JSON array of arguments, already WebIDL-converted by
    JS (ASCII, except in long payloads: `call_text`). Tagged objects carry what JSON cannot: {"$o": h} an object handle
    (operand, builder, graph, tensor, context), {"$n": "NaN"|"Infinity"|
    "-Infinity"|"-0"} a special double, {"$i": "123"} a bigint, and
    {"$r": [[key, value], ...]} a record. Records never travel as JSON objects,
    so no name a page chooses ("$o", "__proto__", ...) is ever read as a tag.
  * `data` is an optional byte buffer for constant(), writeTensor() and the
    model loaders: from JS only its byte length (JS holds the bytes for the
    duration of the call), bytes in CPython. It is copied once, straight into
    the array that keeps it, after its size was checked (see `set_heap_writer`).
It returns a JSON string: {"ok": result}, {"error": [jsErrorName, message]},
or for byte results {"ok": null, "bytes": [address, length]}: JS copies those
bytes out of the wasm heap itself, at once (the array stays alive until the
next call), or later for a read pinned with a handle (released by JS).

Long text (over LONG_TEXT characters: a huge label or name, a StableHLO
program, an exported model) does not go through Pyodide's string conversions,
which build a JS array of every code point (a RangeError past ~2**27 of them,
whatever the memory), a string one character at a time, and read the wrong
memory for non-ASCII text past 2 GiB of heap: JS calls `call_text`, which has
it write the payload's UTF-8 bytes into an array the engine allocates
(`set_text_writer`), and a long or non-ASCII reply comes back as
"@address,length", UTF-8 bytes JS decodes from the heap at once. Short
payloads are ASCII JSON (JS escapes the rest). Where memory does not allow
either, the reply is the spec's UnknownError.

Handles are plain integers; JS keeps them in its wrapper objects and releases
them with `release` (destroying the tensor or graph behind them) once the JS
object is collected. A builder's operand handles are released when it builds.
Messages never carry Python internals (exception names, tracebacks,
addresses): an engine bug is reported as a generic error, its traceback only
as a detail JS logs in debug mode.
"""
from __future__ import annotations

import codecs
import gc
import json
import math
import traceback
import weakref

import numpy as np

from . import dtypes, plain
from .builder import GraphBuilder
from .context import Context, Tensor
from .errors import OperationError, UnknownError, WebNNError, WebNNTypeError
from .graph import Graph, Operand

_objects: dict = {}
_next_handle = [0]
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0": -0.0}
# Operand handles per builder, released when it builds or is collected.
_builder_operands: "weakref.WeakKeyDictionary[GraphBuilder, list]" = weakref.WeakKeyDictionary()
# The byte result of the last call, kept alive until JS has copied it out.
_last_out: list = [None]
# JS function (address) -> None copying the call's bytes into the wasm heap.
_heap_writer: list = [None]
# JS function (address, length) -> None writing the long payload of the call in progress there.
_text_writer: list = [None]
# The last long reply's bytes, alive until JS has decoded them (the next call).
_last_text: list = [None]
# Payloads and replies longer than this (characters) cross as bytes in the wasm heap.
LONG_TEXT = 1 << 14
# Backends that queue device commands (webgpu): drained into every reply.
_device_backends: "weakref.WeakSet" = weakref.WeakSet()
# Arrays the last reply's device commands point into, alive until the next call.
_device_keep: list = []


class _Released:
    """What a released handle decodes to: never an operand of any builder,
    so using one is the builder's ordinary 'not an operand of this builder' TypeError."""

    def __repr__(self):
        return "a released object"


_RELEASED = _Released()


def freeze_startup_objects() -> None:
    """Called once when the engine has started (JS startEngine): the objects that
    exist then (modules, the op registry, numpy's, the kernel library) live as long as
    the engine, so move them out of the cyclic collector's generations (gc.freeze). A
    full collection, which the thousands of new objects of a few session creates
    trigger, then traverses only what the engine made since, instead of ~33 000
    start-up objects (in Pyodide 100-350 ms per full collection on the loaded VM;
    docs/performance.md). Frozen objects are still freed by reference counting."""
    gc.collect()
    gc.freeze()


def set_heap_writer(writer) -> None:
    """Pyodide: JS's `(address) => HEAPU8.set(bytesOfThisCall, address)`.
    Only numbers cross (no proxy of the page's array). Done in JS with
    unsigned addresses, so it is right anywhere in a 4 GiB heap (Pyodide's own
    conversions go wrong past 2 GiB)."""
    _heap_writer[0] = writer


def set_text_writer(writer) -> None:
    """Pyodide: JS's `(address, length) => encodeInto(longPayload, heap[address:address+length])`."""
    _text_writer[0] = writer


class _JsSource:
    """The bytes JS holds for the call in progress, `nbytes` long
    (dtypes.ByteSource protocol); read only during that call."""

    def __init__(self, nbytes: int):
        self.nbytes = nbytes

    def read_into(self, out: np.ndarray) -> None:
        if self.nbytes:
            _heap_writer[0](int(out.__array_interface__["data"][0]))

    def to_bytes(self) -> bytes:
        out = np.empty(self.nbytes, np.uint8)
        self.read_into(out)
        return out.tobytes()


def _source(data):
    if data is None:
        return None
    if type(data) is int:  # from JS: the length of the bytes it holds
        return _JsSource(data)
    return dtypes.ByteSource(data)


class _Bytes:
    """A byte result: a C-contiguous uint8 array JS copies out of the heap."""

    def __init__(self, array: np.ndarray, pin: bool = False):
        self.array = array
        self.pin = pin


def _register(obj) -> int:
    _next_handle[0] += 1
    _objects[_next_handle[0]] = obj
    return _next_handle[0]


def _decode(d: dict):
    if len(d) == 1:
        if "$o" in d:
            return _objects.get(d["$o"], _RELEASED)
        if "$n" in d:
            return _SPECIAL[d["$n"]]
        if "$i" in d:
            return int(d["$i"])
        if "$r" in d:
            return dict(d["$r"])
    return d


class _Json(str):
    """A result already in JSON (formatted directly: the encoder's per-call
    set-up is a good part of a small call)."""


def _operand_info(operand: Operand) -> _Json:
    """[handle, data type, shape] of a new operand (data type names need no escaping)."""
    handle = _register(operand)
    _builder_operands.setdefault(operand.builder, []).append(handle)
    return _Json(f'[{handle},"{operand.dtype}",[{",".join(map(str, operand.shape))}]]')


def _forget_operands(builder) -> None:
    for h in _builder_operands.pop(builder, ()):
        _objects.pop(h, None)


# -- methods ------------------------------------------------------------------
def create_context(device_type, power_preference, options=None):
    """`options`: the context's backend options (backends.create_backend), e.g. {"fastPaths": false};
    a gpu context's {"webgpu": {"token", "adapter"}} when JS holds a GPUDevice for it."""
    options = dict(options or {})
    shadow = bool(options.pop("shadow", False))  # the page's half of a timeline-worker context
    context = Context(device_type, power_preference, options, shadow=shadow)
    if hasattr(context.backend, "drain") and not shadow:
        _device_backends.add(context.backend)
    return _register(context)


def backend_status(context):
    """engineStats.backend(ctx): which backend runs the context's graphs, and what it did."""
    return context.backend.status()


def op_support_limits(context):
    return _Json(context.op_support_limits_json())


def destroy_context(context):
    context.destroy()


def new_builder(context):
    return _register(GraphBuilder(context))


def builder_input(builder, name, descriptor):
    return _operand_info(builder.input(name, descriptor))


def builder_constant(builder, descriptor, data):
    return _operand_info(builder.constant(descriptor, data))


def builder_constant_scalar(builder, dtype, value):
    return _operand_info(builder.constant_scalar(dtype, value))


def builder_constant_tensor(builder, tensor):
    return _operand_info(builder.constant_tensor(tensor))


def create_constant_tensor(context, descriptor, data):
    return _register(context.create_constant_tensor(descriptor, data))


def builder_op(builder, name, args, options):
    result = builder.op(name, *args, **options)
    if isinstance(result, list):
        return _Json("[" + ",".join(_operand_info(o) for o in result) + "]")
    return _operand_info(result)


def builder_build(builder, outputs):
    graph = builder.build(outputs)
    # Built: no operand of this builder can be used again; the graph holds what it needs.
    _forget_operands(builder)
    # The names also as lists, in the graph's order: dispatch_fast's positional handles follow it.
    return {"graph": _register(graph), "inputs": graph.input_descriptors, "outputs": graph.output_descriptors,
            "inputNames": list(graph.inputs), "outputNames": list(graph.outputs)}


def graph_export(graph: Graph):
    """A shadow context's graph as plain data for the timeline worker (plain.to_json):
    {"document": JSON text, "sizes": [byte length of each constant]}. The constants'
    bytes follow with graph_constants()."""
    text, buffers = plain.to_json(graph, copy=False)  # views of the values: graph_constants copies once
    graph._exported = buffers
    return {"document": text, "sizes": [memoryview(b).nbytes for b in buffers]}


def graph_constants(graph: Graph):
    """The constants graph_export listed, end to end in one byte result; the page's
    graph then drops its constants (the worker's graph holds them)."""
    buffers = getattr(graph, "_exported", None) or []
    graph._exported = None
    out = np.empty(sum(memoryview(b).nbytes for b in buffers), np.uint8)
    at = 0
    for b in buffers:
        n = memoryview(b).nbytes
        out[at:at + n] = np.frombuffer(b, np.uint8)
        at += n
    buffers.clear()
    for node in graph.nodes:
        for operand in node.inputs:
            if operand is not None and operand.kind == "constant":
                operand.value = None
    return _Bytes(out)


def load_graph(context, text, sizes, data):
    """The timeline worker's build(): the page's graph_export document and constants
    (`data`: their bytes end to end, `sizes` each one's length) replayed through this
    context's builder and planned by its backend (plain.from_json)."""
    raw = np.empty(data.nbytes if data is not None else 0, np.uint8)
    if data is not None:
        data.read_into(raw)
    buffers, at = [], 0
    for n in sizes:
        buffers.append(memoryview(raw[at:at + n]))
        at += n
    graph = plain.from_json(context, text, buffers)
    return {"graph": _register(graph), "inputs": graph.input_descriptors, "outputs": graph.output_descriptors,
            "inputNames": list(graph.inputs), "outputNames": list(graph.outputs)}


def destroy_graph(graph: Graph):
    graph.destroy()


def create_tensor(context, descriptor):
    return _register(context.create_tensor(descriptor))


def create_exportable_tensor(context, descriptor, device_problem=None):
    return _register(context.create_exportable_tensor(descriptor, device_problem))


def export_tensor(context, tensor):
    return context.export_tensor(tensor)


def return_tensor(context, tensor):
    context.return_tensor(tensor)


def write_tensor(context, tensor, data):
    context.write_tensor(tensor, data)


def read_tensor(context, tensor, pin=False):
    """The snapshot's bytes; `pin`: keep them under a handle until JS releases it
    (a read into the page's buffer copies when it settles, not now). A tensor
    whose contents are on the GPU only answers {"gpuRead": {buffer, bytes}}:
    JS copies that buffer to a staging buffer now and maps it."""
    on_device = context.device_read(tensor)
    if on_device is not None:
        return {"gpuRead": on_device}
    view = context.read_view(tensor)
    return _Bytes(view, pin)


def destroy_tensor(tensor):
    tensor.destroy()


def dispatch(context, graph, inputs, outputs):
    context.dispatch(graph, inputs, outputs)


_KERNEL_DEBUG = {
    "status": lambda b: b.status(),
    "set_fast_paths": lambda b, on: b.set_fast_paths(on),
    "set_layout_pass": lambda b, on: setattr(b, "layout_pass", bool(on)),
    "set_profiling": lambda b, on: b.set_profiling(on),
    "reset_profile": lambda b: b.reset_profile(),
    "profile": lambda b: b.profile(),
    "fallback_reasons": lambda b: {k: str(v) for k, v in b.fallback_reasons.items()},
}


def kernel_debug(context, action, *args):
    """engineStats.kernels (debugging, benchmarks): the context's cpu kernels'
    switches and profile. A webgpu context answers for its cpu fallback."""
    backend = context.backend
    backend = getattr(backend, "fallback", backend)
    if action not in _KERNEL_DEBUG or not hasattr(backend, "profile"):
        raise WebNNTypeError(f"kernel_debug: {action!r} is not available for the {context.backend.name} backend")
    return _KERNEL_DEBUG[action](backend, *args)


def release(*handles):
    """JS collected the objects behind these handles (or is done with a pin):
    forget them, and free a tensor's or graph's arrays now."""
    for h in handles:
        obj = _objects.pop(h, None)
        if isinstance(obj, (Tensor, Graph)):
            obj.destroy()


def release_builder(handle):
    """Forget a builder and every operand handle it produced (graphs keep what they need)."""
    builder = _objects.pop(handle, None)
    if builder is not None:
        _forget_operands(builder)


METHODS = {f.__name__: f for f in (
    create_context, op_support_limits, destroy_context, new_builder, builder_input, builder_constant,
    builder_constant_scalar, builder_constant_tensor, builder_op, builder_build, destroy_graph, create_tensor,
    create_constant_tensor, write_tensor, read_tensor, destroy_tensor, dispatch, kernel_debug, release,
    release_builder, backend_status, create_exportable_tensor, export_tensor, return_tensor, graph_export,
    graph_constants, load_graph)}
_TAKES_DATA = {"builder_constant", "write_tensor", "create_constant_tensor", "load_graph"}


# The reply of most calls (writeTensor, dispatch, ...), when no device commands ride along.
_OK_NONE = '{"ok":null}'
# Made once: json.loads/dumps with options build a new decoder/encoder per call.
_DECODER = json.JSONDecoder(object_hook=_decode)
# Non-ASCII text stays as it is: such a reply crosses as UTF-8 bytes (_long_reply), a
# third of \uXXXX escapes' size, and never through Pyodide's UCS-2/UCS-4 string
# conversions, which read the wrong memory past 2 GiB of heap.
_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False)


def _reply_bytes(result: _Bytes) -> str:
    array = result.array
    reply = {"ok": None, "bytes": [int(array.__array_interface__["data"][0]), int(array.nbytes)]}
    if result.pin:
        reply["pin"] = _register(array)
    else:
        _last_out[0] = array
    if _device_backends:
        return _with_device(reply)
    # The common case, formatted directly (json.dumps is a good part of a small call).
    pin = f',"pin":{reply["pin"]}' if result.pin else ""
    return f'{{"ok":null,"bytes":[{reply["bytes"][0]},{reply["bytes"][1]}]{pin}}}'


def _device_commands() -> list:
    """[[token, commands], ...] queued by device backends during this call;
    arrays become [address, bytes] in the wasm heap, kept until the next call."""
    out = []
    for backend in list(_device_backends):
        commands = backend.drain()
        if not commands:
            continue
        for c in commands:
            if c[0] == "write":
                array = c[2]
                _device_keep.append(array)
                c[2:] = [int(array.__array_interface__["data"][0]), int(array.nbytes)]
        out.append([backend.token, commands])
    return out


def _with_device(reply: dict) -> str:
    commands = _device_commands() if _device_backends else None
    if commands:
        reply["gpu"] = commands
    return _ENCODER.encode(reply)


def call(method: str, payload: str, data=None):
    _last_text[0] = None
    return _long_reply(method, _call(method, payload, data))


def call_text(method: str, length: int, data=None):
    """`call` for a long payload: `length` bytes of UTF-8 that JS writes into an
    array allocated here."""
    _last_text[0] = None
    try:
        buffer = np.empty(length, np.uint8)
        _text_writer[0](int(buffer.__array_interface__["data"][0]), length)
        payload = codecs.utf_8_decode(buffer, "strict", True)[0]
        del buffer
    except Exception as e:  # noqa: BLE001 - memory (here or in JS) or a writer failure
        return _error_reply(method, e)
    return _long_reply(method, _call(method, payload, data))


def _long_reply(method: str, text: str) -> str:
    """`text`, or for a long or non-ASCII one "@address,length" of its UTF-8 bytes,
    kept until the next call."""
    if len(text) <= LONG_TEXT and text.isascii():
        return text
    try:
        raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8)
    except MemoryError:
        return _short_error(UnknownError(f"{method}: out of memory for the reply ({len(text)} characters)"))
    _last_text[0] = raw
    return f"@{int(raw.__array_interface__['data'][0])},{raw.nbytes}"


def _call(method: str, payload: str, data=None):
    _last_out[0] = None
    _device_keep.clear()
    try:
        args = _DECODER.decode(payload)
        if method in _TAKES_DATA:
            args.append(_source(data))
        result = METHODS[method](*args)
        if isinstance(result, _Bytes):
            return _reply_bytes(result)
        if not _device_backends:
            if result is None:
                return _OK_NONE
            if type(result) is _Json:
                return '{"ok":' + result + "}"
        if type(result) is _Json:
            result = json.loads(result)
        return _with_device({"ok": result})
    except Exception as e:  # noqa: BLE001 - every failure becomes an error reply
        return _error_reply(method, e)


def _short_error(err: WebNNError) -> str:
    """An error reply that needs no memory to speak of (ASCII message)."""
    return '{"error":["' + err.js_name + '",' + json.dumps(err.message) + "]}"


def _error_reply(method: str, e: Exception) -> str:
    try:
        return _error_reply_of(method, e)
    except MemoryError:  # e.g. a message with a huge label: no room to encode it
        return _short_error(UnknownError(f"{method}: out of memory"))


def _error_reply_of(method: str, e: Exception) -> str:
    if isinstance(e, WebNNError):
        return _with_device({"error": [e.js_name, e.message]})
    if isinstance(e, MemoryError):
        err = UnknownError(f"{method}: out of memory")
        return _with_device({"error": [err.js_name, err.message]})
    if type(e).__name__ == "JsException":  # Pyodide: a JS callback (heap or text writer) failed, e.g. a RangeError
        err = UnknownError(f"{method}: the engine's JavaScript side failed: {str(e)[:200]}")
        return _with_device({"error": [err.js_name, err.message]})
    # An engine bug: surface it, never hang or crash the page.
    err = OperationError(f"{method}: internal error in the WebNN engine (details with webnnPolyfill.config.debug)")
    return _with_device({"error": [err.js_name, err.message, traceback.format_exc()]})


# -- the hot calls with numbers only (issue 17: the per-call floor) ----------------
# writeTensor, dispatch and readTensor of a small graph spend most of their time
# on the bridge (JSON both ways, the tag decoder, text crossing the FFI). These
# take handles and lengths as numbers and answer None when done: JS then reads
# nothing back (a read's [address, length] is in READ_REPLY, in the wasm heap).
# Anything else (an error, device commands to run, a GPU-only read) answers
# with the same JSON text `call` would have returned.
READ_REPLY = np.zeros(3, np.uint64)  # [address, byte length, pin] of the last read_fast (JS reads the low words)


def read_reply_address() -> int:
    return int(READ_REPLY.__array_interface__["data"][0])


def write_fast(context_h: int, tensor_h: int, nbytes: int):
    _last_out[0] = _last_text[0] = None
    _device_keep.clear()
    try:
        write_tensor(_objects.get(context_h, _RELEASED), _objects.get(tensor_h, _RELEASED), _JsSource(nbytes))
    except Exception as e:  # noqa: BLE001
        return _error_reply("write_tensor", e)
    return _with_device({"ok": None}) if _device_backends else None


def dispatch_fast(context_h: int, graph_h: int, *tensor_hs: int):
    """dispatch() whose tensors are bound to the graph's inputs, then outputs, in
    the order of the graph's inputNames / outputNames (JS checked the names)."""
    return _dispatch_fast(False, context_h, graph_h, tensor_hs)


def run_fast(context_h: int, graph_h: int, *tensor_hs: int):
    """dispatch_fast for the timeline worker (js/src/timeline_host.js): the page's shadow
    context checked this call already (Context.run)."""
    return _dispatch_fast(True, context_h, graph_h, tensor_hs)


def _dispatch_fast(checked: bool, context_h: int, graph_h: int, tensor_hs):
    _last_out[0] = _last_text[0] = None
    _device_keep.clear()
    try:
        context = _objects.get(context_h, _RELEASED)
        graph = _objects.get(graph_h, _RELEASED)
        tensors = [_objects.get(h, _RELEASED) for h in tensor_hs]
        n_in = len(graph.inputs)
        if n_in + len(graph.outputs) != len(tensors):
            raise WebNNTypeError("dispatch: the tensors do not match the graph's inputs and outputs")
        inputs, outputs = dict(zip(graph.inputs, tensors[:n_in])), dict(zip(graph.outputs, tensors[n_in:]))
        if checked:
            context.run(graph, inputs, outputs)
        else:
            context.dispatch(graph, inputs, outputs)
    except Exception as e:  # noqa: BLE001
        return _error_reply("dispatch", e)
    return _with_device({"ok": None}) if _device_backends else None


def read_fast(context_h: int, tensor_h: int, pin: int = 0):
    """read_tensor(): None with READ_REPLY = [address, length, 0] (JS copies the
    bytes out at once; they stay alive until the next call), or with `pin` (a read
    into the page's buffer, copied when it settles) [address, length, pin handle]:
    the snapshot stays alive until JS calls release(pin)."""
    _last_out[0] = _last_text[0] = None
    _device_keep.clear()
    try:
        result = read_tensor(_objects.get(context_h, _RELEASED), _objects.get(tensor_h, _RELEASED), bool(pin))
        if _device_backends or not isinstance(result, _Bytes):
            return _with_device({"ok": result}) if not isinstance(result, _Bytes) else _reply_bytes(result)
        array = result.array
        if pin:
            READ_REPLY[2] = _register(array)
        else:
            _last_out[0] = array
            READ_REPLY[2] = 0
        READ_REPLY[0] = array.__array_interface__["data"][0]
        READ_REPLY[1] = array.nbytes
    except Exception as e:  # noqa: BLE001
        return _error_reply("read_tensor", e)
    return None


# -- NNEF (webnn_core.nnef.jsapi, 2.0 via webnn_core.nnef2.jsapi; JS side: js/src/nnef.js) ---
def nnef_load(context, manifest, options, data):
    from .nnef2 import jsapi  # tells 1.0 from 2.0 by content

    raw = data.to_bytes() if data is not None else None
    model, info = jsapi.load(context, manifest, options, raw)
    return {"graph": _register(model.graph), **info}


def nnef_required_files(graph_text):
    from .nnef2 import jsapi

    return jsapi.required_files(graph_text)


def nnef_export(graph, name, version="1.0"):
    from .nnef import jsapi
    from .nnef2 import jsapi as jsapi2

    return jsapi2.export(graph, name) if version == "2.0" else jsapi.export(graph, name)


def nnef_export_archive(graph, name, version="1.0"):
    from .nnef import jsapi
    from .nnef2 import jsapi as jsapi2

    archive = jsapi2.export_archive(graph, name) if version == "2.0" else jsapi.export_archive(graph, name)
    return _Bytes(np.frombuffer(archive, np.uint8))


METHODS.update({f.__name__: f for f in (nnef_load, nnef_required_files, nnef_export, nnef_export_archive)})
_TAKES_DATA.add("nnef_load")


# -- XLA / StableHLO (webnn_core.xla.jsapi; JS side: js/src/xla.js) ----------------------
def xla_load(context, text, weights_kind, manifest, data):
    from .xla import jsapi

    raw = data.to_bytes() if data is not None else None  # a byte source (_source)
    model, info = jsapi.load(context, text, weights_kind, manifest, raw)
    return {"graph": _register(model.graph), **info}


METHODS["xla_load"] = xla_load
_TAKES_DATA.add("xla_load")
