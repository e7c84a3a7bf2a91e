"""MLIR attribute and type values, read from the parser's piece lists:
tensor types, function types, `dense<...>` elements (splats, nested lists,
hex blobs), `array<i64: ...>`, `#stablehlo.*<...>` structs and enums, and the
pretty operations' `key = value` lists."""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .errors import StableHLOError
from .mlir import Group, unquote

_TENSOR = re.compile(r"tensor<((?:[0-9]+x)*)([a-zA-Z][a-zA-Z0-9]*)>")
# numpy dtypes of the element types a constant may have (wider than WebNN: f64 folds to f32 etc.).
NUMPY_TYPES = {"i1": np.bool_, "i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16,
               "i32": np.int32, "ui32": np.uint32, "i64": np.int64, "ui64": np.uint64,
               "f16": np.float16, "f32": np.float32, "f64": np.float64, "bf16": None}
_BITS = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}


@dataclass(frozen=True)
class TensorType:
    shape: tuple
    etype: str          # MLIR element type: f32, i32, i1, ui8, ...

    def __str__(self):
        return "tensor<" + "".join(f"{d}x" for d in self.shape) + self.etype + ">"


def is_token(p, kind: str) -> bool:
    return not isinstance(p, Group) and getattr(p, "type", None) == kind


def where(p) -> str:
    return f"{getattr(p, 'line', '?')}:{getattr(p, 'column', '?')}"


def tensor_type(p) -> TensorType:
    if is_token(p, "TENSOR"):
        m = _TENSOR.fullmatch(str(p))
        dims = tuple(int(d) for d in m.group(1).split("x") if d)
        return TensorType(dims, m.group(2))
    raise StableHLOError(f"{where(p)}: expected a ranked tensor type, got {describe(p)}")


def describe(p) -> str:
    if isinstance(p, Group):
        return {"paren": "( ... )", "list": "[ ... ]", "angle": "< ... >", "props": "<{ ... }>",
                "dict": "{ ... }", "region": "a region"}[p.kind]
    return repr(str(p))


def split_commas(items) -> list:
    out, cur = [], []
    for p in items:
        if is_token(p, "COMMA"):
            out.append(cur)
            cur = []
        else:
            cur.append(p)
    if cur or out:
        out.append(cur)
    return out


def strip_locs(items) -> list:
    """Drop `loc(...)` debug info."""
    out, skip = [], False
    for i, p in enumerate(items):
        if skip:
            skip = False
            continue
        if is_token(p, "BARE_ID") and str(p) == "loc" and i + 1 < len(items) and isinstance(items[i + 1], Group) \
                and items[i + 1].kind == "paren":
            skip = True
            continue
        out.append(p)
    return out


def types_of(pieces) -> list:
    """`t`, `t, t`, `(t, t)` -> [TensorType]; other types (tuple, token) raise."""
    out = []
    for part in split_commas(pieces):
        part = [p for p in part if not (isinstance(p, Group) and p.kind == "dict")]  # result attributes
        part = strip_locs(part)
        if len(part) == 1 and isinstance(part[0], Group) and part[0].kind == "paren":
            out.extend(types_of(part[0].items))
        elif len(part) == 1:
            out.append(tensor_type(part[0]))
        elif part:
            raise StableHLOError(f"{where(part[0])}: unsupported type {' '.join(str(x) for x in part)}")
    return out


def signature(pieces):
    """The trailing type of an op: `t`, `t1, t2`, `(ts) -> t`, `(ts) -> (ts)`, `t -> t`.
    Returns (operand types or None, result types, rest of the pieces)."""
    i = 0
    while i < len(pieces) and not is_token(pieces[i], "BARE_ID"):
        if isinstance(pieces[i], Group) and pieces[i].kind == "region":
            break
        i += 1
    sig, rest = pieces[:i], pieces[i:]
    if any(is_token(p, "ARROW") for p in sig):
        k = next(j for j, p in enumerate(sig) if is_token(p, "ARROW"))
        return types_of(sig[:k]), types_of(sig[k + 1:]), rest
    return None, types_of(sig), rest


# ------------------------------------------------------------------ attribute values
def number(tok):
    s = str(tok)
    if tok.type == "INT":
        return int(s)
    if tok.type == "FLOAT":
        return float(s)
    if tok.type == "HEX":
        return int(s, 16)
    raise StableHLOError(f"{where(tok)}: expected a number, got {s!r}")


def value(pieces):
    """A generic attribute value from its pieces."""
    pieces = [p for p in pieces]
    if not pieces:
        return None
    first = pieces[0]
    if is_token(first, "BARE_ID") and str(first) == "dense" and len(pieces) >= 2:
        typ = tensor_type(pieces[3]) if len(pieces) >= 4 and is_token(pieces[2], "COLON") else None
        return dense(pieces[1], typ)
    if is_token(first, "BARE_ID") and str(first) == "array" and len(pieces) >= 2:
        items = pieces[1].items
        if len(items) <= 1:
            return []
        return [number(p) if not is_token(p, "BARE_ID") else str(p) == "true"
                for part in split_commas(items[2:]) for p in part]
    if is_token(first, "HASH_ID") and len(pieces) >= 2 and isinstance(pieces[1], Group) and pieces[1].kind == "angle":
        return dialect_attr(str(first), pieces[1].items)
    if isinstance(first, Group):
        if first.kind == "list":
            rest = pieces[1:]
            if rest and is_token(rest[0], "BARE_ID") and str(rest[0]) == "x":  # [..]x[..]->[..] or [..] x [..]
                return ("dims", [first] + [p for p in rest if isinstance(p, Group)])
            return [value(part) for part in split_commas(first.items)]
        if first.kind in ("dict", "props"):
            return dictionary(first.items)
        if first.kind == "paren":
            return ("paren", first.items)
    if is_token(first, "INT") or is_token(first, "FLOAT") or is_token(first, "HEX"):
        return number(first)
    if is_token(first, "STRING"):
        return unquote(str(first))
    if is_token(first, "SYMBOL"):
        return unquote(str(first)[1:])
    if is_token(first, "BARE_ID"):
        s = str(first)
        return {"true": True, "false": False}.get(s, s)
    if is_token(first, "TENSOR"):
        return tensor_type(first)
    return ("raw", pieces)


