// Test data shared by the kernel pages (simd.html, kernel_pool.html): the same
// pseudo-random floats on every run, so outputs can be compared bit for bit.
export function seededRandom(seed = 12345) {
  return function rand(n, scale = 1) {
    const a = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      a[i] = ((seed >>> 8) / 16777216 * 2 - 1) * scale;
    }
    return a;
  };
}

export const size = (shape) => shape.reduce((a, b) => a * b, 1);
