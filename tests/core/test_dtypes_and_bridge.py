"""Byte codecs, MLNumber casting (SPEC §8.2) and the JS bridge protocol."""
import ctypes
import json
import math

import numpy as np
import pytest

from webnn_core import bridge, dtypes


def test_int4_packs_two_per_byte_low_nibble_first():
    # From WPT's description: uint4 [1..10] packs as 0x21 0x43 0x65 0x87 0xA9.
    u = dtypes.from_bytes("uint4", [10], bytes([0x21, 0x43, 0x65, 0x87, 0xA9]))
    assert u.tolist() == list(range(1, 11))
    i = dtypes.from_bytes("int4", [10], bytes([0xA9, 0xCB, 0xED, 0x0F, 0x21]))
    assert i.tolist() == [-7, -6, -5, -4, -3, -2, -1, 0, 1, 2]
    assert dtypes.to_bytes("int4", i) == bytes([0xA9, 0xCB, 0xED, 0x0F, 0x21])
    assert dtypes.byte_length("uint4", [3]) == 2  # odd counts round up


def test_float16_and_int64_round_trip_bit_exact():
    bits = np.array([0x3C00, 0x7C00, 0xFC00, 0x7E00, 0x8000, 0x0001], np.uint16)
    arr = dtypes.from_bytes("float16", [6], bits.tobytes())
    assert dtypes.to_bytes("float16", arr) == bits.tobytes()
    big = np.array([-(2**63), 2**63 - 1], np.int64)
    assert dtypes.to_bytes("int64", dtypes.from_bytes("int64", [2], big.tobytes())) == big.tobytes()


@pytest.mark.parametrize("value,dtype,expected", [
    (2.5, "int32", 2), (3.5, "int32", 4), (-2.5, "int8", -2),  # half to even
    (1e10, "int32", 2**31 - 1), (-1e10, "uint8", 0), (math.nan, "int32", 0),
    (math.inf, "uint32", 2**32 - 1), (2**70, "uint64", 2**64 - 1), (-(2**70), "int64", -(2**63)),
])
def test_cast_number_to_integers(value, dtype, expected):
    assert int(dtypes.cast_number(value, dtype)) == expected


def test_cast_number_to_floats():
    assert math.isinf(float(dtypes.cast_number(1e39, "float32")))
    assert float(dtypes.cast_number(65520.0, "float16")) == math.inf
    assert math.isnan(float(dtypes.cast_number(math.nan, "float16")))
    assert float(dtypes.cast_number(2**53 + 1, "float32")) == float(np.float32(2**53))


def reply_text(text):
    """The reply's JSON text: a long or non-ASCII one is "@address,length" of UTF-8
    bytes in the heap, which JS decodes at once; here ctypes reads them."""
    if text.startswith("@"):
        address, length = map(int, text[1:].split(","))
        return ctypes.string_at(address, length).decode("utf-8")
    return text


def call(method, *args, data=None):
    reply = json.loads(reply_text(bridge.call(method, json.dumps(list(args)), data)))
    if "bytes" in reply:  # JS copies these out of the heap; here ctypes does
        address, length = reply["bytes"]
        return ctypes.string_at(address, length)
    return reply


