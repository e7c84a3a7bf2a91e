/* Float32 in, float32 out kernels that compute in float64 exactly as the
 * numpy reference kernels do (py/webnn_core/ops), so the fast path gives the
 * reference's result bit for bit (issue 17: the transformer block's erf and
 * layerNormalization were its largest steps in Pyodide's numpy):
 *
 *   wk_erf         ops/elementwise.py erf(): the same polynomials, evaluated
 *                  by the same Horner steps, rounded once to float32. The one
 *                  difference is exp() (numpy calls libm's; this file has
 *                  fdlibm's, error < 1 ulp in float64), which changes a
 *                  float32 result only when the float64 value lies within an
 *                  ulp of a rounding boundary (tests/kernels/test_exact64.py).
 *   wk_layer_norm  ops/normalization.py layerNormalization over the last axis:
 *                  mean and variance summed in numpy's pairwise order
 *                  (8 accumulators per block of <= 128, halves above, chunks of
 *                  8192 = numpy's buffer size), then (x - mean) / sqrt(var + eps)
 *                  * scale + bias, each step one float64 operation: identical.
 *
 * Built into the same translation unit as kernels.c (no data, no stack
 * arrays: constants are literals, the 8 accumulators are scalars).
 */
#ifndef WK_EXACT64_H
#define WK_EXACT64_H

/* ------------------------------------------------------------------ exp -- */
/* fdlibm's e_exp.c for finite x in [-700, 700] (callers stay in [-16, -1]). */
WK_INLINE double wk_exp(double x) {
  const double ln2hi = 6.93147180369123816490e-01, ln2lo = 1.90821492927058770002e-10;
  const double invln2 = 1.44269504088896338700e+00;
  const double P1 = 1.66666666666666019037e-01, P2 = -2.77777777770155933842e-03,
               P3 = 6.61375632143793436117e-05, P4 = -1.65339022054652515390e-06,
               P5 = 4.13813679705723846039e-08;
  int k = (int)(invln2 * x + (x < 0 ? -0.5 : 0.5));
  double hi = x - k * ln2hi, lo = k * ln2lo;
  double r = hi - lo;
  double t = r * r;
  double c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  double y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
  union { double d; unsigned long long u; } s;
  s.u = (unsigned long long)(k + 1023) << 52;  /* 2^k, k in [-1022, 1023] */
  return y * s.d;
}

/* ------------------------------------------------------------------ erf -- */
#define WK_H(y, t, c) y = y * (t) + (c)

/* erf(a)/a as a polynomial in a*a, 0 <= a < 1 (ops/elementwise.py _ERF_SMALL). */
WK_INLINE double wk_erf_small(double a) {
  double t = a * a;
  double y = 9.423822307829187e-09;
  WK_H(y, t, -1.5185861651856368e-07);
  WK_H(y, t, 1.6309840283673751e-06);
  WK_H(y, t, -1.4913240121252891e-05);
  WK_H(y, t, 0.00012054677545219919);
  WK_H(y, t, -0.0008548304669340705);
  WK_H(y, t, 0.0052239771479031805);
  WK_H(y, t, -0.026866170585251002);
  WK_H(y, t, 0.11283791670565614);
  WK_H(y, t, -0.3761263890317364);
  WK_H(y, t, 1.1283791670955114);
  return a * y;
}

/* erfc(a) for 1 <= a <= 4 (ops/elementwise.py _ERFC_MID). */
WK_INLINE double wk_erfc_mid(double a) {
  double t = (2.0 * a - 5.0) / 3.0;
  double y = 2.5768241372740913e-09;
  WK_H(y, t, -8.08095520313291e-09);
  WK_H(y, t, 1.1843999988419566e-08);
  WK_H(y, t, -3.5948208271268435e-08);
  WK_H(y, t, 1.356931771843928e-07);
  WK_H(y, t, -3.978570730854833e-07);
  WK_H(y, t, 1.111081756338868e-06);
  WK_H(y, t, -3.138304667763868e-06);
  WK_H(y, t, 8.71282463378645e-06);
  WK_H(y, t, -2.3613995943694017e-05);
  WK_H(y, t, 6.257886100045314e-05);
  WK_H(y, t, -0.00016201037945244088);
  WK_H(y, t, 0.00040908495006201256);
  WK_H(y, t, -0.001005831694351589);
  WK_H(y, t, 0.00240364767256289);
  WK_H(y, t, -0.005570706154310446);
  WK_H(y, t, 0.012489373880316961);
  WK_H(y, t, -0.027005296665733366);
  WK_H(y, t, 0.05611049344495646);
  WK_H(y, t, -0.11152102018467608);
  WK_H(y, t, 0.21080636406114373);
  return wk_exp(-a * a) * y;
}
#undef WK_H

