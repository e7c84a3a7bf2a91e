/* webnn-kernels: float32 microkernels for the WebNN polyfill's hot ops.
 *
 * One translation unit, compiled twice by tools/build_kernels.py:
 *   - wasm32 + simd128 (dist/webnn-kernels.wasm), instantiated against
 *     Pyodide's own linear memory and called with numpy buffer addresses;
 *   - natively (.cache/kernels/libwebnn_kernels.so) for pytest via ctypes.
 * Every pointer is an address of a numpy buffer the caller keeps alive;
 * scratch space is a numpy allocation too. See simd.h for the rules.
 *
 * Layouts: activations NHWC (rows of channels; an output row stride `ldy`
 * lets a convolution write straight into a channel slice of a concat), GEMM
 * weights packed in 8-column panels (gemm.h), depthwise weights [KH*KW][C].
 */
#include "simd.h"
#include "gemm.h"
#include "exact64.h"
#include "pack_oihw.h"

#define WK_ABI_VERSION 4

WK_EXPORT int wk_abi_version(void) { return WK_ABI_VERSION; }

/* 1 when multiply-adds may be fused (the relaxed-SIMD build), else 0. */
WK_EXPORT int wk_fused_madd(void) { return WK_RELAXED; }

/* ---------------------------------------------------------------- GEMM -- */

/* C = clamp(A . B + bias): A is M x K (row stride lda), Bp packed panels
 * (see wk_pack_b), bias null or at least round_up(N, 8) floats, C row stride ldc. */
WK_EXPORT void wk_gemm(int M, int N, int K, const float *A, int lda, const float *Bp,
                       const float *bias, float *C, int ldc, float lo, float hi) {
  const v4f vlo = vsplat(lo), vhi = vsplat(hi);
  const int clamp = clamp_needed(lo, hi);
  const int mc = gemm_rows_per_block(K);
  for (int m0 = 0; m0 < M; m0 += mc) {
    gemm_block(imin(mc, M - m0), N, K, A + m0 * lda, lda, Bp, bias, C + m0 * ldc, ldc, vlo, vhi, clamp);
  }
}

/* Pack B (K x N, element (k, n) at B[k*sbk + n*sbn]) into 8-column panels:
 * Bp[(n / 8) * K * 8 + k * 8 + n % 8], zero past N. Bp holds round_up(N, 8) * K floats. */
WK_EXPORT void wk_pack_b(int K, int N, const float *B, int sbk, int sbn, float *Bp) {
  for (int j = 0; j < N; j += WK_NR) {
    const int nc = imin(N - j, WK_NR);
    float *dst = Bp + j * K;
    for (int k = 0; k < K; k++) {
      const float *src = B + k * sbk + j * sbn;
      if (nc == WK_NR && sbn == 1) {
        vst(dst, vld(src));
        vst(dst + 4, vld(src + 4));
      } else {
        int r = 0;
        for (; r < nc; r++) dst[r] = src[r * sbn];
        for (; r < WK_NR; r++) dst[r] = 0.0f;
      }
      dst += WK_NR;
    }
  }
}

/* ------------------------------------------------------------- conv2d -- */

/* Parameter block of wk_conv2d / wk_dwconv2d / pools (int32 each). */
enum {
  P_N, P_H, P_W, P_C,          /* input NHWC (C = all channels; row stride of x) */
  P_OH, P_OW, P_OC,            /* output */
  P_KH, P_KW, P_SH, P_SW, P_DH, P_DW, P_PT, P_PL,
  P_G,                         /* groups */
  P_LDY,                       /* output pixel stride in floats (>= OC) */
  P_MC,                        /* rows per im2col block (scratch holds P_MC * K floats) */
  P_COUNT
};

/* One im2col row: the KH x KW x IG window of output pixel (n, oh, ow), channels
 * [c0, c0 + IG), zero where it falls in the padding. */
