"""Coverage (digest acceptance check 9): every NNEF 1.0 standard operation (the
118 of the spec, `debbox` read as `debox`, plus the reference library's
`softabs`) either lowers onto the WebNN builder and runs, or raises
`NNEFUnsupportedError` naming the operation and its line:column."""
import numpy as np
import pytest

from webnn_core.nnef import NNEFUnsupportedError, load_model, parse_string, standard_op_names
from webnn_core.nnef.api import random_inputs

F = "x = external(shape = [1, 4, 6, 6]);"
V2 = "x = external(shape = [2, 3]);"
B = "p = external<logical>(shape = [2, 3]);"

SAMPLES = {
    "external": (F, "y = copy(x);"),
    "constant": (F, "c = constant(shape = [1, 4], value = [1.0, 2.0, 3.0, 4.0]);\ny = add(x, c);"),
    "variable": (F, "v = variable(shape = [1, 4], label = 'v');\ny = mul(x, v);"),
    "copy": (F, "y = copy(x);"),
    "select": (F + "\n" + "c = external<logical>(shape = [1, 4]);", "y = select(c, x, 0.0);"),
    "update": (F, "v = variable(shape = [1, 4, 6, 6], label = 'v');\ny = update(v, x);"),
    "not": (B, "y = not(p);"), "and": (B, "y = and(p, p);"), "or": (B, "y = or(p, p);"),
    "any_reduce": (B, "y = any_reduce(p, axes = [1]);"), "all_reduce": (B, "y = all_reduce(p, axes = [1]);"),
    "clamp": (F, "y = clamp(x, 0.0, 1.0);"),
    "conv": (F, "w = variable(shape = [2, 4, 3, 3], label = 'w');\ny = conv(x, w);"),
    "deconv": (F, "w = variable(shape = [4, 2, 3, 3], label = 'w');\ny = deconv(x, w);"),
    "separable_conv": (F, "p = variable(shape = [4, 1, 3, 3], label = 'p');\n"
                          "q = variable(shape = [2, 4, 1, 1], label = 'q');\ny = separable_conv(x, p, q);"),
    "separable_deconv": (F, "p = variable(shape = [2, 1, 3, 3], label = 'p');\n"
                            "q = variable(shape = [4, 2, 1, 1], label = 'q');\ny = separable_deconv(x, p, q);"),
    "box": (F, "y = box(x, size = [1, 1, 3, 3]);"),
    "debox": (F, "y = debox(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);"),
    "argmax_pool": (F, "y = argmax_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);"),
    "sample": (F + "\ni = external<integer>(shape = [1, 4, 3, 3]);",
               "y = sample(x, i, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);"),
    "desample": ("x = external(shape = [1, 4, 3, 3]);\ni = external<integer>(shape = [1, 4, 3, 3]);",
                 "y = desample(x, i, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);"),
    "max_pool_with_index": (F, "y, i = max_pool_with_index(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);"),
    "max_pool": (F, "y = max_pool(x, size = [1, 1, 2, 2]);"),
    "avg_pool": (F, "y = avg_pool(x, size = [1, 1, 2, 2]);"),
    "rms_pool": (F, "y = rms_pool(x, size = [1, 1, 2, 2]);"),
    "nearest_downsample": (F, "y = nearest_downsample(x, factor = [2, 2]);"),
    "area_downsample": (F, "y = area_downsample(x, factor = [2, 2]);"),
    "nearest_upsample": (F, "y = nearest_upsample(x, factor = [2, 2]);"),
    "multilinear_upsample": (F, "y = multilinear_upsample(x, factor = [2, 2]);"),
    "sum_reduce": (F, "y = sum_reduce(x, axes = [1]);"),
    "max_reduce": (F, "y = max_reduce(x, axes = [1]);"),
    "min_reduce": (F, "y = min_reduce(x, axes = [1]);"),
    "mean_reduce": (F, "y = mean_reduce(x, axes = [1]);"),
    "argmax_reduce": (F, "y = argmax_reduce(x, axes = [1]);"),
    "argmin_reduce": (F, "y = argmin_reduce(x, axes = [1]);"),
    "moments": (F, "m, y = moments(x, axes = [2, 3]);"),
    "reshape": (F, "y = reshape(x, shape = [1, -1]);"),
    "squeeze": (F, "y = squeeze(x, axes = [0]);"),
    "unsqueeze": (F, "y = unsqueeze(x, axes = [0]);"),
    "transpose": (F, "y = transpose(x, axes = [0, 2, 3, 1]);"),
    "split": (F, "[y, z] = split(x, axis = 1, ratios = [1, 1]);"),
    "concat": (F, "y = concat([x, x], axis = 1);"),
    "stack": (F, "y = stack([x, x], axis = 0);"),
    "unstack": (V2, "[y, z] = unstack(x, axis = 0);"),
    "slice": (F, "y = slice(x, axes = [2], begin = [1], end = [4]);"),
    "pad": (F, "y = pad(x, padding = [(0, 0), (0, 0), (1, 1), (1, 1)]);"),
    "tile": (F, "y = tile(x, repeats = [1, 1, 2, 1]);"),
    "gather": (F + "\ni = external<integer>(shape = [3]);", "y = gather(x, i, axis = 1);"),
    "cast": (F, "y = cast<integer>(x);"),
    "avg_roi_pool": (F + "\nr = external(shape = [2, 4]);\nb = external<integer>(shape = [2]);",
                     "y = avg_roi_pool(x, r, b, output_size = [2, 2]);"),
    "max_roi_pool": (F + "\nr = external(shape = [2, 4]);\nb = external<integer>(shape = [2]);",
                     "y = max_roi_pool(x, r, b, output_size = [2, 2]);"),
    "roi_resample": (F + "\nr = external(shape = [2, 4]);\nb = external<integer>(shape = [2]);",
                     "y = roi_resample(x, r, b, output_size = [2, 2]);"),
    "avg_roi_align": (F + "\nr = external(shape = [2, 4]);\nb = external<integer>(shape = [2]);",
                      "y = avg_roi_align(x, r, b, output_size = [2, 2], sampling_rate = [2, 2]);"),
    "max_roi_align": (F + "\nr = external(shape = [2, 4]);\nb = external<integer>(shape = [2]);",
                      "y = max_roi_align(x, r, b, output_size = [2, 2], sampling_rate = [2, 2]);"),
    "matmul": (V2, "w = variable(shape = [3, 4], label = 'w');\ny = matmul(x, w);"),
    "linear": (V2, "w = variable(shape = [4, 3], label = 'w');\ny = linear(x, w);"),
    "prelu": (F, "a = variable(shape = [1, 4], label = 'a');\ny = prelu(x, a);"),
    "leaky_relu": (F, "y = leaky_relu(x, alpha = 0.1);"),
    "softmax": (F, "y = softmax(x);"),
    "local_response_normalization": (F, "y = local_response_normalization(x, size = [1, 3, 1, 1]);"),
    "local_mean_normalization": (F, "y = local_mean_normalization(x, size = [1, 1, 3, 3]);"),
    "local_variance_normalization": (F, "y = local_variance_normalization(x, size = [1, 1, 3, 3], epsilon = 1e-3);"),
    "local_contrast_normalization": (F, "y = local_contrast_normalization(x, size = [1, 1, 3, 3], epsilon = 1e-3);"),
    "l1_normalization": (F, "y = l1_normalization(x, axes = [1], epsilon = 1e-3);"),
    "l2_normalization": (F, "y = l2_normalization(x, axes = [1], epsilon = 1e-3);"),
    "batch_normalization": (F, "m = variable(shape = [1, 4], label = 'm');\nv = variable(shape = [1, 4], label = 'v');\n"
                               "y = batch_normalization(x, m, v, 0.0, 1.0, epsilon = 1e-3);"),
    "min_max_linear_quantize": (F, "y = min_max_linear_quantize(x, min = -1.0, max = 1.0, bits = 8, signed = true, "
                                   "symmetric = false);"),
    "zero_point_linear_quantize": (F, "y = zero_point_linear_quantize(x, zero_point = 0, scale = 0.1, bits = 8, "
                                      "signed = true, symmetric = true);"),
    "linear_quantize": (F, "y = linear_quantize(x, min = -1.0, max = 1.0, bits = 8);"),
    "logarithmic_quantize": (F, "y = logarithmic_quantize(x, max = 4.0, bits = 4);"),
    "copy_n": (F, "[y, z] = copy_n(x, times = 2);"),
    "add_n": (F, "y = add_n([x, x, x]);"),
    "softabs": (F, "y = softabs(x, epsilon = 1e-3);"),
    "elu": (F, "y = elu(x);"), "selu": (F, "y = selu(x);"),
}
for _op in ("neg", "rcp", "exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh",
            "acosh", "atanh", "abs", "sign", "floor", "ceil", "round", "sqr", "sqrt", "rsqr", "rsqrt", "log2",
            "sigmoid", "relu", "gelu", "silu", "softplus"):
    SAMPLES[_op] = (F, f"y = {_op}(x);")
