"""Graph composition (seed Chapter 3) onto the public WebNN graph builder.

Each invocation is instantiated from its SkriptND definition (types,
attributes, shapes, asserts: instance.py). A standard-library operator with a
WebNN counterpart becomes that builder call (intrinsics.py) and its result is
checked against the shape the SkriptND text computes; any other operator is
inlined from its @compose body (straight-line; `if` with compile-time
conditions; loops with static trip counts unrolled), or lowered from its
@lower body where the index analysis finds an element-wise or
contraction/reduction form (lowering.py). Anything else is a typed
NNEFUnsupportedError naming the operator.

With `builder=None` only shapes are composed (no WebNN graph, no weights)."""
from __future__ import annotations

import numpy as np

from ..nnef.errors import NNEFError, NNEFSemanticError, NNEFUnsupportedError
from .ast import Block, If, Invocation, LItem, LList, Loop, Param, Value
from . import intrinsics
from .dtypes import NUMPY_TYPES, WEBNN_TYPES
from .expr import Evaluator, Tensor, Unknown, err, fmt_value, type_of
from .instance import (DefaultInput, Upto, assign_lvalue, convert_attr, fit_pack, has_dynamic, instantiate,
                       output_shape, resolve_type)



class Context:
    """Where a statement is composed: its module (for unqualified names) and the
    label scope (for variable file names)."""

    def __init__(self, module, scope):
        self.module = module
        self.scope = scope


