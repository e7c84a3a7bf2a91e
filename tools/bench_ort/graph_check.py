"""The WebNN graph ORT-web's WebNN EP builds on the polyfill, recorded and evaluated independently.

    python3 tools/bench_ort/graph_check.py [--model squeezenet] [--ort-version 1.22.0] [--layout nhwc|nchw]
                                           [--save FILE.json]

One onnxruntime-web session per run in headless Chromium (tools/ort_web.OrtPage): the model (a
tools/bench_ort/models.py network, a seeded standard-normal input) on ORT's wasm EP and on its WebNN EP
(deviceType cpu) on the polyfill, with --layout overriding what opSupportLimits().preferredInputLayout
reports (ORT 1.22 builds NHWC graphs for "nhwc"). Every graph ORT builds is recorded inside the engine
as the core's plain IR (webnn_core.plain.to_plain, wrapping the bridge's builder_build: measurement
only). Then, here in CPython:

- each recorded graph is evaluated with numpy written from the WebNN spec's definitions (float64;
  conv2d in every input/filter layout, pools, concat, transpose, relu, softmax, reshape, add), and
  the last graph's outputs are compared with what the polyfill returned and with ORT's wasm EP;
- opset-13 semantics aside: `--softmax-2d` also evaluates each softmax as ONNX opset < 13 defines
  Softmax (input coerced to 2-D at the axis), to tell an ORT translation fault from a polyfill one;
- the same graph is rebuilt in the polyfill core (webnn_core.plain.from_plain, default cpu context)
  with every node's output a graph output, and compared node by node with numpy.

Issue 33 (docs/clients.md, "Which layout the polyfill reports"): with --ort-version 1.22.0 --layout
nhwc, SqueezeNet's softmax is built as softmax(axis 1) on [1, 1, 1, 1000].
"""
from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "bench_ort"))
sys.path.insert(0, str(ROOT / "py"))

# Inside Pyodide: record every built graph as plain IR (measurement only; the bridge's own call).
RECORD_PY = r'''
import base64 as _b64, webnn_core.bridge as _bridge, webnn_core.plain as _plain
GRAPH_CHECK = []
if not getattr(_bridge, "_graph_check", False):
    _build = _bridge.builder_build
    def _recording_build(builder, outputs):
        out = _build(builder, outputs)
        doc, bufs = _plain.to_plain(_bridge._objects[out["graph"]])
        GRAPH_CHECK.append({"doc": doc, "bufs": [_b64.b64encode(bytes(b)).decode() for b in bufs]})
        return out
    _bridge.METHODS["builder_build"] = _recording_build
    _bridge._graph_check = True
'''

LAYOUT_JS = """(layout) => { const limits = MLContext.prototype.opSupportLimits;
  Object.defineProperty(MLContext.prototype, 'opSupportLimits', { value: function () {
    return { ...limits.call(this), preferredInputLayout: layout }; }, writable: true, configurable: true }); }"""


# ------------------------------------------------------------------ numpy, from the spec's definitions
def _to_nchw(x, layout):
    return x.transpose(0, 3, 1, 2) if layout == "nhwc" else x


def _from_nchw(y, layout):
    return y.transpose(0, 2, 3, 1) if layout == "nhwc" else y


def conv2d(x, w, b, a):
    layout = a.get("inputLayout", "nchw")
    x = _to_nchw(x, layout)
    w = {"oihw": w, "ohwi": w.transpose(0, 3, 1, 2), "hwio": w.transpose(3, 2, 0, 1),
         "ihwo": w.transpose(3, 0, 1, 2)}[a.get("filterLayout", "oihw")]
    groups = a.get("groups", 1)
    pt, pb, pl, pr = a["padding"]
    sh, sw = a["strides"]
    dh, dw = a["dilations"]
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)))
    n, c, hh, ww = x.shape
    o, i, kh, kw = w.shape
    oh, ow = (hh - (kh - 1) * dh - 1) // sh + 1, (ww - (kw - 1) * dw - 1) // sw + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs, ws = x[:, g * i:(g + 1) * i], w[g * og:(g + 1) * og]
        for r in range(kh):
            for s in range(kw):
                patch = xs[:, :, r * dh:r * dh + (oh - 1) * sh + 1:sh, s * dw:s * dw + (ow - 1) * sw + 1:sw]
                y[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch, ws[:, :, r, s])
    if b is not None:
        y += b[None, :, None, None]
    return _from_nchw(y, layout)


