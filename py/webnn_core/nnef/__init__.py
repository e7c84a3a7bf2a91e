"""NNEF 1.0 for the WebNN polyfill: parse NNEF models (graph.nnef, .dat tensor
files, graph.quant; folder, .tar or .tgz) into WebNN graphs, and export WebNN
graphs as NNEF. Pure Python + numpy: runs in CPython and in Pyodide.

    from webnn_core.nnef import load_model, parse_string, export_graph
    model = load_model("model.tgz")
    outputs = model.run({"input": x})

Command line: python -m webnn_core.nnef MODEL [--input NAME=FILE.npy ...] [--output-dir DIR] [--check]
"""
from .api import NNEFModel, build, load_model, lower
from .container import Container, open_container
from .dat import TensorFile, read_tensor, write_tensor
from .document import parse_file, parse_string
from .errors import NNEFDataError, NNEFError, NNEFSemanticError, NNEFSyntaxError, NNEFUnsupportedError
from .export import export_graph, save
from .loader import load
from .model import NNEFGraph, Operation, TensorInfo
from .stdlib import standard_op_names

__all__ = [
    "NNEFModel", "build", "load_model", "lower", "Container", "open_container", "TensorFile", "read_tensor",
    "write_tensor", "parse_file", "parse_string", "NNEFDataError", "NNEFError", "NNEFSemanticError",
    "NNEFSyntaxError", "NNEFUnsupportedError", "export_graph", "save", "load", "NNEFGraph", "Operation",
    "TensorInfo", "standard_op_names",
]
