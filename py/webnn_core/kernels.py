"""Kernel dispatch: every node runs its op's numpy reference kernel unless a
registered fast path accepts the call.

Fast paths (the SIMD microkernels of `webnn_core.fast`) are chosen per call:
a fast path returns None to decline (dtype, shape, no backend), and the
numpy kernel runs instead. They can be switched off globally to compare
against the reference (`set_fast_paths(False)`; in the browser the polyfill
config `fastPaths: false` or the page query `?fastpaths=0`).

Debugging: `fallback_reasons` maps an op name to the reason its fast path
last declined (set through `decline()`).

Profiling: `set_profiling(True)` makes `run` accumulate, per op name, the
number of calls, how many took the fast path and the wall time;
`profile()` returns it and `reset_profile()` clears it.
"""
from __future__ import annotations

import time

import numpy as np

from .dtypes import numpy_dtype
from .registry import FAST_PATHS

_config = {"fast_paths": True, "profile": False}
fallback_reasons: dict = {}
_profile: dict = {}  # op name -> [calls, fast calls, seconds]


def set_fast_paths(enabled: bool) -> None:
    _config["fast_paths"] = bool(enabled)


def fast_paths_enabled() -> bool:
    return _config["fast_paths"]


def decline(op_name: str, reason: str) -> None:
    """Record why a fast path declined a call; returns None for `return decline(...)`."""
    fallback_reasons[op_name] = reason
    return None


def set_profiling(enabled: bool) -> None:
    _config["profile"] = bool(enabled)


def profiling_enabled() -> bool:
    return _config["profile"]


def reset_profile() -> None:
    _profile.clear()


def profile() -> dict:
    """{op name: {"calls", "fast_calls", "ms"}} accumulated since the last reset."""
    return {name: {"calls": c, "fast_calls": f, "ms": s * 1e3} for name, (c, f, s) in _profile.items()}


def profile_table(top: int | None = None) -> str:
    """The profile as a text table, slowest op first."""
    rows = sorted(profile().items(), key=lambda kv: -kv[1]["ms"])[:top]
    total = sum(r["ms"] for _, r in rows) or 1.0
    lines = [f"{'op':<24}{'calls':>7}{'fast':>7}{'ms':>10}{'%':>7}"]
    for name, r in rows:
        lines.append(f"{name:<24}{r['calls']:>7}{r['fast_calls']:>7}{r['ms']:>10.2f}{100 * r['ms'] / total:>7.1f}")
    return "\n".join(lines)


def run(node, args) -> list:
    if _config["profile"]:
        return _run_profiled(node, args)
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


def _run_profiled(node, args) -> list:
    op = node.op
    start = time.perf_counter()
    result = None
    if _config["fast_paths"]:
        fast = FAST_PATHS.get(op.name)
        if fast is not None:
            result = fast(node.attrs, *args)
    used_fast = result is not None
    if result is None:
        result = op.compute(node.attrs, *args)
    if not isinstance(result, (list, tuple)):
        result = [result]
    out = [_coerce(value, operand) for value, operand in zip(result, node.outputs)]
    entry = _profile.get(op.name)
    if entry is None:
        entry = _profile[op.name] = [0, 0, 0.0]
    entry[0] += 1
    entry[1] += used_fast
    entry[2] += time.perf_counter() - start
    return out


def _coerce(value, operand) -> np.ndarray:
    """Bring a kernel result to the operand's exact storage dtype and shape."""
    arr = np.asarray(value)
    want = numpy_dtype(operand.dtype)
    if arr.dtype != want:
        with np.errstate(over="ignore", invalid="ignore"):  # float16 overflow to ±inf is the intended result
            arr = arr.astype(want)
    if arr.shape != operand.shape:
        arr = arr.reshape(operand.shape)
    return arr
