"""The SkriptND syntax tree. Expressions are one small class keyed by `kind`
(the evaluator dispatches on it); declarations and statements have their own
classes. Every node keeps the `Pos` (file:line:column) it starts at."""
from __future__ import annotations

from dataclasses import dataclass, field


class E:
    """An expression. kinds and their `a` (children) / `v` (payload):

    lit v=value | fmt a=[str | E parts] | id v=name | member a=[x] v='shape'|'rank'|'size'
    list a=[items] | range a=[b, e, s?] | expand a=[x, count?] | zip a=[xs]
    index a=[x, i] | slice a=[x, b?, e?, s?] | access a=[x, [items]] | bounded a=[i, lo?, hi?]
    subst a=[index|slice, value] | unary v=op a=[x] | nulltest a=[x] | binary v=op a=[l, r]
    select a=[c, t, f?] | coalesce a=[l, r] | fold v=op a=[x] | cumfold v=op a=[x]
    call v=type name a=[args]  (casts and default values) | builtin v=name a=[x]
    """
    __slots__ = ("kind", "pos", "a", "v")

    def __init__(self, kind, pos, a=(), v=None):
        self.kind = kind
        self.pos = pos
        self.a = list(a)
        self.v = v

    def __repr__(self):
        inner = ", ".join(repr(x) for x in self.a)
        return f"{self.kind}({self.v!r}{'; ' + inner if inner else ''})"

    def walk(self):
        yield self
        for x in self.a:
            if isinstance(x, E):
                yield from x.walk()
            elif isinstance(x, list):
                for y in x:
                    if isinstance(y, E):
                        yield from y.walk()

    def source(self) -> str:
        """SkriptND text for this expression (for messages)."""
        a, k = self.a, self.kind
        s = lambda x: x.source() if isinstance(x, E) else ("" if x is None else str(x))
        if k == "lit":
            return repr(self.v) if isinstance(self.v, str) else str(self.v).lower() if isinstance(self.v, bool) \
                else str(self.v)
        if k == "id":
            return self.v
        if k == "member":
            return f"{s(a[0])}.{self.v}"
        if k == "list":
            return "[" + ", ".join(s(x) for x in a) + "]"
        if k == "range":
            return ":".join(s(x) for x in a if x is not None)
        if k == "expand":
            return f"{s(a[0])}.." + (f"({s(a[1])})" if a[1] is not None else "")
        if k == "zip":
            return "(" + ", ".join(s(x) for x in a) + ")"
        if k == "index":
            return f"{s(a[0])}[{s(a[1])}]"
        if k == "slice":
            return f"{s(a[0])}[{s(a[1])}:{s(a[2])}" + (f":{s(a[3])}" if a[3] is not None else "") + "]"
        if k == "access":
            return f"{s(a[0])}[" + ", ".join(s(x) for x in a[1]) + "]"
        if k == "bounded":
            return f"|{s(a[0])}" + (f" <> {s(a[1])} : {s(a[2])}" if a[1] is not None else "") + "|"
        if k == "subst":
            return f"{s(a[0])} <- {s(a[1])}"
        if k == "unary":
            return f"{self.v}{s(a[0])}"
        if k == "nulltest":
            return f"?{s(a[0])}"
        if k == "binary":
            return f"({s(a[0])} {self.v} {s(a[1])})"
        if k == "select":
            return f"({s(a[0])} ? {s(a[1])}" + (f" : {s(a[2])})" if a[2] is not None else ")")
        if k == "coalesce":
            return f"({s(a[0])} ?? {s(a[1])})"
        if k == "fold":
            return f"({s(a[0])} {self.v} ..)"
        if k == "cumfold":
            return f"({s(a[0])} {self.v} ...)"
        if k == "call":
            return f"{self.v}(" + ", ".join(s(x) for x in a) + ")"
        if k == "builtin":
            return f"`{self.v}`({s(a[0])})"
        return self.kind

    def identifiers(self) -> set:
        return {x.v for x in self.walk() if x.kind == "id"}


