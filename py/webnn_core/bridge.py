"""The JS shim's single door into the core.

JS calls `call(method, payload, data=None)`:
  * `payload` is a JSON array of arguments, already WebIDL-converted by JS.
    Tagged objects carry what JSON cannot: {"$o": h} an object handle
    (operand, builder, graph, tensor, context), {"$n": "NaN"|"Infinity"|
    "-Infinity"|"-0"} a special double, {"$i": "123"} a bigint.
  * `data` is an optional byte buffer (JS Uint8Array, bytes in CPython) for
    constant() and writeTensor().
It returns a JSON string {"ok": result} or {"error": [jsErrorName, message]},
or raw `bytes` for a successful readTensor. Handles are plain integers; JS
keeps them in its wrapper objects and releases them with `release`.
"""
from __future__ import annotations

import json
import math
import traceback

from .builder import GraphBuilder
from .context import Context
from .errors import OperationError, WebNNError, WebNNTypeError
from .graph import Graph, Operand

_objects: dict = {}
_next_handle = [0]
_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0": -0.0}


def _register(obj) -> int:
    _next_handle[0] += 1
    _objects[_next_handle[0]] = obj
    return _next_handle[0]


def _decode(d: dict):
    if "$o" in d:
        return _objects.get(d["$o"])
    if "$n" in d:
        return _SPECIAL[d["$n"]]
    if "$i" in d:
        return int(d["$i"])
    return d


def _operand_info(operand: Operand):
    return [_register(operand), operand.dtype, list(operand.shape)]


def _bytes_of(data):
    if data is None:
        return None
    to_bytes = getattr(data, "to_bytes", None)  # a Pyodide JsProxy of a typed array
    return to_bytes() if to_bytes is not None else data


# -- methods ------------------------------------------------------------------
def create_context(device_type, power_preference, options=None):
    """`options`: the context's backend options (backends.create_backend), e.g. {"fastPaths": false}."""
    return _register(Context(device_type, power_preference, options))


def op_support_limits(context):
    return context.op_support_limits()


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
        return [_operand_info(o) for o in result]
    return _operand_info(result)


def builder_build(builder, outputs):
    graph = builder.build(outputs)
    return {"graph": _register(graph), "inputs": graph.input_descriptors, "outputs": graph.output_descriptors}


def destroy_graph(graph: Graph):
    graph.destroyed = True


def create_tensor(context, descriptor):
    return _register(context.create_tensor(descriptor))


def write_tensor(context, tensor, data):
    context.write_tensor(tensor, data)


def read_tensor(context, tensor):
    return context.read_tensor(tensor)  # bytes: returned raw, not as JSON


def destroy_tensor(tensor):
    tensor.destroy()


def dispatch(context, graph, inputs, outputs):
    context.dispatch(graph, inputs, outputs)


_KERNEL_DEBUG = {
    "status": lambda b: b.status(),
    "set_fast_paths": lambda b, on: b.set_fast_paths(on),
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
    for h in handles:
        _objects.pop(h, None)


def release_builder(builder):
    """Forget a builder and every operand handle it produced (graphs keep what they need)."""
    for h, obj in list(_objects.items()):
        if obj is builder or (isinstance(obj, Operand) and obj.builder is builder):
            del _objects[h]


METHODS = {f.__name__: f for f in (
    create_context, op_support_limits, destroy_context, new_builder, builder_input, builder_constant,
    builder_constant_scalar, builder_constant_tensor, builder_op, builder_build, destroy_graph, create_tensor,
    create_constant_tensor, write_tensor, read_tensor, destroy_tensor, dispatch, kernel_debug, release,
    release_builder)}
_TAKES_DATA = {"builder_constant", "write_tensor", "create_constant_tensor"}


def call(method: str, payload: str, data=None):
    try:
        args = json.loads(payload, object_hook=_decode)
        if method in _TAKES_DATA:
            args.append(_bytes_of(data))
        result = METHODS[method](*args)
        if isinstance(result, bytes):
            return result
        return json.dumps({"ok": result}, allow_nan=False)
    except WebNNError as e:
        return json.dumps({"error": [e.js_name, e.message]})
    except Exception as e:  # an engine bug: surface it, never hang or crash the page
        err = OperationError(f"{method}: internal error: {type(e).__name__}: {e}")
        return json.dumps({"error": [err.js_name, err.message, traceback.format_exc()]})


# -- NNEF (webnn_core.nnef.jsapi, 2.0 via webnn_core.nnef2.jsapi; JS side: js/src/nnef.js) ---
def nnef_load(context, manifest, options, data):
    from .nnef2 import jsapi  # tells 1.0 from 2.0 by content

    model, info = jsapi.load(context, manifest, options, data)
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

    # bytes: returned raw
    return jsapi2.export_archive(graph, name) if version == "2.0" else jsapi.export_archive(graph, name)


METHODS.update({f.__name__: f for f in (nnef_load, nnef_required_files, nnef_export, nnef_export_archive)})
_TAKES_DATA.add("nnef_load")


# -- XLA / StableHLO (webnn_core.xla.jsapi; JS side: js/src/xla.js) ----------------------
def xla_load(context, text, weights_kind, manifest, data):
    from .xla import jsapi

    model, info = jsapi.load(context, text, weights_kind, manifest, data)
    return {"graph": _register(model.graph), **info}


METHODS["xla_load"] = xla_load
_TAKES_DATA.add("xla_load")
