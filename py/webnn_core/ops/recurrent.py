"""gru, gruCell, lstm, lstmCell (SPEC §7.7.20-21, 7.7.28-29), computed in
float64 and rounded once. Returned sequences are time-aligned: seq[t] is the
state produced for input step t in every direction (what WPT expects; the
SPEC's decomposition concatenates in processing order, digest §1.1)."""
from __future__ import annotations

import numpy as np

from ..registry import Inferred, Op, check, register
from ._common import FLOAT, check_same_dtype
from ._window import MAX_UINT32


def _sigmoid(v):
    with np.errstate(over="ignore"):  # exp(-v) -> inf gives the right limit, 0
        return 1.0 / (1.0 + np.exp(-v))


ACTIVATIONS = {"relu": lambda v: np.maximum(v, 0.0), "sigmoid": _sigmoid, "tanh": np.tanh}
# Row block of each gate in the weight/bias tensors, per layout.
GRU_GATES = {"zrn": {"z": 0, "r": 1, "n": 2}, "rzn": {"r": 0, "z": 1, "n": 2}}
LSTM_GATES = {"iofg": {"i": 0, "o": 1, "f": 2, "g": 3}, "ifgo": {"i": 0, "f": 1, "g": 2, "o": 3}}
PEEPHOLE = {"i": 0, "o": 1, "f": 2}  # peepholeWeight is always i, o, f
DIRECTIONS = ("forward", "backward", "both")


# -- validation helpers ---------------------------------------------------------
def _check_hidden_size(hidden_size, gates):
    check(hidden_size >= 1, "hiddenSize must be > 0")
    # Some platforms concatenate bias and recurrentBias: 2 * gates * H must be a valid dimension.
    check(2 * gates * hidden_size <= MAX_UINT32, f"hiddenSize {hidden_size} is too large")


def _check_shape(operand, shape, what):
    if operand is None:
        return
    shape = tuple(shape)
    check(len(operand.shape) == len(shape), f"{what} must be {len(shape)}-D, got shape {list(operand.shape)}")
    check(operand.shape == shape, f"{what} must have shape {list(shape)}, got {list(operand.shape)}")


def _check_activations(activations, default):
    if activations is None:
        return list(default)
    activations = list(activations)
    check(len(activations) == len(default), f"activations must have {len(default)} entries, got {len(activations)}")
    for a in activations:
        check(a in ACTIVATIONS, f"unknown activation {a!r}")
    return activations


def _check_direction(direction):
    check(direction in DIRECTIONS, f"unknown direction {direction!r}")
    return 2 if direction == "both" else 1


def _f64(a):
    return None if a is None else a.astype(np.float64)


# -- reference cells (float64, one direction, one step) -------------------------
def _gate(m, gates, name, hidden):
    k = gates[name]
    return m[..., k * hidden:(k + 1) * hidden]


def gru_cell(x_proj, h, r_weight, r_bias, hidden, gates, reset_after, act):
    """One GRU step given x·Wᵀ + bias (`x_proj`, [B, 3H]) and the state h [B, H]."""
    h_proj = h @ r_weight.T
    if r_bias is not None:
        h_proj = h_proj + r_bias
    f, g = ACTIVATIONS[act[0]], ACTIVATIONS[act[1]]
    z = f(_gate(x_proj, gates, "z", hidden) + _gate(h_proj, gates, "z", hidden))
    r = f(_gate(x_proj, gates, "r", hidden) + _gate(h_proj, gates, "r", hidden))
    if reset_after:
        n = g(_gate(x_proj, gates, "n", hidden) + r * _gate(h_proj, gates, "n", hidden))
    else:
        rn = _gate(r_weight.T, gates, "n", hidden)  # [H, H] block of Rᵀ
        n_pre = _gate(x_proj, gates, "n", hidden) + (r * h) @ rn
        if r_bias is not None:
            n_pre = n_pre + _gate(r_bias, gates, "n", hidden)
        n = g(n_pre)
    return z * h + (1.0 - z) * n


