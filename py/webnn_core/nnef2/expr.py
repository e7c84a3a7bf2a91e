"""Compile-time evaluation of SkriptND expressions (seed §2.4): scalars
(int, real, bool, str), packs (Python lists), null (None) with null
propagation, folds, ranges, zips, substitution, casts and built-ins.

Tensors appear as `Tensor` values (their dtype and shape are compile-time
facts: `x.shape`, `x.rank`); a tensor access outside @lower is an error."""
from __future__ import annotations

import itertools
import math

from ..nnef.errors import NNEFSemanticError

INT_INF = 2 ** 63 - 1      # int(inf): the extremal integer a runtime maps to its own (seed §2.4 Casting)


class Unknown(Exception):
    """An identifier has no value yet (used to decide evaluation order: deferred
    defaults, interleaved asserts, binding order)."""

    def __init__(self, name, pos=None):
        super().__init__(name)
        self.name = name
        self.pos = pos


class Tensor:
    """A tensor during composition: SkriptND data type, static shape and the WebNN
    operand computing it (None while only checking shapes)."""
    __slots__ = ("dtype", "shape", "operand", "name", "value")

    def __init__(self, dtype, shape, operand=None, name=None, value=None):
        self.dtype = dtype
        self.shape = tuple(int(d) for d in shape)
        self.operand = operand
        self.name = name
        self.value = value       # a numpy array for compile-time constants, else None

    @property
    def rank(self):
        return len(self.shape)

    def __repr__(self):
        return f"Tensor({self.name or '?'}: {self.dtype}{list(self.shape)})"


def err(message, pos):
    e = NNEFSemanticError(message)
    return e.at(pos)


def type_of(v):
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "real"
    if isinstance(v, str):
        return "str"
    if isinstance(v, Tensor):
        return v.dtype
    if isinstance(v, list):
        for x in v:
            if x is not None:
                return type_of(x)
    return None


def fmt_value(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ", ".join(fmt_value(x) for x in v) + "]"
    if isinstance(v, float):
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, Tensor):
        return f"{v.dtype}{list(v.shape)}"
    return str(v)


