"""Graph compilation for the fast paths, run once per graph by `CpuBackend.plan` (build()).

Given the plan's steps in topological order it returns new steps (the
steps it got, like the builder's IR, are never mutated) after four passes:

0. Layout: the kernels are NHWC, so NCHW float32 conv2d/pool chains run in
   NHWC: the input of a chain is transposed once, every conv2d, pool and
   layout-neutral step between them (elementwise activations, same-shape
   binary elementwise ops, channel concats) runs on the NHWC twin of its
   NCHW value, and a value goes back to NCHW only where a step that is not
   converted (or a graph output) reads it. Constant filters keep their
   layout: packing (2.) re-lays them out once at build(). Results are
   bit-identical: the NCHW kernels transposed around the same NHWC kernels.
   The graph's own NHWC -> NCHW / NCHW -> NHWC transposes (ONNX Runtime's,
   around its NCHW-only steps) become twins / identities, and binary ops with
   a single-element operand run on twins.

   Then chains of reshape/transpose steps that amount to a channel shuffle of
   the last axis (ShuffleNet's reshape -> transpose -> reshape, which the layout
   pass wraps in NHWC <-> NCHW transposes) become one `channelShuffle` step: one
   copy instead of one per reshape of a transposed view (decided exactly, by
   pushing element indices through the steps' reference kernels at build()),
   and ONNX Runtime's LRN denominator (pad -> transpose -> averagePool2d ->
   transpose) one `channelAverage` step.

1. Fusion: conv2d followed by relu or clamp becomes one `conv2d+relu` /
   `conv2d+clamp` node (bias + activation in the GEMM epilogue) when the
   conv's output has no other reader and is not a graph output. The fused
   op's numpy kernel is the exact composition of the two reference kernels.
2. Weight packing: constant conv2d filters (and biases) are repacked into the
   microkernels' layouts (`fast.pack`), constant matmul/gemm B operands into
   GEMM panels; the per-call packing is skipped.
3. Buffers: the outputs of nodes whose kernels write into a given array
   (NHWC float32 convolutions and pools, and the layout transposes and
   channel shuffles the fast paths run as one kernel) get preallocated buffers, shared
   between values whose lifetimes do not overlap; a channel concat of such
   outputs is elided (each producer writes its channel slice of the concat's
   buffer). Values that are, or may be views of, graph outputs are never
   pooled: any node that is not such a writer is assumed to return a view of
   its inputs.

Compilation runs only with the backend's fast paths enabled and a kernel
library; otherwise (and on any failure, reason in the backend's
fallback_reasons["compile"]) the nodes run as built, on the numpy kernels.
Everything compilation makes (fused nodes, packed weights, buffers, the fast
paths' cached calls) lives in the copies of the nodes this returns, held by
the backend's plan; the graph's own nodes are never changed. Compiled plans
keep their buffers, so one plan must not be run re-entrantly.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ...registry import OPS, Op
from .fast.pack import pack_b, pack_conv, round_up
from .fast.paths import NCHW_TO_NHWC, NHWC_TO_NCHW, SMALL_ELEMENTWISE, SMALL_SHUFFLE
from .fast.shared import Planned
from .reference import Step, coerce

CONV_OPS = ("conv2d", "conv2d+relu", "conv2d+clamp")
POOL_OPS = ("maxPool2d", "averagePool2d")


class FusedConv2d(Op):
    """conv2d + relu/clamp as one node. Its numpy kernel is the reference
    composition: conv2d's compute, coerced like any node output, then the
    activation's compute."""

    def __init__(self, activation: str):
        self.name = f"conv2d+{activation}"
        self.activation = activation

    def compute(self, attrs, x, w, bias=None):
        y = OPS["conv2d"].compute(attrs, x, w, bias)
        y = coerce(y, attrs["_conv_out"])
        return attrs["_act_op"].compute(attrs["_act_attrs"], y)


FUSED = {name: FusedConv2d(name) for name in ("relu", "clamp")}


