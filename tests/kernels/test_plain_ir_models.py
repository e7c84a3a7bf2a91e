"""SqueezeNet saved as plain data (JSON + weights) and loaded into a fresh
context runs to byte-identical outputs, with the SIMD fast paths compiling
the loaded graph again."""
import sys
from pathlib import Path

import numpy as np
import pytest

from webnn_core import Context
from webnn_core.plain import from_json, to_json

ROOT = Path(__file__).resolve().parents[2]


def test_squeezenet_round_trips_through_plain_data(native):
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import bench_kernels
    finally:
        sys.path.remove(str(ROOT / "tools"))
    try:
        weights = bench_kernels.load_squeezenet_weights()
    except FileNotFoundError:
        pytest.skip("SqueezeNet weights not found (../shared/models)")
    ctx = Context("cpu")
    graph, iname, oname = bench_kernels.build_squeezenet(ctx, weights)
    x = np.random.default_rng(0).uniform(-1, 1, (1, 224, 224, 3)).astype(np.float32)
    want = ctx.compute(graph, {iname: x})[oname]
    text, buffers = to_json(graph)
    assert len(buffers) == len(graph.constants) and len(text) < 100_000  # weights travel as bytes, not JSON
    other = Context("cpu")
    loaded = from_json(other, text, buffers)
    assert [s.op.name for s in loaded.plan.nodes] == [s.op.name for s in graph.plan.nodes]
    got = other.compute(loaded, {iname: x})[oname]
    assert got.tobytes() == want.tobytes()
    assert abs(float(want.sum()) - 1.0) < 1e-4  # softmax probabilities
