"""Helpers shared by the op families: dtype groups, broadcasting, axes, and
the float16 compute rule (compute in float32, round once)."""
from __future__ import annotations

import numpy as np

from ..dtypes import ALL_TYPES, FLOAT, SPEC_TYPES  # noqa: F401  (re-exported for op modules)
from ..registry import check

ANY = SPEC_TYPES
FLOAT_OR_SIGNED = ("float32", "float16", "int32", "int8")


def broadcast_shapes(a, b, what="inputs") -> tuple:
    """Bidirectional broadcasting (SPEC §8.1)."""
    a, b = tuple(a), tuple(b)
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + a
    b = (1,) * (rank - len(b)) + b
    out = []
    for x, y in zip(a, b):
        check(x == y or x == 1 or y == 1, f"the shapes of the {what} are not broadcastable")
        out.append(max(x, y))
    return tuple(out)


def can_broadcast_to(source, target) -> bool:
    """Unidirectional broadcasting of `source` onto `target`."""
    source, target = tuple(source), tuple(target)
    if len(source) > len(target):
        return False
    source = (1,) * (len(target) - len(source)) + source
    return all(s == t or s == 1 for s, t in zip(source, target))


def check_same_dtype(*operands, names=None) -> None:
    first = operands[0].dtype
    for o in operands[1:]:
        check(o.dtype == first, f"data types differ ({', '.join(x.dtype for x in operands)})")


def check_axis(axis, rank, what="axis") -> None:
    check(0 <= axis < rank, f"{what} {axis} is out of range for rank {rank}")


def check_axes(axes, rank, what="axes") -> None:
    for a in axes:
        check_axis(a, rank, what)
    check(len(set(axes)) == len(axes), f"{what} {list(axes)} contain duplicates")


def compute_dtype(x: np.ndarray) -> np.ndarray:
    """float16 is computed in float32 and rounded once at the end."""
    return x.astype(np.float32) if x.dtype == np.float16 else x
