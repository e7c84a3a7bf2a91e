"""gru, gruCell, lstm, lstmCell against step-by-step references written from
the spec's equations (one gate at a time), hand-computed cells, time-aligned
sequences for backward/both (digest §1.1, §6), float16 and validation."""
import numpy as np
import pytest

from webnn_core import Context, WebNNTypeError

RNG = np.random.default_rng(13)
ACT = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh, "relu": lambda v: np.where(v > 0, v, 0.0)}


def run(build, inputs, dtype="float32"):
    """inputs: name -> array (None entries are skipped and passed as None)."""
    ctx = Context()
    b = ctx.graph_builder()
    ops = {k: (None if v is None else b.input(k, {"dataType": dtype, "shape": list(v.shape)}))
           for k, v in inputs.items()}
    out = build(b, ops)
    outs = out if isinstance(out, list) else [out]
    g = b.build({f"y{i}": o for i, o in enumerate(outs)})
    res = ctx.compute(g, {k: v.astype(dtype) for k, v in inputs.items() if v is not None})
    return [res[f"y{i}"] for i in range(len(outs))]


def raises(build, descs):
    b = Context().graph_builder()
    ops = {k: b.input(k, {"dataType": dt, "shape": list(s)}) for k, (dt, s) in descs.items()}
    with pytest.raises(WebNNTypeError, match=r"\[lbl\]"):
        build(b, ops)