WK_INLINE void im2col_row(float *dst, const float *x, int n, int oh, int ow, const int *p, int c0, int IG) {
  const int H = p[P_H], W = p[P_W], C = p[P_C];
  const int KH = p[P_KH], KW = p[P_KW], DH = p[P_DH], DW = p[P_DW];
  const int ih0 = oh * p[P_SH] - p[P_PT];
  const int iw0 = ow * p[P_SW] - p[P_PL];
  const int span = (KW - 1) * DW + 1;
  const int contiguous = DW == 1 && IG == C;
  for (int i = 0; i < KH; i++) {
    const int ih = ih0 + i * DH;
    if (ih < 0 || ih >= H) {
      zero_f32(dst, KW * IG);
      dst += KW * IG;
      continue;
    }
    const float *row = x + ((n * H + ih) * W) * C + c0;
    if (contiguous && iw0 >= 0 && iw0 + span <= W) {
      copy_f32(dst, row + iw0 * C, KW * IG);
      dst += KW * IG;
      continue;
    }
    for (int j = 0; j < KW; j++) {
      const int iw = iw0 + j * DW;
      if (iw < 0 || iw >= W) zero_f32(dst, IG);
      else copy_f32(dst, row + iw * C, IG);
      dst += IG;
    }
  }
}

/* Convolution as GEMM over NHWC x. Bp: per group g, the packed panels of the
 * (KH*KW*IG) x OG matrix W_g[k = (i*KW + j)*IG + ci][o] = w[g*OG + o, i, j, ci],
 * round_up(OG, 8) * K floats each; bias null or per group round_up(OG, 8) floats.
 * 1x1 stride-1 unpadded convolutions read x in place; the others gather P_MC
 * rows at a time into `scratch` (im2col), which stays in cache for the GEMM. */
WK_EXPORT void wk_conv2d(const int *p, const float *x, const float *Bp, const float *bias, float *y,
                         float *scratch, float lo, float hi) {
  const int N = p[P_N], H = p[P_H], W = p[P_W], C = p[P_C];
  const int OH = p[P_OH], OW = p[P_OW], OC = p[P_OC];
  const int KH = p[P_KH], KW = p[P_KW], G = p[P_G], LDY = p[P_LDY];
  const int IG = C / G, OG = OC / G, K = KH * KW * IG;
  const int NPG = (OG + WK_NR - 1) / WK_NR * WK_NR;
  const int M = N * OH * OW;
  const v4f vlo = vsplat(lo), vhi = vsplat(hi);
  const int clamp = clamp_needed(lo, hi);
  const int direct = KH == 1 && KW == 1 && p[P_SH] == 1 && p[P_SW] == 1 && p[P_PT] == 0 && p[P_PL] == 0 &&
                     OH == H && OW == W;
  if (direct) {
    const int mc = gemm_rows_per_block(K);
    for (int m0 = 0; m0 < M; m0 += mc) {
      const int rows = imin(mc, M - m0);
      for (int g = 0; g < G; g++) {
        gemm_block(rows, OG, K, x + m0 * C + g * IG, C, Bp + g * NPG * K, bias ? bias + g * NPG : 0,
                   y + m0 * LDY + g * OG, LDY, vlo, vhi, clamp);
      }
    }
    return;
  }
  const int mc = p[P_MC] > 0 ? p[P_MC] : 1;
  for (int m0 = 0; m0 < M; m0 += mc) {
    const int rows = imin(mc, M - m0);
    for (int g = 0; g < G; g++) {
      int n = m0 / (OH * OW), r = m0 % (OH * OW);
      int oh = r / OW, ow = r % OW;
      float *dst = scratch;
      for (int m = 0; m < rows; m++) {
        im2col_row(dst, x, n, oh, ow, p, g * IG, IG);
        dst += K;
        if (++ow == OW) {
          ow = 0;
          if (++oh == OH) { oh = 0; n++; }
        }
      }
      gemm_block(rows, OG, K, scratch, K, Bp + g * NPG * K, bias ? bias + g * NPG : 0,
                 y + m0 * LDY + g * OG, LDY, vlo, vhi, clamp);
    }
  }
}

/* ---------------------------------------------------- depthwise conv2d -- */