def dictionary(items) -> dict:
    out = {}
    for part in split_commas(items):
        if not part:
            continue
        key = unquote(str(part[0]))
        if len(part) >= 2 and is_token(part[1], "EQUAL"):
            out[key] = value(part[2:])
        else:
            out[key] = True  # a unit attribute
    return out


def dialect_attr(name, items):
    """#stablehlo<comparison_direction GT> -> 'GT'; #stablehlo.gather<k = v, ...> -> dict;
    #stablehlo.conv<[b, f, 0, 1]x[...]->[...]> -> ('dims', [...])."""
    if items and isinstance(items[0], Group) and items[0].kind == "list":
        return value(items)
    if any(is_token(p, "EQUAL") for p in items):
        return dictionary(items)
    words = [str(p) for p in items if is_token(p, "BARE_ID")]
    return words[-1] if words else None


def int_list(v, what="attribute"):
    if isinstance(v, np.ndarray):
        return [int(x) for x in v.reshape(-1)]
    if isinstance(v, (list, tuple)):
        return [int(x) for x in v]
    raise StableHLOError(f"{what}: expected a list of integers, got {v!r}")


def dense(group, typ: TensorType | None):
    """dense<...> : tensor<...> -> numpy array of the type's shape."""
    if typ is None:
        raise StableHLOError(f"{where(group)}: dense<...> without a tensor type")
    np_type = NUMPY_TYPES.get(typ.etype)
    if np_type is None:
        raise StableHLOError(f"{where(group)}: constants of element type {typ.etype} are not supported")
    items = group.items
    count = int(np.prod(typ.shape, dtype=np.int64))
    if len(items) == 1 and is_token(items[0], "STRING"):  # hex blob of the whole buffer
        text = unquote(str(items[0]))
        if not text.startswith("0x"):
            raise StableHLOError(f"{where(items[0])}: a dense string must be a hex blob \"0x...\"")
        raw = bytes.fromhex(text[2:])
        itemsize = np.dtype(np_type).itemsize
        if len(raw) == itemsize:  # a splat
            arr = np.frombuffer(raw, dtype=np.dtype(np_type).newbyteorder("<"))
            return np.broadcast_to(arr.reshape(()), typ.shape).astype(np_type)
        if len(raw) != count * itemsize:
            raise StableHLOError(f"{where(items[0])}: the hex blob has {len(raw)} bytes, {typ} needs {count * itemsize}")
        return np.frombuffer(raw, dtype=np.dtype(np_type).newbyteorder("<")).astype(np_type).reshape(typ.shape)
    flat = []

    def walk(pieces):
        for p in pieces:
            if isinstance(p, Group) and p.kind == "list":
                walk(p.items)
            elif is_token(p, "COMMA"):
                continue
            else:
                flat.append(p)

    walk(items)
    vals = [_element(p, typ.etype) for p in flat]
    arr = np.array(vals, dtype=np.float64 if typ.etype.startswith("f") else object)
    if typ.etype.startswith("f"):
        arr = arr.astype(np_type)
    else:
        arr = np.array([int(v) for v in vals], dtype=np.int64).astype(np_type) if vals else np.zeros(0, np_type)
    for i, v in enumerate(vals):
        if isinstance(v, _Bits):
            arr[i] = np.array(v.bits, dtype=_BITS[typ.etype]).view(np_type)
    if arr.size == 1:
        return np.broadcast_to(arr.reshape(()), typ.shape).copy()
    if arr.size != count:
        raise StableHLOError(f"{where(group)}: dense<...> has {arr.size} elements, {typ} needs {count}")
    return arr.reshape(typ.shape)


class _Bits:
    def __init__(self, bits):
        self.bits = bits

    def __float__(self):
        return 0.0


def _element(tok, etype):
    if is_token(tok, "BARE_ID") and str(tok) in ("true", "false"):
        return 1 if str(tok) == "true" else 0
    if is_token(tok, "HEX") and etype.startswith("f"):
        return _Bits(int(str(tok), 16))  # the float's bit pattern, e.g. 0xFF800000 = -inf
    if tok.type in ("INT", "FLOAT", "HEX"):
        return number(tok)
    raise StableHLOError(f"{where(tok)}: unexpected {str(tok)!r} in dense<...>")


__all__ = ["TensorType", "tensor_type", "types_of", "signature", "value", "dictionary", "dense", "int_list",
           "split_commas", "strip_locs", "is_token", "where", "describe", "number"]
