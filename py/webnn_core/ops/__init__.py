"""Every op family module; importing this package registers all ops.

Adding an op: write its class in the family module (or a new module listed
here) and decorate it with @register; validation, kernels and
opSupportLimits() all follow from that one class.
"""
from . import activations, conv, conversion, elementwise, indexing, linalg, normalization, pool, recurrent, reduction, resample, shape  # noqa: F401
from ..registry import OPS


def ops() -> dict:
    """Every registered op: name -> Op (the registry, once this package has loaded)."""
    return OPS