/* Depthwise convolution (groups = C, one output channel per input channel):
 * y[n, oh, ow, c] = clamp(sum over taps (i, j) in order of x * w[(i*KW + j)*C + c] + bias[c]).
 * Taps in the padding are skipped (they add exact zeros in the reference). */
WK_EXPORT void wk_dwconv2d(const int *p, const float *x, const float *w, const float *bias, float *y,
                           float lo, float hi) {
  const int N = p[P_N], H = p[P_H], W = p[P_W], C = p[P_C];
  const int OH = p[P_OH], OW = p[P_OW];
  const int KH = p[P_KH], KW = p[P_KW], SH = p[P_SH], SW = p[P_SW], DH = p[P_DH], DW = p[P_DW];
  const int PT = p[P_PT], PL = p[P_PL], LDY = p[P_LDY];
  const v4f vlo = vsplat(lo), vhi = vsplat(hi);
  const int clamp = clamp_needed(lo, hi);
  for (int n = 0; n < N; n++) {
    const float *xn = x + n * H * W * C;
    for (int oh = 0; oh < OH; oh++) {
      const int ih0 = oh * SH - PT;
      /* valid tap rows: 0 <= ih0 + i*DH < H */
      int i0 = 0, i1 = KH;
      while (i0 < KH && ih0 + i0 * DH < 0) i0++;
      while (i1 > i0 && ih0 + (i1 - 1) * DH >= H) i1--;
      for (int ow = 0; ow < OW; ow++) {
        const int iw0 = ow * SW - PL;
        int j0 = 0, j1 = KW;
        while (j0 < KW && iw0 + j0 * DW < 0) j0++;
        while (j1 > j0 && iw0 + (j1 - 1) * DW >= W) j1--;
        float *yp = y + ((n * OH + oh) * OW + ow) * LDY;
        int c = 0;
        for (; c + 16 <= C; c += 16) {
          v4f a0 = vzero(), a1 = vzero(), a2 = vzero(), a3 = vzero();
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            const float *wr = w + (i * KW) * C + c;
            for (int j = j0; j < j1; j++) {
              const float *xp = xr + (iw0 + j * DW) * C;
              const float *wp = wr + j * C;
              a0 = vmadd(vld(xp), vld(wp), a0);
              a1 = vmadd(vld(xp + 4), vld(wp + 4), a1);
              a2 = vmadd(vld(xp + 8), vld(wp + 8), a2);
              a3 = vmadd(vld(xp + 12), vld(wp + 12), a3);
            }
          }
          if (bias) {
            a0 += vld(bias + c); a1 += vld(bias + c + 4); a2 += vld(bias + c + 8); a3 += vld(bias + c + 12);
          }
          if (clamp) {
            a0 = vclamp(a0, vlo, vhi); a1 = vclamp(a1, vlo, vhi);
            a2 = vclamp(a2, vlo, vhi); a3 = vclamp(a3, vlo, vhi);
          }
          vst(yp + c, a0); vst(yp + c + 4, a1); vst(yp + c + 8, a2); vst(yp + c + 12, a3);
        }
        for (; c + 4 <= C; c += 4) {
          v4f a0 = vzero();
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            const float *wr = w + (i * KW) * C + c;
            for (int j = j0; j < j1; j++) a0 = vmadd(vld(xr + (iw0 + j * DW) * C), vld(wr + j * C), a0);
          }
          if (bias) a0 += vld(bias + c);
          if (clamp) a0 = vclamp(a0, vlo, vhi);
          vst(yp + c, a0);
        }
        for (; c < C; c++) {
          float a = 0.0f;
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            const float *wr = w + (i * KW) * C + c;
            for (int j = j0; j < j1; j++) a += xr[(iw0 + j * DW) * C] * wr[j * C];
          }
          if (bias) a += bias[c];
          if (clamp) a = sclamp(a, lo, hi);
          yp[c] = a;
        }
      }
    }
  }
}

/* ------------------------------------------------------------- pooling -- */

