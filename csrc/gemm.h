/* GEMM: C[M, N] = clamp(A[M, K] . B[K, N] + bias, lo, hi).
 *
 * A is read in place (row stride lda): NHWC activations are already rows of
 * pixels by channels, so a 1x1 convolution is this GEMM with no copy. B is
 * packed once (at build() for constant weights) into panels of NR = 8
 * columns: panel p holds B[k][8p .. 8p+7] for k = 0..K-1, contiguous, zero
 * past N. The microkernel keeps a 4 x 8 block of C in eight registers and
 * walks K with one splat load per A element and two vector loads per B row
 * (11 of the 16 xmm registers V8 has on x64; a 6 x 8 block spills). It
 * accumulates in k order from zero, then adds the bias and clamps: in the
 * plain build that is exactly numpy's (non-BLAS) float32 matmul followed by
 * `+ bias`; the relaxed build may fuse each multiply-add (simd.h).
 *
 * Loops: B is split into column blocks of about WK_NCB_FLOATS floats (which
 * stay in L2); within a block, each 4-row strip of A (in L1) meets every
 * panel of the block. Measured against the two plain orders (rows outer:
 * SqueezeNet's conv10 streams its 2 MB of weights per strip; panels outer:
 * A streams per panel), it was as fast or faster on every SqueezeNet shape.
 *
 * Tails: rows past M point at the last valid row (they compute and store the
 * same values again), columns past N are computed on zero padding and not
 * stored.
 */
#ifndef WK_GEMM_H
#define WK_GEMM_H

#include "simd.h"

#define WK_NR 8
#define WK_MR 4
#ifndef WK_NCB_FLOATS
#define WK_NCB_FLOATS 32768
#endif

/* One 4 x 8 tile of C. `bias` may be null (no bias). */
WK_INLINE void ukernel_4x8(int mr, int nc, int K, const float *a, int lda, const float *b,
                           const float *bias, float *c, int ldc, v4f vlo, v4f vhi, int clamp) {
  const float *a0 = a;
  const float *a1 = mr > 1 ? a0 + lda : a0;
  const float *a2 = mr > 2 ? a1 + lda : a1;
  const float *a3 = mr > 3 ? a2 + lda : a2;
  float *c0 = c;
  float *c1 = mr > 1 ? c0 + ldc : c0;
  float *c2 = mr > 2 ? c1 + ldc : c1;
  float *c3 = mr > 3 ? c2 + ldc : c2;
  v4f acc00 = vzero(), acc01 = vzero();
  v4f acc10 = vzero(), acc11 = vzero();
  v4f acc20 = vzero(), acc21 = vzero();
  v4f acc30 = vzero(), acc31 = vzero();
  for (int k = 0; k < K; k++) {
    const v4f b0 = vld(b);
    const v4f b1 = vld(b + 4);
    b += 8;
    v4f x = vsplat(a0[k]);
    acc00 = vmadd(x, b0, acc00);
    acc01 = vmadd(x, b1, acc01);
    x = vsplat(a1[k]);
    acc10 = vmadd(x, b0, acc10);
    acc11 = vmadd(x, b1, acc11);
    x = vsplat(a2[k]);
    acc20 = vmadd(x, b0, acc20);
    acc21 = vmadd(x, b1, acc21);
    x = vsplat(a3[k]);
    acc30 = vmadd(x, b0, acc30);
    acc31 = vmadd(x, b1, acc31);
  }
  if (bias) {
    const v4f bb0 = vld(bias), bb1 = vld(bias + 4);
    acc00 += bb0; acc01 += bb1;
    acc10 += bb0; acc11 += bb1;
    acc20 += bb0; acc21 += bb1;
    acc30 += bb0; acc31 += bb1;
  }
  if (clamp) {
    acc00 = vclamp(acc00, vlo, vhi); acc01 = vclamp(acc01, vlo, vhi);
    acc10 = vclamp(acc10, vlo, vhi); acc11 = vclamp(acc11, vlo, vhi);
    acc20 = vclamp(acc20, vlo, vhi); acc21 = vclamp(acc21, vlo, vhi);
    acc30 = vclamp(acc30, vlo, vhi); acc31 = vclamp(acc31, vlo, vhi);
  }
  /* Aliased rows (mr < 4) hold the same values: any store order is fine. */
  if (nc == 8) {
    vst(c3, acc30); vst(c3 + 4, acc31);
    vst(c2, acc20); vst(c2 + 4, acc21);
    vst(c1, acc10); vst(c1 + 4, acc11);
    vst(c0, acc00); vst(c0 + 4, acc01);
  } else {
    store_partial8(c3, acc30, acc31, nc);
    store_partial8(c2, acc20, acc21, nc);
    store_partial8(c1, acc10, acc11, nc);
    store_partial8(c0, acc00, acc01, nc);
  }
}

