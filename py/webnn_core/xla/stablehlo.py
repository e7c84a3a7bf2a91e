"""StableHLO (MLIR text, pretty or generic form) -> a WebNN graph.

Conventions (the same for the Python API, the CLI and JS):
  * parameter i of the public @main is the graph input `arg<i>`, whatever SSA
    name the printer gave it; a weights entry `arg<i>` makes it a constant;
  * result i of @main is the graph output `result<i>`;
  * private functions reached through `func.call` are inlined.

Constants stay numpy arrays while only data-movement ops touch them
(broadcast_in_dim, reshape, convert, transpose, iota), so pad values, clamp
bounds and reduction inits are known at build time, as WebNN needs.
"""
from __future__ import annotations

import numpy as np

from ..errors import WebNNError
from . import lowering as L
from .attributes import (TensorType, dictionary, int_list, is_token, signature, split_commas, strip_locs,
                         tensor_type, types_of, value)
from .errors import NotExpressibleError, StableHLOError, XlaTypeError
from .mlir import Group, Label, Op, parse, unquote

SPLAT_LIMIT = 64  # splat constants larger than this are a scalar + expand


class Value:
    """An SSA value: a WebNN operand, or a numpy constant not yet in the graph."""

    __slots__ = ("type", "operand", "const")

    def __init__(self, type_: TensorType, operand=None, const=None):
        self.type = type_
        self.operand = operand
        self.const = const

    @property
    def shape(self):
        return self.type.shape

    @property
    def etype(self):
        return self.type.etype

    @property
    def empty(self) -> bool:
        """A zero-size value (a 0 in its shape). WebNN has no empty tensors, so it
        never enters the graph: it is held as an empty numpy constant, and
        `Importer.fold_empty` decides what every op makes of it."""
        return 0 in self.type.shape


def is_empty(v) -> bool:
    return isinstance(v, Value) and v.empty


def empty_value(typ: TensorType) -> Value:
    from .attributes import NUMPY_TYPES
    return Value(typ, const=np.zeros(typ.shape, NUMPY_TYPES.get(typ.etype) or np.float32))


# ops that are one WebNN call on their operands
UNARY = {"abs": "abs", "ceil": "ceil", "cosine": "cos", "sine": "sin", "tan": "tan", "exponential": "exp",
         "floor": "floor", "log": "log", "negate": "neg", "sqrt": "sqrt", "tanh": "tanh", "logistic": "sigmoid",
         "sign": "sign", "erf": "erf"}
BINARY = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div", "maximum": "max",
          "minimum": "min", "power": "pow"}
LOGICAL = {"and": "logicalAnd", "or": "logicalOr", "xor": "logicalXor"}
COMPARE = {"EQ": "equal", "NE": "notEqual", "GT": "greater", "GE": "greaterOrEqual", "LT": "lesser",
           "LE": "lesserOrEqual"}
# Ops that only pass values along (never into WebNN): they see zero-size values as they are.
PASS_THROUGH = {"call", "tuple", "get_tuple_element", "optimization_barrier"}
# reduction bodies: the single op applied to the two block arguments
BODY_KINDS = {"add": "add", "multiply": "mul", "maximum": "max", "minimum": "min", "and": "and", "or": "or"}
# StableHLO/CHLO/MHLO ops WebNN cannot express, and why.
NOT_EXPRESSIBLE = {
    "while": "WebNN graphs are static DAGs with no loops (unroll the loop in JAX, or loop on the host)",
    "case": "WebNN has no control flow", "if": "WebNN has no control flow",
    "custom_call": "WebNN has no extension hook for opaque native calls",
    "rng": "WebNN has no random number generation; feed random data as an input",
    "rng_bit_generator": "WebNN has no random number generation; feed random data as an input",
    "sort": "WebNN has no sort (top-k/argsort) operation",
    "select_and_scatter": "only the XLA builder lowers select_and_scatter (max-pool gradients)",
    "all_reduce": "WebNN has no replicas or collectives", "all_gather": "WebNN has no replicas or collectives",
    "all_to_all": "WebNN has no replicas or collectives", "reduce_scatter": "WebNN has no replicas or collectives",
    "collective_permute": "WebNN has no replicas or collectives",
    "cross-replica-sum": "WebNN has no replicas or collectives",
    "infeed": "WebNN has no device streams", "outfeed": "WebNN has no device streams",
    "send": "WebNN has no channels", "recv": "WebNN has no channels",
    "bitcast_convert": "WebNN has no bit casts", "reduce_precision": "WebNN has no bit-level rounding",
    "fft": "WebNN has no FFT", "cholesky": "WebNN has no matrix decompositions",
    "triangular_solve": "WebNN has no linear solvers", "atan2": "WebNN has no atan2",
    "shift_left": "WebNN has no integer bit shifts", "shift_right_logical": "WebNN has no integer bit shifts",
    "shift_right_arithmetic": "WebNN has no integer bit shifts", "popcnt": "WebNN has no bit counting",
    "count_leading_zeros": "WebNN has no bit counting",
    "dynamic_broadcast_in_dim": "dynamic shapes: WebNN needs static shapes",
    "dynamic_reshape": "dynamic shapes: WebNN needs static shapes",
    "real_dynamic_slice": "dynamic shapes: WebNN needs static shapes",
    "dynamic_iota": "dynamic shapes: WebNN needs static shapes",
    "dynamic_pad": "dynamic shapes: WebNN needs static shapes", "dynamic_gather": "dynamic shapes",
    "dynamic_conv": "dynamic shapes: WebNN needs static shapes",
    "get_dimension_size": "dynamic shapes: WebNN needs static shapes",
    "set_dimension_size": "dynamic shapes: WebNN needs static shapes",
    "batch_norm_grad": "training ops are not lowered by the importer (the XLA builder has BatchNormGrad)",
    "uniform_quantize": "quantized types are not supported", "uniform_dequantize": "quantized types are not supported",
    "composite": "composite ops are not supported", "cbrt": "WebNN has no cube root for negative inputs",
    "real": "WebNN has no complex numbers", "imag": "WebNN has no complex numbers",
    "complex": "WebNN has no complex numbers", "after_all": "WebNN has no tokens",
    "create_token": "WebNN has no tokens", "partition_id": "WebNN has no partitions",
    "replica_id": "WebNN has no replicas",
}
# what a custom_call's target says about where it came from (prefix -> note)
CUSTOM_CALL_HINTS = {
    "lapack_": " (a LAPACK kernel: jnp.linalg cholesky/qr/svd/eigh/lu/solve; WebNN has no matrix decompositions)",
    "cusolver": " (a cuSOLVER kernel: jnp.linalg; WebNN has no matrix decompositions)",
    "cu_": " (a CUDA kernel)", "hip": " (a ROCm kernel)",
}


