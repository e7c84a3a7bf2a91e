"""The op registry: one class per WebNN op, and the only place ops are listed.

An op class declares
  * `name`     - the MLGraphBuilder method name;
  * `params`   - its positional parameter names (options always follow);
  * `limits`   - operand key -> data types. This single table is what
                 `opSupportLimits()` reports AND what the builder enforces on
                 every operand argument before `infer` runs, so the two can
                 never disagree (WPT's validation tests compare them);
                 the allowed ranks come the same way from spec_ranks.RANKS
                 (the spec's tensor-limits tables, as data);
and implements
  * `infer(*args, **options)` - validation and shape inference; raises
    `Invalid("...")` and returns an `Inferred`;
  * `compute(attrs, *arrays)` - the numpy reference kernel.

The table of every op is `webnn_core.ops.ops()` (importing that package
registers them); this module imports nothing of the ops, so the dependencies
run one way (ops -> registry). Fast paths (SIMD microkernels) belong to a
backend (`webnn_core.backends.cpu`), never to the op.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import Invalid
from .spec_ranks import RANKS

# The largest rank the engine supports: what "any rank" (N) in the spec's tables means here.
MAX_RANK = 8

OPS: dict[str, "Op"] = {}


@dataclass
class Inferred:
    """What `infer` returns: the operands the kernel reads (None for an absent
    optional one), constant attributes for the kernel, and output descriptors."""

    inputs: list
    outputs: list  # [(dtype, shape tuple)]
    attrs: dict = field(default_factory=dict)


class Op:
    name: str = ""
    params: tuple = ("input",)
    limits: dict = {}
    # Keys of `limits` that are option members holding operands (bias, scale, c, ...).
    option_operands: tuple = ()
    # Trailing positional parameters a caller may omit (legacy softmax(input)).
    param_defaults: dict = {}

    def rank_range(self, key: str) -> tuple:
        """(min, max) allowed rank of operand `key`; "same as X" reads X's range."""
        table = RANKS.get(self.name, {})
        r = table.get(key, (0, None))
        while isinstance(r, str):
            r = table.get(r, (0, None))
        return r[0], MAX_RANK if r[1] is None else r[1]

    def tensor_limits(self, key: str) -> dict:
        lo, hi = self.rank_range(key)
        return {"dataTypes": list(self.limits[key]), "rankRange": {"min": lo, "max": hi}}

    def support_limits(self, members=None) -> dict:
        """MLOpSupportLimits' entry for this op: `members` are the IDL's keys. An older
        IDL's single `outputs` entry (gru, lstm, lstmCell) merges output0..output2."""
        out = {}
        for key in members if members is not None else self.limits:
            if key in self.limits:
                out[key] = self.tensor_limits(key)
            elif key == "outputs":
                parts = [self.tensor_limits(k) for k in self.limits if k.startswith("output")]
                types = [t for t in self.limits[next(k for k in self.limits if k.startswith("output"))]]
                out[key] = {"dataTypes": types,
                            "rankRange": {"min": min(p["rankRange"]["min"] for p in parts),
                                          "max": max(p["rankRange"]["max"] for p in parts)}}
        return out

    def infer(self, *args, **options) -> Inferred:  # pragma: no cover - abstract
        raise NotImplementedError

    def compute(self, attrs: dict, *inputs) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


def register(cls):
    """Class decorator: instantiate and register an op (or a family of ops)."""
    op = cls()
    if op.name in OPS:
        raise RuntimeError(f"op {op.name!r} registered twice")
    OPS[op.name] = op
    return cls


def check(condition: bool, message: str) -> None:
    """Op validation helper: raise Invalid(message) unless condition holds."""
    if not condition:
        raise Invalid(message)
