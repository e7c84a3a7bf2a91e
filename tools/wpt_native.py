"""Run WPT webnn conformance cases natively through webnn_core (no browser).

The cases and their tolerances come from the WPT files themselves (extracted
by tools/wpt_cases.js with Node); results are compared with WPT's metrics
(ULP / ATOL, digest §4.3), implemented here independently. A fast loop for op
work; the browser run through wpt_runner remains the real conformance check.

    python tools/wpt_native.py [--wpt ROOT] relu conv2d ...   (names or globs of conformance files)
    python tools/wpt_native.py --round-trip                    (also: each built graph, saved as
        plain data and loaded into a fresh context, gives byte-identical outputs)
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))

from webnn_core import Context, WebNNError  # noqa: E402
from webnn_core import dtypes  # noqa: E402
from webnn_core.plain import from_json, to_json  # noqa: E402


def default_wpt_root() -> Path | None:
    env = os.environ.get("WPT_DIR")
    if env:
        return Path(env)
    cache = Path.home() / ".cache" / "pywebnn" / "wpt"
    trees = sorted(p for p in cache.glob("*") if (p / "webnn").is_dir()) if cache.is_dir() else []
    return trees[-1] if trees else None


def conformance_files(wpt_root: Path, patterns) -> list[str]:
    names = sorted(p.name for p in (wpt_root / "webnn" / "conformance_tests").glob("*.https.any.js"))
    chosen = []
    for name in names:
        stem = name.replace(".https.any.js", "")
        if not patterns or any(fnmatch.fnmatch(stem, pat) for pat in patterns):
            chosen.append(f"webnn/conformance_tests/{name}")
    return chosen


def load_cases(wpt_root: Path, files) -> list[dict]:
    proc = subprocess.run(["node", str(ROOT / "tools" / "wpt_cases.js"), str(wpt_root), *files],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout, object_hook=_decode_special)


def _decode_special(d):
    if "$bigint" in d:
        return int(d["$bigint"])
    if "$number" in d:
        return float(d["$number"])
    return d


def _array(dtype, shape, data):
    n = dtypes.element_count(shape)
    if not isinstance(data, list):
        data = [data] * n
    if dtype in ("int64", "uint64"):
        return np.array([int(v) for v in data], dtype=dtypes.numpy_dtype(dtype)).reshape(shape)
    if dtype in dtypes.FOUR_BIT:  # the harness packs into nibbles, which wraps out-of-range values
        return dtypes.wrap_integer(np.array(data, dtype=np.int64), dtype).reshape(shape)
    return np.array(data, dtype=np.float64).astype(dtypes.numpy_dtype(dtype)).reshape(shape)


def round_trip(graph, feeds, results) -> str:
    """Save `graph` as JSON + buffers, load it into a fresh context and run it:
    '' when every output is byte-identical to `results`, else what differs."""
    text, buffers = to_json(graph)
    ctx = Context("cpu")
    again = ctx.compute(from_json(ctx, text, buffers), feeds)
    for name, want in results.items():
        got = again[name]
        if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
            return f"round trip: output {name} differs"
    return ""


def run_case(case, check_round_trip=False) -> tuple[bool, str]:
    graph = case["graph"]
    ctx = Context("cpu")
    b = ctx.graph_builder()
    inputs = graph["inputs"]
    made, operands, feeds = {}, {}, {}

    def operand(name):
        if name in operands:
            return operands[name]
        if name not in made:
            res = inputs[name]
            desc = res["descriptor"]
            arr = _array(desc["dataType"], desc["shape"], res["data"])
            if res.get("constant"):
                made[name] = b.constant(desc, arr)
            else:
                made[name] = b.input(name, desc)
                feeds[name] = arr
        return made[name]

    def resolve(value):
        if isinstance(value, str) and (value in inputs or value in operands):
            return operand(value)
        if isinstance(value, list) and value and all(isinstance(v, str) and (v in inputs or v in operands) for v in value):
            return [operand(v) for v in value]
        return value

    try:
        for op in graph["operators"]:
            args, options = [], {}
            for argument in op["arguments"]:
                for key, value in (argument or {}).items():  # like JS `for in` over null
                    if key == "options":
                        options = {k: resolve(v) for k, v in (value or {}).items()}
                    else:
                        args.append(resolve(value))
            result = b.op(op["name"], *args, **options)
            outs = op["outputs"]
            if isinstance(outs, list):
                for name, o in zip(outs, result):
                    operands[name] = o
            else:
                operands[outs] = result
        expected = graph["expectedOutputs"]
        for name, exp in expected.items():
            o = operands[name]
            want = exp["descriptor"]
            if o.dtype != want["dataType"] or list(o.shape) != list(want["shape"]):
                return False, f"{name}: descriptor {o.dtype}{list(o.shape)} != {want['dataType']}{want['shape']}"
        g = b.build({name: operands[name] for name in expected})
        results = ctx.compute(g, feeds)
        if check_round_trip:
            problem = round_trip(g, feeds, results)
            if problem:
                return False, problem
    except WebNNError as e:
        return False, f"{type(e).__name__}: {e}"
    except Exception as e:  # an engine bug: report it as this case's failure
        return False, f"CRASH {type(e).__name__}: {e}"
    tol = case["tolerance"]
    for name, exp in expected.items():
        ok, msg = compare(results[name], exp, tol)
        if not ok:
            return False, f"{name}: {msg}"
    return True, ""


def _f32_ordinal(x: np.ndarray) -> np.ndarray:
    bits = np.abs(x.astype(np.float32)).view(np.int32).astype(np.int64)
    return np.where(np.signbit(x.astype(np.float32)), -bits, bits)


def compare(actual: np.ndarray, exp: dict, tol: dict) -> tuple[bool, str]:
    dtype = exp["descriptor"]["dataType"]
    data = exp["data"]
    actual = np.asarray(actual).reshape(-1)
    if not isinstance(data, list):
        n = min(1000, actual.size)
        data, actual = [data] * n, actual[:n]
    if "error" in tol:  # WPT's tolerance function needs browser-side state for this case
        return True, ""
    metric, limit = tol.get("metricType"), tol.get("value")
    if metric == "ULP" and limit is None:
        return True, ""  # WPT: an undefined ULP tolerance accepts anything
    if dtype in ("int64", "uint64"):
        exp_arr = np.array([int(v) for v in data], dtype=object)
        diff = np.abs(actual.astype(object) - exp_arr)
        bad = np.nonzero(diff > (limit or 0))[0]
    elif metric == "ATOL":
        e = np.array(data, dtype=np.float64)
        a = actual.astype(np.float64)
        with np.errstate(invalid="ignore"):
            bad = np.nonzero(~((np.abs(a - e) <= limit) | (np.isnan(a) & np.isnan(e)) | (a == e)))[0]
    elif dtype == "float32":
        e = np.array(data, dtype=np.float64).astype(np.float32)
        a = actual.astype(np.float32)
        both_nan = np.isnan(a) & np.isnan(e)
        dist = np.abs(_f32_ordinal(a) - _f32_ordinal(e))
        bad = np.nonzero(~(both_nan | (a == e) | (dist <= limit)))[0]
    elif dtype == "float16":
        e = np.array(data, dtype=np.float64).astype(np.float16)
        a = actual.astype(np.float16)
        both_zero = (a == 0) & (e == 0)
        dist = np.abs(a.view(np.uint16).astype(np.int64) - e.view(np.uint16).astype(np.int64))
        bad = np.nonzero(~(both_zero | (dist <= limit)))[0]
    else:
        e = np.array(data, dtype=np.float64)
        bad = np.nonzero(np.abs(actual.astype(np.float64) - e) > (limit or 0))[0]
    if bad.size:
        i = bad[0]
        return False, f"{bad.size} mismatches; first at {i}: got {actual[i]!r}, expected {data[i]!r} ({metric} {limit})"
    return True, ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("patterns", nargs="*", help="conformance file stems or globs (default: all)")
    p.add_argument("--wpt", type=Path, default=default_wpt_root())
    p.add_argument("-v", "--verbose", action="store_true", help="list passing cases too")
    p.add_argument("--round-trip", action="store_true",
                   help="also check that each graph round-trips through plain data (webnn_core.plain)")
    args = p.parse_args(argv)
    if args.wpt is None:
        print("no WPT tree: set WPT_DIR or extract one into ~/.cache/pywebnn/wpt/", file=sys.stderr)
        return 2
    total = passed = 0
    for f in conformance_files(args.wpt, args.patterns):
        cases = load_cases(args.wpt, [f])
        fp = 0
        for case in cases:
            ok, msg = run_case(case, args.round_trip)
            fp += ok
            if not ok or args.verbose:
                print(f"{'PASS' if ok else 'FAIL'} {Path(f).name} :: {case['name']} {msg}")
        total += len(cases)
        passed += fp
        print(f"{Path(f).name}: {fp}/{len(cases)}", file=sys.stderr)
    print(f"{passed} passed, {total - passed} failed")
    return 0 if passed == total else 1


if __name__ == "__main__":
    sys.exit(main())
