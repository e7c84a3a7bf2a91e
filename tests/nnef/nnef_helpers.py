"""Shared helpers for the NNEF tests: write models to folders, run them with
the importer and with the reference executor (`nnef.Session`)."""
from __future__ import annotations

import os

import numpy as np

from webnn_core.nnef import dat, load_model

try:
    import nnef as ref_nnef  # the Khronos reference (PyPI `nnef`), test-only
except ImportError:  # pragma: no cover
    ref_nnef = None


def write_model(folder, text, variables=None, quant=None):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graph.nnef"), "w") as f:
        f.write(text)
    if quant is not None:
        with open(os.path.join(folder, "graph.quant"), "w") as f:
            f.write(quant)
    for label, array in (variables or {}).items():
        path = os.path.join(folder, label.lstrip("/") + ".dat")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(dat.write_tensor(np.asarray(array)))
    return folder


def run_ours(folder, inputs, **options):
    model = load_model(folder, **options)
    out = model.run(inputs)
    return [out[n] for n in model.nnef.outputs], model


def run_ref(folder, inputs, order):
    """Outputs of the reference C++ executor, inputs given in graph-parameter order.
    Compound operations the executor does not implement are expanded (its
    `lowered=` option) into the primitives of their spec bodies."""
    import re

    lowered = []
    while True:
        try:
            with ref_nnef.Session(folder, stdlib="", lowered=lowered) as s:
                return list(s(*[inputs[n] for n in order]))
        except ValueError as e:
            m = re.search(r"operation not implemented: (\w+)", str(e))
            if not m or m.group(1) in lowered:
                raise
            lowered.append(m.group(1))
