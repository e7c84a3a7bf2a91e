"""NNEF 2.0 models: a folder with `main.sknd`, further modules (`x.sknd`,
`a/b.sknd`) and one `.dat` file per variable (the 1.0 binary format), or the
same as a .tgz/.tar archive or an in-memory {path: bytes} mapping.

The draft leaves a variable's file name open; we look up the scoped name as
the Khronos v2.0 tools write it, `main.<Graph>.<var>.dat` (nested labels
joined with '.'), then `<Graph>.<var>.dat`, then `<var>.dat`."""
from __future__ import annotations

import gzip
import io
import os
import tarfile

import numpy as np

from ..context import Context
from ..errors import WebNNError
from ..nnef import dat
from ..nnef.errors import NNEFDataError, NNEFSemanticError, check_unused_input
from .compose import Composer
from .dtypes import NUMPY_TYPES, SKND_TYPES
from .modules import ModuleSet
from .parser import parse_module

MAIN = "main.sknd"


class Files:
    """A model's files by path relative to the folder holding main.sknd."""

    def __init__(self, files: dict, name="<memory>"):
        self.name = name
        entries = {_norm(p): d for p, d in files.items() if _norm(p)}
        mains = sorted((p for p in entries if p == MAIN or p.endswith("/" + MAIN)), key=lambda p: (p.count("/"), p))
        if not mains:
            raise NNEFDataError(f"{name}: no {MAIN} found (an NNEF 2.0 model's main module must be main.sknd)")
        root = mains[0][:-len(MAIN)]
        self.files = {p[len(root):]: d for p, d in entries.items() if p.startswith(root)}

    def read(self, path):
        data = self.files.get(path)
        if data is None:
            return None
        if callable(data):
            data = self.files[path] = data()
        return bytes(data)

    def text(self, path):
        data = self.read(path)
        if data is None:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise NNEFDataError(f"{path}: not UTF-8 text ({e})") from None


def _norm(path):
    path = str(path).replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def is_archive(data: bytes) -> bool:
    return data[:2] == b"\x1f\x8b" or data[257:262] == b"ustar"


def untar(data: bytes, name="<archive>") -> dict:
    try:
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            out = {}
            for m in tar.getmembers():
                if m.isfile():
                    f = tar.extractfile(m)
                    out[m.name] = f.read() if f is not None else b""
            return out
    except (tarfile.TarError, OSError, EOFError) as e:
        raise NNEFDataError(f"{name}: not a readable tar archive ({e})") from None


def open_files(source) -> Files:
    """Files from a folder, an archive path, a main.sknd path, archive bytes,
    SkriptND text, or a {relative path: bytes | str} mapping."""
    if isinstance(source, Files):
        return source
    if isinstance(source, dict):
        return Files({p: (v.encode() if isinstance(v, str) else v) for p, v in source.items()})
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        return Files(untar(data) if is_archive(data) else {MAIN: data})
    text = str(os.fspath(source))
    if "\n" in text or "{" in text:
        return Files({MAIN: text.encode()})
    if os.path.isdir(text):
        files = {}
        for dirpath, _, names in os.walk(text):
            for n in names:
                full = os.path.join(dirpath, n)
                files[os.path.relpath(full, text)] = (lambda f=full: _read(f))
        return Files(files, text)
    if not os.path.exists(text):
        raise NNEFDataError(f"{text}: no such file or folder")
    if text.endswith(".sknd"):
        # this file is the main module; its folder holds the other modules and the .dat files
        folder = os.path.dirname(text) or "."
        files = {}
        for dirpath, _, names in os.walk(folder):
            for n in names:
                full = os.path.join(dirpath, n)
                if n.endswith((".sknd", ".dat")) and os.path.abspath(full) != os.path.abspath(text):
                    files[os.path.relpath(full, folder)] = (lambda f=full: _read(f))
        files = {k: v for k, v in files.items() if k != MAIN}
        files[MAIN] = _read(text)
        return Files(files, folder)
    return Files(untar(_read(text), text), text)


def variable_candidates(scope, name):
    """File names to try for variable `name` declared in label scope [Graph, label...]."""
    full = ".".join(list(scope) + [name])
    out = [f"main.{full}.dat", f"{full}.dat"]
    if len(scope) > 1:
        out.append(".".join(list(scope[1:]) + [name]) + ".dat")
    out.append(f"{name}.dat")
    return list(dict.fromkeys(out))