def test_bridge_round_trip_and_error_mapping():
    ctx = call("create_context", "cpu", "default")["ok"]
    b = call("new_builder", {"$o": ctx})["ok"]
    x = call("builder_input", {"$o": b}, "x", {"dataType": "float32", "shape": [2]})["ok"]
    assert x[1:] == ["float32", [2]]
    # Special doubles travel as tags: clamp's maxValue = +Infinity, minValue = -0.
    y = call("builder_op", {"$o": b}, "clamp", [{"$o": x[0]}], {"minValue": {"$n": "-0"}, "maxValue": {"$n": "Infinity"}})["ok"]
    err = call("builder_op", {"$o": b}, "softmax", [{"$o": x[0]}, 5], {"label": "L"})
    assert err["error"][0] == "TypeError" and "[L]" in err["error"][1]
    g = call("builder_build", {"$o": b}, {"y": {"$o": y[0]}})["ok"]
    assert g["inputs"] == {"x": {"dataType": "float32", "shape": [2]}}
    t_in = call("create_tensor", {"$o": ctx}, {"dataType": "float32", "shape": [2], "writable": True})["ok"]
    t_out = call("create_tensor", {"$o": ctx}, {"dataType": "float32", "shape": [2], "readable": True})["ok"]
    call("write_tensor", {"$o": ctx}, {"$o": t_in}, data=np.array([-3, 4], np.float32).tobytes())
    call("dispatch", {"$o": ctx}, {"$o": g["graph"]}, {"x": {"$o": t_in}}, {"y": {"$o": t_out}})
    raw = call("read_tensor", {"$o": ctx}, {"$o": t_out})
    assert np.frombuffer(raw, np.float32).tolist() == [0, 4]
    call("destroy_context", {"$o": ctx})
    err = call("read_tensor", {"$o": ctx}, {"$o": t_out})
    assert err["error"][0] == "InvalidStateError"


def test_bridge_reports_engine_bugs_as_operation_errors(monkeypatch):
    def boom(*_):
        raise ZeroDivisionError("x")
    monkeypatch.setitem(bridge.METHODS, "new_builder", boom)
    err = call("new_builder", 1)
    assert err["error"][0] == "OperationError"


def test_long_text_crosses_as_utf8_bytes_both_ways(monkeypatch):
    """Issue 33 #3: a payload over LONG_TEXT characters (a huge label) is written by JS
    as UTF-8 into an array the engine allocates (call_text), not converted by Pyodide
    (which fails past ~2**27 code points); a long or non-ASCII reply comes back as
    "@address,length" of UTF-8 bytes. The op's labelled TypeError survives intact."""
    pending = [b""]
    monkeypatch.setattr(bridge, "_text_writer", [lambda address, length: ctypes.memmove(address, pending[0], length)])

    def call_text(method, *args):
        pending[0] = json.dumps(list(args), ensure_ascii=False).encode("utf-8")  # JS's raw JSON for long strings
        return json.loads(reply_text(bridge.call_text(method, len(pending[0]))))

    ctx = call("create_context", "cpu", "default")["ok"]
    b = call("new_builder", {"$o": ctx})["ok"]
    x = call("builder_input", {"$o": b}, "x", {"dataType": "float32", "shape": [2]})["ok"]
    for unit in ("a", "\u00e9", "\u4e2d", "\U0001F600"):
        label = unit * (bridge.LONG_TEXT + 7)
        err = call_text("builder_op", {"$o": b}, "softmax", [{"$o": x[0]}, 7], {"label": label})["error"]
        assert err[0] == "TypeError" and err[1].startswith(f"[{label}] softmax")
    # A short reply with non-ASCII text crosses as bytes too (Pyodide's UCS-2/4 conversion
    # reads the wrong memory past 2 GiB of heap); ASCII ones stay plain strings.
    raw = bridge.call("builder_input", json.dumps([{"$o": b}, "\u00f1", {"dataType": "float32", "shape": [1]}]))
    assert not raw.startswith("@")  # an ASCII reply: a plain string
    y = call("builder_op", {"$o": b}, "relu", [{"$o": x[0]}], {})["ok"]
    text = bridge.call("builder_build", json.dumps([{"$o": b}, {"$r": [["\u00fc", {"$o": y[0]}]]}]))
    assert text.startswith("@") and json.loads(reply_text(text))["ok"]["outputNames"] == ["\u00fc"]