def pool(x, a, kind):
    layout = a.get("layout", "nchw")
    x = _to_nchw(x, layout)
    kh, kw = a.get("windowDimensions") or x.shape[2:]
    pt, pb, pl, pr = a["padding"]
    sh, sw = a["strides"]
    if a.get("dilations", [1, 1]) != [1, 1] or a.get("outputSizes") or a.get("outputShapeRounding", "floor") != "floor":
        raise NotImplementedError(f"{kind} pool with {a}")
    x = np.pad(x, ((0, 0), (0, 0), (pt, pb), (pl, pr)), constant_values=-np.inf if kind == "max" else np.nan)
    oh, ow = (x.shape[2] - kh) // sh + 1, (x.shape[3] - kw) // sw + 1
    y = np.zeros(x.shape[:2] + (oh, ow))
    for r in range(oh):
        for s in range(ow):
            v = x[:, :, r * sh:r * sh + kh, s * sw:s * sw + kw]
            y[:, :, r, s] = v.max((2, 3)) if kind == "max" else np.nanmean(v, (2, 3))  # padding not counted
    return _from_nchw(y, layout)


def softmax(x, axis, coerce_2d=False):
    if coerce_2d:  # ONNX Softmax before opset 13: over everything from `axis` on
        shape = x.shape
        return softmax(x.reshape(int(np.prod(shape[:axis])), -1), 1).reshape(shape)
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def evaluate(doc, buffers, feeds, softmax_2d=False):
    """{output name: array}, [(node, its output)] of one webnn-graph/1 document."""
    vals = {d["id"]: np.asarray(feeds[d["name"]], np.float64) for d in doc["inputs"]}
    for d in doc["constants"]:
        if d["dataType"] != "float32":
            raise NotImplementedError(f"constant of {d['dataType']}")
        vals[d["id"]] = np.frombuffer(buffers[d["buffer"]], np.float32).reshape(d["shape"]).astype(np.float64)
    steps = []
    for node in doc["nodes"]:
        o, a, op = node["operands"], node["attrs"], node["op"]
        get = lambda k: None if o.get(k) is None else vals[o[k]]  # noqa: E731
        if op == "conv2d":
            y = conv2d(get("input"), get("filter"), get("bias"), a)
        elif op == "relu":
            y = np.maximum(get("input"), 0)
        elif op in ("maxPool2d", "averagePool2d"):
            y = pool(get("input"), a, "max" if op == "maxPool2d" else "average")
        elif op == "concat":
            y = np.concatenate([vals[i] for i in o["inputs"]], a["axis"])
        elif op == "transpose":
            y = get("input").transpose(a["permutation"])
        elif op == "reshape":
            y = get("input").reshape(a["newShape"])
        elif op == "add":
            y = get("a") + get("b")
        elif op == "softmax":
            y = softmax(get("input"), a["axis"], softmax_2d)
        else:
            raise NotImplementedError(f"no numpy evaluation of {op} here")
        if list(y.shape) != node["outputs"][0]["shape"]:
            raise AssertionError(f"{op}: numpy shape {list(y.shape)}, the graph says {node['outputs'][0]['shape']}")
        vals[node["outputs"][0]["id"]] = y
        steps.append((node, y))
    return {name: vals[i] for name, i in doc["outputs"].items()}, steps


def core_per_node(doc, buffers, feeds) -> dict:
    """Every node's output, from the polyfill core (CPython, default cpu context)."""
    from webnn_core import plain
    from webnn_core.context import Context

    every = dict(doc, outputs={f"n{k}": n["outputs"][0]["id"] for k, n in enumerate(doc["nodes"])})
    context = Context("cpu")
    return context.compute(plain.from_plain(context, every, buffers), feeds)


