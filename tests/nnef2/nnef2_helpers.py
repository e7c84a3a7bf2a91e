"""Helpers for the NNEF 2.0 tests: one-operator graphs, models as {path: bytes}."""
from __future__ import annotations

import numpy as np

from webnn_core.nnef import dat
from webnn_core.nnef2 import load

NP = {"real": np.float32, "int": np.int32, "bool": np.uint8}


def sknd_type(array):
    a = np.asarray(array)
    return "bool" if a.dtype == np.uint8 or a.dtype == np.bool_ else "int" if a.dtype.kind in "iu" else "real"


def one_op(call, inputs: dict, outputs: dict, imports=("layout", "math", "linalg", "nn", "image")):
    """A graph with `inputs` {name: array}, running `call` (e.g. 'y = math.add(x, z);'),
    with outputs {name: 'real' | 'int' | 'bool'}; returns {output: ndarray}."""
    decl = "\n".join(f"        {n}: {sknd_type(a)}{list(np.shape(a))};" for n, a in inputs.items())
    outs = "\n".join(f"        {n}: {t};" for n, t in outputs.items())
    text = "".join(f"import {m};\n" for m in imports) + f"""
graph Op {{
    @input {{
{decl}
    }}
    @output {{
{outs}
    }}
    @compose {{
        {call}
    }}
}}
"""
    model = load({"main.sknd": text})
    feeds = {n: np.asarray(a, dtype=NP[sknd_type(a)]) for n, a in inputs.items()}
    return model.run(feeds)


def dat_bytes(array):
    return dat.write_tensor(np.asarray(array))
