// Shared by every scope the browser tests cover (window, dedicated, shared and
// service workers): builds a small graph and runs it through dispatch/readTensor
// and through the deprecated compute(), returning what it saw.
async function runChecks() {
  const out = { scope: self.constructor.name, hasML: !!(self.navigator && navigator.ml) };
  const t0 = performance.now();
  const ctx = await navigator.ml.createContext({ deviceType: 'cpu' });
  out.contextMs = performance.now() - t0;
  out.snapshot = webnnPolyfill.engineStats.snapshot;
  out.phases = { ...webnnPolyfill.engineStats.phases };
  out.toString = Object.prototype.toString.call(ctx);
  const b = new MLGraphBuilder(ctx);
  const x = b.input('x', { dataType: 'float32', shape: [2, 2] });
  const w = b.constant({ dataType: 'float32', shape: [2, 2] }, new Float32Array([1, 2, 3, 4]));
  const y = b.relu(b.matmul(x, w));
  out.shapeFrozen = Object.isFrozen(y.shape) && Array.isArray(y.shape);
  const graph = await b.build({ y });
  const tx = await ctx.createTensor({ dataType: 'float32', shape: [2, 2], writable: true });
  const ty = await ctx.createTensor({ dataType: 'float32', shape: [2, 2], readable: true });
  ctx.writeTensor(tx, new Float32Array([1, -1, 0, 1]));
  ctx.dispatch(graph, { x: tx }, { y: ty });
  out.dispatch = Array.from(new Float32Array(await ctx.readTensor(ty)));
  const byob = new Float32Array(5).fill(7);
  await ctx.readTensor(ty, byob.subarray(1));
  out.byob = Array.from(byob);
  const inView = new Float32Array([2, 0, 0, 2]);
  const outView = new Float32Array(4);
  const r = await ctx.compute(graph, { x: inView }, { y: outView });
  out.compute = Array.from(r.outputs.y);
  out.computeDetached = inView.byteLength === 0 && outView.byteLength === 0;
  try {
    b.relu(x);
    out.afterBuild = 'no error';
  } catch (e) {
    out.afterBuild = e.name;
  }
  ctx.destroy();
  out.lost = (await ctx.lost).message;
  return out;
}
