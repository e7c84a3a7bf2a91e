"""The .dat tensor format: byte-exact round trips for every item type at ranks
0-8 (bool as 1-bit and 8-bit, volumes not a multiple of 8), interchange with
the reference implementation, and clear rejections."""
import struct

import numpy as np
import pytest

from nnef_helpers import ref_nnef
from webnn_core.nnef import NNEFDataError, dat

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "bool"]
SHAPES = [(), (1,), (13,), (3, 5), (2, 3, 5), (1, 2, 3, 2), (2, 1, 3, 1, 2), (1, 2, 1, 2, 1, 3),
          (2, 1, 2, 1, 2, 1, 3), (1, 2, 1, 2, 1, 2, 1, 3)]


def sample(dtype, shape, rng):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 100).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_rank(dtype):
    rng = np.random.default_rng(1)
    for shape in SHAPES:
        a = sample(dtype, shape, rng)
        raw = dat.write_tensor(a)
        tf = dat.read_tensor(raw)
        assert tf.data.dtype == a.dtype and tf.data.shape == a.shape
        np.testing.assert_array_equal(tf.data, a)
        assert dat.write_tensor(tf) == raw  # byte-exact, header included
        assert len(raw) == 128 + ((a.size * (1 if dtype == "bool" else a.itemsize * 8)) + 7) // 8


def test_header_layout():
    raw = dat.write_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert raw[:4] == b"\x4e\xef\x01\x00"
    assert struct.unpack_from("<II", raw, 4) == (24, 2)
    assert struct.unpack_from("<8I", raw, 12) == (2, 3, 0, 0, 0, 0, 0, 0)
    assert struct.unpack_from("<II", raw, 44) == (32, 0)
    assert raw[52:128] == bytes(76)


def test_bool_packing_is_msb_first():
    raw = dat.write_tensor(np.array([True, False, False, False, False, False, False, True, True]))
    assert raw[128:] == bytes([0b10000001, 0b10000000])


def test_bool_8_bit_and_quantized_and_legacy_fields_round_trip():
    rng = np.random.default_rng(2)
    bits8 = dat.TensorFile(rng.random((3, 5)) > 0.5, dat.BOOL, 8)
    raw = dat.write_tensor(bits8)
    assert dat.write_tensor(dat.read_tensor(raw)) == raw
    codes = rng.integers(0, 255, (4, 4)).astype(np.uint8)
    q = dat.TensorFile(codes, dat.QUINT, 8, params=struct.pack("<ff", -1.0, 1.0) + bytes(24))
    raw = dat.write_tensor(q)
    back = dat.read_tensor(raw)
    assert back.quantized and back.legacy_range == (-1.0, 1.0)
    assert dat.write_tensor(back) == raw
    signed_legacy = dat.TensorFile(np.array([-3, 4], np.int32), dat.UINT, 32, params=struct.pack("<I", 1) + bytes(28))
    raw = dat.write_tensor(signed_legacy)
    back = dat.read_tensor(raw)
    assert back.signed and back.data.tolist() == [-3, 4] and dat.write_tensor(back) == raw


def _broken(raw, offset, fmt, value):
    b = bytearray(raw)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


@pytest.mark.parametrize("mutate,message", [
    (lambda r: b"NN" + r[2:], "bad magic"),
    (lambda r: _broken(r, 2, "<B", 2), "version 2.0"),
    (lambda r: _broken(r, 3, "<B", 1), "version 1.1"),
    (lambda r: _broken(r, 8, "<I", 9), "rank 9"),
    (lambda r: _broken(r, 4, "<I", 100), "data length 100"),
    (lambda r: r[:-1], "file size"),
    (lambda r: r + b"\0", "file size"),
    (lambda r: _broken(_broken(r, 44, "<I", 12), 48, "<I", 4), "12 bits"),
    (lambda r: _broken(r, 44, "<I", 24), "float items must have 16, 32 or 64 bits"),
    (lambda r: _broken(r, 48, "<I", 9), "unknown item type code 9"),
    (lambda r: _broken(r, 48, "<I", 1 << 16), "vendor"),
    (lambda r: r[:100], "too short"),
])
def test_rejections(mutate, message):
    raw = dat.write_tensor(np.ones((2, 3), np.float32))
    with pytest.raises(NNEFDataError, match=message):
        dat.read_tensor(mutate(raw), "w.dat")


def test_bool_bit_width_rejected():
    raw = dat.write_tensor(np.array([True, False]))
    with pytest.raises(NNEFDataError, match="bool items must have 1 or 8 bits"):
        dat.read_tensor(_broken(raw, 44, "<I", 2))


@pytest.mark.skipif(ref_nnef is None, reason="the reference nnef package is not installed")
@pytest.mark.parametrize("dtype", DTYPES)
def test_interchange_with_reference(dtype, tmp_path):
    rng = np.random.default_rng(3)
    for k, shape in enumerate(SHAPES):
        a = sample(dtype, shape, rng)
        path = tmp_path / f"{k}.dat"
        with open(path, "wb") as f:
            ref_nnef.write_tensor(f, a)
        raw = path.read_bytes()
        assert dat.write_tensor(a) == raw           # same bytes as the reference writer
        np.testing.assert_array_equal(dat.read_tensor(raw).data, a)
        ours = tmp_path / f"{k}-ours.dat"
        ours.write_bytes(dat.write_tensor(a))
        with open(ours, "rb") as f:
            back = ref_nnef.read_tensor(f)
        assert back.shape == a.shape
        np.testing.assert_array_equal(back, a)