class Func:
    def __init__(self, name, params, result_types, body, visibility, op):
        self.name, self.params, self.result_types, self.body = name, params, result_types, body
        self.visibility, self.op = visibility, op


def _region_ops(group: Group):
    """(block argument pieces, ops) of a single-block region."""
    args, ops = [], []
    for item in group.items:
        if isinstance(item, Label):
            args = item.args
        elif isinstance(item, Op):
            ops.append(item)
    return args, ops


def _block_args(pieces):
    """`%a: tensor<..> loc(..), ...` -> [(name, TensorType)]"""
    out = []
    for part in split_commas(strip_locs(pieces)):
        part = [p for p in part if not (isinstance(p, Group) and p.kind == "dict")]
        if len(part) >= 3 and is_token(part[0], "VALUE_USE") and is_token(part[1], "COLON"):
            out.append((str(part[0]), tensor_type(part[2])))
        elif part:
            raise StableHLOError(f"{part[0].line}:{part[0].column}: expected `%name: tensor<...>`")
    return out


def _func(op: Op) -> Func:
    pieces = strip_locs(op.pieces)
    if op.generic:
        props = {}
        for p in pieces:
            if isinstance(p, Group) and p.kind in ("props", "dict"):
                props.update(dictionary(p.items))
        region = next((r for p in pieces if isinstance(p, Group) and p.kind == "paren"
                       for r in p.items if isinstance(r, Group) and r.kind == "region"), None)
        if region is None:
            raise StableHLOError(f"{op.where}: func.func without a body")
        args, body = _region_ops(region)
        ftype = props.get("function_type")
        results = []
        if isinstance(ftype, tuple) and ftype[0] == "raw":
            raw = ftype[1]
            k = next((j for j, p in enumerate(raw) if is_token(p, "ARROW")), None)
            results = types_of(raw[k + 1:]) if k is not None else []
        return Func(props.get("sym_name"), _block_args(args), results, body,
                    props.get("sym_visibility", "public"), op)
    visibility, name, params, results, region = "public", None, [], [], None
    i = 0
    while i < len(pieces):
        p = pieces[i]
        if is_token(p, "BARE_ID") and str(p) in ("public", "private", "nested"):
            visibility = str(p)
        elif is_token(p, "SYMBOL"):
            name = unquote(str(p)[1:])
            params = _block_args(pieces[i + 1].items)
            i += 1
        elif is_token(p, "ARROW"):
            nxt = pieces[i + 1]
            results = types_of(nxt.items if isinstance(nxt, Group) else [nxt])
            i += 1
        elif isinstance(p, Group) and p.kind == "region":
            region = p
        i += 1
    if region is None:
        raise StableHLOError(f"{op.where}: func.func @{name} has no body")
    return Func(name, params, results, _region_ops(region)[1], visibility, op)


def collect_funcs(statements) -> dict:
    funcs = {}

    def visit(ops):
        for op in ops:
            if op.name == "func.func":
                f = _func(op)
                funcs[f.name] = f
            elif op.name in ("module", "builtin.module"):
                for p in op.pieces:
                    groups = [p] if isinstance(p, Group) else []
                    if isinstance(p, Group) and p.kind == "paren":
                        groups = [g for g in p.items if isinstance(g, Group)]
                    for g in groups:
                        if g.kind == "region":
                            visit(_region_ops(g)[1])
            elif op.name.startswith("sdy.") or op.name.startswith("ml_program."):
                continue
            else:
                raise StableHLOError(f"{op.where}: unexpected top-level operation {op.name}")
    visit(statements)
    return funcs


def find_main(funcs: dict) -> Func:
    if "main" in funcs:
        return funcs["main"]
    public = [f for f in funcs.values() if f.visibility == "public"]
    if len(public) == 1:
        return public[0]
    raise StableHLOError("the module has no @main function" if not funcs else
                         f"the module has no @main and {len(public)} public functions")


def _walk_ops(pieces):
    """Every operation inside the regions of a piece list (nested regions too)."""
    for p in pieces:
        if isinstance(p, Group):
            for item in p.items:
                if isinstance(item, Op):
                    yield item
                    yield from _walk_ops(item.pieces)
            if p.kind != "region":
                yield from _walk_ops(p.items)


def _symbols(pieces):
    """The `@name` symbols anywhere in a piece list (callees of calls)."""
    for p in pieces:
        if isinstance(p, Group):
            yield from _symbols(p.items)
        elif is_token(p, "SYMBOL"):
            yield unquote(str(p)[1:])


def _call_target(op: Op) -> str:
    """A custom_call's target, read from its tokens only (its other attributes may
    be ones the importer cannot read, such as `tensor<2xindex>` layouts):
    `custom_call @target(...)` or generic `<{call_target_name = "target"}>`."""
    pieces = strip_locs(op.pieces)
    for p in pieces:
        if is_token(p, "SYMBOL"):
            return unquote(str(p)[1:])

    def search(items):
        for i, p in enumerate(items):
            if isinstance(p, Group):
                found = search(p.items)
                if found:
                    return found
            elif is_token(p, "BARE_ID") and str(p) == "call_target_name" and i + 2 < len(items) \
                    and is_token(items[i + 1], "EQUAL") and is_token(items[i + 2], "STRING"):
                return unquote(str(items[i + 2]))
        return None
    return search(pieces) or "?"