def rand(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


# ------------------------------------------------------------------ references
def split_gates(m, order, hidden):
    """{gate name: rows} of a [len(order)·H, ...] tensor stored in `order`."""
    return {name: np.asarray(m, np.float64)[k * hidden:(k + 1) * hidden] for k, name in enumerate(order)}


def ref_gru_cell(x, h, w, r, b, rb, hidden, layout="zrn", reset_after=True, acts=("sigmoid", "tanh")):
    x, h = np.asarray(x, np.float64), np.asarray(h, np.float64)
    W, R = split_gates(w, layout, hidden), split_gates(r, layout, hidden)
    zero = {g: np.zeros(hidden) for g in "zrn"}
    B = split_gates(b, layout, hidden) if b is not None else zero
    RB = split_gates(rb, layout, hidden) if rb is not None else zero
    f, g = ACT[acts[0]], ACT[acts[1]]
    z = f(x @ W["z"].T + B["z"] + h @ R["z"].T + RB["z"])
    r_ = f(x @ W["r"].T + B["r"] + h @ R["r"].T + RB["r"])
    if reset_after:
        n = g(x @ W["n"].T + B["n"] + r_ * (h @ R["n"].T + RB["n"]))
    else:
        n = g(x @ W["n"].T + B["n"] + RB["n"] + (r_ * h) @ R["n"].T)
    return z * h + (1 - z) * n


def ref_lstm_cell(x, h, c, w, r, b, rb, p, hidden, layout="iofg", acts=("sigmoid", "tanh", "tanh")):
    x, h, c = (np.asarray(v, np.float64) for v in (x, h, c))
    W, R = split_gates(w, layout, hidden), split_gates(r, layout, hidden)
    zero = {g: np.zeros(hidden) for g in "iofg"}
    B = split_gates(b, layout, hidden) if b is not None else zero
    RB = split_gates(rb, layout, hidden) if rb is not None else zero
    P = split_gates(p, "iof", hidden) if p is not None else zero
    f0, f1, f2 = (ACT[a] for a in acts)

    def pre(gate):
        return x @ W[gate].T + h @ R[gate].T + B[gate] + RB[gate]

    i = f0(pre("i") + P["i"] * c)
    f = f0(pre("f") + P["f"] * c)
    g = f1(pre("g"))
    o = f0(pre("o") + P["o"] * c)  # the spec's decomposition: previous cell state
    c_new = f * c + i * g
    return o * f2(c_new), c_new


def ref_rnn(cell, x, n_states, direction, per_dir, init):
    """Run `cell` over time per direction; seq[t] holds the state produced for input t."""
    steps = x.shape[0]
    nd = 2 if direction == "both" else 1
    finals, seq = [], np.zeros((steps, nd) + init[0][0].shape)
    for d in range(nd):
        state = [s[d] for s in init]
        order = range(steps - 1, -1, -1) if (direction == "backward" or d == 1) else range(steps)
        for t in order:
            out = cell(x[t], *state, *per_dir(d))
            state = list(out) if n_states > 1 else [out]
            seq[t, d] = state[0]
        finals.append(state)
    return [np.stack([f[k] for f in finals]) for k in range(n_states)], seq


# ------------------------------------------------------------------------ gruCell
def test_gru_cell_hand_example():
    # Zero weights: z = sigmoid(0) = 0.5 and n = tanh(0) = 0, so h' = h / 2.
    h = np.array([[2.0, -4.0]], np.float32)
    inputs = {"x": np.ones((1, 3), np.float32), "w": np.zeros((6, 3), np.float32),
              "r": np.zeros((6, 2), np.float32), "h": h}
    y, = run(lambda b, o: b.gruCell(o["x"], o["w"], o["r"], o["h"], 2), inputs)
    np.testing.assert_array_equal(y, [[1.0, -2.0]])


@pytest.mark.parametrize("layout", ["zrn", "rzn"])
@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("acts", [None, ("relu", "sigmoid")])
@pytest.mark.parametrize("biases", [False, True])
def test_gru_cell_matches_reference(layout, reset_after, acts, biases):
    H, B, I = 3, 2, 4
    inputs = {"x": rand(B, I), "w": rand(3 * H, I), "r": rand(3 * H, H), "h": rand(B, H),
              "b": rand(3 * H) if biases else None, "rb": rand(3 * H) if biases else None}

    def build(b, o):
        opts = dict(layout=layout, resetAfter=reset_after, bias=o["b"], recurrentBias=o["rb"])
        if acts:
            opts["activations"] = list(acts)
        return b.gruCell(o["x"], o["w"], o["r"], o["h"], H, **opts)

    y, = run(build, inputs)
    exp = ref_gru_cell(inputs["x"], inputs["h"], inputs["w"], inputs["r"], inputs["b"], inputs["rb"], H, layout,
                       reset_after, acts or ("sigmoid", "tanh"))
    np.testing.assert_allclose(y, exp, rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------- gru
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
@pytest.mark.parametrize("layout,reset_after", [("zrn", True), ("rzn", False)])
@pytest.mark.parametrize("full", [False, True])
def test_gru_matches_reference(direction, layout, reset_after, full):
    T, B, I, H = 4, 2, 3, 5
    nd = 2 if direction == "both" else 1
    inputs = {"x": rand(T, B, I), "w": rand(nd, 3 * H, I), "r": rand(nd, 3 * H, H),
              "b": rand(nd, 3 * H) if full else None, "rb": rand(nd, 3 * H) if full else None,
              "h0": rand(nd, B, H) if full else None}
    acts = ["relu", "tanh"] if full else None

    def build(b, o):
        opts = dict(direction=direction, layout=layout, resetAfter=reset_after, returnSequence=True,
                    bias=o["b"], recurrentBias=o["rb"], initialHiddenState=o["h0"])
        if acts:
            opts["activations"] = acts
        return b.gru(o["x"], o["w"], o["r"], T, H, **opts)

    h, seq = run(build, inputs)
    get = lambda k, d: None if inputs[k] is None else inputs[k][d]  # noqa: E731
    (exp_h,), exp_seq = ref_rnn(
        lambda x, h_, w, r, b_, rb: ref_gru_cell(x, h_, w, r, b_, rb, H, layout, reset_after,
                                                 acts or ("sigmoid", "tanh")),
        inputs["x"], 1, direction, lambda d: (inputs["w"][d], inputs["r"][d], get("b", d), get("rb", d)),
        [inputs["h0"] if full else np.zeros((nd, B, H))])
    assert h.shape == (nd, B, H) and seq.shape == (T, nd, B, H)
    np.testing.assert_allclose(h, exp_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seq, exp_seq, rtol=1e-5, atol=1e-6)
    # Time-aligned: the backward direction's final state is the one for input step 0.
    if direction != "forward":
        np.testing.assert_array_equal(seq[0, nd - 1], h[nd - 1])
    if direction != "backward":
        np.testing.assert_array_equal(seq[-1, 0], h[0])


def test_gru_without_sequence_returns_one_output_and_float16():
    T, B, I, H = 3, 1, 2, 2
    inputs = {"x": rand(T, B, I), "w": rand(1, 3 * H, I), "r": rand(1, 3 * H, H)}
    for dtype, tol in (("float32", 1e-6), ("float16", 3e-3)):
        outs = run(lambda b, o: b.gru(o["x"], o["w"], o["r"], T, H), inputs, dtype)
        assert len(outs) == 1 and outs[0].dtype == np.dtype(dtype)
        cast = {k: v.astype(dtype) for k, v in inputs.items()}
        (exp,), _ = ref_rnn(lambda x, h_: ref_gru_cell(x, h_, cast["w"][0], cast["r"][0], None, None, H),
                            cast["x"], 1, "forward", lambda d: (), [np.zeros((1, B, H))])
        np.testing.assert_allclose(outs[0].astype(np.float64), exp, rtol=tol, atol=tol)


# ----------------------------------------------------------------------- lstmCell
def test_lstm_cell_hand_example():
    # Zero weights: i = f = o = 0.5 and g = 0, so c' = c / 2 and h' = tanh(c') / 2.
    c = np.array([[2.0, -1.0]], np.float32)
    inputs = {"x": np.ones((1, 3), np.float32), "w": np.zeros((8, 3), np.float32), "r": np.zeros((8, 2), np.float32),
              "h": np.ones((1, 2), np.float32), "c": c}
    h, c2 = run(lambda b, o: b.lstmCell(o["x"], o["w"], o["r"], o["h"], o["c"], 2), inputs)
    np.testing.assert_allclose(c2, [[1.0, -0.5]])
    np.testing.assert_allclose(h, [[np.tanh(1.0) / 2, np.tanh(-0.5) / 2]], rtol=1e-6)


def test_lstm_cell_peephole_order_is_i_o_f():
    # Only the forget gate's peephole is large: f -> 1 while i = o = 0.5, g = 0 keeps c.
    H = 1
    inputs = {"x": np.zeros((1, 1), np.float32), "w": np.zeros((4, 1), np.float32), "r": np.zeros((4, 1), np.float32),
              "h": np.zeros((1, 1), np.float32), "c": np.ones((1, 1), np.float32),
              "p": np.array([0, 0, 50], np.float32)}
    for layout in ("iofg", "ifgo"):
        h, c = run(lambda b, o: b.lstmCell(o["x"], o["w"], o["r"], o["h"], o["c"], H, peepholeWeight=o["p"],
                                           layout=layout), inputs)
        np.testing.assert_allclose(c, [[1.0]], rtol=1e-6)
        np.testing.assert_allclose(h, [[0.5 * np.tanh(1.0)]], rtol=1e-6)


@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
@pytest.mark.parametrize("extras", [False, True])
def test_lstm_cell_matches_reference(layout, extras):
    H, B, I = 3, 2, 4
    inputs = {"x": rand(B, I), "w": rand(4 * H, I), "r": rand(4 * H, H), "h": rand(B, H), "c": rand(B, H),
              "b": rand(4 * H) if extras else None, "rb": rand(4 * H) if extras else None,
              "p": rand(3 * H) if extras else None}
    acts = ("relu", "sigmoid", "relu") if extras else ("sigmoid", "tanh", "tanh")

    def build(b, o):
        return b.lstmCell(o["x"], o["w"], o["r"], o["h"], o["c"], H, bias=o["b"], recurrentBias=o["rb"],
                          peepholeWeight=o["p"], layout=layout, activations=list(acts))

    h, c = run(build, inputs)
    eh, ec = ref_lstm_cell(inputs["x"], inputs["h"], inputs["c"], inputs["w"], inputs["r"], inputs["b"],
                           inputs["rb"], inputs["p"], H, layout, acts)
    np.testing.assert_allclose(h, eh, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(c, ec, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------- lstm
@pytest.mark.parametrize("direction", ["forward", "backward", "both"])
@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
@pytest.mark.parametrize("full", [False, True])
def test_lstm_matches_reference(direction, layout, full):
    T, B, I, H = 3, 2, 3, 4
    nd = 2 if direction == "both" else 1
    names = ("b", "rb", "p", "h0", "c0")
    shapes = ((nd, 4 * H), (nd, 4 * H), (nd, 3 * H), (nd, B, H), (nd, B, H))
    inputs = {"x": rand(T, B, I), "w": rand(nd, 4 * H, I), "r": rand(nd, 4 * H, H),
              **{k: (rand(*s) if full else None) for k, s in zip(names, shapes)}}

    def build(b, o):
        return b.lstm(o["x"], o["w"], o["r"], T, H, bias=o["b"], recurrentBias=o["rb"], peepholeWeight=o["p"],
                      initialHiddenState=o["h0"], initialCellState=o["c0"], returnSequence=True,
                      direction=direction, layout=layout)

    h, c, seq = run(build, inputs)
    get = lambda k, d: None if inputs[k] is None else inputs[k][d]  # noqa: E731
    zeros = np.zeros((nd, B, H))
    (eh, ec), eseq = ref_rnn(
        lambda x, h_, c_, w, r, b_, rb, p: ref_lstm_cell(x, h_, c_, w, r, b_, rb, p, H, layout),
        inputs["x"], 2, direction,
        lambda d: (inputs["w"][d], inputs["r"][d], get("b", d), get("rb", d), get("p", d)),
        [inputs["h0"] if full else zeros, inputs["c0"] if full else zeros])
    np.testing.assert_allclose(h, eh, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c, ec, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(seq, eseq, rtol=1e-5, atol=1e-6)


def test_lstm_outputs_and_float16():
    T, B, I, H = 2, 1, 2, 3
    inputs = {"x": rand(T, B, I), "w": rand(1, 4 * H, I), "r": rand(1, 4 * H, H)}
    outs = run(lambda b, o: b.lstm(o["x"], o["w"], o["r"], T, H), inputs, "float16")
    assert len(outs) == 2 and all(o.dtype == np.float16 and o.shape == (1, B, H) for o in outs)
    cast = {k: v.astype(np.float16) for k, v in inputs.items()}
    zeros = np.zeros((1, B, H))
    (eh, ec), _ = ref_rnn(lambda x, h_, c_: ref_lstm_cell(x, h_, c_, cast["w"][0], cast["r"][0], None, None, None, H),
                          cast["x"], 2, "forward", lambda d: (), [zeros, zeros])
    np.testing.assert_allclose(outs[0].astype(np.float64), eh, rtol=3e-3, atol=3e-3)
    np.testing.assert_allclose(outs[1].astype(np.float64), ec, rtol=3e-3, atol=3e-3)


# --------------------------------------------------------------------- validation
F32 = "float32"
T_, B_, I_, H_ = 2, 3, 4, 5


def gru_descs(**over):
    d = {"x": (F32, (T_, B_, I_)), "w": (F32, (1, 3 * H_, I_)), "r": (F32, (1, 3 * H_, H_))}
    d.update(over)
    return d


@pytest.mark.parametrize("descs,steps,hidden,opts", [
    (gru_descs(), 0, H_, {}),
    (gru_descs(), T_, 0, {}),
    (gru_descs(), T_, 2**32 - 1, {}),
    (gru_descs(), T_, 2**30, {}),                                   # 6H overflows
    (gru_descs(x=(F32, (T_, B_))), T_, H_, {}),
    (gru_descs(x=(F32, (7, B_, I_))), T_, H_, {}),                  # shape[0] != steps
    (gru_descs(w=(F32, (1, 4 * H_, I_))), T_, H_, {}),
    (gru_descs(r=(F32, (1, 3 * H_))), T_, H_, {}),
    (gru_descs(r=(F32, (1, 3 * H_, I_))), T_, H_, {}),
    (gru_descs(), T_, H_, dict(direction="both")),                  # weights have 1 direction
    (gru_descs(), T_, H_, dict(activations=["sigmoid", "tanh", "relu"])),
    (gru_descs(bias=(F32, (1,))), T_, H_, {}),
    (gru_descs(bias=(F32, (1, H_))), T_, H_, {}),
    (gru_descs(recurrentBias=(F32, (1, 4 * H_))), T_, H_, {}),
    (gru_descs(initialHiddenState=(F32, (1, B_))), T_, H_, {}),
    (gru_descs(initialHiddenState=(F32, (1, B_, 3 * H_))), T_, H_, {}),
    (gru_descs(initialHiddenState=("uint64", (1, B_, H_))), T_, H_, {}),
    (gru_descs(initialHiddenState=("float16", (1, B_, H_))), T_, H_, {}),
    (gru_descs(x=("uint32", (T_, B_, I_)), w=("uint32", (1, 3 * H_, I_)), r=("uint32", (1, 3 * H_, H_))), T_, H_, {}),
    (gru_descs(w=("float16", (1, 3 * H_, I_))), T_, H_, {}),
])
def test_gru_validation(descs, steps, hidden, opts):
    def build(b, o):
        extra = {k: o[k] for k in ("bias", "recurrentBias", "initialHiddenState") if k in o}
        return b.gru(o["x"], o["w"], o["r"], steps, hidden, label="lbl", **extra, **opts)
    raises(build, descs)


def gru_cell_descs(**over):
    d = {"x": (F32, (B_, I_)), "w": (F32, (3 * H_, I_)), "r": (F32, (3 * H_, H_)), "h": (F32, (B_, H_))}
    d.update(over)
    return d


@pytest.mark.parametrize("descs,hidden,opts", [
    (gru_cell_descs(), 0, {}),
    (gru_cell_descs(), 2**32 - 1, {}),
    (gru_cell_descs(x=(F32, (B_, I_, 1))), H_, {}),
    (gru_cell_descs(x=(F32, (B_, 1))), H_, {}),
    (gru_cell_descs(w=(F32, (3 * H_,))), H_, {}),
    (gru_cell_descs(w=(F32, (4 * H_, I_))), H_, {}),
    (gru_cell_descs(r=(F32, (3 * H_, I_))), H_, {}),
    (gru_cell_descs(h=(F32, (B_, H_, 1))), H_, {}),
    (gru_cell_descs(h=(F32, (B_, 2 * H_))), H_, {}),
    (gru_cell_descs(), H_, dict(activations=["sigmoid"])),
    (gru_cell_descs(bias=(F32, (3 * H_, 1))), H_, {}),
    (gru_cell_descs(bias=(F32, (2 * H_,))), H_, {}),
    (gru_cell_descs(recurrentBias=(F32, (1, 3 * H_))), H_, {}),
    (gru_cell_descs(recurrentBias=("float16", (3 * H_,))), H_, {}),
    (gru_cell_descs(h=("int8", (B_, H_))), H_, {}),
])
def test_gru_cell_validation(descs, hidden, opts):
    def build(b, o):
        extra = {k: o[k] for k in ("bias", "recurrentBias") if k in o}
        return b.gruCell(o["x"], o["w"], o["r"], o["h"], hidden, label="lbl", **extra, **opts)
    raises(build, descs)


def lstm_descs(**over):
    d = {"x": (F32, (T_, B_, I_)), "w": (F32, (1, 4 * H_, I_)), "r": (F32, (1, 4 * H_, H_))}
    d.update(over)
    return d


LSTM_OPTIONS = ("bias", "recurrentBias", "peepholeWeight", "initialHiddenState", "initialCellState")


@pytest.mark.parametrize("descs,steps,hidden,opts", [
    (lstm_descs(), 0, H_, {}),
    (lstm_descs(), T_, 0, {}),
    (lstm_descs(), T_, 2**32 - 1, {}),
    (lstm_descs(), T_, 2**29, {}),                                  # 8H overflows
    (lstm_descs(x=(F32, (T_, B_))), T_, H_, {}),
    (lstm_descs(x=(F32, (3, B_, I_))), T_, H_, {}),
    (lstm_descs(w=(F32, (1, 3 * H_, I_))), T_, H_, {}),
    (lstm_descs(r=(F32, (1, 4 * H_, I_))), T_, H_, {}),
    (lstm_descs(), T_, H_, dict(direction="both")),
    (lstm_descs(), T_, H_, dict(activations=["sigmoid", "tanh"])),
    (lstm_descs(bias=(F32, (4 * H_,))), T_, H_, {}),
    (lstm_descs(recurrentBias=(F32, (1, 3 * H_))), T_, H_, {}),
    (lstm_descs(peepholeWeight=(F32, (1, 4 * H_))), T_, H_, {}),
    (lstm_descs(initialHiddenState=(F32, (1, B_, 2 * H_))), T_, H_, {}),
    (lstm_descs(initialCellState=(F32, (B_, H_))), T_, H_, {}),
    (lstm_descs(initialCellState=("int32", (1, B_, H_))), T_, H_, {}),
])
def test_lstm_validation(descs, steps, hidden, opts):
    def build(b, o):
        extra = {k: o[k] for k in LSTM_OPTIONS if k in o}
        return b.lstm(o["x"], o["w"], o["r"], steps, hidden, label="lbl", **extra, **opts)
    raises(build, descs)


def lstm_cell_descs(**over):
    d = {"x": (F32, (B_, I_)), "w": (F32, (4 * H_, I_)), "r": (F32, (4 * H_, H_)), "h": (F32, (B_, H_)),
         "c": (F32, (B_, H_))}
    d.update(over)
    return d


@pytest.mark.parametrize("descs,hidden,opts", [
    (lstm_cell_descs(), 0, {}),
    (lstm_cell_descs(), 2**32 - 1, {}),
    (lstm_cell_descs(x=(F32, (B_, I_, 1))), H_, {}),
    (lstm_cell_descs(w=("float16", (4 * H_, I_))), H_, {}),
    (lstm_cell_descs(w=(F32, (4 * H_, I_, 1))), H_, {}),
    (lstm_cell_descs(r=(F32, (3 * H_, H_))), H_, {}),
    (lstm_cell_descs(h=(F32, (B_, H_ + 1))), H_, {}),
    (lstm_cell_descs(c=(F32, (B_ + 1, H_))), H_, {}),
    (lstm_cell_descs(c=("int8", (B_, H_))), H_, {}),
    (lstm_cell_descs(bias=(F32, (4 * H_, 1))), H_, {}),
    (lstm_cell_descs(recurrentBias=(F32, (3 * H_,))), H_, {}),
    (lstm_cell_descs(peepholeWeight=(F32, (4 * H_,))), H_, {}),
    (lstm_cell_descs(peepholeWeight=("float16", (3 * H_,))), H_, {}),
    (lstm_cell_descs(), H_, dict(activations=["sigmoid", "tanh", "tanh", "relu"])),
])
def test_lstm_cell_validation(descs, hidden, opts):
    def build(b, o):
        extra = {k: o[k] for k in ("bias", "recurrentBias", "peepholeWeight") if k in o}
        return b.lstmCell(o["x"], o["w"], o["r"], o["h"], o["c"], hidden, label="lbl", **extra, **opts)
    raises(build, descs)


def test_valid_shapes_both_directions():
    b = Context().graph_builder()
    f = lambda name, shape: b.input(name, {"dataType": F32, "shape": list(shape)})  # noqa: E731
    outs = b.gru(f("x", (T_, B_, I_)), f("w", (2, 3 * H_, I_)), f("r", (2, 3 * H_, H_)), T_, H_,
                 direction="both", returnSequence=True, layout="rzn", activations=["sigmoid", "relu"],
                 bias=f("b", (2, 3 * H_)), initialHiddenState=f("h0", (2, B_, H_)))
    assert [tuple(o.shape) for o in outs] == [(2, B_, H_), (T_, 2, B_, H_)]
    outs = b.lstm(f("x2", (T_, B_, I_)), f("w2", (2, 4 * H_, I_)), f("r2", (2, 4 * H_, H_)), T_, H_,
                  direction="both", returnSequence=True, peepholeWeight=f("p", (2, 3 * H_)))
    assert [tuple(o.shape) for o in outs] == [(2, B_, H_), (2, B_, H_), (T_, 2, B_, H_)]
    outs = b.lstmCell(f("x3", (B_, I_)), f("w3", (4 * H_, I_)), f("r3", (4 * H_, H_)), f("h", (B_, H_)),
                      f("c", (B_, H_)), H_)
    assert isinstance(outs, list) and len(outs) == 2
    assert tuple(b.gruCell(f("x4", (B_, I_)), f("w4", (3 * H_, I_)), f("r4", (3 * H_, H_)), f("h4", (B_, H_)),
                           H_).shape) == (B_, H_)