def test_allocation_failures_are_unknown_errors(monkeypatch):
    """Issue 33 #3: no room for a long payload, a JS callback failing (Pyodide raises it
    as JsException), no room to encode a reply: each is the spec's UnknownError, with
    no Python text."""
    ctx = call("create_context", "cpu", "default")["ok"]
    b = call("new_builder", {"$o": ctx})["ok"]

    class JsException(Exception):  # what Pyodide raises for a JS error in a callback
        pass

    def js_range_error(*_):
        raise JsException("RangeError: Invalid array length")

    monkeypatch.setattr(bridge, "_text_writer", [js_range_error])
    err = json.loads(bridge.call_text("builder_input", 100))["error"]
    assert err[0] == "UnknownError" and "RangeError" in err[1] and "JsException" not in err[1]
    err = json.loads(bridge.call_text("builder_input", 2**62))["error"]  # numpy cannot allocate it
    assert err == ["UnknownError", "builder_input: out of memory"]
    monkeypatch.setattr(bridge, "_heap_writer", [js_range_error])
    err = call("builder_constant", {"$o": b}, {"dataType": "float32", "shape": [2]}, data=8)["error"]
    assert err[0] == "UnknownError" and "JsException" not in err[1]

    def no_memory(*_):
        raise MemoryError
    monkeypatch.setattr(bridge, "_ENCODER", type("E", (), {"encode": staticmethod(no_memory)})())
    err = call("builder_op", {"$o": b}, "softmax", [{"$o": 12345}, 7], {"label": "L"})["error"]
    assert err == ["UnknownError", "builder_op: out of memory"]


def test_bridge_records_never_read_names_as_tags():
    """Issue 15 #3: records travel as {"$r": [[key, value], ...]}; a name such as
    "$o" or "__proto__" is only data, and messages carry no Python internals."""
    ctx = call("create_context", "cpu", "default")["ok"]
    b = call("new_builder", {"$o": ctx})["ok"]
    x = call("builder_input", {"$o": b}, "$o", {"dataType": "float32", "shape": [2]})["ok"]
    y = call("builder_op", {"$o": b}, "relu", [{"$o": x[0]}], {})["ok"]
    g = call("builder_build", {"$o": b}, {"$r": [["__proto__", {"$o": y[0]}], ["$n", {"$o": y[0]}]]})["ok"]
    assert g["inputs"] == {"$o": {"dataType": "float32", "shape": [2]}}
    assert set(g["outputs"]) == {"__proto__", "$n"}
    t_in = call("create_tensor", {"$o": ctx}, {"dataType": "float32", "shape": [2], "writable": True})["ok"]
    outs = [call("create_tensor", {"$o": ctx}, {"dataType": "float32", "shape": [2], "readable": True})["ok"] for _ in range(2)]
    call("write_tensor", {"$o": ctx}, {"$o": t_in}, data=np.array([-1, 5], np.float32).tobytes())
    r = call("dispatch", {"$o": ctx}, {"$o": g["graph"]}, {"$r": [["$o", {"$o": t_in}]]},
             {"$r": [["__proto__", {"$o": outs[0]}], ["$n", {"$o": outs[1]}]]})
    assert r == {"ok": None}
    for t in outs:
        assert np.frombuffer(call("read_tensor", {"$o": ctx}, {"$o": t}), np.float32).tolist() == [0, 5]
    # The builder built: its operand handles are gone, and using one is a plain TypeError.
    b2 = call("new_builder", {"$o": ctx})["ok"]
    err = call("builder_op", {"$o": b2}, "relu", [{"$o": x[0]}], {})["error"]
    assert err[0] == "TypeError" and "0x" not in err[1] and "object at" not in err[1]