/* Tap range [t0, t1) of a window starting at `start` (step d) inside [0, size). */
WK_INLINE void tap_range(int start, int d, int k, int size, int *t0, int *t1) {
  int a = 0, b = k;
  while (a < k && start + a * d < 0) a++;
  while (b > a && start + (b - 1) * d >= size) b--;
  *t0 = a;
  *t1 = b;
}

/* maxPool2d, NHWC float32: windows skip the padding and the ceil-mode
 * overhang (both are -inf in the reference); NaN propagates. Uses P_KH..P_PL
 * as window, strides, dilations and the leading padding; P_LDY output stride. */
WK_EXPORT void wk_maxpool2d(const int *p, const float *x, float *y) {
  const int N = p[P_N], H = p[P_H], W = p[P_W], C = p[P_C];
  const int OH = p[P_OH], OW = p[P_OW];
  const int KH = p[P_KH], KW = p[P_KW], SH = p[P_SH], SW = p[P_SW], DH = p[P_DH], DW = p[P_DW];
  const int PT = p[P_PT], PL = p[P_PL], LDY = p[P_LDY];
  const float ninf = -__builtin_inff();
  const v4f vninf = vsplat(ninf);
  for (int n = 0; n < N; n++) {
    const float *xn = x + n * H * W * C;
    for (int oh = 0; oh < OH; oh++) {
      const int ih0 = oh * SH - PT;
      int i0, i1;
      tap_range(ih0, DH, KH, H, &i0, &i1);
      for (int ow = 0; ow < OW; ow++) {
        const int iw0 = ow * SW - PL;
        int j0, j1;
        tap_range(iw0, DW, KW, W, &j0, &j1);
        float *yp = y + ((n * OH + oh) * OW + ow) * LDY;
        int c = 0;
        for (; c + 16 <= C; c += 16) {
          v4f m0 = vninf, m1 = vninf, m2 = vninf, m3 = vninf;
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            for (int j = j0; j < j1; j++) {
              const float *xp = xr + (iw0 + j * DW) * C;
              m0 = vmax_nan(m0, vld(xp));
              m1 = vmax_nan(m1, vld(xp + 4));
              m2 = vmax_nan(m2, vld(xp + 8));
              m3 = vmax_nan(m3, vld(xp + 12));
            }
          }
          vst(yp + c, m0); vst(yp + c + 4, m1); vst(yp + c + 8, m2); vst(yp + c + 12, m3);
        }
        for (; c + 4 <= C; c += 4) {
          v4f m0 = vninf;
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            for (int j = j0; j < j1; j++) m0 = vmax_nan(m0, vld(xr + (iw0 + j * DW) * C));
          }
          vst(yp + c, m0);
        }
        for (; c < C; c++) {
          float m = ninf;
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            for (int j = j0; j < j1; j++) m = smax_nan(m, xr[(iw0 + j * DW) * C]);
          }
          yp[c] = m;
        }
      }
    }
  }
}

/* averagePool2d, NHWC float32: the sum of the taps inside the input, in
 * float64, divided by their count (padding and overhang excluded; an empty
 * window gives 0), rounded once to float32 - as the reference does. */
