"""The bridge methods behind webnnPolyfill.loadNNEF / exportNNEF (js/src/nnef.js),
called as the JS shim calls them: JSON arguments plus one byte buffer."""
import ctypes
import json

import numpy as np

from webnn_core import bridge
from webnn_core.nnef import samples


def call(method, args, data=None):
    reply = json.loads(bridge.call(method, json.dumps(args), data))
    if "bytes" in reply:  # JS copies these out of the heap; here ctypes does
        address, length = reply["bytes"]
        return ctypes.string_at(address, length)
    return reply


def pack(files):
    manifest, chunks, offset = [], [], 0
    for path, data in files.items():
        manifest.append([path, offset, len(data)])
        chunks.append(data)
        offset += len(data)
    return manifest, b"".join(chunks)


def context():
    return {"$o": call("create_context", ["cpu", "default"])["ok"]}


def test_load_dispatch_and_export_through_the_bridge():
    ctx = context()
    files = samples.alexnet_files(divisor=16, image=195, seed=2)
    for source in (files, {"m.tgz": samples.to_tgz(files, "m/")}):
        manifest, data = pack(source)
        r = call("nnef_load", [ctx, manifest, {"gelu": "nnef"}], data)["ok"]
        assert r["name"] == "AlexNet"
        assert r["inputs"] == {"input": {"dataType": "float32", "shape": [1, 3, 195, 195]}}
        assert r["outputs"] == {"output": {"dataType": "float32", "shape": [1, 62, 1, 1]}}
        graph = {"$o": r["graph"]}
        x = np.random.default_rng(0).standard_normal((1, 3, 195, 195)).astype(np.float32)
        t_in = {"$o": call("create_tensor", [ctx, {"dataType": "float32", "shape": [1, 3, 195, 195], "writable": True}])["ok"]}
        t_out = {"$o": call("create_tensor", [ctx, {"dataType": "float32", "shape": [1, 62, 1, 1], "readable": True}])["ok"]}
        call("write_tensor", [ctx, t_in], x.tobytes())
        assert call("dispatch", [ctx, graph, {"input": t_in}, {"output": t_out}]) == {"ok": None}
        probs = np.frombuffer(call("read_tensor", [ctx, t_out]), np.float32)
        assert abs(probs.sum() - 1) < 1e-4
    info = call("nnef_export", [graph, "AlexNet"])["ok"]
    assert info["text"].startswith("version 1.0;\n\ngraph AlexNet( input ) -> ( output )")
    assert "alexnet_v2/conv1/kernel.dat" in info["files"]
    archive = call("nnef_export_archive", [graph, "AlexNet"])
    assert isinstance(archive, bytes) and archive[:2] == b"\x1f\x8b"
    needed = call("nnef_required_files", [files["graph.nnef"].decode()])["ok"]
    assert needed[:2] == ["alexnet_v2/conv1/kernel.dat", "alexnet_v2/conv1/bias.dat"] and len(needed) == 16


def test_errors_keep_their_types():
    ctx = context()
    cases = {
        "SyntaxError": b"version 1.0;\ngraph G( x ) -> ( y ) { x = external(shape = [2]); y = relu(x }",
        "DataError": b"version 1.0;\ngraph G( x ) -> ( y ) { x = external(shape = [2]); y = relu(z); }",
        "NotSupportedError": b"version 1.0;\ngraph G( x, r, b ) -> ( y ) { x = external(shape = [1, 2, 4, 4]); "
                             b"r = external(shape = [1, 4]); b = external<integer>(shape = [1]); "
                             b"y = avg_roi_pool(x, r, b, output_size = [2, 2]); }",
    }
    for name, text in cases.items():
        manifest, data = pack({"graph.nnef": text})
        r = call("nnef_load", [ctx, manifest, {}], data)
        assert r["error"][0] == name, r
        assert r["error"][1].startswith("graph.nnef:2:"), r
    manifest, data = pack({"graph.nnef": cases["DataError"].replace(b"relu(z)", b"relu(x)")})
    r = call("nnef_load", [ctx, [["graph.nnef", 0, len(data) + 5]], {}], data)
    assert r["error"][0] == "DataError" and "truncated" in r["error"][1]