def _ceil_div(a, b):
    return -((-a) // b)


def _binop(op, a, b, pos):
    if a is None or b is None:
        return None
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            if isinstance(a, int) and isinstance(b, int) and not isinstance(a, bool):
                return a // b
            return a / b
        if op == "\\":
            return _ceil_div(a, b)
        if op == "%":
            return a % b
        if op == "**":
            return a ** b
        if op == "<<":
            return min(a, b)
        if op == ">>":
            return max(a, b)
        if op == "&&":
            return bool(a) and bool(b)
        if op == "||":
            return bool(a) or bool(b)
        if op == "^":
            return bool(a) != bool(b)
        if op == "=>":
            return (not a) or bool(b)
        if op in ("==", "is"):
            return a == b
        if op == "!=":
            return a != b
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
    except ZeroDivisionError:
        raise err(f"division by zero in '{op}'", pos) from None
    except TypeError:
        raise err(f"operator '{op}' does not apply to {fmt_value(a)} and {fmt_value(b)}", pos) from None
    raise err(f"unknown operator '{op}'", pos)


def elementwise(fn, args, pos):
    """Apply fn item by item when any argument is a pack (scalars broadcast)."""
    if any(a is None for a in args):
        return None
    lengths = {len(a) for a in args if isinstance(a, list)}
    if not lengths:
        return fn(*args)
    if len(lengths) > 1:
        raise err(f"packs of different lengths {sorted(lengths)} in an element-wise expression", pos)
    n = lengths.pop()
    return [fn(*[a[k] if isinstance(a, list) else a for a in args]) for k in range(n)]


FOLDS = {
    "+": lambda xs: sum(xs, 0 if all(isinstance(x, int) for x in xs) else 0.0),
    "*": lambda xs: math.prod(xs),
    "&&": lambda xs: all(xs),
    "||": lambda xs: any(xs),
    "<": lambda xs: all(a < b for a, b in zip(xs, xs[1:])),
    "<=": lambda xs: all(a <= b for a, b in zip(xs, xs[1:])),
    ">": lambda xs: all(a > b for a, b in zip(xs, xs[1:])),
    ">=": lambda xs: all(a >= b for a, b in zip(xs, xs[1:])),
    "==": lambda xs: all(a == xs[0] for a in xs),
    "!=": lambda xs: len(set(map(repr, xs))) == len(xs),
    ":=": lambda xs: xs[0] if xs and all(a == xs[0] for a in xs) else None,
    "<<": lambda xs: min(xs) if xs else None,
    ">>": lambda xs: max(xs) if xs else None,
}
CUMULATIVE = {"+": lambda a, b: a + b, "*": lambda a, b: a * b, "&&": lambda a, b: a and b,
              "||": lambda a, b: a or b, "<<": min, ">>": max}


def _round(x):
    # half away from zero, as the WebNN lowering of `round` (the draft does not say)
    return math.copysign(math.floor(abs(x) + 0.5), x) + 0.0


BUILTINS = {
    "abs": abs, "sign": lambda x: (x > 0) - (x < 0) if isinstance(x, int) else float((x > 0) - (x < 0)),
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atan": math.atan, "sinh": math.sinh, "cosh": math.cosh,
    "tanh": math.tanh, "asinh": math.asinh, "acosh": math.acosh, "atanh": math.atanh,
    "ceil": lambda x: float(math.ceil(x)), "floor": lambda x: float(math.floor(x)), "round": _round,
    "frac": lambda x: x - math.floor(x), "erf": math.erf,
}
CONCRETE = ("int", "real", "bool", "str")


def cast(type_name, v, pos):
    def one(x):
        if x is None:
            return None
        if type_name == "int":
            if isinstance(x, float) and math.isinf(x):
                return INT_INF if x > 0 else -INT_INF - 1
            return int(x)
        if type_name == "real":
            return float(x)
        if type_name == "bool":
            return bool(x)
        if type_name == "str":
            return fmt_value(x)
        raise err(f"cannot cast to '{type_name}'", pos)
    if isinstance(v, list):
        return [one(x) for x in v]
    return one(v)


DEFAULTS = {"int": 0, "real": 0.0, "bool": False, "str": ""}


class Evaluator:
    """Evaluates expressions against `values` (name -> value) and `types` (generic
    name -> concrete type name)."""

    def __init__(self, values=None, types=None):
        self.values = values if values is not None else {}
        self.types = types if types is not None else {}

    def known(self, e) -> bool:
        try:
            self.eval(e)
            return True
        except Unknown:
            return False

    def concrete_type(self, name, pos):
        if name in CONCRETE:
            return name
        t = self.types.get(name)
        if t is None:
            raise Unknown(name, pos)
        return t

    def eval(self, e):
        return getattr(self, "ev_" + e.kind)(e)

    def ev_lit(self, e):
        return e.v

    def ev_fmt(self, e):
        return "".join(p if isinstance(p, str) else fmt_value(self.eval(p)) for p in e.a)

    def ev_id(self, e):
        if e.v in self.values:
            return self.values[e.v]
        raise Unknown(e.v, e.pos)

    def ev_member(self, e):
        x = self.eval(e.a[0])
        if x is None:
            return None
        if e.v == "size":
            if not isinstance(x, list):
                raise err("'.size' applies to packs", e.pos)
            return len(x)
        if not isinstance(x, Tensor):
            raise err(f"'.{e.v}' applies to tensors", e.pos)
        return list(x.shape) if e.v == "shape" else x.rank

    def ev_list(self, e):
        out = []
        for item in e.a:
            if item.kind == "range":
                b, end, s = (self.eval(x) if x is not None else 1 for x in item.a)
                if b is None or end is None or s is None:
                    return None
                if s == 0:
                    raise err("a range's stride must not be zero", item.pos)
                out.extend(range(b, end, s))
            elif item.kind == "expand":
                v = self.expand(item)
                if v is None:
                    return None
                out.extend(v)
            else:
                v = self.eval(item)
                if v is None:
                    return None
                if isinstance(v, list):
                    raise err("a pack inside a list must be expanded with '..'", item.pos)
                out.append(v)
        return out

    def expand(self, item):
        """The items of `x..` / `x..(n)` (a list), or None for null."""
        x, count = item.a
        if x.kind == "zip":
            packs = [self.eval(p) for p in x.a]
            if any(p is None for p in packs):
                return None
            n = {len(p) for p in packs if isinstance(p, list)}
            if len(n) != 1:
                raise err("a zip needs packs of one common length", x.pos)
            n = n.pop()
            return [p[k] if isinstance(p, list) else p for k in range(n) for p in packs]
        v = self.eval(x)
        n = self.eval(count) if count is not None else None
        if v is None or (count is not None and n is None):
            return None
        if isinstance(v, list):
            if n is not None and not isinstance(n, bool) and len(v) != n:
                raise err(f"pack length {len(v)} does not match the given length {n}", item.pos)
            return list(v)
        if n is None:
            raise err(f"'..' after a single value needs a count, as in 'x..(n)'", item.pos)
        return [v] * int(n)

    def ev_expand(self, e):
        return self.expand(e)

    def ev_index(self, e):
        x = self.eval(e.a[0])
        i = self.eval(e.a[1])
        if x is None or i is None:
            return None
        if isinstance(x, Tensor):
            raise err("indexing a tensor is a tensor access, allowed only in @lower", e.pos)
        if not isinstance(x, (list, str)):
            raise err(f"cannot index {fmt_value(x)}", e.pos)
        try:
            if isinstance(i, list):
                if i and all(isinstance(k, bool) for k in i):
                    if len(i) != len(x):
                        raise err(f"mask of length {len(i)} for a pack of length {len(x)}", e.pos)
                    items = [a for a, m in zip(x, i) if m]
                else:
                    items = [x[k] for k in i]
                return "".join(items) if isinstance(x, str) else items
            return x[i]
        except IndexError:
            raise err(f"index {fmt_value(i)} out of range for a pack of length {len(x)}", e.pos) from None
        except TypeError:
            raise err(f"index {fmt_value(i)} is not an int", e.pos) from None

    def ev_slice(self, e):
        x = self.eval(e.a[0])
        parts = [self.eval(p) if p is not None else None for p in e.a[1:]]
        if x is None or any(p is None and q is not None for p, q in zip(parts, e.a[1:])):
            return None
        return x[slice(*parts)]

    def ev_subst(self, e):
        target, value = e.a
        x = self.eval(target.a[0])
        v = self.eval(value) if value.kind != "expand" else self.expand(value)
        if x is None or v is None:
            return None
        x = list(x)
        if target.kind == "slice":
            idx = list(range(len(x)))[slice(*[self.eval(p) if p is not None else None for p in target.a[1:]])]
        else:
            idx = self.eval(target.a[1])
            if idx is None:
                return None
        if isinstance(idx, list):
            if idx and all(isinstance(k, bool) for k in idx):
                idx = [k for k, m in enumerate(idx) if m]
            vals = v if isinstance(v, list) else [v] * len(idx)
            if len(vals) != len(idx):
                raise err(f"substituting {len(vals)} values at {len(idx)} indices", e.pos)
            for k, val in zip(idx, vals):
                x[k] = val
        else:
            x[idx] = v
        return x

    def ev_unary(self, e):
        x = self.eval(e.a[0])
        op = e.v
        fn = {"-": lambda a: -a, "+": lambda a: a, "!": lambda a: not a}[op]
        return elementwise(fn, [x], e.pos)

    def ev_nulltest(self, e):
        return self.eval(e.a[0]) is not None

    def ev_binary(self, e):
        op = e.v
        a = self.eval(e.a[0])
        # short-circuit where the right side may be meaningless (seed §2.9 relies on ordering)
        if op == "&&" and a is False:
            return False
        if op == "||" and a is True:
            return True
        if op == "=>" and a is False:
            return True
        b = self.eval(e.a[1])
        if op == "in":
            if a is None or b is None:
                return None
            if not isinstance(b, list):
                raise err("the right side of 'in' must be a pack", e.pos)
            return [x in b for x in a] if isinstance(a, list) else a in b
        if isinstance(a, Tensor) or isinstance(b, Tensor):
            raise err(f"'{op}' on tensors is not a compile-time expression; use an operator such as math.add",
                      e.pos)
        return elementwise(lambda x, y: _binop(op, x, y, e.pos), [a, b], e.pos)

    def ev_select(self, e):
        c = self.eval(e.a[0])
        if c is None:
            return None
        if isinstance(c, list):
            t = self.eval(e.a[1])
            f = self.eval(e.a[2]) if e.a[2] is not None else None

            def pick(k, ck):
                src = t if ck else f
                if isinstance(src, list):
                    if len(src) != len(c):
                        raise err("the branches of a packed select must match the condition's length", e.pos)
                    return src[k]
                return src
            return [pick(k, ck) for k, ck in enumerate(c)]
        if c:
            return self.eval(e.a[1])
        return self.eval(e.a[2]) if e.a[2] is not None else None

    def ev_coalesce(self, e):
        a = self.eval(e.a[0])
        return a if a is not None else self.eval(e.a[1])

    def ev_fold(self, e):
        x = self.eval(e.a[0])
        if x is None:
            return None
        xs = x if isinstance(x, list) else [x]
        if any(v is None for v in xs):
            return None
        return FOLDS[e.v](xs)

    def ev_cumfold(self, e):
        x = self.eval(e.a[0])
        if x is None:
            return None
        xs = x if isinstance(x, list) else [x]
        return list(itertools.accumulate(xs, CUMULATIVE[e.v]))

    def ev_call(self, e):
        t = self.concrete_type(e.v, e.pos) if (e.v in CONCRETE or e.v in self.types) else None
        if t is None:
            raise err(f"'{e.v}(...)' is not a cast: operator invocations are only allowed as the right-hand side "
                      f"of a @compose statement", e.pos)
        if not e.a:
            return DEFAULTS[t]
        if len(e.a) != 1:
            raise err(f"a cast takes one argument", e.pos)
        return cast(t, self.eval(e.a[0]), e.pos)

    def ev_builtin(self, e):
        fn = BUILTINS.get(e.v)
        if fn is None:
            raise err(f"unknown built-in function `{e.v}`", e.pos)
        x = self.eval(e.a[0])
        try:
            return elementwise(fn, [x], e.pos)
        except (ValueError, OverflowError) as ex:
            raise err(f"`{e.v}`({fmt_value(x)}): {ex}", e.pos) from None

    def ev_access(self, e):
        raise err("a tensor access is only allowed in @lower and in constant initialisers", e.pos)

    ev_bounded = ev_access

    def ev_range(self, e):
        raise err("a range 'b:e' is only allowed inside a list '[b:e]'", e.pos)

    def ev_zip(self, e):
        raise err("a zip '(a, b)' must be expanded in a list: '[(a, b)..]'", e.pos)
