"""@lower bodies of custom operators -> WebNN, by index analysis (seed §2.12).

A lowering `y[i, j] op= f(x[i, l], z[l, j], ...), i < m, l < k, j < n` is
expressible when every tensor index is a plain loop index (or a packed one,
`i..`), each index appears at most once per access, and the left-hand side
covers the whole output. Then each access is a transpose + reshape of its
tensor into the loop-index space, f is built from WebNN element-wise ops
(broadcasting does the loops), indices only on the right-hand side are reduced
(`+=` reduceSum, `*=` reduceProduct, `<=` reduceMin, `>=` reduceMax, `&=`/`|=`
on bools), and indices only on the left are broadcast: element-wise maps,
contractions such as matmul, reductions. Loop indices used as values become
iota constants. Bounded (`|i|`) or affine tensor indices, conditions (`| c`),
`:=` updates and `unroll` are a NNEFUnsupportedError naming the operator."""
from __future__ import annotations

import numpy as np

from ..nnef.errors import NNEFUnsupportedError
from .dtypes import NUMPY_TYPES, SKND_TYPES, WEBNN_TYPES
from .expr import Evaluator, Tensor, Unknown, err

REDUCE = {"+=": "reduceSum", "*=": "reduceProduct", "<=": "reduceMin", ">=": "reduceMax", "&=": "reduceMin",
          "|=": "reduceMax"}
COMBINE = {"+=": "add", "*=": "mul", "<=": "min", ">=": "max", "&=": "min", "|=": "max"}
BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow", "<<": "min", ">>": "max", "<": "lesser",
          ">": "greater", "<=": "lesserOrEqual", ">=": "greaterOrEqual", "==": "equal", "!=": "notEqual",
          "&&": "logicalAnd", "||": "logicalOr", "^": "logicalXor", "is": "equal"}
BUILTIN = {"abs": "abs", "sign": "sign", "sqrt": "sqrt", "exp": "exp", "log": "log", "sin": "sin", "cos": "cos",
           "tan": "tan", "tanh": "tanh", "ceil": "ceil", "floor": "floor", "erf": "erf"}


class _Unsupported(Exception):
    pass


def lower(composer, inst, pos):
    try:
        return Lowerer(composer, inst).run()
    except _Unsupported as e:
        raise NNEFUnsupportedError(inst.op.qualified, f"its @lower body: {e} (lowered to WebNN are element-wise "
                                   f"maps, contractions and reductions over plain loop indices)").at(pos) from None


