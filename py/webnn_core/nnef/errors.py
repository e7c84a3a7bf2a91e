"""Typed NNEF errors. Each carries the position it refers to (file, line,
column, all 1-based) and formats as `file:line:column: message`.

They derive from the core's `WebNNError`, so the JS bridge maps them onto a
`DOMException` (`SyntaxError`, `DataError`, `NotSupportedError`) without any
extra table.
"""
from __future__ import annotations

from ..errors import WebNNError


class NNEFError(WebNNError):
    js_name = "DataError"

    def __init__(self, message: str, file: str | None = None, line: int | None = None, column: int | None = None):
        self.detail = message
        self.file = file
        self.line = line
        self.column = column
        super().__init__(self._format())

    def _format(self) -> str:
        where = self.location
        return f"{where}: {self.detail}" if where else self.detail

    @property
    def location(self) -> str:
        parts = [self.file or "<input>"] if (self.file or self.line) else []
        if self.line:
            parts.append(str(self.line))
            if self.column:
                parts.append(str(self.column))
        return ":".join(parts)

    def at(self, pos):
        """Fill in a position (a `Pos`) if the error has none yet; returns self."""
        if pos is not None and self.line is None:
            self.file, self.line, self.column = pos.file, pos.line, pos.column
            self.message = self._format()
            self.args = (self.message,)
        return self

    def __str__(self):
        return self.message


class NNEFSyntaxError(NNEFError):
    """The document does not follow the NNEF grammar."""
    js_name = "SyntaxError"


class NNEFSemanticError(NNEFError):
    """Grammatical but invalid: types, identifiers, invocations, argument validity, shapes."""


class NNEFDataError(NNEFError):
    """A tensor (.dat) file, graph.quant or container is malformed or does not match the graph."""


class NNEFUnsupportedError(NNEFError):
    """A valid NNEF operation this importer cannot express as a WebNN graph."""
    js_name = "NotSupportedError"

    def __init__(self, op: str, reason: str, file=None, line=None, column=None):
        self.op = op
        self.reason = reason
        super().__init__(f"operation '{op}' is not supported: {reason}", file, line, column)


def check_unused_input(name: str, value, declared_shape) -> None:
    """A graph input that no output depends on (1.0 and 2.0): the built WebNN graph has no
    such input, so run() ignores the value given for it, once its shape is the declared one."""
    import numpy as np

    if list(np.shape(value)) != list(declared_shape):
        raise NNEFDataError(f"input '{name}' has shape {list(np.shape(value))}, the graph declares {list(declared_shape)}")
