"""Per-operation numeric cases: a small NNEF graph per case, run through the
importer (WebNN core) and compared with the reference executor `nnef.Session`
or, where the reference does not implement the case, with an independent numpy
implementation of the spec formula (`oracle`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Case:
    name: str
    body: str
    inputs: dict                     # name -> (shape, kind[, dtype])
    outputs: tuple = ("y",)
    variables: dict = field(default_factory=dict)  # label -> (shape, kind)
    tol: tuple = (1e-5, 1e-6)        # (rtol, atol)
    oracle: object = None            # None: nnef.Session; else fn(inputs, variables) -> [outputs]
    extensions: str = ""
    ties: bool = False               # inputs avoid exact .5 ties


def generate(kind, shape, rng, dtype="float32"):
    if kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    if kind == "pos":
        return rng.uniform(0.5, 2.0, shape).astype(dtype)
    if kind == "unit":
        return rng.uniform(-0.95, 0.95, shape).astype(dtype)
    if kind == "gt1":
        return rng.uniform(1.1, 3.0, shape).astype(dtype)
    if kind == "wide":
        return (rng.standard_normal(shape) * 4).astype(dtype)
    if kind == "fint":
        return rng.integers(0, 3, shape).astype(dtype)
    if kind == "bool":
        return rng.random(shape) > 0.5
    if kind.startswith("int"):
        hi = int(kind[3:] or 3)
        return rng.integers(0, hi, shape).astype(np.int32)
    raise ValueError(kind)


def graph_text(case: Case) -> str:
    params = ", ".join(case.inputs)
    results = ", ".join(case.outputs)
    lines = ["version 1.0;"]
    if case.extensions:
        lines.append(case.extensions)
    lines.append(f"graph G( {params} ) -> ( {results} )\n{{")
    for name, spec in case.inputs.items():
        shape, kind = spec[0], spec[1]
        dtype = "logical" if kind == "bool" else "integer" if kind.startswith("int") else "scalar"
        lines.append(f"    {name} = external<{dtype}>(shape = {list(shape)});")
    for label, (shape, kind) in case.variables.items():
        ident = label.replace("/", "_")
        lines.append(f"    {ident} = variable(shape = {list(shape)}, label = '{label}');")
    lines.append("    " + case.body.strip().replace("\n", "\n    "))
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- numpy oracles
def pad_nd(x, pads, border, value=0.0):
    mode = {"constant": "constant", "ignore": "constant", "replicate": "edge", "reflect": "reflect",
            "reflect-even": "symmetric"}[border]
    crop = tuple(slice(max(-p, 0), x.shape[d] - max(-q, 0)) for d, (p, q) in enumerate(pads))
    x = x[crop]
    pos = [(max(p, 0), max(q, 0)) for p, q in pads]
    if mode == "constant":
        return np.pad(x, pos, mode="constant", constant_values=value)
    return np.pad(x, pos, mode=mode)


def auto_pad(extent, f, s, d):
    fd = (f - 1) * d + 1
    out = -(-extent // s)
    t = max((out - 1) * s + fd - extent, 0)
    return (t // 2, t - t // 2)


def windows(x, size, pads, stride, dilation, border, fill=0.0):
    """All window cells: array of shape out + [K] (row-major window order)."""
    pads = pads or [auto_pad(X, f, s, d) for X, f, s, d in zip(x.shape, size, stride, dilation)]
    xp = pad_nd(x, pads, border, fill)
    out = [(X - ((f - 1) * d + 1)) // s + 1 for X, f, s, d in zip(xp.shape, size, stride, dilation)]
    cells = []
    for off in np.ndindex(*size):
        idx = tuple(slice(o * d, o * d + (n - 1) * s + 1, s) for o, d, n, s in zip(off, dilation, out, stride))
        cells.append(xp[idx])
    return np.stack(cells, axis=-1), pads


def np_box(x, size, pads=None, stride=None, dilation=None, border="constant", normalize=False, kind="sum"):
    rank = x.ndim
    stride = stride or [1] * rank
    dilation = dilation or [1] * rank
    fill = -np.inf if (kind == "max" and border == "ignore") else 0.0
    cells, pads = windows(x.astype(np.float64), size, pads, stride, dilation, border, fill)
    if kind == "max":
        return cells.max(-1)
    total = cells.sum(-1)
    if not normalize:
        return total
    if border == "ignore":
        ones, _ = windows(np.ones_like(x, np.float64), size, pads, stride, dilation, "constant", 0.0)
        return total / ones.sum(-1)
    return total / np.prod(size)


def np_conv(x, w, b, pads=None, stride=None, dilation=None, border="constant", groups=1):
    """Spec §4.3.1 correlation in float64."""
    n, c = x.shape[:2]
    spatial = x.ndim - 2
    stride = stride or [1] * spatial
    dilation = dilation or [1] * spatial
    groups = groups or c
    pads = pads or [auto_pad(X, f, s, d) for X, f, s, d in zip(x.shape[2:], w.shape[2:], stride, dilation)]
    xp = pad_nd(x.astype(np.float64), [(0, 0), (0, 0)] + list(pads), border)
    out = [(X - ((f - 1) * d + 1)) // s + 1 for X, f, s, d in zip(xp.shape[2:], w.shape[2:], stride, dilation)]
    o = w.shape[0]
    og, ig = o // groups, c // groups
    y = np.zeros([n, o] + out)
    for off in np.ndindex(*w.shape[2:]):
        idx = tuple(slice(k * d, k * d + (m - 1) * s + 1, s) for k, d, m, s in zip(off, dilation, out, stride))
        patch = xp[(slice(None), slice(None)) + idx]  # n, c, out...
        for g in range(groups):
            wg = w[g * og:(g + 1) * og, :, *off].astype(np.float64)  # og, ig
            y[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch[:, g * ig:(g + 1) * ig], wg)
    return y + np.asarray(b, np.float64).reshape([1, -1] + [1] * spatial) if np.ndim(b) else y + b


def np_argmax_pool(x, size, pads=None, stride=None, dilation=None, border="constant"):
    rank = x.ndim
    fill = -np.inf if border == "ignore" else 0.0
    cells, _ = windows(x.astype(np.float64), size, pads, stride or [1] * rank, dilation or [1] * rank, border, fill)
    return cells.argmax(-1).astype(np.int32)


def np_sample(x, index, size, pads=None, stride=None, dilation=None, border="constant"):
    rank = x.ndim
    cells, _ = windows(x.astype(np.float64), size, pads, stride or [1] * rank, dilation or [1] * rank, border, 0.0)
    return np.take_along_axis(cells, index[..., None].astype(np.int64), -1)[..., 0]


def np_desample(x, index, size, out_shape, pads, stride):
    """Spec §4.3.3 desample (dilation 1): scatter-add into the up-scaled space."""
    y = np.zeros(out_shape)
    offs = list(np.ndindex(*size))
    for pos in np.ndindex(*x.shape):
        off = offs[index[pos]]
        tgt = tuple(p * s + o - pd[0] for p, s, o, pd in zip(pos, stride, off, pads))
        if all(0 <= t < n for t, n in zip(tgt, out_shape)):
            y[tgt] += x[pos]
    return y


def np_deconv(x, w, b, pads, stride, out_shape, groups=1):
    """Spec §4.3.1 deconvolution (dilation 1) by scattering, float64."""
    n, c = x.shape[:2]
    groups = groups or c
    o = w.shape[1] * groups
    ig, og = c // groups, w.shape[1]
    y = np.zeros([n, o] + list(out_shape[2:]))
    for pos in np.ndindex(*x.shape[2:]):
        for off in np.ndindex(*w.shape[2:]):
            tgt = tuple(p * s + k - pd[0] for p, s, k, pd in zip(pos, stride, off, pads))
            if all(0 <= t < m for t, m in zip(tgt, out_shape[2:])):
                for g in range(groups):
                    contrib = np.einsum("nc,co->no", x[(slice(None), slice(g * ig, (g + 1) * ig)) + pos],
                                        w[(slice(g * ig, (g + 1) * ig), slice(None)) + off].astype(np.float64))
                    y[(slice(None), slice(g * og, (g + 1) * og)) + tgt] += contrib
    return y + np.asarray(b, np.float64).reshape([1, -1] + [1] * (x.ndim - 2)) if np.ndim(b) else y + b


def np_upsample(x, factor, method, border):
    from webnn_core.nnef.lowering import interpolation_matrix
    y = x.astype(np.float64)
    for i, f in enumerate(factor):
        d = 2 + i
        m = interpolation_matrix(x.shape[d], f, method, border).astype(np.float64)
        y = np.moveaxis(np.tensordot(m, np.moveaxis(y, d, 0), axes=(1, 0)), 0, d)
    return y


def _lin_interp(x, factor, method, border):
    """Independent 1-D evaluation of spec §4.3.4 (per output index)."""
    n = x.shape[-1]
    out = np.zeros(x.shape[:-1] + (n * factor,))

    def at(j):
        if 0 <= j < n:
            return x[..., j]
        if border == "constant":
            return 0.0
        if border == "replicate":
            return x[..., min(max(j, 0), n - 1)]
        if border == "reflect":
            return x[..., -j if j < 0 else 2 * (n - 1) - j]
        return x[..., -j - 1 if j < 0 else 2 * n - 1 - j]
    for i in range(n * factor):
        if method == "asymmetric":
            p = i / factor
        elif method == "symmetric":
            p = (i - (factor - 1) / 2) / factor
        else:
            p = i * (n - 1) / (n * factor - 1)
        j = math.floor(p)
        u = p - j
        out[..., i] = (1 - u) * at(j) + (u * at(j + 1) if u else 0.0)
    return out


def cases():
    C = []
    X = {"x": ([2, 3, 5, 6], "f")}
    unary = ["copy", "neg", "exp", "sin", "cos", "tanh", "abs", "sign", "floor", "ceil", "sqr", "relu", "sigmoid",
             "softplus", "silu", "elu", "selu"]
    for op in unary:
        C.append(Case(op, f"y = {op}(x);", X))
    for op in ["rcp", "log", "sqrt", "rsqrt", "rsqr", "log2"]:
        C.append(Case(op, f"y = {op}(x);", {"x": ([2, 3, 5, 6], "pos")}))
    C.append(Case("tan", "y = tan(x);", {"x": ([2, 3, 5, 6], "unit")}))
    C.append(Case("round", "y = round(x);", {"x": ([2, 3, 5, 6], "wide")}, ties=True))
    C.append(Case("round-ties-spec", "y = round(x);", {"x": ([6], "f")},
                  oracle=lambda i, v: [np.floor(i["x"].astype(np.float64) + 0.5)], ties=False))
    for op, kind in [("sinh", "wide"), ("cosh", "f"), ("asinh", "wide"), ("acosh", "gt1"), ("atanh", "unit"),
                     ("atan", "wide"), ("asin", "unit"), ("acos", "unit")]:
        C.append(Case(op, f"y = {op}(x);", {"x": ([2, 3, 5, 6], kind)}, tol=(1e-5, 1e-5)))
    C.append(Case("leaky_relu", "y = leaky_relu(x, alpha = 0.2);", X))
    C.append(Case("prelu", "y = prelu(x, a);", {"x": ([2, 3, 5, 6], "f"), "a": ([1, 3], "f")}))
    # spec §4.9.1 prelu = select(x < 0, alpha * x, x), broadcasting both ways (the reference executor only one way)
    C.append(Case("prelu-broadcast-both", "y = prelu(x, a);", {"x": ([1, 3, 4], "f"), "a": ([2, 3], "f")},
                  oracle=lambda i, v: [np.where(i["x"] < 0, i["a"][:, :, None] * i["x"], i["x"] + 0 * i["a"][:, :, None])]))
    C.append(Case("gelu-nnef", "y = gelu(x);", X,
                  oracle=lambda i, v: [i["x"] / (1 + np.exp(-1.702 * i["x"].astype(np.float64)))]))
    C.append(Case("softabs", "y = softabs(x, epsilon = 0.1);", X,
                  oracle=lambda i, v: [np.sqrt(i["x"].astype(np.float64) ** 2 + 0.1)]))
    # binary, with NNEF left-aligned broadcasting
    for op in ["add", "sub", "mul", "div", "min", "max"]:
        C.append(Case(op + "-bcast", f"y = {op}(x, b);", {"x": ([2, 3, 5, 6], "f"), "b": ([1, 3], "pos")}))
    C.append(Case("pow", "y = pow(x, b);", {"x": ([2, 3, 5, 6], "pos"), "b": ([2, 3, 5, 6], "f")}))
    C.append(Case("add-literal", "y = add(x, 1.5);", X))
    for op in ["lt", "gt", "le", "ge", "eq", "ne"]:
        C.append(Case(op, f"y = {op}(x, b);", {"x": ([2, 3, 4], "fint"), "b": ([2, 3], "fint")}))
    C.append(Case("and-or-not", "a = and(p, q);\no = or(p, q);\ny = not(a);", {"p": ([4, 5], "bool"), "q": ([4, 5], "bool")},
                  outputs=("y", "o")))
    C.append(Case("select", "y = select(c, x, b);", {"c": ([2, 3], "bool"), "x": ([2, 3, 4], "f"), "b": ([1, 3], "f")}))
    C.append(Case("clamp-literal", "y = clamp(x, -0.5, 0.5);", X))
    C.append(Case("clamp-tensor", "y = clamp(x, a, b);", {"x": ([2, 3, 5], "f"), "a": ([1, 3], "unit"), "b": ([2, 3, 5], "gt1")}))
    # convolution
    W = {"w": ([6, 3, 3, 3], "f"), "b": ([1, 6], "f")}
    C.append(Case("conv", "y = conv(x, w, b, padding = [(1,1),(1,1)]);", {"x": ([2, 3, 7, 8], "f")}, variables=W, tol=(1e-4, 1e-4)))
    C.append(Case("conv-auto-stride2", "y = conv(x, w, b, stride = [2, 2]);", {"x": ([1, 3, 7, 8], "f")}, variables=W,
                  tol=(1e-4, 1e-4)))
    C.append(Case("conv-dilation", "y = conv(x, w, 0.0, padding = [(2,1),(0,3)], dilation = [2, 1]);",
                  {"x": ([1, 3, 9, 8], "f")}, variables={"w": ([6, 3, 3, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("conv-negative-pad", "y = conv(x, w, 0.0, padding = [(-1,1),(0,-2)]);",
                  {"x": ([1, 3, 9, 8], "f")}, variables={"w": ([6, 3, 3, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("conv-groups0", "y = conv(x, w, 0.0, groups = 0);", {"x": ([1, 4, 6, 6], "f")},
                  variables={"w": ([8, 1, 3, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("conv-groups2", "y = conv(x, w, 0.0, groups = 2);", {"x": ([1, 4, 6, 6], "f")},
                  variables={"w": ([6, 2, 3, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("conv-1d", "y = conv(x, w, b, padding = [(1,2)], stride = [2]);", {"x": ([2, 3, 11], "f")},
                  variables={"w": ([4, 3, 4], "f"), "b": ([1, 4], "f")}, tol=(1e-4, 1e-4)))
    for border in ("replicate", "reflect", "reflect-even"):
        C.append(Case(f"conv-{border}", f"y = conv(x, w, 0.0, padding = [(1,1),(2,2)], border = '{border}');",
                      {"x": ([1, 3, 6, 7], "f")}, variables={"w": ([6, 3, 3, 3], "f")}, tol=(1e-4, 1e-4),
                      oracle=lambda i, v, border=border: [np_conv(i["x"], v["w"], 0.0, [(1, 1), (2, 2)], None, None,
                                                                  border)]))
    C.append(Case("deconv", "y = deconv(x, w, b, padding = [(1,1),(1,1)], stride = [2, 2]);",
                  {"x": ([1, 4, 5, 5], "f")}, variables={"w": ([4, 3, 3, 3], "f"), "b": ([1, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("deconv-auto", "y = deconv(x, w, 0.0, stride = [2, 2]);", {"x": ([1, 4, 5, 5], "f")},
                  variables={"w": ([4, 2, 3, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("deconv-output-shape", "y = deconv(x, w, 0.0, stride = [2, 2], padding = [(1,1),(1,1)], "
                  "output_shape = [1, 2, 10, 10]);", {"x": ([1, 4, 5, 5], "f")},
                  variables={"w": ([4, 2, 3, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("deconv-groups0", "y = deconv(x, w, 0.0, stride = [2, 2], groups = 0);", {"x": ([1, 4, 5, 5], "f")},
                  variables={"w": ([4, 1, 3, 3], "f")}, tol=(1e-4, 1e-4)))
    C.append(Case("deconv-negative-pad", "y = deconv(x, w, b, stride = [2, 2], padding = [(-1,0),(0,-2)]);",
                  {"x": ([1, 2, 3, 3], "f")}, variables={"w": ([2, 3, 3, 3], "f"), "b": ([1, 3], "f")}, tol=(1e-4, 1e-4),
                  oracle=lambda i, v: [np_deconv(i["x"], v["w"], v["b"], [(-1, 0), (0, -2)], [2, 2], [1, 3, 8, 9])]))
    C.append(Case("separable_conv", "y = separable_conv(x, p, q, b, padding = [(1,1),(1,1)]);", {"x": ([1, 3, 6, 6], "f")},
                  variables={"p": ([3, 1, 3, 3], "f"), "q": ([5, 3, 1, 1], "f"), "b": ([1, 5], "f")}, tol=(1e-4, 1e-4),
                  oracle=lambda i, v: [np_conv(np_conv(i["x"], v["p"], 0.0, [(1, 1), (1, 1)], groups=0), v["q"], v["b"])]))
    # pooling and box
    for border in ("ignore", "constant"):
        C.append(Case(f"avg_pool-{border}", f"y = avg_pool(x, size = [1,1,3,3], padding = [(0,0),(0,0),(1,1),(1,1)], "
                      f"border = '{border}');", {"x": ([2, 3, 6, 7], "f")}))
        C.append(Case(f"max_pool-{border}", f"y = max_pool(x, size = [1,1,3,3], stride = [1,1,2,2], "
                      f"padding = [(0,0),(0,0),(1,1),(1,1)], border = '{border}');", {"x": ([2, 3, 6, 7], "f")}))
    C.append(Case("max_pool-auto-odd", "y = max_pool(x, size = [1,1,3,3], stride = [1,1,2,2], padding = []);",
                  {"x": ([1, 2, 7, 9], "f")}))
    C.append(Case("avg_pool-auto-odd", "y = avg_pool(x, size = [1,1,2,2], stride = [1,1,2,2], padding = [], "
                  "border = 'ignore');", {"x": ([1, 2, 7, 9], "f")}))
    for border in ("replicate", "reflect", "reflect-even"):
        C.append(Case(f"max_pool-{border}", f"y = max_pool(x, size = [1,1,3,3], padding = [(0,0),(0,0),(1,1),(2,2)], "
                      f"border = '{border}');", {"x": ([1, 2, 5, 6], "f")},
                      oracle=lambda i, v, border=border: [np_box(i["x"], [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (2, 2)],
                                                                 border=border, kind="max")]))
        C.append(Case(f"avg_pool-{border}", f"y = avg_pool(x, size = [1,1,3,3], padding = [(0,0),(0,0),(1,1),(2,2)], "
                      f"border = '{border}');", {"x": ([1, 2, 5, 6], "f")},
                      oracle=lambda i, v, border=border: [np_box(i["x"], [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (2, 2)],
                                                                 border=border, normalize=True)]))
    C.append(Case("box-sum", "y = box(x, size = [1,1,2,3], stride = [1,1,2,1], padding = [(0,0),(0,0),(0,1),(1,1)]);",
                  {"x": ([1, 2, 5, 6], "f")}))
    C.append(Case("box-channel-window", "y = box(x, size = [1,3,1,1], padding = [(0,0),(1,1),(0,0),(0,0)], "
                  "normalize = true);", {"x": ([2, 5, 3, 4], "f")}))
    C.append(Case("box-negative-pad", "y = box(x, size = [1,1,2,2], padding = [(0,0),(0,0),(-1,0),(0,-1)]);",
                  {"x": ([1, 2, 5, 6], "f")},
                  oracle=lambda i, v: [np_box(i["x"], [1, 1, 2, 2], [(0, 0), (0, 0), (-1, 0), (0, -1)])]))
    C.append(Case("box-3d-dilated", "y = box(x, size = [1,2,2], dilation = [1,1,2], padding = [(0,0),(0,1),(1,1)]);",
                  {"x": ([2, 5, 6], "f")}))
    C.append(Case("max_pool-3d-window", "y = max_pool(x, size = [1,1,3,3,3], stride = [1,1,2,2,2], "
                  "padding = [(0,0),(0,0),(1,1),(1,1),(1,1)], border = 'ignore');", {"x": ([1, 2, 5, 6, 7], "f")},
                  oracle=lambda i, v: [np_box(i["x"], [1, 1, 3, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)],
                                              [1, 1, 2, 2, 2], border="ignore", kind="max")]))
    C.append(Case("avg_pool-3d-window", "y = avg_pool(x, size = [1,1,3,3,3], padding = [(0,0),(0,0),(1,1),(1,1),(1,1)], "
                  "border = 'ignore');", {"x": ([1, 2, 5, 6, 7], "f")},
                  oracle=lambda i, v: [np_box(i["x"], [1, 1, 3, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1), (1, 1)],
                                              border="ignore", normalize=True)]))
    C.append(Case("box-batch-window", "y = box(x, size = [2,1,2], stride = [2,1,1], padding = [(0,0),(0,0),(1,0)]);",
                  {"x": ([4, 3, 5], "f")},
                  oracle=lambda i, v: [np_box(i["x"], [2, 1, 2], [(0, 0), (0, 0), (1, 0)], [2, 1, 1])]))
    for border in ("replicate", "reflect"):
        C.append(Case(f"box-{border}", f"y = box(x, size = [1,1,3,2], padding = [(0,0),(0,0),(1,1),(1,0)], "
                      f"border = '{border}', normalize = true);", {"x": ([1, 2, 4, 5], "f")},
                      oracle=lambda i, v, b=border: [np_box(i["x"], [1, 1, 3, 2], [(0, 0), (0, 0), (1, 1), (1, 0)],
                                                            border=b, normalize=True)]))
    C.append(Case("rms_pool", "y = rms_pool(x, size = [1,1,2,2], stride = [1,1,2,2]);", {"x": ([1, 2, 6, 6], "f")},
                  oracle=lambda i, v: [np.sqrt(np_box(i["x"] ** 2, [1, 1, 2, 2], [(0, 0)] * 4, [1, 1, 2, 2],
                                                      normalize=True))]))
    C.append(Case("debox", "y = debox(x, size = [1,1,3,3], stride = [1,1,2,2], padding = [(0,0),(0,0),(1,1),(1,1)]);",
                  {"x": ([1, 2, 3, 4], "f")}))
    # The reference executor ignores `normalize` in debox; spec §4.3.2 divides by the kernel volume.
    C.append(Case("debox-normalize", "y = debox(x, size = [1,1,2,2], stride = [1,1,2,2], normalize = true);",
                  {"x": ([1, 2, 3, 4], "f")}, oracle=lambda i, v: [np.repeat(np.repeat(i["x"], 2, 2), 2, 3) / 4.0]))
    C.append(Case("argmax_pool", "y = argmax_pool(x, size = [1,1,3,3], stride = [1,1,2,2], border = 'ignore', "
                  "padding = [(0,0),(0,0),(1,1),(1,1)]);", {"x": ([1, 2, 7, 6], "f")},
                  oracle=lambda i, v: [np_argmax_pool(i["x"], [1, 1, 3, 3], [(0, 0), (0, 0), (1, 1), (1, 1)],
                                                      [1, 1, 2, 2], border="ignore")]))
    C.append(Case("max_pool_with_index", "y, i = max_pool_with_index(x, size = [1,1,2,2], stride = [1,1,2,2]);",
                  {"x": ([1, 2, 6, 6], "f")}, outputs=("y", "i"),
                  oracle=lambda i, v: [np_box(i["x"], [1, 1, 2, 2], [(0, 0)] * 4, [1, 1, 2, 2], kind="max"),
                                       np_argmax_pool(i["x"], [1, 1, 2, 2], [(0, 0)] * 4, [1, 1, 2, 2])]))
    C.append(Case("sample", "y = sample(x, i, size = [1,1,2,2], stride = [1,1,2,2]);",
                  {"x": ([1, 2, 6, 6], "f"), "i": ([1, 2, 3, 3], "int4")},
                  oracle=lambda i, v: [np_sample(i["x"], i["i"], [1, 1, 2, 2], [(0, 0)] * 4, [1, 1, 2, 2])]))
    C.append(Case("desample", "y = desample(x, i, size = [1,1,2,2], stride = [1,1,2,2], padding = [(0,0),(0,0),(0,0),(0,0)]);",
                  {"x": ([1, 2, 3, 3], "f"), "i": ([1, 2, 3, 3], "int4")},
                  oracle=lambda i, v: [np_desample(i["x"], i["i"], [1, 1, 2, 2], [1, 2, 6, 6], [(0, 0)] * 4, [1, 1, 2, 2])]))
    # up/down sampling
    C.append(Case("nearest_downsample", "y = nearest_downsample(x, factor = [2, 3]);", {"x": ([1, 2, 6, 9], "f")}))
    C.append(Case("area_downsample", "y = area_downsample(x, factor = [2, 3]);", {"x": ([1, 2, 6, 9], "f")}))
    C.append(Case("nearest_upsample", "y = nearest_upsample(x, factor = [2, 3]);", {"x": ([1, 2, 3, 2], "f")}))
    for method in ("symmetric", "asymmetric"):
        for border in ("constant", "replicate"):
            C.append(Case(f"multilinear-{method}-{border}", f"y = multilinear_upsample(x, factor = [2, 2], "
                          f"method = '{method}', border = '{border}');", {"x": ([1, 2, 3, 4], "f")}))
    for method, border, factor in (("aligned", "replicate", 3), ("symmetric", "reflect", 3),
                                   ("asymmetric", "reflect-even", 4)):
        C.append(Case(f"multilinear-{method}-{border}-f{factor}",
                      f"y = multilinear_upsample(x, factor = [{factor}], method = '{method}', border = '{border}');",
                      {"x": ([2, 3, 5], "f")},
                      oracle=lambda i, v, m=method, b=border, f=factor: [_lin_interp(i["x"].astype(np.float64), f, m, b)]))
    # reductions
    for op in ("sum_reduce", "max_reduce", "min_reduce", "mean_reduce"):
        C.append(Case(op, f"y = {op}(x, axes = [1, 3]);", X))
    C.append(Case("sum_reduce-normalize", "y = sum_reduce(x, axes = [2], normalize = true);", X))
    C.append(Case("argmax_reduce", "y = argmax_reduce(x, axes = [1]);", X))
    C.append(Case("argmin_reduce", "y = argmin_reduce(x, axes = [2]);", X))
    C.append(Case("argmax_reduce-multi", "y = argmax_reduce(x, axes = [2, 3]);", X,
                  oracle=lambda i, v: [i["x"].reshape(2, 3, 30).argmax(-1).reshape(2, 3, 1, 1).astype(np.int32)]))
    C.append(Case("argmin_reduce-multi", "y = argmin_reduce(x, axes = [0, 2]);", X,
                  oracle=lambda i, v: [i["x"].transpose(1, 3, 0, 2).reshape(3, 6, 10).argmin(-1)
                                       .reshape(1, 3, 1, 6).astype(np.int32)]))
    C.append(Case("any_all_reduce", "y = any_reduce(p, axes = [1]);\nz = all_reduce(p, axes = [0, 1]);",
                  {"p": ([3, 4, 2], "bool")}, outputs=("y", "z")))
    C.append(Case("moments", "m, v = moments(x, axes = [2, 3]);", X, outputs=("m", "v")))
    # shapes
    C.append(Case("reshape", "y = reshape(x, shape = [0, -1], axis_start = 1);", X))
    C.append(Case("squeeze-unsqueeze", "t = unsqueeze(x, axes = [0, 3]);\ny = squeeze(t, axes = [3]);", X))
    C.append(Case("transpose", "y = transpose(x, axes = [0, 2, 1]);", X))
    C.append(Case("split-concat", "[a, b, c] = split(x, axis = 3, ratios = [1, 2, 3]);\ny = concat([c, a, b], axis = 3);", X))
    C.append(Case("stack-unstack", "[a, b] = unstack(x, axis = 0);\ny = stack([b, a, b], axis = 1);", X))
    C.append(Case("slice", "y = slice(x, axes = [1, 3], begin = [1, -4], end = [3, -1]);", X))
    C.append(Case("slice-stride2", "y = slice(x, axes = [2, 3], begin = [0, 1], end = [5, 6], stride = [2, 2]);", X))
    C.append(Case("slice-reverse", "y = slice(x, axes = [3], begin = [-1], end = [-7], stride = [-1]);", X))
    C.append(Case("slice-reverse-stride", "y = slice(x, axes = [2, 3], begin = [4, 5], end = [0, -7], stride = [-2, -3]);", X))
    C.append(Case("slice-end0", "y = slice(x, axes = [3], begin = [2], end = [0]);", X))
    for border in ("constant", "replicate", "reflect", "reflect-even"):
        C.append(Case(f"pad-{border}", f"y = pad(x, padding = [(0,0),(1,0),(2,1),(0,2)], border = '{border}', value = 0.5);",
                      X, oracle=None if border in ("constant", "replicate") else
                      (lambda i, v, b=border: [pad_nd(i["x"], [(0, 0), (1, 0), (2, 1), (0, 2)], b)])))
    C.append(Case("pad-negative", "y = pad(x, padding = [(0,0),(0,0),(-1,2),(1,-2)]);", X,
                  oracle=lambda i, v: [pad_nd(i["x"], [(0, 0), (0, 0), (-1, 2), (1, -2)], "constant")]))
    C.append(Case("tile", "y = tile(x, repeats = [1, 2, 1, 3]);", X))
    C.append(Case("gather", "y = gather(x, i, axis = 2);", {"x": ([2, 3, 5], "f"), "i": ([4, 2], "int5")}))
    C.append(Case("cast", "i = cast<integer>(x);\nl = cast<logical>(x);\ny = cast<scalar>(i);", {"x": ([3, 4], "wide")},
                  outputs=("y", "i", "l")))
    C.append(Case("cast-trunc", "y = cast<integer>(x);", {"x": ([5], "f")},
                  oracle=lambda i, v: [np.trunc(i["x"]).astype(np.int32)]))
    C.append(Case("copy_n-add_n", "[a, b] = copy_n(x, times = 2);\ny = add_n([a, b, x]);", X))
    # linear algebra
    C.append(Case("matmul", "y = matmul(a, b, transposeB = true);", {"a": ([2, 3, 4], "f"), "b": ([2, 5, 4], "f")},
                  tol=(1e-4, 1e-5)))
    C.append(Case("matmul-2d-tA", "y = matmul(a, b, transposeA = true);", {"a": ([4, 3], "f"), "b": ([4, 5], "f")},
                  tol=(1e-4, 1e-5)))
    C.append(Case("linear", "y = linear(x, w, b);", {"x": ([3, 6], "f")}, variables={"w": ([4, 6], "f"), "b": ([1, 4], "f")},
                  tol=(1e-4, 1e-5)))
    # normalization
    C.append(Case("softmax", "y = softmax(x);", X))
    C.append(Case("softmax-multi", "y = softmax(x, axes = [2, 3]);", X))
    C.append(Case("batch_normalization", "y = batch_normalization(x, m, v, o, s, epsilon = 1e-3);",
                  {"x": ([2, 3, 4, 5], "f"), "m": ([1, 3], "f"), "v": ([1, 3], "pos"), "o": ([1, 3], "f"),
                   "s": ([1, 3], "f")}, tol=(1e-4, 1e-5)))
    C.append(Case("batch_normalization-literals", "y = batch_normalization(x, mean = m, variance = v, offset = 0.0, "
                  "scale = 1.0, epsilon = 1e-5);", {"x": ([2, 3, 4, 5], "f"), "m": ([1, 3], "f"), "v": ([1, 3], "pos")},
                  tol=(1e-4, 1e-5)))
    C.append(Case("l1_normalization", "y = l1_normalization(x, axes = [1], bias = 0.5, epsilon = 1e-3);", X))
    C.append(Case("l2_normalization", "y = l2_normalization(x, axes = [1, 2], epsilon = 1e-3);", X))
    C.append(Case("local_response_normalization", "y = local_response_normalization(x, size = [1, 3, 1, 1], alpha = 1e-2, "
                  "beta = 0.75, bias = 1.0);", {"x": ([2, 5, 3, 4], "f")}, tol=(1e-5, 1e-5)))
    C.append(Case("local_mean_normalization", "y = local_mean_normalization(x, size = [1, 1, 3, 3]);",
                  {"x": ([1, 2, 5, 6], "f")},
                  oracle=lambda i, v: [i["x"] - np_box(i["x"], [1, 1, 3, 3], normalize=True)]))
    C.append(Case("local_variance_normalization", "y = local_variance_normalization(x, size = [1, 1, 3, 3], bias = 0.5, "
                  "epsilon = 1e-3);", {"x": ([1, 2, 5, 6], "f")},
                  oracle=lambda i, v: [i["x"] / np.maximum(np.sqrt(np_box(i["x"].astype(np.float64) ** 2, [1, 1, 3, 3],
                                                                          normalize=True)) + 0.5, 1e-3)]))
    C.append(Case("local_contrast_normalization", "y = local_contrast_normalization(x, size = [1, 1, 3, 3], "
                  "epsilon = 1e-3);", {"x": ([1, 2, 5, 6], "f")}, tol=(1e-4, 1e-5),
                  oracle=lambda i, v: [_lcn(i["x"].astype(np.float64))]))
    # quantization
    C.append(Case("min_max_linear_quantize", "y = min_max_linear_quantize(x, min = -1.0, max = 1.5, bits = 4, "
                  "signed = true, symmetric = true);", X, tol=(1e-5, 1e-5), oracle=lambda i, v: [_mmq(i["x"], -1.0, 1.5, 4, True, True)]))
    C.append(Case("linear_quantize", "y = linear_quantize(x, min = -1.0, max = 1.0, bits = 8);", X, tol=(1e-5, 1e-5),
                  oracle=lambda i, v: [_mmq(i["x"], -1.0, 1.0, 8, False, False)]))
    C.append(Case("zero_point_linear_quantize", "y = zero_point_linear_quantize(x, zero_point = 3, scale = 0.1, bits = 4, "
                  "signed = false, symmetric = false);", X, tol=(1e-5, 1e-5), oracle=lambda i, v: [_zpq(i["x"], 3, 0.1, 4, False, False)]))
    C.append(Case("logarithmic_quantize", "y = logarithmic_quantize(x, max = 4.0, bits = 3);", X, tol=(1e-5, 1e-6),
                  oracle=lambda i, v: [_logq(i["x"], 4.0, 3)]))
    # variables and update (stateful policy)
    C.append(Case("update", "n = add(state, x);\ny = update(state, n);", {"x": ([2, 3], "f")},
                  variables={"state": ([2, 3], "f")}, oracle="update"))
    return C


def _lcn(x):
    centered = x - np_box(x, [1, 1, 3, 3], normalize=True)
    sigma = np.sqrt(np_box(centered ** 2, [1, 1, 3, 3], normalize=True))
    return centered / np.maximum(sigma, 1e-3)


def _round(x):
    return np.floor(x + 0.5)


def _mmq(x, lo, hi, bits, signed, symmetric):
    x = x.astype(np.float64)
    r = 2 ** bits - 1 - int(signed and symmetric)
    z = np.clip(x, lo, hi)
    return _round((z - lo) / (hi - lo) * r) / r * (hi - lo) + lo


def _zpq(x, zp, scale, bits, signed, symmetric):
    x = x.astype(np.float64)
    z = _round(x / scale) + zp
    r = 2 ** (bits - 1) - 1 if signed else 2 ** bits - 1
    lo = 0 if not signed else (-r if symmetric else -r - 1)
    return (np.clip(z, lo, r) - zp) * scale


def _logq(x, mx, bits):
    x = x.astype(np.float64)
    m = math.ceil(math.log2(mx))
    r = 2 ** bits - 1
    with np.errstate(divide="ignore"):
        q = _round(np.clip(np.log2(np.abs(x)), m - r, m))
    return np.sign(x) * 2.0 ** q
