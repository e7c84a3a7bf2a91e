"""The webgpu backend's conv2d kernels side by side: direct vs tiled (implicit GEMM
through workgroup memory) on the layer shapes of SqueezeNet and MobileNetV2, in
headless Chromium on the WebGPU adapter the flags give (SwiftShader by default).

    python3 tools/bench_gpu_conv.py [--dist DIR] [--rounds 2] [--runs 3] [--shapes squeezenet,mobilenetv2]

Each kernel runs the same conv2d + relu (NHWC, OHWI filters, weights constant)
on its own gpu context (webnnPolyfill.config.webgpuConv2d = 'direct' | 'tiled'),
the kernels interleaved per round so that a shared machine's load hits both;
a sample is writeTensor + dispatch + readTensor. Prints a markdown table of the
median and min (ms) per kernel and the kernel the planner's "auto" picks on this
adapter (kernels/conv.py conv2d_kernel). $BENCH_WEBGPU_ARGS overrides the
Chromium flags (e.g. a real adapter's).
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve  # noqa: E402

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
WEBGPU_ARGS = shlex.split(os.environ.get("BENCH_WEBGPU_ARGS",
                                         "--enable-unsafe-webgpu --use-webgpu-adapter=swiftshader"))
# [H, W, C, O, k, stride, groups] of the input, NHWC: the layers that dominate each model.
SHAPES = {
    "squeezenet": [[224, 224, 3, 96, 7, 2, 1],  # conv1 (K = 147)
                   [55, 55, 96, 16, 1, 1, 1],  # fire2 squeeze
                   [55, 55, 16, 64, 3, 1, 1],  # fire2 expand 3x3 (K = 144)
                   [13, 13, 64, 256, 3, 1, 1]],  # fire9 expand 3x3 (K = 576)
    "mobilenetv2": [[224, 224, 3, 32, 3, 2, 1],  # first conv (K = 27)
                    [112, 112, 32, 16, 1, 1, 1],  # block 1 projection
                    [56, 56, 24, 144, 1, 1, 1],  # expansion (K = 24)
                    [56, 56, 144, 24, 1, 1, 1],  # projection (K = 144)
                    [7, 7, 320, 1280, 1, 1, 1]],  # last 1x1 (K = 320)
}


def run(dist: Path, shapes, rounds: int, runs: int) -> dict:
    from playwright.sync_api import sync_playwright

    srv = serve.start(mounts={**serve.default_mounts(), "/dist/": dist, "/conv/": ROOT / "tools" / "bench_gpu_conv"})
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=WEBGPU_ARGS)
            page = browser.new_page()
            page.set_default_timeout(1_800_000)
            page.goto(f"http://127.0.0.1:{srv.server_address[1]}/conv/conv.html")
            result = page.evaluate("([s, k, r, n]) => bench(s, k, r, n)", [shapes, ["direct", "tiled"], rounds, runs])
            result["chromium"] = browser.version
            browser.close()
    finally:
        srv.shutdown()
    return result


def auto_choice(shape, adapter: str) -> str:
    """What the planner's "auto" picks for this layer on this adapter."""
    sys.path.insert(0, str(ROOT / "py"))
    from webnn_core.backends.webgpu.backend import EMULATED_ADAPTERS
    from webnn_core.backends.webgpu.kernels.conv import TILED_MIN_GROUP_CHANNELS, TILED_MIN_K_EMULATED

    h, w, c, o, k, stride, groups = shape
    og = o // groups
    if og < TILED_MIN_GROUP_CHANNELS:
        return "direct"
    if EMULATED_ADAPTERS.search(adapter or "") and (k == 1 or k * k * (c // groups) < TILED_MIN_K_EMULATED):
        return "direct"
    return "tiled"


def table(result: dict) -> str:
    lines = ["| layer (H x W x C -> O, k, stride) | direct median | min | tiled median | min | tiled / direct (min) | auto |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for row in result["rows"]:
        h, w, c, o, k, stride, groups = row["shape"]
        d, t = row["kernels"]["direct"], row["kernels"]["tiled"]
        lines.append(f"| {h}x{w}x{c} -> {o}, {k}x{k}, s{stride} | {d['median']:.0f} | {d['min']:.0f} | "
                     f"{t['median']:.0f} | {t['min']:.0f} | {t['min'] / d['min']:.2f} | "
                     f"{auto_choice(row['shape'], result['adapter'])} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dist", type=Path, default=ROOT / "dist")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--shapes", default="squeezenet,mobilenetv2")
    args = p.parse_args(argv)
    shapes = [s for name in args.shapes.split(",") for s in SHAPES[name]]
    result = run(args.dist, shapes, args.rounds, args.runs)
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"adapter: {result['adapter']}; Chromium {result['chromium']}; load average at end {load}\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
