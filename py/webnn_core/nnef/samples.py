"""Sample NNEF models generated in code (for tests, demos and the gallery).

`alexnet_text()` writes the AlexNet topology of the NNEF specification's
Appendix B (TensorFlow's alexnet_v2: 5 convolutions, 3 max-pools, 3 fully
connected layers as convolutions, softmax), optionally with every channel
count divided by `divisor`; `alexnet_files()` adds seeded random weights as
.dat files, ready for `load_model(files)` or a .tgz.
"""
from __future__ import annotations

import io
import tarfile

import numpy as np

from . import dat

# (name, out channels, kernel, stride, padding, pool after)
ALEXNET_LAYERS = (
    ("conv1", 64, 11, 4, 0, True),
    ("conv2", 192, 5, 1, 2, True),
    ("conv3", 384, 3, 1, 1, False),
    ("conv4", 384, 3, 1, 1, False),
    ("conv5", 256, 3, 1, 1, True),
    ("fc6", 4096, 5, 1, 0, False),
    ("fc7", 4096, 1, 1, 0, False),
    ("fc8", 1000, 1, 1, 0, False),
)


def alexnet_layers(divisor=1, classes=None):
    layers = []
    for k, (name, ch, kernel, stride, pad, pool) in enumerate(ALEXNET_LAYERS):
        out = ch // divisor if name != "fc8" else (classes or max(ch // divisor, 1))
        layers.append((name, out, kernel, stride, pad, pool))
    return layers


def alexnet_text(divisor=1, image=224, classes=None, batch=1) -> str:
    lines = ["version 1.0;", "", "graph AlexNet( input ) -> ( output )", "{",
             f"    input = external(shape = [{batch}, 3, {image}, {image}]);"]
    prev, channels = "input", 3
    n_pool = 0
    for k, (name, out, kernel, stride, pad, pool) in enumerate(alexnet_layers(divisor, classes), start=1):
        lines.append(f"    kernel{k} = variable(shape = [{out}, {channels}, {kernel}, {kernel}], "
                     f"label = 'alexnet_v2/{name}/kernel');")
        lines.append(f"    bias{k} = variable(shape = [1, {out}], label = 'alexnet_v2/{name}/bias');")
        lines.append(f"    conv{k} = conv({prev}, kernel{k}, bias{k}, padding = [({pad},{pad}), ({pad},{pad})], "
                     f"border = 'constant', stride = [{stride}, {stride}], dilation = [1, 1]);")
        if k == 8:
            lines.append(f"    output = softmax(conv{k});")
            break
        lines.append(f"    relu{k} = relu(conv{k});")
        prev = f"relu{k}"
        if pool:
            n_pool += 1
            lines.append(f"    pool{n_pool} = max_pool({prev}, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], "
                         "border = 'ignore', padding = [(0,0), (0,0), (0,0), (0,0)]);")
            prev = f"pool{n_pool}"
        channels = out
    lines.append("}")
    return "\n".join(lines) + "\n"


def alexnet_weights(divisor=8, classes=None, seed=0) -> dict:
    """label -> float32 array (He-style scaling keeps activations in range)."""
    rng = np.random.default_rng(seed)
    out = {}
    channels = 3
    for name, ch, kernel, stride, pad, pool in alexnet_layers(divisor, classes):
        fan_in = channels * kernel * kernel
        out[f"alexnet_v2/{name}/kernel"] = (rng.standard_normal((ch, channels, kernel, kernel))
                                            * np.sqrt(2.0 / fan_in)).astype(np.float32)
        out[f"alexnet_v2/{name}/bias"] = (rng.standard_normal((1, ch)) * 0.1).astype(np.float32)
        channels = ch
    return out


def alexnet_files(divisor=8, image=224, classes=None, seed=0) -> dict:
    """{path: bytes}: graph.nnef and one .dat per variable."""
    files = {"graph.nnef": alexnet_text(divisor, image, classes).encode()}
    for label, array in alexnet_weights(divisor, classes, seed).items():
        files[label + ".dat"] = dat.write_tensor(array)
    return files


def to_tgz(files: dict, prefix: str = "") -> bytes:
    """A gzip-compressed tar of {path: bytes}, optionally under a top-level folder."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(prefix + name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def main(argv=None) -> int:
    """python -m webnn_core.nnef.samples PATH [--divisor N] [--image S] [--seed K]: write a sample AlexNet."""
    import argparse

    from .export import write_files

    p = argparse.ArgumentParser(prog="python -m webnn_core.nnef.samples",
                                description="Write the NNEF spec's AlexNet (width-reduced) with random weights.")
    p.add_argument("path", help="a folder, or a .tgz/.tar archive")
    p.add_argument("--divisor", type=int, default=8, help="divide every channel count by this (default 8)")
    p.add_argument("--image", type=int, default=224, help="input height and width (default 224; at least 195)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    files = alexnet_files(args.divisor, args.image, seed=args.seed)
    if args.path.endswith((".tgz", ".tar.gz")):
        with open(args.path, "wb") as f:
            f.write(to_tgz(files))
    else:
        write_files(files, args.path)
    print(f"wrote {args.path} ({len(files) - 1} tensor files)")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
