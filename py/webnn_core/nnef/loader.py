"""Loading a model: container -> parsed graph with variable data (and
quantization info), ready for lowering or export."""
from __future__ import annotations

import numpy as np

from . import dat
from .container import open_container
from .document import attach_quantization, parse_string
from .errors import NNEFDataError

DATA_KINDS = {"scalar": (dat.FLOAT, dat.QUINT, dat.QINT), "integer": (dat.UINT, dat.INT), "logical": (dat.BOOL,)}


def load(source, load_variables: bool = True, lowered=(), infer_shapes: bool = True):
    """Parse a model (folder, .tar, .tgz, graph.nnef path, archive bytes or a
    {path: bytes} dict) and read its variables' tensor files.

    Returns an `NNEFGraph`; `graph.tensors[name].data` holds each variable's
    data (a numpy array) and `.quantization` its graph.quant entry.
    """
    container = open_container(source)
    text = container.text("graph.nnef")
    graph = parse_string(text, file=container.display("graph.nnef"), lowered=lowered, infer_shapes=infer_shapes)
    quant = container.find("graph.quant")
    if quant is not None:
        attach_quantization(graph, container.text(quant), file=container.display(quant))
    if load_variables:
        read_variables(graph, container)
    return graph


def read_variables(graph, container):
    cache = {}
    for op in graph.operations:
        if op.name != "variable":
            continue
        name = op.outputs["output"]
        tensor = graph.tensors[name]
        label = op.attribs["label"]
        key = label.lower()
        if key in cache:
            tensor.data = cache[key]
            continue
        path = container.label_path(label)
        where = f" (variable '{label}' at {op.pos})"
        if path is None:
            raise NNEFDataError(f"{container.display(label.lstrip('/') + '.dat')}: missing tensor file{where}")
        tf = dat.read_tensor(container.read(path), container.display(path))
        if list(tf.data.shape) != list(tensor.shape):
            raise NNEFDataError(f"{container.display(path)}: shape {list(tf.data.shape)} in the tensor file does not "
                                f"match the shape {tensor.shape} declared{where}")
        if tf.item_type not in DATA_KINDS[tensor.dtype]:
            raise NNEFDataError(f"{container.display(path)}: {dat.CODE_NAMES[tf.item_type]} items cannot hold "
                                f"'{tensor.dtype}' data{where}")
        data = tf.data
        if tf.quantized:
            data = dequantize(tf, tensor.quantization, container.display(path) + where)
        tensor.data = data
        cache[key] = data


def dequantize(tf, quant, where):
    """Real values of quantized codes (item types 2 and 3), from graph.quant (or the legacy header range)."""
    q = tf.data.astype(np.float64)
    bits = tf.bits
    if quant:
        algo = quant["op-name"]
        if algo == "zero_point_linear_quantize":
            zp = np.asarray(quant["zero_point"], np.float64)
            return ((q - zp) * np.asarray(quant["scale"], np.float64)).astype(np.float32)
        if algo in ("min_max_linear_quantize", "linear_quantize"):
            signed = bool(quant.get("signed", False))
            symmetric = bool(quant.get("symmetric", False))
            r = 2 ** bits - 1 - int(signed and symmetric)
            p = (2 ** (bits - 1) - int(symmetric)) if signed else 0
            lo = np.asarray(quant["min"], np.float64)
            hi = np.asarray(quant["max"], np.float64)
            return ((q + p) / r * (hi - lo) + lo).astype(np.float32)
        raise NNEFDataError(f"{where}: cannot decode codes quantized with '{algo}'")
    legacy = tf.legacy_range
    if tf.item_type == dat.QUINT and legacy is not None and legacy != (0.0, 0.0):
        lo, hi = legacy
        return (q / (2 ** bits - 1) * (hi - lo) + lo).astype(np.float32)
    raise NNEFDataError(f"{where}: quantized codes need a graph.quant entry that says how to decode them")
