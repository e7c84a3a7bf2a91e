"""Instantiating an operator definition for one invocation (seed §2.5-§2.9,
§2.13, Chapter 3): generic types, attribute values with defaults (deferred
ones after the inputs), input shapes bound in binding order (§2.6.1) with
affine deduction, pack lengths, @using interleaved with @assert, and the
output types and shapes. Everything comes from the SkriptND text."""
from __future__ import annotations

from ..nnef.errors import NNEFSemanticError, NNEFUnsupportedError
from .expr import CONCRETE, Evaluator, Tensor, Unknown, err, fmt_value, type_of

ABSTRACT = {"type": ("int", "real", "bool", "str"), "arith": ("int", "real", "bool"), "num": ("int", "real")}


class Ambiguous(Exception):
    pass


class Instance:
    """The evaluated definition: attrs (final values), env (every symbol), types
    (generic -> concrete) and outputs [(name, dtype, shape | [shapes] for packs)]."""

    def __init__(self, opdef, ev, attrs, inputs, outputs):
        self.op = opdef
        self.ev = ev
        self.env = ev.values
        self.types = ev.types
        self.attrs = attrs
        self.inputs = inputs
        self.outputs = outputs


def instantiate(opdef, attrs: dict, inputs: list, types=(), where=None) -> Instance:
    """attrs: name -> value as given; inputs: Tensor | [Tensor] | None per @input
    (missing trailing ones are null); types: explicit generic arguments."""
    where = where or opdef.pos
    name = opdef.qualified
    ev = Evaluator({}, {})
    params = opdef.block("input")
    if len(inputs) > len(params):
        raise err(f"'{name}' takes {len(params)} inputs, got {len(inputs)}", where)
    inputs = list(inputs) + [None] * (len(params) - len(inputs))
    attr_params = {p.name: p for p in opdef.block("attrib")}
    for key in attrs:
        if key not in attr_params:
            raise err(f"'{name}' has no attribute '{key}' (it has: {', '.join(attr_params) or 'none'})", where)

    bind_types(opdef, ev, attrs, inputs, types, where)

    # 1. attributes: given values, and defaults that need nothing from the inputs
    deferred = []
    for p in opdef.block("attrib"):
        if p.name in attrs:
            ev.values[p.name] = convert_attr(p, attrs[p.name], ev, where)
        elif p.default is None:
            if not p.type.optional:
                deferred.append(p)       # may still come from nothing: reported in step 3
            else:
                ev.values[p.name] = None
        else:
            try:
                ev.values[p.name] = convert_attr(p, ev.eval(p.default), ev, p.pos)
            except Unknown:
                deferred.append(p)

    # 2. inputs in binding order
    for p, x in zip(params, inputs):
        if x is None and not p.type.optional and p.default is None:
            raise err(f"'{name}': input '{p.name}' is required", where)
    pending = [(p, x) for p, x in zip(params, inputs) if not p.type.optional]
    optional = [(p, x) for p, x in zip(params, inputs) if p.type.optional]
    for group in (pending, optional):
        while group:
            progress = False
            for item in list(group):
                p, x = item
                try:
                    bind_input(p, x, ev, name, where)
                except Ambiguous:
                    continue
                group.remove(item)
                progress = True
            if not progress:
                raise err(f"'{name}': the shapes of inputs {[p.name for p, _ in group]} cannot be bound "
                          f"unambiguously (seed §2.6.1)", group[0][0].pos)

    # 3. deferred defaults
    for p in deferred:
        if p.default is None:
            raise err(f"'{name}': attribute '{p.name}' is required", where)
        try:
            value = ev.eval(p.default)
        except Unknown as u:
            raise err(f"'{name}': the default of attribute '{p.name}' needs '{u.name}', which is not known",
                      p.pos) from None
        if value is None and not p.type.optional:
            raise err(f"'{name}': attribute '{p.name}' must be given (its default evaluates to null)", where)
        ev.values[p.name] = convert_attr(p, value, ev, p.pos)

    # 4. pack lengths of attributes: deduce or check; uniform values become packs
    for p in opdef.block("attrib"):
        if p.type.pack is not None:
            ev.values[p.name] = fit_pack(p, ev.values.get(p.name), ev, name)

    # @using interleaved with @assert (seed §2.9)
    asserts = list(opdef.block("assert"))

    def check_ready():
        for a in list(asserts):
            try:
                check_assert(a, ev, name)
            except Unknown:
                continue
            asserts.remove(a)

    for u in opdef.block("using"):
        check_ready()
        bind_using(u, ev)
    check_ready()

    outputs = []
    for p in opdef.block("output"):
        outputs.append((p.name, resolve_type(p.type, ev), output_shape(p, ev, name)))
    for a in asserts:
        try:
            check_assert(a, ev, name)
        except Unknown as u:
            raise err(f"'{name}': assert uses '{u.name}', which is never defined", a.pos) from None
    return Instance(opdef, ev, {p.name: ev.values.get(p.name) for p in opdef.block("attrib")}, inputs, outputs)


