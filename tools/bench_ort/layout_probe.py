"""Which layout ORT-web's WebNN EP builds convolutions in, model by model.

    python3 tools/bench_ort/layout_probe.py [--cases a,b,...] [--levels all,disabled] [--layout nhwc|nchw] [--log]
                                            [--ort-version 1.22.0] [--json FILE]

For each case (a small ONNX model built here with the PyPI `onnx` package, or a
tools/bench_ort model) and each ORT graphOptimizationLevel, one
`ort.InferenceSession.create` with the WebNN EP (deviceType cpu) on the
polyfill in headless Chromium; the MLGraphBuilder calls ORT makes are recorded
(the page's own interfaces wrapped, measurement only) and printed as one row:
WebNN graphs, conv2d calls by inputLayout, pools by layout, transposes,
reshapes. --layout overrides the polyfill's opSupportLimits().preferredInputLayout
for the experiment; --log prints ORT's verbose log lines about the EP's
GetCapability calls (ORT calls it a second time only after its NHWC layout
transformation changed the graph) and layouts.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "tools" / "bench_ort"))


# -- the small models ---------------------------------------------------------------------
def _model(nodes, inputs, outputs, inits, opset=9, ir=8, weights_as_inputs=False):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    tensors = [numpy_helper.from_array(v, k) for k, v in inits.items()]
    vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs]
    if weights_as_inputs:  # IR 3 style: every initializer also a graph input (overridable)
        vi += [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in tensors]
    out = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs]
    model = helper.make_model(helper.make_graph(nodes, "probe", vi, out, initializer=tensors),
                              opset_imports=[helper.make_opsetid("", opset)], producer_name="layout probe")
    model.ir_version = ir
    onnx.checker.check_model(model)
    return model


def _w(rng, *shape):
    return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def _bn(rng, c, prefix):
    return {f"{prefix}_s": (1 + 0.1 * rng.standard_normal(c)).astype(np.float32),
            f"{prefix}_b": (0.1 * rng.standard_normal(c)).astype(np.float32),
            f"{prefix}_m": (0.1 * rng.standard_normal(c)).astype(np.float32),
            f"{prefix}_v": (1 + 0.2 * rng.random(c)).astype(np.float32)}


def small(case: str, opset=9, ir=8, weights_as_inputs=False):
    """One small NCHW model (input x: 1x16x14x14) named by `case`."""
    from onnx import helper

    N = helper.make_node
    rng = np.random.default_rng(0)
    C, H = 16, 14
    x = [("x", [1, C, H, H])]
    inits: dict = {}
    if case == "conv":  # 3x3 conv with bias
        inits = {"w": _w(rng, C, C, 3, 3), "b": _w(rng, C)}
        nodes = [N("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]
    elif case == "conv_relu":
        inits = {"w": _w(rng, C, C, 3, 3), "b": _w(rng, C)}
        nodes = [N("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]), N("Relu", ["c"], ["y"])]
    elif case == "conv_bn":  # the light nets' Conv -> BatchNormalization (no conv bias)
        inits = {"w": _w(rng, C, C, 3, 3), **_bn(rng, C, "bn")}
        nodes = [N("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 N("BatchNormalization", ["c", "bn_s", "bn_b", "bn_m", "bn_v"], ["y"])]
    elif case == "gconv":  # grouped 1x1, group 4
        inits = {"w": _w(rng, C, C // 4, 1, 1), "b": _w(rng, C)}
        nodes = [N("Conv", ["x", "w", "b"], ["y"], kernel_shape=[1, 1], group=4)]
    elif case == "dwconv":  # depthwise 3x3
        inits = {"w": _w(rng, C, 1, 3, 3), "b": _w(rng, C)}
        nodes = [N("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=C)]
    elif case in ("shuffle", "conv_shuffle", "conv_shuffle4d"):
        # ShuffleNet's channel shuffle: Reshape to (1, g, C/g, H, W), Transpose (0 2 1 3 4), Reshape back;
        # conv_shuffle4d: the same permutation with a 4-D reshape (H*W flattened into one axis)
        g = 4
        five = case != "conv_shuffle4d"
        inits = {"s1": np.array([1, g, C // g, H, H] if five else [1, g, C // g, H * H], np.int64),
                 "s2": np.array([1, C, H, H], np.int64)}
        perm = [0, 2, 1, 3, 4] if five else [0, 2, 1, 3]
        nodes = [N("Reshape", ["x" if case == "shuffle" else "c", "s1"], ["r1"]),
                 N("Transpose", ["r1"], ["t"], perm=perm), N("Reshape", ["t", "s2"], ["y"])]
        if case != "shuffle":
            inits.update({"w": _w(rng, C, C // g, 1, 1), "b": _w(rng, C)})
            nodes.insert(0, N("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1], group=g))
    elif case == "conv_reshape5d":  # a 5-D Reshape and back, no Transpose
        inits = {"w": _w(rng, C, C, 1, 1), "b": _w(rng, C), "s1": np.array([1, 4, C // 4, H, H], np.int64),
                 "s2": np.array([1, C, H, H], np.int64)}
        nodes = [N("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1]), N("Reshape", ["c", "s1"], ["r1"]),
                 N("Reshape", ["r1", "s2"], ["y"])]
    elif case == "conv_transpose5d":  # a 5-D Transpose after a conv, via Unsqueeze-free reshape
        inits = {"w": _w(rng, C, C, 1, 1), "b": _w(rng, C), "s1": np.array([1, 4, C // 4, H, H], np.int64)}
        nodes = [N("Conv", ["x", "w", "b"], ["c"], kernel_shape=[1, 1]), N("Reshape", ["c", "s1"], ["r1"]),
                 N("Transpose", ["r1"], ["y"], perm=[0, 2, 1, 3, 4])]
        return _model(nodes, x, [("y", [1, C // 4, 4, H, H])], inits, opset, ir, weights_as_inputs)
    elif case == "conv_sum":  # ONNX Sum (no WebNN EP builder) between two convs
        inits = {"w": _w(rng, C, C, 3, 3), "b": _w(rng, C), "w2": _w(rng, C, C, 1, 1), "b2": _w(rng, C)}
        nodes = [N("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
                 N("Sum", ["c", "x"], ["s"]), N("Conv", ["s", "w2", "b2"], ["y"], kernel_shape=[1, 1])]
    elif case == "unit":  # one ShuffleNet unit: gconv+BN+relu, shuffle, dwconv+BN, gconv+BN, add, relu
        g = 4
        inits = {"w1": _w(rng, C, C // g, 1, 1), **_bn(rng, C, "bn1"), "s1": np.array([1, g, C // g, H, H], np.int64),
                 "s2": np.array([1, C, H, H], np.int64), "w2": _w(rng, C, 1, 3, 3), **_bn(rng, C, "bn2"),
                 "w3": _w(rng, C, C // g, 1, 1), **_bn(rng, C, "bn3")}
        nodes = [N("Conv", ["x", "w1"], ["c1"], kernel_shape=[1, 1], group=g),
                 N("BatchNormalization", ["c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"], ["n1"]), N("Relu", ["n1"], ["a1"]),
                 N("Reshape", ["a1", "s1"], ["r1"]), N("Transpose", ["r1"], ["t"], perm=[0, 2, 1, 3, 4]),
                 N("Reshape", ["t", "s2"], ["r2"]),
                 N("Conv", ["r2", "w2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=C),
                 N("BatchNormalization", ["c2", "bn2_s", "bn2_b", "bn2_m", "bn2_v"], ["n2"]),
                 N("Conv", ["n2", "w3"], ["c3"], kernel_shape=[1, 1], group=g),
                 N("BatchNormalization", ["c3", "bn3_s", "bn3_b", "bn3_m", "bn3_v"], ["n3"]),
                 N("Add", ["n3", "x"], ["s"]), N("Relu", ["s"], ["y"])]
    else:
        raise SystemExit(f"layout_probe: unknown case {case!r}")
    return _model(nodes, x, [("y", [1, C, H, H])], inits, opset, ir, weights_as_inputs)


SMALL = ["conv", "conv_relu", "conv_bn", "gconv", "dwconv", "shuffle", "conv_shuffle", "conv_shuffle4d",
         "conv_reshape5d", "conv_transpose5d", "conv_sum", "unit"]
# variants: <case>@opset13, <case>@ir3 (IR 3: weights also graph inputs), <case>@inputs (IR 8, weights also inputs)
DEFAULT = ["conv", "conv_bn", "gconv", "dwconv", "conv_shuffle", "conv_shuffle4d", "conv_reshape5d",
           "conv_transpose5d", "unit", "conv@opset13", "unit@opset13", "conv@ir3", "conv@inputs",
           "shufflenet", "shufflenet_add", "squeezenet"]


MODEL_DIR = ROOT / ".cache" / "ort-bench"  # tools/bench_ort.py's model cache


def case_url(folder: Path, case: str) -> str:
    """The page's URL of one case's model: a bench model from MODEL_DIR (served as /ortmodels/), or
    a small one written into `folder` (served as /probe/)."""
    import onnx

    import models as ort_models

    name, _, variant = case.partition("@")
    if name in ort_models.TITLES:
        return "/ortmodels/" + ort_models.ensure(MODEL_DIR, [name])[name]["file"]
    kw = {"": {}, "opset13": {"opset": 13}, "ir3": {"ir": 3, "weights_as_inputs": True},
          "inputs": {"weights_as_inputs": True}}[variant]
    file = f"{case.replace('@', '_')}.onnx"
    onnx.save(small(name, **kw), str(folder / file))
    return "/probe/" + file


_PAGE_JS = r"""async ([cases, levels, verbose]) => {
  await window.ready;
  const ops = ['conv2d', 'convTranspose2d', 'averagePool2d', 'maxPool2d', 'transpose', 'reshape', 'batchNormalization',
               'add', 'relu', 'concat', 'gemm', 'matmul'];
  let calls = null;
  const proto = MLGraphBuilder.prototype;
  for (const op of ops) {
    const f = proto[op];
    proto[op] = function (...args) {
      if (calls) {
        const o = args.find((a, i) => i > 0 && a && Object.getPrototypeOf(a) === Object.prototype) || {};
        calls.push([op, o.inputLayout || o.layout || 'nchw',  // absent: the default, nchw
                    op === 'transpose' ? (o.permutation || []).join('') : '',
                    op === 'reshape' ? args[1].length : args[0]?.shape?.length ?? 0]);
      }
      return f.apply(this, args);
    };
  }
  const build = proto.build;
  let graphs = 0;
  proto.build = function (...args) { if (calls) graphs++; return build.apply(this, args); };
  const logs = [];
  const log = console.log, warn = console.warn;
  const grab = (fn) => (...a) => { if (calls) logs.push(a.join(' ')); return fn.apply(console, a); };
  console.log = grab(log); console.warn = grab(warn); console.error = grab(console.error); console.info = grab(console.info); console.debug = grab(console.debug);
  const out = {};
  for (const [name, url] of cases) {
    for (const level of levels) {
      calls = []; graphs = 0; logs.length = 0;
      const row = out[`${name} ${level}`] = {};
      try {
        const bytes = new Uint8Array(await (await fetch(url)).arrayBuffer());
        const s = await ort.InferenceSession.create(bytes, {
          executionProviders: [{ name: 'webnn', deviceType: 'cpu' }], graphOptimizationLevel: level,
          logSeverityLevel: verbose ? 0 : 3, logVerbosityLevel: verbose ? 1 : 0 });
        await s.release();
      } catch (e) { row.error = String(e.message || e).slice(0, 300); }
      row.graphs = graphs; row.calls = calls; // ORT calls the EP's GetCapability a second time only after its NHWC layout transformation changed the graph
      row.logs = verbose ? logs.filter((l) => /GetCapability|layout|nhwc/i.test(l) && !/NhwcTransformer/.test(l)).map((l) => l.replace(/\x1b\[[0-9;]*m/g, '')) : [];
      calls = null;
    }
  }
  return out;
}"""


def probe(cases: list, levels: list, layout: str | None, verbose: bool, version: str) -> dict:
    import ort_web
    from profile_build import _ort_bench_page

    problem = ort_web.ensure_ort(version)
    if problem:
        raise SystemExit(f"layout_probe: {problem}")
    dist = ort_web.ort_dir(version) / "dist"
    with tempfile.TemporaryDirectory() as tmp:
        files = {case: case_url(Path(tmp), case) for case in cases}
        mounts = {"/ortdist/": dist, "/probe/": Path(tmp), "/ortmodels/": MODEL_DIR}
        query = "ep=webnn&first=1&pthreads=1" + (f"&layout={layout}" if layout else "")
        with _ort_bench_page(query, mounts) as page:
            if verbose:
                page.evaluate("() => window.ready.then(() => { ort.env.logLevel = 'verbose'; })")
            return page.evaluate(_PAGE_JS, [list(files.items()), levels, verbose])


def summarise(calls: list) -> dict:
    from collections import Counter

    c = Counter()
    for op, layout, perm, rank in calls:
        if op == "conv2d":
            c[f"conv {layout}"] += 1
        elif op in ("averagePool2d", "maxPool2d"):
            c[f"pool {layout}"] += 1
        elif op == "transpose":
            c[f"transpose {perm}"] += 1
        elif op == "reshape":
            c[f"reshape {rank}-D"] += 1
        elif op == "batchNormalization":
            c["batchNorm"] += 1
    return dict(c)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=",".join(DEFAULT),
                   help=f"comma list; small cases {SMALL} (+ @opset13, @ir3, @inputs) or bench_ort models")
    p.add_argument("--levels", default="all", help="comma list of graphOptimizationLevel: disabled,basic,extended,all")
    p.add_argument("--layout", choices=("nhwc", "nchw"), help="override the polyfill's preferredInputLayout")
    p.add_argument("--log", action="store_true", help="ORT's verbose log lines about GetCapability calls and layouts")
    p.add_argument("--json", type=Path, help="write the raw recording here")
    p.add_argument("--ort-version", default=None, help="onnxruntime-web version (default: tools/ort_web.py's pin)")
    args = p.parse_args(argv)
    cases = args.cases.split(",")
    import ort_web

    version = args.ort_version or ort_web.ORT_VERSION
    out = probe(cases, args.levels.split(","), args.layout, args.log, version)
    print(f"onnxruntime-web {version}, WebNN EP (deviceType cpu) on the polyfill")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))
    print("| case | level | WebNN graphs | builder calls (conv2d by inputLayout, pools, transposes by permutation, reshapes by rank) |")
    print("|---|---|---:|---|")
    for key, row in out.items():
        case, level = key.rsplit(" ", 1)
        what = row.get("error") or ", ".join(f"{k} ×{v}" for k, v in sorted(summarise(row["calls"]).items()))
        print(f"| {case} | {level} | {row['graphs']} | {what} |")
        for line in row.get("logs", []):
            print("    " + line[:300])
    return 0


if __name__ == "__main__":
    sys.exit(main())
