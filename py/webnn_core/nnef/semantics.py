"""Semantic analysis and flattening (spec §3.3, chapter 6).

* Fragment definitions are checked statically: declarations (unique names,
  tensors before attributes, tensor results, defaults, generics) and bodies
  (types of every expression, identifier rules, invocation rules).
* The graph body is then *evaluated*: compile-time expressions are computed,
  user fragments with a body are expanded (recursion, lazy if/else,
  comprehensions), and every standard operation (or custom primitive) becomes
  one `Operation` of a flat `NNEFGraph`, whose tensors get their shapes by
  shape inference as they are produced.

Every error is an `NNEFSemanticError` (or `NNEFSyntaxError`) positioned at the
offending token.
"""
from __future__ import annotations

import math

from . import ast as A
from . import shapes as S
from .errors import NNEFError, NNEFSemanticError
from .model import NNEFGraph, Operation, TensorInfo
from .stdlib import standard_fragments

BINARY_FRAGMENTS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "^": "pow", "<": "lt", "<=": "le", ">": "gt",
                    ">=": "ge", "==": "eq", "!=": "ne", "&&": "and", "||": "or"}
UNARY_FRAGMENTS = {"-": "neg", "+": "copy", "!": "not"}
GRAPH_ONLY = ("external", "variable", "update")
MAX_DEPTH = 64