for _op in ("add", "sub", "mul", "div", "pow", "min", "max", "lt", "gt", "le", "ge", "eq", "ne"):
    SAMPLES[_op] = (F, f"y = {_op}(x, x);")

# Operations with no WebNN equivalent: they must raise a typed error naming them.
UNSUPPORTED = {"avg_roi_pool", "max_roi_pool", "roi_resample", "avg_roi_align", "max_roi_align"}


def document(decls, body):
    params = [line.split("=")[0].strip() for line in decls.splitlines()]
    lines = [line for line in body.splitlines()]
    results = []
    for line in lines:
        lhs = line.split("=")[0]
        for ident in lhs.replace("[", " ").replace("]", " ").replace(",", " ").split():
            if ident not in ("v", "w", "c", "p", "q", "a", "m") or line.startswith("m,"):
                results.append(ident)
    results = [r for r in results if r not in params]
    text = "version 1.0;\ngraph G( " + ", ".join(params) + " ) -> ( " + ", ".join(dict.fromkeys(results)) + " )\n{\n"
    text += "".join(f"    {line}\n" for line in decls.splitlines() + lines) + "}\n"
    return text


def test_the_list_is_the_standard_library():
    names = set(standard_op_names())
    assert len(names) == 119
    assert set(SAMPLES) == names


@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_op_lowers_or_raises_typed_error(op, tmp_path):
    decls, body = SAMPLES[op]
    text = document(decls, body)
    graph = parse_string(text)
    assert any(o.name == op for o in graph.operations), text
    from webnn_core.nnef import dat
    files = {"graph.nnef": text.encode()}
    rng = np.random.default_rng(0)
    for o in graph.operations:
        if o.name == "variable":
            shape = o.attribs["shape"]
            files[o.attribs["label"] + ".dat"] = dat.write_tensor(rng.uniform(0.5, 1.5, shape).astype(np.float32))
    if op in UNSUPPORTED:
        with pytest.raises(NNEFUnsupportedError) as info:
            load_model(files)
        err = info.value
        assert err.op == op and err.line is not None and err.column is not None
        assert f"'{op}'" in str(err) and str(err).startswith("graph.nnef:")
        return
    model = load_model(files)
    feeds = random_inputs(model.inputs)
    for name, d in model.inputs.items():
        if d["dataType"] == "int32":
            feeds[name] = np.zeros(d["shape"], np.int32)
    out = model.run(feeds)
    for name in model.nnef.outputs:
        assert list(out[name].shape) == list(graph.tensors[name].shape)