@dataclass
class PackSpec:
    count: E | None
    pos: object = None


@dataclass
class ShapeItem:
    expr: E | None            # None for '~' (a dynamic extent)
    pos: object
    distinct: bool = False    # '..t' in a tensor pack: one extent per item
    bound: E | None = None    # 's|10': static upper bound of a dynamic extent
    pack: PackSpec | None = None


@dataclass
class TypeSpec:
    name: str                 # int, real, bool, str, type, num, arith or a generic name
    pos: object
    optional: bool = False
    rank: E | None = None     # T^(r)[...]
    shape: list | None = None  # [ShapeItem] or None when no [] was written
    pack: PackSpec | None = None


@dataclass
class DType:
    name: str
    base: str
    default: str | None
    pos: object


@dataclass
class Param:
    name: str
    type: TypeSpec
    default: E | None
    bounds: list              # [(index name, E bound)] for per-element constant initialisers
    pos: object


@dataclass
class LItem:
    """One left-hand-side item: a name (None for '~'), optionally typed, optionally
    packed; or a zip `(a, b)..` (then `zip` holds the items)."""
    name: str | None
    pos: object
    type: TypeSpec | None = None
    pack: PackSpec | None = None
    zip: list | None = None


@dataclass
class LList:
    items: list
    pos: object


@dataclass
class Using:
    lhs: object               # LItem or LList
    rhs: E
    pos: object


@dataclass
class Assert:
    cond: E
    message: E | None
    args: list                # [(label str, E)]
    pos: object


@dataclass
class Lowering:
    unroll: object            # IterCount or None
    locals: list              # [(name, E)]
    target: E                 # an access (or index) expression
    op: str
    rhs: E
    bounds: list              # [(name, E)]
    cond: E | None
    pos: object


@dataclass
class IterCount:
    index: str | None
    count: E | None
    pos: object


@dataclass
class Invocation:
    label: str | None
    name: str                 # qualified: 'nn.conv'
    types: list               # [TypeSpec]
    attrs: list               # [(name, E, pos)]
    args: list                # [E or None for '~']
    pos: object


@dataclass
class Block:
    label: str | None
    components: list
    yields: list              # [E]
    pos: object


@dataclass
class Value:
    """A right-hand side that is an expression (a tensor name, a compile-time value)."""
    expr: E
    pos: object


@dataclass
class If:
    branches: list            # [(condition, consequent)]
    otherwise: object
    pos: object


@dataclass
class Loop:
    carried: list             # [(LItem, E initial value)]
    scans: list               # [(name, E pack)]
    pre_condition: object     # while ... do
    body: object
    unroll: bool
    iters: IterCount | None
    post_condition: object    # do ... while
    pos: object


@dataclass
class Component:
    lhs: list                 # [LItem | LList]
    rhs: object               # Invocation | Block | Value | If | Loop
    pos: object


@dataclass
class Quantization:
    tensor: str
    op: str
    types: list
    attrs: list
    pos: object


BLOCKS = ("dtype", "attrib", "input", "output", "using", "constant", "variable", "assert", "lower",
          "compose", "update", "quantize")


@dataclass
class Operator:
    name: str
    pos: object
    graph: bool = False
    public: bool = False
    blocks: dict = field(default_factory=dict)   # block name -> list of items
    module: str = ""

    def block(self, name):
        return self.blocks.get(name, [])

    @property
    def qualified(self):
        return f"{self.module}.{self.name}" if self.module else self.name


@dataclass
class Module:
    name: str
    file: str
    imports: list             # [(name, pos)]
    operators: list           # [Operator]

    def find(self, name):
        for op in self.operators:
            if op.name == name:
                return op
        return None

    @property
    def graphs(self):
        return [op for op in self.operators if op.graph]
