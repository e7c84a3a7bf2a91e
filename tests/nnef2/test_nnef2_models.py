"""NNEF 2.0 models: the draft's AlexNet, model folders / archives / variable
files, modules and imports, the CLI, the JS bridge entry, the exporter and
1.0 -> 2.0 conversion (run both, compare, and against the PyPI `nnef`
reference executor)."""
from __future__ import annotations

import ctypes
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

from webnn_core import bridge
from webnn_core.context import Context
from webnn_core.errors import WebNNTypeError
from webnn_core.nnef import load_model as load_v1
from webnn_core.nnef import samples
from webnn_core.nnef.errors import NNEFDataError, NNEFSemanticError
from webnn_core.nnef2 import convert, export_graph, is_nnef2, load, shapes
from nnef2_helpers import dat_bytes

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
ALEXNET = (FIXTURES / "alexnet.sknd").read_text()


def test_alexnet_composes_with_the_right_shapes():
    inputs, outputs, composer = shapes({"main.sknd": ALEXNET})
    assert {n: list(t.shape) for n, t in inputs.items()} == {"input": [1, 3, 224, 224]}
    assert {n: (t.dtype, list(t.shape)) for n, t in outputs.items()} == {"output": ("real", [1, 1000])}
    ops = [name for name, _ in composer.operations]
    assert ops.count("nn.conv") == 6 and ops.count("nn.max_pool") == 3 and ops.count("nn.linear") == 2
    assert ops[-1] == "nn.softmax" and len(ops) == 20
    _, outputs, _ = shapes({"main.sknd": ALEXNET}, attrs={"batch": 4, "classes": 10})
    assert list(outputs["output"].shape) == [4, 10]


def test_alexnet_flat1_typo_is_caught_as_the_draft_prints_it():
    # the draft feeds relu6 ([1, 4096, 1, 1]) to linear: its @input wants a matrix
    text = ALEXNET.replace("nn.linear(flat1,", "nn.linear(relu6,")
    with pytest.raises(NNEFSemanticError, match=r"main.sknd:\d+:\d+: .*'nn.linear' input 'input' must have rank 2"):
        shapes({"main.sknd": text})


SMALL = """import nn;
import layout;
graph Small {
    @attrib { classes: int = 4; }
    @input { input: real[1, 3, 8, 8]; }
    @output { output: real[1, classes]; }
    @variable { k1: real[4, 3, 3, 3]; b1: real[4]; w: real[classes, 16]; }
    @compose {
        c = nn.conv{padding=1, stride=2}(input, k1, b1);
        r = nn.relu(c);
        p = nn.max_pool{size=2, stride=2}(r);
        f = layout.flatten{axis=1}(p);
        output = nn.linear(f, w);
    }
}
"""


def small_weights(seed=0):
    rng = np.random.default_rng(seed)
    return {"k1": rng.standard_normal((4, 3, 3, 3)).astype(np.float32),
            "b1": rng.standard_normal(4).astype(np.float32),
            "w": rng.standard_normal((4, 16)).astype(np.float32)}


def small_ref(x, v):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    conv = np.zeros((1, 4, 4, 4))
    for o in range(4):
        for i in range(4):
            for j in range(4):
                conv[0, o, i, j] = (xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3] * v["k1"][o]).sum() + v["b1"][o]
    p = np.maximum(conv, 0).reshape(1, 4, 2, 2, 2, 2).max(axis=(3, 5))
    return p.reshape(1, 16) @ v["w"].T


def small_files(names=("main.Small.{}.dat",)):
    v = small_weights()
    files = {"main.sknd": SMALL.encode()}
    for key, array in v.items():
        for pattern in names:
            files[pattern.format(key)] = dat_bytes(array)
    return files, v