class Lowerer:
    def __init__(self, composer, inst):
        self.c = composer
        self.inst = inst
        self.ev = Evaluator(dict(inst.env), dict(inst.types))
        self.out = {}

    def run(self):
        for stmt in self.inst.op.block("lower"):
            self.statement(stmt)
        results = []
        for name, dtype, shape in self.inst.outputs:
            y = self.out.get(name)
            if y is None:
                raise err(f"'{self.inst.op.qualified}': @lower never computes output '{name}'", self.inst.op.pos)
            if list(y.shape) != list(shape):
                y = self.c.op("expand", y, list(shape))
            if y.kind in ("input", "constant"):
                y = self.c.op("identity", y)
            results.append(Tensor(dtype, shape, y, name))
        return results

    # -- one statement -----------------------------------------------------------------
    def statement(self, s):
        if s.unroll is not None:
            raise _Unsupported("an unrolled lowering")
        if s.cond is not None:
            raise _Unsupported("a conditional assignment ('| condition')")
        if s.op == ":=":
            raise _Unsupported("an update (':=')")
        self.space = []        # [(index name, item number or None, extent)]
        self.where = {}        # index name -> [positions]
        for name, bound in s.bounds:
            b = self.ev.eval(bound)
            if isinstance(b, list):
                self.where[name] = list(range(len(self.space), len(self.space) + len(b)))
                self.space += [(name, k, e) for k, e in enumerate(b)]
            else:
                self.where[name] = [len(self.space)]
                self.space.append((name, None, b))
        self.locals = {}
        for name, e in s.locals:
            self.locals[name] = self.value(e)
        target = s.target
        if target.kind != "access" or target.a[0].kind != "id":
            raise _Unsupported("a left-hand side that is not 'output[indices]'")
        name = target.a[0].v
        declared = {n: (d, sh) for n, d, sh in self.inst.outputs}
        if name not in declared:
            raise err(f"'{name}' is not an output of '{self.inst.op.qualified}'", s.pos)
        dtype, shape = declared[name]
        if shape and isinstance(shape[0], list):
            raise _Unsupported("an output pack")
        lhs = self.positions(target, shape)
        for p, extent in zip(lhs, shape):
            if self.space[p][2] != extent:
                raise _Unsupported(f"a partial write of '{name}' (index extent {self.space[p][2]} for a dimension "
                                   f"of {extent})")
        rhs = self.value(s.rhs)
        if rhs is None:
            raise err(f"the right-hand side for '{name}' is null; resolve optional values with '??'", s.pos)
        rhs = self.operand(rhs, dtype)
        if rhs.dtype != WEBNN_TYPES[dtype]:
            rhs = self.c.op("cast", rhs, WEBNN_TYPES[dtype])
        full = [e for _, _, e in self.space]
        reduced = [p for p in range(len(self.space)) if p not in lhs]
        if s.op == "=":
            if reduced:
                raise err(f"indices {sorted({self.space[p][0] for p in reduced})} appear only on the right of "
                          f"'=': use an accumulating operator such as '+='", s.pos)
        else:
            if list(rhs.shape) != full:
                rhs = self.c.op("expand", rhs, full)
            if reduced:
                x = rhs
                logical = s.op in ("&=", "|=")
                if logical:
                    x = self.c.op("cast", x, "float32")
                x = self.c.op(REDUCE[s.op], x, axes=reduced, keepDimensions=True)
                rhs = self.c.op("cast", x, rhs.dtype) if logical else x
        # to the output's dimension order
        keep = [p for p in range(len(self.space)) if p in lhs]
        if list(rhs.shape) != [e if p in lhs else 1 for p, e in enumerate(full)]:
            rhs = self.c.op("expand", rhs, [e if p in lhs else 1 for p, e in enumerate(full)])
        rhs = self.c.op("reshape", rhs, [full[p] for p in keep]) if list(rhs.shape) != [full[p] for p in keep] \
            else rhs
        order = [keep.index(p) for p in lhs]
        if order != sorted(order):
            rhs = self.c.op("transpose", rhs, permutation=order)
        current = self.out.get(name)
        if s.op == "=":
            if current is not None:
                raise err(f"'{name}' is initialised twice", s.pos)
            self.out[name] = rhs
        elif current is None:
            if s.op in ("<=", ">="):
                raise err(f"'{s.op}' needs an initialising '=' for '{name}' first", s.pos)
            self.out[name] = rhs
        else:
            if list(current.shape) != list(shape):
                current = self.c.op("expand", current, list(shape))
            logical = s.op in ("&=", "|=")
            if logical:
                a, b = self.c.op("cast", current, "float32"), self.c.op("cast", rhs, "float32")
                self.out[name] = self.c.op("cast", self.c.op(COMBINE[s.op], a, b), current.dtype)
            else:
                self.out[name] = self.c.op(COMBINE[s.op], current, rhs)

    def positions(self, access, shape):
        """Index-space positions of each dimension of a tensor access."""
        out = []
        for item in access.a[1]:
            packed = item.kind == "expand"
            e = item.a[0] if packed else item
            if e.kind != "id" or e.v not in self.where:
                raise _Unsupported(f"the tensor index '{_show(e)}' (not a plain loop index)")
            ps = self.where[e.v]
            if ps and packed != (self.space[ps[0]][1] is not None):
                raise _Unsupported(f"index '{e.v}' used {'with' if packed else 'without'} '..' against its bound")
            out.extend(ps)
        if len(out) != len(shape):
            raise _Unsupported(f"an access with {len(out)} indices for a rank-{len(shape)} tensor")
        if len(set(out)) != len(out):
            raise _Unsupported("the same index twice in one access (a diagonal)")
        return out

    # -- values: Python scalars or WebNN operands broadcastable to the index space ----------
    def operand(self, v, dtype_hint="real"):
        if isinstance(v, (bool, int, float)):
            kind = "bool" if isinstance(v, bool) else dtype_hint if dtype_hint in NUMPY_TYPES else "real"
            return self.c.const(np.array(v, dtype=NUMPY_TYPES[kind]), kind)
        return v

    def value(self, e):
        try:
            return self._value(e)
        except Unknown as u:
            raise _Unsupported(f"'{u.name}' in an index computation ({_show(e)})") from None

    def _value(self, e):
        k = e.kind
        if k == "access":
            return self.access(e)
        if k == "id":
            if e.v in self.locals:
                return self.locals[e.v]
            if e.v in self.where:
                return self.iota(e.v)
            v = self.ev.eval(e)
            if isinstance(v, Tensor):
                if v.rank == 0:
                    return v.operand
                raise _Unsupported(f"tensor '{e.v}' used without indices")
            return v
        if k in ("lit",):
            return e.v
        if k == "unary":
            x = self.value(e.a[0])
            if x is None:
                return None
            if not _is_operand(x):
                return {"-": lambda a: -a, "+": lambda a: a, "!": lambda a: not a}[e.v](x)
            if e.v == "-":
                return self.c.op("neg", x)
            if e.v == "!":
                return self.c.op("logicalNot", x)
            return x
        if k == "binary":
            a, b = self.value(e.a[0]), self.value(e.a[1])
            if a is None or b is None:
                return None
            if not _is_operand(a) and not _is_operand(b):
                return self.ev.eval(e)
            if e.v not in BINARY:
                raise _Unsupported(f"operator '{e.v}' on tensor values")
            a, b = self.pair(a, b)
            if e.v in ("&&", "||", "^"):
                return self.c.op(BINARY[e.v], a, b)
            return self.c.op(BINARY[e.v], a, b)
        if k == "select":
            c = self.value(e.a[0])
            if c is None:
                return None
            if not _is_operand(c):
                branch = e.a[1] if c else e.a[2]
                return self.value(branch) if branch is not None else None
            if e.a[2] is None:
                raise _Unsupported("'c ? a' without ':' on tensor values")
            t, f = self.value(e.a[1]), self.value(e.a[2])
            if t is None or f is None:
                return None
            t, f = self.pair(t, f)
            return self.c.op("where", c, t, f)
        if k == "coalesce":
            a = self.value(e.a[0])
            return a if a is not None else self.value(e.a[1])
        if k == "nulltest":
            try:
                return self.value(e.a[0]) is not None
            except Unknown:
                return False
        if k == "builtin":
            x = self.value(e.a[0])
            if x is None or not _is_operand(x):
                return self.ev.eval(e) if x is not None else None
            if e.v == "round":
                return self.c.op("mul", self.c.op("sign", x),
                                 self.c.op("floor", self.c.op("add", self.c.op("abs", x), self.scalar(0.5, x))))
            if e.v == "frac":
                return self.c.op("sub", x, self.c.op("floor", x))
            if e.v not in BUILTIN:
                raise _Unsupported(f"the built-in `{e.v}` on tensor values")
            return self.c.op(BUILTIN[e.v], x)
        if k == "call":
            if not e.a:
                return self.ev.eval(e)
            x = self.value(e.a[0])
            if x is None or not _is_operand(x):
                return self.ev.eval(e) if x is not None else None
            t = self.ev.concrete_type(e.v, e.pos)
            return self.c.op("cast", x, WEBNN_TYPES[t]) if x.dtype != WEBNN_TYPES[t] else x
        if k in ("fmt",):
            raise _Unsupported("a string value")
        return self.ev.eval(e)

    def scalar(self, v, like):
        kind = SKND_TYPES.get(like.dtype, "real")
        return self.c.const(np.array(v, dtype=NUMPY_TYPES[kind]), kind)

    def pair(self, a, b):
        if not _is_operand(a):
            a = self.scalar(a, b)
        if not _is_operand(b):
            b = self.scalar(b, a)
        if a.dtype != b.dtype:
            # mixed int/real as in 'real(i) * x': compute in float
            if "float32" in (a.dtype, b.dtype):
                a = a if a.dtype == "float32" else self.c.op("cast", a, "float32")
                b = b if b.dtype == "float32" else self.c.op("cast", b, "float32")
        return a, b

    def iota(self, name):
        ps = self.where[name]
        if len(ps) != 1:
            raise _Unsupported(f"the packed index '{name}' used as a value")
        p = ps[0]
        shape = [1] * len(self.space)
        shape[p] = self.space[p][2]
        return self.c.const(np.arange(self.space[p][2], dtype=np.int32).reshape(shape), "int")

    def access(self, e):
        base = e.a[0]
        if base.kind != "id":
            raise _Unsupported("an access of a tensor pack item")
        t = self.ev.values.get(base.v)
        if t is None and base.v in self.ev.values:
            return None   # a null optional input: null propagates
        if not isinstance(t, Tensor):
            raise _Unsupported(f"'{base.v}' accessed as a tensor")
        ps = self.positions(e, t.shape)
        for p, extent in zip(ps, t.shape):
            if self.space[p][2] != extent:
                raise _Unsupported(f"index extent {self.space[p][2]} against dimension {extent} of '{base.v}'")
        x = t.operand
        order = sorted(range(len(ps)), key=lambda k: ps[k])
        if order != list(range(len(ps))):
            x = self.c.op("transpose", x, permutation=order)
        shape = [1] * len(self.space)
        for p, extent in zip(ps, t.shape):
            shape[p] = extent
        return self.c.op("reshape", x, shape) if list(x.shape) != shape else x


def _is_operand(v):
    return hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, Tensor)


def _show(e):
    return e.source()
