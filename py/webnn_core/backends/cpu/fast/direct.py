"""Float32 add, sub, mul, div, max and min as the one numpy call their reference
kernel makes (ops/elementwise.py Binary: `fn(a, b)` inside np.errstate), minus the
per-call errstate: the cpu backend's execute holds one errstate for the whole run
(entering one costs microseconds in Pyodide, as much as a small op itself). The
results are the reference's by construction. Same calling convention as .paths;
None (other data types) runs the reference.
"""
from __future__ import annotations

import numpy as np

F32 = np.dtype(np.float32)


def _direct(ufunc):
    def path(cpu, attrs, a, b):
        if a.dtype != F32 or b.dtype != F32:
            return None
        return ufunc(a, b)
    return path


DIRECT_PATHS = {"add": _direct(np.add), "sub": _direct(np.subtract), "mul": _direct(np.multiply),
                "div": _direct(np.divide), "max": _direct(np.maximum), "min": _direct(np.minimum)}
