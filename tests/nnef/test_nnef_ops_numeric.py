"""Operation-by-operation numeric parity: each standard operation, lowered onto
the WebNN core, against the reference executor `nnef.Session` (PyPI `nnef`)
or, where the reference lacks the case, an independent numpy implementation of
the spec formula. Inputs are seeded random."""
from __future__ import annotations

import numpy as np
import pytest

from nnef_helpers import ref_nnef, run_ours, run_ref, write_model
from nnef_op_cases import Case, cases, generate, graph_text

CASES = cases()


def make(case: Case, tmp_path, seed=0):
    rng = np.random.default_rng(seed)
    inputs = {}
    for name, spec in case.inputs.items():
        inputs[name] = generate(spec[1], spec[0], rng)
    if case.ties:
        for name, v in inputs.items():
            if v.dtype.kind == "f":
                frac = np.abs(v - np.floor(v) - 0.5)
                inputs[name] = np.where(frac < 1e-3, v + 0.01, v).astype(v.dtype)
    variables = {label: generate(kind, shape, rng) for label, (shape, kind) in case.variables.items()}
    folder = write_model(str(tmp_path / case.name), graph_text(case), variables)
    return folder, inputs, variables


def compare(name, ours, expected, tol):
    rtol, atol = tol
    assert len(ours) == len(expected)
    for k, (o, e) in enumerate(zip(ours, expected)):
        e = np.asarray(e)
        assert list(o.shape) == list(e.shape), f"{name} output {k}: shape {o.shape} vs {e.shape}"
        if e.dtype == np.bool_ or o.dtype == np.uint8:
            np.testing.assert_array_equal(o.astype(bool), e.astype(bool), err_msg=f"{name} output {k}")
        elif e.dtype.kind in "iu":
            np.testing.assert_array_equal(o, e, err_msg=f"{name} output {k}")
        else:
            np.testing.assert_allclose(o.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=atol,
                                       err_msg=f"{name} output {k}")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op(case, tmp_path):
    folder, inputs, variables = make(case, tmp_path)
    feeds = {k: (v.astype(np.uint8) if v.dtype == np.bool_ else v) for k, v in inputs.items()}
    if case.oracle == "update":
        ours, model = run_ours(folder, feeds)
        state0 = variables["state"]
        compare(case.name, ours, [state0 + inputs["x"]], case.tol)
        ours2 = model.run(feeds)["y"]
        compare(case.name + " (second run)", [ours2], [state0 + 2 * inputs["x"]], case.tol)
        return
    ours, _ = run_ours(folder, feeds)
    if case.oracle is None:
        if ref_nnef is None:
            pytest.skip("the reference nnef package is not installed")
        expected = run_ref(folder, inputs, list(case.inputs))
    else:
        expected = case.oracle(inputs, variables)
    compare(case.name, ours, expected, case.tol)
