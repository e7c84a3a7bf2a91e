"""Train the gallery's default model at build time: a digit classifier that needs no download.

    python3 tools/train_digits.py [--out DIR]     # tools/build.py runs it; a few seconds

Data: the 8x8 handwritten digits that scikit-learn ships inside its wheel (1797
images, pixel values 0..16; no network). Model: scikit-learn's MLPClassifier,
64 -> 32 (relu) -> 10 (softmax), trained with L-BFGS from random_state=0 on a fixed
split, so every build gives the same weights. The gallery page (web/digits.html)
rebuilds the same network with MLGraphBuilder (matmul, add, relu, softmax) and runs
it through navigator.ml. Writes DIR/digits-mlp.json (default .cache/gallery/, served
at /generated/ by tools/serve.py):
  w1 [64, 32], b1 [32], w2 [32, 10], b2 [10]   float32 values, row-major
  samples   held-out test images (8x8, 0..16) with the true label and scikit-learn's own
            predict_proba / predict, the page's reference
  accuracy  scikit-learn's accuracy on the held-out split
and, when the `onnx` package is installed (requirements-dev.txt), the same network as an
ONNX model, DIR/digits-mlp.onnx (input "pixels" [1, 64] 0..16, output "probabilities"
[1, 10]), which the gallery's ONNX Runtime Web card (web/ort.html) runs through ORT's
WebNN execution provider.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / ".cache" / "gallery"
FILE = "digits-mlp.json"
HIDDEN = 32
TEST_FRACTION = 0.2
SAMPLES = 30


def split():
    """(x_train, y_train, x_test, y_test): pixels 0..16 as float64 [N, 64], a seeded split."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    return train_test_split(digits.data, digits.target, test_size=TEST_FRACTION, random_state=0,
                            stratify=digits.target)


def train():
    """The fitted MLPClassifier and the held-out split. Inputs are pixels / 16."""
    from sklearn.neural_network import MLPClassifier

    x_train, x_test, y_train, y_test = split()
    clf = MLPClassifier(hidden_layer_sizes=(HIDDEN,), activation="relu", solver="lbfgs", alpha=1e-3,
                        max_iter=400, random_state=0)
    clf.fit(x_train / 16.0, y_train)
    return clf, x_test, y_test


def export(clf, x_test, y_test) -> dict:
    w1, w2 = (np.asarray(w, np.float32) for w in clf.coefs_)
    b1, b2 = (np.asarray(b, np.float32) for b in clf.intercepts_)
    proba = clf.predict_proba(x_test / 16.0)
    pred = clf.predict(x_test / 16.0)
    # The first SAMPLES held-out images with every digit present, plus any the model gets wrong
    # among the first 200 (an honest gallery shows a miss too).
    pick = list(range(SAMPLES)) + [i for i in range(SAMPLES, 200) if pred[i] != y_test[i]][:3]
    return {
        "model": f"scikit-learn MLPClassifier 64-{HIDDEN}-10, relu, lbfgs, random_state=0",
        "input": "pixels 0..16, [1, 64] row-major 8x8; the network divides by 16",
        "accuracy": float((pred == y_test).mean()),
        "testCount": int(len(y_test)),
        "w1": w1.ravel().tolist(), "b1": b1.tolist(), "w2": w2.ravel().tolist(), "b2": b2.tolist(),
        "hidden": HIDDEN,
        "samples": [{"image": x_test[i].astype(int).tolist(), "label": int(y_test[i]),
                     "sklearnLabel": int(pred[i]), "sklearnProbabilities": proba[i].tolist()} for i in pick],
    }


def onnx_model(data: dict) -> bytes | None:
    """The exported network as ONNX bytes (Mul 1/16, MatMul, Add, Relu, MatMul, Add, Softmax), or
    None without the onnx package."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None
    h = data["hidden"]
    inits = [numpy_helper.from_array(np.asarray(v, np.float32).reshape(shape), name) for name, v, shape in (
        ("scale", [1 / 16], [1]), ("w1", data["w1"], [64, h]), ("b1", data["b1"], [h]),
        ("w2", data["w2"], [h, 10]), ("b2", data["b2"], [10]))]
    nodes = [helper.make_node("Mul", ["pixels", "scale"], ["x"]),
             helper.make_node("MatMul", ["x", "w1"], ["h0"]), helper.make_node("Add", ["h0", "b1"], ["h1"]),
             helper.make_node("Relu", ["h1"], ["h"]),
             helper.make_node("MatMul", ["h", "w2"], ["l0"]), helper.make_node("Add", ["l0", "b2"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["probabilities"], axis=-1)]
    graph = helper.make_graph(nodes, "digits_mlp", [helper.make_tensor_value_info("pixels", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tools/train_digits.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


def build(out: Path = DEFAULT_OUT) -> Path:
    """Train and write out/digits-mlp.json (and .onnx) unless they are already there for this script."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / FILE
    target_onnx = out / FILE.replace(".json", ".onnx")
    import sklearn

    stamp = hashlib.sha256(Path(__file__).read_bytes() + sklearn.__version__.encode()).hexdigest()[:16]
    if target.exists():
        try:
            data = json.loads(target.read_text())
            if data.get("stamp") == stamp:
                if not target_onnx.exists() and (model := onnx_model(data)):
                    target_onnx.write_bytes(model)
                return target
        except ValueError:
            pass
    data = export(*train())
    data["stamp"] = stamp
    data["sklearn"] = sklearn.__version__
    target.write_text(json.dumps(data))
    model = onnx_model(data)
    if model:
        target_onnx.write_bytes(model)
    print(f"train_digits: {target.relative_to(ROOT) if out.is_relative_to(ROOT) else target} "
          f"(held-out accuracy {data['accuracy']:.3f})", file=sys.stderr)
    return target


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = p.parse_args(argv)
    build(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
