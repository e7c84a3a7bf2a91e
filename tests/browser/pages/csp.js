// createContext() under the page's CSP: the result, or the error and how long it took.
const HANG = new Promise((_, reject) => setTimeout(() => reject(new Error('createContext() hangs')), 90000));

window.result = (async () => {
  const t0 = performance.now();
  try {
    const ctx = await Promise.race([navigator.ml.createContext(), HANG]);
    const b = new MLGraphBuilder(ctx);
    const x = b.input('x', { dataType: 'float32', shape: [2] });
    const g = await b.build({ y: b.relu(x) });
    const r = await ctx.compute(g, { x: new Float32Array([1, 2]) }, { y: new Float32Array(2) });
    return { y: Array.from(r.outputs.y) };
  } catch (e) {
    return { name: e.name, message: e.message, ms: performance.now() - t0 };
  }
})();
