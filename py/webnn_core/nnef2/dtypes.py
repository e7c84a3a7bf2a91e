"""SkriptND data types <-> WebNN / numpy data types. SkriptND's int and real are
mathematical; the graph uses int32 and float32, and bool tensors are uint8 as
in WebNN."""
import numpy as np

WEBNN_TYPES = {"real": "float32", "int": "int32", "bool": "uint8"}
SKND_TYPES = {"float32": "real", "float16": "real", "float64": "real", "int32": "int", "int64": "int",
              "uint32": "int", "int8": "int", "uint64": "int", "uint8": "bool"}
NUMPY_TYPES = {"real": np.float32, "int": np.int32, "bool": np.uint8}