class TensorRef:
    """A tensor value during evaluation."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name = name
        self.dtype = dtype

    def __repr__(self):
        return f"TensorRef({self.name}:{self.dtype})"


def _err(message, pos):
    if pos is None:
        return NNEFSemanticError(message)
    return NNEFSemanticError(message, pos.file, pos.line, pos.column)


def value_type(v, pos=None):
    if isinstance(v, TensorRef):
        return A.TensorT(A.Prim(v.dtype))
    if isinstance(v, bool):
        return A.LOGICAL
    if isinstance(v, int):
        return A.INTEGER
    if isinstance(v, float):
        return A.SCALAR
    if isinstance(v, str):
        return A.STRING
    if isinstance(v, list):
        if not v:
            return A.EMPTY
        return A.ArrayT(_common_of([value_type(i, pos) for i in v], pos))
    if isinstance(v, tuple):
        return A.TupleT(tuple(value_type(i, pos) for i in v))
    raise _err(f"unexpected value {v!r}", pos)


def _common_of(types, pos):
    t = types[0]
    for u in types[1:]:
        c = A.common_type(t, u)
        if c is None:
            raise _err(f"array items of types '{t}' and '{u}' have no common type", pos)
        t = c
    return t


def _is_tensor(t):
    return isinstance(t, A.TensorT)


def _is_numeric(t):
    return t in (A.INTEGER, A.SCALAR, A.GENERIC)


def _same(a, b):
    return a == b or a == A.GENERIC or b == A.GENERIC


class Ctx:
    __slots__ = ("fragment", "generic", "depth", "targets", "graph")

    def __init__(self, fragment=None, generic=None, depth=0, targets=None, graph=False):
        self.fragment = fragment
        self.generic = generic     # binding of `?` inside a generic fragment
        self.depth = depth
        self.targets = targets or {}  # fragment result name -> tensor name to give it
        self.graph = graph


class Compiler:
    def __init__(self, doc: A.Document, lowered=(), expand_fragments=True, infer_shapes=True):
        self.doc = doc
        self.file = doc.file
        self.std = standard_fragments()
        self.lowered = set(lowered)
        self.expand_fragments = expand_fragments
        self.infer_shapes = infer_shapes
        self.decls = dict(self.std)
        self.user = {}
        for frag in doc.fragments:
            if frag.name in self.decls:
                what = "a standard operation" if frag.name in self.std else "already defined"
                raise _err(f"fragment '{frag.name}' is {what}; it cannot be redefined", frag.pos)
            self.decls[frag.name] = frag
            self.user[frag.name] = frag
        self.tensors = {}
        self.operations = []
        self.used_names = set()
        self.counters = {}

    # ================================================================= declarations
    def check_declaration(self, frag: A.Fragment):
        names = set()
        seen_attribute = False
        uses_generic = False
        for p in frag.params:
            if p.name in names:
                raise _err(f"fragment '{frag.name}': duplicate parameter '{p.name}'", p.pos)
            names.add(p.name)
            if A.is_tensor_type(p.type):
                if seen_attribute:
                    raise _err(f"fragment '{frag.name}': tensor parameter '{p.name}' must precede the attribute parameters", p.pos)
                if isinstance(p.type, A.TupleT) and not all(A.is_tensor_type(i) for i in p.type.items):
                    raise _err(f"fragment '{frag.name}': tuple type of '{p.name}' mixes tensors and attributes", p.pos)
            else:
                seen_attribute = True
            uses_generic = uses_generic or A.is_generic(p.type)
            if p.default is not None:
                dt = self.static_type(p.default, {}, Ctx(frag))
                if not A.can_cast(dt, p.type, [None]):
                    raise _err(f"fragment '{frag.name}': default value of type '{dt}' does not match the type "
                               f"'{p.type}' of parameter '{p.name}'", p.default.pos or p.pos)
        for r in frag.results:
            if r.name in names:
                raise _err(f"fragment '{frag.name}': '{r.name}' is defined both as parameter and as result", r.pos)
            names.add(r.name)
            if not A.is_tensor_type(r.type) or (isinstance(r.type, A.TupleT)
                                                 and not all(A.is_tensor_type(i) for i in r.type.items)):
                raise _err(f"fragment '{frag.name}': result '{r.name}' must be a tensor (or array/tuple of tensors), "
                           f"found '{r.type}'", r.pos)
            if isinstance(r.type, A.TensorT) and r.type.item is None:
                raise _err(f"fragment '{frag.name}': result '{r.name}' cannot be an unbound tensor<>", r.pos)
            uses_generic = uses_generic or A.is_generic(r.type)
        if uses_generic and not frag.generic:
            raise _err(f"fragment '{frag.name}' uses the generic type '?' but is not declared generic (<?>)", frag.pos)
        if frag.generic and not uses_generic:
            raise _err(f"fragment '{frag.name}' is declared generic but has no generic parameter or result", frag.pos)

    def check_fragment_body(self, frag: A.Fragment):
        scope = {p.name: p.type for p in frag.params}
        params = set(scope)
        results = {r.name: r.type for r in frag.results}
        assigned = set()
        ctx = Ctx(frag, generic=A.GENERIC if frag.generic else None)
        for asg in frag.body:
            rtype = self.static_type(asg.rhs, scope, ctx)
            if isinstance(asg.rhs, A.Invocation):
                self._check_lhs_structure(asg.lhs, rtype, asg.rhs)
            for ident, itype in self._static_bind(asg.lhs, rtype):
                if ident.name in params:
                    raise _err(f"parameter '{ident.name}' of fragment '{frag.name}' cannot be assigned", ident.pos)
                if ident.name in scope:
                    raise _err(f"identifier '{ident.name}' is already declared", ident.pos)
                if ident.name in results:
                    if itype is not None and not A.can_cast(itype, results[ident.name], [None]):
                        raise _err(f"result '{ident.name}' of fragment '{frag.name}' is declared '{results[ident.name]}', "
                                   f"assigned a value of type '{itype}'", ident.pos)
                    assigned.add(ident.name)
                scope[ident.name] = itype
        for r in frag.results:
            if r.name not in assigned:
                raise _err(f"result '{r.name}' of fragment '{frag.name}' is not assigned", frag.pos)

    def _static_bind(self, lhs, t):
        """Pairs (Ident, type) for an lvalue and the type assigned to it."""
        if isinstance(lhs, A.Ident):
            return [(lhs, t)]
        out = []
        if isinstance(lhs, A.ArrayExpr):
            if t is not None and not isinstance(t, (A.ArrayT, A.EmptyArrayT)):
                raise _err(f"cannot assign a value of type '{t}' to an array", lhs.pos)
            item = t.item if isinstance(t, A.ArrayT) else None
            for x in lhs.items:
                out += self._static_bind(x, item)
            return out
        if isinstance(lhs, A.TupleExpr):
            if t is not None and not (isinstance(t, A.TupleT) and len(t.items) == len(lhs.items)):
                raise _err(f"cannot assign a value of type '{t}' to a tuple of {len(lhs.items)} items", lhs.pos)
            for x, it in zip(lhs.items, t.items if t is not None else [None] * len(lhs.items)):
                out += self._static_bind(x, it)
            return out
        raise _err("invalid left-hand side", lhs.pos)

    def _check_lhs_structure(self, lhs, rtype, inv):
        """An invocation's result must be unpacked with the same structure (spec §3.3.2)."""
        def kind(t):
            return "tuple" if isinstance(t, A.TupleT) else "array" if isinstance(t, A.ArrayT) else "tensor"
        lk = "tuple" if isinstance(lhs, A.TupleExpr) else "array" if isinstance(lhs, A.ArrayExpr) else "identifier"
        rk = kind(rtype)
        ok = (lk == "tuple" and rk == "tuple") or (lk == "array" and rk == "array") or (lk == "identifier" and rk != "tuple")
        if not ok:
            raise _err(f"cannot assign the result of '{inv.name}' (type '{rtype}') to "
                       f"{'an' if lk in ('identifier', 'array') else 'a'} {lk}", lhs.pos)
        if lk == "tuple":
            for x, t in zip(lhs.items, rtype.items):
                if isinstance(t, A.ArrayT) and not isinstance(x, A.ArrayExpr):
                    raise _err(f"result of type '{t}' of '{inv.name}' must be unpacked into an array [...]", x.pos)

    # ================================================================= static types
    def static_type(self, e, scope, ctx):
        if isinstance(e, A.Literal):
            return e.type
        if isinstance(e, A.Ident):
            if e.name not in scope:
                raise _err(f"undeclared identifier '{e.name}'", e.pos)
            return scope[e.name]
        if isinstance(e, A.ArrayExpr):
            if not e.items:
                return A.EMPTY
            types = [self.static_type(i, scope, ctx) for i in e.items]
            if any(t is None for t in types):
                return None
            return A.ArrayT(_common_of(types, e.pos))
        if isinstance(e, A.TupleExpr):
            types = tuple(self.static_type(i, scope, ctx) for i in e.items)
            if any(t is None for t in types):
                return None
            return A.TupleT(types)
        if isinstance(e, A.Unary):
            t = self.static_type(e.arg, scope, ctx)
            if _is_tensor(t):
                return self._static_invoke(UNARY_FRAGMENTS[e.op], [t], None, e.pos, ctx)
            return self._unary_prim_type(e.op, t, e.pos)
        if isinstance(e, A.Binary):
            lt = self.static_type(e.left, scope, ctx)
            rt = self.static_type(e.right, scope, ctx)
            if e.op != "in" and (_is_tensor(lt) or _is_tensor(rt)):
                return self._static_invoke(BINARY_FRAGMENTS[e.op], [lt, rt], None, e.pos, ctx)
            return self._binary_prim_type(e.op, lt, rt, e.pos)
        if isinstance(e, A.IfElse):
            ct = self.static_type(e.cond, scope, ctx)
            if ct not in (A.LOGICAL, A.GENERIC):
                raise _err(f"the condition of if-else must be 'logical', found '{ct}'", e.cond.pos)
            a = self.static_type(e.then, scope, ctx)
            b = self.static_type(e.other, scope, ctx)
            c = A.common_type(a, b)
            if c is None:
                raise _err(f"the branches of if-else have incompatible types '{a}' and '{b}'", e.pos)
            return c
        if isinstance(e, A.Comprehension):
            inner = dict(scope)
            for name, it, pos in e.iters:
                t = self.static_type(it, scope, ctx)
                if not isinstance(t, (A.ArrayT, A.EmptyArrayT)):
                    raise _err(f"the loop iterates over '{name}' a value of type '{t}'; an array is needed", pos)
                inner[name] = t.item if isinstance(t, A.ArrayT) else None
            if e.cond is not None and self.static_type(e.cond, inner, ctx) not in (A.LOGICAL, A.GENERIC, None):
                raise _err("the condition of a comprehension must be 'logical'", e.cond.pos)
            bt = self.static_type(e.body, inner, ctx)
            return A.ArrayT(bt) if bt is not None else None
        if isinstance(e, A.Subscript):
            bt = self.static_type(e.base, scope, ctx)
            for idx in (e.index, e.begin, e.end):
                if idx is not None:
                    it = self.static_type(idx, scope, ctx)
                    if it not in (A.INTEGER, A.GENERIC):
                        raise _err(f"subscripts must be 'integer', found '{it}'", idx.pos)
            if isinstance(bt, A.ArrayT):
                return bt if e.is_range else bt.item
            if isinstance(bt, A.EmptyArrayT):
                return bt if e.is_range else None
            if bt == A.STRING:
                return A.STRING
            if isinstance(bt, A.TupleT):
                if e.is_range or not isinstance(e.index, A.Literal):
                    raise _err("tuples can only be subscripted by an integer literal", e.pos)
                k = e.index.value
                if not 0 <= k < len(bt.items):
                    raise _err(f"tuple index {k} is out of range", e.pos)
                return bt.items[k]
            if bt is None:
                return None
            raise _err(f"a value of type '{bt}' cannot be subscripted", e.pos)
        if isinstance(e, A.Builtin):
            t = self.static_type(e.arg, scope, ctx)
            return self._builtin_type(e.name, t, e.pos)
        if isinstance(e, A.Invocation):
            decl = self.lookup(e.name, e.pos)
            if ctx.fragment is not None and decl.name in GRAPH_ONLY:
                raise _err(f"operation '{decl.name}' is not allowed inside fragments", e.pos)
            args = [(a.name, self.static_type(a.value, scope, ctx), a.pos) for a in e.args]
            generic = e.generic
            if generic == A.GENERIC and ctx.generic is None:
                raise _err("'<?>' can only be used inside a generic fragment", e.pos)
            return self._result_type(decl, args, generic, e.pos, typed=True)
        raise _err(f"unexpected expression {type(e).__name__}", getattr(e, "pos", None))

    def _static_invoke(self, name, types, generic, pos, ctx):
        decl = self.lookup(name, pos)
        return self._result_type(decl, [(None, t, pos) for t in types], generic, pos, typed=True)

    def _result_type(self, decl, args, generic, pos, typed):
        _, g = self.match(decl, args, generic, pos, typed=typed)
        results = [A.bind_generic(r.type, g) for r in decl.results]
        return results[0] if len(results) == 1 else A.TupleT(tuple(results))

    def _unary_prim_type(self, op, t, pos):
        if t is None:
            return None
        if op in "-+" and _is_numeric(t):
            return t
        if op == "!" and t in (A.LOGICAL, A.GENERIC):
            return A.LOGICAL
        raise _err(f"operator '{op}' cannot be applied to a value of type '{t}'", pos)

    def _binary_prim_type(self, op, lt, rt, pos):
        if lt is None or rt is None:
            return None
        bad = _err(f"operator '{op}' cannot be applied to values of types '{lt}' and '{rt}'", pos)
        arrays = (A.ArrayT, A.EmptyArrayT)
        if op == "+":
            if _is_numeric(lt) and _same(lt, rt):
                return lt if lt != A.GENERIC else rt
            if lt == A.STRING and rt == A.STRING:
                return A.STRING
            if isinstance(lt, arrays) and isinstance(rt, arrays):
                if isinstance(lt, A.EmptyArrayT):
                    return rt
                if isinstance(rt, A.EmptyArrayT):
                    return lt
                c = A.common_type(lt, rt)
                if c is None:
                    raise bad
                return c
            raise bad
        if op == "*":
            if _is_numeric(lt) and _same(lt, rt):
                return lt if lt != A.GENERIC else rt
            if (isinstance(lt, arrays) or lt == A.STRING) and rt in (A.INTEGER, A.GENERIC):
                return lt
            raise bad
        if op in ("-", "/", "^"):
            if _is_numeric(lt) and _same(lt, rt):
                return lt if lt != A.GENERIC else rt
            raise bad
        if op in ("<", "<=", ">", ">="):
            if (_is_numeric(lt) or lt == A.STRING) and _same(lt, rt):
                return A.LOGICAL
            raise bad
        if op in ("==", "!="):
            if A.common_type(lt, rt) is not None or A.GENERIC in (lt, rt):
                return A.LOGICAL
            raise bad
        if op in ("&&", "||"):
            if lt in (A.LOGICAL, A.GENERIC) and rt in (A.LOGICAL, A.GENERIC):
                return A.LOGICAL
            raise bad
        if op == "in":
            if isinstance(rt, A.EmptyArrayT):
                return A.LOGICAL
            if isinstance(rt, A.ArrayT) and (A.common_type(lt, rt.item) is not None or A.GENERIC in (lt, rt.item)):
                return A.LOGICAL
            raise bad
        raise bad

    def _builtin_type(self, name, t, pos):
        if t is None:
            return {"shape_of": A.ArrayT(A.INTEGER), "range_of": A.ArrayT(A.INTEGER), "length_of": A.INTEGER}.get(
                name, A.Prim(name))
        if name == "shape_of":
            return A.ArrayT(A.INTEGER)
        if name in ("length_of", "range_of"):
            if not isinstance(t, (A.ArrayT, A.EmptyArrayT)) and t != A.STRING:
                raise _err(f"'{name}' needs an array or a string, found '{t}'", pos)
            return A.INTEGER if name == "length_of" else A.ArrayT(A.INTEGER)
        if not isinstance(t, A.Prim):
            raise _err(f"'{name}()' needs a primitive value, found '{t}'", pos)
        return A.Prim(name)

    # ================================================================= invocations
    def lookup(self, name, pos):
        decl = self.decls.get(name)
        if decl is None:
            raise _err(f"undefined operation '{name}'", pos)
        return decl

    def match(self, decl, args, generic, pos, typed=False):
        """Assign arguments to parameters (spec §3.3.2). `args` are
        (name | None, value, pos); with `typed` the values are types.
        Returns ({param: (value, pos)}, generic binding)."""
        params = decl.params
        bound = {}
        for k, (name, value, apos) in enumerate(args):
            if name is None:
                if k >= len(params):
                    raise _err(f"too many positional arguments: '{decl.name}' has {len(params)} parameters", apos)
                p = params[k]
                if not A.is_tensor_type(p.type):
                    raise _err(f"expected a named argument for attribute parameter '{p.name}' of '{decl.name}' "
                               "(only tensors may be passed by position)", apos)
            else:
                p = decl.param(name)
                if p is None:
                    raise _err(f"operation '{decl.name}' has no parameter named '{name}'", apos)
                if p.name in bound:
                    raise _err(f"duplicate argument: parameter '{name}' of '{decl.name}' is already assigned", apos)
            bound[p.name] = (value, apos)
        for p in params:
            if p.name not in bound:
                if p.default is None:
                    raise _err(f"missing argument for parameter '{p.name}' of '{decl.name}'", pos)
                default = self.static_type(p.default, {}, Ctx()) if typed else self.literal(p.default)
                bound[p.name] = (default, None)
        g = [generic]
        for p in params:
            value, apos = bound[p.name]
            t = value if typed else value_type(value, apos or pos)
            if t is None:
                continue
            if not A.can_cast(t, p.type, g):
                fresh = [None]
                if A.is_generic(p.type) and A.can_cast(t, p.type, fresh):
                    raise _err(f"could not deduce the generic type of '{decl.name}': candidates '{g[0]}' and "
                               f"'{fresh[0]}' disagree (parameter '{p.name}')", apos or pos)
                raise _err(f"argument of type '{t}' cannot be cast to type '{p.type}' for parameter '{p.name}' "
                           f"of '{decl.name}'", apos or pos)
        binding = g[0]
        if decl.generic and binding is None:
            binding = decl.generic_default
            if binding is None:
                raise _err(f"could not deduce the generic type of '{decl.name}'; give it explicitly as "
                           f"{decl.name}<type>(...)", pos)
        return bound, binding

    # ================================================================= compile
    def compile(self) -> NNEFGraph:
        for frag in self.doc.fragments:
            self.check_declaration(frag)
        for frag in self.doc.fragments:
            if frag.body is not None:
                self.check_fragment_body(frag)
        graph = self.doc.graph
        gctx = Ctx(graph=True)
        params = {}
        for p in graph.params:
            if p.name in params:
                raise _err(f"duplicate graph parameter '{p.name}'", p.pos)
            params[p.name] = p
        results = {}
        for r in graph.results:
            if r.name in params:
                raise _err(f"invalid definition of graph '{graph.name}': '{r.name}' is defined both as parameter "
                           "and as result", r.pos)
            if r.name in results:
                raise _err(f"duplicate graph result '{r.name}'", r.pos)
            results[r.name] = r
        self.used_names = set(params) | set(results) | _collect_names(graph.body)
        env = {}
        for asg in graph.body:
            rhs = asg.rhs
            is_external = isinstance(rhs, A.Invocation) and rhs.name == "external"
            if is_external:
                if not isinstance(asg.lhs, A.Ident) or asg.lhs.name not in params:
                    raise _err("identifiers assigned by operation 'external' must be graph parameters", asg.lhs.pos)
            seen_here = set()
            for ident in _lhs_idents(asg.lhs):
                if ident.name in seen_here:
                    raise _err(f"identifier '{ident.name}' is assigned twice", ident.pos)
                seen_here.add(ident.name)
                if ident.name in params and not is_external:
                    raise _err(f"graph parameter '{ident.name}' can only be assigned by operation 'external'", ident.pos)
                if ident.name in env:
                    raise _err(f"identifier '{ident.name}' is already declared", ident.pos)
            if isinstance(rhs, A.Invocation):
                decl = self.lookup(rhs.name, rhs.pos)
                self._check_lhs_structure(asg.lhs, self._declared_result_shape(decl), rhs)
                value = self.eval_invocation(rhs, env, gctx, targets=asg.lhs)
            else:
                value = self.eval(rhs, env, gctx, targets=asg.lhs if isinstance(asg.lhs, A.Ident) else None)
            self.bind(asg.lhs, value, env, gctx)
        for p in graph.params:
            if p.name not in env:
                raise _err(f"graph parameter '{p.name}' is not assigned (it needs an 'external' operation)", p.pos)
        outputs = []
        for r in graph.results:
            if r.name not in env:
                raise _err(f"result '{r.name}' of graph '{graph.name}' is not assigned", r.pos)
            v = env[r.name]
            if not isinstance(v, TensorRef):
                v = self.materialize(v, r.name, r.pos)
            elif v.name != r.name:
                v = self.materialize(v, r.name, r.pos)
            outputs.append(v.name)
        self._check_labels()
        inputs = [p.name for p in graph.params]
        return NNEFGraph(graph.name, inputs, outputs, self.tensors, self.operations, self.doc.version,
                         list(self.doc.extensions), list(self.doc.fragments), self.file)

    def _check_labels(self):
        """Variables sharing a label (case-insensitively) share data: same shape (spec §4.1.3)."""
        seen = {}
        for op in self.operations:
            if op.name != "variable":
                continue
            key = op.attribs["label"].lower()
            shape = list(op.attribs["shape"])
            if key in seen and seen[key][0] != shape:
                raise _err(f"variables labelled '{op.attribs['label']}' share data but have different shapes "
                           f"{seen[key][0]} and {shape}", op.pos)
            seen.setdefault(key, (shape, op))

    def _declared_result_shape(self, decl):
        results = [r.type for r in decl.results]
        return results[0] if len(results) == 1 else A.TupleT(tuple(results))

    # ================================================================= evaluation
    def literal(self, e):
        return self.eval(e, {}, Ctx())

    def eval(self, e, env, ctx, targets=None):
        """Evaluate an expression. `targets`: the left-hand side that names the
        result when `e` is an operator expression over tensors."""
        if isinstance(e, A.Literal):
            return e.value
        if isinstance(e, A.Ident):
            if e.name not in env:
                raise _err(f"undeclared identifier '{e.name}'", e.pos)
            return env[e.name]
        if isinstance(e, A.ArrayExpr):
            return [self.eval(i, env, ctx) for i in e.items]
        if isinstance(e, A.TupleExpr):
            return tuple(self.eval(i, env, ctx) for i in e.items)
        if isinstance(e, A.Unary):
            v = self.eval(e.arg, env, ctx)
            if isinstance(v, TensorRef):
                return self.invoke(UNARY_FRAGMENTS[e.op], [(None, v, e.pos)], e.pos, ctx, targets=targets)
            self._unary_prim_type(e.op, value_type(v, e.pos), e.pos)
            return -v if e.op == "-" else v if e.op == "+" else (not v)
        if isinstance(e, A.Binary):
            if e.op in ("&&", "||"):
                a = self.eval(e.left, env, ctx)
                if not isinstance(a, TensorRef) and isinstance(a, bool):
                    # short-circuit is not required by the spec; evaluate both for type errors
                    b = self.eval(e.right, env, ctx)
                    if isinstance(b, TensorRef):
                        return self.invoke(BINARY_FRAGMENTS[e.op], [(None, a, e.pos), (None, b, e.pos)], e.pos, ctx,
                                           targets=targets)
                    self._binary_prim_type(e.op, value_type(a), value_type(b), e.pos)
                    return (a and b) if e.op == "&&" else (a or b)
                b = self.eval(e.right, env, ctx)
            else:
                a = self.eval(e.left, env, ctx)
                b = self.eval(e.right, env, ctx)
            if e.op != "in" and (isinstance(a, TensorRef) or isinstance(b, TensorRef)):
                return self.invoke(BINARY_FRAGMENTS[e.op], [(None, a, e.pos), (None, b, e.pos)], e.pos, ctx,
                                   targets=targets)
            self._binary_prim_type(e.op, value_type(a, e.pos), value_type(b, e.pos), e.pos)
            return _binary_value(e.op, a, b, e.pos)
        if isinstance(e, A.IfElse):
            c = self.eval(e.cond, env, ctx)
            if not isinstance(c, bool):
                raise _err(f"the condition of if-else must be a compile-time 'logical', found '{value_type(c)}'",
                           e.cond.pos)
            return self.eval(e.then if c else e.other, env, ctx, targets)
        if isinstance(e, A.Comprehension):
            seqs = []
            for name, it, pos in e.iters:
                s = self.eval(it, env, ctx)
                if not isinstance(s, list):
                    raise _err(f"the loop iterates over '{name}' a value of type '{value_type(s)}'; an array is needed", pos)
                seqs.append((name, s))
            lengths = {len(s) for _, s in seqs}
            if len(lengths) > 1:
                raise _err("the iterated arrays of a comprehension must have the same length", e.pos)
            out = []
            for k in range(lengths.pop() if lengths else 0):
                inner = dict(env)
                for name, s in seqs:
                    inner[name] = s[k]
                if e.cond is not None:
                    c = self.eval(e.cond, inner, ctx)
                    if not isinstance(c, bool):
                        raise _err("the condition of a comprehension must be 'logical'", e.cond.pos)
                    if not c:
                        continue
                out.append(self.eval(e.body, inner, ctx))
            return out
        if isinstance(e, A.Subscript):
            base = self.eval(e.base, env, ctx)
            if isinstance(base, tuple):
                if e.is_range or not isinstance(e.index, A.Literal) or e.index.type != A.INTEGER:
                    raise _err("tuples can only be subscripted by an integer literal", e.pos)
            if not isinstance(base, (list, tuple, str)):
                raise _err(f"a value of type '{value_type(base)}' cannot be subscripted", e.pos)
            n = len(base)
            if e.is_range:
                lo = 0 if e.begin is None else self._int(self.eval(e.begin, env, ctx), e.begin.pos)
                hi = n if e.end is None else self._int(self.eval(e.end, env, ctx), e.end.pos)
                lo = max(0, min(lo, n))
                hi = max(0, min(hi, n))
                return base[lo:hi] if lo < hi else ("" if isinstance(base, str) else [])
            k = self._int(self.eval(e.index, env, ctx), e.index.pos)
            if not 0 <= k < n:
                raise _err(f"index {k} is out of range for a value of length {n}", e.index.pos)
            return base[k]
        if isinstance(e, A.Builtin):
            v = self.eval(e.arg, env, ctx)
            return self._builtin_value(e.name, v, e.pos)
        if isinstance(e, A.Invocation):
            return self.eval_invocation(e, env, ctx, targets=targets if isinstance(targets, A.Ident) else None)
        raise _err(f"unexpected expression {type(e).__name__}", getattr(e, "pos", None))

    def _int(self, v, pos):
        if isinstance(v, bool) or not isinstance(v, int):
            raise _err(f"an 'integer' is needed, found '{value_type(v)}'", pos)
        return v

    def _builtin_value(self, name, v, pos):
        t = value_type(v, pos)
        if name == "shape_of":
            if isinstance(v, TensorRef):
                shape = self.tensors[v.name].shape
                if shape is None:
                    raise _err(f"shape_of: the shape of '{v.name}' is not known (it comes from a custom operation)", pos)
                return list(shape)
            if isinstance(t, A.Prim):
                return []
            raise _err(f"shape_of needs a tensor, found '{t}'", pos)
        if name == "length_of":
            if not isinstance(v, (list, str)):
                raise _err(f"length_of needs an array or a string, found '{t}'", pos)
            return len(v)
        if name == "range_of":
            if not isinstance(v, (list, str)):
                raise _err(f"range_of needs an array or a string, found '{t}'", pos)
            return list(range(len(v)))
        if not isinstance(t, A.Prim):
            raise _err(f"{name}() needs a primitive value, found '{t}'", pos)
        try:
            if name == "integer":
                if isinstance(v, bool):
                    return int(v)
                if isinstance(v, float):
                    return math.trunc(v)  # toward zero, as the reference parser does
                if isinstance(v, str):
                    return int(v.strip()) if v.strip().lstrip("-").isdigit() else _bad_literal(name, v, pos)
                return v
            if name == "scalar":
                if isinstance(v, bool):
                    return 1.0 if v else 0.0
                if isinstance(v, str):
                    return float(v)
                return float(v)
            if name == "logical":
                if isinstance(v, str):
                    return v != ""
                return bool(v)
            if name == "string":
                if isinstance(v, bool):
                    return "true" if v else "false"
                return str(v)
        except ValueError:
            _bad_literal(name, v, pos)
        raise _err(f"unknown built-in '{name}'", pos)

    def invoke(self, name, args, pos, ctx, generic=None, targets=None):
        decl = self.lookup(name, pos)
        return self._invoke_decl(decl, args, generic, pos, ctx, targets)

    def eval_invocation(self, e, env, ctx, targets=None):
        decl = self.lookup(e.name, e.pos)
        if decl.name == "external" and (not ctx.graph or targets is None):
            raise _err("operation 'external' must be assigned directly to a graph parameter", e.pos)
        if ctx.fragment is not None and decl.name in GRAPH_ONLY:
            raise _err(f"operation '{decl.name}' is not allowed inside fragments", e.pos)
        args = [(a.name, self.eval(a.value, env, ctx), a.pos) for a in e.args]
        generic = e.generic
        if generic == A.GENERIC:
            if ctx.generic is None:
                raise _err("'<?>' can only be used inside a generic fragment", e.pos)
            generic = ctx.generic
        return self._invoke_decl(decl, args, generic, e.pos, ctx, targets)

    def _invoke_decl(self, decl, args, generic, pos, ctx, targets):
        bound, binding = self.match(decl, args, generic, pos)
        expand = decl.body is not None and (
            (decl.name in self.user and self.expand_fragments) or decl.name in self.lowered)
        if expand:
            return self.expand(decl, bound, binding, pos, ctx, targets)
        return self.emit(decl, bound, binding, pos, targets, ctx)

    def expand(self, decl, bound, binding, pos, ctx, targets):
        if ctx.depth >= MAX_DEPTH:
            raise _err(f"fragment '{decl.name}' recurses too deeply (more than {MAX_DEPTH} levels)", pos)
        env = {name: value for name, (value, _) in bound.items()}
        result_targets = {}
        if targets is not None:
            names = _target_names(targets)
            if len(decl.results) == 1:
                if isinstance(names, str):
                    result_targets[decl.results[0].name] = names
            elif isinstance(names, tuple):
                for r, n in zip(decl.results, names):
                    if isinstance(n, str):
                        result_targets[r.name] = n
        inner = Ctx(decl, binding, ctx.depth + 1, result_targets)
        for asg in decl.body:
            t = None
            if isinstance(asg.lhs, A.Ident) and asg.lhs.name in result_targets:
                t = A.Ident(result_targets[asg.lhs.name], pos=asg.lhs.pos)
            if isinstance(asg.rhs, A.Invocation):
                value = self.eval_invocation(asg.rhs, env, inner, targets=t)
            else:
                value = self.eval(asg.rhs, env, inner, targets=t)
            self.bind(asg.lhs, value, env, inner)
        results = []
        for r in decl.results:
            v = env[r.name]
            want = result_targets.get(r.name)
            if want is not None and (not isinstance(v, TensorRef) or v.name != want):
                v = self.materialize(v, want, pos, dtype=_result_dtype(r.type, binding))
            results.append(v)
        return results[0] if len(results) == 1 else tuple(results)

    def bind(self, lhs, value, env, ctx):
        if isinstance(lhs, A.Ident):
            if lhs.name in env and not ctx.graph:
                raise _err(f"identifier '{lhs.name}' is already declared", lhs.pos)
            env[lhs.name] = value
            return
        if isinstance(lhs, A.ArrayExpr):
            if not isinstance(value, list):
                raise _err(f"cannot assign a value of type '{value_type(value)}' to an array", lhs.pos)
            if len(value) != len(lhs.items):
                raise _err(f"cannot assign an array of {len(value)} items to an array of {len(lhs.items)} identifiers",
                           lhs.pos)
        elif isinstance(lhs, A.TupleExpr):
            if not isinstance(value, tuple) or len(value) != len(lhs.items):
                raise _err(f"cannot assign a value of type '{value_type(value)}' to a tuple of {len(lhs.items)} items",
                           lhs.pos)
        else:
            raise _err("invalid left-hand side", lhs.pos)
        for x, v in zip(lhs.items, value):
            self.bind(x, v, env, ctx)

    # ================================================================= emitting
    def fresh(self, base):
        k = self.counters.get(base, 0)
        while True:
            k += 1
            name = f"{base}{k}"
            if name not in self.used_names and name not in self.tensors:
                self.counters[base] = k
                self.used_names.add(name)
                return name

    def materialize(self, value, name, pos, dtype=None):
        """Give `value` the tensor name `name` (a `copy`, or a `constant` for a literal)."""
        if isinstance(value, TensorRef):
            decl = self.std["copy"]
            return self.emit(decl, {"x": (value, None)}, A.Prim(value.dtype), pos, A.Ident(name), Ctx())
        t = value_type(value, pos)
        if not isinstance(t, A.Prim) or t == A.STRING:
            raise _err(f"'{name}' must be a tensor, found a value of type '{t}'", pos)
        decl = self.std["constant"]
        return self.emit(decl, {"shape": ([], None), "value": ([value], None)}, t, pos, A.Ident(name), Ctx())

    def emit(self, decl, bound, binding, pos, targets, ctx):
        attribs, inputs = {}, {}
        for p in decl.params:
            value, _ = bound[p.name]
            if A.is_tensor_type(p.type):
                inputs[p.name] = _tensor_arg(value)
            else:
                attribs[p.name] = value
        names = _target_names(targets) if targets is not None else None
        if len(decl.results) == 1:
            names = (names,)
        elif names is None:
            names = (None,) * len(decl.results)
        outputs = {}
        values = []
        pending = []
        for r, want in zip(decl.results, names):
            dtype = _result_dtype(r.type, binding)
            if isinstance(r.type, A.ArrayT):
                if isinstance(want, list):
                    out_names = [n if isinstance(n, str) else self.fresh(decl.name) for n in want]
                    count = S.result_count(decl.name, attribs, inputs, self.tensors)
                    if count is not None and count != len(out_names):
                        raise _err(f"'{decl.name}' has {count} results here, {len(out_names)} identifiers are assigned",
                                   pos)
                else:
                    count = S.result_count(decl.name, attribs, inputs, self.tensors)
                    if count is None:
                        raise _err(f"cannot tell how many results '{decl.name}' has; unpack them into an array [a, b, ...]",
                                   pos)
                    out_names = [self.fresh(decl.name) for _ in range(count)]
                outputs[r.name] = out_names
                values.append([TensorRef(n, dtype) for n in out_names])
                pending += [(n, dtype) for n in out_names]
            else:
                n = want if isinstance(want, str) else self.fresh(decl.name)
                outputs[r.name] = n
                values.append(TensorRef(n, dtype))
                pending.append((n, dtype))
        for n, dtype in pending:
            if n in self.tensors:
                raise _err(f"identifier '{n}' is already declared", pos)
            self.used_names.add(n)
        op = Operation(decl.name, attribs, inputs, outputs, binding.name if binding is not None else None, pos)
        for name in op.input_names():
            if name not in self.tensors:
                raise _err(f"undeclared identifier '{name}'", pos)
        for n, dtype in pending:
            self.tensors[n] = TensorInfo(n, dtype)
        self.operations.append(op)
        if self.infer_shapes:
            try:
                S.infer_operation(op, self.tensors, decl.name in self.std)
            except NNEFError as err:
                raise err.at(pos)
        return values[0] if len(values) == 1 else tuple(values)