/* A single row of A against four consecutive full panels (32 columns): the
 * GEMV case (M = 1: fully connected layers, 1x1 convolutions of a 1x1 image),
 * where the 4 x 8 tile would compute its one row four times over and leave
 * too few independent accumulators to hide the multiply-add latency. */
WK_INLINE void ukernel_1x32(int K, const float *a, const float *b, const float *bias, float *c,
                            v4f vlo, v4f vhi, int clamp) {
  const float *b0 = b, *b1 = b + 8 * K, *b2 = b + 16 * K, *b3 = b + 24 * K;
  v4f s0 = vzero(), s1 = vzero(), s2 = vzero(), s3 = vzero();
  v4f s4 = vzero(), s5 = vzero(), s6 = vzero(), s7 = vzero();
  for (int k = 0; k < K; k++) {
    const v4f x = vsplat(a[k]);
    s0 = vmadd(x, vld(b0), s0);
    s1 = vmadd(x, vld(b0 + 4), s1);
    s2 = vmadd(x, vld(b1), s2);
    s3 = vmadd(x, vld(b1 + 4), s3);
    s4 = vmadd(x, vld(b2), s4);
    s5 = vmadd(x, vld(b2 + 4), s5);
    s6 = vmadd(x, vld(b3), s6);
    s7 = vmadd(x, vld(b3 + 4), s7);
    b0 += 8; b1 += 8; b2 += 8; b3 += 8;
  }
  if (bias) {
    s0 += vld(bias); s1 += vld(bias + 4); s2 += vld(bias + 8); s3 += vld(bias + 12);
    s4 += vld(bias + 16); s5 += vld(bias + 20); s6 += vld(bias + 24); s7 += vld(bias + 28);
  }
  if (clamp) {
    s0 = vclamp(s0, vlo, vhi); s1 = vclamp(s1, vlo, vhi); s2 = vclamp(s2, vlo, vhi); s3 = vclamp(s3, vlo, vhi);
    s4 = vclamp(s4, vlo, vhi); s5 = vclamp(s5, vlo, vhi); s6 = vclamp(s6, vlo, vhi); s7 = vclamp(s7, vlo, vhi);
  }
  vst(c, s0); vst(c + 4, s1); vst(c + 8, s2); vst(c + 12, s3);
  vst(c + 16, s4); vst(c + 20, s5); vst(c + 24, s6); vst(c + 28, s7);
}

/* C[0:M, 0:N] for A rows (stride lda) and packed B panels (each K x 8). */
static void gemm_block(int M, int N, int K, const float *A, int lda, const float *Bp,
                       const float *bias, float *C, int ldc, v4f vlo, v4f vhi, int clamp) {
  int ncb = (WK_NCB_FLOATS / (K > 0 ? K : 1)) / WK_NR * WK_NR;
  if (ncb < WK_NR) ncb = WK_NR;
  for (int j0 = 0; j0 < N; j0 += ncb) {
    const int j1 = imin(N, j0 + ncb);
    for (int i = 0; i < M; i += WK_MR) {
      const int mr = imin(M - i, WK_MR);
      int j = j0;
      if (mr == 1) {
        for (; j + 4 * WK_NR <= j1; j += 4 * WK_NR) {
          ukernel_1x32(K, A + i * lda, Bp + j * K, bias ? bias + j : 0, C + i * ldc + j, vlo, vhi, clamp);
        }
      }
      for (; j < j1; j += WK_NR) {
        ukernel_4x8(mr, imin(N - j, WK_NR), K, A + i * lda, lda, Bp + j * K, bias ? bias + j : 0,
                    C + i * ldc + j, ldc, vlo, vhi, clamp);
      }
    }
  }
}

/* Rows per block of a direct (in place) A: about 256 KiB of A, in L2. */
WK_INLINE int gemm_rows_per_block(int K) {
  int mc = (64 * 1024) / (K > 0 ? K : 1);
  mc -= mc % WK_MR;
  return imax(mc, 4 * WK_MR);
}

static int clamp_needed(float lo, float hi) {
  /* lo = -inf and hi = +inf: no clamping at all. */
  return !(lo < -3.4e38f && hi > 3.4e38f);
}

#endif
