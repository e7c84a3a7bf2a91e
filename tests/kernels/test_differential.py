"""A seeded slice of the differential test (tests/fuzz/differential.py; the long run is
./dev fuzz --differential --minutes N --seed S): random nets shaped like ONNX Runtime
1.22's NHWC graphs, 1.30's NCHW graphs, NHWC clients and transformer blocks, each run with every rewrite off
(reference kernels, checked against float64 numpy written from the spec), with every fast
path and rewrite on (within tolerance of the reference), and with the layout pass off,
3 native threads, a 3-thread kernel pool through the native stand-in port and the plain
wasm build under Node (each bit for bit equal to the one-thread fast result)."""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import differential  # noqa: E402

SEED = 20261128
GRAPHS_PER_STYLE = 25


@pytest.fixture(scope="module")
def harness(native_lib):
    h = differential.Harness(native_lib)
    yield h
    h.close()


@pytest.mark.parametrize("style", ["ort122", "ort130", "nhwc", "transformer"])
def test_rewrites_and_fast_paths_agree_with_the_reference(harness, style):
    failures = []
    before = dict(getattr(harness, "coverage", {}))
    for index in range(GRAPHS_PER_STYLE):
        spec, expected = differential.client_graph(np.random.default_rng(differential.graph_seed(SEED, index)), style)
        problems = harness.check(spec, expected, index)
        if problems:
            failures.append(f"graph {index}:\n{differential.describe_spec(spec)}\n  " + "\n  ".join(problems))
    assert not failures, "\n".join(failures)
    # The slice reaches the rewrites it is about.
    cov = {k: v - before.get(k, 0) for k, v in harness.coverage.items()}
    for key in (("gemm", "layerNormalization", "erf") if style == "transformer"
                else ("conv2d+relu", "_inplace", "_out", "_prep", "concat")):
        assert cov.get(key, 0) > 0, (key, cov)


def test_the_slice_reaches_every_rewrite(harness):
    """Over the three styles' graphs, every rewrite of compile.py ran at least once
    (runs after the parametrized test, which fills the coverage)."""
    cov = getattr(harness, "coverage", {})
    if not cov:
        pytest.skip("run with the style tests")
    for key in ("layout: to nchw", "layout: to nhwc", "identity", "channelShuffle", "channelAverage",
                "conv2d+clamp", "pool jobs", "maxPool2d", "averagePool2d", "gemm", "matmul"):
        assert cov.get(key, 0) > 0, (key, cov)


def test_the_wasm_build_gives_the_native_bytes(native_lib):
    import wasm_node

    reason = wasm_node.unavailable_reason(wasm_node.WASM)
    if reason:
        pytest.skip(reason)
    h = differential.Harness(native_lib, pool_threads=0, wasm=True)
    try:
        for index in range(6):
            spec, expected = differential.make(SEED + 1, index)
            problems = h.check(spec, expected, index)
            assert not problems, f"{differential.describe_spec(spec)}\n" + "\n".join(problems)
    finally:
        h.close()
