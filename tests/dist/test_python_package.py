"""The built wheel, pip-installed into a fresh venv, gives the Python API and the
NNEF console script. The venv sees the system site-packages only for numpy; the
test checks that webnn_polyfill and webnn_core come from the venv's own copy."""
import re
import subprocess
import sys
import venv
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELS = sorted((ROOT / "dist").glob("webnn_polyfill-*-py3-none-any.whl"))

pytestmark = pytest.mark.skipif(len(WHEELS) != 1, reason="dist/ has no single webnn_polyfill wheel (run ./dev build)")

GRAPH_NNEF = """version 1.0;
graph G( data ) -> ( result )
{
    data = external<scalar>(shape = [2, 3]);
    result = relu(data);
}
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """{python, bin}: a fresh venv with the wheel installed, offline."""
    where = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(where)
    python = where / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                    "--quiet", str(WHEELS[0])], check=True, capture_output=True, text=True)
    return {"python": python, "bin": where / "bin", "root": where}


def run_python(env, code, cwd):
    return subprocess.run([str(env["python"]), "-c", code], cwd=cwd, check=True, capture_output=True, text=True).stdout


def readme_example() -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- python-example:[^>]*-->\n```python\n(.*?)```", text, re.S)
    assert match, "README.md lost its marked Python example"
    return match.group(1)


def test_installed_from_the_venv_not_the_checkout(env, tmp_path):
    out = run_python(env, "import webnn_polyfill, webnn_core; print(webnn_polyfill.__file__); "
                          "print(webnn_core.__file__); print(webnn_polyfill.__version__)", tmp_path)
    poly, core, version = out.split()
    assert Path(poly).is_relative_to(env["root"]) and Path(core).is_relative_to(env["root"])
    assert WHEELS[0].name == f"webnn_polyfill-{version}-py3-none-any.whl"


def test_wheel_holds_the_packages_and_their_data_only():
    import zipfile

    names = zipfile.ZipFile(WHEELS[0]).namelist()
    tops = {n.split("/")[0] for n in names} - {n.split("/")[0] for n in names if ".dist-info/" in n}
    assert tops == {"webnn_core", "webnn_polyfill"}, tops
    assert not [n for n in names if n.endswith((".md", ".pyc", ".so"))]
    assert any(n.endswith(".sknd") for n in names)  # package data (the NNEF 2 standard library) is in


def test_readme_example_runs_and_prints_the_convolution(env, tmp_path):
    out = run_python(env, readme_example(), tmp_path)
    # The convolution by hand: a 2x2 box sum of the 3x3 ramp, zero-padded right and bottom.
    image = np.pad(np.arange(9, dtype=np.float32).reshape(3, 3), ((0, 1), (0, 1)))
    expected = np.array([[image[i:i + 2, j:j + 2].sum() for j in range(3)] for i in range(3)])
    printed = [float(v) for v in re.findall(r"-?\d+\.?\d*", out)]
    assert printed[:9] == expected.ravel().tolist()
    assert printed[9] == expected.sum()


def test_nnef_console_script(env, tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "graph.nnef").write_text(GRAPH_NNEF)
    data = np.array([[-1.5, 0.0, 2.0], [3.0, -4.0, 0.25]], np.float32)
    np.save(tmp_path / "data.npy", data)
    cli = env["bin"] / "webnn-nnef"
    assert "usage: webnn-nnef" in subprocess.run([str(cli), "--help"], capture_output=True, text=True).stdout
    subprocess.run([str(cli), str(model), "--input", f"data={tmp_path / 'data.npy'}", "--output-dir", str(tmp_path)],
                   check=True, capture_output=True, text=True, cwd=tmp_path)
    np.testing.assert_array_equal(np.load(tmp_path / "result.npy"), np.maximum(data, 0))


def test_nnef_console_script_reports_a_bad_model_without_a_traceback(env, tmp_path):
    (tmp_path / "graph.nnef").write_text("version 1.0;\ngraph G( a ) -> ( b ) { a = external(shape = [2]); b = nosuchop(a); }\n")
    proc = subprocess.run([str(env["bin"] / "webnn-nnef"), str(tmp_path / "graph.nnef"), "--check"],
                          capture_output=True, text=True)
    proc2 = subprocess.run([str(env["bin"] / "webnn-nnef"), str(tmp_path / "graph.nnef"), "--random-inputs", "0",
                            "--output-dir", str(tmp_path)], capture_output=True, text=True)
    assert proc2.returncode != 0 and "Traceback" not in proc2.stderr and "nosuchop" in proc2.stderr + proc2.stdout, proc2
    assert "Traceback" not in proc.stderr
