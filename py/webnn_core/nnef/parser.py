"""Recursive-descent parser for the NNEF 1.0 textual format (spec §3.2, App. A).

The flat grammar (A.1) is always accepted. `fragment` definitions need the
`KHR_enable_fragment_definitions` extension, operator expressions (arithmetic,
if/else, comprehensions, subscripts, built-ins, nested invocations) need
`KHR_enable_operator_expressions` - as the spec says; the standard library is
parsed with both enabled. Errors are `NNEFSyntaxError`s at `file:line:column`
of the offending token, naming what was expected.
"""
from __future__ import annotations

from . import ast as A
from .errors import NNEFSemanticError, NNEFSyntaxError
from .lexer import Token, tokenize

EXT_FRAGMENTS = "KHR_enable_fragment_definitions"
EXT_EXPRESSIONS = "KHR_enable_operator_expressions"
KNOWN_EXTENSIONS = (EXT_FRAGMENTS, EXT_EXPRESSIONS)
TYPE_NAMES = ("integer", "scalar", "logical", "string")
BUILTINS = ("shape_of", "length_of", "range_of", "integer", "scalar", "logical", "string")
COMPARISONS = ("<", "<=", ">", ">=", "==", "!=")


class Parser:
    def __init__(self, text: str, file: str = "<input>", fragments: bool = False, expressions: bool = False):
        self.file = file
        self.tokens = tokenize(text, file)
        self.i = 0
        self.fragments = fragments
        self.expressions = expressions

    # -- token helpers --------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def peek(self, k=1) -> Token:
        return self.tokens[min(self.i + k, len(self.tokens) - 1)]

    def next(self) -> Token:
        t = self.tokens[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, message, tok=None):
        tok = tok or self.tok
        return NNEFSyntaxError(message, self.file, tok.pos.line, tok.pos.column)

    def expect(self, kind, what=None) -> Token:
        if self.tok.kind != kind:
            raise self.error(f"expected {what or repr(kind)}, found {self.tok.describe()}")
        return self.next()

    def accept(self, kind) -> Token | None:
        if self.tok.kind == kind:
            return self.next()
        return None

    # -- document ---------------------------------------------------------------------
    def document(self) -> A.Document:
        start = self.tok
        if self.tok.kind != "version":
            raise self.error(f"expected 'version', found {self.tok.describe()} (an NNEF document starts with 'version 1.0;')")
        self.next()
        vtok = self.tok
        if vtok.kind != "scalar" or not _is_version(vtok.text):
            raise self.error(f"expected a version number such as 1.0, found {vtok.describe()}")
        self.next()
        major, minor = (int(p) for p in vtok.text.split("."))
        if (major, minor) != (1, 0):
            raise NNEFSemanticError(f"unsupported version {vtok.text}; this importer reads NNEF 1.0",
                                    self.file, vtok.pos.line, vtok.pos.column)
        self.expect(";")
        extensions = []
        while self.tok.kind == "extension":
            self.next()
            while True:
                t = self.expect("identifier", "an extension name")
                if t.text not in KNOWN_EXTENSIONS:
                    raise NNEFSemanticError(f"unsupported extension '{t.text}' (supported: {', '.join(KNOWN_EXTENSIONS)})",
                                            self.file, t.pos.line, t.pos.column)
                extensions.append(t.text)
                if self.accept(","):
                    continue
                if self.tok.kind == "identifier":  # the spec's whitespace-separated form
                    continue
                break
            self.expect(";")
        self.fragments = self.fragments or EXT_FRAGMENTS in extensions
        self.expressions = self.expressions or EXT_EXPRESSIONS in extensions
        fragments = []
        while self.tok.kind == "fragment":
            if not self.fragments:
                raise self.error(f"fragment definitions need 'extension {EXT_FRAGMENTS};'")
            fragments.append(self.fragment())
        if self.tok.kind != "graph":
            raise self.error(f"expected 'graph', found {self.tok.describe()}")
        graph = self.graph()
        if self.tok.kind != "eof":
            raise self.error(f"expected end of file after the graph, found {self.tok.describe()}")
        return A.Document((major, minor), extensions, fragments, graph, self.file, pos=start.pos)

    def library(self) -> list:
        """A sequence of fragment definitions (the standard library)."""
        out = []
        while self.tok.kind != "eof":
            out.append(self.fragment())
        return out

    # -- fragments --------------------------------------------------------------------
    def fragment(self) -> A.Fragment:
        start = self.expect("fragment")
        name = self.expect("identifier", "a fragment name").text
        generic, generic_default = False, None
        if self.accept("<"):
            self.expect("?", "'?'")
            generic = True
            if self.accept("="):
                generic_default = self.type_name(allow_generic=False)
            self.expect(">", "'>'")
        self.expect("(")
        params = [self.param()]
        while self.accept(","):
            params.append(self.param())
        self.expect(")")
        self.expect("->")
        self.expect("(")
        results = [self.result()]
        while self.accept(","):
            results.append(self.result())
        self.expect(")")
        body = None
        if not self.accept(";"):
            body = self.body()
        return A.Fragment(name, generic, generic_default, params, results, body, pos=start.pos)

    def param(self) -> A.Param:
        t = self.expect("identifier", "a parameter name")
        self.expect(":")
        typ = self.type_spec()
        default = None
        if self.accept("="):
            default = self.literal_expr()
        return A.Param(t.text, typ, default, pos=t.pos)

    def result(self) -> A.Param:
        t = self.expect("identifier", "a result name")
        self.expect(":")
        return A.Param(t.text, self.type_spec(), pos=t.pos)

    def type_name(self, allow_generic=True) -> A.Prim:
        t = self.tok
        if t.kind in TYPE_NAMES:
            self.next()
            return A.Prim(t.kind)
        if t.kind == "?" and allow_generic:
            self.next()
            return A.GENERIC
        raise self.error(f"expected a type name (integer, scalar, logical, string{', ?' if allow_generic else ''}), found {t.describe()}")

    def type_spec(self):
        if self.tok.kind == "tensor":
            self.next()
            self.expect("<", "'<'")
            item = None
            if self.tok.kind != ">":
                item = self.type_name()
            self.expect(">", "'>'")
            typ = A.TensorT(item)
        elif self.tok.kind == "(":
            self.next()
            items = [self.type_spec()]
            while self.accept(","):
                items.append(self.type_spec())
            self.expect(")")
            if len(items) < 2:
                raise self.error("a tuple type needs at least two item types")
            typ = A.TupleT(tuple(items))
        else:
            typ = self.type_name()
        while self.tok.kind == "[" and self.peek().kind == "]":
            self.next()
            self.next()
            typ = A.ArrayT(typ)
        return typ

    def literal_expr(self):
        t = self.tok
        if t.kind == "[":
            self.next()
            items = []
            if self.tok.kind != "]":
                items.append(self.literal_expr())
                while self.accept(","):
                    items.append(self.literal_expr())
            self.expect("]")
            return A.ArrayExpr(items, pos=t.pos)
        if t.kind == "(":
            self.next()
            items = [self.literal_expr()]
            while self.accept(","):
                items.append(self.literal_expr())
            self.expect(")")
            if len(items) < 2:
                raise self.error("a tuple needs at least two items", t)
            return A.TupleExpr(items, pos=t.pos)
        lit = self.literal()
        if lit is None:
            raise self.error(f"expected a literal, found {t.describe()}")
        return lit

    def literal(self):
        """A numeric (optionally negative), string or logical literal, or None."""
        t = self.tok
        if t.kind == "-" and self.peek().kind in ("integer", "scalar"):
            self.next()
            lit = self.literal()
            lit.value = -lit.value
            lit.pos = t.pos
            return lit
        if t.kind == "integer":
            self.next()
            return A.Literal(int(t.text), A.INTEGER, pos=t.pos)
        if t.kind == "scalar":
            self.next()
            return A.Literal(float(t.text), A.SCALAR, pos=t.pos)
        if t.kind == "string":
            self.next()
            return A.Literal(t.text, A.STRING, pos=t.pos)
        if t.kind in ("true", "false"):
            self.next()
            return A.Literal(t.kind == "true", A.LOGICAL, pos=t.pos)
        return None

    # -- graph ------------------------------------------------------------------------
    def graph(self) -> A.GraphDef:
        start = self.expect("graph")
        name = self.expect("identifier", "a graph name").text
        self.expect("(")
        params = self.identifier_list()
        self.expect(")")
        self.expect("->")
        self.expect("(")
        results = self.identifier_list()
        self.expect(")")
        body = self.body()
        return A.GraphDef(name, params, results, body, pos=start.pos)

    def identifier_list(self):
        t = self.expect("identifier", "an identifier")
        out = [A.Ident(t.text, pos=t.pos)]
        while self.accept(","):
            t = self.expect("identifier", "an identifier")
            out.append(A.Ident(t.text, pos=t.pos))
        return out

    def body(self) -> list:
        self.expect("{")
        out = []
        while self.tok.kind != "}":
            if self.tok.kind == "eof":
                raise self.error("expected '}', found end of file")
            out.append(self.assignment())
        self.next()
        return out

    def assignment(self) -> A.Assignment:
        start = self.tok
        lhs = self.lvalue(top=True)
        self.expect("=")
        if self.expressions:
            rhs = self.expr()
        else:
            rhs = self.flat_invocation()
        self.expect(";")
        return A.Assignment(lhs, rhs, pos=start.pos)

    def lvalue(self, top=False):
        t = self.tok
        if t.kind == "identifier":
            self.next()
            node = A.Ident(t.text, pos=t.pos)
        elif t.kind == "[":
            self.next()
            items = []
            if self.tok.kind != "]":
                items.append(self.lvalue())
                while self.accept(","):
                    items.append(self.lvalue())
            self.expect("]")
            node = A.ArrayExpr(items, pos=t.pos)
        elif t.kind == "(":
            self.next()
            items = [self.lvalue()]
            while self.accept(","):
                items.append(self.lvalue())
            self.expect(")")
            if len(items) < 2:
                raise self.error("a tuple needs at least two items", t)
            node = A.TupleExpr(items, pos=t.pos)
        else:
            raise self.error(f"expected an identifier, array or tuple on the left-hand side, found {t.describe()}")
        if top and self.tok.kind == ",":
            items = [node]
            while self.accept(","):
                items.append(self.lvalue())
            node = A.TupleExpr(items, pos=t.pos)
        return node

    # -- flat right-hand sides ------------------------------------------------------
    def flat_invocation(self) -> A.Invocation:
        t = self.tok
        if t.kind != "identifier" or self.peek().kind not in ("(", "<"):
            raise self.error(f"expected an operation invocation, found {t.describe()}"
                             + ("" if self.expressions else f" (expressions need 'extension {EXT_EXPRESSIONS};')"))
        return self.invocation()

    def invocation(self) -> A.Invocation:
        t = self.expect("identifier")
        generic = None
        if self.accept("<"):
            generic = self.type_name(allow_generic=True)
            self.expect(">", "'>'")
        self.expect("(", "'('")
        args = []
        seen_named = False
        if self.tok.kind != ")":
            while True:
                at = self.tok
                if at.kind == "identifier" and self.peek().kind == "=":
                    self.next()
                    self.next()
                    args.append(A.Arg(at.text, self.rvalue(), pos=at.pos))
                    seen_named = True
                else:
                    if seen_named:
                        raise self.error("expected a named argument (name = value): positional arguments must come first")
                    args.append(A.Arg(None, self.rvalue(), pos=at.pos))
                if not self.accept(","):
                    break
        self.expect(")", "')'")
        return A.Invocation(t.text, generic, args, pos=t.pos)

    def rvalue(self):
        if self.expressions:
            return self.expr()
        t = self.tok
        if t.kind == "identifier":
            self.next()
            return A.Ident(t.text, pos=t.pos)
        if t.kind == "[":
            self.next()
            items = []
            if self.tok.kind != "]":
                items.append(self.rvalue())
                while self.accept(","):
                    items.append(self.rvalue())
            self.expect("]", "',' or ']'")
            return A.ArrayExpr(items, pos=t.pos)
        if t.kind == "(":
            self.next()
            items = [self.rvalue()]
            while self.accept(","):
                items.append(self.rvalue())
            self.expect(")", "',' or ')'")
            if len(items) < 2:
                raise self.error("a tuple needs at least two items (parenthesized expressions need "
                                 f"'extension {EXT_EXPRESSIONS};')", t)
            return A.TupleExpr(items, pos=t.pos)
        lit = self.literal()
        if lit is None:
            raise self.error(f"expected an identifier, literal, array or tuple, found {t.describe()}")
        return lit

    # -- operator expressions -------------------------------------------------------
    def expr(self, no_if=False):
        node = self.in_expr()
        if not no_if and self.tok.kind == "if":
            t = self.next()
            cond = self.in_expr()
            self.expect("else", "'else'")
            other = self.expr()
            node = A.IfElse(cond, node, other, pos=t.pos)
        return node

    def in_expr(self):
        node = self.logic_expr()
        while self.tok.kind == "in":
            t = self.next()
            node = A.Binary("in", node, self.logic_expr(), pos=t.pos)
        return node

    def logic_expr(self):
        node = self.cmp_expr()
        while self.tok.kind in ("&&", "||"):
            t = self.next()
            node = A.Binary(t.kind, node, self.cmp_expr(), pos=t.pos)
        return node

    def cmp_expr(self):
        node = self.add_expr()
        while self.tok.kind in COMPARISONS:
            t = self.next()
            node = A.Binary(t.kind, node, self.add_expr(), pos=t.pos)
        return node

    def add_expr(self):
        node = self.mul_expr()
        while self.tok.kind in ("+", "-"):
            t = self.next()
            node = A.Binary(t.kind, node, self.mul_expr(), pos=t.pos)
        return node

    def mul_expr(self):
        node = self.unary_expr()
        while self.tok.kind in ("*", "/"):
            t = self.next()
            node = A.Binary(t.kind, node, self.unary_expr(), pos=t.pos)
        return node

    def unary_expr(self):
        """Prefix operators bind looser than '^' (-2 ^ 2 is -4, as in the reference)."""
        t = self.tok
        if t.kind in ("-", "+", "!"):
            self.next()
            return self._unary(t, self.unary_expr())
        return self.pow_expr()

    def pow_expr(self):
        node = self.postfix_expr()
        while self.tok.kind == "^":
            t = self.next()
            node = A.Binary("^", node, self.pow_operand(), pos=t.pos)
        return node

    def pow_operand(self):
        t = self.tok
        if t.kind in ("-", "+", "!"):
            self.next()
            return self._unary(t, self.pow_operand())
        return self.postfix_expr()

    @staticmethod
    def _unary(t, arg):
        if t.kind == "-" and isinstance(arg, A.Literal) and arg.type in (A.INTEGER, A.SCALAR):
            return A.Literal(-arg.value, arg.type, pos=t.pos)
        return A.Unary(t.kind, arg, pos=t.pos)

    def postfix_expr(self):
        node = self.primary()
        while self.tok.kind == "[":
            t = self.next()
            if self.accept(":"):
                end = None if self.tok.kind == "]" else self.expr()
                node = A.Subscript(node, None, None, end, True, pos=t.pos)
            else:
                first = self.expr()
                if self.accept(":"):
                    end = None if self.tok.kind == "]" else self.expr()
                    node = A.Subscript(node, None, first, end, True, pos=t.pos)
                else:
                    node = A.Subscript(node, first, pos=t.pos)
            self.expect("]", "']'")
        return node

    def primary(self):
        t = self.tok
        if t.kind == "identifier":
            nxt = self.peek()
            if nxt.kind == "(" or (nxt.kind == "<" and self._generic_invocation_ahead()):
                return self.invocation()
            self.next()
            return A.Ident(t.text, pos=t.pos)
        if t.kind in BUILTINS and self.peek().kind == "(":
            self.next()
            self.next()
            arg = self.expr()
            self.expect(")", "')'")
            return A.Builtin(t.kind, arg, pos=t.pos)
        if t.kind == "(":
            self.next()
            first = self.expr()
            if self.accept(","):
                items = [first, self.expr()]
                while self.accept(","):
                    items.append(self.expr())
                self.expect(")", "')'")
                return A.TupleExpr(items, pos=t.pos)
            self.expect(")", "')'")
            return first
        if t.kind == "[":
            self.next()
            if self.tok.kind == "for":
                return self.comprehension(t)
            items = []
            if self.tok.kind != "]":
                items.append(self.expr())
                while self.accept(","):
                    items.append(self.expr())
            self.expect("]", "',' or ']'")
            return A.ArrayExpr(items, pos=t.pos)
        lit = self.literal()
        if lit is not None:
            return lit
        raise self.error(f"expected an expression, found {t.describe()}")

    def _generic_invocation_ahead(self) -> bool:
        return (self.peek(2).kind in TYPE_NAMES + ("?",) and self.peek(3).kind == ">" and self.peek(4).kind == "(")

    def comprehension(self, start):
        self.expect("for")
        iters = []
        while True:
            t = self.expect("identifier", "a loop variable")
            self.expect("in", "'in'")
            iters.append((t.text, self.logic_expr(), t.pos))
            if not self.accept(","):
                break
        cond = None
        if self.accept("if"):
            cond = self.expr(no_if=True)
        self.expect("yield", "'yield'")
        body = self.expr()
        self.expect("]", "']'")
        return A.Comprehension(iters, cond, body, pos=start.pos)


