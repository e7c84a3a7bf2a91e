"""A kernel backend that runs the *wasm* build (dist/webnn-kernels.wasm) under
Node, so the CPython tests check the module the browser loads, through the
very fast-path code (webnn_core.backends.cpu.fast) that calls it in Pyodide.

The fast paths call a backend with buffer addresses; this backend reads each
buffer's bytes at its address (ctypes), ships them to a Node process that
copies them into the module's memory, calls the export, and writes the
output buffers back to their addresses.
"""
from __future__ import annotations

import base64
import ctypes
import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WASM = ROOT / "dist" / "webnn-kernels.wasm"
WASM_RELAXED = ROOT / "dist" / "webnn-kernels-relaxed.wasm"
NR = 8
# Node < 22 (V8 < 11.4) runs relaxed SIMD only behind this flag.
RELAXED_FLAG = "--experimental-wasm-relaxed-simd"


def _node_runs(args) -> bool:
    try:
        return subprocess.run(["node", *args, "-e", "0"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def unavailable_reason(wasm=WASM) -> str | None:
    if not shutil.which("node"):
        return "node is not installed"
    if not wasm.exists():
        return f"{wasm} is not built (python tools/build_kernels.py)"
    return None


def node_args(wasm) -> list:
    return [RELAXED_FLAG] if wasm == WASM_RELAXED and _node_runs([RELAXED_FLAG]) else []


def _num(v):
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return v


def _ru(n):
    return -(-n // NR) * NR


class _Buf:
    def __init__(self, addr, nbytes, out=False, scratch=False):
        self.addr, self.nbytes, self.out, self.scratch = addr, nbytes, out, scratch


class NodeWasmBackend:
    kind = "wasm-node"

    def __init__(self, wasm=WASM):
        self.fused_madd = wasm == WASM_RELAXED
        self.proc = subprocess.Popen(["node", *node_args(wasm), str(HERE / "wasm_runner.mjs"), str(wasm)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.calls = 0

    def describe(self):
        return f"{'relaxed-simd' if self.fused_madd else 'simd128'} wasm under Node (tests)"

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)

    def _call(self, fn, args):
        bufs, wire = [], []
        for a in args:
            if isinstance(a, _Buf):
                if a.addr == 0:  # a null pointer (no bias)
                    wire.append(0)
                    continue
                entry = {"bytes": a.nbytes, "out": a.out}
                if not a.scratch:
                    entry["data"] = base64.b64encode(ctypes.string_at(a.addr, a.nbytes)).decode()
                bufs.append((a, entry))
                wire.append({"buf": len(bufs) - 1})
            else:
                wire.append(_num(a))
        self.proc.stdin.write(json.dumps({"fn": fn, "args": wire, "bufs": [e for _, e in bufs]}) + "\n")
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(reply["error"])
        for (buf, _), data in zip(bufs, reply["outs"]):
            if data is not None:
                raw = base64.b64decode(data)
                ctypes.memmove(buf.addr, raw, len(raw))
        self.calls += 1

    @staticmethod
    def _params(p_addr, n=18):
        return np.frombuffer(ctypes.string_at(p_addr, 4 * n), np.int32).tolist()

    # -- the backend methods (addresses in, like the ctypes / JsProxy backends) --
    def gemm(self, M, N, K, A, lda, Bp, bias, C, ldc, lo, hi):
        self._call("wk_gemm", [M, N, K, _Buf(A, 4 * ((M - 1) * lda + K)), lda, _Buf(Bp, 4 * _ru(N) * K),
                               _Buf(bias, 4 * _ru(N)), _Buf(C, 4 * ((M - 1) * ldc + N), out=True), ldc,
                               float(lo), float(hi)])

    def pack_b(self, K, N, B, sbk, sbn, Bp):
        offs = [0, (K - 1) * sbk, (N - 1) * sbn, (K - 1) * sbk + (N - 1) * sbn]
        lo_off, hi_off = min(offs), max(offs)
        if lo_off < 0:
            # Negative strides: hand the kernel a positively strided copy instead.
            src = np.frombuffer(ctypes.string_at(B + 4 * lo_off, 4 * (hi_off - lo_off + 1)), np.float32)
            view = np.lib.stride_tricks.as_strided(src[-lo_off:], shape=(K, N), strides=(4 * sbk, 4 * sbn))
            tmp = np.ascontiguousarray(view)
            return self.pack_b(K, N, tmp.__array_interface__["data"][0], N, 1, Bp)
        self._call("wk_pack_b", [K, N, _Buf(B, 4 * (hi_off + 1)), sbk, sbn, _Buf(Bp, 4 * _ru(N) * K, out=True)])

    def conv2d(self, p, x, Bp, bias, y, scratch, lo, hi):
        n, h, w, c, oh, ow, oc, kh, kw, _, _, _, _, _, _, g, ldy, mc = self._params(p)
        k = kh * kw * (c // g)
        npg = _ru(oc // g)
        self._call("wk_conv2d", [_Buf(p, 72), _Buf(x, 4 * n * h * w * c), _Buf(Bp, 4 * g * npg * k),
                                 _Buf(bias, 4 * g * npg), _Buf(y, 4 * ((n * oh * ow - 1) * ldy + oc), out=True),
                                 _Buf(scratch, 4 * max(mc, 1) * k, scratch=True), float(lo), float(hi)])

    def dwconv2d(self, p, x, w, bias, y, lo, hi):
        q = self._params(p)
        n, h, wd, c, oh, ow, oc, kh, kw = q[:9]
        ldy = q[16]
        self._call("wk_dwconv2d", [_Buf(p, 72), _Buf(x, 4 * n * h * wd * c), _Buf(w, 4 * kh * kw * c),
                                   _Buf(bias, 4 * c), _Buf(y, 4 * ((n * oh * ow - 1) * ldy + oc), out=True),
                                   float(lo), float(hi)])

    def _pool(self, fn, p, x, y):
        q = self._params(p)
        n, h, w, c, oh, ow = q[:6]
        ldy = q[16]
        self._call(fn, [_Buf(p, 72), _Buf(x, 4 * n * h * w * c), _Buf(y, 4 * ((n * oh * ow - 1) * ldy + c), out=True)])

    def maxpool2d(self, p, x, y):
        self._pool("wk_maxpool2d", p, x, y)

    def avgpool2d(self, p, x, y):
        self._pool("wk_avgpool2d", p, x, y)

    def clamp(self, n, x, y, lo, hi):
        self._call("wk_clamp", [n, _Buf(x, 4 * n), _Buf(y, 4 * n, out=True), float(lo), float(hi)])

    def powq(self, n, x, y, q):
        self._call("wk_powq", [n, _Buf(x, 4 * n), _Buf(y, 4 * n, out=True), q])

    def transpose(self, batch, rows, cols, x, y):
        n = 4 * batch * rows * cols
        self._call("wk_transpose", [batch, rows, cols, _Buf(x, n), _Buf(y, n, out=True)])

    def shuffle(self, P, g, cg, x, y):
        self._call("wk_shuffle", [P, g, cg, _Buf(x, 4 * P * g * cg), _Buf(y, 4 * P * g * cg, out=True)])

    def chanavg(self, P, C, CO, k, p0, x, y):
        self._call("wk_chanavg", [P, C, CO, k, p0, _Buf(x, 4 * P * C), _Buf(y, 4 * P * CO, out=True)])

    def binary(self, op, n, a, sa, b, sb, y):
        self._call("wk_binary", [op, n, _Buf(a, 4 * max(1, n * sa)), sa, _Buf(b, 4 * max(1, n * sb)), sb,
                                 _Buf(y, 4 * n, out=True)])

    def erf(self, n, x, y):
        self._call("wk_erf", [n, _Buf(x, 4 * n), _Buf(y, 4 * n, out=True)])

    def pack_oihw(self, og, i, hw, w, bp):
        self._call("wk_pack_oihw", [og, i, hw, _Buf(w, 4 * og * i * hw), _Buf(bp, 4 * _ru(og) * i * hw, out=True)])

    def layer_norm(self, rows, n, x, scale, bias, y, eps):
        self._call("wk_layer_norm", [rows, n, _Buf(x, 4 * rows * n), _Buf(scale, 4 * n), _Buf(bias, 4 * n),
                                     _Buf(y, 4 * rows * n, out=True), float(eps)])

    def probe(self):
        """A tiny GEMM: raises if Node cannot instantiate or run the module."""
        a = np.ones((1, 1), np.float32)
        bp = np.zeros(8, np.float32)
        bp[0] = 2.0
        c = np.zeros((1, 1), np.float32)
        addr = lambda x: x.__array_interface__["data"][0]  # noqa: E731
        self.gemm(1, 1, 1, addr(a), 1, addr(bp), 0, addr(c), 1, -math.inf, math.inf)
        if c[0, 0] != 2.0:
            raise RuntimeError(f"probe computed {c[0, 0]}")