def check_custom_calls(funcs: dict, main: Func):
    """Reject a program with a custom_call (an opaque native kernel: LAPACK,
    cuSOLVER, ...) by name and target before anything else is read, so the error
    names it even when other constructs WebNN lacks (an `index` constant that
    feeds it, its layout attributes) come earlier in the text. Only functions
    reachable from @main count."""
    seen, todo = set(), [main]
    while todo:
        func = todo.pop()
        if func.name in seen:
            continue
        seen.add(func.name)
        for op in [o for top in func.body for o in [top, *_walk_ops(top.pieces)]]:
            short = op.name.rpartition(".")[2]
            if short == "custom_call":
                target = _call_target(op)
                hint = CUSTOM_CALL_HINTS.get(next((k for k in CUSTOM_CALL_HINTS if target.startswith(k)), ""), "")
                raise NotExpressibleError(op.name, f"call target @{target}{hint}: {NOT_EXPRESSIBLE['custom_call']}",
                                          op.where)
            if short == "call":
                todo.extend(funcs[n] for n in _symbols(op.pieces) if n in funcs)


class Decoded:
    """An operation's operands, attributes, keywords, regions and types, from either form."""

    def __init__(self, op: Op):
        self.op = op
        self.operands, self.inits, self.attrs, self.words, self.lists, self.regions = [], [], {}, [], [], []
        self.callee = None
        self.in_types, self.out_types = None, []
        pieces = strip_locs(op.pieces)
        colon = next((i for i, p in enumerate(pieces) if is_token(p, "COLON")), None)
        head = pieces if colon is None else pieces[:colon]
        tail = [] if colon is None else pieces[colon + 1:]
        if tail:
            self.in_types, self.out_types, rest = signature(tail)
            for p in rest:
                if isinstance(p, Group) and p.kind == "region":
                    self.regions.append(p)
                elif isinstance(p, Group) and p.kind == "paren":
                    self.lists.append(p)  # reducer(...) (...) argument lists
        i = 0
        while i < len(head):
            p = head[i]
            if is_token(p, "VALUE_USE"):
                self.operands.append(str(p))
            elif is_token(p, "SYMBOL"):
                self.callee = unquote(str(p)[1:])
            elif is_token(p, "BARE_ID") and i + 1 < len(head) and is_token(head[i + 1], "EQUAL"):
                j = i + 2
                while j < len(head) and not is_token(head[j], "COMMA"):
                    if j > i + 2 and isinstance(head[j], Group) and head[j].kind == "dict" and \
                            isinstance(head[i + 2], Group) and head[i + 2].kind == "dict":
                        break  # `window = {...} {attr dict}`
                    j += 1
                self.attrs[str(p)] = value(head[i + 2:j])
                i = j - 1
            elif is_token(p, "BARE_ID"):
                self.words.append(str(p))
            elif isinstance(p, Group):
                if p.kind == "paren":
                    for part in split_commas(p.items):
                        regions = [g for g in part if isinstance(g, Group) and g.kind == "region"]
                        self.regions.extend(regions)
                        uses = [str(x) for x in part if is_token(x, "VALUE_USE")]
                        if len(uses) == 2 and any(is_token(x, "BARE_ID") and str(x) == "init" for x in part):
                            self.operands.append(uses[0])
                            self.inits.append(uses[1])
                        else:
                            self.operands.extend(uses)
                elif p.kind in ("props", "dict"):
                    self.attrs.update(dictionary(p.items))
                elif p.kind == "list":
                    self.lists.append(p)
                elif p.kind == "region":
                    self.regions.append(p)
            i += 1
        if self.inits:  # pretty reduce: (x init: c), (y init: d) -> inputs then inits, like the generic form
            self.operands = self.operands + self.inits

    def attr(self, *names, default=None):
        for n in names:
            if n in self.attrs:
                return self.attrs[n]
        return default


