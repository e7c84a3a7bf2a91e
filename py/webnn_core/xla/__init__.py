"""XLA for the WebNN polyfill.

* `XlaBuilder`: the operations of XLA's ComputationBuilder with XLA's exact
  semantics, lowered onto the WebNN graph builder (ops WebNN cannot express
  raise `NotExpressibleError` naming the op and why).
* `load_stablehlo(text, weights=None)`: import the StableHLO MLIR text that
  `jax.jit(f).lower(*args).as_text()` prints and build it as a WebNN graph.

Command line: python -m webnn_core.xla PROGRAM.mlir [--weights W.npz] [--input NAME=FILE.npy ...]
[--output-dir D] [--check]
"""
from .api import StableHLOModel, load_stablehlo, read_weights
from .builder import XlaBuilder, XlaComputation, XlaOp
from .errors import NotExpressibleError, StableHLOError, StableHLOSyntaxError, XlaTypeError

__all__ = ["XlaBuilder", "XlaComputation", "XlaOp", "StableHLOModel", "load_stablehlo", "read_weights", "NotExpressibleError", "StableHLOError",
           "StableHLOSyntaxError", "XlaTypeError"]
