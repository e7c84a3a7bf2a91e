"""The command line: python -m webnn_core.nnef MODEL [--input NAME=FILE.npy ...] [--output-dir DIR] [--check]."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nnef_helpers import ref_nnef, run_ref
from webnn_core.nnef import samples
from webnn_core.nnef.__main__ import main
from webnn_core.nnef.export import write_files

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    files = samples.alexnet_files(divisor=8, image=224, seed=4)
    write_files(files, str(d / "alexnet"))
    (d / "alexnet.tgz").write_bytes(samples.to_tgz(files, prefix="alexnet/"))
    (d / "alexnet.tar").write_bytes(_tar(files))
    x = np.random.default_rng(5).standard_normal((1, 3, 224, 224)).astype(np.float32)
    np.save(d / "input.npy", x)
    return d


def _tar(files):
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_runs_folder_tar_and_tgz_as_a_subprocess(model_dir, tmp_path):
    """The documented command, exactly as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "py")}
    outputs = []
    for source in ("alexnet", "alexnet.tar", "alexnet.tgz"):
        out = tmp_path / source.replace(".", "_")
        r = subprocess.run([sys.executable, "-m", "webnn_core.nnef", str(model_dir / source),
                            "--input", f"input={model_dir / 'input.npy'}", "--output-dir", str(out)],
                           capture_output=True, text=True, env=env, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "output.npy: float32[1, 125, 1, 1]" in r.stdout
        outputs.append(np.load(out / "output.npy"))
    assert all(np.array_equal(outputs[0], o) for o in outputs[1:])
    if ref_nnef is not None:
        (ref,) = run_ref(str(model_dir / "alexnet"), {"input": np.load(model_dir / "input.npy")}, ["input"])
        np.testing.assert_allclose(outputs[0], ref, rtol=1e-4, atol=1e-4)


def test_check_prints_every_shape(model_dir, capsys):
    assert main([str(model_dir / "alexnet.tgz"), "--check"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("graph AlexNet: 36 operations")
    assert "conv1: scalar[1, 8, 54, 54]" in out
    assert "pool3: scalar[1, 32, 5, 5]" in out
    assert "output: scalar[1, 125, 1, 1]" in out
    assert len(out) == 1 + 36


def test_errors_go_to_stderr_with_nonzero_exit(model_dir, tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "graph.nnef").write_text("version 1.0;\ngraph G( x ) -> ( y )\n{\n  x = external(shape = [2]);\n"
                                    "  y = relu(x;\n}\n")
    assert main([str(bad), "--check"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "graph.nnef:5:13: expected ')'" in err
    assert main([str(model_dir / "alexnet")]) == 1
    assert "missing input(s) ['input']" in capsys.readouterr().err
    assert main([str(model_dir / "alexnet"), "--input", f"nope={model_dir / 'input.npy'}"]) == 1
    assert "unknown input" in capsys.readouterr().err
    np.save(tmp_path / "small.npy", np.zeros((1, 3), np.float32))
    assert main([str(model_dir / "alexnet"), "--input", f"input={tmp_path / 'small.npy'}"]) == 1
    assert "has shape [1, 3]" in capsys.readouterr().err
    assert main([str(tmp_path / "absent")]) == 1
    assert "no such file" in capsys.readouterr().err
    (bad / "graph.nnef").write_text("version 1.0;\ngraph G( x, r, b ) -> ( y )\n{\n  x = external(shape = [1, 2, 4, 4]);\n"
                                    "  r = external(shape = [1, 4]);\n  b = external<integer>(shape = [1]);\n"
                                    "  y = max_roi_pool(x, r, b, output_size = [2, 2]);\n}\n")
    assert main([str(bad), "--random-inputs", "0"]) == 1
    err = capsys.readouterr().err
    assert "graph.nnef:7:7: operation 'max_roi_pool' is not supported" in err


def test_random_inputs_and_export(model_dir, tmp_path, capsys):
    out = tmp_path / "o"
    assert main([str(model_dir / "alexnet"), "--random-inputs", "3", "--output-dir", str(out),
                 "--export", str(tmp_path / "again.tgz")]) == 0
    first = np.load(out / "output.npy")
    assert main([str(tmp_path / "again.tgz"), "--random-inputs", "3", "--output-dir", str(tmp_path / "o2")]) == 0
    assert np.array_equal(np.load(tmp_path / "o2" / "output.npy"), first)
