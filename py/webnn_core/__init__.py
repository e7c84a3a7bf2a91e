"""webnn_core: the Python engine of the WebNN polyfill.

Pure Python + numpy; runs unchanged in CPython and in Pyodide. The JS shim
talks to it through `webnn_core.bridge`; Python code can use it directly:

    from webnn_core import Context
    ctx = Context("cpu")
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [2]})
    graph = b.build({"y": b.relu(x)})
    ctx.compute(graph, {"x": numpy.array([-1, 2], "float32")})["y"]
"""
from .builder import GraphBuilder
from .context import Context, Tensor
from .errors import DataError, InvalidStateError, NotSupportedError, OperationError, WebNNError, WebNNTypeError
from .graph import Graph, Operand

__version__ = "0.1.0"

__all__ = ["Context", "GraphBuilder", "Graph", "Operand", "Tensor", "WebNNError", "WebNNTypeError",
           "DataError", "InvalidStateError", "NotSupportedError", "OperationError"]
