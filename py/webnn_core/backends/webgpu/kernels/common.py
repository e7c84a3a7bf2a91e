"""What a kernel template gets and returns.

A template is a function `(call: Call) -> list[Step]` registered for one or
more op names; it raises `Decline(reason)` for a call it cannot run (a data
type, a shape), and the planner then places the graph on the cpu fallback,
saying why. Templates only write WGSL text: buffers, slots and the JS side
are the planner's and the shim's business."""
from __future__ import annotations

from ..wgsl import TYPES


class Decline(Exception):
    """This call has no WGSL kernel (the message says why)."""


class Scratch:
    """A temporary buffer a template needs between its own steps (one slot per
    Scratch object for the node's steps, freed after the node)."""

    __slots__ = ("nbytes",)

    def __init__(self, nbytes: int):
        self.nbytes = int(nbytes)


class Literal:
    """Small constant data a template bakes into a buffer rather than into its
    shader text (e.g. the time step of a recurrent step), so that steps
    differing only in it share one shader and one pipeline."""

    __slots__ = ("array", "id", "kind", "dtype", "shape")

    def __init__(self, values):
        import numpy as np

        self.array = np.asarray(values, dtype=np.uint32).reshape(-1)
        self.id = ("literal", *self.array.tolist())  # equal values share one buffer
        self.kind = "constant"
        self.dtype = "uint32"
        self.shape = (self.array.size,)


class Derived:
    """A constant the planner computes from a constant operand's value at
    build() (`transform(value as float32) -> array`), e.g. a filter rearranged
    for a tiled kernel; the operand's own buffer is then not made unless
    another step binds it."""

    __slots__ = ("source", "transform", "id", "kind", "dtype", "shape")

    def __init__(self, source, transform, key, dtype="float32"):
        self.source = source
        self.transform = transform
        self.id = ("derived", source.id, key)  # equal keys share one buffer
        self.kind = "constant"
        self.dtype = dtype
        self.shape = None  # set by the planner from the transform's result


class Call:
    """One node as a kernel sees it: the op's kernel parameters (`attrs`, the
    op's `infer` attrs), its input and output operands (dtype, shape), its
    label, `activation`: (op name, attrs) of an elementwise op the planner
    fused onto this node's output, or None, and the planner's `options`
    (e.g. {"conv2d": "auto" | "tiled" | "direct"}, kernels/conv.py)."""

    __slots__ = ("op", "attrs", "inputs", "outputs", "label", "activation", "options")

    def __init__(self, op, attrs, inputs, outputs, label, activation=None, options=None):
        self.op = op
        self.attrs = attrs
        self.inputs = inputs
        self.outputs = outputs
        self.label = label
        self.activation = activation
        self.options = options or {}

    def require(self, dtypes=tuple(TYPES), what: str = "") -> None:
        """Decline unless every operand's data type is one of `dtypes`."""
        for operand in [*self.inputs, *self.outputs]:
            if operand is not None and operand.dtype not in dtypes:
                raise Decline(f"{self.op} on {operand.dtype}{what} has no WGSL kernel")


class Step:
    """One compute pass: WGSL source, its bindings in binding order (operands
    or Scratch; the last ones are written), the workgroup counts, and `kernel`:
    which variant ran, where an op has several (counted in the backend's
    status as gpu_kernels, e.g. "conv2d.tiled")."""

    __slots__ = ("wgsl", "bindings", "dispatch", "kernel")

    def __init__(self, wgsl: str, bindings: list, dispatch: list, kernel: str | None = None):
        self.wgsl = wgsl
        self.bindings = bindings
        self.dispatch = [int(d) for d in dispatch]
        self.kernel = kernel
