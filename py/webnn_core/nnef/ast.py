"""The NNEF syntax tree and type representation (spec §3.2, §3.3.1)."""
from __future__ import annotations

from dataclasses import dataclass, field

# ----------------------------------------------------------------------------- types
PRIMITIVES = ("integer", "scalar", "logical", "string")


@dataclass(frozen=True)
class Prim:
    name: str  # integer | scalar | logical | string | ?

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class TensorT:
    item: Prim | None  # None: the unbound tensor<>

    def __str__(self):
        return f"tensor<{self.item or ''}>"


@dataclass(frozen=True)
class ArrayT:
    item: object

    def __str__(self):
        return f"{self.item}[]"


@dataclass(frozen=True)
class TupleT:
    items: tuple

    def __str__(self):
        return "(" + ",".join(str(t) for t in self.items) + ")"


@dataclass(frozen=True)
class EmptyArrayT:
    def __str__(self):
        return "[]"


INTEGER, SCALAR, LOGICAL, STRING, GENERIC = (Prim(n) for n in ("integer", "scalar", "logical", "string", "?"))
EMPTY = EmptyArrayT()


def is_tensor_type(t) -> bool:
    if isinstance(t, TensorT):
        return True
    if isinstance(t, ArrayT):
        return is_tensor_type(t.item)
    if isinstance(t, TupleT):
        return any(is_tensor_type(i) for i in t.items)
    return False


def is_generic(t) -> bool:
    if isinstance(t, Prim):
        return t.name == "?"
    if isinstance(t, TensorT):
        return t.item is not None and t.item.name == "?"
    if isinstance(t, ArrayT):
        return is_generic(t.item)
    if isinstance(t, TupleT):
        return any(is_generic(i) for i in t.items)
    return False


def bind_generic(t, binding):
    """Substitute the generic `?` with `binding` (a Prim)."""
    if binding is None:
        return t
    if isinstance(t, Prim):
        return binding if t.name == "?" else t
    if isinstance(t, TensorT):
        return TensorT(binding) if (t.item is not None and t.item.name == "?") else t
    if isinstance(t, ArrayT):
        return ArrayT(bind_generic(t.item, binding))
    if isinstance(t, TupleT):
        return TupleT(tuple(bind_generic(i, binding) for i in t.items))
    return t


def can_cast(src, dst, generic=None) -> bool:
    """Implicit casts of spec §3.3.1. `generic` is a one-item list holding the
    binding of `?` (None while unbound); a successful match may bind it."""
    if isinstance(dst, Prim) and dst.name == "?":
        if not isinstance(src, Prim):
            return False
        return _bind(src, generic)
    if isinstance(src, EmptyArrayT):
        return isinstance(dst, (ArrayT, EmptyArrayT))
    if isinstance(dst, Prim):
        return src == dst
    if isinstance(dst, TensorT):
        if dst.item is None:  # tensor<>: any tensor
            return isinstance(src, TensorT)
        item = src.item if isinstance(src, TensorT) else src if isinstance(src, Prim) else None
        if item is None:
            return False
        if dst.item.name == "?":
            return _bind(item, generic)
        return item == dst.item
    if isinstance(dst, ArrayT):
        return isinstance(src, ArrayT) and can_cast(src.item, dst.item, generic)
    if isinstance(dst, TupleT):
        return (isinstance(src, TupleT) and len(src.items) == len(dst.items)
                and all(can_cast(s, d, generic) for s, d in zip(src.items, dst.items)))
    return False


def _bind(prim, generic) -> bool:
    if prim.name == "?":
        return True
    if generic is None:
        return True
    if generic[0] is None:
        generic[0] = prim
        return True
    return generic[0] == prim


def common_type(a, b):
    """The common type of two array items, or None."""
    if a == b:
        return a
    if can_cast(a, b):
        return b
    if can_cast(b, a):
        return a
    return None


# ------------------------------------------------------------------------ syntax tree
@dataclass
class Node:
    pos: object = field(default=None, repr=False, compare=False, kw_only=True)


@dataclass
class Literal(Node):
    value: object
    type: Prim


@dataclass
class Ident(Node):
    name: str


@dataclass
class ArrayExpr(Node):
    items: list


@dataclass
class TupleExpr(Node):
    items: list


@dataclass
class Unary(Node):
    op: str
    arg: Node


@dataclass
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass
class IfElse(Node):
    cond: Node
    then: Node
    other: Node


@dataclass
class Comprehension(Node):
    iters: list  # [(name, expr, pos)]
    cond: Node | None
    body: Node


@dataclass
class Subscript(Node):
    base: Node
    index: Node | None  # single index
    begin: Node | None = None  # range
    end: Node | None = None
    is_range: bool = False


@dataclass
class Builtin(Node):
    name: str
    arg: Node


@dataclass
class Arg(Node):
    name: str | None
    value: Node


@dataclass
class Invocation(Node):
    name: str
    generic: Prim | None
    args: list  # [Arg]


@dataclass
class Assignment(Node):
    lhs: Node
    rhs: Node


@dataclass
class Param(Node):
    name: str
    type: object
    default: Node | None = None


@dataclass
class Fragment(Node):
    name: str
    generic: bool
    generic_default: Prim | None
    params: list
    results: list
    body: list | None  # None: a primitive (declaration only)

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        return None


@dataclass
class GraphDef(Node):
    name: str
    params: list   # [Ident]
    results: list  # [Ident]
    body: list     # [Assignment]


@dataclass
class Document(Node):
    version: tuple
    extensions: list
    fragments: list
    graph: GraphDef | None
    file: str = "<input>"
