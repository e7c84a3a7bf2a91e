"""Random WebNN graphs for the fuzz suite, with numpy references.

`random_graph(rng)` returns a spec the page builds (tests/fuzz/fuzz_page.js,
runGraph) and the expected outputs computed here with numpy (float64), each
op written from its spec definition, independently of webnn_core.
"""
from __future__ import annotations

import numpy as np

UNARY = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "abs": np.abs,
    "neg": np.negative,
    "exp": np.exp,
}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _conv2d_nchw(x, w, padding, strides):
    t, b, left, right = padding
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (left, right)))
    n, c, h, wd = xp.shape
    o, _, kh, kw = w.shape
    sh, sw = strides
    oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + sh * (oh - 1) + 1:sh, j:j + sw * (ow - 1) + 1:sw]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return y


class _Builder:
    def __init__(self, rng):
        self.rng = rng
        self.values = {}  # id -> float64 array
        self.spec = {"inputs": [], "constants": [], "nodes": [], "outputs": []}
        self.n = 0

    def new_id(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def data(self, shape):
        return np.round(self.rng.uniform(-2, 2, size=shape), 2).astype(np.float32).astype(np.float64)

    def leaf(self, shape, kind):
        vid = self.new_id("in" if kind == "inputs" else "c")
        value = self.data(shape)
        self.values[vid] = value
        self.spec[kind].append({"id": vid, "shape": list(shape), "data": value.reshape(-1).tolist()})
        return vid

    def node(self, op, args, options, value):
        vid = self.new_id("v")
        self.values[vid] = value
        self.spec["nodes"].append({"id": vid, "op": op, "args": args, "options": options})
        return vid

    def step(self):
        rng = self.rng
        vid = list(self.values)[rng.integers(len(self.values))]
        x = self.values[vid]
        ref = {"ref": vid}
        kind = rng.integers(10)
        if kind < 3:
            name = list(UNARY)[rng.integers(len(UNARY))]
            if name == "exp" and np.abs(x).max() > 4:
                name = "tanh"
            return self.node(name, [ref], {}, UNARY[name](x))
        if kind == 3:
            alpha = float(rng.choice([0.01, 0.5, 2.0]))
            return self.node("leakyRelu", [ref], {"alpha": alpha}, np.where(x >= 0, x, alpha * x))
        if kind == 4:
            lo, hi = sorted(float(v) for v in np.round(rng.uniform(-2, 2, 2), 1))
            return self.node("clamp", [ref], {"minValue": lo, "maxValue": hi}, np.clip(x, lo, hi))
        if kind == 5:  # elementwise with broadcasting: the other side has some dimensions 1
            other_shape = [d if rng.random() < 0.7 else 1 for d in x.shape]
            other = self.leaf(other_shape, "constants" if rng.random() < 0.5 else "inputs")
            name = list(BINARY)[rng.integers(len(BINARY))]
            value = BINARY[name](x, self.values[other])
            if np.abs(value).max() > 1e4:
                return None
            return self.node(name, [ref, {"ref": other}], {}, value)
        if kind == 6 and x.ndim >= 1:
            axis = int(rng.integers(x.ndim))
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            return self.node("softmax", [ref, axis], {}, e / e.sum(axis=axis, keepdims=True))
        if kind == 7 and x.ndim >= 1:
            perm = [int(p) for p in rng.permutation(x.ndim)]
            if rng.random() < 0.5:
                return self.node("transpose", [ref], {"permutation": perm}, np.transpose(x, perm))
            new_shape = [int(np.prod(x.shape[:1])), int(np.prod(x.shape[1:]))] if x.ndim > 1 else [int(x.size)]
            return self.node("reshape", [ref, new_shape], {}, x.reshape(new_shape))
        if kind == 8 and x.ndim >= 1:
            axes = sorted({int(a) for a in rng.integers(0, x.ndim, size=rng.integers(1, x.ndim + 1))})
            keep = bool(rng.random() < 0.5)
            name = "reduceSum" if rng.random() < 0.5 else "reduceMean"
            fn = np.sum if name == "reduceSum" else np.mean
            return self.node(name, [ref], {"axes": axes, "keepDimensions": keep}, fn(x, axis=tuple(axes), keepdims=keep))
        if kind == 9:
            if x.ndim == 2:  # matmul with a fresh [k, n] operand
                k = x.shape[1]
                other = self.leaf([k, int(rng.integers(1, 5))], "constants")
                return self.node("matmul", [ref, {"ref": other}], {}, x @ self.values[other])
            if x.ndim == 4 and min(x.shape[2:]) >= 1:
                c = x.shape[1]
                kh, kw = int(rng.integers(1, min(3, x.shape[2]) + 1)), int(rng.integers(1, min(3, x.shape[3]) + 1))
                filt = self.leaf([int(rng.integers(1, 4)), c, kh, kw], "constants")
                padding = [int(p) for p in rng.integers(0, 2, 4)]
                strides = [int(s) for s in rng.integers(1, 3, 2)]
                value = _conv2d_nchw(x, self.values[filt], padding, strides)
                if min(value.shape) < 1:
                    return None
                return self.node("conv2d", [ref, {"ref": filt}], {"padding": padding, "strides": strides}, value)
            if x.ndim >= 1:  # concat with itself along a random axis
                axis = int(rng.integers(x.ndim))
                return self.node("concat", [[ref, ref], axis], {}, np.concatenate([x, x], axis=axis))
        return None


def random_graph(rng: np.random.Generator):
    """(spec, expected outputs {id: float64 array})."""
    b = _Builder(rng)
    for _ in range(int(rng.integers(1, 3))):
        rank = int(rng.integers(1, 5))
        b.leaf([int(d) for d in rng.integers(1, 5, size=rank)], "inputs")
    made = []
    for _ in range(int(rng.integers(2, 9))):
        vid = b.step()
        if vid is not None:
            made.append(vid)
    if not made:
        made.append(b.node("relu", [{"ref": b.spec["inputs"][0]["id"]}], {}, np.maximum(b.values[b.spec["inputs"][0]["id"]], 0)))
    outputs = sorted(set(made[-2:]))
    b.spec["outputs"] = outputs
    return _prune(b.spec), {o: b.values[o] for o in outputs}


def _refs(value):
    if isinstance(value, dict) and "ref" in value:
        yield value["ref"]
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _refs(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _refs(v)


def _prune(spec):
    """Keep only what the outputs need: a graph's inputs are those its outputs reach."""
    need = set(spec["outputs"])
    for node in reversed(spec["nodes"]):
        if node["id"] in need:
            need.update(_refs(node["args"]))
            need.update(_refs(node["options"]))
    return {"inputs": [i for i in spec["inputs"] if i["id"] in need],
            "constants": [c for c in spec["constants"] if c["id"] in need],
            "nodes": [n for n in spec["nodes"] if n["id"] in need], "outputs": spec["outputs"]}