# -- generics ----------------------------------------------------------------
def bind_types(opdef, ev, attrs, inputs, explicit, where):
    dtypes = opdef.block("dtype")
    if len(explicit) > len(dtypes):
        raise err(f"'{opdef.qualified}' takes {len(dtypes)} generic types, got {len(explicit)}", where)
    for d, t in zip(dtypes, explicit):
        set_type(ev, d, t.name if hasattr(t, "name") else t, where)
    names = {d.name: d for d in dtypes}
    for p, x in zip(opdef.block("input"), inputs):
        if p.type.name in names and x is not None and p.type.name not in ev.types:
            t = x[0].dtype if isinstance(x, list) and x else (x.dtype if isinstance(x, Tensor) else type_of(x))
            if t:
                set_type(ev, names[p.type.name], t, where)
    for p in opdef.block("attrib"):
        if p.type.name in names and p.name in attrs and p.type.name not in ev.types:
            t = type_of(attrs[p.name])
            if t:
                set_type(ev, names[p.type.name], t, where)
    for d in dtypes:
        if d.name not in ev.types:
            if d.default is None:
                raise err(f"'{opdef.qualified}': generic type '{d.name}' cannot be deduced; give it as "
                          f"<...>", where)
            set_type(ev, d, d.default, where)


def set_type(ev, d, t, where):
    t = ev.types.get(t, t)
    if t not in ABSTRACT.get(d.base, CONCRETE):
        raise err(f"generic type '{d.name}: {d.base}' cannot be '{t}'", where)
    ev.types[d.name] = t


def resolve_type(ts, ev):
    if ts.name in CONCRETE:
        return ts.name
    if ts.name in ev.types:
        return ev.types[ts.name]
    raise err(f"unknown type '{ts.name}'", ts.pos)


# -- attributes ------------------------------------------------------------------
def convert_attr(p, value, ev, where):
    if value is None:
        if not p.type.optional:
            raise err(f"attribute '{p.name}' must not be null", where)
        return None
    t = resolve_type(p.type, ev)

    def one(v):
        if v is None:
            return None
        vt = type_of(v)
        if vt == t:
            return v
        if t == "real" and vt == "int":
            return float(v)
        raise err(f"attribute '{p.name}' must be {t}{'..' if p.type.pack else ''}, got {fmt_value(v)}", where)
    if isinstance(value, list):
        if p.type.pack is None:
            raise err(f"attribute '{p.name}' is not a pack, got {fmt_value(value)}", where)
        return [one(v) for v in value]
    return one(value)


def fit_pack(p, value, ev, opname):
    count = p.type.pack.count
    if value is None:
        return None
    n = None
    if count is not None:
        try:
            n = ev.eval(count)
        except Unknown:
            if not isinstance(value, list):
                raise err(f"'{opname}': the length of attribute '{p.name}' is not known, so a single value "
                          f"cannot stand for the pack", p.pos) from None
            bind_value(count, len(value), ev, f"the length of attribute '{p.name}'", p.pos)
            return value
    if not isinstance(value, list):
        if n is None:
            raise err(f"'{opname}': the length of attribute '{p.name}' is not known, so a single value cannot "
                      f"stand for the pack", p.pos)
        return [value] * int(n)
    if n is not None and len(value) != n:
        raise err(f"'{opname}': attribute '{p.name}' must have {n} items, got {len(value)}", p.pos)
    return value


# -- shapes ---------------------------------------------------------------------------
def unknowns(e, ev):
    return {x for x in e.identifiers() if x not in ev.values}


def bind_value(e, value, ev, what, where):
    """Bind `value` to expression `e`: check it when `e` is known, set it when `e`
    is an identifier, solve it when `e` is affine in one unknown (seed §2.6)."""
    try:
        expected = ev.eval(e)
    except Unknown:
        pass
    else:
        if expected is not None and expected != value:
            raise err(f"{what} must be {fmt_value(expected)}, got {fmt_value(value)}", where)
        return
    free = unknowns(e, ev)
    if e.kind == "id":
        ev.values[e.v] = value
        return
    if len(free) != 1 or isinstance(value, list):
        raise err(f"{what}: cannot deduce {sorted(free)} from {fmt_value(value)} (not an affine expression of "
                  f"one unknown)", where)
    x = free.pop()
    try:
        f0 = _with(ev, x, 0, e)
        f1 = _with(ev, x, 1, e)
    except Unknown:
        raise err(f"{what}: cannot deduce '{x}'", where) from None
    a = f1 - f0
    if a == 0 or (value - f0) % a:
        raise err(f"{what}: no integer '{x}' gives {fmt_value(value)}", where)
    sol = (value - f0) // a
    if _with(ev, x, sol, e) != value:
        raise err(f"{what}: '{x}' cannot be deduced from {fmt_value(value)} (not affine)", where)
    ev.values[x] = sol


