"""Python API: NNEF model -> built WebNN graph, and running it.

    from webnn_core.nnef import load_model
    model = load_model("alexnet.tgz")             # folder, .tar, .tgz, bytes or {path: bytes}
    model.inputs     # {'input': {'dataType': 'float32', 'shape': [1, 3, 224, 224]}}
    out = model.run({"input": array})             # {'output': ndarray}
"""
from __future__ import annotations

import weakref

import numpy as np

from ..context import Context
from ..errors import WebNNError
from .errors import NNEFSemanticError, check_unused_input
from .loader import load
from .lowering import Lowering


# WebNN Graph -> {"names": {operand id: NNEF tensor name}, "labels": {operand id: variable label}}
EXPORT_HINTS = weakref.WeakKeyDictionary()


def lower(graph, builder, **options):
    """Lower a parsed `NNEFGraph` onto `builder`; returns a `LoweredGraph`."""
    return Lowering(graph, builder, **options).run()


def build(graph, context=None, **options):
    """Lower and build: returns (WebNN Graph, LoweredGraph)."""
    context = context or Context()
    builder = context.graph_builder()
    lowered = lower(graph, builder, **options)
    try:
        webnn = builder.build(lowered.outputs)
    except WebNNError as e:
        raise NNEFSemanticError(f"building the WebNN graph failed: {e}") from None
    # Remember NNEF names and variable labels, so that exporting this graph keeps them.
    names = {operand.id: name for name, operand in lowered.operands.items()}
    labels = {}
    for op in graph.operations:
        if op.name == "variable":
            operand = lowered.operands.get(op.outputs["output"])
            if operand is not None and operand.kind == "constant":
                labels.setdefault(operand.id, op.attribs["label"])
    EXPORT_HINTS[webnn] = {"names": names, "labels": labels}
    return webnn, lowered


class NNEFModel:
    """A loaded NNEF model built as a WebNN graph on a context."""

    def __init__(self, graph, context, webnn, lowered):
        self.nnef = graph
        self.context = context
        self.graph = webnn
        self.lowered = lowered
        self.state = dict(lowered.state)                 # variable input -> update output
        self.state_values = dict(lowered.state_init)     # current values of updated variables

    @property
    def inputs(self):
        """The model's own inputs (the NNEF graph parameters), name -> descriptor."""
        return {n: self.graph.inputs[n].descriptor for n in self.nnef.inputs if n in self.graph.inputs}

    @property
    def outputs(self):
        return {n: o.descriptor for n, o in self.graph.outputs.items()}

    def run(self, inputs: dict) -> dict:
        """Compute the outputs for `inputs` (name -> array). Updated variables
        are fed from, and written back to, `state_values`."""
        feeds = {}
        for name, value in inputs.items():
            if name in self.graph.inputs or name not in self.nnef.inputs:
                feeds[name] = value  # an unknown name: compute() names the inputs
            else:
                check_unused_input(name, value, self.nnef.tensors[name].shape)
        for name in self.state:
            if name in self.graph.inputs:
                feeds[name] = self.state_values[name]
        results = self.context.compute(self.graph, feeds)
        for var, out in self.state.items():
            self.state_values[var] = results[out]
        return results

    def reset_state(self):
        self.state_values = dict(self.lowered.state_init)


def load_model(source, context=None, *, gelu: str = "nnef", variables: str = "auto", quantization: bool = False,
               lowered=()) -> NNEFModel:
    """Load an NNEF model and build it as a WebNN graph.

    `gelu`: "nnef" (x * sigmoid(1.702 x), the spec's definition) or "exact".
    `variables`: "auto"/"state" (updated variables become inputs, their updates
    outputs) or "constant" (`update` is rejected).
    `quantization`: apply graph.quant hints as fake quantization.
    `lowered`: standard compound ops to expand into their spec bodies first.
    """
    graph = load(source, lowered=lowered)
    context = context or Context()
    webnn, low = build(graph, context, gelu=gelu, variables=variables, quantization=quantization)
    return NNEFModel(graph, context, webnn, low)


def random_inputs(descriptors: dict, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for name, d in descriptors.items():
        shape = d["shape"]
        if d["dataType"] == "float32":
            out[name] = rng.standard_normal(shape).astype(np.float32)
        elif d["dataType"] == "uint8":
            out[name] = (rng.random(shape) > 0.5).astype(np.uint8)
        else:
            out[name] = rng.integers(0, 3, shape).astype(d["dataType"])
    return out
