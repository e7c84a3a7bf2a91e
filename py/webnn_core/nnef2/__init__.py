"""NNEF 2.0 (the SkriptND draft, seed 004) for the WebNN polyfill: parse
SkriptND modules, evaluate operator definitions (attributes, packs, shapes,
asserts, generics, modules), compose graphs and build them as WebNN graphs.
Pure Python + numpy: runs in CPython and in Pyodide.

    from webnn_core import nnef2
    model = nnef2.load("model_folder_or.tgz")     # main.sknd + modules + .dat
    outputs = model.run({"input": x})
    text, files = nnef2.export_graph(model.graph)   # a WebNN graph as SkriptND
    nnef2.convert("model_1_0.tgz", "model_2_0")     # NNEF 1.0 -> 2.0

Command line: python -m webnn_core.nnef2 MODEL [--input NAME=FILE.npy] [--output-dir D] [--check]
"""
from .model import Model, load, shapes
from .parser import parse_expression, parse_module

__all__ = ["Model", "load", "shapes", "parse_module", "parse_expression", "export_graph", "convert", "is_nnef2"]


def export_graph(graph, name="G"):
    from .export import export_graph as _export
    return _export(graph, name)


def convert(source, dest=None):
    from .export import convert as _convert
    return _convert(source, dest)


def is_nnef2(files) -> bool:
    from .detect import is_nnef2 as _is
    return _is(files)