def compile_nodes(cpu, nodes: list, outputs: list) -> list:
    """`cpu`: the CpuBackend compiling (its kernel library packs the weights)."""
    try:
        compiled = _compile(nodes, outputs, cpu.library, cpu.layout_pass)
    except Exception as e:  # noqa: BLE001 - never fail build() over an optimisation
        cpu.decline("compile", f"{type(e).__name__}: {e}")
        return nodes
    cpu.fallback_reasons.pop("compile", None)
    return compiled


def _f32(operand) -> bool:
    return operand is not None and operand.dtype == "float32"


def _copy(node: Step, **attrs) -> Step:
    return Step(node.op, list(node.inputs), list(node.outputs), {**node.attrs, **attrs}, node.label)


def _consumers(nodes) -> dict:
    readers: dict = {}
    for node in nodes:
        for inp in node.inputs:
            if inp is not None:
                readers.setdefault(inp.id, []).append(node)
    return readers


# -- 0. layout -------------------------------------------------------------------
LAYOUT_OPS = ("conv2d",) + POOL_OPS
# Steps whose result, element for element, does not depend on the layout.
LAYOUT_NEUTRAL_UNARY = ("relu", "clamp", "sigmoid", "tanh", "elu", "leakyRelu", "hardSigmoid", "hardSwish",
                        "softplus", "softsign", "gelu", "linear", "identity", "abs", "neg", "exp", "log", "sqrt",
                        "erf", "floor", "ceil", "reciprocal", "sin", "cos")
LAYOUT_NEUTRAL_BINARY = ("add", "sub", "mul", "div", "max", "min", "pow")
TO_NHWC, TO_NCHW = (0, 2, 3, 1), (0, 3, 1, 2)


class _Value:
    """A value the layout pass adds (an NHWC twin): what steps and the plan
    read of an operand (id, data type, shape)."""

    __slots__ = ("id", "dtype", "shape", "kind", "node")

    def __init__(self, vid, dtype, shape):
        self.id = vid
        self.dtype = dtype
        self.shape = tuple(shape)
        self.kind = "output"
        self.node = None