def _with(ev, name, v, e):
    ev.values[name] = v
    try:
        return ev.eval(e)
    finally:
        del ev.values[name]


def split_lengths(items, dims, ev, what, where):
    """The number of dimensions each shape item takes; raises Ambiguous when more
    than one packed item has an unknown length."""
    lens, flex = [], []
    for k, it in enumerate(items):
        if it.pack is None or it.distinct and it.pack is None:
            lens.append(1)
            continue
        n = None
        if it.pack.count is not None:
            try:
                n = ev.eval(it.pack.count)
                if isinstance(n, bool):
                    n = int(n)
            except Unknown:
                n = None
        elif it.expr is not None and it.expr.kind == "id" and isinstance(ev.values.get(it.expr.v), list):
            n = len(ev.values[it.expr.v])
        if n is None:
            flex.append(k)
        lens.append(n)
    if len(flex) > 1:
        raise Ambiguous()
    fixed = sum(n for n in lens if n is not None)
    if flex:
        rest = len(dims) - fixed
        if rest < 0:
            raise err(f"{what} must have rank at least {fixed}, got shape {list(dims)}", where)
        lens[flex[0]] = rest
    elif fixed != len(dims):
        raise err(f"{what} must have rank {fixed}, got shape {list(dims)}", where)
    return lens


def bind_shape(ts, dims, ev, what, where, distinct=None):
    """Bind one tensor's shape to the items of its declared type."""
    items = ts.shape
    if ts.rank is not None:
        bind_value(ts.rank, len(dims), ev, f"the rank of {what}", where)
    if items is None:
        return
    lens = split_lengths(items, dims, ev, what, where)
    at = 0
    for it, n in zip(items, lens):
        part = list(dims[at:at + n])
        at += n
        if it.expr is None:
            continue   # '~': any extent
        if it.distinct:
            distinct.setdefault(it.expr.v if it.expr.kind == "id" else id(it), (it, []))[1].append(part[0])
            continue
        if it.pack is not None:
            if it.pack.count is not None:
                bind_value(it.pack.count, n, ev, f"the length of a packed extent of {what}", where)
            try:
                v = ev.eval(it.expr)
            except Unknown:
                v = None
            if v is not None and not isinstance(v, list):
                v = [v] * n          # 'x ..(n)': one value repeated
                if v != part:
                    raise err(f"extents of {what} must be {fmt_value(v)}, got {fmt_value(part)}", where)
            else:
                bind_value(it.expr, part, ev, f"extents of {what}", where)
        else:
            bind_value(it.expr, part[0], ev, f"an extent of {what}", where)
        if it.bound is not None:
            raise NNEFUnsupportedError("dynamic shape", f"{what} has a dynamic extent with an upper bound "
                                       f"('|'), which a static WebNN graph cannot express").at(it.pos)


def bind_input(p, x, ev, opname, where):
    what = f"'{opname}' input '{p.name}'"
    ts = p.type
    if x is None:
        # a null optional input: its unbound symbols become null
        for it in ts.shape or []:
            for e in (it.expr, it.pack.count if it.pack else None):
                if e is not None and e.kind == "id" and e.v not in ev.values:
                    ev.values[e.v] = None
        ev.values[p.name] = None
        return
    if ts.pack is not None:
        if not isinstance(x, list):
            raise err(f"{what} is a pack of tensors: pass a list '[a, b, ...]'", where)
        if not x:
            raise err(f"{what} must not be an empty pack", where)
        # shared items: decide the split on the first tensor (raises Ambiguous without side effects)
        if ts.shape is not None:
            split_lengths(ts.shape, _tensor(x[0], what, where).shape, ev, what, where) if ts.rank is None else None
        if ts.pack.count is not None:
            bind_value(ts.pack.count, len(x), ev, f"the number of tensors in {what}", where)
        distinct = {}
        for t in x:
            t = _tensor(t, what, where)
            check_dtype(p, t, ev, what, where)
            bind_shape(ts, t.shape, ev, what, where, distinct)
        for key, (it, values) in distinct.items():
            bind_value(it.expr, values, ev, f"the per-tensor extents of {what}", where)
        ev.values[p.name] = list(x)
        return
    t = _tensor(x, what, where)
    check_dtype(p, t, ev, what, where)
    if ts.shape is not None and ts.rank is None:
        split_lengths(ts.shape, t.shape, ev, what, where)     # Ambiguous before any binding
    elif ts.rank is not None and ts.shape is not None:
        try:
            ev.eval(ts.rank)
        except Unknown:
            if ts.rank.kind != "id":
                raise Ambiguous() from None
    bind_shape(ts, t.shape, ev, what, where)
    ev.values[p.name] = t


