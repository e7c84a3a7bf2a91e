/* Packing a convolution filter straight from its OIHW layout (ONNX's, the
 * WebNN default "oihw") into wk_gemm's 8-column panels (issue 17 item 3:
 * build() of an NCHW ResNet50 in Pyodide spent most of its time in numpy's
 * OIHW -> OHWI transposing copy and in wk_pack_b's strided scalar loop).
 *
 * The GEMM's B is K x OG with K = HW * I in OHWI order: row kk = hw * I + i,
 * column o; element (o, i, hw) of the filter is at w[(o * I + i) * HW + hw].
 * Bp[(o / 8) * K * 8 + kk * 8 + o % 8], zero past OG: exactly what
 * wk_pack_b(K, OG, ohwi, 1, K, Bp) writes for the same filter in OHWI.
 * With HW = 1 (1x1 filters, or an OHWI filter passed as I = K) the rows are
 * contiguous and 8 x 4 blocks are transposed with vector shuffles.
 */
#ifndef WK_PACK_OIHW_H
#define WK_PACK_OIHW_H

/* Four consecutive values of each of 8 rows (src + r * ld) become four 8-float
 * panel rows, at d0, d0 + step, d0 + 2 * step, d0 + 3 * step. */
WK_INLINE void wk_transpose_8x4(const float *src, long ld, float *d0, long step) {
  const v4f r0 = vld(src), r1 = vld(src + ld), r2 = vld(src + 2 * ld), r3 = vld(src + 3 * ld),
            r4 = vld(src + 4 * ld), r5 = vld(src + 5 * ld), r6 = vld(src + 6 * ld), r7 = vld(src + 7 * ld);
  const v4f a0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5), a1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
  const v4f a2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5), a3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
  const v4f b0 = __builtin_shufflevector(r4, r5, 0, 4, 1, 5), b1 = __builtin_shufflevector(r4, r5, 2, 6, 3, 7);
  const v4f b2 = __builtin_shufflevector(r6, r7, 0, 4, 1, 5), b3 = __builtin_shufflevector(r6, r7, 2, 6, 3, 7);
  vst(d0, __builtin_shufflevector(a0, a2, 0, 1, 4, 5));
  vst(d0 + 4, __builtin_shufflevector(b0, b2, 0, 1, 4, 5));
  vst(d0 + step, __builtin_shufflevector(a0, a2, 2, 3, 6, 7));
  vst(d0 + step + 4, __builtin_shufflevector(b0, b2, 2, 3, 6, 7));
  vst(d0 + 2 * step, __builtin_shufflevector(a1, a3, 0, 1, 4, 5));
  vst(d0 + 2 * step + 4, __builtin_shufflevector(b1, b3, 0, 1, 4, 5));
  vst(d0 + 3 * step, __builtin_shufflevector(a1, a3, 2, 3, 6, 7));
  vst(d0 + 3 * step + 4, __builtin_shufflevector(b1, b3, 2, 3, 6, 7));
}

WK_EXPORT void wk_pack_oihw(int OG, int I, int HW, const float *w, float *Bp) {
  const int K = HW * I;
  for (int j = 0; j < OG; j += WK_NR) {
    const int nc = imin(OG - j, WK_NR);
    float *dst = Bp + j * K;
    const float *src = w + (long)j * K;
    int done = 0;  /* rows kk < done (HW == 1) or taps hw < done (HW > 1) are packed */
    if (nc == WK_NR && HW == 1) {
      for (; done + 4 <= K; done += 4) wk_transpose_8x4(src + done, K, dst + done * WK_NR, WK_NR);
    } else if (nc == WK_NR) {
      /* Per input channel i, its taps hw are contiguous in each row: 4 taps at a time. */
      for (; done + 4 <= HW; done += 4) {
        for (int i = 0; i < I; i++) {
          wk_transpose_8x4(src + (long)i * HW + done, K, dst + ((long)done * I + i) * WK_NR, (long)I * WK_NR);
        }
      }
    }
    /* The rest, element by element: kk = hw * I + i. */
    for (int kk = HW == 1 ? done : done * I; kk < K; kk++) {
      const int hw = kk / I, i = kk - hw * I;
      const float *s = src + (long)i * HW + hw;
      float *d = dst + kk * WK_NR;
      int r = 0;
      for (; r < nc; r++) d[r] = s[(long)r * K];
      for (; r < WK_NR; r++) d[r] = 0.0f;
    }
  }
}

#endif