def to_nhwc_layout(steps, output_ids) -> list:
    transpose = OPS["transpose"]
    counter = [0]
    twins: dict = {}  # NCHW operand id -> its NHWC twin (_Value)
    materialised: set = set()  # NCHW values whose NCHW form exists (inputs, constants, kept steps)
    out: list = []

    def new_value(like, perm):
        counter[0] -= 1  # negative ids never meet the builder's
        return _Value(counter[0], like.dtype, tuple(like.shape[p] for p in perm))

    def twin_of(x):
        """The NHWC twin of an NCHW operand, transposing it once if it has none."""
        t = twins.get(x.id)
        if t is None:
            t = twins[x.id] = new_value(x, TO_NHWC)
            out.append(Step(transpose, [x], [t], {"perm": TO_NHWC}, "layout: to nhwc"))
        return t

    def need_nchw(x):
        """Make sure the NCHW form of x exists before a step that reads it."""
        if x is not None and x.id in twins and x.id not in materialised:
            out.append(Step(transpose, [twins[x.id]], [x], {"perm": TO_NCHW}, "layout: to nchw"))
            materialised.add(x.id)

    def is_nchw4(o):
        return _f32(o) and len(o.shape) == 4

    def layout_free(x, y):
        """x may be read as is by a step converted to NHWC: a single element (a scalar
        operand broadcasts the same way in either layout)."""
        return x is not None and x.id not in twins and math.prod(x.shape) == 1 and len(x.shape) <= len(y.shape)

    for step in steps:
        name, ins = step.op.name, step.inputs
        y = step.outputs[0] if len(step.outputs) == 1 else None
        convert = None
        if name == "transpose" and y is not None and is_nchw4(y) and ins[0] is not None:
            perm = tuple(step.attrs.get("perm", ()))
            if perm == TO_NHWC and ins[0].id in twins:
                # NCHW -> NHWC of a value that has its NHWC twin: the twin is the result
                # (an ONNX Runtime graph's own transposes around its NHWC-only ops)
                out.append(Step(OPS["identity"], [twins[ins[0].id]], [y], {}, step.label))
                materialised.add(y.id)
                continue
            if perm == TO_NCHW:
                # NHWC -> NCHW: the input is the result's NHWC twin; the NCHW form is made
                # only if an unconverted step or a graph output reads it
                need_nchw(ins[0])
                twins[y.id] = ins[0]
                continue
        if name in LAYOUT_OPS and step.attrs.get("layout") == "nchw" and is_nchw4(ins[0]) and _f32(y):
            convert = [twin_of(ins[0])] + list(ins[1:]), {**step.attrs, "layout": "nhwc"}
        elif name in LAYOUT_NEUTRAL_UNARY and len(ins) == 1 and ins[0] is not None and ins[0].id in twins and y is not None:
            convert = [twins[ins[0].id]], step.attrs
        elif (name in LAYOUT_NEUTRAL_BINARY and y is not None and len(ins) == 2
              and all(x is not None and x.id in twins for x in ins) and ins[0].shape == ins[1].shape == y.shape):
            convert = [twins[x.id] for x in ins], step.attrs
        elif (name in LAYOUT_NEUTRAL_BINARY and y is not None and len(ins) == 2 and is_nchw4(y)
              and any(x is not None and x.id in twins and tuple(x.shape) == tuple(y.shape) for x in ins)
              and all((x is not None and x.id in twins and tuple(x.shape) == tuple(y.shape)) or layout_free(x, y)
                      for x in ins)):
            convert = [twins[x.id] if x.id in twins else x for x in ins], step.attrs
        elif (name == "concat" and step.attrs.get("axis") == 1 and y is not None and len(y.shape) == 4
              and all(x.id in twins for x in ins)):
            convert = [twins[x.id] for x in ins], {**step.attrs, "axis": 3}
        if convert is None:
            for x in ins:
                need_nchw(x)
            out.append(step)
            for o in step.outputs:
                materialised.add(o.id)
            continue
        new_ins, attrs = convert
        t = twins[y.id] = new_value(y, TO_NHWC)
        out.append(Step(step.op, new_ins, [t], attrs, step.label))
    produced = {o.id: o for s in steps for o in s.outputs}
    for oid in output_ids:
        need_nchw(produced.get(oid))
    return out


# -- 0b. data-movement chains -----------------------------------------------------
MOVE_OPS = ("reshape", "transpose")
# Chains are analysed at build() by pushing indices through them: up to this many elements.
MOVE_CHAIN_MAX_ELEMENTS = 1 << 24


