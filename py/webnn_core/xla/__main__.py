"""Run a StableHLO program (JAX's `jax.jit(f).lower(*args).as_text()`) on the WebNN core.

    python -m webnn_core.xla PROGRAM.mlir [--weights W.npz] [--input NAME=FILE.npy ...]
                             [--output-dir D] [--check]
    webnn-xla ...            (the same, installed with the Python package)

Parameter i of @main is `arg<i>`: give it with --input argI=FILE.npy, or as the
npz key `arg<i>` in --weights (it then becomes a constant). Result i is written
as D/result<i>.npy with the program's dtype (f32 float32, i32 int32, i1 bool).
With --check the program is only parsed and built, and its inputs and outputs
printed. Errors go to stderr as `line:column: message` with exit code 1.
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np


def main(argv=None) -> int:
    prog = "webnn-xla" if os.path.basename(sys.argv[0]) == "webnn-xla" else "python -m webnn_core.xla"
    p = argparse.ArgumentParser(prog=prog,
                                description="Import a StableHLO program and run it on the WebNN core.")
    p.add_argument("program", help="StableHLO MLIR text (pretty or generic form)")
    p.add_argument("--weights", metavar="W.npz", help="constants for parameters: npz keys arg<i>")
    p.add_argument("--input", action="append", metavar="NAME=FILE.npy", help="an input tensor (repeatable)")
    p.add_argument("--output-dir", default=".", help="where to write result<i>.npy (default: .)")
    p.add_argument("--check", action="store_true", help="only parse and build; print the inputs and outputs")
    p.add_argument("--random-inputs", type=int, metavar="SEED", help="feed seeded random data to missing inputs")
    args = p.parse_args(argv)

    from ..errors import WebNNError
    from .api import load_stablehlo
    from .errors import StableHLOError

    try:
        with open(args.program, encoding="utf-8") as f:
            text = f.read()
        model = load_stablehlo(text, weights=args.weights)
        if args.check:
            for name, d in model.inputs.items():
                print(f"input {name}: {d['dataType']}{d['shape']}")
            for name, d in model.outputs.items():
                print(f"output {name}: {d['dataType']}{d['shape']}")
            return 0
        files = {}
        for item in args.input or []:
            if "=" not in item:
                raise StableHLOError(f"--input expects NAME=FILE.npy, got {item!r}")
            name, path = item.split("=", 1)
            files[name] = path
        unknown = sorted(set(files) - set(model.input_names))
        if unknown:
            raise StableHLOError(f"unknown input(s) {unknown}; the program's inputs are {sorted(model.inputs)}")
        # parameters that are not graph inputs (zero-size, or unused by the results) need no data
        feeds, missing = {}, []
        for name, desc in model.inputs.items():
            if name not in files:
                missing.append(name)
                continue
            arr = np.load(files[name], allow_pickle=False)
            if list(arr.shape) != list(desc["shape"]):
                raise StableHLOError(f"input '{name}' from {files[name]} has shape {list(arr.shape)}, "
                                     f"the program expects {desc['shape']}")
            feeds[name] = arr.astype(desc["dataType"], copy=False)
        if missing:
            if args.random_inputs is None:
                raise StableHLOError(f"missing input(s) {missing}: pass --input NAME=FILE.npy (expected "
                                     + ", ".join(f"{n}: {model.inputs[n]['dataType']}{model.inputs[n]['shape']}"
                                                 for n in missing) + ") or --random-inputs SEED")
            rng = np.random.default_rng(args.random_inputs)
            for n in missing:
                d = model.inputs[n]
                feeds[n] = (rng.standard_normal(d["shape"]) if d["dataType"].startswith("float")
                            else rng.integers(0, 2, d["shape"])).astype(d["dataType"])
        results = model.run(feeds)
        os.makedirs(args.output_dir, exist_ok=True)
        for name, arr in results.items():
            path = os.path.join(args.output_dir, f"{name}.npy")
            np.save(path, arr)
            print(f"{path}: {arr.dtype}{list(arr.shape)}")
        return 0
    except (WebNNError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