class Importer:
    def __init__(self, builder, weights=None):
        self.b = builder
        self.weights = dict(weights or {})
        self.funcs = {}
        self.inputs = {}        # arg<i> -> TensorType: the parameters made graph inputs
        self.parameters = {}    # arg<i> -> TensorType: every parameter not given as a weight
        self.depth = 0

    # ------------------------------------------------------------ entry
    def run(self, text: str):
        statements = parse(text)
        self.funcs = collect_funcs(statements)
        main = find_main(self.funcs)
        check_custom_calls(self.funcs, main)
        args = []
        unknown = sorted(set(self.weights) - {f"arg{i}" for i in range(len(main.params))})
        if unknown:
            raise StableHLOError(f"weights {unknown} name no parameter of @{main.name} "
                                 f"(parameters are arg0..arg{len(main.params) - 1})")
        for i, (ssa, typ) in enumerate(main.params):
            name = f"arg{i}"
            if name in self.weights:
                arr = np.asarray(self.weights[name])
                if tuple(arr.shape) != typ.shape:
                    raise StableHLOError(f"weights['{name}'] has shape {list(arr.shape)}, @main's parameter {i} "
                                         f"({ssa}) is {typ}")
                args.append(Value(typ, const=self._np(arr, typ.etype)))
            elif 0 in typ.shape:  # carries no data: not a graph input (WebNN has no empty tensors)
                L.webnn_type(typ.etype, f"parameter {i} of @{main.name}")
                self.parameters[name] = typ
                args.append(empty_value(typ))
            else:
                dtype = L.webnn_type(typ.etype, f"parameter {i} of @{main.name}")
                try:
                    operand = self.b.input(name, {"dataType": dtype, "shape": list(typ.shape)})
                except WebNNError as e:
                    raise StableHLOError(f"{main.op.where}: parameter {i} ({ssa}: {typ}): {e}") from None
                self.inputs[name] = self.parameters[name] = typ
                args.append(Value(typ, operand=operand))
        results = self.call(main, args)
        return main, results

    def _np(self, arr, etype):
        from .attributes import NUMPY_TYPES
        t = NUMPY_TYPES.get(etype)
        if t is None:
            raise NotExpressibleError("constant", f"element type {etype}")
        return np.asarray(arr).astype(t)

    # ------------------------------------------------------------ values
    def operand(self, v: Value, where=""):
        """The WebNN operand of a value (constants enter the graph here)."""
        if isinstance(v, tuple):
            raise StableHLOError(f"{where}: a tuple is used as a tensor")
        if v.empty:  # fold_empty keeps these away from WebNN; this is a safety net
            raise NotExpressibleError("zero-size value", f"{v.type} has no elements and WebNN has no empty tensors",
                                      where)
        if v.operand is None:
            dtype = L.webnn_type(v.etype, f"{where}: constant")
            arr = v.const
            if v.etype == "i1":
                arr = arr.astype(np.uint8)
            if arr.size > SPLAT_LIMIT and _is_splat(arr):
                v.operand = self.b.expand(L.const(self.b, arr.reshape(-1)[0], dtype), list(arr.shape))
            else:
                v.operand = L.const(self.b, arr, dtype)
        return v.operand

    @staticmethod
    def known_scalar(v: Value):
        if v.const is None:
            return None
        flat = v.const.reshape(-1)
        return flat[0].item() if flat.size and (flat == flat[0]).all() else None

    # ------------------------------------------------------------ functions
    def call(self, func: Func, args):
        if len(args) != len(func.params):
            raise StableHLOError(f"{func.op.where}: @{func.name} takes {len(func.params)} arguments, got {len(args)}")
        self.depth += 1
        if self.depth > 64:
            raise NotExpressibleError("func.call", "recursion deeper than 64 calls")
        env = {}
        for (ssa, typ), v in zip(func.params, args):
            if not isinstance(v, tuple) and v.type != typ:
                raise StableHLOError(f"{func.op.where}: argument {ssa} of @{func.name} is {typ}, got {v.type}")
            env[ssa] = v
        try:
            return self.block(func.body, env)
        finally:
            self.depth -= 1

    def block(self, ops, env):
        for op in ops:
            if op.name in ("return", "func.return", "stablehlo.return", "mhlo.return"):
                d = Decoded(op)
                return [self.lookup(env, n, op) for n in d.operands]
            try:
                outs = self.apply(op, env)
            except NotExpressibleError as e:
                if e.where:
                    raise
                raise NotExpressibleError(op.name, e.reason, op.where) from None  # add the op's position
            except StableHLOError:
                raise
            except XlaTypeError as e:
                raise StableHLOError(f"{op.where}: {op.name}: {e}") from None
            except WebNNError as e:
                raise StableHLOError(f"{op.where}: {op.name}: {e}") from None
            self.bind(env, op, outs)
        raise StableHLOError("a function body ends without return")

    def lookup(self, env, name, op):
        base, _, index = name.partition("#")
        if base not in env:
            raise StableHLOError(f"{op.where}: {op.name}: use of undefined value {name}")
        v = env[base]
        if index:
            if not isinstance(v, list) or int(index) >= len(v):
                raise StableHLOError(f"{op.where}: {op.name}: {name} names no result")
            return v[int(index)]
        if isinstance(v, list):
            if len(v) != 1:
                raise StableHLOError(f"{op.where}: {op.name}: {name} has {len(v)} results; use {name}#i")
            return v[0]
        return v

    def bind(self, env, op, outs):
        total = sum(c for _, c in op.results)
        if len(outs) != total:
            raise StableHLOError(f"{op.where}: {op.name} gives {len(outs)} results, the text binds {total}")
        i = 0
        for name, count in op.results:  # `%r:2 = ...` binds a group used as %r#0, %r#1
            env[name] = outs[i] if count == 1 else list(outs[i:i + count])
            i += count

    # ------------------------------------------------------------ operations
    def apply(self, op: Op, env):
        d = Decoded(op)
        name = op.name if "." in op.name else "func." + op.name  # `call @f(...)`
        dialect, _, short = name.partition(".")
        if dialect not in ("stablehlo", "chlo", "mhlo", "func") or not short:
            raise NotExpressibleError(name, "not a StableHLO/CHLO operation", op.where)
        args = [self.lookup(env, n, op) for n in d.operands]
        handler = getattr(self, "op_" + short.replace("-", "_"), None)
        if handler is None:
            if short in NOT_EXPRESSIBLE:
                raise NotExpressibleError(name, NOT_EXPRESSIBLE[short], op.where)
            raise NotExpressibleError(name, "this operation is not supported by the importer", op.where)
        if short == "select" and d.in_types is None and len(d.out_types) == 2:  # pretty `: pred type, result type`
            d.out_types = d.out_types[1:]
        result = self.fold_empty(short, d, args)
        if result is None:
            result = handler(d, args, d.out_types)
        return result if isinstance(result, list) else [result]

    # ------------------------------------------------------------ zero-size values
    def fold_empty(self, short, d, args):
        """The one place zero-size values are handled (WebNN has no empty tensors).

        * An op whose results all have no elements computes nothing: its results
          are empty values, whatever its operands (elementwise, broadcast_in_dim,
          reshape, transpose, convert, slice, pad, iota, select, dynamic_slice,
          gather, ... of an empty value; constants of an empty type).
        * An op with a non-empty result and an empty operand has a rule in
          EMPTY_RULES that says what the result is without that operand: a
          concatenate drops it, a pad is its padding value, a reduce is its init,
          a dot_general/convolution contracting over nothing is zeros, an update
          of nothing (dynamic_update_slice, scatter) is the operand unchanged.
          An op with no rule is a typed NotExpressibleError.
        * Values only passed along (call, tuple, optimization_barrier) pass as they are.
        Returns the op's result values, or None when no operand or result is empty.
        """
        if short in PASS_THROUGH:
            return None
        outs = d.out_types
        count = sum(c for _, c in d.op.results)
        if outs and len(outs) == count and all(0 in t.shape for t in outs):
            return [empty_value(t) for t in outs]
        empty = next((i for i, a in enumerate(args) if is_empty(a)), None)
        if empty is None:
            return None
        rule = EMPTY_RULES.get(short)
        if rule is None:
            raise NotExpressibleError(d.op.name, f"operand {empty} ({args[empty].type}) has no elements but the result "
                                      f"does; WebNN has no empty tensors and the importer has no rule for this op",
                                      d.op.where)
        return rule(self, d, args)

    def _filled(self, d, i, scalar: Value) -> Value:
        """Result i of `d` filled with a rank-0 value (a constant stays a constant)."""
        typ = self._out(d, i)
        if scalar.const is not None:
            return Value(typ, const=np.broadcast_to(scalar.const.reshape(()), typ.shape))
        return self._new(d, L.broadcast_in_dim(self.b, self.operand(scalar, d.op.where), typ.shape, []), i)

    def _zeros(self, d, _args):
        """A contraction over an empty dimension: sums of nothing."""
        typ = self._out(d)
        return Value(typ, const=np.broadcast_to(np.zeros((), dtype_np(typ.etype)), typ.shape))

    def _unchanged(self, d, args):
        """An update of nothing: operand 0 as it is."""
        x = args[0]
        return Value(self._out(d), operand=x.operand, const=x.const)

    def _concat_nonempty(self, d, args):
        rest = [a for a in args if not is_empty(a)]
        if len(rest) == 1:
            return self._unchanged(d, rest)
        return self.op_concatenate(d, rest, d.out_types)

    def _reduce_of_nothing(self, d, args):
        """Every reduced slice is empty: each result is its init value (for any body)."""
        n = len(args) // 2
        return [self._filled(d, i, args[n + i]) for i in range(n)]

    def _reduce_window_of_nothing(self, d, args):
        """Every window holds only padding, which is the init value: for an
        idempotent body (max/min/and/or) or an identity init, the result is the init."""
        x, init = args
        kind = self._kind(d)
        value_ = self.known_scalar(init)
        if kind not in ("max", "min", "and", "or") and value_ != L.identity_of(kind, L.webnn_type(init.etype)):
            raise NotExpressibleError(d.op.name, f"a {kind} window over an empty operand {x.type} with init "
                                      f"{value_ if value_ is not None else '(runtime)'}", d.op.where)
        return self._filled(d, 0, init)

    def _out(self, d, i=0) -> TensorType:
        if i >= len(d.out_types):
            raise StableHLOError(f"{d.op.where}: {d.op.name}: missing result type")
        return d.out_types[i]

    def _new(self, d, operand, i=0):
        typ = self._out(d, i)
        if tuple(operand.shape) != typ.shape:
            raise StableHLOError(f"{d.op.where}: {d.op.name}: computed shape {list(operand.shape)}, the text says {typ}")
        return Value(typ, operand=operand)

    def _ops(self, d, args):
        return [self.operand(a, d.op.where) for a in args]

    def op_not(self, d, args, _):
        x, = self._ops(d, args)
        if args[0].etype != "i1":
            raise NotExpressibleError(d.op.name, "bitwise not of integers (WebNN has logicalNot on booleans only)",
                                      d.op.where)
        return self._new(d, self.b.logicalNot(x))

    def _logical(self, d, args, kind):
        a, c = self._ops(d, args)
        if args[0].etype != "i1":
            raise NotExpressibleError(d.op.name, f"bitwise {kind} of integers (WebNN has logical ops on booleans only)",
                                      d.op.where)
        return self._new(d, getattr(self.b, LOGICAL[kind])(a, c))

    def op_and(self, d, args, _):
        return self._logical(d, args, "and")

    def op_or(self, d, args, _):
        return self._logical(d, args, "or")

    def op_xor(self, d, args, _):
        return self._logical(d, args, "xor")

    def op_remainder(self, d, args, _):
        a, c = self._ops(d, args)
        return self._new(d, L.rem(self.b, a, c))

    def op_rsqrt(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, self.b.reciprocal(self.b.sqrt(x)))

    def op_log_plus_one(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, self.b.log(self.b.add(x, L.const(self.b, 1, x.dtype))))

    def op_exponential_minus_one(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, self.b.sub(self.b.exp(x), L.const(self.b, 1, x.dtype)))

    def op_erfc(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, self.b.sub(L.const(self.b, 1, x.dtype), self.b.erf(x)))

    def op_square(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, self.b.mul(x, x))

    def op_round_nearest_even(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, L.round_nearest_even(self.b, x))

    def op_round_nearest_afz(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, L.round_nearest_afz(self.b, x))

    def op_is_finite(self, d, args, _):
        x, = self._ops(d, args)
        return self._new(d, L.is_finite(self.b, x))

    def op_clamp(self, d, args, _):
        lo, x, hi = args
        xo = self.operand(x, d.op.where)
        out = L.clamp(self.b, self.operand(lo, d.op.where), xo, self.operand(hi, d.op.where),
                      self.known_scalar(lo), self.known_scalar(hi))
        return self._new(d, out)

    def op_select(self, d, args, _):
        p, t, f = self._ops(d, args)
        if d.in_types is None and len(d.out_types) == 2:  # pretty `: pred type, result type`
            d.out_types = d.out_types[1:]
        return self._new(d, self.b.where(p, t, f))

    def op_compare(self, d, args, _):
        a, c = self._ops(d, args)
        direction = d.attr("comparison_direction") or next((w for w in d.words if w in COMPARE), None)
        if direction not in COMPARE:
            raise StableHLOError(f"{d.op.where}: compare: unknown direction {direction!r}")
        return self._new(d, getattr(self.b, COMPARE[direction])(a, c))

    # constants and data movement (folded while the operand is a constant)
    def op_constant(self, d, args, _):
        v = d.attr("value")
        if v is None:
            v = value([p for p in strip_locs(d.op.pieces)])
        if not isinstance(v, np.ndarray):
            raise StableHLOError(f"{d.op.where}: constant: expected dense<...> : tensor<...>")
        return Value(self._out(d), const=v)

    def op_iota(self, d, args, _):
        typ = self._out(d)
        dim = int(d.attr("iota_dimension", "dim"))
        from .attributes import NUMPY_TYPES
        return Value(typ, const=L.iota(typ.shape, dim, "int64").astype(NUMPY_TYPES[typ.etype]))

    def op_broadcast_in_dim(self, d, args, _):
        x, = args
        typ = self._out(d)
        dims = int_list(d.attr("broadcast_dimensions", "dims", default=[]), "broadcast_dimensions")
        if x.const is not None:
            order = np.argsort(dims) if dims else []
            arr = np.transpose(x.const, order) if len(dims) > 1 else x.const
            full = [1] * len(typ.shape)
            for pos, dd in enumerate(sorted(dims)):
                full[dd] = arr.shape[pos]
            return Value(typ, const=np.broadcast_to(arr.reshape(full), typ.shape))
        return self._new(d, L.broadcast_in_dim(self.b, self.operand(x), typ.shape, dims))

    def op_broadcast(self, d, args, _):
        x, = args
        typ = self._out(d)
        return self._new(d, L.broadcast_in_dim(self.b, self.operand(x), typ.shape,
                                               list(range(len(typ.shape) - len(x.shape), len(typ.shape)))))

    def op_reshape(self, d, args, _):
        x, = args
        typ = self._out(d)
        if x.const is not None:
            return Value(typ, const=x.const.reshape(typ.shape))
        return self._new(d, L.reshape(self.b, self.operand(x), typ.shape) if x.shape != typ.shape
                         else self.b.identity(self.operand(x)))

    def op_transpose(self, d, args, _):
        x, = args
        perm = int_list(d.attr("permutation", "dims"), "permutation")
        typ = self._out(d)
        if x.const is not None:
            return Value(typ, const=np.transpose(x.const, perm))
        return self._new(d, L.transpose(self.b, self.operand(x), perm))

    def op_convert(self, d, args, _):
        x, = args
        typ = self._out(d) if d.out_types else x.type
        if x.const is not None:
            c = x.const
            if typ.etype == "i1":
                arr = c != 0
            elif typ.etype.startswith("f"):
                arr = c.astype(np.float64).astype(dtype_np(typ.etype))
            else:
                with np.errstate(invalid="ignore", over="ignore"):
                    arr = np.trunc(c.astype(np.float64)).astype(np.int64).astype(dtype_np(typ.etype)) \
                        if c.dtype.kind == "f" else c.astype(np.int64).astype(dtype_np(typ.etype))
            return Value(typ, const=np.asarray(arr))
        xo = self.operand(x)
        if typ.etype == "i1":
            return self._new(d, xo if x.etype == "i1" else L.to_pred(self.b, xo))
        to = L.webnn_type(typ.etype, d.op.name)
        return self._new(d, self.b.cast(xo, to) if xo.dtype != to or x.etype == "i1" else self.b.identity(xo))

    def op_slice(self, d, args, _):
        x, = args
        start = d.attr("start_indices")
        if start is not None:
            start, limit = int_list(start), int_list(d.attr("limit_indices"))
            strides = int_list(d.attr("strides", default=[1] * len(start)))
        else:  # pretty: %x [a:b, c:d:s]
            start, limit, strides = [], [], []
            for part in split_commas(d.lists[0].items if d.lists else []):
                nums = [int(str(p)) for p in part if not is_token(p, "COLON")]
                start.append(nums[0])
                limit.append(nums[1])
                strides.append(nums[2] if len(nums) > 2 else 1)
        if x.const is not None:
            return Value(self._out(d), const=x.const[tuple(slice(a, z, s) for a, z, s in zip(start, limit, strides))])
        return self._new(d, L.slice_(self.b, self.operand(x), start, limit, strides) if x.shape != self._out(d).shape
                         else self.b.identity(self.operand(x)))

    def op_concatenate(self, d, args, _):
        dim = int(d.attr("dimension", "dim"))
        return self._new(d, L.concatenate(self.b, self._ops(d, args), dim))

    def op_pad(self, d, args, _):
        x, v = args
        low = int_list(d.attr("edge_padding_low", "low"))
        high = int_list(d.attr("edge_padding_high", "high"))
        interior = int_list(d.attr("interior_padding", "interior", default=[0] * len(low)))
        fill = self.known_scalar(v)
        xo = self.operand(x)
        if fill is None:
            out = L.pad(self.b, xo, low, high, interior, 0, value_operand=self.operand(v))
        else:
            out = L.pad(self.b, xo, low, high, interior, fill)
        return self._new(d, out if out is not xo else self.b.identity(xo))

    def op_reverse(self, d, args, _):
        x, = args
        dims = int_list(d.attr("dimensions", "dims"))
        xo = self.operand(x)
        out = L.reverse(self.b, xo, dims)
        return self._new(d, out if out is not xo else self.b.identity(xo))

    def op_dynamic_slice(self, d, args, _):
        x, *starts = args
        sizes = int_list(d.attr("slice_sizes", "sizes"))
        xo = self.operand(x)
        out = L.dynamic_slice(self.b, xo, [self.operand(s) for s in starts], sizes)
        return self._new(d, out if out is not xo else self.b.identity(xo))

    def op_dynamic_update_slice(self, d, args, _):
        x, u, *starts = args
        return self._new(d, L.dynamic_update_slice(self.b, self.operand(x), self.operand(u),
                                                   [self.operand(s) for s in starts]))

    def op_optimization_barrier(self, d, args, _):
        return [a if is_empty(a) else Value(a.type, operand=self.b.identity(self.operand(a))) for a in args]

    def op_tuple(self, d, args, _):
        return [tuple(args)]

    def op_get_tuple_element(self, d, args, _):
        t, = args
        index = d.attr("index")
        if index is None and d.lists:
            index = int(str(d.lists[0].items[0]))
        return t[int(index)]

    # linear algebra
    def op_dot_general(self, d, args, _):
        a, c = self._ops(d, args)
        dn = d.attr("dot_dimension_numbers")
        if isinstance(dn, dict):
            lb, rb = dn.get("lhs_batching_dimensions", []), dn.get("rhs_batching_dimensions", [])
            lc, rc = dn.get("lhs_contracting_dimensions", []), dn.get("rhs_contracting_dimensions", [])
        else:
            lb, rb = self._pair(d.attr("batching_dims"))
            lc, rc = self._pair(d.attr("contracting_dims"))
        out = L.dot_general(self.b, a, c, int_list(lb), int_list(rb), int_list(lc), int_list(rc))
        return self._cast_result(d, out)

    def _pair(self, v):
        if v is None:
            return [], []
        if isinstance(v, tuple) and v[0] == "dims":
            lists = [value([g]) for g in v[1]]
            return lists[0], lists[1]
        raise StableHLOError(f"expected `[..] x [..]`, got {v!r}")

    def op_dot(self, d, args, _):
        a, c = self._ops(d, args)
        return self._cast_result(d, L.dot(self.b, a, c))

    def _cast_result(self, d, out):
        to = L.webnn_type(self._out(d).etype, d.op.name)
        return self._new(d, out if out.dtype == to else self.b.cast(out, to))

    def op_convolution(self, d, args, _):
        lhs, rhs = self._ops(d, args)
        dn = d.attr("dimension_numbers", "dim_numbers")
        rank = len(lhs.shape)
        if isinstance(dn, tuple) and dn[0] == "dims":
            roles = [[str(p) for p in g.items if not is_token(p, "COMMA")] for g in dn[1]]
            inp = self._conv_roles(roles[0], "b", "f")
            ker = self._conv_roles(roles[1], "o", "i")
            outd = self._conv_roles(roles[2], "b", "f")
        else:
            raise StableHLOError(f"{d.op.where}: convolution: cannot read dimension numbers {dn!r}")
        window = d.attr("window", default={}) or {}
        nsp = rank - 2

        def get(key, pretty, default):
            v = d.attrs.get(key, window.get(pretty, default))
            if isinstance(v, np.ndarray):
                return v.tolist()
            return v
        strides = get("window_strides", "stride", [1] * nsp)
        padding = get("padding", "pad", [[0, 0]] * nsp)
        lhs_dil = get("lhs_dilation", "lhs_dilate", [1] * nsp)
        rhs_dil = get("rhs_dilation", "rhs_dilate", [1] * nsp)
        rev = get("window_reversal", "reverse", [False] * nsp)
        out = L.convolution(self.b, lhs, rhs, input_dims=inp, kernel_dims=ker, output_dims=outd,
                            strides=int_list(strides), padding=[int_list(p) for p in padding],
                            lhs_dilation=int_list(lhs_dil), rhs_dilation=int_list(rhs_dil),
                            feature_group_count=int(d.attr("feature_group_count", default=1)),
                            batch_group_count=int(d.attr("batch_group_count", default=1)),
                            reverse_=[bool(r) for r in rev], op=d.op.name)
        return self._cast_result(d, out)

    @staticmethod
    def _conv_roles(labels, first, second):
        a = labels.index(first)
        c = labels.index(second)
        spatial = sorted((int(lab), pos) for pos, lab in enumerate(labels) if lab not in (first, second))
        return a, c, [pos for _, pos in spatial]

    def op_batch_norm_inference(self, d, args, _):
        x, scale, offset, mean, var = self._ops(d, args)
        return self._new(d, self.b.batchNormalization(x, mean, var, scale=scale, bias=offset,
                                                      axis=int(d.attr("feature_index")),
                                                      epsilon=float(d.attr("epsilon"))))

    # reductions
    def _body_kind(self, d, region):
        args, ops = _region_ops(region)
        params = [n for n, _ in _block_args(args)] if args else []
        if d.lists and not params:  # pretty `reducer(%a: t, %b: t) (...)`
            params = [n for g in d.lists for n, _ in _block_args(g.items)]
        if len(ops) == 2 and ops[1].name in ("stablehlo.return", "mhlo.return"):
            body = Decoded(ops[0])
            short = ops[0].name.partition(".")[2]
            if short in BODY_KINDS and sorted(body.operands) == sorted(params[:2]):
                return BODY_KINDS[short]
        names = [o.name for o in ops]
        raise NotExpressibleError(d.op.name, f"the reduction body ({', '.join(names)}) is not a single "
                                  "add/multiply/maximum/minimum/and/or of its two arguments", d.op.where)

    def _kind(self, d):
        applies = next((w for w in d.words if w.startswith("stablehlo.")), None)
        if applies:
            short = applies.partition(".")[2]
            if short not in BODY_KINDS:
                raise NotExpressibleError(d.op.name, f"reduction with {applies}", d.op.where)
            return BODY_KINDS[short]
        if not d.regions:
            raise StableHLOError(f"{d.op.where}: {d.op.name}: no reduction body")
        return self._body_kind(d, d.regions[0])

    def op_reduce(self, d, args, _):
        n = len(args) // 2
        inputs, inits = args[:n], args[n:]
        dims = int_list(d.attr("dimensions"))
        if n == 2:
            return self._arg_reduce(d, inputs, inits, dims)
        if n != 1:
            raise NotExpressibleError(d.op.name, f"a variadic reduce of {n} inputs", d.op.where)
        kind = self._kind(d)
        x = self.operand(inputs[0], d.op.where)
        init = inits[0]
        out = L.reduce(self.b, x, kind, dims, self.known_scalar(init),
                       self.operand(init, d.op.where), op=d.op.name)
        return self._new(d, out)

    def _arg_reduce(self, d, inputs, inits, dims):
        """JAX's argmax/argmin: reduce (values, iota) with a select-by-compare body."""
        if len(dims) != 1 or not d.regions:
            raise NotExpressibleError(d.op.name, "a two-input reduce that is not an argmax/argmin", d.op.where)
        axis = dims[0]
        _, ops = _region_ops(d.regions[0])
        directions = [Decoded(o).attr("comparison_direction") or
                      next((w for w in Decoded(o).words if w in COMPARE), None)
                      for o in ops if o.name == "stablehlo.compare"]
        idx = inputs[1]
        expected = L.iota(idx.shape, axis, "int64") if idx.const is not None else None
        if expected is None or not np.array_equal(idx.const.astype(np.int64), expected) or not directions \
                or directions[0] not in ("GT", "LT"):
            raise NotExpressibleError(d.op.name, "a two-input reduce that is not an argmax/argmin over an iota",
                                      d.op.where)
        x = self.operand(inputs[0], d.op.where)
        kind = "max" if directions[0] == "GT" else "min"
        values = getattr(self.b, L.REDUCERS[kind])(x, axes=[axis])
        index_type = L.webnn_type(self._out(d, 1).etype, d.op.name)
        index = getattr(self.b, "argMax" if kind == "max" else "argMin")(
            x, axis, outputDataType="int64" if index_type == "int64" else "int32")
        return [self._new(d, values, 0), self._new(d, index, 1)]

    def op_reduce_window(self, d, args, _):
        if len(args) != 2:
            raise NotExpressibleError(d.op.name, "a variadic reduce_window", d.op.where)
        x, init = args
        kind = self._kind(d)
        rank = len(x.shape)
        padding = d.attr("padding")
        padding = padding.tolist() if isinstance(padding, np.ndarray) else (padding or [[0, 0]] * rank)
        out = L.reduce_window(self.b, self.operand(x, d.op.where), kind, int_list(d.attr("window_dimensions")),
                              int_list(d.attr("window_strides", default=[1] * rank)), padding,
                              int_list(d.attr("base_dilations", default=[1] * rank)),
                              int_list(d.attr("window_dilations", default=[1] * rank)),
                              self.known_scalar(init), self.operand(init, d.op.where), op=d.op.name)
        return self._new(d, out)

    def op_gather(self, d, args, _):
        x, idx = self._ops(d, args)
        dn = d.attr("dimension_numbers")
        if not isinstance(dn, dict):
            raise StableHLOError(f"{d.op.where}: gather: missing dimension_numbers")
        out = L.gather(self.b, x, idx, offset_dims=dn.get("offset_dims", []),
                       collapsed_slice_dims=dn.get("collapsed_slice_dims", []),
                       start_index_map=dn.get("start_index_map", []),
                       index_vector_dim=int(dn.get("index_vector_dim", len(idx.shape))),
                       slice_sizes=int_list(d.attr("slice_sizes")),
                       operand_batching_dims=dn.get("operand_batching_dims", []),
                       start_indices_batching_dims=dn.get("start_indices_batching_dims", []), op=d.op.name)
        return self._new(d, out)

    def op_scatter(self, d, args, _):
        if len(args) != 3:
            raise NotExpressibleError(d.op.name, "a variadic scatter", d.op.where)
        x, idx, upd = self._ops(d, args)
        dn = d.attr("scatter_dimension_numbers")
        if not isinstance(dn, dict) or not d.regions:
            raise StableHLOError(f"{d.op.where}: scatter: missing scatter_dimension_numbers or update computation")
        out = L.scatter(self.b, x, idx, upd, self._scatter_kind(d), update_window_dims=dn.get("update_window_dims", []),
                        inserted_window_dims=dn.get("inserted_window_dims", []),
                        scatter_dims_to_operand_dims=dn.get("scatter_dims_to_operand_dims", []),
                        index_vector_dim=int(dn.get("index_vector_dim", len(idx.shape))),
                        input_batching_dims=dn.get("input_batching_dims", []),
                        scatter_indices_batching_dims=dn.get("scatter_indices_batching_dims", []),
                        unique_indices=bool(d.attr("unique_indices", default=False)), op=d.op.name)
        return self._new(d, out)

    def _scatter_kind(self, d):
        """'set' when the update computation returns the update, else the reduction kind."""
        args, ops = _region_ops(d.regions[0])
        params = [n for n, _ in _block_args(args)]
        if len(ops) == 1 and len(params) == 2 and Decoded(ops[0]).operands == [params[1]]:
            return "set"
        return self._body_kind(d, d.regions[0])

    # calls
    def op_call(self, d, args, _):
        callee = d.callee or d.attr("callee")
        if callee not in self.funcs:
            raise StableHLOError(f"{d.op.where}: call of unknown function @{callee}")
        return self.call(self.funcs[callee], args)


