"""What `webnnPolyfill.loadStableHLO` (js/src/xla.js) calls through
`webnn_core.bridge`: the program text, and weights as one byte buffer that is
either an .npz file or arrays described by [[name, dataType, shape, offset, length]]."""
from __future__ import annotations

import numpy as np

from .. import dtypes
from .api import load_stablehlo, read_weights
from .errors import StableHLOError

JS_TYPES = {**{t: dtypes.numpy_dtype(t) for t in dtypes.SPEC_TYPES}, "float64": np.dtype(np.float64)}


def weights_from(kind, manifest, data):
    data = bytes(data or b"")
    if kind == "none":
        return None
    if kind == "npz":
        return read_weights(data)
    if kind != "arrays":
        raise StableHLOError(f"weights: unknown kind {kind!r}")
    out = {}
    for name, dtype, shape, offset, length in manifest:
        if dtype not in JS_TYPES:
            raise StableHLOError(f"weights.{name}: unsupported data type {dtype!r}")
        if offset < 0 or length < 0 or offset + length > len(data):
            raise StableHLOError(f"weights.{name}: the data is truncated")
        arr = np.frombuffer(data[offset:offset + length], dtype=JS_TYPES[dtype])
        if arr.size != int(np.prod(shape, dtype=np.int64)):
            raise StableHLOError(f"weights.{name}: {arr.size} elements do not fill shape {list(shape)}")
        out[str(name)] = arr.reshape(shape)
    return out


def load(context, text, weights_kind, manifest, data):
    model = load_stablehlo(text, weights=weights_from(weights_kind, manifest, data), context=context)
    return model, {"inputs": model.inputs, "outputs": model.outputs, "allInputs": model.graph.input_descriptors}


__all__ = ["load", "weights_from"]
