"""Graph IR: operands and nodes as the builder records them, and the built
graph (`build()`): the reachable nodes in topological order, its inputs,
constants and outputs. Planning and running it is a backend's job
(`webnn_core.backends`); the graph holds the plan its context's backend made
(`plan`), opaque to everything else."""
from __future__ import annotations

from .errors import WebNNTypeError


class Operand:
    __slots__ = ("id", "builder", "dtype", "shape", "node", "kind", "name", "value")

    def __init__(self, builder, dtype, shape, kind, node=None, name=None, value=None):
        self.id = builder.next_operand_id()
        self.builder = builder
        self.dtype = dtype
        self.shape = tuple(shape)
        self.kind = kind  # "input" | "constant" | "output" (of a node)
        self.node = node
        self.name = name  # graph input name
        self.value = value  # constant data (numpy, unpacked)

    @property
    def descriptor(self):
        return {"dataType": self.dtype, "shape": list(self.shape)}

    def __repr__(self):
        return f"Operand({self.kind}#{self.id} {self.dtype}{list(self.shape)})"


class Node:
    __slots__ = ("op", "inputs", "outputs", "attrs", "label", "call")

    def __init__(self, op, inputs, attrs, label):
        self.op = op
        self.inputs = inputs  # list[Operand | None]
        self.outputs = []
        self.attrs = attrs
        self.label = label
        self.call = None  # (args, options) as the builder received them (exporters read it)


def reachable_nodes(outputs):
    """Nodes needed for `outputs`, in topological order (producers first)."""
    order, seen = [], set()
    for out in outputs:
        if out.node is None or id(out.node) in seen:
            continue
        seen.add(id(out.node))
        stack = [(out.node, iter(out.node.inputs))]
        while stack:  # iterative post-order DFS: deep graphs must not hit the recursion limit
            node, pending = stack[-1]
            for inp in pending:
                if inp is not None and inp.node is not None and id(inp.node) not in seen:
                    seen.add(id(inp.node))
                    stack.append((inp.node, iter(inp.node.inputs)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


class Graph:
    """A built graph: topologically ordered nodes, its inputs, constants and outputs."""

    def __init__(self, context, named_outputs: dict):
        self.context = context
        self.destroyed = False
        outputs = list(named_outputs.values())
        self.nodes = reachable_nodes(outputs)
        # Graph inputs and constants are only those reachable from the outputs.
        self.inputs: dict[str, Operand] = {}
        self.constants: dict = {}
        for node in self.nodes:
            for inp in node.inputs:
                if inp is None:
                    continue
                if inp.kind == "input":
                    if self.inputs.get(inp.name, inp) is not inp:
                        raise WebNNTypeError(f"build: two graph inputs are named {inp.name!r}")
                    self.inputs[inp.name] = inp
                elif inp.kind == "constant":
                    self.constants[inp.id] = inp.value
        self.outputs: dict[str, Operand] = dict(named_outputs)
        self.plan = None  # the context's backend's plan, set by build()

    @property
    def input_descriptors(self):
        return {n: o.descriptor for n, o in self.inputs.items()}

    @property
    def output_descriptors(self):
        return {n: o.descriptor for n, o in self.outputs.items()}