/* y[i] = erf(x[i]) for n floats. Beyond |x| = 4, 1 - erfc(|x|) < 1.6e-8 from 1,
 * under half a float32 ulp below 1 (2^-25), so the float32 result is exactly
 * +-1 (the reference's continued fraction gives the same); NaN stays NaN. */
WK_EXPORT void wk_erf(int n, const float *x, float *y) {
  for (int i = 0; i < n; i++) {
    double v = x[i];
    double a = __builtin_fabs(v);
    double r;
    if (a < 1.0) {
      r = wk_erf_small(a);
    } else if (a <= 4.0) {
      r = 1.0 - wk_erfc_mid(a);
    } else if (a > 4.0) {
      r = 1.0;
    } else {
      y[i] = x[i] + x[i];  /* NaN */
      continue;
    }
    y[i] = (float)__builtin_copysign(r, v);
  }
}

/* ---------------------------------------------------- layerNormalization -- */
/* numpy's pairwise sum (numpy/_core/src/umath/loops_utils.h.src) of x[i] - m
 * (sq = 0, m = 0: the plain sum) or of (x[i] - m)^2 (sq = 1), in float64. */
WK_INLINE double wk_term(const float *x, int i, double m, int sq) {
  double d = (double)x[i] - m;
  return sq ? d * d : d;
}

static double wk_pairwise(const float *x, int n, double m, int sq) {
  if (n < 8) {
    double res = 0.0;
    for (int i = 0; i < n; i++) res += wk_term(x, i, m, sq);
    return res;
  }
  if (n <= 128) {
    double r0 = wk_term(x, 0, m, sq), r1 = wk_term(x, 1, m, sq), r2 = wk_term(x, 2, m, sq),
           r3 = wk_term(x, 3, m, sq), r4 = wk_term(x, 4, m, sq), r5 = wk_term(x, 5, m, sq),
           r6 = wk_term(x, 6, m, sq), r7 = wk_term(x, 7, m, sq);
    int i = 8;
    for (; i < n - (n % 8); i += 8) {
      r0 += wk_term(x, i, m, sq); r1 += wk_term(x, i + 1, m, sq);
      r2 += wk_term(x, i + 2, m, sq); r3 += wk_term(x, i + 3, m, sq);
      r4 += wk_term(x, i + 4, m, sq); r5 += wk_term(x, i + 5, m, sq);
      r6 += wk_term(x, i + 6, m, sq); r7 += wk_term(x, i + 7, m, sq);
    }
    double res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7));
    for (; i < n; i++) res += wk_term(x, i, m, sq);
    return res;
  }
  int n2 = n / 2;
  n2 -= n2 % 8;
  return wk_pairwise(x, n2, m, sq) + wk_pairwise(x + n2, n - n2, m, sq);
}

/* numpy's add.reduce along a contiguous row: the identity 0.0 plus the pairwise
 * sum of each chunk of its 8192-element buffer. */
WK_INLINE double wk_row_sum(const float *x, int n, double m, int sq) {
  double acc = 0.0;
  for (int s = 0; s < n; s += 8192) acc += wk_pairwise(x + s, n - s < 8192 ? n - s : 8192, m, sq);
  return acc;
}

/* rows x n floats, normalized over each row of n: y = (x - mean) / sqrt(var + eps)
 * [* scale] [+ bias] (scale, bias: n floats or null). eps is the float32 epsilon. */
WK_EXPORT void wk_layer_norm(int rows, int n, const float *x, const float *scale, const float *bias, float *y,
                             float eps) {
  for (int r = 0; r < rows; r++) {
    const float *xr = x + (long)r * n;
    float *yr = y + (long)r * n;
    double mean = wk_row_sum(xr, n, 0.0, 0) / n;
    double var = wk_row_sum(xr, n, mean, 1) / n;
    double d = __builtin_sqrt(var + (double)eps);
    for (int i = 0; i < n; i++) {
      double v = ((double)xr[i] - mean) / d;
      if (scale) v = v * (double)scale[i];
      if (bias) v = v + (double)bias[i];
      yr[i] = (float)v;
    }
  }
}

#endif
