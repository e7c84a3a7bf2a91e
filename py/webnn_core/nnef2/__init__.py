"""NNEF 2.0 (the SkriptND draft, seed 004) for the WebNN polyfill: parse
SkriptND modules, evaluate operator definitions (attributes, packs, shapes,
asserts, generics, modules), compose graphs and build them as WebNN graphs.

    from webnn_core import nnef2
    model = nnef2.load("model_folder_or.tgz")     # main.sknd + modules + .dat
    outputs = model.run({"input": x})

Command line: python -m webnn_core.nnef2 MODEL [--input NAME=FILE.npy] [--output-dir D] [--check]
"""
from .parser import parse_expression, parse_module

__all__ = ["parse_module", "parse_expression"]
