"""Run an NNEF model with the WebNN core on CPython.

    python -m webnn_core.nnef MODEL [--input NAME=FILE.npy ...] [--output-dir DIR] [--check]

MODEL is a folder holding graph.nnef (+ .dat files, optional graph.quant), a
.tar / .tgz / .tar.gz archive of one, or a graph.nnef path. Without --check the
model is parsed, lowered to a WebNN graph, executed, and each output written
as DIR/NAME.npy. With --check it is only parsed, and every tensor's shape is
printed. Errors go to stderr (as file:line:column: message) with exit code 1.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np


def _parse_inputs(items):
    out = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"--input expects NAME=FILE.npy, got {item!r}")
        name, path = item.split("=", 1)
        out[name] = path
    return out


def main(argv=None) -> int:
    # Installed from the wheel, this is the console script `webnn-nnef`.
    prog = "webnn-nnef" if os.path.basename(sys.argv[0]) == "webnn-nnef" else "python -m webnn_core.nnef"
    p = argparse.ArgumentParser(prog=prog,
                                description="Parse, lower and run an NNEF 1.0 model on the WebNN core.")
    p.add_argument("model", help="model folder, .tar/.tgz archive, or graph.nnef file")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy", help="an input tensor (repeatable)")
    p.add_argument("--output-dir", default=".", help="where to write NAME.npy for each output (default: .)")
    p.add_argument("--check", action="store_true", help="only parse; print every tensor's shape")
    p.add_argument("--random-inputs", type=int, metavar="SEED", help="feed seeded random data to missing inputs")
    p.add_argument("--gelu", choices=("nnef", "exact"), default="nnef",
                   help="gelu as NNEF defines it (x*sigmoid(1.702x), default) or the exact erf form")
    p.add_argument("--variables", choices=("auto", "constant", "state"), default="auto",
                   help="how variables targeted by update are handled (default: auto)")
    p.add_argument("--quantization", action="store_true", help="apply graph.quant hints as fake quantization")
    p.add_argument("--export", metavar="PATH", help="also write the built WebNN graph back as NNEF (folder/.tgz)")
    args = p.parse_args(argv)

    from .errors import NNEFError
    from ..errors import WebNNError

    try:
        if args.check:
            from .loader import load

            graph = load(args.model, load_variables=False)
            print(f"graph {graph.name}: {len(graph.operations)} operations, inputs {graph.inputs}, "
                  f"outputs {graph.outputs}")
            for name, t in graph.tensors.items():
                shape = "?" if t.shape is None else str(list(t.shape))
                print(f"{name}: {t.dtype}{shape}")
            return 0
        from .api import load_model, random_inputs

        model = load_model(args.model, gelu=args.gelu, variables=args.variables, quantization=args.quantization)
        files = _parse_inputs(args.input)
        unknown = sorted(set(files) - set(model.inputs))
        if unknown:
            raise NNEFError(f"unknown input(s) {unknown}; the model's inputs are {sorted(model.inputs)}")
        feeds = {}
        missing = []
        for name, desc in model.inputs.items():
            if name in files:
                arr = np.load(files[name], allow_pickle=False)
                if list(arr.shape) != list(desc["shape"]):
                    raise NNEFError(f"input '{name}' from {files[name]} has shape {list(arr.shape)}, "
                                    f"the model expects {desc['shape']}")
                feeds[name] = arr.astype(desc["dataType"]) if arr.dtype != np.dtype(desc["dataType"]) else arr
            else:
                missing.append(name)
        if missing:
            if args.random_inputs is None:
                raise NNEFError(f"missing input(s) {missing}: pass --input NAME=FILE.npy (expected "
                                + ", ".join(f"{n}: {model.inputs[n]['dataType']}{model.inputs[n]['shape']}"
                                            for n in missing) + ") or --random-inputs SEED")
            feeds.update(random_inputs({n: model.inputs[n] for n in missing}, args.random_inputs))
        results = model.run(feeds)
        os.makedirs(args.output_dir, exist_ok=True)
        for name in model.nnef.outputs:
            path = os.path.join(args.output_dir, f"{name}.npy")
            np.save(path, results[name])
            print(f"{path}: {results[name].dtype}{list(results[name].shape)}")
        if args.export:
            from .export import save

            save(model.graph, args.export, name=model.nnef.name)
            print(f"exported to {args.export}")
        return 0
    except (NNEFError, WebNNError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