def lstm_cell(x_proj, h, c, r_weight, r_bias, peephole, hidden, gates, act):
    """One LSTM step given x·Wᵀ + bias (`x_proj`, [B, 4H]); returns (h', c').
    The output gate's peephole reads the previous cell state, as in the SPEC."""
    pre = x_proj + h @ r_weight.T
    if r_bias is not None:
        pre = pre + r_bias
    f0, f1, f2 = (ACTIVATIONS[a] for a in act)

    def gate(name):
        v = _gate(pre, gates, name, hidden)
        if peephole is not None and name in PEEPHOLE:
            k = PEEPHOLE[name]
            v = v + c * peephole[k * hidden:(k + 1) * hidden]
        return v

    i, f, o = f0(gate("i")), f0(gate("f")), f0(gate("o"))
    g = f1(gate("g"))
    c_next = f * c + i * g
    return o * f2(c_next), c_next


def _project(x, weight, bias):
    """x·Wᵀ (+ bias) for every step at once: [..., B, I] -> [..., B, gates·H]."""
    y = x @ weight.T
    return y if bias is None else y + bias


def _step_order(direction, d, steps):
    backward = direction == "backward" or d == 1
    return range(steps - 1, -1, -1) if backward else range(steps)


# -- ops ---------------------------------------------------------------------
def _check_sequence_operands(input, weight, recurrentWeight, bias, recurrentBias, steps, hidden_size,
                             gates, direction):
    """The checks gru and lstm share: steps, hidden size, the 3-D input and the
    per-direction weight and bias shapes. Returns (directions, batch)."""
    check(steps >= 1, "steps must be > 0")
    _check_hidden_size(hidden_size, gates)
    check(len(input.shape) == 3, f"input must be 3-D, got shape {list(input.shape)}")
    check(input.shape[0] == steps, f"input.shape[0] ({input.shape[0]}) must equal steps ({steps})")
    nd = _check_direction(direction)
    _, batch, input_size = input.shape
    rows = gates * hidden_size
    _check_shape(weight, (nd, rows, input_size), "weight")
    _check_shape(recurrentWeight, (nd, rows, hidden_size), "recurrentWeight")
    _check_shape(bias, (nd, rows), "bias")
    _check_shape(recurrentBias, (nd, rows), "recurrentBias")
    return nd, batch


@register
class Gru(Op):
    name = "gru"
    params = ("input", "weight", "recurrentWeight", "steps", "hiddenSize")
    limits = {k: FLOAT for k in ("input", "weight", "recurrentWeight", "bias", "recurrentBias",
                                 "initialHiddenState", "output0", "output1")}
    option_operands = ("bias", "recurrentBias", "initialHiddenState")
    returns_sequence = True

    def infer(self, input, weight, recurrentWeight, steps, hiddenSize, bias=None, recurrentBias=None,
              initialHiddenState=None, resetAfter=True, returnSequence=False, direction="forward",
              layout="zrn", activations=None):
        check_same_dtype(*(o for o in (input, weight, recurrentWeight, bias, recurrentBias, initialHiddenState)
                           if o is not None))
        check(layout in GRU_GATES, f"unknown layout {layout!r}")
        nd, batch = _check_sequence_operands(input, weight, recurrentWeight, bias, recurrentBias,
                                             steps, hiddenSize, 3, direction)
        _check_shape(initialHiddenState, (nd, batch, hiddenSize), "initialHiddenState")
        activations = _check_activations(activations, ("sigmoid", "tanh"))
        outputs = [(input.dtype, (nd, batch, hiddenSize))]
        if returnSequence:
            outputs.append((input.dtype, (steps, nd, batch, hiddenSize)))
        attrs = {"hidden": hiddenSize, "directions": nd, "direction": direction, "gates": GRU_GATES[layout],
                 "reset_after": bool(resetAfter), "sequence": bool(returnSequence), "activations": activations}
        return Inferred([input, weight, recurrentWeight, bias, recurrentBias, initialHiddenState], outputs, attrs)

    def compute(self, attrs, x, w, r, b=None, rb=None, h0=None):
        x, w, r, b, rb, h0 = map(_f64, (x, w, r, b, rb, h0))
        steps, batch, _ = x.shape
        hidden, nd = attrs["hidden"], attrs["directions"]
        h_last = np.zeros((nd, batch, hidden))
        seq = np.zeros((steps, nd, batch, hidden))
        for d in range(nd):
            x_proj = _project(x, w[d], None if b is None else b[d])
            h = np.zeros((batch, hidden)) if h0 is None else h0[d]
            for t in _step_order(attrs["direction"], d, steps):
                h = gru_cell(x_proj[t], h, r[d], None if rb is None else rb[d], hidden, attrs["gates"],
                             attrs["reset_after"], attrs["activations"])
                seq[t, d] = h
            h_last[d] = h
        return [h_last, seq] if attrs["sequence"] else [h_last]


