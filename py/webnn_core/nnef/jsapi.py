"""What the JS entry points (`webnnPolyfill.loadNNEF` / `exportNNEF`, js/src/nnef.js)
call through `webnn_core.bridge`. Files travel as one byte buffer plus a
manifest [[path, offset, length], ...]."""
from __future__ import annotations

from .api import load_model
from .document import parse_string
from .errors import NNEFDataError
from .export import export_graph, save
from .samples import to_tgz

ARCHIVE_SUFFIXES = (".tgz", ".tar.gz", ".tar")
OPTIONS = ("gelu", "variables", "quantization")


def unpack(manifest, data) -> object:
    data = bytes(data or b"")
    files = {}
    for path, offset, length in manifest:
        if offset < 0 or length < 0 or offset + length > len(data):
            raise NNEFDataError(f"{path}: the file data is truncated")
        files[str(path)] = data[offset:offset + length]
    if len(files) == 1:
        (path, content), = files.items()
        if path.lower().endswith(ARCHIVE_SUFFIXES) or content[:2] == b"\x1f\x8b" or content[257:262] == b"ustar":
            return content
    return files


def load(context, manifest, options, data):
    options = {k: v for k, v in (options or {}).items() if k in OPTIONS and v is not None}
    model = load_model(unpack(manifest, data), context, **options)
    g = model.graph
    return model, {
        "name": model.nnef.name,
        "inputs": model.inputs,
        "outputs": {n: d for n, d in model.outputs.items()},
        "state": model.state,
        "allInputs": g.input_descriptors,
    }


def required_files(graph_text):
    """The files a graph.nnef needs beside it: one .dat per variable label."""
    graph = parse_string(graph_text)
    seen, out = set(), []
    for op in graph.operations:
        if op.name == "variable":
            path = op.attribs["label"].lstrip("/") + ".dat"
            if path.lower() not in seen:
                seen.add(path.lower())
                out.append(path)
    return out


def export(graph, name="G"):
    text, files, mapping = export_graph(graph, name or "G")
    return {"text": text, "files": sorted(files), "mapping": mapping}


def export_archive(graph, name="G") -> bytes:
    text, files, _ = export_graph(graph, name or "G")
    return to_tgz({"graph.nnef": text.encode(), **files})


__all__ = ["load", "required_files", "export", "export_archive", "save"]
