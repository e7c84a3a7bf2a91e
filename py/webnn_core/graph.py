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
    """One op call, normalised: `operands` holds the operand arguments under
    their spec names (an Operand, a list of them, or None for an absent
    optional one), `attrs` every other argument and option, spec-named, with
    the op's defaults applied, as plain data (numbers, strings, booleans,
    lists, None). `inputs` are the operands in the order the op's kernels
    take them. Nothing else lives here but `inferred`: the kernel parameters
    the op's `infer` derived when the builder validated the call, when they
    are all immutable values or lists of them (else None, and
    `kernel_params` derives them again), so that a plan does not run `infer` a second time per node. What a
    backend derives or caches belongs to its plan (`Graph.plan`), so a graph
    round-trips through plain data (webnn_core.plain)."""

    __slots__ = ("op", "inputs", "outputs", "operands", "attrs", "label", "inferred")

    def __init__(self, op, inputs, operands, attrs, label, inferred=None):
        self.op = op
        self.inputs = inputs  # list[Operand | None]
        self.outputs = []
        self.operands = operands
        self.attrs = attrs
        self.label = label
        self.inferred = _frozen(inferred)

    def call_args(self) -> tuple[list, dict]:
        """(args, options) to call the op with again: its `infer`, a builder
        replaying the graph, an exporter."""
        params = self.op.params
        args = [self.operands[p] if p in self.operands else self.attrs[p] for p in params]
        options = {k: v for k, v in self.attrs.items() if k not in params}
        options.update({k: v for k, v in self.operands.items() if k not in params and v is not None})
        return args, options

    def kernel_params(self) -> dict:
        """What the op's kernels read (its `infer` attrs), a fresh dict a backend's
        plan may add to: those `infer` gave at the call, or derived again from the
        spec attributes and the input descriptors."""
        if self.inferred is not None:
            return {k: v[:] if type(v) is list else v for k, v in self.inferred.items()}
        args, options = self.call_args()
        return self.op.infer(*args, **options).attrs


def _frozen(attrs):
    """`attrs` if every value is immutable (hashable: numbers, strings, tuples of them, ...)
    or a list of such values (`kernel_params` copies those lists), so that no plan can
    change what another gets; else None."""
    if not attrs:
        return attrs
    try:
        for v in attrs.values():
            if type(v) is list:
                for item in v:
                    hash(item)
            else:
                hash(v)
    except TypeError:
        return None
    return attrs


def _is_operands(value) -> bool:
    return isinstance(value, Operand) or (isinstance(value, (list, tuple)) and len(value) > 0
                                          and all(isinstance(v, Operand) for v in value))


def plain(value):
    """A spec attribute as plain data: tuples become lists, numpy values Python ones."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if hasattr(value, "tolist") and not isinstance(value, (bool, int, float, str)):  # numpy scalar or array
        return plain(value.tolist())
    return value


def _defaults(op) -> dict:
    """The option defaults of an op, from its `infer` signature (cached on the op class)."""
    cached = op.__class__.__dict__.get("_option_defaults")
    if cached is None:
        import inspect

        cached = {}
        for p in list(inspect.signature(op.infer).parameters.values())[len(op.params):]:
            if p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD:
                if p.default is not p.empty:
                    cached[p.name] = p.default
        setattr(op.__class__, "_option_defaults", cached)
    return cached


def normalise_call(op, args, options) -> tuple[dict, dict]:
    """Split a validated call into (operands, attrs) for a Node: operand
    arguments by spec name, and every other argument and option with the
    op's defaults applied, as plain data."""
    operands, attrs = {}, {}
    for key, value in list(zip(op.params, args)) + list(options.items()):
        if _is_operands(value) or (value is None and key in op.option_operands):
            operands[key] = list(value) if isinstance(value, (list, tuple)) else value
        else:
            attrs[key] = plain(value)
    for key, default in _defaults(op).items():
        if key not in attrs and key not in operands and key not in op.option_operands:
            attrs[key] = plain(default)
    return operands, attrs


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
        # Graph inputs and constants are only those reachable from the outputs. Two
        # inputs of one name are an error only here, when the outputs use both
        # (MLGraphBuilder.input() accepts the name, as Chromium does).
        self.inputs: dict[str, Operand] = {}
        self.constants: dict = {}
        for node in self.nodes:
            for inp in node.inputs:
                if inp is None:
                    continue
                if inp.kind == "input":
                    if self.inputs.get(inp.name, inp) is not inp:
                        raise WebNNTypeError(f"build: two inputs the outputs depend on are named {inp.name!r}; "
                                             "input names must be unique within a graph")
                    self.inputs[inp.name] = inp
                elif inp.kind == "constant":
                    self.constants[inp.id] = inp.value
        self.outputs: dict[str, Operand] = dict(named_outputs)
        self.plan = None  # the context's backend's plan, set by build()

    def destroy(self):
        """Free the plan and the constants now. Nodes and operands point at each
        other, so without this they would wait for Python's cycle collector."""
        self.destroyed = True
        if self.plan is not None:
            self.context.backend.release_plan(self.plan)  # device buffers and pipelines go now
        plan_nodes = getattr(self.plan, "nodes", None) or []  # a backend's compiled copies
        nodes = {id(n): n for n in [*self.nodes, *plan_nodes]}
        nodes.update((id(n), n) for n in reachable_nodes(self.outputs.values()))
        for node in nodes.values():
            for operand in node.inputs:
                if operand is not None and operand.kind == "constant":
                    operand.value = None
            for slot, empty in (("inputs", []), ("outputs", []), ("operands", {}), ("attrs", {})):
                if hasattr(node, slot):
                    setattr(node, slot, empty)
        self.nodes, self.constants, self.plan = [], {}, None

    @property
    def input_descriptors(self):
        return {n: o.descriptor for n, o in self.inputs.items()}

    @property
    def output_descriptors(self):
        return {n: o.descriptor for n, o in self.outputs.items()}