def tgz(files, prefix=""):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for path, data in files.items():
            info = tarfile.TarInfo(prefix + path)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_small_model_folder_tgz_and_memory_agree_with_numpy(tmp_path):
    files, v = small_files()
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    ref = small_ref(x, v)
    folder = tmp_path / "m"
    folder.mkdir()
    for path, data in files.items():
        (folder / path).write_bytes(data)
    (tmp_path / "m.tgz").write_bytes(tgz(files, "model/"))
    for source in (files, str(folder), str(folder / "main.sknd"), str(tmp_path / "m.tgz"), tgz(files)):
        out = load(source).run({"input": x})["output"]
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_variable_file_lookup_order():
    v = small_weights()
    files = {"main.sknd": SMALL.encode()}
    for key, array in v.items():
        files[f"{key}.dat"] = dat_bytes(array * 0)           # last resort
        files[f"Small.{key}.dat"] = dat_bytes(array * 0)     # second
    files["main.Small.k1.dat"] = dat_bytes(v["k1"])          # first choice wins over the others
    files["Small.b1.dat"] = dat_bytes(v["b1"])               # then <Graph>.<var>
    files["w.dat"] = dat_bytes(v["w"])                        # <var> only when nothing else exists
    del files["Small.w.dat"]
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(load(files).run({"input": x})["output"], small_ref(x, v), rtol=1e-4, atol=1e-4)


def test_variable_errors():
    files, _ = small_files()
    del files["main.Small.w.dat"]
    with pytest.raises(NNEFDataError, match=r"main.sknd:7:\d+: no data file for variable 'w' \(looked for "
                                            r"main.Small.w.dat, Small.w.dat, w.dat\)"):
        load(files)
    files, _ = small_files()
    files["main.Small.w.dat"] = dat_bytes(np.zeros((3, 16), np.float32))
    with pytest.raises(NNEFDataError, match="shape \\[3, 16\\] does not match variable 'w' declared \\[4, 16\\]"):
        load(files)


def test_graph_attributes_and_second_graph():
    files, _ = small_files()
    files["main.sknd"] += b"\ngraph Other { @input { x: real[2]; } @output { y: real[2]; } " \
                          b"@compose { y = math.neg(x); } }\n"
    files["main.sknd"] = b"import math;\n" + files["main.sknd"]
    m = load(files, graph="Other")
    np.testing.assert_array_equal(m.run({"x": np.array([1, -2], np.float32)})["y"], [-1, 2])
    with pytest.raises(NNEFSemanticError, match="no graph 'Nope'"):
        load(files, graph="Nope")


MODULE = """import math;
operator scaled_add {
    @attrib { k: real = 2.0; }
    @input { x: real[s..]; y: real[s..]; }
    @output { z: real[s..]; }
    @compose {
        t = math.mul(y, k);
        z = math.add(x, t);
    }
}
"""


def test_modules_from_the_model_folder_then_the_standard_library():
    main = """import blocks;
import custom.more;
import nn;
graph G {
    @input { a: real[3]; b: real[3]; }
    @output { c: real[3]; }
    @compose {
        d = blocks.scaled_add{k=3.0}(a, b);
        e = custom.more.twice(d);
        c = nn.relu(e);
    }
}
"""
    more = """import math;
operator twice { @input { x: real[n]; } @output { y: real[n]; } @compose { y = math.add(x, x); } }
"""
    files = {"main.sknd": main, "blocks.sknd": MODULE, "custom/more.sknd": more}
    a, b = np.array([1, -5, 2], np.float32), np.array([1, 1, -1], np.float32)
    np.testing.assert_allclose(load(files).run({"a": a, "b": b})["c"], np.maximum(2 * (a + 3 * b), 0))
    with pytest.raises(NNEFSemanticError, match="module 'nope' not found"):
        load({"main.sknd": "import nope;\ngraph G { @input { x: real[1]; } @output { x: real[1]; } }"})
    with pytest.raises(NNEFSemanticError, match="only the main module may"):
        load({"main.sknd": main, "blocks.sknd": MODULE + "graph H { @input { x: real[1]; } }",
              "custom/more.sknd": more})


