/* Portable 128-bit vector helpers (clang/GCC vector extensions).
 *
 * The same source compiles to wasm32+simd128 (v128 instructions: loads,
 * load32_splat, f32x4.mul/add, pmin/pmax from the selects below) and natively
 * (SSE on x86-64, NEON on arm64), so the native build that pytest checks
 * through ctypes runs the very arithmetic the browser runs: float32 multiplies
 * and adds in the same order, never contracted into FMAs (-ffp-contract=off).
 *
 * Rules for everything under csrc/, because the wasm module runs inside
 * Pyodide's linear memory: no static or global data (no data section), no
 * arrays on the stack and no dynamic vector lane indexing (either would use
 * the shadow stack, i.e. write to memory that belongs to Pyodide), no libc.
 * tools/build_kernels.py checks the wasm output for the first two.
 */
#ifndef WK_SIMD_H
#define WK_SIMD_H

typedef float v4f __attribute__((vector_size(16)));
typedef int v4i __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));
typedef float v2f __attribute__((vector_size(8)));
typedef long long v2l __attribute__((vector_size(16)));

/* Two float64 square roots (correctly rounded, as the scalar one). */
#if defined(__wasm_simd128__)
#define vsqrt2(v) __builtin_wasm_sqrt_f64x2(v)
#elif defined(__SSE2__)
#define vsqrt2(v) __builtin_ia32_sqrtpd(v)
#else
#define vsqrt2(v) ((v2d){__builtin_sqrt((v)[0]), __builtin_sqrt((v)[1])})
#endif
/* Unaligned, aliasing-safe views for loads and stores from float pointers. */
typedef float v4f_u __attribute__((vector_size(16), aligned(4), may_alias));
typedef double v2d_u __attribute__((vector_size(16), aligned(8), may_alias));

#define WK_INLINE static inline __attribute__((always_inline))
#define WK_EXPORT __attribute__((visibility("default"), used))

WK_INLINE v4f vld(const float *p) { return *(const v4f_u *)p; }
WK_INLINE void vst(float *p, v4f v) { *(v4f_u *)p = v; }
WK_INLINE v4f vsplat(float x) { return (v4f){x, x, x, x}; }
WK_INLINE v4f vzero(void) { return (v4f){0.0f, 0.0f, 0.0f, 0.0f}; }

/* acc + x * b. Plain builds (wasm simd128, native): a multiply then an add,
 * rounded twice, as numpy does. The relaxed-SIMD wasm build uses
 * f32x4.relaxed_madd, which engines run as one fused multiply-add where the
 * CPU has one (x86 FMA3, arm64), else as the same two roundings. */
#if defined(__wasm_relaxed_simd__)
#if __has_builtin(__builtin_wasm_relaxed_madd_f32x4)
#define vmadd(x, b, acc) __builtin_wasm_relaxed_madd_f32x4((x), (b), (acc))
#else
/* clang 14 only knows the proposal's prototype f32x4.fma (opcode 0xaf,
 * a + b * c); tools/build_kernels.py rewrites each one to the standard
 * f32x4.relaxed_madd (0x105, a * b + c), hence the operand order here. */
#define vmadd(x, b, acc) __builtin_wasm_fma_f32x4((x), (b), (acc))
#endif
#define WK_RELAXED 1
#else
#define vmadd(x, b, acc) ((acc) + (x) * (b))
#define WK_RELAXED 0
#endif

/* v < lo ? lo : v  (NaN stays NaN, as numpy's where/maximum keep it). wasm: f32x4.pmax. */
WK_INLINE v4f vmax_keepnan(v4f v, v4f lo) {
  v4i m = v < lo;
  return (v4f)(((v4i)lo & m) | ((v4i)v & ~m));
}
/* v > hi ? hi : v. wasm: f32x4.pmin. */
WK_INLINE v4f vmin_keepnan(v4f v, v4f hi) {
  v4i m = v > hi;
  return (v4f)(((v4i)hi & m) | ((v4i)v & ~m));
}
WK_INLINE v4f vclamp(v4f v, v4f lo, v4f hi) { return vmin_keepnan(vmax_keepnan(v, lo), hi); }

/* Running maximum that propagates NaN like numpy's max: take x when x > m or x is NaN. */
WK_INLINE v4f vmax_nan(v4f m, v4f x) {
  v4i t = (x > m) | (x != x);
  return (v4f)(((v4i)x & t) | ((v4i)m & ~t));
}
WK_INLINE float smax_nan(float m, float x) { return (x > m || x != x) ? x : m; }
WK_INLINE float sclamp(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* Copy / zero n floats (n small; explicit vector code, no memcpy/memset calls). */
WK_INLINE void copy_f32(float *d, const float *s, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    v4f a = vld(s + i), b = vld(s + i + 4);
    vst(d + i, a);
    vst(d + i + 4, b);
  }
  for (; i + 4 <= n; i += 4) vst(d + i, vld(s + i));
  for (; i < n; i++) d[i] = s[i];
}

WK_INLINE void zero_f32(float *d, int n) {
  int i = 0;
  v4f z = vzero();
  for (; i + 4 <= n; i += 4) vst(d + i, z);
  for (; i < n; i++) d[i] = 0.0f;
}

/* Store the first nc (< 8) lanes of the 8-wide row (v0, v1): constant lane
 * indices only, so nothing is spilled to the stack. */
WK_INLINE void store_partial8(float *c, v4f v0, v4f v1, int nc) {
  if (nc & 4) {
    vst(c, v0);
    c += 4;
    v0 = v1;
  }
  if (nc & 2) {
    c[0] = v0[0];
    c[1] = v0[1];
    c += 2;
    v0 = __builtin_shufflevector(v0, v0, 2, 3, 2, 3);
  }
  if (nc & 1) c[0] = v0[0];
}

WK_INLINE int imin(int a, int b) { return a < b ? a : b; }
WK_INLINE int imax(int a, int b) { return a > b ? a : b; }

#endif
