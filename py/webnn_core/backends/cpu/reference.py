"""What every kernel result goes through, fast path or numpy reference."""
from __future__ import annotations

import numpy as np

from ...dtypes import numpy_dtype


def coerce(value, operand) -> np.ndarray:
    """Bring a kernel result to the operand's exact storage dtype and shape."""
    arr = np.asarray(value)
    want = numpy_dtype(operand.dtype)
    if arr.dtype != want:
        with np.errstate(over="ignore", invalid="ignore"):  # float16 overflow to ±inf is the intended result
            arr = arr.astype(want)
    if arr.shape != operand.shape:
        arr = arr.reshape(operand.shape)
    return arr
