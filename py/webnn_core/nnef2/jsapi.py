"""The JS entry point `webnnPolyfill.loadNNEF` (js/src/nnef.js) through
`webnn_core.bridge`: NNEF 1.0 and 2.0 models are told apart by content
(detect.py); 1.0 goes to webnn_core.nnef, 2.0 is loaded here."""
from __future__ import annotations

from ..nnef import jsapi as v1
from .detect import is_nnef2, text_is_nnef2
from .model import load as load_model
from .parser import parse_module


def load(context, manifest, options, data):
    files = v1.unpack(manifest, data)
    if not is_nnef2(files):
        return v1.load(context, manifest, options, data)
    options = options or {}
    model = load_model(files, context, graph=options.get("graph"), attrs=options.get("attrs"))
    return model, {
        "name": model.name,
        "version": "2.0",
        "inputs": model.inputs,
        "outputs": {n: d for n, d in model.outputs.items()},
        "state": {},
        "allInputs": model.graph.input_descriptors,
    }


def required_files(text):
    """The files a graph.nnef (1.0) or main.sknd (2.0) needs beside it. For 2.0:
    the model-local modules it imports, and each top-level graph variable under the
    name the Khronos v2.0 tools write (main.<Graph>.<var>.dat)."""
    if not text_is_nnef2(text):
        return v1.required_files(text)
    from . import stdlib
    module = parse_module(text, "main.sknd", "main")
    out = [name.replace(".", "/") + ".sknd" for name, _ in module.imports if name not in stdlib.MODULES]
    for g in module.graphs[:1]:
        out += [f"main.{g.name}.{p.name}.dat" for p in g.block("variable")]
    return out


def export(graph, name="G"):
    from .export import export_graph
    text, files = export_graph(graph, name or "G")
    return {"text": text, "files": sorted(files), "mapping": {}}


def export_archive(graph, name="G") -> bytes:
    from ..nnef.samples import to_tgz
    from .export import export_graph
    text, files = export_graph(graph, name or "G")
    return to_tgz({"main.sknd": text.encode(), **files})
