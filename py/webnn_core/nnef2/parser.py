"""A recursive-descent parser for SkriptND, the NNEF 2.0 draft language (seed
004, §2 and the §2.16 grammar). Expressions use precedence climbing; see
docs/nnef.md ("NNEF 2.0") for the precedence table and every point the draft
leaves open that this parser decides. Errors are `NNEFSyntaxError`s at the
offending token's file:line:column."""
from __future__ import annotations

from ..nnef.errors import NNEFSyntaxError
from .ast import (BLOCKS, Assert, Block, Component, DType, E, If, Invocation, IterCount, LItem, LList, Loop,
                  Lowering, Module, Operator, PackSpec, Param, Quantization, ShapeItem, TypeSpec, Using, Value)
from .lexer import TYPE_NAMES, tokenize

# Binary operators, loosest first. '<-' (substitution) and '?:' are handled above this table.
BINARY_LEVELS = (
    ("=>",),
    ("||",),
    ("^",),
    ("&&",),
    ("==", "!=", "is", "in"),
    ("<", "<=", ">", ">="),
    ("<<", ">>"),
    ("+", "-"),
    ("*", "/", "\\", "%"),
)
FOLD_OPS = frozenset(("+", "*", "<<", ">>", "&&", "||", "<", "<=", ">", ">=", "==", "!=", ":="))
CUMULATIVE_OPS = frozenset(("+", "*", "<<", ">>", "&&", "||"))
LOWERING_OPS = ("=", ":=", "+=", "*=", "&=", "|=", "<=", ">=")
# Tokens that end an invocation used as a compose right-hand side (or as a condition or body in one).
INVOCATION_END = frozenset((";", "then", "elif", "else", "do", "unroll", "while", "}", ",", "eof"))
BASE_TYPES = ("type", "arith", "num")