@register
class GruCell(Op):
    name = "gruCell"
    params = ("input", "weight", "recurrentWeight", "hiddenState", "hiddenSize")
    limits = {k: FLOAT for k in ("input", "weight", "recurrentWeight", "hiddenState", "bias", "recurrentBias",
                                 "output")}
    option_operands = ("bias", "recurrentBias")

    def infer(self, input, weight, recurrentWeight, hiddenState, hiddenSize, bias=None, recurrentBias=None,
              resetAfter=True, layout="zrn", activations=None):
        check_same_dtype(*(o for o in (input, weight, recurrentWeight, hiddenState, bias, recurrentBias)
                           if o is not None))
        _check_hidden_size(hiddenSize, 3)
        check(len(input.shape) == 2, f"input must be 2-D, got shape {list(input.shape)}")
        check(layout in GRU_GATES, f"unknown layout {layout!r}")
        batch, input_size = input.shape
        h3 = 3 * hiddenSize
        _check_shape(weight, (h3, input_size), "weight")
        _check_shape(recurrentWeight, (h3, hiddenSize), "recurrentWeight")
        _check_shape(hiddenState, (batch, hiddenSize), "hiddenState")
        _check_shape(bias, (h3,), "bias")
        _check_shape(recurrentBias, (h3,), "recurrentBias")
        activations = _check_activations(activations, ("sigmoid", "tanh"))
        attrs = {"hidden": hiddenSize, "gates": GRU_GATES[layout], "reset_after": bool(resetAfter),
                 "activations": activations}
        return Inferred([input, weight, recurrentWeight, hiddenState, bias, recurrentBias],
                        [(input.dtype, (batch, hiddenSize))], attrs)

    def compute(self, attrs, x, w, r, h, b=None, rb=None):
        x, w, r, h, b, rb = map(_f64, (x, w, r, h, b, rb))
        return gru_cell(_project(x, w, b), h, r, rb, attrs["hidden"], attrs["gates"], attrs["reset_after"],
                        attrs["activations"])


