"""`python -m webnn_core.xla`: JAX-exported programs run from the command line
and match JAX; positional arg<i>/result<i> naming, weights, dtypes, errors."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]


def cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT / "py")}
    return subprocess.run([sys.executable, "-m", "webnn_core.xla", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


PROGRAM = """module @m {
  func.func public @main(%arg0: tensor<2x2xf32>, %arg1: tensor<2xf32>) -> (tensor<2x2xf32>, tensor<i1>, tensor<i32>) {
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<2xf32>) -> tensor<2x2xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2x2xf32>
    %c = stablehlo.constant dense<0.0> : tensor<f32>
    %2 = stablehlo.reduce(%1 init: %c) applies stablehlo.add across dimensions = [0, 1] : (tensor<2x2xf32>, tensor<f32>) -> tensor<f32>
    %3 = stablehlo.compare GT, %2, %c, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<3> : tensor<i32>
    return %1, %3, %c_0 : tensor<2x2xf32>, tensor<i1>, tensor<i32>
  }
}
"""


def test_cli_runs_with_inputs_and_weights(tmp_path):
    (tmp_path / "p.mlir").write_text(PROGRAM)
    x = np.array([[1, 2], [3, 4]], np.float32)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "w.npz", arg1=np.array([10, -20], np.float32))
    r = cli(tmp_path / "p.mlir", "--weights", tmp_path / "w.npz", "--input", f"arg0={tmp_path / 'x.npy'}",
            "--output-dir", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    r0 = np.load(tmp_path / "out" / "result0.npy")
    r1 = np.load(tmp_path / "out" / "result1.npy")
    r2 = np.load(tmp_path / "out" / "result2.npy")
    np.testing.assert_array_equal(r0, x + np.array([10, -20], np.float32))
    assert r1.dtype == np.bool_ and r1.shape == () and not r1  # the sum is 10 - 40 + 4 + 6 = -20
    assert r2.dtype == np.int32 and r2.shape == () and r2 == 3


def test_cli_check_and_errors(tmp_path):
    (tmp_path / "p.mlir").write_text(PROGRAM)
    r = cli(tmp_path / "p.mlir", "--check")
    assert r.returncode == 0
    assert "input arg0: float32[2, 2]" in r.stdout and "output result1: uint8[]" in r.stdout
    r = cli(tmp_path / "p.mlir")
    assert r.returncode == 1 and "missing input(s) ['arg0', 'arg1']" in r.stderr
    (tmp_path / "bad.mlir").write_text(PROGRAM.replace("add %arg0, %0", "add %arg0 ? %0"))
    r = cli(tmp_path / "bad.mlir", "--check")
    assert r.returncode == 1 and r.stderr.startswith("error: 4:") and "Traceback" not in r.stderr


def test_cli_matches_jax(tmp_path):
    jax = pytest.importorskip("jax", reason="jax is a test-only dev dependency")
    rng = np.random.default_rng(5)
    w1, w2 = rng.standard_normal((6, 8)).astype(np.float32), rng.standard_normal((8, 3)).astype(np.float32)
    x = rng.standard_normal((4, 6)).astype(np.float32)

    def f(w1, x, w2):
        h = jax.nn.relu(x @ w1)
        return jax.nn.softmax(h @ w2), jax.numpy.argmax(h @ w2, axis=-1)

    (tmp_path / "f.mlir").write_text(jax.jit(f).lower(w1, x, w2).as_text())
    np.savez(tmp_path / "w.npz", arg0=w1, arg2=w2)
    np.save(tmp_path / "x.npy", x)
    r = cli(tmp_path / "f.mlir", "--weights", tmp_path / "w.npz", "--input", f"arg1={tmp_path / 'x.npy'}",
            "--output-dir", tmp_path)
    assert r.returncode == 0, r.stderr
    probs, label = jax.jit(f)(w1, x, w2)
    np.testing.assert_allclose(np.load(tmp_path / "result0.npy"), np.asarray(probs), rtol=1e-5, atol=1e-6)
    got = np.load(tmp_path / "result1.npy")
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.asarray(label))
