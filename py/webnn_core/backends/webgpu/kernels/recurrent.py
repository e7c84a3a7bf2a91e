"""gru, gruCell, lstm, lstmCell as a sequence of GPU steps.

A time step is one dispatch (two for GRU: its reset gate must be known for
every unit before the candidate state reads r * h): one thread per (batch,
hidden unit) computes that unit's gates from x·Wᵀ and h·Rᵀ dot products.
The hidden state is double-buffered between steps (a step reads all of h),
the cell state is updated in place (each thread owns its element). bias,
recurrentBias and peepholeWeight are gathered into one parameter buffer
first (so a step binds at most 8 buffers); the step's time index and
direction come from a small Literal buffer, so all steps share one shader.
Numerics: f32 throughout (the numpy kernels use float64 and round once).
Sequences are time-aligned as in the numpy kernels: seq[t] is the state
produced for input step t in every direction."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Decline, Literal, Scratch, Step
from .elementwise import unary_expr

PEEPHOLE = {"i": 0, "o": 1, "f": 2}


def _copy(src, dst, n: int, src_offset: int = 0, dst_offset: int = 0) -> Step:
    """dst[dst_offset + k] = src[src_offset + k] for k < n (offsets in a Literal)."""
    d = wgsl.dispatch_1d(n)
    body = "  y[at_[1] + i] = x_[at_[0] + i];"
    text = "\n".join([wgsl.header([("x_", "u32", False), ("at_", "u32", False), ("y", "u32", True)]),
                      wgsl.elementwise_main(n, body, d)])
    return Step(text, [src, Literal([src_offset, dst_offset]), dst], d)


def _zero(dst, n: int) -> Step:
    d = wgsl.dispatch_1d(n)
    text = "\n".join([wgsl.header([("y", "u32", True)]), wgsl.elementwise_main(n, "  y[i] = 0u;", d)])
    return Step(text, [dst], d)


class _Shape:
    """What every step kernel bakes in: sizes, gate blocks, which parameters exist."""

    def __init__(self, call: Call, gates_count: int, x, bias, rbias, peephole, batch, hidden, steps, nd):
        self.g = gates_count
        self.batch, self.hidden, self.steps, self.nd = batch, hidden, steps, nd
        self.input_size = x.shape[-1]
        self.gates = call.attrs["gates"]
        self.bias, self.rbias, self.peephole = bias is not None, rbias is not None, peephole is not None
        gh = gates_count * hidden
        # Per direction, the parameter buffer holds [bias (GH) | recurrentBias (GH) | peephole (3H)].
        self.param_stride = 2 * gh + 3 * hidden
        self.has_params = self.bias or self.rbias or self.peephole
        self.acts = [unary_expr(a, {}, "float32") for a in call.attrs["activations"]]

    def params_steps(self, bias, rbias, peephole, params) -> list:
        gh = self.g * self.hidden
        steps = []
        for operand, offset, size in ((bias, 0, gh), (rbias, gh, gh), (peephole, 2 * gh, 3 * self.hidden)):
            if operand is not None:
                for d in range(self.nd):
                    steps.append(_copy(operand, params, size, d * size, d * self.param_stride + offset))
        return steps

    def pre(self, name: str, hidden_from: str = "h_") -> str:
        """WGSL computing the pre-activation `pre_<name>` of gate `name` for unit j
        (x·W row + bias, and h·R row + recurrent bias unless hidden_from is None)."""
        k = self.gates[name]
        gh, h, size = self.g * self.hidden, self.hidden, self.input_size
        lines = [f"  var pre_{name} = 0.0;",
                 f"  for (var q = 0u; q < {size}u; q = q + 1u) {{ pre_{name} = pre_{name} + "
                 f"x_[xo + q] * w_[(wo + {k * h}u + j) * {size}u + q]; }}"]
        if self.bias:
            lines.append(f"  pre_{name} = pre_{name} + p_[po + {k * h}u + j];")
        if hidden_from is not None:
            lines.append(f"  for (var q = 0u; q < {h}u; q = q + 1u) {{ pre_{name} = pre_{name} + "
                         f"{hidden_from}[ho + q] * r_[(wo + {k * h}u + j) * {h}u + q]; }}")
            if self.rbias:
                lines.append(f"  pre_{name} = pre_{name} + p_[po + {gh + k * h}u + j];")
        return "\n".join(lines)

    def prologue(self) -> str:
        """Indices of this thread's unit: batch row b, unit j; the step's input row
        xo, weight row base wo (direction d), state row ho, parameter base po."""
        return (f"  let t = at_[0];\n  let d = at_[1];\n  let b = i / {self.hidden}u;\n  let j = i % {self.hidden}u;\n"
                f"  let xo = (t * {self.batch}u + b) * {self.input_size}u;\n"
                f"  let wo = d * {self.g * self.hidden}u;\n  let ho = b * {self.hidden}u;\n"
                f"  let po = d * {self.param_stride}u;")

    def act(self, k: int, value: str) -> str:
        return f"act{k}_({value})"

    def act_fns(self) -> str:
        return "\n".join(f"fn act{k}_(x: f32) -> f32 {{ return {e}; }}" for k, e in enumerate(self.acts))


def _lstm_step(s: _Shape, x, w, r, params, h_in, h_out, c, at) -> Step:
    n = s.batch * s.hidden
    d = wgsl.dispatch_1d(n)
    lines = [s.prologue(), "  let c_prev = c_[i];"]
    for name in ("i", "f", "g", "o"):
        lines.append(s.pre(name))
        if s.peephole and name in PEEPHOLE:
            lines.append(f"  pre_{name} = pre_{name} + c_prev * p_[po + {2 * s.g * s.hidden + PEEPHOLE[name] * s.hidden}u + j];")
    lines += [f"  let gi = {s.act(0, 'pre_i')};", f"  let gf = {s.act(0, 'pre_f')};", f"  let go = {s.act(0, 'pre_o')};",
              f"  let gg = {s.act(1, 'pre_g')};", "  let c_next = gf * c_prev + gi * gg;", "  c_[i] = c_next;",
              f"  y[i] = go * {s.act(2, 'c_next')};"]
    bindings = [("x_", "f32", False), ("w_", "f32", False), ("r_", "f32", False)]
    operands = [x, w, r]
    if s.has_params:
        bindings.append(("p_", "f32", False))
        operands.append(params)
    bindings += [("h_", "f32", False), ("at_", "u32", False), ("c_", "f32", True), ("y", "f32", True)]
    operands += [h_in, at, c, h_out]
    text = "\n".join([wgsl.header(bindings), s.act_fns(), wgsl.elementwise_main(n, "\n".join(lines), d)])
    return Step(text, operands, d)


def _gru_steps(s: _Shape, call: Call, x, w, r, params, h_in, h_out, zr, at) -> list:
    """Phase 1: z and r of every unit into `zr` ([B, 2H]); phase 2: the candidate n and h'."""
    n = s.batch * s.hidden
    d = wgsl.dispatch_1d(n)
    h = s.hidden
    common = [("x_", "f32", False), ("w_", "f32", False), ("r_", "f32", False)]
    operands = [x, w, r]
    if s.has_params:
        common.append(("p_", "f32", False))
        operands.append(params)
    one = [s.prologue(), s.pre("z"), s.pre("r"),
           f"  zr_[b * {2 * h}u + j] = {s.act(0, 'pre_z')};", f"  zr_[b * {2 * h}u + {h}u + j] = {s.act(0, 'pre_r')};"]
    text1 = "\n".join([wgsl.header([*common, ("h_", "f32", False), ("at_", "u32", False), ("zr_", "f32", True)]),
                       s.act_fns(), wgsl.elementwise_main(n, "\n".join(one), d)])
    k = s.gates["n"]
    gh = s.g * h
    rb = f" + p_[po + {gh + k * h}u + j]" if s.rbias else ""
    two = [s.prologue(), f"  let z = zr_[b * {2 * h}u + j];", f"  let rr = zr_[b * {2 * h}u + {h}u + j];",
           s.pre("n", hidden_from=None)]
    if call.attrs["reset_after"]:
        two += ["  var hn = 0.0;",
                f"  for (var q = 0u; q < {h}u; q = q + 1u) {{ hn = hn + h_[ho + q] * r_[(wo + {k * h}u + j) * {h}u + q]; }}",
                f"  pre_n = pre_n + rr * (hn{rb});"]
    else:  # (r * h)·Rnᵀ: every unit's r, hence phase 1
        two += [f"  for (var q = 0u; q < {h}u; q = q + 1u) {{ pre_n = pre_n + zr_[b * {2 * h}u + {h}u + q] * h_[ho + q]"
                f" * r_[(wo + {k * h}u + j) * {h}u + q]; }}",
                f"  pre_n = pre_n{rb};"]
    two += [f"  let nn = {s.act(1, 'pre_n')};", "  y[i] = z * h_[ho + j] + (1.0 - z) * nn;"]
    text2 = "\n".join([wgsl.header([*common, ("h_", "f32", False), ("at_", "u32", False), ("zr_", "f32", False),
                                    ("y", "f32", True)]), s.act_fns(), wgsl.elementwise_main(n, "\n".join(two), d)])
    return [Step(text1, [*operands, h_in, at, zr], d), Step(text2, [*operands, h_in, at, zr, h_out], d)]


