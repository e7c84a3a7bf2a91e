"""@lower bodies of custom operators -> WebNN (placeholder, see below)."""
from __future__ import annotations

from ..nnef.errors import NNEFUnsupportedError


def lower(composer, inst, pos):
    raise NNEFUnsupportedError(inst.op.qualified, "its @lower body is not lowered to WebNN yet").at(pos)