class Composer:
    def __init__(self, modules, builder=None, variables=None, lowered=(), quantization=False):
        self.modules = modules              # a ModuleSet
        self.quantization = quantization    # apply the graph's @quantize entries as fake quantization
        self.quantize = {}                  # tensor name -> Quantization, for the graph being composed
        self.b = builder
        self.variables = variables          # callable(scope list, name, dtype, shape) -> ndarray, or None
        self.lowered = set(lowered)         # standard operators to decompose instead of mapping to WebNN
        self.operations = []                # (qualified op name, label scope) per composed intrinsic

    # -- builder helpers -----------------------------------------------------
    def op(self, name, *args, **options):
        try:
            return self.b.op(name, *args, **options)
        except NNEFError:
            raise
        except Exception as e:  # a WebNN validation error: the mapping produced an invalid call
            raise NNEFSemanticError(f"WebNN {name}: {e}") from None

    def const(self, array, dtype):
        array = np.asarray(array, dtype=NUMPY_TYPES[dtype])
        if self.b is None:
            return None
        if array.ndim == 0:
            return self.b.constant({"dataType": WEBNN_TYPES[dtype], "shape": []}, array.reshape(()))
        return self.b.constant({"dataType": WEBNN_TYPES[dtype], "shape": list(array.shape)}, array)

    def tensor_const(self, array, dtype, name=None):
        array = np.asarray(array, dtype=NUMPY_TYPES[dtype])
        return Tensor(dtype, array.shape, self.const(array, dtype), name, value=array)

    # -- graphs --------------------------------------------------------------------
    def compose_graph(self, gdef, attrs=None, types=None):
        """-> (inputs {name: Tensor}, outputs {name: Tensor})"""
        attrs = dict(attrs or {})
        ev = Evaluator({}, {})
        for d in gdef.block("dtype"):
            t = (types or {}).get(d.name, d.default)
            if t is None:
                raise err(f"graph '{gdef.name}': generic type '{d.name}' needs a value", d.pos)
            ev.types[d.name] = t
        known = {p.name for p in gdef.block("attrib")}
        for key in attrs:
            if key not in known:
                raise err(f"graph '{gdef.name}' has no attribute '{key}' (it has: {', '.join(sorted(known))})",
                          gdef.pos)
        for p in gdef.block("attrib"):
            if p.name in attrs:
                value = attrs[p.name]
            elif p.default is not None:
                try:
                    value = ev.eval(p.default)
                except Unknown as u:
                    raise err(f"unknown identifier '{u.name}' in the default of '{p.name}'", u.pos or p.pos) from None
            elif p.type.optional:
                value = None
            else:
                raise err(f"graph '{gdef.name}': attribute '{p.name}' has no default; give its value", p.pos)
            ev.values[p.name] = convert_attr(p, value, ev, p.pos)
            if p.type.pack is not None:
                ev.values[p.name] = fit_pack(p, ev.values[p.name], ev, gdef.name)
        ctx = Context(gdef.module, [gdef.name])
        inputs = {}
        for p in gdef.block("input"):
            if p.type.pack is not None:
                raise NNEFUnsupportedError(gdef.name, f"graph input '{p.name}' is a pack of tensors").at(p.pos)
            dtype = resolve_type(p.type, ev)
            try:
                shape = output_shape(p, ev, gdef.name)
            except Unknown as u:
                raise err(f"graph input '{p.name}': extent '{u.name}' is not known (graph input shapes must be "
                          f"compile-time expressions of the graph's attributes)", p.pos) from None
            operand = self.b.input(p.name, {"dataType": WEBNN_TYPES[dtype], "shape": shape}) if self.b else None
            t = Tensor(dtype, shape, operand, p.name)
            ev.values[p.name] = inputs[p.name] = t
        if gdef.block("update"):
            raise NNEFUnsupportedError(gdef.name, "@update (variable updates) is not executed by this "
                                       "importer: variables are loaded as constants").at(gdef.pos)
        self.declare_tensors(gdef, ev, ctx)
        if self.quantization:
            self.quantize = {q.tensor: q for q in gdef.block("quantize")}
            for name in list(self.quantize):
                if "." in name:
                    raise NNEFUnsupportedError("@quantize", f"scoped tensor name '{name}' (only the graph's own "
                                               f"tensors are quantized)").at(self.quantize[name].pos)
                if isinstance(ev.values.get(name), Tensor):      # inputs, constants, variables
                    ev.values[name] = self.fake_quantize(name, ev, ctx)
                elif isinstance(ev.values.get(name), list):
                    raise self.quantize_pack(name)
        self.run(gdef.block("compose"), ev, ctx)
        self.quantize = {}
        outputs = {}
        for p in gdef.block("output"):
            t = ev.values.get(p.name)
            if p.type.pack is not None or isinstance(t, list):
                raise NNEFUnsupportedError(gdef.name, f"graph output '{p.name}' is a pack of tensors (the outputs "
                                           f"of a WebNN graph are single named tensors: give each item its own "
                                           f"output)").at(p.pos)
            if not isinstance(t, Tensor):
                raise err(f"graph '{gdef.name}' never assigns output '{p.name}'", p.pos)
            self.check_declared(p, t, ev, gdef.name)
            outputs[p.name] = t
        return inputs, outputs

    def check_declared(self, p, t, ev, opname):
        dtype = resolve_type(p.type, ev)
        if t.dtype != dtype:
            raise err(f"'{opname}': output '{p.name}' is declared {dtype} but composed as {t.dtype}", p.pos)
        if p.type.shape is None or all(it.expr is None for it in p.type.shape):
            return
        try:
            shape = output_shape(p, ev, opname)
        except Unknown:
            return
        if list(shape) != list(t.shape):
            raise err(f"'{opname}': output '{p.name}' is declared with shape {shape} but composed with shape "
                      f"{list(t.shape)}", p.pos)

    def declare_tensors(self, opdef, ev, ctx):
        for p in opdef.block("constant"):
            ev.values[p.name] = self.constant(p, ev, opdef.qualified)
        for p in opdef.block("variable"):
            if p.type.pack is not None:
                raise NNEFUnsupportedError(opdef.qualified, f"variable packs ('{p.name}': the draft names no data "
                                           f"file for the items of a pack)").at(p.pos)
            dtype = resolve_type(p.type, ev)
            shape = output_shape(p, ev, opdef.qualified)
            if self.b is None:
                ev.values[p.name] = Tensor(dtype, shape, None, p.name)
                continue
            if self.variables is None:
                raise err(f"variable '{p.name}' needs data, but no variables were given", p.pos)
            data = self.variables(ctx.scope, p.name, dtype, shape, p.pos)
            ev.values[p.name] = self.tensor_const(data, dtype, ".".join(ctx.scope + [p.name]))

    def constant(self, p, ev, opname):
        dtype = resolve_type(p.type, ev)
        if p.default is None:
            raise err(f"constant '{p.name}' has no value", p.pos)
        if p.type.pack is not None:
            return self.constant_pack(p, dtype, ev, opname)
        shape = output_shape(p, ev, opname)
        size = int(np.prod(shape)) if shape else 1
        if p.bounds:
            names = [n for n, _ in p.bounds]
            bounds = [ev.eval(b) for _, b in p.bounds]
            values = np.empty(bounds, dtype=object)
            local = Evaluator(dict(ev.values), ev.types)
            for idx in np.ndindex(*bounds):
                local.values.update(zip(names, map(int, idx)))
                values[idx] = local.eval(p.default)
            array = values.astype(NUMPY_TYPES[dtype]).reshape(shape)
        else:
            v = ev.eval(p.default)
            if isinstance(v, list):
                if len(v) != size:
                    raise err(f"constant '{p.name}' has {len(v)} values for {size} elements", p.pos)
                array = np.array([_constant_item(p, x, dtype, p.default.pos) for x in v],
                                 dtype=NUMPY_TYPES[dtype]).reshape(shape)
            else:
                array = np.full(shape, _constant_item(p, v, dtype, p.default.pos), dtype=NUMPY_TYPES[dtype])
        return self.tensor_const(array, dtype, p.name)

    def constant_pack(self, p, dtype, ev, opname):
        """`ws: real[m, n]..(k) = [v0, v1, ...];` (seed §2.7): a pack of k constants, item i
        uniform with value vi; the length must be explicit and the list must have k items."""
        if p.type.pack.count is None:
            raise err(f"constant pack '{p.name}' must state its length ('{p.name}: ...'..(n)); seed §2.7: "
                      f"'the pack length must be explicitly defined'", p.type.pack.pos)
        if p.bounds:
            raise err(f"constant pack '{p.name}': each constant of a pack is uniform (seed §2.7), so it cannot "
                      f"have per-element index symbols", p.bounds[0][1].pos or p.pos)
        try:
            n = ev.eval(p.type.pack.count)
        except Unknown as u:
            raise err(f"constant pack '{p.name}': its length needs '{u.name}', which is not known here",
                      u.pos or p.type.pack.pos) from None
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise err(f"constant pack '{p.name}': the length must be a non-negative int, got {fmt_value(n)}",
                      p.type.pack.pos)
        v = ev.eval(p.default)
        where = p.default.pos or p.pos
        if not isinstance(v, list):
            raise err(f"constant pack '{p.name}' needs a list of {n} values, one per constant (seed §2.7), "
                      f"got {fmt_value(v)}", where)
        if len(v) != n:
            raise err(f"constant pack '{p.name}' has length {n} but its value list has {len(v)} items", where)
        shapes = output_shape(p, ev, opname)
        return [self.tensor_const(np.full(shape, _constant_item(p, x, dtype, where), dtype=NUMPY_TYPES[dtype]),
                                  dtype, p.name)
                for shape, x in zip(shapes, v)]

    # -- statements ----------------------------------------------------------------------
    def run(self, components, ev, ctx, propagate=False):
        """propagate: the body of an operator with one component and no local tensors, whose
        invocation takes the containing scope instead of a label of its own (seed §2.10)."""
        for c in components:
            hint = c.lhs[0].name if len(c.lhs) == 1 and isinstance(c.lhs[0], LItem) else None
            if propagate and len(components) == 1:
                hint = None
            try:
                results = self.rhs(c.rhs, ev, ctx, hint)
            except Unknown as u:
                raise err(f"unknown identifier '{u.name}'", u.pos or c.pos) from None
            self.assign(c.lhs, results, ev, c.pos)

    def assign(self, lhs, results, ev, pos):
        if len(lhs) == 1 and isinstance(lhs[0], LList):
            results = [results[0] if len(results) == 1 else results]
        if len(results) < len(lhs):
            raise err(f"{len(lhs)} results expected, the right-hand side gives {len(results)}", pos)
        for item, value in zip(lhs, results):
            if isinstance(item, LItem) and item.name is None and item.zip is None:
                continue
            if isinstance(item, LItem) and item.pack is not None and not isinstance(value, list):
                raise err(f"'{item.name}..' expects a pack of tensors", item.pos)
            assign_lvalue(item, value, ev, pos)
            if isinstance(item, LItem) and item.name in self.quantize:
                if isinstance(value, list):
                    raise self.quantize_pack(item.name)
                if isinstance(value, Tensor):
                    ev.values[item.name] = self.fake_quantize(item.name, ev, None)

    def quantize_pack(self, name):
        return NNEFUnsupportedError("@quantize", f"'{name}' is a pack of tensors (seed §2.14 quantizes a tensor "
                                    f"by invoking a one-input operator on it)").at(self.quantize[name].pos)

    def fake_quantize(self, name, ev, ctx):
        """`name: op{attrs};` of @quantize (seed §2.14): the tensor replaced by op(tensor)."""
        q = self.quantize[name]
        ctx = ctx or Context("main", [])
        opdef = self.modules.resolve(q.op, ctx.module, q.pos)
        attrs = {k: ev.eval(e) for k, e, _ in q.attrs}
        types = [ev.types.get(t.name, t.name) for t in q.types]
        out = self.call(opdef, attrs, [ev.values[name]], types, ctx, None, q.pos)
        if len(out) != 1 or not isinstance(out[0], Tensor):
            raise err(f"quantization '{q.op}' must have exactly one output", q.pos)
        return out[0]

    def rhs(self, node, ev, ctx, hint=None):
        if isinstance(node, Invocation):
            return self.invoke(node, ev, ctx, hint)
        if isinstance(node, Value):
            return [ev.eval(node.expr)]
        if isinstance(node, Block):
            inner = Evaluator(dict(ev.values), ev.types)
            scope = Context(ctx.module, ctx.scope + [node.label] if node.label else ctx.scope)
            self.run(node.components, inner, scope)
            return [inner.eval(y) for y in node.yields]
        if isinstance(node, If):
            for cond, then in node.branches:
                if self.condition(cond, ev, ctx, node.pos):
                    return self.rhs(then, ev, ctx, hint)
            return self.rhs(node.otherwise, ev, ctx, hint)
        if isinstance(node, Loop):
            return self.loop(node, ev, ctx)
        raise err(f"unexpected statement {node!r}", getattr(node, "pos", None))

    def condition(self, cond, ev, ctx, pos):
        if isinstance(cond, Value):
            try:
                c = ev.eval(cond.expr)
            except Unknown as u:
                raise err(f"unknown identifier '{u.name}'", u.pos or pos) from None
            if isinstance(c, Tensor):
                raise NNEFUnsupportedError("if", "the condition is a tensor (dynamic branching); a WebNN graph "
                                           "is static, so only compile-time conditions are supported").at(pos)
            if c is None:
                raise err("the condition of 'if' is null", pos)
            if isinstance(c, list):
                raise err("the condition of 'if' must be a single bool, not a pack", pos)
            return bool(c)
        raise NNEFUnsupportedError("if", "the condition is computed by operators (dynamic branching); a WebNN "
                                   "graph is static, so only compile-time conditions are supported").at(pos)

    def loop(self, node, ev, ctx):
        if node.pre_condition is not None or node.post_condition is not None:
            raise NNEFUnsupportedError("while", "condition-based loops are dynamic control flow, which a static "
                                       "WebNN graph cannot express").at(node.pos)
        scans = [(name, ev.eval(e), e) for name, e in node.scans]
        for name, pack, e in scans:
            if not isinstance(pack, list):
                raise err(f"loop item '{name}' must scan a pack", e.pos)
        count = None
        if node.iters is not None and node.iters.count is not None:
            count = ev.eval(node.iters.count)
            if isinstance(count, Tensor):
                raise NNEFUnsupportedError("loop", "the trip count is a tensor (a dynamic loop); only "
                                           "compile-time trip counts can be unrolled").at(node.pos)
        lengths = {len(p) for _, p, _ in scans}
        if len(lengths) > 1:
            raise err(f"the scanned packs have different lengths {sorted(lengths)}", node.pos)
        if count is None:
            if not lengths:
                raise err("a loop needs a 'for' clause, a trip count '..(n)' or a while condition", node.pos)
            count = lengths.pop()
        elif lengths and count > min(lengths):
            raise err(f"trip count {count} exceeds the scanned packs' length {min(lengths)}", node.pos)
        carried = []
        for item, init in node.carried:
            v = ev.eval(init)
            if not isinstance(v, Tensor):
                if item.type is None:
                    dtype = type_of(v)
                    shape = []
                else:
                    dtype = resolve_type(item.type, ev)
                    shape = output_shape(_as_param(item), ev, "with")
                v = self.tensor_const(np.full(shape, v), dtype, item.name)
            carried.append([item.name, v])
        scan_out = None
        for k in range(int(count)):
            inner = Evaluator(dict(ev.values), ev.types)
            for name, v in carried:
                inner.values[name] = v
            for name, pack, _ in scans:
                inner.values[name] = pack[k]
            if node.iters is not None and node.iters.index:
                inner.values[node.iters.index] = k
            out = self.rhs(node.body, inner, ctx, None)
            if len(out) < len(carried):
                raise err(f"the loop body gives {len(out)} results for {len(carried)} carried values", node.pos)
            for slot, v in zip(carried, out):
                slot[1] = v
            rest = out[len(carried):]
            if scan_out is None:
                scan_out = [[] for _ in rest]
            for acc, v in zip(scan_out, rest):
                acc.append(v)
        return [v for _, v in carried] + (scan_out or [])

    # -- invocations ------------------------------------------------------------------------
    def invoke(self, inv, ev, ctx, hint=None):
        opdef = self.modules.resolve(inv.name, ctx.module, inv.pos)
        attrs = {}
        for name, e, pos in inv.attrs:
            if name in attrs:
                raise err(f"attribute '{name}' given twice", pos)
            v = ev.eval(e)
            if isinstance(v, Tensor):
                raise err(f"attribute '{name}' must be a compile-time value, not a tensor", pos)
            attrs[name] = v
        args = [None if a is None else ev.eval(a) for a in inv.args]
        types = [ev.types.get(t.name, t.name) for t in inv.types]
        label = inv.label or hint
        return self.call(opdef, attrs, args, types, ctx, label, inv.pos)

    def call(self, opdef, attrs, args, types, ctx, label, pos):
        params = opdef.block("input")
        args = self.scalar_args(opdef, params, args, pos)
        try:
            inst = instantiate(opdef, attrs, args, types, pos)
        except NNEFError as e:
            if e.line is None:
                e.at(pos)
            elif pos is not None and e.file != pos.file:
                # an assert (or binding) inside the operator's own module: report it at the invocation
                if isinstance(e, NNEFUnsupportedError):
                    raise NNEFUnsupportedError(e.op, f"{e.reason} [{e.location}]").at(pos) from None
                cls = NNEFSemanticError if isinstance(e, Unknown) else type(e)
                raise cls(f"{e.detail} [{e.location}]").at(pos) from None
            raise
        scope = ctx.scope + [label] if label else ctx.scope
        mapped = intrinsics.MAPPING.get(opdef.qualified)
        for k, p in enumerate(params):
            d = inst.env.get(p.name)
            if isinstance(d, DefaultInput):
                t = self.tensor_const(np.full(d.shape, d.value), d.dtype, p.name)
                inst.env[p.name] = inst.inputs[k] = t
        dynamic = any(has_dynamic(shape) for _, _, shape in inst.outputs)
        if dynamic and (mapped is not None or not opdef.block("compose")):
            name, _, shape = next(o for o in inst.outputs if has_dynamic(o[2]))
            where = next(d for d in _flat(shape) if isinstance(d, Upto)).pos
            raise NNEFUnsupportedError(opdef.qualified, f"output '{name}' has a dynamic shape ('~' or '|'), which a "
                                       f"static WebNN graph cannot express").at(where)
        if self.b is None:
            results = [self.shaped(inst, k) for k in range(len(inst.outputs))] if not dynamic else None
            if opdef.block("compose") and (dynamic or (mapped is None and
                                                       opdef.qualified not in self.modules.standard_ops)):
                results = self.inline(opdef, inst, Context(opdef.module, scope), pos)
            self.operations.append((opdef.qualified, scope))
            return results
        if mapped is not None and opdef.qualified not in self.lowered:
            try:
                operands = mapped(self, inst, *[_operand(a) for a in inst.inputs])
            except NNEFUnsupportedError as e:
                if e.line is None:
                    e.at(pos)
                raise
            if not isinstance(operands, (list, tuple)):
                operands = [operands]
            self.operations.append((opdef.qualified, scope))
            return [self.wrap(inst, k, o, pos) for k, o in enumerate(operands)]
        if opdef.block("compose"):
            return self.inline(opdef, inst, Context(opdef.module, scope), pos)
        if opdef.block("lower"):
            from .lowering import lower
            return lower(self, inst, pos)
        reason = ("it is a standard operator this importer does not map to WebNN"
                  if opdef.module in self.modules.standard else "it has neither @compose nor @lower")
        raise NNEFUnsupportedError(opdef.qualified, reason).at(pos)

    def scalar_args(self, opdef, params, args, pos):
        """Compile-time scalars passed as tensor arguments become 0-D constants (seed §2.10)."""
        out = []
        for k, a in enumerate(args):
            if a is None or isinstance(a, Tensor) or (isinstance(a, list) and a and isinstance(a[0], Tensor)):
                out.append(a)
                continue
            if k >= len(params):
                out.append(a)
                continue
            p = params[k]
            dtype = p.type.name if p.type.name in WEBNN_TYPES else None
            if dtype is None:
                # a generic: take the type of a tensor argument with the same generic type, else the value's
                for q, b in zip(params, args):
                    if q.type.name == p.type.name and isinstance(b, Tensor):
                        dtype = b.dtype
                dtype = dtype or type_of(a)
            if dtype not in WEBNN_TYPES or isinstance(a, (list, str)):
                raise err(f"argument {k + 1} of '{opdef.qualified}' must be a tensor, got {fmt_value(a)}", pos)
            out.append(self.tensor_const(np.array(a), dtype))
        return out

    def shaped(self, inst, k):
        name, dtype, shape = inst.outputs[k]
        if shape and isinstance(shape[0], list):
            return [Tensor(dtype, s, None, name) for s in shape]
        return Tensor(dtype, shape, None, name)

    def wrap(self, inst, k, operand, pos):
        if k >= len(inst.outputs):
            raise err(f"'{inst.op.qualified}' mapping returned too many results", pos)
        name, dtype, shape = inst.outputs[k]
        if isinstance(operand, list):
            return [self.wrap_one(inst, name, dtype, s, o, pos) for s, o in zip(shape, operand)]
        return self.wrap_one(inst, name, dtype, shape, operand, pos)

    def wrap_one(self, inst, name, dtype, shape, operand, pos):
        got = list(operand.shape)
        if got != list(shape):
            # the WebNN mapping and the SkriptND definition disagree: a bug here, never a silent result
            raise NNEFSemanticError(f"'{inst.op.qualified}': WebNN computed shape {got} for output '{name}', "
                                    f"the SkriptND definition gives {list(shape)}").at(pos)
        return Tensor(dtype, shape, operand, name)

    def inline(self, opdef, inst, ctx, pos):
        ev = Evaluator(dict(inst.env), dict(inst.types))
        self.declare_tensors(opdef, ev, ctx)
        if opdef.block("update"):
            raise NNEFUnsupportedError(opdef.qualified, "@update (variable updates)").at(pos)
        local = opdef.block("constant") or opdef.block("variable")
        self.run(opdef.block("compose"), ev, ctx, propagate=not local)
        results = []
        for (name, dtype, shape), p in zip(inst.outputs, opdef.block("output")):
            t = ev.values.get(name)
            if p.type.pack is not None:
                results.append(self.check_pack_result(opdef, p, dtype, shape, t))
                continue
            if isinstance(t, list):
                raise err(f"'{opdef.qualified}': output '{name}' is declared a single tensor but composed as a "
                          f"pack of {len(t)}", p.pos)
            if not isinstance(t, Tensor):
                raise err(f"'{opdef.qualified}': its @compose never assigns output '{name}'", p.pos)
            if has_dynamic(shape) and len(shape) == len(t.shape):
                # a dynamic extent takes the composed one, within its upper bound
                shape = [t.shape[k] if isinstance(d, Upto) and (d.bound is None or t.shape[k] <= d.bound) else d
                         for k, d in enumerate(shape)]
            if list(t.shape) != list(shape) or t.dtype != dtype:
                raise err(f"'{opdef.qualified}': output '{name}' is declared {dtype}{shape} but composed as "
                          f"{t.dtype}{list(t.shape)}", p.pos)
            results.append(t)
        return results

    def check_pack_result(self, opdef, p, dtype, shapes, t):
        """A packed output of an inlined operator: a pack of the declared length, each item of the
        declared type and shape (seed §2.10: composed results must match the declaration)."""
        if t is None:
            raise err(f"'{opdef.qualified}': its @compose never assigns output '{p.name}'", p.pos)
        if not isinstance(t, list) or not all(isinstance(x, Tensor) for x in t):
            raise err(f"'{opdef.qualified}': output '{p.name}' is declared a pack of tensors but composed as "
                      f"{t if isinstance(t, Tensor) else fmt_value(t)}", p.pos)
        if len(t) != len(shapes):
            raise err(f"'{opdef.qualified}': output '{p.name}' is declared a pack of {len(shapes)} tensors but "
                      f"composed as a pack of {len(t)}", p.pos)
        for k, (x, shape) in enumerate(zip(t, shapes)):
            if list(x.shape) != list(shape) or x.dtype != dtype:
                raise err(f"'{opdef.qualified}': item {k} of output '{p.name}' is declared {dtype}{shape} but "
                          f"composed as {x.dtype}{list(x.shape)}", p.pos)
        return list(t)


def _constant_item(p, v, dtype, where=None):
    """One value of a constant of type `dtype`: the same type, or an int for a real."""
    vt = type_of(v)
    if vt == dtype or (dtype == "real" and vt == "int"):
        return v
    raise err(f"constant '{p.name}' is {dtype}, so its value cannot be {fmt_value(v)}"
              + (f" ({vt})" if vt else ""), where or p.pos)


def _flat(shape):
    for d in shape:
        if isinstance(d, list):
            yield from _flat(d)
        else:
            yield d


def _operand(a):
    if isinstance(a, list):
        return [t.operand for t in a]
    return a.operand if isinstance(a, Tensor) else None


def _as_param(item):
    return Param(item.name, item.type, None, [], item.pos)