class Parser:
    def __init__(self, text: str, file: str = "<input>"):
        self.file = file
        self.text = text
        self.toks = tokenize(text, file)
        self.i = 0

    # -- token helpers -------------------------------------------------------
    @property
    def tok(self):
        return self.toks[self.i]

    def peek(self, k=1):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *kinds):
        return self.tok.kind in kinds

    def accept(self, *kinds):
        if self.tok.kind in kinds:
            t = self.tok
            self.i += 1
            return t
        return None

    def expect(self, kind, what=None):
        t = self.tok
        if t.kind != kind:
            self.fail(f"expected {what or repr(kind)}, found {t.describe()}")
        self.i += 1
        return t

    def fail(self, message, tok=None):
        t = tok or self.tok
        raise NNEFSyntaxError(message, t.pos.file, t.pos.line, t.pos.column)

    def ident(self, what="an identifier"):
        return self.expect("id", what).text

    # -- module --------------------------------------------------------------
    def module(self, name="main") -> Module:
        imports, operators = [], []
        while self.at("import"):
            self.i += 1
            while True:
                t = self.tok
                qual = self.qualified()
                imports.append((qual, t.pos))
                if not self.accept(","):
                    break
            self.accept(";")  # the draft's own examples omit it (digest §3.2): optional here
        while not self.at("eof"):
            operators.append(self.operator(name))
        return Module(name, self.file, imports, operators)

    def qualified(self):
        parts = [self.ident()]
        while self.at(".") and self.peek().kind == "id":
            self.i += 1
            parts.append(self.ident())
        return ".".join(parts)

    def operator(self, module) -> Operator:
        start = self.tok
        public = bool(self.accept("public"))
        if self.at("graph"):
            graph = True
        elif self.at("operator"):
            graph = False
        else:
            self.fail(f"expected 'operator' or 'graph', found {self.tok.describe()}")
        self.i += 1
        name = self.ident("an operator name")
        op = Operator(name, start.pos, graph, public, {}, module)
        self.expect("{")
        while not self.accept("}"):
            t = self.expect("block", "a block such as '@input' or '}'")
            if t.text not in BLOCKS:
                self.fail(f"unknown block '@{t.text}' (expected one of {', '.join('@' + b for b in BLOCKS)})", t)
            if t.text in op.blocks:
                self.fail(f"block '@{t.text}' appears twice in '{name}'", t)
            self.expect("{")
            items = []
            while not self.accept("}"):
                items.extend(getattr(self, "item_" + t.text)())
            op.blocks[t.text] = items
        return op

    # -- blocks ----------------------------------------------------------------
    def item_dtype(self):
        t = self.tok
        name = self.ident()
        self.expect(":")
        base = self.expect("id", "'type', 'num' or 'arith'")
        if base.text not in TYPE_NAMES:
            self.fail(f"expected a type name, found {base.describe()}", base)
        default = None
        if self.accept("="):
            d = self.expect("id", "a type name")
            default = d.text
        self.expect(";")
        return [DType(name, base.text, default, t.pos)]

    def param(self):
        t = self.tok
        name = self.ident("a parameter name")
        self.expect(":")
        ts = self.type_spec()
        default, bounds = None, []
        if self.accept("="):
            default = self.expr()
            while self.accept(","):
                bounds.append(self.loop_bound())
        self.expect(";")
        return [Param(name, ts, default, bounds, t.pos)]

    item_attrib = item_input = item_output = item_constant = item_variable = param

    def item_using(self):
        t = self.tok
        lhs = self.lvalue(typed=False)
        self.expect("=")
        rhs = self.expr()
        self.expect(";")
        return [Using(lhs, rhs, t.pos)]

    def item_assert(self):
        t = self.tok
        cond = self.expr(assertion=True)
        message, args = None, []
        if self.accept(":"):
            s = self.expect("str", "a message string")
            message = self.format_string(s)
            while self.accept(","):
                label = None
                if self.at("str") and self.peek().kind == ":":
                    label = self.tok.text
                    self.i += 2
                start = self.tok
                e = self.expr()
                if label is None:
                    label = self.source_of(start, self.toks[self.i - 1])
                args.append((label, e))
        self.expect(";")
        return [Assert(cond, message, args, t.pos)]

    def source_of(self, first, last):
        # the exact source of an expression labels its value in assert messages (seed §2.8)
        return " ".join(self.text[self.offset_of(first):last.end].split())

    def offset_of(self, tok):
        # Token start offset from its line/column.
        lines = self._line_offsets()
        return lines[tok.pos.line - 1] + tok.pos.column - 1

    def _line_offsets(self):
        if not hasattr(self, "_lines"):
            offs, at = [0], 0
            for line in self.text.split("\n"):
                at += len(line) + 1
                offs.append(at)
            self._lines = offs
        return self._lines

    def item_lower(self):
        t = self.tok
        unroll = None
        if self.accept("unroll"):
            unroll = self.iter_count(required=True)
        locals_ = []
        while self.at("id") and self.peek().kind == "=":
            name = self.ident()
            self.i += 1
            locals_.append((name, self.expr()))
            self.expect(",")
        target = self.postfix(self.primary())
        if target.kind not in ("access", "index"):
            self.fail("the left-hand side of a lowering must be a tensor access such as 'y[i, j]'",)
        op = self.tok
        if op.kind not in LOWERING_OPS:
            self.fail(f"expected one of {', '.join(LOWERING_OPS)}, found {op.describe()}")
        self.i += 1
        rhs = self.expr()
        bounds = []
        while self.accept(","):
            bounds.append(self.loop_bound())
        cond = None
        if self.accept("|"):
            cond = self.expr()
        self.expect(";")
        return [Lowering(unroll, locals_, target, op.kind, rhs, bounds, cond, t.pos)]

    def loop_bound(self):
        name = self.ident("an index name")
        self.expect("<", "'<' and the index bound")
        return (name, self.expr())

    def item_compose(self):
        return [self.component()]

    item_update = item_compose

    def item_quantize(self):
        t = self.tok
        tensor = self.qualified()
        self.expect(":")
        op = self.qualified()
        types = self.generic_args() if self.at("<") else []
        attrs = self.attr_args() if self.at("{") else []
        self.expect(";")
        return [Quantization(tensor, op, types, attrs, t.pos)]

    # -- types -------------------------------------------------------------------
    def type_spec(self, allow_optional=True):
        t = self.tok
        optional = bool(allow_optional and self.accept("optional"))
        name = self.ident("a type")
        ts = TypeSpec(name, t.pos, optional)
        if self.accept("^"):
            self.expect("(")
            ts.rank = self.expr()
            self.expect(")")
        if self.at("["):
            ts.shape = self.shape_spec()
        if self.at(".."):
            ts.pack = self.pack_spec()
        return ts

    def shape_spec(self):
        self.expect("[")
        items = []
        if not self.at("]"):
            while True:
                t = self.tok
                distinct = bool(self.accept(".."))
                expr = None if self.accept("~") else self.expr()
                bound = self.expr() if self.accept("|") else None
                pack = self.pack_spec() if self.at("..") else None
                items.append(ShapeItem(expr, t.pos, distinct, bound, pack))
                if not self.accept(","):
                    break
        self.expect("]", "',' or ']'")
        return items

    def pack_spec(self):
        t = self.expect("..")
        count = None
        if self.at("(") :
            self.i += 1
            count = self.expr()
            self.expect(")")
        return PackSpec(count, t.pos)

    def generic_args(self):
        self.expect("<")
        types = [self.type_spec(allow_optional=False)]
        while self.accept(","):
            types.append(self.type_spec(allow_optional=False))
        self.expect(">")
        return types

    def attr_args(self):
        self.expect("{")
        attrs = []
        if not self.at("}"):
            while True:
                t = self.tok
                name = self.ident("an attribute name")
                self.expect("=")
                attrs.append((name, self.expr(), t.pos))
                if not self.accept(","):
                    break
        self.expect("}", "',' or '}'")
        return attrs

    # -- compose -----------------------------------------------------------------
    def lvalue(self, typed=True):
        t = self.tok
        if self.accept("["):
            items = []
            if not self.at("]"):
                while True:
                    items.append(self.lvalue_item(typed))
                    if not self.accept(","):
                        break
            self.expect("]")
            return LList(items, t.pos)
        return self.lvalue_item(typed)

    def lvalue_item(self, typed=True):
        t = self.tok
        if self.accept("~"):
            return LItem(None, t.pos)
        if self.accept("("):
            inner = [self.lvalue_item(typed)]
            while self.accept(","):
                inner.append(self.lvalue_item(typed))
            self.expect(")")
            pack = self.pack_spec()
            return LItem(None, t.pos, None, pack, inner)
        name = self.ident("a name")
        item = LItem(name, t.pos)
        if typed and self.at(":") and self.peek().kind == "id":
            self.i += 1
            item.type = self.type_spec(allow_optional=False)
            return item
        if self.at(".."):
            item.pack = self.pack_spec()
        return item

    def component(self):
        t = self.tok
        lhs = [self.lvalue()]
        while self.accept(","):
            lhs.append(self.lvalue())
        self.expect("=", "'=' after the results")
        rhs = self.statement()
        # a right-hand side that ends with a block's '}' needs no ';' (seed §2.10.1 examples)
        if self.toks[self.i - 1].kind == "}":
            self.accept(";")
        else:
            self.expect(";")
        return Component(lhs, rhs, t.pos)

    def statement(self):
        """A right-hand side in @compose: invocation, block, branch, loop or value."""
        if self.at("if"):
            return self.branch()
        if self.at("with", "for", "while", "do", "unroll"):
            return self.loop()
        return self.operand()

    def operand(self):
        """invocation-expr: an invocation, a (labelled) block, or an rvalue expression."""
        t = self.tok
        if self.at("{") or (self.at("id") and self.peek().kind == ":" and self.peek(2).kind == "{"):
            label = None
            if self.at("id"):
                label = self.ident()
                self.i += 1
            return self.block(label)
        inv = self.try_invocation()
        if inv is not None:
            return inv
        return Value(self.expr(), t.pos)

    def block(self, label):
        t = self.expect("{")
        comps, yields = [], []
        while True:
            if self.accept("yield"):
                yields.append(self.expr())
                while self.accept(","):
                    yields.append(self.expr())
                self.expect(";")
                self.expect("}", "'}' (yield must be the last statement of a block)")
                break
            if self.at("}"):
                self.fail("a block must end with 'yield ...;'")
            comps.append(self.component())
        return Block(label, comps, yields, t.pos)

    def try_invocation(self):
        """An invocation if the tokens form one; None (nothing consumed) for an expression.
        Once 'name(' / 'name{' / 'name<' is seen and name is not a cast ('int(x)'), it is an
        invocation, and its syntax errors are reported as such."""
        save = self.i
        if not self.at("id"):
            return None
        t = self.tok
        label = None
        if self.peek().kind == ":" and self.peek(2).kind == "id":
            label = self.ident()
            self.i += 1
        name = self.qualified()
        if not self.at("(", "{", "<") or (self.at("<") and not self._generic_ahead()):
            if label is not None:
                self.fail(f"expected an invocation after the label '{label}:'")
            self.i = save
            return None
        cast = name in ("int", "real", "bool", "str") and self.at("(")
        try:
            types = self.generic_args() if self.at("<") else []
            attrs = self.attr_args() if self.at("{") else []
            self.expect("(", "'(' and the arguments")
            args = []
            if not self.at(")"):
                while True:
                    args.append(None if self.accept("~") else self.expr())
                    if not self.accept(","):
                        break
            self.expect(")", "',' or ')'")
        except NNEFSyntaxError:
            if cast and label is None:
                self.i = save
                return None
            raise
        if self.tok.kind not in INVOCATION_END:
            if cast and label is None:
                self.i = save       # e.g. 'real(x) * 2': an expression starting with a cast
                return None
            self.fail(f"unexpected {self.tok.describe()} after the invocation of '{name}'")
        return Invocation(label, name, types, attrs, args, t.pos)

    def _generic_ahead(self):
        # 'op<T, real>(' rather than a comparison 'a < b'
        j = self.i + 1
        while self.toks[j].kind in ("id", ",", "optional"):
            j += 1
        return self.toks[j].kind == ">" and j > self.i + 1

    def branch(self):
        t = self.expect("if")
        branches = [(self.operand(), None)]
        self.expect("then")
        branches[0] = (branches[0][0], self.operand())
        while self.accept("elif"):
            c = self.operand()
            self.expect("then")
            branches.append((c, self.operand()))
        self.expect("else", "'else' (every if needs an else branch)")
        return If(branches, self.operand(), t.pos)

    def loop(self):
        t = self.tok
        carried, scans, pre, post, iters = [], [], None, None, None
        if self.accept("with"):
            while True:
                item = self.lvalue_item(typed=True)
                self.expect("=", "'=' and the initial value")
                carried.append((item, self.expr()))
                if not self.accept(","):
                    break
        if self.accept("for"):
            while True:
                name = self.ident("a loop item name")
                self.expect(":")
                scans.append((name, self.expr()))
                if not self.accept(","):
                    break
        if self.accept("while"):
            pre = self.operand()
        kw = self.tok
        if not self.accept("do", "unroll"):
            self.fail(f"expected 'do' or 'unroll', found {kw.describe()}")
        if self.at(".."):
            iters = self.iter_count()
        body = self.operand()
        if self.accept("while"):
            if pre is not None:
                self.fail("a loop has at most one while condition")
            post = self.operand()
        if kw.kind == "unroll" and (pre is not None or post is not None):
            self.fail("'unroll' needs a compile-time trip count: it cannot have a while condition", kw)
        return Loop(carried, scans, pre, body, kw.kind == "unroll", iters, post, t.pos)

    def iter_count(self, required=False):
        t = self.expect("..")
        self.expect("(")
        index = None
        if self.at("id") and self.peek().kind == "->":
            index = self.ident()
            self.i += 1
        count = None if self.at(")") else self.expr()
        self.expect(")")
        return IterCount(index, count, t.pos)

    # -- expressions -------------------------------------------------------------
    def expr(self, assertion=False):
        e = self.coalesce(assertion)
        if self.at("<-"):
            t = self.tok
            if e.kind not in ("index", "slice"):
                self.fail("the left side of '<-' must be an indexed pack such as 'a[i]'", t)
            self.i += 1
            e = E("subst", t.pos, [e, self.expr()])
        return e

    def coalesce(self, assertion=False):
        # '??' binds loosest: 'p ?? c ? a : b' is 'p ?? (c ? a : b)', as the §4 conv/pool 'offset' needs
        left = self.select(assertion)
        while self.at("??"):
            t = self.tok
            self.i += 1
            left = E("coalesce", t.pos, [left, self.select(assertion)])
        return left

    def select(self, assertion=False):
        cond = self.binary(0)
        if self.at("?"):
            t = self.tok
            self.i += 1
            then = self.coalesce()
            other = None
            # in an assert, ': "message"' follows the condition, so 'c ? a : "text"' is read as a message
            if self.at(":") and not (assertion and self.peek().kind == "str"):
                self.i += 1
                other = self.select()
            return E("select", t.pos, [cond, then, other])
        return cond

    def binary(self, level):
        if level == len(BINARY_LEVELS):
            return self.unary()
        ops = BINARY_LEVELS[level]
        left = self.binary(level + 1)
        while True:
            t = self.tok
            # folds: 'x + ..', 'x := ..', cumulative 'x + ...'
            if t.kind in FOLD_OPS and self.peek().kind in ("..", "...") and self._fold_level(t.kind) == level:
                dots = self.peek()
                if dots.kind == "..." and t.kind not in CUMULATIVE_OPS:
                    self.fail(f"'{t.kind}' has no cumulative fold ('...')", dots)
                self.i += 2
                left = E("fold" if dots.kind == ".." else "cumfold", t.pos, [left], t.kind)
                continue
            if t.kind not in ops:
                return left
            self.i += 1
            right = self.binary(level + 1)
            left = E("binary", t.pos, [left, right], t.kind)

    @staticmethod
    def _fold_level(op):
        if op == ":=":
            return 0
        for level, ops in enumerate(BINARY_LEVELS):
            if op in ops:
                return level
        return -1

    def unary(self):
        t = self.tok
        if t.kind in ("-", "+", "!"):
            self.i += 1
            x = self.unary()
            if t.kind == "-" and x.kind == "lit" and isinstance(x.v, (int, float)) and not isinstance(x.v, bool):
                return E("lit", t.pos, v=-x.v)
            return E("unary", t.pos, [x], t.kind)
        if t.kind == "?":
            self.i += 1
            return E("nulltest", t.pos, [self.unary()])
        return self.power()

    def power(self):
        base = self.postfix(self.primary())
        if self.at("**"):
            t = self.tok
            self.i += 1
            return E("binary", t.pos, [base, self.unary()], "**")   # right-associative
        return base

    def primary(self):
        t = self.tok
        k = t.kind
        if k == "int":
            self.i += 1
            return E("lit", t.pos, v=int(t.text))
        if k == "real":
            self.i += 1
            return E("lit", t.pos, v=float(t.text))
        if k == "str":
            self.i += 1
            return self.format_string(t)
        if k in ("true", "false"):
            self.i += 1
            return E("lit", t.pos, v=(k == "true"))
        if k == "inf":
            self.i += 1
            return E("lit", t.pos, v=float("inf"))
        if k == "pi":
            self.i += 1
            return E("lit", t.pos, v=3.141592653589793)
        if k == "(":
            self.i += 1
            e = self.expr()
            if self.at(","):
                self.fail("a tuple '(a, b)' is only allowed as a zip '[(a, b)..]' in a list")
            self.expect(")", "')'")
            return e
        if k == "[":
            return self.list_expr()
        if k == "|":
            return self.bounded()
        if k == "builtin":
            self.i += 1
            self.expect("(", "'(' after a built-in function")
            arg = self.expr()
            self.expect(")")
            return E("builtin", t.pos, [arg], t.text)
        if k == "id":
            self.i += 1
            if self.at("("):
                self.i += 1
                args = []
                if not self.at(")"):
                    args.append(self.expr())
                    while self.accept(","):
                        args.append(self.expr())
                self.expect(")", "')'")
                return E("call", t.pos, args, t.text)
            return E("id", t.pos, v=t.text)
        self.fail(f"expected an expression, found {t.describe()}")

    def postfix(self, e):
        while True:
            t = self.tok
            if t.kind == "." and self.peek().kind == "id" and self.peek().text in ("shape", "rank", "size"):
                self.i += 2
                e = E("member", t.pos, [e], self.toks[self.i - 1].text)
            elif t.kind == "[":
                e = self.subscript(e)
            else:
                return e

    def subscript(self, base):
        t = self.expect("[")
        if self.accept("]"):
            return E("access", t.pos, [base, []])
        # slices: a[b:e:s] with any part omitted
        if self.at(":") or self._slice_ahead():
            parts = [None, None, None]
            k = 0
            if not self.at(":"):
                parts[0] = self.expr()
            while self.accept(":"):
                k += 1
                if k > 2:
                    self.fail("a slice has at most two ':'")
                if not self.at(":", "]"):
                    parts[k] = self.expr()
            self.expect("]")
            return E("slice", t.pos, [base] + parts)
        items, comma = [], False
        while True:
            items.append(self.index_item())
            if self.accept(","):
                comma = True
                if self.at("]"):
                    break
                continue
            break
        self.expect("]", "',' or ']'")
        if comma or len(items) > 1 or items[0].kind in ("expand", "bounded"):
            return E("access", t.pos, [base, items])
        return E("index", t.pos, [base, items[0]])

    def _slice_ahead(self):
        # is there a ':' at bracket depth 0 before the closing ']'? (select's ':' is inside '?')
        depth, j, question = 0, self.i, 0
        while j < len(self.toks):
            k = self.toks[j].kind
            if k in ("(", "[", "{"):
                depth += 1
            elif k in (")", "]", "}"):
                if depth == 0:
                    return False
                depth -= 1
            elif depth == 0 and k in ("?", "<>"):   # both pair with a later ':'
                question += 1
            elif depth == 0 and k == ":":
                if question:
                    question -= 1
                else:
                    return True
            elif depth == 0 and k in (",", ";", "eof"):
                return False
            j += 1
        return False

    def index_item(self):
        return self.maybe_expand(self.expr())

    def bounded(self):
        """'|i|' or '|i <> lo : hi|': a guarded tensor index (seed §2.12)."""
        t = self.expect("|")
        i = self.expr()
        lo = hi = None
        if self.accept("<>"):
            lo = self.expr()
            self.expect(":")
            hi = self.expr()
        self.expect("|", "'|' closing the bounded index")
        return E("bounded", t.pos, [i, lo, hi])

    def maybe_expand(self, e):
        if self.at(".."):
            t = self.tok
            self.i += 1
            count = None
            if self.at("("):
                self.i += 1
                count = self.expr()
                self.expect(")")
            return E("expand", t.pos, [e, count])
        return e

    def list_expr(self):
        t = self.expect("[")
        items = []
        if not self.at("]"):
            while True:
                items.append(self.list_item())
                if not self.accept(","):
                    break
        self.expect("]", "',' or ']'")
        return E("list", t.pos, items)

    def list_item(self):
        t = self.tok
        if self.at("(") and self._zip_ahead():
            self.i += 1
            xs = [self.expr()]
            while self.accept(","):
                xs.append(self.expr())
            self.expect(")")
            z = E("zip", t.pos, xs)
            if not self.at(".."):
                self.fail("a zip '(a, b)' must be expanded with '..'")
            return self.maybe_expand(z)
        e = self.expr()
        if self.accept(":"):
            end = self.expr()
            step = self.expr() if self.accept(":") else None
            return E("range", t.pos, [e, end, step])
        return self.maybe_expand(e)

    def _zip_ahead(self):
        depth, j = 0, self.i
        while j < len(self.toks):
            k = self.toks[j].kind
            if k in ("(", "[", "{"):
                depth += 1
            elif k in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return False
            elif k == "," and depth == 1:
                return True
            elif k in (";", "eof"):
                return False
            j += 1
        return False

    def format_string(self, tok):
        """'a = {a + 2}' -> fmt parts; '\\{' and '\\}' are literal braces (seed §2.4)."""
        s = tok.text
        if "{" not in s and "\\" not in s:
            return E("lit", tok.pos, v=s)
        parts, buf, i = [], [], 0
        while i < len(s):
            c = s[i]
            if c == "\\" and i + 1 < len(s) and s[i + 1] in "{}":
                buf.append(s[i + 1])
                i += 2
                continue
            if c == "{":
                j = s.find("}", i)
                if j < 0:
                    self.fail("unclosed '{' in a formatted string", tok)
                if buf:
                    parts.append("".join(buf))
                    buf = []
                sub = Parser(s[i + 1:j], tok.pos.file)
                # report errors inside the string at the string's position
                try:
                    e = sub.expr()
                    if not sub.at("eof"):
                        sub.fail(f"unexpected {sub.tok.describe()}")
                except NNEFSyntaxError as err:
                    raise NNEFSyntaxError(f"in a formatted string: {err.detail}", tok.pos.file, tok.pos.line,
                                          tok.pos.column) from None
                parts.append(e)
                i = j + 1
                continue
            buf.append(c)
            i += 1
        if buf:
            parts.append("".join(buf))
        if all(isinstance(p, str) for p in parts):
            return E("lit", tok.pos, v="".join(parts))
        return E("fmt", tok.pos, parts)


def parse_module(text: str, file: str = "<input>", name: str = "main") -> Module:
    return Parser(text, file).module(name)


def parse_expression(text: str, file: str = "<expr>") -> E:
    p = Parser(text, file)
    e = p.expr()
    if not p.at("eof"):
        p.fail(f"unexpected {p.tok.describe()}")
    return e
