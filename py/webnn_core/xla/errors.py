"""Errors of the XLA builder and the StableHLO importer.

They derive from the core's typed errors, so the JS bridge turns them into the
right exception (NotSupportedError, SyntaxError, DataError, TypeError) with no
tables of its own.
"""
from __future__ import annotations

from ..errors import DataError, NotSupportedError, WebNNError, WebNNTypeError


class XlaTypeError(WebNNTypeError):
    """An XLA builder call with arguments that break the op's own rules
    (shapes, dimensions, element types)."""


class NotExpressibleError(NotSupportedError):
    """An XLA operation WebNN cannot express; names the op and why."""

    def __init__(self, op: str, reason: str, where: str = ""):
        prefix = f"{where}: " if where else ""
        super().__init__(f"{prefix}{op}: cannot be expressed in WebNN: {reason}")
        self.op = op
        self.reason = reason
        self.where = where


class StableHLOSyntaxError(WebNNError):
    """Text that is not well-formed MLIR (line:column in the message)."""

    js_name = "SyntaxError"


class StableHLOError(DataError):
    """Well-formed text that does not make a valid program: an undefined value,
    a type mismatch, missing weights (line:column in the message)."""


__all__ = ["XlaTypeError", "NotExpressibleError", "StableHLOSyntaxError", "StableHLOError"]
