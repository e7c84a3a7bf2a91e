"""Parsing entry points: text -> checked, flattened `NNEFGraph` with shapes."""
from __future__ import annotations

from .errors import NNEFError, NNEFSemanticError
from .parser import parse_document, parse_quantization
from .semantics import Compiler
from .stdlib import standard_fragments

QUANT_ALGORITHMS = ("min_max_linear_quantize", "zero_point_linear_quantize", "linear_quantize", "logarithmic_quantize")


def parse_string(text: str, quantization: str | None = None, file: str = "graph.nnef", lowered=(),
                 expand_fragments: bool = True, infer_shapes: bool = True):
    """Parse and check an NNEF document; returns the flattened `NNEFGraph`.

    `lowered`: standard compound operations to expand into their spec bodies.
    `expand_fragments`: expand user fragments that have a body (default) or
    keep them as single operations.
    """
    try:
        doc = parse_document(text, file)
        graph = Compiler(doc, lowered=lowered, expand_fragments=expand_fragments, infer_shapes=infer_shapes).compile()
    except RecursionError:
        raise NNEFSemanticError(f"{file}: the document nests expressions or fragments too deeply") from None
    if quantization is not None:
        attach_quantization(graph, quantization, file=_sibling(file, "graph.quant"))
    return graph


def _sibling(file, name):
    if "/" in file:
        return file.rsplit("/", 1)[0] + "/" + name
    return name


def attach_quantization(graph, text: str, file: str = "graph.quant"):
    known = set(standard_fragments()) | {f.name for f in graph.fragments}
    for tensor_id, algo, args, pos in parse_quantization(text, file):
        if algo not in known:
            raise NNEFSemanticError(f"undefined quantization operation '{algo}'", pos.file, pos.line, pos.column)
        if algo in standard_fragments() and algo not in QUANT_ALGORITHMS:
            raise NNEFSemanticError(f"'{algo}' is not a quantization operation", pos.file, pos.line, pos.column)
        tensor = graph.tensors.get(tensor_id)
        if tensor is None:
            raise NNEFSemanticError(f"graph.quant names tensor '{tensor_id}', which the graph does not define",
                                    pos.file, pos.line, pos.column)
        decl = standard_fragments().get(algo) or next(f for f in graph.fragments if f.name == algo)
        for name in args:
            if decl.param(name) is None or name == decl.params[0].name:
                raise NNEFSemanticError(f"'{algo}' has no attribute named '{name}'", pos.file, pos.line, pos.column)
        for p in decl.params[1:]:
            if p.name not in args and p.default is None:
                raise NNEFSemanticError(f"'{algo}' for '{tensor_id}' is missing the argument '{p.name}'",
                                        pos.file, pos.line, pos.column)
        tensor.quantization = {"op-name": algo, **args}
    return graph


def parse_file(path: str, quantization_path: str | None = None, **kw):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    quant = None
    if quantization_path is not None:
        with open(quantization_path, encoding="utf-8") as f:
            quant = f.read()
    return parse_string(text, quant, file=path, **kw)


__all__ = ["parse_string", "parse_file", "attach_quantization", "NNEFError"]