def test_cli_runs_and_checks(tmp_path):
    files, v = small_files()
    folder = tmp_path / "m"
    folder.mkdir()
    for path, data in files.items():
        (folder / path).write_bytes(data)
    x = np.random.default_rng(3).standard_normal((1, 3, 8, 8)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    env = {"PYTHONPATH": str(ROOT / "py")}
    run = subprocess.run([sys.executable, "-m", "webnn_core.nnef2", str(folder), "--input", f"input={tmp_path / 'x.npy'}",
                          "--output-dir", str(tmp_path / "out")], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output.npy"), small_ref(x, v), rtol=1e-4, atol=1e-4)
    check = subprocess.run([sys.executable, "-m", "webnn_core.nnef2", str(folder), "--check", "--attrib", "classes=4"],
                           capture_output=True, text=True, env=env)
    assert check.returncode == 0 and "output output: real[1, 4]" in check.stdout
    again = subprocess.run([sys.executable, "-m", "webnn_core.nnef2", str(folder), "--random-inputs", "3", "--export",
                            str(tmp_path / "re.tgz"), "--output-dir", str(tmp_path / "out2")],
                           capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    np.testing.assert_array_equal(load(str(tmp_path / "re.tgz")).run({"input": x})["output"],
                                  load(str(folder)).run({"input": x})["output"])
    (folder / "main.sknd").write_text(SMALL.replace("nn.relu(c)", "nn.relu(c"))
    bad = subprocess.run([sys.executable, "-m", "webnn_core.nnef2", str(folder), "--check"], capture_output=True,
                         text=True, env=env)
    assert bad.returncode == 1 and bad.stderr.startswith("error: main.sknd:10:22: expected ',' or ')'")


def test_export_webnn_graph_as_skriptnd_and_back():
    ctx = Context()
    b = ctx.graph_builder()
    x = b.input("x", {"dataType": "float32", "shape": [1, 2, 5, 5]})
    rng = np.random.default_rng(4)
    w = b.constant({"dataType": "float32", "shape": [3, 2, 3, 3]}, rng.standard_normal((3, 2, 3, 3)).astype(np.float32))
    y = b.conv2d(x, w, padding=[1, 1, 0, 2], strides=[1, 2])
    y = b.leakyRelu(y, alpha=0.2)
    y = b.averagePool2d(y, windowDimensions=[2, 2], strides=[2, 2])
    y = b.reshape(y, [1, 3 * 2 * 1])
    y = b.softmax(y, 1)
    g = b.build({"y": y})
    text, files = export_graph(g, "Net")
    assert text.splitlines()[1:5] == ["import layout;", "import math;", "import nn;", ""] or "graph Net {" in text
    xv = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    want = ctx.compute(g, {"x": xv})["y"]
    got = load({"main.sknd": text.encode(), **files}).run({"x": xv})["y"]
    np.testing.assert_array_equal(got, want)


def test_alexnet_in_both_versions(tmp_path):
    """The 1.0 AlexNet sample, converted to 2.0 by the exporter: both run and agree,
    and the 1.0 original agrees with the reference executor."""
    files = samples.alexnet_files(divisor=16, image=195, seed=2)
    v1 = tmp_path / "v1"
    v1.mkdir()
    for path, data in files.items():
        (v1 / path).parent.mkdir(parents=True, exist_ok=True)
        (v1 / path).write_bytes(data)
    text, v2files = convert(str(v1), str(tmp_path / "v2.tgz"))
    assert "graph AlexNet {" in text and "nn.conv{" in text and "nn.max_pool{" in text
    x = np.random.default_rng(0).standard_normal((1, 3, 195, 195)).astype(np.float32)
    out1 = load_v1(str(v1)).run({"input": x})["output"]
    out2 = load(str(tmp_path / "v2.tgz")).run({"input": x})["output"]
    np.testing.assert_allclose(out2, out1, rtol=1e-5, atol=1e-6)
    pytest.importorskip("nnef", reason="the PyPI 'nnef' reference executor is not installed")
    sys.path.insert(0, str(ROOT / "tests" / "nnef"))
    from nnef_helpers import run_ref as ref_run
    ref = ref_run(str(v1), {"input": x}, ["input"])
    np.testing.assert_allclose(out1, np.asarray(ref[0]).reshape(out1.shape), rtol=1e-4, atol=1e-5)


def call(method, args, data=None):
    reply = json.loads(bridge.call(method, json.dumps(args), data))
    if "bytes" in reply:  # JS copies these out of the heap (one copy); here ctypes does
        address, length = reply["bytes"]
        return ctypes.string_at(address, length)
    return reply


def test_bridge_tells_2_0_from_1_0_by_content():
    files, v = small_files()
    assert is_nnef2(files) and is_nnef2(tgz(files)) and is_nnef2(SMALL)
    assert not is_nnef2(samples.alexnet_files(divisor=16, image=195, seed=2))
    ctx = {"$o": call("create_context", ["cpu", "default"])["ok"]}
    manifest, offset, chunks = [], 0, []
    for path, data in {"model.tgz": tgz(files)}.items():
        manifest.append([path, offset, len(data)])
        chunks.append(data)
        offset += len(data)
    r = call("nnef_load", [ctx, manifest, {"attrs": {"classes": 4}}], b"".join(chunks))["ok"]
    assert r["version"] == "2.0" and r["name"] == "Small"
    assert r["inputs"] == {"input": {"dataType": "float32", "shape": [1, 3, 8, 8]}}
    assert r["outputs"] == {"output": {"dataType": "float32", "shape": [1, 4]}}
    assert call("nnef_required_files", [SMALL])["ok"] == ["main.Small.k1.dat", "main.Small.b1.dat", "main.Small.w.dat"]
    bad = call("nnef_load", [ctx, [["main.sknd", 0, 20]], {}], b"import nn;\ngraph G {")
    assert bad["error"][0] == "SyntaxError" and bad["error"][1].startswith("main.sknd:2:10:")


def test_bridge_exports_skriptnd():
    ctx = {"$o": call("create_context", ["cpu", "default"])["ok"]}
    files = samples.alexnet_files(divisor=16, image=195, seed=2)
    manifest, offset, chunks = [], 0, []
    for path, data in files.items():
        manifest.append([path, offset, len(data)])
        chunks.append(data)
        offset += len(data)
    r = call("nnef_load", [ctx, manifest, {}], b"".join(chunks))["ok"]
    info = call("nnef_export", [{"$o": r["graph"]}, "AlexNet", "2.0"])["ok"]
    assert "graph AlexNet {" in info["text"] and any(f.startswith("main.AlexNet.") for f in info["files"])
    archive = call("nnef_export_archive", [{"$o": r["graph"]}, "AlexNet", "2.0"])
    assert isinstance(archive, bytes) and is_nnef2(archive)
    assert list(load(archive).outputs) == ["output"]


def test_variables_of_invoked_operators_use_the_label_scope():
    text = """import math;
operator scale {
    @input { x: real[n]; }
    @output { y: real[n]; }
    @variable { w: real[n]; }
    @compose { y = math.mul(x, w); }
}
graph G {
    @input { x: real[3]; }
    @output { z: real[3]; }
    @compose {
        a = first: scale(x);
        z = scale(a);
    }
}
"""
    w1, w2 = np.array([1, 2, 3], np.float32), np.array([10, 20, 30], np.float32)
    x = np.array([1, 1, 2], np.float32)
    # explicit label 'first', auto label 'z' (the single result's name), seed §2.10
    files = {"main.sknd": text, "main.G.first.w.dat": dat_bytes(w1), "G.z.w.dat": dat_bytes(w2)}
    np.testing.assert_array_equal(load(files).run({"x": x})["z"], x * w1 * w2)
    with pytest.raises(NNEFDataError, match=r"looked for main.G.first.w.dat, G.first.w.dat, first.w.dat, w.dat"):
        load({"main.sknd": text})


def test_single_component_operators_propagate_their_scope():
    text = """import math;
operator scale {
    @input { x: real[n]; }
    @output { y: real[n]; }
    @variable { w: real[n]; }
    @compose { y = math.mul(x, w); }
}
operator wrapped {
    @input { x: real[n]; }
    @output { y: real[n]; }
    @compose { y = scale(x); }
}
graph G {
    @input { x: real[3]; }
    @output { z: real[3]; }
    @compose { z = outer: wrapped(x); }
}
"""
    w = np.array([1, 2, 3], np.float32)
    # 'wrapped' has one component and no tensors of its own: 'scale' inside it has scope G.outer, not G.outer.y
    files = {"main.sknd": text, "main.G.outer.w.dat": dat_bytes(w)}
    np.testing.assert_array_equal(load(files).run({"x": np.ones(3, np.float32)})["z"], w)


def test_quantize_block_as_fake_quantization():
    text = """import nn;
import quant;
graph Q {
    @input { x: real[1, 4]; }
    @output { y: real[1, 4]; }
    @compose { y = nn.relu(x); }
    @quantize {
        x: quant.zero_point_linear_quantize{zero_point=[0], scale=[0.5], bits=8, channel_axis=0};
    }
}
"""
    x = np.array([[0.2, 0.8, -1.0, 1.3]], np.float32)
    np.testing.assert_array_equal(load({"main.sknd": text}).run({"x": x})["y"], np.maximum(x, 0))   # parsed only
    q = load({"main.sknd": text}, quantization=True).run({"x": x})["y"]
    np.testing.assert_array_equal(q, [[0.0, 1.0, 0.0, 1.5]])   # round(x / 0.5) * 0.5, half away from zero


UNUSED_V1 = """version 1.0;
graph G( x, unused ) -> ( y )
{
    x = external<scalar>(shape = [2, 3]);
    unused = external<scalar>(shape = [4]);
    y = add(x, x);
}
"""
UNUSED_V2 = """import math;
graph G {
    @input { x: real[2, 3]; unused: real[4]; }
    @output { y: real[2, 3]; }
    @compose { y = math.add(x, x); }
}
"""


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_a_declared_input_no_output_uses_is_neither_bound_nor_required(version):
    """A graph parameter that no output depends on: the built WebNN graph has no such input,
    so the model's inputs (what loadNNEF tells a page to bind) leave it out, and run() works
    without it and ignores it when given (after checking its declared shape)."""
    files = {"graph.nnef": UNUSED_V1.encode()} if version == "1.0" else {"main.sknd": UNUSED_V2}
    model = load_v1(files) if version == "1.0" else load(files)
    assert model.inputs == {"x": {"dataType": "float32", "shape": [2, 3]}}
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(model.run({"x": x})["y"], x + x)
    np.testing.assert_array_equal(model.run({"x": x, "unused": np.zeros(4, np.float32)})["y"], x + x)
    with pytest.raises(NNEFDataError, match="'unused' has shape \\[5\\], the graph declares \\[4\\]"):
        model.run({"x": x, "unused": np.zeros(5, np.float32)})
    missing = (NNEFDataError, "missing input 'x'") if version == "2.0" else (WebNNTypeError, r"must be exactly \['x'\]")
    with pytest.raises(missing[0], match=missing[1]):
        model.run({"unused": np.zeros(4, np.float32)})
    # Through the bridge (webnnPolyfill.loadNNEF): the inputs to bind are the graph's.
    ctx = {"$o": call("create_context", ["cpu", "default"])["ok"]}
    data = files["graph.nnef"] if version == "1.0" else files["main.sknd"].encode()
    path = "graph.nnef" if version == "1.0" else "main.sknd"
    r = call("nnef_load", [ctx, [[path, 0, len(data)]], {}], data)["ok"]
    assert r.get("version", "1.0") == version and r["inputs"] == {"x": {"dataType": "float32", "shape": [2, 3]}}
    assert list(r["allInputs"]) == ["x"]