class Model:
    """A loaded NNEF 2.0 graph: `graph` is the built WebNN graph on `context`."""

    def __init__(self, name, context, graph, inputs, outputs, composer, module):
        self.name = name
        self.context = context
        self.graph = graph
        self.input_tensors = inputs
        self.output_tensors = outputs
        self.composer = composer
        self.module = module

    @property
    def inputs(self):
        """The inputs the built graph takes, name -> descriptor. A declared input that no
        output depends on is not one of them (as in NNEF 1.0: webnn_core.nnef.api): the
        WebNN graph has no such input to bind, and run() accepts and ignores it."""
        return {n: {"dataType": t.operand.dtype if t.operand is not None else None, "shape": list(t.shape)}
                for n, t in self.input_tensors.items() if self.graph is None or n in self.graph.inputs}

    @property
    def outputs(self):
        return {n: d.descriptor for n, d in self.graph.outputs.items()} if self.graph is not None else \
            {n: {"shape": list(t.shape)} for n, t in self.output_tensors.items()}

    def run(self, inputs: dict) -> dict:
        taken = self.inputs
        feeds = {}
        for name, value in inputs.items():
            if name in taken or name not in self.input_tensors:
                feeds[name] = np.asarray(value)  # an unknown name: compute() names the inputs
            else:
                check_unused_input(name, value, self.input_tensors[name].shape)
        for name, desc in taken.items():
            if name not in inputs:
                raise NNEFDataError(f"missing input '{name}' ({desc['dataType']}{desc['shape']})")
        return self.context.compute(self.graph, feeds)


def parse_model(source):
    files = open_files(source)
    main = parse_module(files.text(MAIN), MAIN, "main")
    modules = ModuleSet(main, files.text)
    if not main.graphs:
        raise NNEFSemanticError("main.sknd defines no graph (seed §2.15: the main module must define one)").at(
            main.operators[0].pos if main.operators else None)
    return files, main, modules


def pick_graph(main, name):
    if name is None:
        return main.graphs[0]
    for g in main.graphs:
        if g.name == name:
            return g
    raise NNEFSemanticError(f"main.sknd has no graph '{name}' (it has: {', '.join(g.name for g in main.graphs)})")


def load(source, context=None, *, graph=None, attrs=None, lowered=(), quantization=False) -> Model:
    """Load an NNEF 2.0 model and build its graph (the first one, or `graph`) on
    `context`. `attrs` overrides the graph's @attrib defaults; `lowered` names
    standard operators to decompose from their SkriptND bodies instead of
    mapping them to WebNN directly; `quantization` applies the graph's @quantize
    entries as fake quantization (quantize then dequantize) of those tensors."""
    files, main, modules = parse_model(source)
    gdef = pick_graph(main, graph)
    context = context or Context()
    builder = context.graph_builder()

    def variables(scope, name, dtype, shape, pos):
        for path in variable_candidates(scope, name):
            data = files.read(path)
            if data is not None:
                tf = dat.read_tensor(data, path)
                if list(tf.data.shape) != list(shape):
                    raise NNEFDataError(f"{path}: shape {list(tf.data.shape)} does not match variable '{name}' "
                                        f"declared {shape}").at(pos)
                kind = SKND_TYPES.get(str(tf.data.dtype), "bool" if tf.data.dtype == np.bool_ else None)
                if kind != dtype:
                    raise NNEFDataError(f"{path}: {tf.data.dtype} data for variable '{name}' declared {dtype}").at(pos)
                return tf.data.astype(NUMPY_TYPES[dtype])
        raise NNEFDataError(f"no data file for variable '{name}' (looked for "
                            f"{', '.join(variable_candidates(scope, name))})").at(pos)

    composer = Composer(modules, builder, variables, lowered, quantization)
    inputs, outputs = composer.compose_graph(gdef, attrs)
    built = {}
    for name, t in outputs.items():
        operand = t.operand
        if operand.kind in ("input", "constant"):
            operand = builder.op("identity", operand)
        built[name] = operand
    try:
        webnn = builder.build(built)
    except WebNNError as e:
        raise NNEFSemanticError(f"building the WebNN graph failed: {e}") from None
    return Model(gdef.name, context, webnn, inputs, outputs, composer, main)


def shapes(source, *, graph=None, attrs=None):
    """Compose without building (no weights needed): ({inputs}, {outputs}, composer)
    with every tensor's type and shape as the SkriptND definitions give them."""
    files, main, modules = parse_model(source)
    gdef = pick_graph(main, graph)
    composer = Composer(modules, None, None)
    inputs, outputs = composer.compose_graph(gdef, attrs)
    return inputs, outputs, composer
