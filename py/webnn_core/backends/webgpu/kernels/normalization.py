"""batchNormalization (one thread per element, per-feature parameters), and
instanceNormalization / layerNormalization (one thread per normalized group:
mean, then population variance, then the normalized values, in f32)."""
from __future__ import annotations

from .. import wgsl
from .common import Call, Step


def _params(call: Call, first: int):
    """Bindings and names of the optional scale/bias operands from input `first` on."""
    bindings, operands, names = [], [], {}
    for name, operand in zip(("scale", "bias"), call.inputs[first:first + 2]):
        if operand is not None:
            bindings.append((f"{name}_", "f32", False))
            operands.append(operand)
            names[name] = f"{name}_"
    return bindings, operands, names


def _affine(names, p: str) -> str:
    y = "v"
    if "scale" in names:
        y = f"{y} * scale_[{p}]"
    if "bias" in names:
        y = f"{y} + bias_[{p}]"
    return y


def batch_normalization(call: Call) -> list:
    call.require(("float32",))
    x, mean, variance = call.inputs[:3]
    out, = call.outputs
    axis = call.attrs["axis"]
    size = x.shape[axis]
    inner = wgsl.count(x.shape[axis + 1:])
    bindings, operands, names = _params(call, 3)
    n = wgsl.count(x.shape)
    d = wgsl.dispatch_1d(n)
    eps = wgsl.literal(call.attrs["epsilon"], "float32")
    body = (f"  let c = (i / {inner}u) % {size}u;\n"
            f"  let v = (x_[i] - mean_[c]) / sqrt(var_[c] + {eps});\n"
            f"  y[i] = {_affine(names, 'c')};")
    text = "\n".join([wgsl.header([("x_", "f32", False), ("mean_", "f32", False), ("var_", "f32", False), *bindings,
                                   ("y", "f32", True)]), wgsl.elementwise_main(n, body, d)])
    return [Step(text, [x, mean, variance, *operands, out], d)]


def _grouped(call: Call, reduced: list, param_index) -> list:
    """Normalize over the `reduced` dims (in parameter order); `param_index(kept
    coordinates)` gives the scale/bias index (None: the reduced flat index r)."""
    call.require(("float32",))
    x = call.inputs[0]
    out, = call.outputs
    bindings, operands, names = _params(call, 1)
    st = wgsl.strides(x.shape)
    kept = [d for d in range(len(x.shape)) if d not in reduced]
    code, coords = wgsl.unravel("i", [x.shape[d] for d in kept], "o")
    red_shape = [x.shape[d] for d in reduced]
    count = wgsl.count(red_shape)
    rcode, rcoords = wgsl.unravel("r", red_shape, "q")
    offset = wgsl.dot(rcoords, [st[d] for d in reduced])
    p = param_index(coords) or "r"
    groups = wgsl.count([x.shape[d] for d in kept])
    dsp = wgsl.dispatch_1d(groups)
    eps = wgsl.literal(call.attrs["epsilon"], "float32")

    def loop(inner):
        return f"  for (var r = 0u; r < {count}u; r = r + 1u) {{\n{rcode}\n    let at = base + {offset};\n    {inner}\n  }}"

    body = "\n".join([code, f"  let base = {wgsl.dot(coords, [st[d] for d in kept])};", "  var mean = 0.0;",
                      loop("mean = mean + x_[at];"), f"  mean = mean / {count}.0;", "  var var_ = 0.0;",
                      loop("let dv = x_[at] - mean; var_ = var_ + dv * dv;"),
                      f"  let inv = 1.0 / sqrt(var_ / {count}.0 + {eps});",
                      loop(f"let v = (x_[at] - mean) * inv; y[at] = {_affine(names, p)};")])
    text = "\n".join([wgsl.header([("x_", "f32", False), *bindings, ("y", "f32", True)]),
                      wgsl.elementwise_main(groups, body, dsp)])
    return [Step(text, [x, *operands, out], dsp)]


def instance_normalization(call: Call) -> list:
    channel = call.attrs["channel_axis"]
    spatial = [2, 3] if channel == 1 else [1, 2]
    return _grouped(call, spatial, lambda kept: kept[1])  # kept dims: n, c


def layer_normalization(call: Call) -> list:
    return _grouped(call, list(call.attrs["axes"]), lambda kept: None)


KERNELS = {"batchNormalization": batch_normalization, "instanceNormalization": instance_normalization,
           "layerNormalization": layer_normalization}
