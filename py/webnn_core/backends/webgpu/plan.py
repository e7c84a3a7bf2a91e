"""The WebGPU planner: a built graph -> a plain-data GPU plan.

    slots     every buffer the plan binds: graph inputs and outputs (bound to
              the MLTensors' buffers at dispatch), constants (written once at
              build) and temporaries (reused once their last reader ran)
    shaders   WGSL sources, one per distinct kernel text
    steps     compute passes in order: shader index, slot per binding, and
              workgroup counts

Each node becomes the steps of its op family's template (kernels/); a
conv2d/matmul/gemm/element-wise node whose only reader is an element-wise
unary op takes it as its epilogue, and so on down a chain (one shader, no
buffers between). A node without a WGSL
kernel (op or data type) raises Decline: the backend then runs the whole
graph on its cpu fallback and says so in its stats."""
from __future__ import annotations

from collections import Counter

import numpy as np

from ...dtypes import contiguous_bytes

from .kernels import ACTIVATIONS, ELEMENTWISE, KERNELS, Call, Decline, Derived, Literal, Scratch
from .kernels.copy import flat_copy
from .kernels.elementwise import with_helpers
from .kernels.packing import WIDE, Wide, int64_mode, pack, takes_packed, unpack
from .wgsl import BUFFER_TYPES, OUTPUT_TYPES, buffer_bytes

WIDE_NUMPY = {"float32": np.float32, "int32": np.int32, "uint32": np.uint32}

# Ops whose kernels take an element-wise epilogue (kernels/elementwise.activation_fn).
FUSABLE = {"conv2d", "convTranspose2d", "matmul", "gemm", *ELEMENTWISE}


class GpuPlan:
    """The plan as plain data (`to_json()` is what the JS shim executes), plus
    what the backend needs at dispatch: which slots are the graph's inputs and
    outputs, the constants to upload, and the op census for the stats."""

    def __init__(self):
        self.slots: list = []  # {"bytes": n, "kind": "input" | "output" | "constant" | "temp", "name": ...}
        self.shaders: list = []
        self._shader_index: dict = {}
        self.steps: list = []  # [shader index, [slot, ...], [x, y, z], label]
        self.inputs: dict = {}  # name -> slot
        self.outputs: dict = {}  # name -> slot
        self.constants: dict = {}  # slot -> numpy array
        self.ops: Counter = Counter()  # op name -> nodes run on the GPU (fused ones included)
        self.kernels: Counter = Counter()  # kernel variant ("conv2d.tiled", ...) -> steps
        self.fused: int = 0

    def slot(self, nbytes: int, kind: str, name=None) -> int:
        self.slots.append({"bytes": int(nbytes), "kind": kind, "name": name})
        return len(self.slots) - 1

    def shader(self, text: str) -> int:
        if text not in self._shader_index:
            self._shader_index[text] = len(self.shaders)
            self.shaders.append(text)
        return self._shader_index[text]

    @property
    def io(self) -> list:
        """The slots bound per dispatch, in order: inputs, then outputs."""
        return [*self.inputs.values(), *self.outputs.values()]

    def to_json(self, buffer_ids: dict) -> dict:
        """What JS executes: `buffer_ids` maps constant/temp slots to the
        buffers the backend created; io slots are -1 - (position in `io`)."""
        io = {s: -1 - k for k, s in enumerate(self.io)}
        slots = [io[s] if s in io else buffer_ids[s] for s in range(len(self.slots))]
        return {"slots": slots, "shaders": self.shaders,
                "steps": [[sh, bindings, dispatch] for sh, bindings, dispatch, _ in self.steps],
                "labels": [label for *_, label in self.steps]}


def nbytes(operand) -> int:
    return buffer_bytes(operand.dtype, operand.shape)


