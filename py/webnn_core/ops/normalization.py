"""batchNormalization, instanceNormalization, layerNormalization (SPEC §7.7.6,
§7.7.24, §7.7.25): y = (x - mean) / sqrt(variance + epsilon) * scale + bias.

Computed in float64 (float16 too) and rounded once; epsilon is first cast to
the input's data type, as the spec says. Variances are population variances.
"""
from __future__ import annotations

import numpy as np

from .. import dtypes
from ..registry import Inferred, Op, check, register
from ._common import FLOAT, check_axes, check_axis


def _check_param(param, name, input, shape) -> None:
    """An optional parameter operand: the input's data type and the given shape."""
    if param is None:
        return
    check(param.dtype == input.dtype, f"{name} has data type {param.dtype}, the input has {input.dtype}")
    check(tuple(param.shape) == tuple(shape), f"{name} must have shape {list(shape)}, got {list(param.shape)}")


def _epsilon(epsilon, dtype) -> float:
    return float(dtypes.cast_number(epsilon, dtype))


def _normalize(x, mean, variance, epsilon, scale, bias):
    y = (x - mean) / np.sqrt(variance + epsilon)
    if scale is not None:
        y = y * scale
    if bias is not None:
        y = y + bias
    return y


def _f64(a):
    return None if a is None else a.astype(np.float64)


def _along(param, axis, rank):
    """A 1-D parameter reshaped to broadcast along `axis` of a rank-`rank` input."""
    if param is None:
        return None
    shape = [1] * rank
    shape[axis] = -1
    return _f64(param).reshape(shape)


@register
class BatchNormalization(Op):
    """Normalizes with given per-feature mean and variance along `axis`."""

    name = "batchNormalization"
    params = ("input", "mean", "variance")
    limits = {k: FLOAT for k in ("input", "mean", "variance", "scale", "bias", "output")}
    option_operands = ("scale", "bias")

    def infer(self, input, mean, variance, scale=None, bias=None, axis=1, epsilon=1e-5):
        check_axis(axis, len(input.shape))
        feature = (input.shape[axis],)
        for param, name in ((mean, "mean"), (variance, "variance"), (scale, "scale"), (bias, "bias")):
            _check_param(param, name, input, feature)
        attrs = {"axis": axis, "epsilon": _epsilon(epsilon, input.dtype)}
        return Inferred([input, mean, variance, scale, bias], [(input.dtype, input.shape)], attrs)

    def compute(self, attrs, x, mean, variance, scale=None, bias=None):
        axis, rank = attrs["axis"], x.ndim
        return _normalize(_f64(x), _along(mean, axis, rank), _along(variance, axis, rank), attrs["epsilon"],
                          _along(scale, axis, rank), _along(bias, axis, rank))


def _stats(x, axes):
    mean = np.mean(x, axis=axes, keepdims=True)
    return mean, np.mean(np.square(x - mean), axis=axes, keepdims=True)


@register
class InstanceNormalization(Op):
    """Per (batch, channel) mean and variance over the spatial dims of a 4-D input."""

    name = "instanceNormalization"
    limits = {k: FLOAT for k in ("input", "scale", "bias", "output")}
    option_operands = ("scale", "bias")

    def infer(self, input, scale=None, bias=None, epsilon=1e-5, layout="nchw"):
        check(len(input.shape) == 4, f"input must be 4-D, got rank {len(input.shape)}")
        check(layout in ("nchw", "nhwc"), f"unknown layout {layout!r}")
        channel_axis = 1 if layout == "nchw" else 3
        for param, name in ((scale, "scale"), (bias, "bias")):
            _check_param(param, name, input, (input.shape[channel_axis],))
        attrs = {"channel_axis": channel_axis, "epsilon": _epsilon(epsilon, input.dtype)}
        return Inferred([input, scale, bias], [(input.dtype, input.shape)], attrs)

    def compute(self, attrs, x, scale=None, bias=None):
        c = attrs["channel_axis"]
        x = _f64(x)
        mean, variance = _stats(x, (2, 3) if c == 1 else (1, 2))
        return _normalize(x, mean, variance, attrs["epsilon"], _along(scale, c, 4), _along(bias, c, 4))


@register
class LayerNormalization(Op):
    """Mean and variance over `axes` (default: all but the first); scale and bias
    have the shape of those axes, in the order given."""

    name = "layerNormalization"
    limits = {k: FLOAT for k in ("input", "scale", "bias", "output")}
    option_operands = ("scale", "bias")

    def infer(self, input, scale=None, bias=None, axes=None, epsilon=1e-5):
        rank = len(input.shape)
        axes = tuple(range(1, rank)) if axes is None else tuple(axes)
        check_axes(axes, rank)  # WPT requires a TypeError here (the SPEC says "failure")
        for param, name in ((scale, "scale"), (bias, "bias")):
            _check_param(param, name, input, tuple(input.shape[a] for a in axes))
        attrs = {"axes": axes, "epsilon": _epsilon(epsilon, input.dtype)}
        return Inferred([input, scale, bias], [(input.dtype, input.shape)], attrs)

    def compute(self, attrs, x, scale=None, bias=None):
        axes = attrs["axes"]
        x = _f64(x)
        mean, variance = _stats(x, axes)
        return _normalize(x, mean, variance, attrs["epsilon"],
                          self._place(scale, axes, x.ndim), self._place(bias, axes, x.ndim))

    @staticmethod
    def _place(param, axes, rank):
        """Reorder a scale/bias laid out in `axes` order to input order, with
        size-1 dims elsewhere, so it broadcasts against the input."""
        if param is None:
            return None
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        shape = [1] * rank
        for i in order:
            shape[axes[i]] = param.shape[i]
        return np.transpose(_f64(param), order).reshape(shape)
