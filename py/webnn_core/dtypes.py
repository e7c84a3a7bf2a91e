"""MLOperandDataType: the data types, their numpy storage, byte sizes and the
spec's casting of scalar parameters (MLNumber, SPEC §8.2 / digest §1.0.1).

int4/uint4 are Chromium/WPT extensions: packed two per byte in buffers (element i
in the low nibble when i is even) and held unpacked, one per int8/uint8, inside
the core so every kernel sees ordinary numpy arrays.
"""
from __future__ import annotations

import math

import numpy as np

# The eight spec types, in IDL order.
SPEC_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")
FOUR_BIT = ("int4", "uint4")
ALL_TYPES = SPEC_TYPES + FOUR_BIT

FLOAT = ("float32", "float16")
INTEGER = tuple(t for t in ALL_TYPES if t not in FLOAT)

NUMPY = {
    "float32": np.dtype(np.float32),
    "float16": np.dtype(np.float16),
    "int32": np.dtype(np.int32),
    "uint32": np.dtype(np.uint32),
    "int64": np.dtype(np.int64),
    "uint64": np.dtype(np.uint64),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "int4": np.dtype(np.int8),
    "uint4": np.dtype(np.uint8),
}

# Inclusive value range of the integer types.
INT_RANGE = {
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
    "uint64": (0, 2**64 - 1),
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int4": (-8, 7),
    "uint4": (0, 15),
}

_ITEM_BITS = {t: NUMPY[t].itemsize * 8 for t in SPEC_TYPES}
_ITEM_BITS.update(int4=4, uint4=4)


def is_float(dtype: str) -> bool:
    return dtype in FLOAT


def element_count(shape) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def byte_length(dtype: str, shape) -> int:
    """Bytes a buffer of this descriptor occupies (4-bit types pack two per byte)."""
    return (element_count(shape) * _ITEM_BITS[dtype] + 7) // 8


def numpy_dtype(dtype: str) -> np.dtype:
    return NUMPY[dtype]


def from_bytes(dtype: str, shape, data) -> np.ndarray:
    """Decode a raw little-endian buffer (bytes-like) into an owned array."""
    shape = tuple(shape)
    n = element_count(shape)
    raw = np.frombuffer(data, dtype=np.uint8, count=byte_length(dtype, shape))
    if dtype in FOUR_BIT:
        nib = np.empty(2 * raw.size, dtype=np.uint8)
        nib[0::2] = raw & 0x0F
        nib[1::2] = raw >> 4
        nib = nib[:n]
        if dtype == "int4":
            out = nib.astype(np.int8)
            out[out > 7] -= 16
            return out.reshape(shape)
        return nib.reshape(shape)
    return raw.view(NUMPY[dtype]).reshape(shape).copy()


class ByteSource:
    """Bytes that are copied exactly once, straight into the array that keeps them.

    `nbytes` is known before anything is allocated (so sizes are checked first);
    `read_into(out)` fills a contiguous uint8 array. This class wraps Python
    buffers; the JS bridge has its own (bytes still in a JS ArrayBuffer)."""

    def __init__(self, data):
        self._view = memoryview(data).cast("B")
        self.nbytes = self._view.nbytes

    def read_into(self, out: np.ndarray) -> None:
        out[...] = np.frombuffer(self._view, dtype=np.uint8)

    def to_bytes(self) -> bytes:
        return self._view.tobytes()


def from_source(dtype: str, shape, source) -> np.ndarray:
    """Decode a ByteSource (of exactly the descriptor's byte length) into a new array,
    copying the bytes once."""
    shape = tuple(shape)
    if dtype in FOUR_BIT:
        raw = np.empty(byte_length(dtype, shape), np.uint8)
        source.read_into(raw)
        return from_bytes(dtype, shape, raw)  # unpacking nibbles makes the array
    out = np.empty(shape, NUMPY[dtype])
    source.read_into(out.reshape(-1).view(np.uint8))
    return out


def contiguous_bytes(dtype: str, array: np.ndarray) -> np.ndarray:
    """The array's bytes as a C-contiguous uint8 array, without copying when it
    already is one (a reader copies them out once)."""
    if dtype in FOUR_BIT:
        return np.frombuffer(to_bytes(dtype, array), np.uint8)
    return np.ascontiguousarray(array, dtype=NUMPY[dtype]).reshape(-1).view(np.uint8)


def to_bytes(dtype: str, array: np.ndarray) -> bytes:
    """Encode an array as the raw little-endian buffer JS sees."""
    if dtype in FOUR_BIT:
        flat = (np.asarray(array).reshape(-1).astype(np.int16) & 0x0F).astype(np.uint8)
        if flat.size % 2:
            flat = np.concatenate([flat, np.zeros(1, np.uint8)])
        return (flat[0::2] | (flat[1::2] << 4)).tobytes()
    return np.ascontiguousarray(array, dtype=NUMPY[dtype]).tobytes()


def zeros(dtype: str, shape) -> np.ndarray:
    return np.zeros(tuple(shape), dtype=NUMPY[dtype])


def _round_half_even(x: float) -> float:
    return float(round(x))  # Python's round() is half-to-even


def cast_number(value, dtype: str):
    """Cast an MLNumber (int from a JS bigint, or float) to a scalar of `dtype`.

    SPEC §8.2: floats round to nearest-even with overflow to ±Infinity; integers
    map NaN and -0 to 0, clamp to the type's range, then round half to even.
    Returns a numpy scalar of the storage dtype.
    """
    if dtype in FLOAT:
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value) if abs(value) < 2**1024 else math.copysign(math.inf, value)
        with np.errstate(over="ignore"):
            return NUMPY[dtype].type(value)
    lo, hi = INT_RANGE[dtype]
    if isinstance(value, float):
        if math.isnan(value):
            value = 0
        elif math.isinf(value):
            value = lo if value < 0 else hi
        else:
            value = max(lo, min(hi, value))
            value = int(_round_half_even(value))
    value = max(lo, min(hi, int(value)))
    return NUMPY[dtype].type(value)


def wrap_integer(array: np.ndarray, dtype: str) -> np.ndarray:
    """Wrap integer values into a 4-bit type's range (two's complement, low bits)."""
    if dtype == "int4":
        a = (array.astype(np.int64) & 0xF)
        return np.where(a > 7, a - 16, a).astype(np.int8)
    if dtype == "uint4":
        return (array.astype(np.int64) & 0xF).astype(np.uint8)
    return array
