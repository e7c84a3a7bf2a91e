"""Run an NNEF 2.0 (SkriptND) model with the WebNN core on CPython.

    python -m webnn_core.nnef2 MODEL [--input NAME=FILE.npy ...] [--output-dir DIR] [--check]
                                     [--graph NAME] [--attrib NAME=VALUE ...] [--random-inputs SEED]
                                     [--quantization] [--export PATH]

MODEL is a folder holding main.sknd (+ modules, .dat files), a .tgz/.tar
archive of one, or a main.sknd path. Without --check the model is composed,
built as a WebNN graph, executed, and each output written as DIR/NAME.npy.
With --check it is only composed (no weights needed) and every graph input
and output is printed with its shape. Same conventions as the 1.0 CLI
(`python -m webnn_core.nnef`): errors go to stderr as file:line:column:
message, with exit code 1.
"""
from __future__ import annotations

import argparse
import ast
import os
import sys

import numpy as np


def _pairs(items, what):
    out = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"{what} expects NAME=VALUE, got {item!r}")
        name, value = item.split("=", 1)
        out[name] = value
    return out


def _attr_value(text):
    try:
        v = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return list(v) if isinstance(v, tuple) else v


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m webnn_core.nnef2",
                                description="Compose, build and run an NNEF 2.0 (SkriptND) model on the WebNN core.")
    p.add_argument("model", help="model folder, .tgz/.tar archive, or main.sknd file")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy", help="an input tensor (repeatable)")
    p.add_argument("--output-dir", default=".", help="where to write NAME.npy for each output (default: .)")
    p.add_argument("--check", action="store_true", help="only compose; print every graph input's and output's shape")
    p.add_argument("--graph", help="which graph of main.sknd (default: the first)")
    p.add_argument("--attrib", action="append", metavar="NAME=VALUE", help="a graph attribute (repeatable)")
    p.add_argument("--random-inputs", type=int, metavar="SEED", help="feed seeded random data to missing inputs")
    p.add_argument("--quantization", action="store_true", help="apply @quantize entries as fake quantization")
    p.add_argument("--export", metavar="PATH", help="also write the built WebNN graph back as SkriptND (folder/.tgz)")
    args = p.parse_args(argv)

    from ..errors import WebNNError
    from ..nnef.errors import NNEFError

    attrs = {k: _attr_value(v) for k, v in _pairs(args.attrib, "--attrib").items()}
    try:
        if args.check:
            from .model import shapes

            inputs, outputs, composer = shapes(args.model, graph=args.graph, attrs=attrs)
            print(f"{len(composer.operations)} operations")
            for kind, tensors in (("input", inputs), ("output", outputs)):
                for name, t in tensors.items():
                    print(f"{kind} {name}: {t.dtype}{list(t.shape)}")
            return 0
        from .model import load

        model = load(args.model, graph=args.graph, attrs=attrs, quantization=args.quantization)
        files = _pairs(args.input, "--input")
        unknown = sorted(set(files) - set(model.input_tensors))  # a declared input no output uses is ignored
        if unknown:
            raise NNEFError(f"unknown input(s) {unknown}; the model's inputs are {sorted(model.inputs)}")
        feeds, missing = {}, []
        rng = np.random.default_rng(args.random_inputs or 0)
        for name, desc in model.inputs.items():
            if name in files:
                arr = np.load(files[name], allow_pickle=False)
                if list(arr.shape) != list(desc["shape"]):
                    raise NNEFError(f"input '{name}' from {files[name]} has shape {list(arr.shape)}, the model "
                                    f"expects {desc['shape']}")
                feeds[name] = arr.astype(desc["dataType"])
            elif args.random_inputs is not None:
                feeds[name] = rng.standard_normal(desc["shape"]).astype(desc["dataType"])
            else:
                missing.append(f"{name}: {desc['dataType']}{desc['shape']}")
        if missing:
            raise NNEFError(f"missing input(s) {', '.join(missing)}: pass --input NAME=FILE.npy or "
                            f"--random-inputs SEED")
        results = model.run(feeds)
        os.makedirs(args.output_dir, exist_ok=True)
        for name in model.output_tensors:
            path = os.path.join(args.output_dir, f"{name}.npy")
            np.save(path, results[name])
            print(f"{path}: {results[name].dtype}{list(results[name].shape)}")
        if args.export:
            from .export import export_graph, write

            text, files = export_graph(model.graph, model.name)
            write(text, files, args.export)
            print(f"exported to {args.export}")
        return 0
    except (NNEFError, WebNNError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