def _is_version(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 2 and all(p.isdigit() for p in parts)


def parse_document(text: str, file: str = "graph.nnef") -> A.Document:
    return Parser(text, file).document()


def parse_library(text: str, file: str = "<stdlib>") -> list:
    return Parser(text, file, fragments=True, expressions=True).library()


# -------------------------------------------------------------------- graph.quant
def parse_quantization(text: str, file: str = "graph.quant") -> list:
    """Lines `"<tensor-id>": <algorithm>(<name> = <literal>, ...);` (spec §5.3).
    Returns [(tensor_id, algorithm, {name: value}, pos)]."""
    p = Parser(text, file)
    out = []
    while p.tok.kind != "eof":
        t = p.expect("string", "a quoted tensor identifier")
        p.expect(":", "':'")
        algo = p.expect("identifier", "a quantization algorithm name")
        p.expect("(", "'('")
        args = {}
        if p.tok.kind != ")":
            while True:
                name = p.expect("identifier", "a named argument")
                p.expect("=", "'='")
                if name.text in args:
                    raise p.error(f"duplicate argument '{name.text}'", name)
                args[name.text] = literal_value(p.literal_expr())
                if not p.accept(","):
                    break
        p.expect(")", "')'")
        p.expect(";", "';'")
        out.append((t.text, algo.text, args, t.pos))
    return out


def literal_value(node):
    if isinstance(node, A.Literal):
        return node.value
    if isinstance(node, A.ArrayExpr):
        return [literal_value(i) for i in node.items]
    if isinstance(node, A.TupleExpr):
        return tuple(literal_value(i) for i in node.items)
    raise TypeError(node)
