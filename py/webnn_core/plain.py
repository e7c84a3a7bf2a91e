"""A built graph as plain data: one JSON document plus the constants' bytes.

    document, buffers = to_plain(graph)          # dict (JSON-able), [bytes]
    graph2 = from_plain(context, document, buffers)

    text, buffers = to_json(graph)               # the same, the document as JSON text
    graph2 = from_json(context, text, buffers)

The document (format "webnn-graph/1"):
    inputs     [{"id", "name", "dataType", "shape"}]
    constants  [{"id", "dataType", "shape", "buffer": index into buffers}]
    nodes      [{"op", "label", "operands": {key: id | [id, ...] | null},
                 "attrs": {spec attribute: value}, "outputs": [{"id", "dataType", "shape"}]}]
    outputs    {name: id}
Operand ids are numbered afresh (inputs, constants, then node outputs in
topological order). Attributes are the node's normalised spec attributes
(`Node.attrs`); doubles JSON cannot hold are tagged {"$n": "NaN" |
"Infinity" | "-Infinity" | "-0"} as on the bridge. Constants are stored as
the bytes WebNN would take (`dtypes.to_bytes`: packed nibbles for int4/uint4).

Loading replays the graph through a builder of `context`, so every check
and every shape inference runs again and the graph is planned by that
context's backend, exactly as if it had been built there.
"""
from __future__ import annotations

import json
import math

from . import dtypes
from .graph import Operand
from .ops import ops

FORMAT = "webnn-graph/1"


def _encode(value):
    if isinstance(value, float):
        if math.isnan(value):
            return {"$n": "NaN"}
        if math.isinf(value):
            return {"$n": "Infinity" if value > 0 else "-Infinity"}
        if value == 0 and math.copysign(1.0, value) < 0:
            return {"$n": "-0"}
        return value
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise TypeError(f"{type(value).__name__} is not plain data")


_SPECIAL = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf, "-0": -0.0}


def _decode(value):
    if isinstance(value, dict):
        if set(value) == {"$n"}:
            return _SPECIAL[value["$n"]]
        return {k: _decode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode(v) for v in value]
    return value


def to_plain(graph, copy: bool = True) -> tuple[dict, list]:
    """`copy=False`: the buffers are uint8 arrays viewing the constants' values where
    they can (dtypes.contiguous_bytes), for a caller that copies them once itself and
    leaves the values alone meanwhile (bridge.graph_constants)."""
    ids: dict[int, int] = {}
    encode = dtypes.to_bytes if copy else dtypes.contiguous_bytes

    def number(operand) -> int:
        if operand.id not in ids:
            ids[operand.id] = len(ids)
        return ids[operand.id]

    def desc(operand) -> dict:
        return {"id": number(operand), "dataType": operand.dtype, "shape": list(operand.shape)}

    inputs = [{**desc(o), "name": name} for name, o in graph.inputs.items()]
    constants, buffers = [], []
    nodes = []
    for node in graph.nodes:
        for operand in node.inputs:
            if operand is not None and operand.kind == "constant" and operand.id not in ids:
                constants.append({**desc(operand), "buffer": len(buffers)})
                buffers.append(encode(operand.dtype, operand.value))
        operands = {}
        for key, value in node.operands.items():
            if value is None:
                operands[key] = None
            elif isinstance(value, Operand):
                operands[key] = ids[value.id]
            else:
                operands[key] = [ids[v.id] for v in value]
        try:
            attrs = _encode(node.attrs)
        except TypeError as e:
            raise TypeError(f"{node.op.name}: attribute {e}") from None
        nodes.append({"op": node.op.name, "label": node.label, "operands": operands, "attrs": attrs,
                      "outputs": [desc(o) for o in node.outputs]})
    outputs = {name: ids[o.id] for name, o in graph.outputs.items()}
    document = {"format": FORMAT, "inputs": inputs, "constants": constants, "nodes": nodes, "outputs": outputs}
    return document, buffers


def from_plain(context, document: dict, buffers):
    if document.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} document (format {document.get('format')!r})")
    b = context.graph_builder()
    made: dict[int, Operand] = {}
    for d in document["inputs"]:
        made[d["id"]] = b.input(d["name"], {"dataType": d["dataType"], "shape": d["shape"]})
    for d in document["constants"]:
        made[d["id"]] = b.constant({"dataType": d["dataType"], "shape": d["shape"]}, buffers[d["buffer"]])
    for n in document["nodes"]:
        op = ops().get(n["op"])
        if op is None:
            raise ValueError(f"unknown operation {n['op']!r}")
        op_params = op.params
        operands = {}
        for key, ref in n["operands"].items():
            operands[key] = None if ref is None else (made[ref] if isinstance(ref, int) else [made[r] for r in ref])
        attrs = _decode(n["attrs"])
        args = [operands[p] if p in operands else attrs[p] for p in op_params]
        options = {k: v for k, v in attrs.items() if k not in op_params}
        options.update({k: v for k, v in operands.items() if k not in op_params and v is not None})
        if n.get("label"):
            options["label"] = n["label"]
        result = b.op(n["op"], *args, **options)
        results = result if isinstance(result, list) else [result]
        if len(results) != len(n["outputs"]):
            raise ValueError(f"{n['op']}: {len(results)} outputs, the document has {len(n['outputs'])}")
        for operand, d in zip(results, n["outputs"]):
            if operand.dtype != d["dataType"] or list(operand.shape) != list(d["shape"]):
                raise ValueError(f"{n['op']}: output {operand.dtype}{list(operand.shape)}, "
                                 f"the document says {d['dataType']}{d['shape']}")
            made[d["id"]] = operand
    return b.build({name: made[i] for name, i in document["outputs"].items()})


def to_json(graph, copy: bool = True) -> tuple[str, list]:
    document, buffers = to_plain(graph, copy)
    return json.dumps(document, allow_nan=False), buffers


def from_json(context, text: str, buffers):
    return from_plain(context, json.loads(text), buffers)