class ChannelShuffle(Op):
    """A chain of reshape/transpose steps whose composition is a channel shuffle
    of the last axis (ShuffleNet's reshape -> transpose -> reshape, after the NHWC
    layout pass also wrapped in the NHWC <-> NCHW transposes): one copy,
    y[..., j * g + i] = x[..., i * (C / g) + j], instead of one per reshape of a
    transposed view. `groups` 1: the chain moves nothing (a reshape)."""

    name = "channelShuffle"

    def compute(self, attrs, x):
        g, shape = attrs["groups"], attrs["shape"]
        if g == 1:
            return x.reshape(shape)
        c = x.shape[-1]
        y = x.reshape(x.shape[:-1] + (g, c // g))
        return np.ascontiguousarray(np.swapaxes(y, -1, -2)).reshape(shape)


CHANNEL_SHUFFLE = ChannelShuffle()


def _as_channel_shuffle(chain) -> int | None:
    """The groups g of the channel shuffle the move steps `chain` compute, or None.
    Decided by running the reference kernels on element indices, so it is exact."""
    x, y = chain[0].inputs[0], chain[-1].outputs[0]
    if tuple(x.shape) != tuple(y.shape) or not x.shape or math.prod(x.shape) > MOVE_CHAIN_MAX_ELEMENTS:
        return None
    try:
        moves = tuple((step.op, tuple(sorted(step.attrs.items()))) for step in chain)
        hash(moves)
    except TypeError:  # an attribute (or op) that is no plain value: not memoised
        return _shuffle_groups.__wrapped__(tuple(x.shape), tuple((s.op, tuple(s.attrs.items())) for s in chain))
    return _shuffle_groups(tuple(x.shape), moves)


# The answer depends only on the input shape and the steps' ops (the registry's, which
# live as long as the engine) and attributes, a pure function of immutable values, so it
# is memoised: ShuffleNet repeats each stage's chain,
# and a client such as ORT builds the same graphs again for every session.
@functools.lru_cache(maxsize=256)
def _shuffle_groups(shape: tuple, moves: tuple) -> int | None:
    n = math.prod(shape)
    v = np.arange(n, dtype=np.int32).reshape(shape)
    for op, attrs in moves:
        v = op.compute(dict(attrs), v)
    idx = np.asarray(v).reshape(-1)
    c = shape[-1]
    # A shuffle in g >= 2 groups puts source channel C/g at channel 1 (j = 0, i = 1 in
    # y[..., j * g + i] = x[..., i * (C / g) + j]): that names the only candidate g, then
    # checked on every element (one candidate, not one full comparison per divisor of C).
    # The identity (g = 1) has 1 there.
    step = int(idx[1]) if c >= 2 else 1
    if step == 1:
        return 1 if np.array_equal(idx, np.arange(n, dtype=np.int32)) else None
    if step < 1 or c % step:
        return None
    g = c // step
    if not 2 <= g < c:
        return None
    # Compared as views: idx seen as [..., C/g, g] against the sources [..., g, C/g] swapped.
    lead = shape[:-1]
    want = np.swapaxes(np.arange(n, dtype=np.int32).reshape(lead + (g, step)), -1, -2)
    return g if np.array_equal(idx.reshape(lead + (step, g)), want) else None


def collapse_moves(nodes, output_ids) -> list:
    """Replace each chain of two or more reshape/transpose steps (inner values read
    by the next step only, no graph outputs) that amounts to a channel shuffle by
    one ChannelShuffle step."""
    readers = _consumers(nodes)
    replace: dict = {}  # id(first step) -> new step; id(other steps) -> None
    taken = set()
    for node in nodes:
        if node.op.name not in MOVE_OPS or id(node) in taken:
            continue
        chain = [node]
        while True:
            y = chain[-1].outputs[0]
            users = readers.get(y.id, [])
            if y.id in output_ids or len(users) != 1 or users[0].op.name not in MOVE_OPS:
                break
            chain.append(users[0])
        if len(chain) < 2:
            continue
        taken.update(id(s) for s in chain)
        g = _as_channel_shuffle(chain)
        if g is None:
            continue
        y = chain[-1].outputs[0]
        replace[id(chain[0])] = Step(CHANNEL_SHUFFLE, [chain[0].inputs[0]], [y],
                                     {"groups": g, "shape": tuple(y.shape)}, chain[-1].label)
        for s in chain[1:]:
            replace[id(s)] = None
    if not replace:
        return nodes
    return [replace.get(id(n), n) for n in nodes if replace.get(id(n), n) is not None]


# -- 0c. channel averages -------------------------------------------------------
class ChannelAverage(Op):
    """pad (zeros, last axis only) -> transpose (0, 2, 3, 1) -> averagePool2d (NHWC, a
    1 x k window, no padding) -> transpose (0, 3, 1, 2): the mean over a window of k
    channels of every pixel (ONNX Runtime's WebNN EP builds LRN's denominator so), as
    one step. Its numpy kernel runs the four steps' reference kernels in turn."""

    name = "channelAverage"

    def compute(self, attrs, x):
        for step in attrs["_steps"]:
            x = coerce(step.op.compute(step.attrs, x), step.outputs[0])
        return x


CHANNEL_AVERAGE = ChannelAverage()


def _channel_average(steps) -> dict | None:
    """{"k", "p0"} when pad, transpose, averagePool2d, transpose `steps` are a channel average."""
    pad, t1, pool, t2 = steps
    x, y = pad.inputs[0], t2.outputs[0]
    if not (_f32(x) and len(x.shape) == 4 and _f32(y)):
        return None
    pads = tuple(tuple(p) for p in pad.attrs["pads"])
    if pad.attrs["mode"] != "constant" or pad.attrs["value"] != 0 or any(p != (0, 0) for p in pads[:3]):
        return None
    if tuple(t1.attrs["perm"]) != TO_NHWC or tuple(t2.attrs["perm"]) != TO_NCHW:
        return None
    a = pool.attrs
    kh, k = a["window"]
    if (a["layout"] != "nhwc" or kh != 1 or tuple(a["strides"]) != (1, 1) or tuple(a["dilations"]) != (1, 1)
            or any(a["padding"]) or k > CHANNEL_AVERAGE_MAX_WINDOW):
        return None
    n, h, w, c = x.shape
    p0, p1 = pads[3]
    if tuple(y.shape) != (n, h, w, c + p0 + p1 - k + 1) or c + p0 + p1 - k + 1 <= 0:
        return None
    return {"k": int(k), "p0": int(p0)}


# numpy's float64 sum over a window of up to 7 taps adds them in order (longer
# rows may be summed pairwise), which is what the kernel does.
CHANNEL_AVERAGE_MAX_WINDOW = 7


def collapse_channel_averages(nodes, output_ids) -> list:
    readers = _consumers(nodes)
    replace: dict = {}
    for node in nodes:
        if node.op.name != "pad":
            continue
        chain, ok = [node], True
        for want in ("transpose", "averagePool2d", "transpose"):
            y = chain[-1].outputs[0]
            users = readers.get(y.id, [])
            if y.id in output_ids or len(users) != 1 or users[0].op.name != want:
                ok = False
                break
            chain.append(users[0])
        if not ok or any(id(s) in replace for s in chain):
            continue
        found = _channel_average(chain)
        if found is None:
            continue
        replace[id(chain[0])] = Step(CHANNEL_AVERAGE, [node.inputs[0]], [chain[-1].outputs[0]],
                                     {**found, "_steps": chain}, chain[-1].label)
        for s in chain[1:]:
            replace[id(s)] = None
    if not replace:
        return nodes
    return [replace.get(id(n), n) for n in nodes if replace.get(id(n), n) is not None]


# -- 1. fusion -----------------------------------------------------------------
def _clamp_bounds(act) -> tuple[float, float] | None:
    if act.op.name == "relu":
        return 0.0, math.inf
    lo, hi = act.attrs.get("min"), act.attrs.get("max")
    return (-math.inf if lo is None else float(lo)), (math.inf if hi is None else float(hi))


def fuse(nodes, output_ids) -> list:
    readers = _consumers(nodes)
    fused_away = set()
    out = []
    for node in nodes:
        if id(node) in fused_away:
            continue
        if node.op.name == "conv2d" and _f32(node.inputs[0]) and _f32(node.outputs[0]):
            y = node.outputs[0]
            users = readers.get(y.id, [])
            if len(users) == 1 and y.id not in output_ids:
                act = users[0]
                if (act.op.name in FUSED and len(act.inputs) == 1 and act.inputs[0] is y
                        and _f32(act.outputs[0])):
                    lo, hi = _clamp_bounds(act)
                    op = FUSED[act.op.name]
                    fused = Step(op, list(node.inputs), list(act.outputs),
                                 {**node.attrs, "_name": op.name, "_lo": lo, "_hi": hi, "_act_op": act.op,
                                  "_act_attrs": act.attrs, "_conv_out": y}, node.label or act.label)
                    fused_away.add(id(act))
                    out.append(fused)
                    continue
        out.append(node)
    return out


# -- 2. weight packing -------------------------------------------------------------
def _const(operand):
    return operand is not None and operand.kind == "constant"


def prepack(nodes, library) -> list:
    out = []
    for node in nodes:
        name = node.op.name
        ins = node.inputs
        if name in CONV_OPS and all(_f32(o) for o in ins[:2]):
            bias = ins[2] if len(ins) > 2 else None
            if _const(ins[1]) and (bias is None or (_const(bias) and _f32(bias))):
                w = np.transpose(ins[1].value, node.attrs["filter_perm"])
                prep = pack_conv(w, None if bias is None else bias.value, node.attrs["groups"], library)
                node = _copy(node, _prep=prep)
        elif name == "matmul" and _const(ins[1]) and _f32(ins[0]) and _f32(ins[1]):
            if len(ins[0].shape) == 2 and len(ins[1].shape) == 2:
                node = _copy(node, _prep=pack_b(ins[1].value, library))
        elif name == "gemm" and _const(ins[1]) and _f32(ins[0]) and _f32(ins[1]):
            b = ins[1].value
            b = b.T if node.attrs["bT"] else b
            node = _copy(node, _prep=pack_b(b, library), **_gemm_bias(node, b.shape[1]))
        out.append(node)
    return out


def _gemm_bias(node, n) -> dict:
    """A constant row-vector C of a gemm with alpha 1 as the kernel's bias
    (`_bias`: beta * C in float32, padded to the panel width), so that the
    kernel adds it after accumulating: exactly the reference's `y + beta * C`."""
    ins = node.inputs
    c = ins[2] if len(ins) > 2 else None
    if c is None or not _const(c) or not _f32(c) or node.attrs["alpha"] != 1.0 or node.attrs["beta"] == 0:
        return {}
    if tuple(c.shape) not in ((), (1,), (n,), (1, 1), (1, n)):
        return {}
    bias = np.zeros(round_up(n), np.float32)
    bias[:n] = np.float32(node.attrs["beta"]) * np.broadcast_to(c.value.reshape(-1), (n,))
    return {"_bias": bias}


# -- 3. buffers ----------------------------------------------------------------------
class _Buffer:
    __slots__ = ("shape", "size", "writers", "start", "end", "slot", "concat", "parts", "pinned")

    def __init__(self, shape, writers):
        self.shape = tuple(shape)
        self.size = int(np.prod(self.shape))
        self.writers = writers  # node indices
        self.start = min(writers)
        self.end = max(writers)
        self.slot = None
        self.concat = None  # index of an elided concat node
        self.parts = {}  # producer node index -> (channel offset, channels)
        self.pinned = False


def _writes_nhwc(node) -> bool:
    name = node.op.name
    if name not in CONV_OPS and name not in POOL_OPS:
        return False
    return node.attrs.get("layout") == "nhwc" and _f32(node.inputs[0]) and _f32(node.outputs[0])


def _moves_into_buffer(node) -> bool:
    """A layout move the fast paths run as one kernel into a given array (fast/paths.py
    transpose, channel_shuffle, on exactly these conditions): a float32 NCHW <-> NHWC
    transpose or a channel shuffle. Its output gets a planned buffer like a conv's, so
    the kernel pool can keep a chain through it in its shared memory (not a concat
    slice: these kernels write contiguous arrays only)."""
    name = node.op.name
    if name not in ("transpose", "channelShuffle") or not (_f32(node.inputs[0]) and _f32(node.outputs[0])):
        return False
    shape = node.inputs[0].shape
    if len(shape) != 4:
        return False
    if name == "transpose":
        perm = node.attrs.get("perm")  # compared as fast/paths.py transpose compares it
        return (perm == NCHW_TO_NHWC or perm == NHWC_TO_NCHW) and math.prod(shape) >= SMALL_ELEMENTWISE
    return node.attrs.get("groups", 1) > 1 and math.prod(shape) >= SMALL_SHUFFLE


def _writes_buffer(node) -> bool:
    return _writes_nhwc(node) or _moves_into_buffer(node)


def plan_buffers(nodes, output_ids) -> list:
    readers = _consumers(nodes)
    producer = {}
    for i, node in enumerate(nodes):
        for o in node.outputs:
            producer[o.id] = i
    buffers: list[_Buffer] = []
    writes = {}  # node index -> buffer (the node writes its output into it)
    absorbed = set()
    # Channel concats of writer outputs that nobody else reads: one buffer, written in place.
    for ci, node in enumerate(nodes):
        if node.op.name != "concat" or not _f32(node.outputs[0]) or len(node.outputs[0].shape) != 4:
            continue
        if node.attrs.get("axis") != 3 or node.outputs[0].id in output_ids:
            continue
        ids = [x.id for x in node.inputs]
        parts, offset = {}, 0
        for x in node.inputs:
            pi = producer.get(x.id)
            if (pi is not None and pi not in absorbed and pi not in parts and _writes_nhwc(nodes[pi])
                    and ids.count(x.id) == 1 and len(readers.get(x.id, [])) == 1 and x.id not in output_ids):
                parts[pi] = (offset, x.shape[3])
            offset += x.shape[3]
        if not parts:
            continue
        buf = _Buffer(node.outputs[0].shape, sorted(parts) + [ci])
        buf.concat = ci
        buf.parts = parts
        buffers.append(buf)
        writes[ci] = buf
        for pi in parts:
            writes[pi] = buf
            absorbed.add(pi)
    for i, node in enumerate(nodes):
        if i not in writes and _writes_buffer(node):
            buf = _Buffer(node.outputs[0].shape, [i])
            buffers.append(buf)
            writes[i] = buf
    if not buffers:
        return nodes
    # Which buffers each value may reference (conservatively: any other node may return views).
    alias: dict = {}
    last_use: dict = {}
    for i, node in enumerate(nodes):
        ins = [x for x in node.inputs if x is not None]
        for x in ins:
            last_use[x.id] = i
        if i in writes:
            refs = {id(writes[i])}
        else:
            refs = set()
            for x in ins:
                refs |= alias.get(x.id, set())
        for o in node.outputs:
            alias[o.id] = refs
    by_id = {id(b): b for b in buffers}
    for oid in output_ids:
        for bid in alias.get(oid, ()):
            by_id[bid].pinned = True
    for oid, refs in alias.items():
        for bid in refs:
            b = by_id[bid]
            b.end = max(b.end, last_use.get(oid, b.start))
    live = [b for b in buffers if not b.pinned]
    # Slots: greedy over the schedule, best fit among free slots.
    slots: list[int] = []  # capacity in floats
    free: list[int] = []
    starts: dict = {}
    ends: dict = {}
    for b in live:
        starts.setdefault(b.start, []).append(b)
        ends.setdefault(b.end, []).append(b)
    for i in range(len(nodes)):
        for b in starts.get(i, ()):
            fits = [s for s in free if slots[s] >= b.size]
            if fits:
                s = min(fits, key=lambda s: slots[s])
            elif free:
                s = max(free, key=lambda s: slots[s])
                slots[s] = b.size
            else:
                s = len(slots)
                slots.append(b.size)
                free.append(s)
            free.remove(s)
            b.slot = s
        for b in ends.get(i, ()):
            free.append(b.slot)
    arrays = [np.empty(cap, np.float32) for cap in slots]
    new_attrs: dict = {}
    produced: dict = {}  # operand id -> the array its producer writes (when planned)
    for b in live:
        arr = arrays[b.slot][:b.size].reshape(b.shape)
        if b.concat is None:
            new_attrs[b.writers[0]] = {"_out": arr}
            produced[nodes[b.writers[0]].outputs[0].id] = arr
            continue
        views, offset = [], 0
        for x in nodes[b.concat].inputs:
            views.append(arr[..., offset:offset + x.shape[3]])
            offset += x.shape[3]
        new_attrs[b.concat] = {"_inplace": (arr, views)}
        produced[nodes[b.concat].outputs[0].id] = arr
        ids = [x.id for x in nodes[b.concat].inputs]
        for pi in b.parts:
            # The very view object the concat checks its input against.
            new_attrs[pi] = {"_out": views[ids.index(nodes[pi].outputs[0].id)]}
    # Tell each writer which array its input will be when its producer ran
    # its kernel, so that the call can reuse the input's address.
    for i, node in enumerate(nodes):
        if _writes_buffer(node) and node.inputs[0].id in produced:
            new_attrs.setdefault(i, {})["_x"] = produced[node.inputs[0].id]
    _plan_images(nodes, live, new_attrs, produced)
    return [_copy(node, **new_attrs[i]) if i in new_attrs else node for i, node in enumerate(nodes)]


def _plan_images(nodes, live, new_attrs, produced) -> None:
    """Tell the kernels that write each planned buffer who reads it (`_planned`, a
    fast.shared.Planned; a kernel pool keeps the buffer's image in its shared memory
    for them): how many compiled pool kernels (a conv with packed weights or a pool,
    reading it as their input), and whether anything else
    does (then the image is copied out into the numpy array; otherwise the numpy
    array is never filled). A concat buffer whose every slice such a kernel writes
    gets an image of its own, written slice by slice (`slices`)."""
    consumers: dict = {}
    for i, node in enumerate(nodes):
        for x in node.inputs:
            if x is not None:
                consumers.setdefault(x.id, []).append(i)

    def pool_kernel(i) -> bool:
        node = nodes[i]
        if not _writes_buffer(node):
            return False
        if node.op.name in CONV_OPS:
            return node.attrs.get("_prep") is not None
        return "_out" in new_attrs.get(i, {}) or "_x" in new_attrs.get(i, {})

    def planned(vid, arr, slices=0):
        readers = consumers.get(vid, [])
        pool_readers = [i for i in readers if pool_kernel(i) and node_reads_once(nodes[i], vid)]
        return Planned(arr, len(pool_readers), len(pool_readers) != len(readers), slices)

    for b in live:
        if b.concat is None:
            w = b.writers[0]
            if pool_kernel(w):
                vid = nodes[w].outputs[0].id
                new_attrs[w]["_planned"] = planned(vid, produced[vid])
            continue
        concat = nodes[b.concat]
        vid = concat.outputs[0].id
        if len(b.parts) != len(concat.inputs) or not all(pool_kernel(pi) for pi in b.parts):
            # a slice some other step writes: no image written slice by slice (fast/paths.py
            # scatters), but the first pool kernel that reads the buffer may leave one
            new_attrs[b.concat]["_planned"] = planned(vid, produced[vid])
            continue
        spec = planned(vid, produced[vid], len(b.parts))
        new_attrs[b.concat]["_planned"] = spec
        for pi in b.parts:
            new_attrs[pi]["_planned"] = spec
    # Each pool kernel that reads a planned buffer: its Planned (the first one to copy
    # the buffer in, when its writer ran outside the pool, leaves it as the image).
    by_buf = {}
    for attrs in new_attrs.values():
        spec = attrs.get("_planned")
        if spec is not None:
            by_buf[id(spec.buf)] = spec
    for i, attrs in new_attrs.items():
        x = attrs.get("_x")
        if x is not None and id(x) in by_buf and pool_kernel(i):
            attrs["_x_planned"] = by_buf[id(x)]


def node_reads_once(node, vid) -> bool:
    """The node reads value `vid` as its first input and nowhere else."""
    ids = [x.id for x in node.inputs if x is not None]
    return ids[0] == vid and ids.count(vid) == 1


def _compile(nodes, outputs, library, layout=True) -> list:
    output_ids = {o.id for o in outputs}
    if layout:
        nodes = to_nhwc_layout(nodes, output_ids)
    nodes = collapse_moves(nodes, output_ids)
    nodes = collapse_channel_averages(nodes, output_ids)
    nodes = fuse(nodes, output_ids)
    nodes = prepack(nodes, library)
    return plan_buffers(nodes, output_ids)
