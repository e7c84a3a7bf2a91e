"""Splitting one kernel call into independent tiles of its output, so a
backend with a thread pool can run them on several cores (issue 17 item 2).

Every tile is an ordinary call of the same export on a sub-problem, described
by its own parameter block and address offsets; no kernel changes:

  * convolutions (wk_conv2d im2col path, wk_dwconv2d) and pools
    (wk_maxpool2d, wk_avgpool2d): ranges of output rows of one image. A tile
    of rows [oh0, oh1) of image n is the same call with N = 1, OH = oh1 - oh0,
    the top padding shifted to PT - oh0 * SH (negative when the tile starts
    inside the image: the kernels bound-check every input row against H), x
    advanced to image n and y to row oh0.
  * 1x1 stride-1 unpadded convolutions (wk_conv2d's direct GEMM path): ranges
    of output pixels, each described as a 1 x rows image so that the direct
    path still applies.
  * GEMM (wk_gemm): ranges of rows of A and C.

Each output element is computed by the same instructions in the same order
whichever tile it falls in (the GEMM accumulates k ascending per element in
every micro-tile, the direct and im2col paths read the same taps), so tiled
results are bit-identical to the single call (tests/kernels/test_threads.py).
"""
from __future__ import annotations

import numpy as np

# Parameter block indices (csrc/kernels.c enum)
P_N, P_H, P_W, P_C, P_OH, P_OW, P_OC, P_KH, P_KW, P_SH, P_SW, P_DH, P_DW, P_PT, P_PL, P_G, P_LDY, P_MC = range(18)
WK_MR = 4  # GEMM micro-tile rows: row ranges start at multiples of it where possible
# Below this much work per tile (multiply-adds or taps) a split costs more than it saves.
MIN_TILE_WORK = 1 << 18
# A call goes to a kernel pool (fast/shared.py) only with at least this much work: a
# pool job costs ~0.2 ms more than the same call on one thread (Pyodide, 2-core EPYC:
# a 3.6M multiply-add 1x1 conv took 0.21 ms on one thread and 0.40 ms as a pool job),
# so below ~4M multiply-adds (~0.4 ms) the split cannot win. The native thread pool
# (CPython) has no such cost and splits from MIN_TILE_WORK on.
POOL_MIN_WORK = 1 << 22
# A job whose input is already an image in the pool's memory (fast/shared.py: nothing is
# copied in, and nothing out when only pool kernels read its output) costs little more
# than the JS crossing: it is split from this much work on (SqueezeNet's 13x13 and 27x27
# expand 1x1 convs, 2.8M / 3M multiply-adds; ShuffleNet's 3.6M). Below, it runs there as
# one tile (no worker woken).
CHAINED_POOL_MIN_WORK = 1 << 20
# A depthwise tap costs about this many GEMM multiply-adds (Pyodide, relaxed SIMD: ShuffleNet's
# 28x28x68 3x3 depthwise, 0.48M taps, ~0.13 ms; its 3.6M multiply-add 1x1 convs ~0.19 ms): a
# depthwise call's work is its taps times this, so it splits when it takes as long as a GEMM that does.
DEPTHWISE_WORK_PER_TAP = 4


def parts_for(work: int, rows: int, threads: int) -> int:
    """How many tiles a call of `work` multiply-adds over `rows` output rows gets."""
    if threads <= 1:
        return 1
    return max(1, min(threads, rows, work // MIN_TILE_WORK))


def _ranges(total: int, parts: int, align: int = 1) -> list:
    """[start, end) ranges covering [0, total), `parts` of them (fewer if too small),
    boundaries on multiples of `align` except the last."""
    step = -(-total // parts)
    step = -(-step // align) * align
    return [(s, min(s + step, total)) for s in range(0, total, step)]


def is_direct_conv(p) -> bool:
    """wk_conv2d's direct path: 1x1, stride 1, unpadded, output size = input size."""
    return (p[P_KH] == 1 and p[P_KW] == 1 and p[P_SH] == 1 and p[P_SW] == 1 and p[P_PT] == 0
            and p[P_PL] == 0 and p[P_OH] == p[P_H] and p[P_OW] == p[P_W])


def window_tiles(p: np.ndarray, parts: int, direct: bool = False) -> list:
    """Tiles of a conv/depthwise/pool call with parameter block `p` (int32):
    [(parameter block, x offset in floats, y offset in floats)]."""
    n_img, h, w, c = (int(v) for v in p[P_N:P_C + 1])
    oh, ow, ldy = int(p[P_OH]), int(p[P_OW]), int(p[P_LDY])
    if parts <= 1:
        return [(p, 0, 0)]
    tiles = []
    if direct:
        for m0, m1 in _ranges(n_img * oh * ow, parts, WK_MR):
            q = p.copy()
            q[P_N], q[P_H], q[P_W], q[P_OH], q[P_OW] = 1, 1, m1 - m0, 1, m1 - m0
            tiles.append((q, m0 * c, m0 * ldy))
        return tiles
    for r0, r1 in _ranges(n_img * oh, parts):
        while r0 < r1:  # a range crossing images: one tile per image
            n, o0 = divmod(r0, oh)
            o1 = min(oh, o0 + (r1 - r0))
            q = p.copy()
            q[P_N], q[P_OH], q[P_PT] = 1, o1 - o0, int(p[P_PT]) - o0 * int(p[P_SH])
            tiles.append((q, n * h * w * c, (n * oh + o0) * ow * ldy))
            r0 += o1 - o0
    return tiles


def gemm_tiles(m: int, parts: int) -> list:
    """Row ranges of an M-row GEMM: [(m0, m1)]."""
    if parts <= 1:
        return [(0, m)]
    return _ranges(m, parts, WK_MR)