@register
class Lstm(Op):
    name = "lstm"
    params = ("input", "weight", "recurrentWeight", "steps", "hiddenSize")
    limits = {k: FLOAT for k in ("input", "weight", "recurrentWeight", "bias", "recurrentBias", "peepholeWeight",
                                 "initialHiddenState", "initialCellState", "output0", "output1", "output2")}
    option_operands = ("bias", "recurrentBias", "peepholeWeight", "initialHiddenState", "initialCellState")
    returns_sequence = True

    def infer(self, input, weight, recurrentWeight, steps, hiddenSize, bias=None, recurrentBias=None,
              peepholeWeight=None, initialHiddenState=None, initialCellState=None, returnSequence=False,
              direction="forward", layout="iofg", activations=None):
        check_same_dtype(*(o for o in (input, weight, recurrentWeight, bias, recurrentBias, peepholeWeight,
                                       initialHiddenState, initialCellState) if o is not None))
        check(layout in LSTM_GATES, f"unknown layout {layout!r}")
        nd, batch = _check_sequence_operands(input, weight, recurrentWeight, bias, recurrentBias,
                                             steps, hiddenSize, 4, direction)
        _check_shape(peepholeWeight, (nd, 3 * hiddenSize), "peepholeWeight")
        _check_shape(initialHiddenState, (nd, batch, hiddenSize), "initialHiddenState")
        _check_shape(initialCellState, (nd, batch, hiddenSize), "initialCellState")
        activations = _check_activations(activations, ("sigmoid", "tanh", "tanh"))
        state = (input.dtype, (nd, batch, hiddenSize))
        outputs = [state, state]
        if returnSequence:
            outputs.append((input.dtype, (steps, nd, batch, hiddenSize)))
        attrs = {"hidden": hiddenSize, "directions": nd, "direction": direction, "gates": LSTM_GATES[layout],
                 "sequence": bool(returnSequence), "activations": activations}
        return Inferred([input, weight, recurrentWeight, bias, recurrentBias, peepholeWeight, initialHiddenState,
                         initialCellState], outputs, attrs)

    def compute(self, attrs, x, w, r, b=None, rb=None, p=None, h0=None, c0=None):
        x, w, r, b, rb, p, h0, c0 = map(_f64, (x, w, r, b, rb, p, h0, c0))
        steps, batch, _ = x.shape
        hidden, nd = attrs["hidden"], attrs["directions"]
        h_last = np.zeros((nd, batch, hidden))
        c_last = np.zeros((nd, batch, hidden))
        seq = np.zeros((steps, nd, batch, hidden))
        for d in range(nd):
            x_proj = _project(x, w[d], None if b is None else b[d])
            h = np.zeros((batch, hidden)) if h0 is None else h0[d]
            c = np.zeros((batch, hidden)) if c0 is None else c0[d]
            for t in _step_order(attrs["direction"], d, steps):
                h, c = lstm_cell(x_proj[t], h, c, r[d], None if rb is None else rb[d], None if p is None else p[d],
                                 hidden, attrs["gates"], attrs["activations"])
                seq[t, d] = h
            h_last[d], c_last[d] = h, c
        return [h_last, c_last, seq] if attrs["sequence"] else [h_last, c_last]


@register
class LstmCell(Op):
    name = "lstmCell"
    params = ("input", "weight", "recurrentWeight", "hiddenState", "cellState", "hiddenSize")
    limits = {k: FLOAT for k in ("input", "weight", "recurrentWeight", "hiddenState", "cellState", "bias",
                                 "recurrentBias", "peepholeWeight", "output0", "output1")}
    option_operands = ("bias", "recurrentBias", "peepholeWeight")
    returns_sequence = True

    def infer(self, input, weight, recurrentWeight, hiddenState, cellState, hiddenSize, bias=None,
              recurrentBias=None, peepholeWeight=None, layout="iofg", activations=None):
        check_same_dtype(*(o for o in (input, weight, recurrentWeight, hiddenState, cellState, bias, recurrentBias,
                                       peepholeWeight) if o is not None))
        _check_hidden_size(hiddenSize, 4)
        check(len(input.shape) == 2, f"input must be 2-D, got shape {list(input.shape)}")
        check(layout in LSTM_GATES, f"unknown layout {layout!r}")
        batch, input_size = input.shape
        h4 = 4 * hiddenSize
        _check_shape(weight, (h4, input_size), "weight")
        _check_shape(recurrentWeight, (h4, hiddenSize), "recurrentWeight")
        _check_shape(hiddenState, (batch, hiddenSize), "hiddenState")
        _check_shape(cellState, (batch, hiddenSize), "cellState")
        _check_shape(bias, (h4,), "bias")
        _check_shape(recurrentBias, (h4,), "recurrentBias")
        _check_shape(peepholeWeight, (3 * hiddenSize,), "peepholeWeight")
        activations = _check_activations(activations, ("sigmoid", "tanh", "tanh"))
        state = (input.dtype, (batch, hiddenSize))
        attrs = {"hidden": hiddenSize, "gates": LSTM_GATES[layout], "activations": activations}
        return Inferred([input, weight, recurrentWeight, hiddenState, cellState, bias, recurrentBias, peepholeWeight],
                        [state, state], attrs)

    def compute(self, attrs, x, w, r, h, c, b=None, rb=None, p=None):
        x, w, r, h, c, b, rb, p = map(_f64, (x, w, r, h, c, b, rb, p))
        return list(lstm_cell(_project(x, w, b), h, c, r, rb, p, attrs["hidden"], attrs["gates"],
                              attrs["activations"]))
