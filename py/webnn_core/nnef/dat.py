"""The NNEF tensor file format (`.dat`, spec §5.2), read and written byte-exactly.

Layout (little-endian): a 128-byte header - magic 'N' 0xEF, version major and
minor, u32 data length, u32 rank, 8 x u32 extents, u32 bits per item, u32 item
type (low 16 bits: Khronos code; high 16 bits: vendor), 32 bytes of
(deprecated) item-type parameters, 44 reserved bytes - then the row-major
payload. Bits are packed MSB-first (item i is bit 7 - i % 8 of byte i // 8).

Item codes: 0 float (16/32/64 bits), 1 unsigned int, 2 quantized unsigned,
3 quantized signed, 4 signed int (8/16/32/64 bits), 5 bool (1 or 8 bits).
`read_tensor` keeps every header field in a `TensorFile`, and `write_tensor`
of that `TensorFile` reproduces the input bytes exactly.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from .errors import NNEFDataError

MAGIC = b"\x4e\xef"
HEADER_SIZE = 128
MAX_RANK = 8

FLOAT, UINT, QUINT, QINT, INT, BOOL = range(6)
CODE_NAMES = {FLOAT: "float", UINT: "unsigned integer", QUINT: "quantized unsigned integer",
              QINT: "quantized signed integer", INT: "signed integer", BOOL: "bool"}
_FLOATS = {16: "<f2", 32: "<f4", 64: "<f8"}
_SIGNED = {8: "<i1", 16: "<i2", 32: "<i4", 64: "<i8"}
_UNSIGNED = {8: "<u1", 16: "<u2", 32: "<u4", 64: "<u8"}


@dataclass
class TensorFile:
    """A decoded tensor file: the data plus every header field."""
    data: np.ndarray
    item_type: int                # Khronos item code (low 16 bits)
    bits: int
    vendor: int = 0               # high 16 bits of the item-type field
    version: tuple = (1, 0)
    params: bytes = b"\0" * 32    # deprecated item-type parameters
    reserved: bytes = b"\0" * 44

    @property
    def quantized(self) -> bool:
        return self.item_type in (QUINT, QINT)

    @property
    def signed(self) -> bool:
        """True for signed codes, and for code 1 with the legacy 'signed' flag."""
        if self.item_type in (INT, QINT):
            return True
        return self.item_type == UINT and struct.unpack_from("<I", self.params, 0)[0] != 0

    @property
    def legacy_range(self):
        """(min, max) stored by old files for quantized codes 2 and 3 (deprecated)."""
        if self.item_type in (QUINT, QINT):
            return struct.unpack_from("<ff", self.params, 0)
        return None


def _err(message, file):
    return NNEFDataError(f"{file}: {message}" if file else message)


def _np_dtype(item_type, bits, signed_flag, file):
    if item_type == FLOAT:
        if bits not in _FLOATS:
            raise _err(f"float items must have 16, 32 or 64 bits, found {bits}", file)
        return np.dtype(_FLOATS[bits])
    if item_type == BOOL:
        if bits not in (1, 8):
            raise _err(f"bool items must have 1 or 8 bits, found {bits}", file)
        return np.dtype(np.bool_) if bits == 1 else np.dtype("<u1")
    if item_type in (UINT, QUINT, QINT, INT):
        table = _SIGNED if (item_type in (INT, QINT) or signed_flag) else _UNSIGNED
        if bits not in table:
            raise _err(f"{CODE_NAMES[item_type]} items with {bits} bits are not supported "
                       "(supported: 8, 16, 32 or 64 bits)", file)
        return np.dtype(table[bits])
    raise _err(f"unknown item type code {item_type}", file)


def parse_header(buf, file=None):
    buf = memoryview(buf)
    if len(buf) < HEADER_SIZE:
        raise _err(f"too short for a tensor file: {len(buf)} bytes, the header alone has {HEADER_SIZE}", file)
    if bytes(buf[0:2]) != MAGIC:
        raise _err(f"bad magic number {bytes(buf[0:2]).hex()} (expected 4eef)", file)
    major, minor = buf[2], buf[3]
    if (major, minor) != (1, 0):
        raise _err(f"unsupported tensor file version {major}.{minor} (only 1.0 is defined)", file)
    data_length, rank = struct.unpack_from("<II", buf, 4)
    if rank > MAX_RANK:
        raise _err(f"rank {rank} exceeds the maximum rank {MAX_RANK}", file)
    extents = struct.unpack_from("<8I", buf, 12)
    bits, item_field = struct.unpack_from("<II", buf, 44)
    if bits == 0 or bits > 64:
        raise _err(f"bits per item must be in 1..64, found {bits}", file)
    return {"version": (major, minor), "data_length": data_length, "shape": list(extents[:rank]),
            "bits": bits, "item_type": item_field & 0xFFFF, "vendor": item_field >> 16,
            "params": bytes(buf[52:84]), "reserved": bytes(buf[84:128])}


def read_tensor(buf, file: str | None = None) -> TensorFile:
    """Decode a tensor file from bytes (`file` names it in errors)."""
    h = parse_header(buf, file)
    if h["vendor"] != 0:
        raise _err(f"vendor-specific item type (vendor {h['vendor']}, code {h['item_type']}) is not supported", file)
    shape, bits, code = h["shape"], h["bits"], h["item_type"]
    signed_flag = code == UINT and struct.unpack_from("<I", h["params"], 0)[0] != 0
    dtype = _np_dtype(code, bits, signed_flag, file)
    count = 1
    for d in shape:
        count *= d
    expected = (count * bits + 7) // 8
    if h["data_length"] != expected:
        raise _err(f"data length {h['data_length']} does not match the shape {shape} at {bits} bits per item "
                   f"({expected} bytes)", file)
    if len(buf) != HEADER_SIZE + expected:
        raise _err(f"file size {len(buf)} does not match the header ({HEADER_SIZE} + {expected} bytes)", file)
    payload = memoryview(buf)[HEADER_SIZE:]
    if bits == 1:  # only bool items can have 1 bit (_np_dtype checked it)
        data = np.unpackbits(np.frombuffer(payload, dtype=np.uint8))[:count].astype(np.bool_)
    else:
        # A read-only view of the file bytes (no copy: weights can be large).
        data = np.frombuffer(payload, dtype=dtype, count=count)
        if code == BOOL:
            data = data != 0
        else:
            data = data.astype(dtype.newbyteorder("="), copy=False)
    return TensorFile(data.reshape(shape), code, bits, h["vendor"], h["version"], h["params"], h["reserved"])


def item_type_of(array: np.ndarray, quantized: bool = False):
    """(item code, bits) a numpy array is written with by default."""
    kind = array.dtype.kind
    bits = array.dtype.itemsize * 8
    if kind == "b":
        return BOOL, 1
    if kind == "f":
        return FLOAT, bits
    if kind == "i":
        return (QINT if quantized else INT), bits
    if kind == "u":
        return (QUINT if quantized else UINT), bits
    raise NNEFDataError(f"cannot store numpy dtype {array.dtype} in a tensor file")


def write_tensor(tensor, quantized: bool = False) -> bytes:
    """Encode a `TensorFile` exactly, or a numpy array with the default header
    (bool as 1-bit items, like the Khronos tools write them)."""
    if not isinstance(tensor, TensorFile):
        array = np.asarray(tensor)
        code, bits = item_type_of(array, quantized)
        tensor = TensorFile(array, code, bits)
    array = np.asarray(tensor.data)
    shape = list(array.shape)
    if len(shape) > MAX_RANK:
        raise NNEFDataError(f"rank {len(shape)} exceeds the maximum rank {MAX_RANK} of a tensor file")
    code, bits = tensor.item_type, tensor.bits
    count = int(array.size)
    if bits == 1:
        if code != BOOL:
            raise NNEFDataError("only bool items can be stored with 1 bit")
        payload = np.packbits(array.reshape(-1).astype(np.bool_)).tobytes()
    else:
        signed_flag = code == UINT and struct.unpack_from("<I", tensor.params, 0)[0] != 0
        dtype = _np_dtype(code, bits, signed_flag, None)
        if code == BOOL:
            payload = array.reshape(-1).astype(np.uint8).tobytes()
        else:
            if array.dtype.kind != dtype.kind and not (array.dtype.kind in "iu" and dtype.kind in "iu"):
                raise NNEFDataError(f"numpy dtype {array.dtype} cannot be written as {CODE_NAMES[code]} items")
            payload = array.reshape(-1).astype(dtype).tobytes()
    data_length = (count * bits + 7) // 8
    assert len(payload) == data_length
    header = bytearray(HEADER_SIZE)
    header[0:2] = MAGIC
    header[2], header[3] = tensor.version
    struct.pack_into("<II", header, 4, data_length, len(shape))
    struct.pack_into("<8I", header, 12, *(shape + [0] * (MAX_RANK - len(shape))))
    struct.pack_into("<II", header, 44, bits, (tensor.vendor << 16) | code)
    header[52:84] = tensor.params
    header[84:128] = tensor.reserved
    return bytes(header) + payload
