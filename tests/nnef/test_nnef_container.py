"""Containers and model loading: folder, .tar, .tgz (with a top-level folder),
in-memory files; label -> .dat mapping; graph.quant; data checks."""
import io
import tarfile

import numpy as np
import pytest

from nnef_helpers import write_model
from webnn_core.nnef import NNEFDataError, NNEFSemanticError, dat, load, load_model, open_container, samples
from webnn_core.nnef.export import write_files

TEXT = """version 1.0;
graph G( x ) -> ( y )
{
    x = external(shape = [1, 2]);
    w = variable(shape = [1, 2], label = '/Block1/W');
    v = variable(shape = [1, 2], label = 'block1/w');
    t = mul(x, w);
    y = add(t, v);
}
"""


def files(w=None, extra=None):
    w = np.array([[2.0, 3.0]], np.float32) if w is None else w
    out = {"graph.nnef": TEXT.encode(), "Block1/W.dat": dat.write_tensor(w)}
    out.update(extra or {})
    return out


def tar_bytes(entries, gz):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz" if gz else "w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def check(model):
    # the leading '/' is stripped, labels match case-insensitively and share data
    out = model.run({"x": np.array([[1.0, 1.0]], np.float32)})["y"]
    np.testing.assert_array_equal(out, [[4.0, 6.0]])


def test_folder_tar_tgz_and_memory_agree(tmp_path):
    f = files()
    write_files(f, str(tmp_path / "folder"))
    (tmp_path / "m.tar").write_bytes(tar_bytes(f, gz=False))
    (tmp_path / "m.tgz").write_bytes(tar_bytes({"model/" + k: v for k, v in f.items()}, gz=True))
    (tmp_path / "m.tar.gz").write_bytes(tar_bytes({"./" + k: v for k, v in f.items()}, gz=True))
    for source in (str(tmp_path / "folder"), str(tmp_path / "folder" / "graph.nnef"), str(tmp_path / "m.tar"),
                   str(tmp_path / "m.tgz"), str(tmp_path / "m.tar.gz"), f, tar_bytes(f, gz=True)):
        check(load_model(source))


def test_archive_with_top_level_folder_and_extra_files():
    entries = {"alexnet/" + k: v for k, v in samples.alexnet_files(divisor=16, image=195).items()}
    entries["alexnet/vendor/notes.txt"] = b"ignored"
    entries["README"] = b"outside the model folder"
    c = open_container(tar_bytes(entries, gz=True))
    assert c.root == "alexnet/" and "graph.nnef" in c.files
    model = load_model(tar_bytes(entries, gz=True))
    assert model.inputs == {"input": {"dataType": "float32", "shape": [1, 3, 195, 195]}}


def test_missing_graph_and_missing_dat():
    with pytest.raises(NNEFDataError, match="no graph.nnef"):
        load_model({"x.dat": b""})
    with pytest.raises(NNEFDataError, match=r"Block1/W\.dat: missing tensor file \(variable '/Block1/W' at graph.nnef:5:9\)"):
        load({"graph.nnef": TEXT.encode()})
    g = load({"graph.nnef": TEXT.encode()}, load_variables=False)  # parse only
    assert g.tensors["w"].data is None


def test_shape_and_type_disagreement():
    with pytest.raises(NNEFDataError, match=r"shape \[2\] in the tensor file does not match the shape \[1, 2\]"):
        load(files(np.array([1.0, 2.0], np.float32)))
    with pytest.raises(NNEFDataError, match="bool items cannot hold 'scalar' data"):
        load(files(np.array([[True, False]])))


def test_not_an_archive(tmp_path):
    (tmp_path / "m.tgz").write_bytes(b"\x1f\x8bnot really")
    with pytest.raises(NNEFDataError, match="not a readable tar archive"):
        load_model(str(tmp_path / "m.tgz"))
    with pytest.raises(NNEFDataError, match="no such file"):
        load_model(str(tmp_path / "absent.tgz"))


def test_graph_quant(tmp_path):
    quant = ('"x": zero_point_linear_quantize(zero_point = 0, scale = 0.5, bits = 8, signed = true, symmetric = false);\n'
             '"y": linear_quantize(min = -1.0, max = [1.0, 2.0], bits = 8);\n')
    g = load(files(extra={"graph.quant": quant.encode()}))
    assert g.tensors["x"].quantization == {"op-name": "zero_point_linear_quantize", "zero_point": 0, "scale": 0.5,
                                           "bits": 8, "signed": True, "symmetric": False}
    assert g.tensors["y"].quantization["max"] == [1.0, 2.0]
    assert g.tensors["w"].quantization == {}
    for bad, message in (('"x": frob(bits = 8);', "undefined quantization operation 'frob'"),
                         ('"zz": linear_quantize(min = 0.0, max = 1.0, bits = 8);', "does not define"),
                         ('"x": linear_quantize(min = 0.0, bits = 8);', "missing the argument 'max'"),
                         ('"x": linear_quantize(min = 0.0, max = 1.0, bits = 8, foo = 1);', "no attribute named 'foo'"),
                         ('"x" linear_quantize(min = 0.0);', "graph.quant:1:5: expected ':'")):
        with pytest.raises((NNEFSemanticError, Exception), match=message):
            load(files(extra={"graph.quant": bad.encode()}))


def test_fake_quantization_option():
    quant = '"y": linear_quantize(min = 0.0, max = 10.0, bits = 2);\n'
    f = files(extra={"graph.quant": quant.encode()})
    x = np.array([[1.0, 1.0]], np.float32)  # y = [4, 6] -> 2-bit levels 0, 3.33, 6.67, 10
    assert load_model(f).run({"x": x})["y"].tolist() == [[4.0, 6.0]]
    q = load_model(f, quantization=True).run({"x": x})["y"]
    np.testing.assert_allclose(q, [[10 / 3, 20 / 3]], rtol=1e-6)


def test_quantized_tensor_files_are_decoded():
    text = TEXT.replace("'block1/w'", "'other'")
    codes = np.array([[0, 255]], np.uint8)
    f = {"graph.nnef": text.encode(), "Block1/W.dat": dat.write_tensor(codes, quantized=True),
         "other.dat": dat.write_tensor(np.zeros((1, 2), np.float32)),
         "graph.quant": b'"w": zero_point_linear_quantize(zero_point = 128, scale = 0.5, bits = 8, signed = false, '
                        b'symmetric = false);\n'}
    g = load(f)
    np.testing.assert_array_equal(g.tensors["w"].data, [[-64.0, 63.5]])
    f["graph.quant"] = b'"w": min_max_linear_quantize(min = -1.0, max = 1.0, bits = 8, signed = false, symmetric = false);'
    np.testing.assert_allclose(load(f).tensors["w"].data, [[-1.0, 1.0]])
    del f["graph.quant"]
    with pytest.raises(NNEFDataError, match="need a graph.quant entry"):
        load(f)


def test_write_model_helper(tmp_path):
    folder = write_model(str(tmp_path / "m"), TEXT, {"/Block1/W": np.array([[2.0, 3.0]], np.float32)})
    check(load_model(folder))