def _check(call: Call) -> None:
    call.require(("float32",))


def recurrent(call: Call) -> list:
    """gru and lstm: the whole sequence, direction by direction."""
    _check(call)
    is_lstm = call.op == "lstm"
    if is_lstm:
        x, w, r, bias, rbias, peephole, h0, c0 = call.inputs
    else:
        x, w, r, bias, rbias, h0 = call.inputs
        peephole = c0 = None
    steps, batch, _ = x.shape
    hidden, nd = call.attrs["hidden"], call.attrs["directions"]
    s = _Shape(call, 4 if is_lstm else 3, x, bias, rbias, peephole, batch, hidden, steps, nd)
    state = batch * hidden
    bytes_ = 4 * state
    params = Scratch(4 * nd * s.param_stride) if s.has_params else None
    h_bufs = [Scratch(bytes_), Scratch(bytes_)]
    c = Scratch(bytes_) if is_lstm else None
    zr = None if is_lstm else Scratch(2 * bytes_)
    h_last = call.outputs[0]
    c_last = call.outputs[1] if is_lstm else None
    seq = call.outputs[2 if is_lstm else 1] if call.attrs["sequence"] else None
    out = s.params_steps(bias, rbias, peephole, params) if s.has_params else []
    for dd in range(nd):
        out.append(_copy(h0, h_bufs[0], state, dd * state) if h0 is not None else _zero(h_bufs[0], state))
        if is_lstm:
            out.append(_copy(c0, c, state, dd * state) if c0 is not None else _zero(c, state))
        backward = call.attrs["direction"] == "backward" or dd == 1
        cur = 0
        for k in range(steps):
            t = steps - 1 - k if backward else k
            at = Literal([t, dd])
            if is_lstm:
                out.append(_lstm_step(s, x, w, r, params, h_bufs[cur], h_bufs[1 - cur], c, at))
            else:
                out += _gru_steps(s, call, x, w, r, params, h_bufs[cur], h_bufs[1 - cur], zr, at)
            cur = 1 - cur
            if seq is not None:
                out.append(_copy(h_bufs[cur], seq, state, 0, (t * nd + dd) * state))
        out.append(_copy(h_bufs[cur], h_last, state, 0, dd * state))
        if is_lstm:
            out.append(_copy(c, c_last, state, 0, dd * state))
    return out


