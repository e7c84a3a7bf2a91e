"""Fast paths for float32 erf and layerNormalization: the kernels of
csrc/exact64.h compute in float64 with the reference kernels' own steps
(ops/elementwise.py erf, ops/normalization.py LayerNormalization, numpy's
pairwise summation order), so their results equal the reference's (erf: up
to libm's exp, see csrc/exact64.h; tests/kernels/test_exact64.py).

In Pyodide, numpy's float64 reference for these ops is a few dozen array
passes (~0.2 ms for erf of 16x256, ~0.09 ms per layerNormalization of 16x64:
the largest steps of a transformer block); one kernel call is a few
microseconds. Same calling convention as .paths: (cpu, attrs, *args), None
declines to the reference.
"""
from __future__ import annotations

import numpy as np

from .pack import F32
from .paths import _c, _no_library, addr


def erf(cpu, attrs, x):
    lib = cpu.library
    if lib is None:
        return _no_library(cpu, "erf")
    if x.dtype != F32:
        return cpu.decline("erf", f"data type {x.dtype} (float32 only)")
    xc = _c(x)
    y = np.empty(xc.shape, F32)
    lib.erf(xc.size, addr(xc), addr(y))
    return y


def _trailing(axes, rank) -> bool:
    """Whether `axes` are the input's last len(axes) axes in order (one contiguous row each)."""
    return len(axes) > 0 and tuple(axes) == tuple(range(rank - len(axes), rank))


def layer_normalization(cpu, attrs, x, scale=None, bias=None):
    lib = cpu.library
    if lib is None:
        return _no_library(cpu, "layerNormalization")
    if x.dtype != F32 or any(p is not None and p.dtype != F32 for p in (scale, bias)):
        return cpu.decline("layerNormalization", f"data type {x.dtype} (float32 only)")
    if not _trailing(attrs["axes"], x.ndim):
        return cpu.decline("layerNormalization", f"axes {list(attrs['axes'])} (the last axes only)")
    if x.size == 0:
        return None
    xc = _c(x)
    # scale and bias are usually constants, the same arrays every run: their
    # addresses (microseconds each in Pyodide) are kept with the plan's step.
    params = attrs.get("_ln")
    if params is None or params[0] is not scale or params[1] is not bias or params[2] is not lib:
        s = None if scale is None else _c(scale)
        b = None if bias is None else _c(bias)
        n = int(np.prod(x.shape[x.ndim - len(attrs["axes"]):]))
        params = attrs["_ln"] = (scale, bias, lib, s, b, n, 0 if s is None else addr(s), 0 if b is None else addr(b),
                                 float(attrs["epsilon"]))
    _, _, _, _, _, n, s_addr, b_addr, eps = params
    y = np.empty(xc.shape, F32)
    lib.layer_norm(xc.size // n, n, addr(xc), s_addr, b_addr, addr(y), eps)
    return y


EXACT64_PATHS = {"erf": erf, "layerNormalization": layer_normalization}