# ------------------------------------------------------------------ the run
def record(model: str, version: str, layout: str | None) -> dict:
    import models as bench_models
    import ort_web

    why = ort_web.ensure_ort(version)
    if why:
        raise SystemExit(f"graph_check: onnxruntime-web {version}: {why}")
    [case] = ort_web.net_cases([model]) if model in bench_models.TITLES else []
    page = ort_web.OrtPage(version=version)
    try:
        wasm = page.run(case, "wasm")
        tab = page.tab("webnn-cpu")
        tab.evaluate("async () => { await navigator.ml.createContext({ deviceType: 'cpu' }); }")
        if layout:
            tab.evaluate(LAYOUT_JS, layout)
        tab.evaluate("(code) => webnnPolyfill.pyodide().runPython(code)", RECORD_PY)
        webnn = page.run(case, "webnn", "cpu")
        graphs = json.loads(tab.evaluate("() => webnnPolyfill.pyodide().runPython('import json; json.dumps(GRAPH_CHECK)')"))
    finally:
        page.close()
    return {"model": model, "version": version, "layout": layout or "(the polyfill's)",
            "feeds": {k: {"dims": f.dims, "data": base64.b64encode(f.array.tobytes()).decode()} for k, f in case.feeds.items()},
            "wasm": wasm.get("outputs"), "webnn": webnn.get("outputs"), "error": webnn.get("error"),
            "placed": ort_web.placements(webnn.get("log", [])), "graphs": graphs}


def check(rec: dict) -> int:
    import ort_web
    from collections import Counter

    feeds = {k: np.frombuffer(base64.b64decode(v["data"]), np.float32).reshape(v["dims"]) for k, v in rec["feeds"].items()}
    print(f"onnxruntime-web {rec['version']}, {rec['model']}, reported layout {rec['layout']}: "
          f"{len(rec['graphs'])} WebNN graph(s), nodes placed {rec['placed']}" + (f"; error {rec['error']}" if rec["error"] else ""))
    status = 0
    for k, g in enumerate(rec["graphs"]):
        doc, buffers = g["doc"], [base64.b64decode(b) for b in g["bufs"]]
        ops = Counter(n["op"] for n in doc["nodes"])
        print(f"graph {k}: {len(doc['nodes'])} nodes: " + ", ".join(f"{op} ×{c}" for op, c in sorted(ops.items())))
        for n in doc["nodes"]:
            if n["op"] in ("softmax", "transpose"):
                print(f"   {n['op']} {n['attrs']} -> {n['outputs'][0]['shape']}")
        if len(rec["graphs"]) != 1 or set(doc["inputs"][i]["name"] for i in range(len(doc["inputs"]))) != set(feeds):
            print("   (not the whole model: numpy evaluation of single-graph sessions only)")
            continue
        try:
            out, steps = evaluate(doc, buffers, feeds)
            out2d, _ = evaluate(doc, buffers, feeds, softmax_2d=True)
        except NotImplementedError as e:
            print(f"   numpy: {e}")
            continue
        for name, y in out.items():
            polyfill = ort_web._array(rec["webnn"][name]) if rec.get("webnn") else None
            wasm = ort_web._array(rec["wasm"][name])
            if polyfill is not None:
                print(f"   {name}: numpy (the graph as built) vs the polyfill: max |diff| {np.abs(y - polyfill).max():.3g}")
            print(f"   {name}: numpy (the graph as built) vs ORT wasm EP: max |diff| {np.abs(y - wasm).max():.3g}")
            if any(n["op"] == "softmax" for n in doc["nodes"]):
                print(f"   {name}: numpy, softmax as ONNX opset < 13 (2-D coercion) vs ORT wasm EP: "
                      f"max |diff| {np.abs(out2d[name] - wasm).max():.3g}")
        core = core_per_node(doc, buffers, feeds)
        worst, where = 0.0, None
        for i, (node, y) in enumerate(steps):
            err = float(np.abs(np.asarray(core[f"n{i}"], np.float64) - y).max() / (1 + np.abs(y).max()))
            if err > worst:
                worst, where = err, f"{i} {node['op']}"
        print(f"   node by node, the polyfill core vs numpy: worst |diff| / (1 + max |y|) {worst:.3g} (node {where})")
        status |= worst > 1e-4
    return int(status)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="squeezenet", help="a tools/bench_ort/models.py network")
    p.add_argument("--ort-version", default="1.22.0")
    p.add_argument("--layout", choices=("nchw", "nhwc"), help="override the reported preferredInputLayout")
    p.add_argument("--save", type=Path, help="write the recording (graphs, feeds, outputs) as JSON here")
    p.add_argument("--load", type=Path, help="check a saved recording instead of running ORT")
    args = p.parse_args(argv)
    rec = json.loads(args.load.read_text()) if args.load else record(args.model, args.ort_version, args.layout)
    if args.save:
        args.save.write_text(json.dumps(rec))
    return check(rec)


if __name__ == "__main__":
    sys.exit(main())
