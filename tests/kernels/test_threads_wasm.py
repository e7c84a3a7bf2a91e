"""Prototype of the browser kernel pool (docs/threads.md), under Node: the threads
build of the kernels (wasm atomics + bulk memory, imported shared memory) runs one
conv2d as tiles (webnn_core's fast/tiles.py) taken by this thread and worker
threads from an atomic counter on one shared WebAssembly.Memory; the tiled output
equals the single call bit for bit, and the single call matches numpy."""
import base64
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from webnn_core.backends.cpu.fast import paths
from webnn_core.backends.cpu.fast import tiles as tiling
from webnn_core.backends.cpu.fast.pack import pack_conv

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tools"))


@pytest.fixture(scope="module")
def threads_wasm(tmp_path_factory):
    import build_kernels

    if not shutil.which("node"):
        pytest.skip("node is not installed")
    if not build_kernels.find_clang() or not build_kernels.find_wasm_ld():
        pytest.skip("clang / wasm-ld missing (./dev setup installs them)")
    return build_kernels.build_wasm(tmp_path_factory.mktemp("threads") / "webnn-kernels-threads.wasm",
                                    quiet=True, threads=True)


def b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()


@pytest.mark.parametrize("threads,parts", [(2, 2), (3, 5), (4, 7)])
def test_conv_tiles_on_worker_threads_equal_one_call(threads_wasm, threads, parts):
    rng = np.random.default_rng(threads)
    x = rng.standard_normal((2, 13, 11, 6)).astype(np.float32)
    w = (rng.standard_normal((10, 3, 3, 6)) * 0.3).astype(np.float32)
    bias = rng.standard_normal(10).astype(np.float32)
    attrs = {"padding": [1, 0, 2, 1], "strides": [2, 1], "dilations": [1, 1]}
    prep = pack_conv(w, bias, 1)
    p = paths._conv_params(prep, attrs, x.shape, prep.out_channels)
    oh, ow = int(p[4]), int(p[5])
    tiles = tiling.window_tiles(p, parts)
    assert len(tiles) > 1
    job = {"wasm": str(threads_wasm), "threads": threads, "x": b64(x), "w": b64(prep.w), "bias": b64(prep.bias),
           "p": b64(p), "yBytes": 4 * 2 * oh * ow * 10, "scratchBytes": 4 * int(p[17]) * prep.k,
           "tiles": [{"p": b64(q), "dx": 4 * dx, "dy": 4 * dy} for q, dx, dy in tiles]}
    proc = subprocess.run(["node", str(HERE / "wasm_threads_runner.mjs")], input=json.dumps(job), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["shared"] is True
    single = np.frombuffer(base64.b64decode(out["single"]), np.float32).reshape(2, oh, ow, 10)
    tiled = np.frombuffer(base64.b64decode(out["tiled"]), np.float32).reshape(2, oh, ow, 10)
    np.testing.assert_array_equal(tiled, single)
    from webnn_core import Context

    ctx = Context("cpu", options={"fastPaths": False})
    b = ctx.graph_builder()
    xi = b.input("x", {"dataType": "float32", "shape": list(x.shape)})
    y = b.conv2d(xi, b.constant({"dataType": "float32", "shape": list(w.shape)}, w),
                 bias=b.constant({"dataType": "float32", "shape": [10]}, bias), padding=attrs["padding"],
                 strides=attrs["strides"], inputLayout="nhwc", filterLayout="ohwi")
    ref = ctx.compute(b.build({"y": y}), {"x": x})["y"]
    np.testing.assert_allclose(single, ref, rtol=1e-5, atol=1e-5)