def widen(node, op: str, outputs: list):
    """The node's operands as its kernel takes them: packed-type operands
    (kernels/packing.py) become Wide views unless the kernel takes them
    packed. Returns (inputs, outputs, unpack steps, pack steps)."""
    views: dict = {}

    def view(operand, position):
        if operand is None or operand.dtype not in WIDE or takes_packed(op, position, operand):
            return operand
        if operand.id not in views:
            views[operand.id] = Wide(operand, int64_mode(node, op, position, operand))
        return views[operand.id]

    inputs = [view(o, k) for k, o in enumerate(node.inputs)]
    before = [unpack(o, v) for o, v in {id(v): (o, v) for o, v in zip(node.inputs, inputs)
                                        if isinstance(v, Wide) and v.kind != "constant"}.values()]
    outs = [view(o, "out") for o in outputs]
    after = [pack(v, o) for o, v in zip(outputs, outs) if isinstance(v, Wide)]
    return inputs, outs, before, after


def plan_graph(graph, limits: dict, options: dict | None = None) -> GpuPlan:
    """Plan `graph` for the GPU within the device's `limits`, or raise Decline(reason).
    `options`: the kernel choices (Call.options), e.g. {"conv2d": "tiled"}."""
    plan = GpuPlan()
    slot_of: dict = {}  # operand id -> slot
    for name, operand in graph.inputs.items():
        if operand.dtype not in BUFFER_TYPES:
            raise Decline(f"input '{name}' is {operand.dtype} (the WGSL kernels take {', '.join(BUFFER_TYPES)})")
        slot_of[operand.id] = plan.inputs[name] = plan.slot(nbytes(operand), "input", name)
    output_names: dict = {}
    for name, operand in graph.outputs.items():
        if operand.dtype not in OUTPUT_TYPES:
            raise Decline(f"output '{name}' is {operand.dtype} (a GPU graph's outputs may be {', '.join(OUTPUT_TYPES)})")
        plan.outputs[name] = plan.slot(nbytes(operand), "output", name)
        output_names.setdefault(operand.id, []).append(name)

    readers: dict = {}
    for node in graph.nodes:
        for inp in node.inputs:
            if inp is not None:
                readers.setdefault(inp.id, []).append(node)
    last_read = {}
    for i, node in enumerate(graph.nodes):
        for inp in node.inputs:
            if inp is not None:
                last_read[inp.id] = i

    free: list = []  # temp slots whose value is dead: (bytes, slot)

    def slot_for(operand) -> int:
        if operand.id in slot_of:
            return slot_of[operand.id]
        if operand.kind == "constant":
            if operand.dtype not in BUFFER_TYPES:
                raise Decline(f"a constant is {operand.dtype} (the WGSL kernels take {', '.join(BUFFER_TYPES)})")
            if isinstance(operand, Derived):
                source = operand.source
                value = graph.constants[source.source.id if isinstance(source, Wide) else source.id]
                array = np.ascontiguousarray(operand.transform(np.asarray(value, np.float32)), np.float32)
                s = plan.slot(buffer_bytes("float32", array.shape), "constant")
                plan.constants[s] = array
                slot_of[operand.id] = s
                return s
            s = plan.slot(nbytes(operand), "constant")
            if isinstance(operand, Literal):
                plan.constants[s] = operand.array
            elif isinstance(operand, Wide):  # uploaded wide, converted once on the host
                value = graph.constants[operand.source.id]
                if operand.mode == "saturate":
                    info = np.iinfo(WIDE_NUMPY[operand.dtype])
                    value = np.clip(value, info.min, info.max)
                plan.constants[s] = value.astype(WIDE_NUMPY[operand.dtype])
            elif operand.dtype in ("int4", "uint4"):  # the core holds them one per byte
                plan.constants[s] = contiguous_bytes(operand.dtype, graph.constants[operand.id])
            else:
                plan.constants[s] = graph.constants[operand.id]
        elif operand.id in output_names:
            s = plan.outputs[output_names[operand.id][0]]
        else:
            need = nbytes(operand)
            fits = sorted((b, s) for b, s in free if b >= need)
            if fits:
                free.remove(fits[0])
                s = fits[0][1]
            else:
                s = plan.slot(need, "temp")
        slot_of[operand.id] = s
        return s

    skip = set()
    for i, node in enumerate(graph.nodes):
        if id(node) in skip:
            continue
        op = node.op.name
        template = KERNELS.get(op)
        if template is None:
            raise Decline(f"{op} has no WGSL kernel")
        outputs = list(node.outputs)
        activation, absorbed = [], []
        # A chain of element-wise unary ops, each the only reader of the value
        # before it, becomes this node's epilogue: one shader, no buffers between.
        # (Not on int8/uint8 values: they wrap to 8 bits after every op; nor on 64-bit ones.)
        while op in FUSABLE and len(outputs) == 1 and outputs[0].id not in output_names \
                and outputs[0].dtype not in ("int8", "uint8", "int64", "uint64"):
            after = readers.get(outputs[0].id, [])
            if not (len(after) == 1 and after[0].op.name in ACTIVATIONS and after[0].inputs[0] is outputs[0]):
                break
            act = after[0]
            activation.append((act.op.name, act.kernel_params()))
            absorbed.append(outputs[0].id)
            outputs = list(act.outputs)
            skip.add(id(act))
            plan.ops[act.op.name] += 1
            plan.fused += 1
        inputs, views, unpacks, packs = widen(node, op, outputs)
        call = Call(op, node.kernel_params(), inputs, views, node.label, activation, options)
        steps = [*unpacks, *template(call), *packs]
        # Inputs get their slots before the outputs take free ones (constants get theirs when a
        # step binds them: a template may bind a Derived form instead).
        for o, v in zip(node.inputs, inputs):
            if o is not None and o.kind != "constant":
                slot_for(v if isinstance(v, Wide) and v.kind == "constant" else o)
        scratch: dict = {}  # id(Scratch) -> slot, for this node's steps
        for step in steps:
            bindings = []
            for b in step.bindings:
                if isinstance(b, Scratch):
                    if id(b) not in scratch:
                        scratch[id(b)] = plan.slot(b.nbytes, "temp")
                    bindings.append(scratch[id(b)])
                else:
                    bindings.append(slot_for(b))
            plan.steps.append([plan.shader(with_helpers(step.wgsl)), bindings, step.dispatch, node.label or op])
            if step.kernel:
                plan.kernels[step.kernel] += 1
        plan.ops[op] += 1
        # Values read for the last time here free their temp slots.
        done = {o.id for o in node.inputs if o is not None and last_read.get(o.id) == i}
        done.update(absorbed)
        done.update(v.id for v in [*inputs, *views] if isinstance(v, Wide) and v.kind != "constant")
        free.extend((plan.slots[s]["bytes"], s) for s in scratch.values())
        for oid in done:
            s = slot_of.get(oid)
            if s is not None and plan.slots[s]["kind"] == "temp":
                free.append((plan.slots[s]["bytes"], s))
                if isinstance(oid, tuple):  # a node's wide view: the next node makes its own
                    del slot_of[oid]
    # An operand named as several outputs: copy it into the others.
    for oid, names in output_names.items():
        if oid not in slot_of:
            raise Decline("a graph output that no node computes")
        for name in names[1:]:
            op_out = next(o for o in graph.outputs.values() if o.id == oid)
            step = flat_copy(op_out, op_out)
            plan.steps.append([plan.shader(step.wgsl), [slot_of[oid], plan.outputs[name]], step.dispatch, name])
    check_limits(plan, limits)
    return plan


def check_limits(plan: GpuPlan, limits: dict) -> None:
    biggest = max((s["bytes"] for s in plan.slots), default=0)
    if biggest > limits["maxStorageBufferBindingSize"]:
        raise Decline(f"a {biggest}-byte buffer exceeds the device's maxStorageBufferBindingSize "
                      f"({limits['maxStorageBufferBindingSize']})")
    for _, bindings, dispatch, label in plan.steps:
        if len(bindings) > limits["maxStorageBuffersPerShaderStage"]:
            raise Decline(f"{label}: {len(bindings)} storage buffers exceed the device's limit")
        if max(dispatch) > limits["maxComputeWorkgroupsPerDimension"]:
            raise Decline(f"{label}: {max(dispatch)} workgroups exceed the device's limit")