def _tensor(x, what, where):
    if isinstance(x, Tensor):
        return x
    raise err(f"{what} must be a tensor, got {fmt_value(x)}", where)


def check_dtype(p, t, ev, what, where):
    want = resolve_type(p.type, ev)
    if t.dtype != want:
        raise err(f"{what} must be of type {want}, got {t.dtype}", where)


def output_shape(p, ev, opname):
    """The evaluated shape of a declared output (a list of shapes for a tensor pack)."""
    ts = p.type
    if ts.shape is None:
        raise err(f"'{opname}': output '{p.name}' has no shape", p.pos)
    n = None
    if ts.pack is not None:
        n = ev.eval(ts.pack.count) if ts.pack.count is not None else None
        if n is None:
            raise err(f"'{opname}': the number of tensors in output '{p.name}' is not known", p.pos)
    def build(k):
        dims = []
        for it in ts.shape:
            if it.expr is None or it.bound is not None:
                raise NNEFUnsupportedError(opname, f"output '{p.name}' has a dynamic shape ('~' or '|'), which a "
                                                   f"static WebNN graph cannot express").at(it.pos)
            v = ev.eval(it.expr)
            if it.distinct and isinstance(v, list):
                v = v[k]
            if v is None:
                continue
            if it.pack is not None:
                if not isinstance(v, list):
                    c = ev.eval(it.pack.count) if it.pack.count is not None else None
                    if c is None:
                        raise err(f"'{opname}': '..' on a single extent needs a count", it.pos)
                    v = [v] * int(c)
                dims.extend(v)
            else:
                if isinstance(v, list):
                    raise err(f"'{opname}': a packed extent needs '..' in output '{p.name}'", it.pos)
                dims.append(v)
        for d in dims:
            if d is None or isinstance(d, bool) or not isinstance(d, int) or d < 0:
                raise err(f"'{opname}': output '{p.name}' gets an invalid shape {fmt_value(dims)}", p.pos)
        return dims
    return [build(k) for k in range(n)] if n is not None else build(0)


# -- @using and @assert ------------------------------------------------------------------
def bind_using(u, ev):
    value = ev.eval(u.rhs)
    assign_lvalue(u.lhs, value, ev, u.pos)


def assign_lvalue(lhs, value, ev, where):
    from .ast import LList
    if isinstance(lhs, LList):
        if value is None:
            for it in lhs.items:
                if it.name:
                    ev.values[it.name] = None
            return
        if not isinstance(value, list):
            raise err(f"cannot destructure {fmt_value(value)}", where)
        packed = [k for k, it in enumerate(lhs.items) if it.pack is not None and it.zip is None]
        zips = [k for k, it in enumerate(lhs.items) if it.zip is not None]
        if len(lhs.items) == 1 and zips:
            items = lhs.items[0].zip
            for j, it in enumerate(items):
                ev.values[it.name] = value[j::len(items)]
            return
        if len(packed) > 1:
            raise err("at most one packed item on the left side", where)
        rest = len(value) - (len(lhs.items) - len(packed))
        at = 0
        for k, it in enumerate(lhs.items):
            n = rest if k in packed else 1
            part = value[at:at + n]
            at += n
            if it.name is None:
                continue
            if k in packed:
                if it.pack.count is not None:
                    bind_value(it.pack.count, len(part), ev, f"the length of '{it.name}'", where)
                ev.values[it.name] = part
            else:
                ev.values[it.name] = part[0] if part else None
        return
    if lhs.pack is not None and lhs.pack.count is not None and isinstance(value, list):
        bind_value(lhs.pack.count, len(value), ev, f"the length of '{lhs.name}'", where)
    ev.values[lhs.name] = value


def check_assert(a, ev, opname):
    cond = ev.eval(a.cond)
    if cond is None:
        return
    ok = all(c for c in cond if c is not None) if isinstance(cond, list) else bool(cond)
    if ok:
        return
    msg = ev.eval(a.message) if a.message is not None else f"assertion '{_src(a)}' failed"
    args = []
    for label, e in a.args:
        args.append(f"{label} = {fmt_value(ev.eval(e))}")
    text = f"'{opname}': {msg}" + (f" ({', '.join(args)})" if args else "")
    raise NNEFSemanticError(text).at(a.pos)


def _src(a):
    return a.cond.source()
