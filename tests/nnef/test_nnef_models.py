"""End to end: whole models with seeded random weights, lowered onto the WebNN
core, against the reference executor `nnef.Session`: the width-reduced AlexNet
of the spec's Appendix B, a GoogLeNet-style inception block and a ResNet-style
block."""
import os

import numpy as np
import pytest

from nnef_helpers import ref_nnef, run_ours, run_ref, write_model
from webnn_core import Context
from webnn_core.nnef import samples

needs_ref = pytest.mark.skipif(ref_nnef is None, reason="the reference nnef package is not installed")

GOOGLENET_LIKE = """version 1.0;
graph Inception( data ) -> ( prob )
{
    data = external(shape = [1, 3, 32, 32]);
    stem_w = variable(shape = [16, 3, 3, 3], label = 'stem/w');
    stem = conv(data, stem_w, 0.0, stride = [2, 2], padding = []);
    stem_r = relu(stem);
    pool0 = max_pool(stem_r, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], padding = [], border = 'ignore');
    b1_w = variable(shape = [8, 16, 1, 1], label = 'inc/b1/w');
    b1_b = variable(shape = [1, 8], label = 'inc/b1/b');
    b1 = conv(pool0, b1_w, b1_b);
    b1_r = relu(b1);
    b2a_w = variable(shape = [6, 16, 1, 1], label = 'inc/b2a/w');
    b2a = conv(pool0, b2a_w, 0.0);
    b2a_r = relu(b2a);
    b2b_w = variable(shape = [12, 6, 3, 3], label = 'inc/b2b/w');
    b2b_b = variable(shape = [1, 12], label = 'inc/b2b/b');
    b2b = conv(b2a_r, b2b_w, b2b_b, padding = [(1, 1), (1, 1)]);
    b2b_r = relu(b2b);
    b3a_w = variable(shape = [4, 16, 1, 1], label = 'inc/b3a/w');
    b3a = conv(pool0, b3a_w, 0.0);
    b3b_w = variable(shape = [6, 4, 5, 5], label = 'inc/b3b/w');
    b3b = conv(b3a, b3b_w, 0.0, padding = []);
    b3b_r = relu(b3b);
    b4p = avg_pool(pool0, size = [1, 1, 3, 3], padding = [], border = 'ignore');
    b4_w = variable(shape = [4, 16, 1, 1], label = 'inc/b4/w');
    b4 = conv(b4p, b4_w, 0.0);
    b4_r = relu(b4);
    mixed = concat([b1_r, b2b_r, b3b_r, b4_r], axis = 1);
    gap = avg_pool(mixed, size = [1, 1, 8, 8], padding = [(0, 0), (0, 0), (0, 0), (0, 0)]);
    fc_w = variable(shape = [10, 30], label = 'fc/w');
    fc_b = variable(shape = [1, 10], label = 'fc/b');
    flat = reshape(gap, shape = [1, 30]);
    logits = linear(flat, fc_w, fc_b);
    prob = softmax(logits);
}
"""

RESNET_LIKE = """version 1.0;
graph Residual( data ) -> ( output )
{
    data = external(shape = [2, 8, 12, 12]);
    w1 = variable(shape = [8, 8, 3, 3], label = 'block/conv1/w');
    m1 = variable(shape = [1, 8], label = 'block/bn1/mean');
    v1 = variable(shape = [1, 8], label = 'block/bn1/variance');
    o1 = variable(shape = [1, 8], label = 'block/bn1/offset');
    s1 = variable(shape = [1, 8], label = 'block/bn1/scale');
    c1 = conv(data, w1, 0.0, padding = [(1, 1), (1, 1)]);
    n1 = batch_normalization(c1, mean = m1, variance = v1, offset = o1, scale = s1, epsilon = 1e-5);
    r1 = relu(n1);
    w2 = variable(shape = [8, 8, 3, 3], label = 'block/conv2/w');
    m2 = variable(shape = [1, 8], label = 'block/bn2/mean');
    v2 = variable(shape = [1, 8], label = 'block/bn2/variance');
    c2 = conv(r1, w2, 0.0, padding = []);
    n2 = batch_normalization(c2, mean = m2, variance = v2, offset = 0.0, scale = 1.0, epsilon = 1e-5);
    sum = add(n2, data);
    r2 = relu(sum);
    wd = variable(shape = [16, 8, 1, 1], label = 'down/w');
    down = conv(r2, wd, 0.0, stride = [2, 2]);
    pooled = mean_reduce(down, axes = [2, 3]);
    output = reshape(pooled, shape = [2, 16]);
}
"""


def variables_for(text, rng):
    from webnn_core.nnef import parse_string
    out = {}
    for op in parse_string(text).operations:
        if op.name == "variable":
            shape = op.attribs["shape"]
            kind = op.attribs["label"].rsplit("/", 1)[-1]
            if kind == "variance":
                out[op.attribs["label"]] = rng.uniform(0.5, 2.0, shape).astype(np.float32)
            else:
                out[op.attribs["label"]] = (rng.standard_normal(shape) * 0.3).astype(np.float32)
    return out


@needs_ref
@pytest.mark.parametrize("fast_paths", [False, True])
def test_reduced_alexnet_matches_reference(tmp_path, fast_paths):
    files = samples.alexnet_files(divisor=8, image=224, seed=5)
    folder = str(tmp_path / "alexnet")
    from webnn_core.nnef.export import write_files
    write_files(files, folder)
    x = np.random.default_rng(11).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (ours,), _ = run_ours(folder, {"input": x}, context=Context(options={"fastPaths": fast_paths}))
    (ref,) = run_ref(folder, {"input": x}, ["input"])
    assert ours.shape == (1, 125, 1, 1)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)
    assert abs(float(ours.sum()) - 1.0) < 1e-4


@needs_ref
@pytest.mark.parametrize("text,inputs", [(GOOGLENET_LIKE, {"data": (1, 3, 32, 32)}),
                                         (RESNET_LIKE, {"data": (2, 8, 12, 12)})], ids=["googlenet-like", "resnet-like"])
def test_mini_networks_match_reference(tmp_path, text, inputs):
    rng = np.random.default_rng(13)
    folder = write_model(str(tmp_path / "m"), text, variables_for(text, rng))
    feeds = {k: rng.standard_normal(s).astype(np.float32) for k, s in inputs.items()}
    ours, model = run_ours(folder, feeds)
    ref = run_ref(folder, feeds, list(inputs))
    for o, r in zip(ours, ref):
        assert o.shape == r.shape
        np.testing.assert_allclose(o, r, rtol=1e-4, atol=1e-4)


@needs_ref
@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("NNEF_FULL_ALEXNET"), reason="set NNEF_FULL_ALEXNET=1 (about 200 MB of weights)")
def test_full_size_alexnet(tmp_path):
    files = samples.alexnet_files(divisor=1, image=224, seed=1)
    from webnn_core.nnef.export import write_files
    folder = str(tmp_path / "alexnet")
    write_files(files, folder)
    x = np.random.default_rng(2).standard_normal((1, 3, 224, 224)).astype(np.float32)
    (ours,), _ = run_ours(folder, {"input": x})
    (ref,) = run_ref(folder, {"input": x}, ["input"])
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-4)