def _one_webnn_op(webnn):
    """A handler for a StableHLO op that is one WebNN call on its operands."""
    def handler(self, d, args, _):
        return self._new(d, getattr(self.b, webnn)(*self._ops(d, args)))
    return handler


for _short, _webnn in {**UNARY, **BINARY}.items():
    setattr(Importer, "op_" + _short, _one_webnn_op(_webnn))


def _is_splat(arr) -> bool:
    if all(s == 0 for s in arr.strides):  # a broadcast scalar: no need to look at the elements
        return True
    flat = arr.reshape(-1)
    same = flat == flat[0]
    if flat.dtype.kind == "f" and np.isnan(flat[0]):
        same = np.isnan(flat)
    return bool(same.all())


# What an op with a non-empty result makes of an empty operand (see Importer.fold_empty).
EMPTY_RULES = {
    "concatenate": Importer._concat_nonempty,
    "pad": lambda self, d, args: self._filled(d, 0, args[1]),
    "reduce": Importer._reduce_of_nothing,
    "reduce_window": Importer._reduce_window_of_nothing,
    "dot_general": Importer._zeros, "dot": Importer._zeros, "convolution": Importer._zeros,
    "dynamic_update_slice": Importer._unchanged,   # the update is empty
    "scatter": Importer._unchanged,                # no indices or no updates
}


def dtype_np(etype):
    from .attributes import NUMPY_TYPES
    return NUMPY_TYPES[etype]


def lower(text: str, builder, weights=None):
    """Lower StableHLO text onto `builder`. Returns (importer, main Func, result Values)."""
    imp = Importer(builder, weights)
    main, results = imp.run(text)
    return imp, main, results


__all__ = ["Importer", "lower", "Value", "NOT_EXPRESSIBLE"]
