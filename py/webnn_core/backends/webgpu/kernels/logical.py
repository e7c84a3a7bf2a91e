"""Ops with uint8 (boolean) operands: comparisons, logical ops, isNaN /
isInfinite and where. WGSL has no 8-bit storage: a uint8 tensor is packed
four elements to a u32 word (element k in byte k % 4, little-endian, as its
bytes lie in memory), so a kernel with a uint8 output computes one word (4
elements) per thread, and uint8 inputs are read by byte."""
from __future__ import annotations

from .. import wgsl
from . import int64
from .common import Call, Decline, Step

COMPARE = {"equal": "a == b", "notEqual": "a != b", "greater": "a > b", "greaterOrEqual": "a >= b",
           "lesser": "a < b", "lesserOrEqual": "a <= b"}
LOGICAL = {"logicalAnd": "(a != 0u) && (b != 0u)", "logicalOr": "(a != 0u) || (b != 0u)",
           "logicalXor": "(a != 0u) != (b != 0u)"}


def byte_at(array: str, index: str) -> str:
    """Element `index` of a uint8 tensor bound as array<u32>."""
    return f"(({array}[({index}) >> 2u] >> ((({index}) & 3u) * 8u)) & 0xffu)"


def _load(name: str, operand, index: str) -> str:
    return byte_at(name, index) if operand.dtype == "uint8" else f"{name}[{index}]"


def _binding(name: str, operand):
    return (name, "u32" if operand.dtype == "uint8" else wgsl.wgsl_type(operand.dtype), False)


def _check(call: Call, allowed) -> None:
    for operand in [*call.inputs, *call.outputs]:
        if operand.dtype not in allowed:
            raise Decline(f"{call.op} on {operand.dtype} has no WGSL kernel")


def _packed_main(n: int, per_element: str) -> tuple[str, list]:
    """Entry point writing uint8 output `y` four elements per thread:
    `per_element` computes `bit` (a bool) for element `e`."""
    words = -(-n // 4)
    d = wgsl.dispatch_1d(words)
    body = f"""  var packed = 0u;
  for (var k = 0u; k < 4u; k = k + 1u) {{
    let e = i * 4u + k;
    if (e >= {n}u) {{ break; }}
{per_element}
    if (bit) {{ packed = packed | (1u << (k * 8u)); }}
  }}
  y[i] = packed;"""
    return wgsl.elementwise_main(words, body, d), d


def _broadcast(operand, out_shape, coords, flat: str = "e") -> str:
    """The element index of `operand` read at the output element `flat` (unravelled as `coords`)."""
    if list(operand.shape) == list(out_shape):
        return flat
    return wgsl.dot(coords, wgsl.broadcast_strides(operand.shape, out_shape))


def compare(call: Call) -> list:
    """Comparisons (float32/int32/uint32 in) and logical ops (uint8 in)."""
    table = COMPARE if call.op in COMPARE else LOGICAL
    a, b = call.inputs
    out, = call.outputs
    if call.op in COMPARE and a.dtype in int64.INT64:  # two words per element (kernels/int64.py)
        return _compare64(call)
    _check(call, (*wgsl.TYPES, "uint8") if call.op in COMPARE else ("uint8",))
    if call.op in COMPARE and a.dtype == "uint8":
        raise Decline(f"{call.op} on uint8 has no WGSL kernel")
    n = wgsl.count(out.shape)
    code, coords = wgsl.unravel("e", out.shape, "c")
    per_element = "\n".join([code, f"    let a = {_load('a_', a, _broadcast(a, out.shape, coords))};",
                             f"    let b = {_load('b_', b, _broadcast(b, out.shape, coords))};",
                             f"    let bit = {table[call.op]};"])
    main, d = _packed_main(n, per_element)
    text = "\n".join([wgsl.header([_binding("a_", a), _binding("b_", b), ("y", "u32", True)]), main])
    return [Step(text, [a, b, out], d)]


def _compare64(call: Call) -> list:
    a, b = call.inputs
    out, = call.outputs
    n = wgsl.count(out.shape)
    code, coords = wgsl.unravel("e", out.shape, "c")
    expr = int64.COMPARE[call.op].replace("SIGNED", "true" if a.dtype == "int64" else "false")
    per_element = "\n".join([code, f"    let a = {int64.load64('a_', _broadcast(a, out.shape, coords))};",
                             f"    let b = {int64.load64('b_', _broadcast(b, out.shape, coords))};",
                             f"    let bit = {expr};"])
    main, d = _packed_main(n, per_element)
    text = "\n".join([wgsl.header([("a_", "u32", False), ("b_", "u32", False), ("y", "u32", True)]), main])
    return [Step(text, [a, b, out], d)]


def logical_not(call: Call) -> list:
    _check(call, ("uint8",))
    a, = call.inputs
    out, = call.outputs
    n = wgsl.count(out.shape)
    main, d = _packed_main(n, f"    let bit = {byte_at('a_', 'e')} == 0u;")
    return [Step("\n".join([wgsl.header([("a_", "u32", False), ("y", "u32", True)]), main]), [a, out], d)]


def float_class(call: Call) -> list:
    _check(call, ("float32", "uint8"))
    a, = call.inputs
    out, = call.outputs
    n = wgsl.count(out.shape)
    test = "(bits & 0x7fffffffu) > 0x7f800000u" if call.op == "isNaN" else "(bits & 0x7fffffffu) == 0x7f800000u"
    main, d = _packed_main(n, f"    let bits = bitcast<u32>(a_[e]);\n    let bit = {test};")
    return [Step("\n".join([wgsl.header([("a_", "f32", False), ("y", "u32", True)]), main]), [a, out], d)]


def where(call: Call) -> list:
    condition, t, f = call.inputs
    out, = call.outputs
    if condition.dtype != "uint8" or out.dtype not in (*wgsl.TYPES, *int64.INT64):
        raise Decline(f"where on {out.dtype} has no WGSL kernel")
    if out.dtype in int64.INT64:  # both words of the chosen element
        return _where64(call)
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", out.shape)

    def index(operand):
        return _broadcast(operand, out.shape, coords, "i")
    body = "\n".join([code, f"  let c = {byte_at('c_', index(condition))};",
                      f"  y[i] = select(f_[{index(f)}], t_[{index(t)}], c != 0u);"])
    text = "\n".join([wgsl.header([("c_", "u32", False), ("t_", "u32", False), ("f_", "u32", False),
                                   ("y", "u32", True)]), wgsl.elementwise_main(n, body, d)])
    return [Step(text, [condition, t, f, out], d)]


def _where64(call: Call) -> list:
    condition, t, f = call.inputs
    out, = call.outputs
    n = wgsl.count(out.shape)
    d = wgsl.dispatch_1d(n)
    code, coords = wgsl.unravel("i", out.shape)

    def index(operand):
        return _broadcast(operand, out.shape, coords, "i")
    body = "\n".join([code, f"  let c = {byte_at('c_', index(condition))} != 0u;",
                      f"  let r = select({int64.load64('f_', index(f))}, {int64.load64('t_', index(t))}, c);",
                      "  y[2u * i] = r.x;", "  y[2u * i + 1u] = r.y;"])
    text = "\n".join([wgsl.header([("c_", "u32", False), ("t_", "u32", False), ("f_", "u32", False),
                                   ("y", "u32", True)]), wgsl.elementwise_main(n, body, d)])
    return [Step(text, [condition, t, f, out], d)]


KERNELS = {**{op: compare for op in (*COMPARE, *LOGICAL)}, "logicalNot": logical_not, "isNaN": float_class,
           "isInfinite": float_class, "where": where}