WK_EXPORT void wk_avgpool2d(const int *p, const float *x, float *y) {
  const int N = p[P_N], H = p[P_H], W = p[P_W], C = p[P_C];
  const int OH = p[P_OH], OW = p[P_OW];
  const int KH = p[P_KH], KW = p[P_KW], SH = p[P_SH], SW = p[P_SW], DH = p[P_DH], DW = p[P_DW];
  const int PT = p[P_PT], PL = p[P_PL], LDY = p[P_LDY];
  for (int n = 0; n < N; n++) {
    const float *xn = x + n * H * W * C;
    for (int oh = 0; oh < OH; oh++) {
      const int ih0 = oh * SH - PT;
      int i0, i1;
      tap_range(ih0, DH, KH, H, &i0, &i1);
      for (int ow = 0; ow < OW; ow++) {
        const int iw0 = ow * SW - PL;
        int j0, j1;
        tap_range(iw0, DW, KW, W, &j0, &j1);
        const int count = (i1 - i0) * (j1 - j0);
        const double denom = (double)(count > 0 ? count : 1);
        float *yp = y + ((n * OH + oh) * OW + ow) * LDY;
        int c = 0;
        for (; c + 4 <= C; c += 4) {
          v2d s0 = (v2d){0.0, 0.0}, s1 = (v2d){0.0, 0.0};
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            for (int j = j0; j < j1; j++) {
              const v4f v = vld(xr + (iw0 + j * DW) * C);
              s0 += __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1), v2d);
              s1 += __builtin_convertvector(__builtin_shufflevector(v, v, 2, 3), v2d);
            }
          }
          const v2d d = (v2d){denom, denom};
          const v2f r0 = __builtin_convertvector(s0 / d, v2f);
          const v2f r1 = __builtin_convertvector(s1 / d, v2f);
          vst(yp + c, __builtin_shufflevector(r0, r1, 0, 1, 2, 3));
        }
        for (; c < C; c++) {
          double s = 0.0;
          for (int i = i0; i < i1; i++) {
            const float *xr = xn + ((ih0 + i * DH) * W) * C + c;
            for (int j = j0; j < j1; j++) s += (double)xr[(iw0 + j * DW) * C];
          }
          yp[c] = (float)(s / denom);
        }
      }
    }
  }
}

/* ------------------------------------------------------- elementwise -- */

/* y[i] = clamp(x[i], lo, hi) for n floats (relu: lo = 0, hi = +inf); NaN stays NaN. */
WK_EXPORT void wk_clamp(int n, const float *x, float *y, float lo, float hi) {
  const v4f vlo = vsplat(lo), vhi = vsplat(hi);
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    v4f a = vld(x + i), b = vld(x + i + 4), c = vld(x + i + 8), d = vld(x + i + 12);
    vst(y + i, vclamp(a, vlo, vhi));
    vst(y + i + 4, vclamp(b, vlo, vhi));
    vst(y + i + 8, vclamp(c, vlo, vhi));
    vst(y + i + 12, vclamp(d, vlo, vhi));
  }
  for (; i + 4 <= n; i += 4) vst(y + i, vclamp(vld(x + i), vlo, vhi));
  for (; i < n; i++) y[i] = sclamp(x[i], lo, hi);
}

/* ------------------------------------------------- pow, binary arithmetic -- */

/* x ** (q / 4) in float64 (q a non-zero integer, |q| <= 16): the reference
 * (ops/elementwise.py) computes pow in float64 and rounds once to float32; here
 * x^(k + j/4) = x^k * (x^(1/4))^j from correctly rounded square roots and
 * products, a few float64 ulps from the exact power, so after the one rounding
 * to float32 the result is the reference's (a float64 error of ~1e-16 can only
 * change a float32 rounding that is that close to a tie). IEEE pow's special
 * cases for a fractional exponent: x = +-0 gives +0 (q > 0) or +inf, x = -inf
 * gives +inf or +0, other negative x NaN (sqrt's NaN), NaN stays NaN. */
WK_INLINE double powq_f64(double x, int q) {
  const int m = q < 0 ? -q : q;
  const int k = m >> 2, j = m & 3;
  double r;
  if (j == 0) {
    const double x2 = x * x;  /* exact for a float32 x */
    r = k == 1 ? x : k == 2 ? x2 : k == 3 ? x2 * x : x2 * x2;
  } else {
    if (x == 0.0) return q > 0 ? 0.0 : __builtin_inf();
    if (x == -__builtin_inf()) return q > 0 ? __builtin_inf() : 0.0;
    const double h = __builtin_sqrt(x);
    r = j == 2 ? h : j == 1 ? __builtin_sqrt(h) : h * __builtin_sqrt(h);
    for (int i = 0; i < k; i++) r *= x;
  }
  return q < 0 ? 1.0 / r : r;
}

