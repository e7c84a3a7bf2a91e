"""Weight layouts the microkernels read (done once at build() for constant
weights by ..compile, else per call).

GEMM weights: B (K x N) in panels of NR = 8 columns, panel-major, each panel
K rows of 8 contiguous floats, zero past N (csrc/gemm.h). Convolutions are
GEMMs over im2col rows whose K index is (i * KW + j) * IG + ci, so an OHWI
filter group reshaped to (OG, K) is B transposed. Depthwise filters become
[KH][KW][C] so the kernel loads 4 channels of one tap at once.
"""
from __future__ import annotations

import numpy as np

NR = 8
F32 = np.dtype(np.float32)


def round_up(n: int, m: int = NR) -> int:
    return -(-n // m) * m


def pack_b(b: np.ndarray, backend=None) -> np.ndarray:
    """Pack a K x N float32 matrix (any strides) into 8-column panels (flat float32).
    With a kernel backend, by wk_pack_b straight from b's strides (at build() a
    ResNet50's 2048x1000 logits weight takes ~80 ms through numpy's padded copy
    and transpose in Pyodide, a few ms in the kernel); without, by numpy."""
    k, n = b.shape
    if backend is not None:
        if b.dtype != F32 or b.strides[0] % 4 or b.strides[1] % 4 or not b.flags.aligned:
            b = np.ascontiguousarray(b, dtype=F32)
        bp = np.empty(round_up(n) * k, F32)
        backend.pack_b(k, n, b.__array_interface__["data"][0], b.strides[0] // 4, b.strides[1] // 4,
                       bp.__array_interface__["data"][0])
        return bp
    npad = round_up(n)
    padded = np.zeros((k, npad), F32)
    padded[:, :n] = b
    return np.ascontiguousarray(padded.reshape(k, npad // NR, NR).transpose(1, 0, 2)).reshape(-1)


class PackedConv:
    """A conv2d filter (and bias) in the layout of one microkernel.

    kind "gemm": `w` holds, per group, the packed panels of the K x OG matrix
    (round_up(OG) * K floats per group), `bias` per group round_up(OG) floats.
    kind "dw": `w` is [KH][KW][C], `bias` [C]. `bias` is None without a bias.
    """

    __slots__ = ("kind", "groups", "out_channels", "kh", "kw", "in_per_group", "w", "bias", "k", "params")

    def __init__(self, kind, groups, out_channels, kh, kw, in_per_group, w, bias):
        self.kind = kind
        self.groups = groups
        self.out_channels = out_channels
        self.kh = kh
        self.kw = kw
        self.in_per_group = in_per_group
        self.w = w
        self.bias = bias
        self.k = kh * kw * in_per_group
        self.params = {}  # (input shape, output row stride) -> int32 parameter block

    @property
    def consts(self) -> tuple:
        """The constant arrays a kernel call reads (a kernel pool keeps them resident)."""
        return (self.w, self.bias)


def is_depthwise(o: int, ig: int, groups: int) -> bool:
    return ig == 1 and o == groups


def pack_conv(w_ohwi: np.ndarray, bias, groups: int, backend=None) -> PackedConv:
    """Pack an OHWI float32 filter (+ optional bias [O]) for wk_conv2d or wk_dwconv2d.
    With a kernel backend the GEMM panels are packed by wk_pack_oihw, straight
    from an OIHW filter when `w_ohwi` is a transposed view of one (numpy's
    strided copies are slow in Pyodide); without, by numpy (same layout)."""
    o, kh, kw, ig = w_ohwi.shape
    if is_depthwise(o, ig, groups):
        w = np.ascontiguousarray(np.transpose(w_ohwi[:, :, :, 0], (1, 2, 0)), dtype=F32)
        b = None if bias is None else np.ascontiguousarray(bias, dtype=F32)
        return PackedConv("dw", groups, o, kh, kw, ig, w, b)
    og = o // groups
    k = kh * kw * ig
    npg = round_up(og)
    if backend is not None and getattr(backend, "pack_oihw", None) is not None:
        w = np.empty(groups * npg * k, F32)
        base = w.__array_interface__["data"][0]
        oihw = np.transpose(w_ohwi, (0, 3, 1, 2))
        if w_ohwi.dtype == F32 and oihw.flags.c_contiguous and oihw.flags.aligned:
            src, rows, hw = oihw, ig, kh * kw  # the filter as given (NCHW graphs): no transposing copy
        else:
            src, rows, hw = np.ascontiguousarray(w_ohwi, dtype=F32), k, 1  # OHWI rows
        src_base = src.__array_interface__["data"][0]
        for g in range(groups):
            backend.pack_oihw(og, rows, hw, src_base + 4 * g * og * k, base + 4 * g * npg * k)
    elif backend is not None:
        wc = np.ascontiguousarray(w_ohwi, dtype=F32).reshape(groups, og, k)
        w = np.empty(groups * npg * k, F32)
        base = w.__array_interface__["data"][0]
        for g in range(groups):
            src = wc[g]  # (og, k): element (kk, oo) of B = W_g^T is at kk + oo * k
            backend.pack_b(k, og, src.__array_interface__["data"][0], 1, k, base + 4 * g * npg * k)
    else:
        wg = np.asarray(w_ohwi, F32).reshape(groups, og, k)
        padded = np.zeros((groups, npg, k), F32)
        padded[:, :og, :] = wg
        w = np.ascontiguousarray(padded.reshape(groups, npg // NR, NR, k).transpose(0, 1, 3, 2)).reshape(-1)
    b = None
    if bias is not None:
        b = np.zeros((groups, npg), F32)
        b[:, :og] = np.asarray(bias, F32).reshape(groups, og)
        b = b.reshape(-1)
    return PackedConv("gemm", groups, o, kh, kw, ig, w, b)