def test_hot_calls_with_numbers_only_answer_like_call(monkeypatch):
    """write_fast / dispatch_fast / read_fast (issue 17, the per-call floor): handles
    and lengths as numbers, None when done (a read's [address, length] in READ_REPLY),
    else exactly the JSON reply call() gives for the same call."""
    pending = [b""]
    monkeypatch.setattr(bridge, "_heap_writer", [lambda address: ctypes.memmove(address, pending[0], len(pending[0]))])
    ctx = call("create_context", "cpu", "default")["ok"]
    b = call("new_builder", {"$o": ctx})["ok"]
    xs = [call("builder_input", {"$o": b}, name, {"dataType": "float32", "shape": [2]})["ok"] for name in ("b", "1", "a")]
    y = call("builder_op", {"$o": b}, "add", [{"$o": xs[0][0]}, {"$o": xs[1][0]}], {})["ok"]
    z = call("builder_op", {"$o": b}, "mul", [{"$o": y[0]}, {"$o": xs[2][0]}], {})["ok"]
    g = call("builder_build", {"$o": b}, {"$r": [["z", {"$o": z[0]}], ["0", {"$o": y[0]}]]})["ok"]
    # The names in the graph's own order (JS object keys would put "1" and "0" first).
    assert g["inputNames"] == ["b", "1", "a"] and g["outputNames"] == ["z", "0"]
    desc = {"dataType": "float32", "shape": [2]}
    ins = [call("create_tensor", {"$o": ctx}, {**desc, "writable": True, "readable": True})["ok"] for _ in range(3)]
    outs = [call("create_tensor", {"$o": ctx}, {**desc, "readable": True})["ok"] for _ in range(2)]
    for t, values in zip(ins, ([1, 2], [10, 20], [3, -1])):
        pending[0] = np.array(values, np.float32).tobytes()
        assert bridge.write_fast(ctx, t, 8) is None
    assert bridge.dispatch_fast(ctx, g["graph"], *ins, *outs) is None

    def read(t):
        assert bridge.read_fast(ctx, t) is None
        address, length, pin = (int(v) for v in bridge.READ_REPLY)
        assert pin == 0
        return np.frombuffer(ctypes.string_at(address, length), np.float32).tolist()

    assert read(outs[0]) == [33, -22] and read(outs[1]) == [11, 22] and read(ins[2]) == [3, -1]
    # A read into the page's buffer (copied when it settles): the snapshot stays under a
    # pin handle through later calls (a write to the tensor, other reads) until released.
    assert bridge.read_fast(ctx, ins[2], 1) is None
    address, length, pin = (int(v) for v in bridge.READ_REPLY)
    assert pin in bridge._objects
    pending[0] = np.array([7, 8], np.float32).tobytes()
    assert bridge.write_fast(ctx, ins[2], 8) is None
    assert read(ins[2]) == [7, 8] and read(outs[0]) == [33, -22]
    assert np.frombuffer(ctypes.string_at(address, length), np.float32).tolist() == [3, -1]
    bridge.release(pin)
    assert pin not in bridge._objects
    # Failures answer call()'s reply, text for text.
    assert bridge.write_fast(ctx, ins[0], 4) == bridge.call("write_tensor", json.dumps([{"$o": ctx}, {"$o": ins[0]}]),
                                                             b"\0" * 4)
    assert json.loads(bridge.write_fast(ctx, outs[0], 8))["error"][0] == "TypeError"  # not writable
    assert json.loads(bridge.dispatch_fast(ctx, g["graph"], *ins, outs[0]))["error"][0] == "TypeError"
    same = bridge.dispatch_fast(ctx, g["graph"], *ins, ins[0], outs[1])
    assert same == bridge.call("dispatch", json.dumps([{"$o": ctx}, {"$o": g["graph"]},
                                                       {"$r": [["b", {"$o": ins[0]}], ["1", {"$o": ins[1]}],
                                                               ["a", {"$o": ins[2]}]]},
                                                       {"$r": [["z", {"$o": ins[0]}], ["0", {"$o": outs[1]}]]}]))
    assert json.loads(same)["error"][0] == "TypeError"
    call("destroy_context", {"$o": ctx})
    for reply in (bridge.write_fast(ctx, ins[0], 8), bridge.dispatch_fast(ctx, g["graph"], *ins, *outs),
                  bridge.read_fast(ctx, outs[0])):
        assert json.loads(reply)["error"][0] == "InvalidStateError"
