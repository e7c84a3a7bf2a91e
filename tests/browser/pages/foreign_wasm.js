// Like webnn-samples' RNNoise: the page instantiates its own module, importing
// its own memory, while the polyfill's engine loads. Then a conv (a SIMD fast
// path) must still be right, compared with a direct loop here.
const PAGE_MODULE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0,
  2, 15, 1, 3, 101, 110, 118, 6, 109, 101, 109, 111, 114, 121, 2, 0, 1]);  // (import "env" "memory" (memory 1))
const original = { instantiate: WebAssembly.instantiate, instantiateStreaming: WebAssembly.instantiateStreaming };

function conv2dReference(x, w, [n, c, h, wd], [o, , kh, kw]) {
  const oh = h - kh + 1; const ow = wd - kw + 1;
  const y = new Float32Array(n * o * oh * ow);
  for (let b = 0; b < n; b++) for (let f = 0; f < o; f++) for (let i = 0; i < oh; i++) for (let j = 0; j < ow; j++) {
    let s = 0;
    for (let ch = 0; ch < c; ch++) for (let u = 0; u < kh; u++) for (let v = 0; v < kw; v++) {
      s += x[((b * c + ch) * h + i + u) * wd + j + v] * w[((f * c + ch) * kh + u) * kw + v];
    }
    y[((b * o + f) * oh + i) * ow + j] = s;
  }
  return y;
}

window.result = (async () => {
  try {
    let patched = false;
    let pageModules = 0;
    let loading = true;
    const pageLoop = (async () => {
      while (loading) {
        patched ||= WebAssembly.instantiate !== original.instantiate
          || WebAssembly.instantiateStreaming !== original.instantiateStreaming;
        await WebAssembly.instantiate(PAGE_MODULE, { env: { memory: new WebAssembly.Memory({ initial: 1 }) } });
        pageModules++;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const ctx = await navigator.ml.createContext();
    loading = false;
    await pageLoop;
    const shape = [1, 8, 9, 9]; const wshape = [16, 8, 3, 3];
    const x = Float32Array.from({ length: 8 * 81 }, (_, i) => ((i * 7) % 13) / 13 - 0.5);
    const w = Float32Array.from({ length: 16 * 8 * 9 }, (_, i) => ((i * 5) % 11) / 11 - 0.5);
    const expected = conv2dReference(x, w, shape, wshape);  // before compute() detaches x
    const b = new MLGraphBuilder(ctx);
    const xi = b.input('x', { dataType: 'float32', shape });
    const y = b.conv2d(xi, b.constant({ dataType: 'float32', shape: wshape }, w), { inputLayout: 'nchw' });
    const g = await b.build({ y });
    const r = await ctx.compute(g, { x }, { y: new Float32Array(16 * 49) });
    return {
      patched, pageModules, simd: webnnPolyfill.engineStats.simd,
      conv: Array.from(r.outputs.y), expected: Array.from(expected),
    };
  } catch (e) {
    return { error: String(e), stack: e.stack };
  }
})();