def cell(call: Call) -> list:
    """gruCell and lstmCell: one step (the sequence kernels with steps = 1)."""
    _check(call)
    is_lstm = call.op == "lstmCell"
    if is_lstm:
        x, w, r, h, c, bias, rbias, peephole = call.inputs
    else:
        x, w, r, h, bias, rbias = call.inputs
        c = peephole = None
    batch, _ = x.shape
    hidden = call.attrs["hidden"]
    s = _Shape(call, 4 if is_lstm else 3, x, bias, rbias, peephole, batch, hidden, 1, 1)
    state = batch * hidden
    params = Scratch(4 * s.param_stride) if s.has_params else None
    out = s.params_steps(bias, rbias, peephole, params) if s.has_params else []
    at = Literal([0, 0])
    if is_lstm:
        h_out, c_out = call.outputs
        out.append(_copy(c, c_out, state))  # updated in place
        out.append(_lstm_step(s, x, w, r, params, h, h_out, c_out, at))
    else:
        out += _gru_steps(s, call, x, w, r, params, h, call.outputs[0], Scratch(8 * state), at)
    if any(o is None for o in call.outputs):  # pragma: no cover - every output is computed
        raise Decline(f"{call.op}: an output without a value")
    return out


KERNELS = {"gru": recurrent, "lstm": recurrent, "gruCell": cell, "lstmCell": cell}