def _bad_literal(name, v, pos):
    raise _err(f"{name}(): '{v}' is not a valid {name} literal", pos)


def _binary_value(op, a, b, pos):
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise _err("division by zero in a compile-time expression", pos)
        if isinstance(a, int) and isinstance(b, int):
            q = abs(a) // abs(b)
            return q if (a >= 0) == (b >= 0) else -q
        return a / b
    if op == "^":
        if isinstance(a, int) and isinstance(b, int) and b < 0:
            raise _err("negative integer exponent in a compile-time expression", pos)
        return a ** b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    if op == ">=":
        return a >= b
    if op == "==":
        return _plain(a) == _plain(b)
    if op == "!=":
        return _plain(a) != _plain(b)
    if op == "in":
        return any(_plain(a) == _plain(x) for x in b)
    raise _err(f"unknown operator '{op}'", pos)


def _plain(v):
    if isinstance(v, TensorRef):
        return ("tensor", v.name)
    if isinstance(v, (list, tuple)):
        return tuple(_plain(i) for i in v)
    return v


def _tensor_arg(value):
    if isinstance(value, TensorRef):
        return value.name
    if isinstance(value, list):
        return [_tensor_arg(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_tensor_arg(v) for v in value)
    return value


def _result_dtype(t, binding):
    t = A.bind_generic(t, binding)
    while isinstance(t, A.ArrayT):
        t = t.item
    if isinstance(t, A.TensorT) and t.item is not None:
        return t.item.name
    return "scalar"


def _target_names(lhs):
    """The tensor names an assignment's left-hand side gives to an invocation's results."""
    if lhs is None:
        return None
    if isinstance(lhs, A.Ident):
        return lhs.name
    if isinstance(lhs, A.ArrayExpr):
        return [_target_names(i) if isinstance(i, A.Ident) else None for i in lhs.items]
    if isinstance(lhs, A.TupleExpr):
        return tuple(_target_names(i) for i in lhs.items)
    return None


def _lhs_idents(lhs):
    if isinstance(lhs, A.Ident):
        return [lhs]
    out = []
    for i in getattr(lhs, "items", []):
        out += _lhs_idents(i)
    return out


def _collect_names(body):
    names = set()
    for asg in body:
        for i in _lhs_idents(asg.lhs):
            names.add(i.name)
    return names
