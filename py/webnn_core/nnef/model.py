"""The flattened NNEF graph: what the parser hands to shape inference, the
loader, the lowering and the exporter. It mirrors the Khronos reference
parser's model (graph name, inputs, outputs, tensors, operations with
`attribs`, `inputs`, `outputs` and `dtype`) so the two are easy to compare.

Operation `inputs` hold tensor names (str), literal values (float, int, bool)
standing for constant singleton tensors, or lists of those; `outputs` hold
tensor names or lists of them.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class TensorInfo:
    name: str
    dtype: str                 # 'scalar' | 'integer' | 'logical'
    shape: list | None = None  # None: unknown (after a custom operation)
    data: object = None        # numpy array for variables once loaded, constants' values
    quantization: dict = field(default_factory=dict)  # from graph.quant: {'op-name': algo, ...args}


@dataclass
class Operation:
    name: str
    attribs: dict
    inputs: dict
    outputs: dict
    dtype: str | None = None   # the generic type binding, for generic operations
    pos: object = None         # lexer.Pos of the invocation

    def input_names(self):
        for v in self.inputs.values():
            yield from _names(v)

    def output_names(self):
        for v in self.outputs.values():
            yield from _names(v)

    def where(self) -> str:
        return str(self.pos) if self.pos else "?"


def _names(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, list):
        for x in v:
            yield from _names(x)


@dataclass
class NNEFGraph:
    name: str
    inputs: list
    outputs: list
    tensors: dict
    operations: list
    version: tuple = (1, 0)
    extensions: list = field(default_factory=list)
    fragments: list = field(default_factory=list)  # user fragment definitions (ast.Fragment)
    file: str = "graph.nnef"

    def shapes(self) -> dict:
        return {name: t.shape for name, t in self.tensors.items()}