/* powq_f64 on two lanes: the same float64 operations, the special cases by select. */
WK_INLINE v2d powq_v2d(v2d x, int q) {
  const int m = q < 0 ? -q : q;
  const int k = m >> 2, j = m & 3;
  const v2d one = (v2d){1.0, 1.0};
  v2d r;
  if (j == 0) {
    const v2d x2 = x * x;
    r = k == 1 ? x : k == 2 ? x2 : k == 3 ? x2 * x : x2 * x2;
    return q < 0 ? one / r : r;
  }
  const v2d h = vsqrt2(x);
  r = j == 2 ? h : j == 1 ? vsqrt2(h) : h * vsqrt2(h);
  for (int i = 0; i < k; i++) r *= x;
  if (q < 0) r = one / r;
  const double inf = __builtin_inf();
  const v2l zero = x == (v2d){0.0, 0.0}, ninf = x == (v2d){-inf, -inf};
  const v2d at_zero = q > 0 ? (v2d){0.0, 0.0} : (v2d){inf, inf};
  const v2d at_ninf = q > 0 ? (v2d){inf, inf} : (v2d){0.0, 0.0};
  r = (v2d)(((v2l)at_zero & zero) | ((v2l)r & ~zero));
  return (v2d)(((v2l)at_ninf & ninf) | ((v2l)r & ~ninf));
}

/* y[i] = float32(x[i] ** (q / 4)) for n floats (see powq_f64; |q| <= 16, q != 0). */
WK_EXPORT void wk_powq(int n, const float *x, float *y, int q) {
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    const v4f v = vld(x + i);
    const v2d lo = powq_v2d(__builtin_convertvector(__builtin_shufflevector(v, v, 0, 1), v2d), q);
    const v2d hi = powq_v2d(__builtin_convertvector(__builtin_shufflevector(v, v, 2, 3), v2d), q);
    const v2f a = __builtin_convertvector(lo, v2f), b = __builtin_convertvector(hi, v2f);
    vst(y + i, __builtin_shufflevector(a, b, 0, 1, 2, 3));
  }
  for (; i < n; i++) y[i] = (float)powq_f64((double)x[i], q);
}

/* y[i] = a[i * sa] OP b[i * sb] for n floats, sa / sb 1 (an array) or 0 (a
 * scalar broadcast): op 0 add, 1 sub, 2 mul, 3 div. One IEEE float32 operation
 * per element, exactly numpy's float32 ufunc. */
WK_EXPORT void wk_binary(int op, int n, const float *a, int sa, const float *b, int sb, float *y) {
  int i = 0;
  if (sa == 1 && sb == 1) {
    for (; i + 4 <= n; i += 4) {
      const v4f u = vld(a + i), v = vld(b + i);
      vst(y + i, op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v);
    }
  } else if (sa == 1) {
    const v4f v = vsplat(b[0]);
    for (; i + 4 <= n; i += 4) {
      const v4f u = vld(a + i);
      vst(y + i, op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v);
    }
  } else if (sb == 1) {
    const v4f u = vsplat(a[0]);
    for (; i + 4 <= n; i += 4) {
      const v4f v = vld(b + i);
      vst(y + i, op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v);
    }
  }
  for (; i < n; i++) {
    const float u = a[i * sa], v = b[i * sb];
    y[i] = op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v;
  }
}

/* ----------------------------------------------------- channel shuffle -- */

/* The channel shuffle of P pixels of C = g * cg channels (NHWC):
 * y[p][j * g + i] = x[p][i * cg + j]. A pure copy, any 4-byte element type. */
WK_EXPORT void wk_shuffle(int P, int g, int cg, const float *x, float *y) {
  const int C = g * cg;
  for (int p = 0; p < P; p++) {
    const float *xp = x + p * C;
    float *yp = y + p * C;
    for (int i = 0; i < g; i++) {
      const float *src = xp + i * cg;
      for (int j = 0; j < cg; j++) yp[j * g + i] = src[j];
    }
  }
}

/* ----------------------------------------------------------- transpose -- */

