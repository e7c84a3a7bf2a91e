"""Python API: StableHLO text -> a built WebNN graph, and running it.

    from webnn_core.xla import load_stablehlo
    model = load_stablehlo(open("f.mlir").read(), weights="w.npz")
    model.inputs                      # {'arg0': {'dataType': 'float32', 'shape': [1, 64]}}
    outs = model.run({"arg0": x})     # {'result0': ndarray, ...} (i1 results are bool)
    y, = model(x)                     # positional: the non-weight parameters in order
"""
from __future__ import annotations

import io

import numpy as np

from ..context import Context
from ..errors import WebNNError
from .errors import NotExpressibleError, StableHLOError
from .stablehlo import lower

RESULT_NUMPY = {"i1": np.bool_}


def read_weights(weights) -> dict:
    """None, a mapping name -> array, an .npz path, or .npz bytes."""
    if weights is None:
        return {}
    if isinstance(weights, dict):
        return {str(k): np.asarray(v) for k, v in weights.items()}
    source = io.BytesIO(bytes(weights)) if isinstance(weights, (bytes, bytearray, memoryview)) else weights
    try:
        with np.load(source, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError) as e:
        raise StableHLOError(f"weights: not a readable .npz file: {e}") from None


class StableHLOModel:
    """A StableHLO program built as a WebNN graph on a context."""

    def __init__(self, context, graph, result_types, parameters):
        self.context = context
        self.graph = graph
        self.result_types = result_types          # [TensorType] of @main's results
        self.parameters = parameters              # {'arg0': TensorType, ...}: every parameter not given as a weight
        self.input_names = list(parameters)       # their names, in order: the positional arguments of __call__

    @property
    def inputs(self) -> dict:
        """The graph's inputs, which a dispatch feeds: the parameters that are not
        weights, not zero-size and that some result depends on."""
        return {n: self.graph.inputs[n].descriptor for n in self.input_names if n in self.graph.inputs}

    @property
    def outputs(self) -> dict:
        return {f"result{i}": self.graph.outputs[f"result{i}"].descriptor for i in range(len(self.result_types))}

    def run(self, inputs: dict) -> dict:
        """Run with {'arg<i>': array}: every graph input (see `inputs`); values for the
        other parameters (zero-size, or unused by the results) may be given and are
        checked for shape only."""
        missing = sorted(set(self.inputs) - set(inputs))
        extra = sorted(set(inputs) - set(self.input_names))
        if missing or extra:
            raise StableHLOError(f"inputs must be {sorted(self.inputs)} (missing {missing}, unknown {extra})")
        feeds = {}
        for n, v in inputs.items():
            arr = np.asarray(v)
            if n not in self.graph.inputs:
                if tuple(arr.shape) != self.parameters[n].shape:
                    raise StableHLOError(f"input {n}: shape {list(arr.shape)}, the parameter is {self.parameters[n]}")
                continue
            feeds[n] = arr
        results = self.context.compute(self.graph, feeds)
        out = {}
        for i, typ in enumerate(self.result_types):
            arr = results[f"result{i}"]
            out[f"result{i}"] = arr.astype(RESULT_NUMPY[typ.etype]) if typ.etype in RESULT_NUMPY else arr
        return out

    def __call__(self, *args):
        if len(args) != len(self.input_names):
            raise StableHLOError(f"expected {len(self.input_names)} arguments ({', '.join(self.input_names)})")
        out = self.run(dict(zip(self.input_names, args)))
        return tuple(out[f"result{i}"] for i in range(len(self.result_types)))


def build(text: str, context=None, weights=None):
    """Lower and build: returns a StableHLOModel."""
    context = context or Context()
    b = context.graph_builder()
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8")
    imp, main, results = lower(text, b, read_weights(weights))
    if len(results) != len(main.result_types) and main.result_types:
        raise StableHLOError(f"@{main.name} returns {len(results)} values, its signature has {len(main.result_types)}")
    outputs, seen = {}, set()
    for i, v in enumerate(results):
        if isinstance(v, tuple):
            raise StableHLOError(f"@{main.name}: result {i} is a tuple; WebNN outputs are tensors")
        if v.empty:
            raise NotExpressibleError(f"@{main.name}", f"result {i} (output 'result{i}', {v.type}) has no elements; "
                                      "WebNN has no empty tensors, so a graph cannot output it", main.op.where)
        operand = imp.operand(v)
        # WebNN outputs must be computed, and distinct (an input, a constant or a repeat is copied)
        if operand.kind != "output" or operand.id in seen:
            operand = b.identity(operand)
        seen.add(operand.id)
        outputs[f"result{i}"] = operand
    if not outputs:
        raise StableHLOError(f"@{main.name} returns nothing; a WebNN graph needs at least one output")
    try:
        graph = b.build(outputs)
    except WebNNError as e:
        raise StableHLOError(f"building the WebNN graph failed: {e}") from None
    return StableHLOModel(context, graph, [v.type for v in results], imp.parameters)


def load_stablehlo(text, weights=None, context=None) -> StableHLOModel:
    """Parse StableHLO MLIR text (str or bytes; pretty or generic form) and build it
    as a WebNN graph. `weights`: a mapping or .npz (path or bytes) whose keys
    `arg<i>` turn @main's parameter i into a constant."""
    return build(text, context, weights)


__all__ = ["StableHLOModel", "load_stablehlo", "build", "read_weights"]
