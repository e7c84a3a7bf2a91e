"""matmul and gemm (SPEC §7.9.17, §7.9.21)."""
from __future__ import annotations

import numpy as np

from ..registry import Inferred, Op, check, register
from ._common import FLOAT, broadcast_shapes, can_broadcast_to, check_same_dtype, compute_dtype


@register
class Matmul(Op):
    name = "matmul"
    params = ("a", "b")
    limits = {"a": FLOAT, "b": FLOAT, "output": FLOAT}

    def infer(self, a, b):
        check_same_dtype(a, b)
        check(len(a.shape) >= 2 and len(b.shape) >= 2, "a and b must have rank >= 2")
        check(a.shape[-1] == b.shape[-2], f"a's columns ({a.shape[-1]}) must equal b's rows ({b.shape[-2]})")
        batch = broadcast_shapes(a.shape[:-2], b.shape[:-2], "batch dimensions")
        return Inferred([a, b], [(a.dtype, batch + (a.shape[-2], b.shape[-1]))])

    def compute(self, attrs, a, b):
        if a.dtype == np.float32:
            return np.matmul(a, b)
        return np.matmul(compute_dtype(a), compute_dtype(b))


@register
class Gemm(Op):
    name = "gemm"
    params = ("a", "b")
    limits = {"a": FLOAT, "b": FLOAT, "c": FLOAT, "output": FLOAT}
    option_operands = ("c",)

    def infer(self, a, b, c=None, alpha=1.0, beta=1.0, aTranspose=False, bTranspose=False):
        check_same_dtype(a, b)
        check(len(a.shape) == 2 and len(b.shape) == 2, "a and b must be 2-D")
        m, k = a.shape[::-1] if aTranspose else a.shape
        k2, n = b.shape[::-1] if bTranspose else b.shape
        check(k == k2, f"the inner dimensions differ ({k} vs {k2})")
        inputs = [a, b]
        if c is not None:
            check(c.dtype == a.dtype, "c must have the data type of a")
            check(can_broadcast_to(c.shape, (m, n)), f"c shape {list(c.shape)} does not broadcast to [{m}, {n}]")
            inputs.append(c)
        attrs = {"alpha": alpha, "beta": beta, "aT": aTranspose, "bT": bTranspose}
        return Inferred(inputs, [(a.dtype, (m, n))], attrs)

    def compute(self, attrs, a, b, c=None):
        a = compute_dtype(a).T if attrs["aT"] else compute_dtype(a)
        b = compute_dtype(b).T if attrs["bT"] else compute_dtype(b)
        y = np.matmul(a, b)
        if attrs["alpha"] != 1.0:
            y = y * np.float32(attrs["alpha"])
        if c is not None and attrs["beta"] != 0:
            y = y + np.float32(attrs["beta"]) * compute_dtype(c)
        return y