/* One 4 x 4 block: y[j][i] = x[i][j] (row strides ldx, ldy), four loads, eight shuffles, four stores. */
WK_INLINE void transpose4x4(const float *x, int ldx, float *y, int ldy) {
  const v4f r0 = vld(x), r1 = vld(x + ldx), r2 = vld(x + 2 * ldx), r3 = vld(x + 3 * ldx);
  const v4f t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);
  const v4f t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);
  const v4f t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);
  const v4f t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);
  vst(y, __builtin_shufflevector(t0, t2, 0, 1, 4, 5));
  vst(y + ldy, __builtin_shufflevector(t0, t2, 2, 3, 6, 7));
  vst(y + 2 * ldy, __builtin_shufflevector(t1, t3, 0, 1, 4, 5));
  vst(y + 3 * ldy, __builtin_shufflevector(t1, t3, 2, 3, 6, 7));
}

/* y = x^T for `batch` row-major rows x cols matrices (NCHW <-> NHWC of each
 * image: C x HW <-> HW x C): 4 x 4 SIMD blocks, scalar edges; a pure copy of
 * 4-byte elements (bit patterns, NaN payloads included, are moved unchanged). */
WK_EXPORT void wk_transpose(int batch, int rows, int cols, const float *x, float *y) {
  const int r4 = rows & ~3, c4 = cols & ~3;
  for (int b = 0; b < batch; b++) {
    const float *xb = x + b * rows * cols;
    float *yb = y + b * rows * cols;
    for (int i = 0; i < r4; i += 4) {
      for (int j = 0; j < c4; j += 4) transpose4x4(xb + i * cols + j, cols, yb + j * rows + i, rows);
      for (int j = c4; j < cols; j++) {
        for (int k = i; k < i + 4; k++) yb[j * rows + k] = xb[k * cols + j];
      }
    }
    for (int i = r4; i < rows; i++) {
      for (int j = 0; j < cols; j++) yb[j * rows + i] = xb[i * cols + j];
    }
  }
}

/* ----------------------------------------------------- channel average -- */

/* The mean over a window of k channels of every pixel, the channels padded
 * with p0 zeros in front (and as many behind as the window needs):
 *   y[p][c] = (float)((sum over j = 0 .. k-1 of x[p][c + j - p0]) / k),  c < CO,
 * summed in float64 with j ascending and the padding taps skipped (adding +0.0
 * to a sum that starts at +0.0 changes nothing), as averagePool2d's reference
 * sums a 1 x k window of the padded channels: LRN's denominator as ONNX
 * Runtime's WebNN EP builds it (pad -> transpose -> averagePool2d -> transpose). */
WK_EXPORT void wk_chanavg(int P, int C, int CO, int k, int p0, const float *x, float *y) {
  const double denom = (double)k;
  const v2d d = (v2d){denom, denom};
  const int lo = p0, hi = C - k + 1 + p0;  /* output channels [lo, hi) have every tap inside [0, C) */
  for (int p = 0; p < P; p++) {
    const float *xp = x + (long)p * C;
    float *yp = y + (long)p * CO;
    int c = 0;
    while (c < CO) {
      if (c >= lo && c + 4 <= hi && c + 4 <= CO) {
        v2d s0 = (v2d){0.0, 0.0}, s1 = (v2d){0.0, 0.0};
        const float *xc = xp + c - p0;
        for (int j = 0; j < k; j++) {
          const v4f v = vld(xc + j);
          s0 += __builtin_convertvector(__builtin_shufflevector(v, v, 0, 1), v2d);
          s1 += __builtin_convertvector(__builtin_shufflevector(v, v, 2, 3), v2d);
        }
        const v2f r0 = __builtin_convertvector(s0 / d, v2f);
        const v2f r1 = __builtin_convertvector(s1 / d, v2f);
        vst(yp + c, __builtin_shufflevector(r0, r1, 0, 1, 2, 3));
        c += 4;
        continue;
      }
      double acc = 0.0;
      for (int j = 0; j < k; j++) {
        const int i = c + j - p0;
        if (i >= 0 && i < C) acc += (double)xp[i];
      }
      yp[c] = (float)(acc / denom);
      c++;
    }
  }
}
