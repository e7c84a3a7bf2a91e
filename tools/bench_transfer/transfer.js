// Bytes across the JS <-> engine boundary (tools/bench_transfer.py): medians of
// constant(), writeTensor(), readTensor() (new buffer and BYOB) and dispatch()
// of an identity graph, per size; and write+dispatch+read of one element.
const median = (a) => { const s = a.slice().sort((x, y) => x - y); return s[s.length >> 1]; };

async function timeIt(runs, fn) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

window.bench = async (sizesMiB, runs, tinyRuns, tinyRounds = 1) => {
  const ctx = await navigator.ml.createContext();
  const rows = [];
  for (const mib of sizesMiB) {
    const n = (mib * 1024 * 1024) / 4;
    const desc = { dataType: 'float32', shape: [n] };
    const data = new Float32Array(n).fill(1.5);
    const b = new MLGraphBuilder(ctx);
    const x = b.input('x', desc);
    const graph = await b.build({ y: b.identity(x) });
    const tin = await ctx.createTensor({ ...desc, writable: true, readable: true });
    const tout = await ctx.createTensor({ ...desc, readable: true });
    const target = new Float32Array(n);
    const row = { mib };
    row.constant = await timeIt(runs, () => { new MLGraphBuilder(ctx).constant(desc, data); });
    row.writeTensor = await timeIt(runs, () => ctx.writeTensor(tin, data));
    row.readTensor = await timeIt(runs, () => ctx.readTensor(tin));
    row.readTensorByob = await timeIt(runs, () => ctx.readTensor(tin, target));
    row.dispatch = await timeIt(runs, () => ctx.dispatch(graph, { x: tin }, { y: tout }));
    row.check = new Float32Array(await ctx.readTensor(tout))[n - 1];
    graph.destroy(); tin.destroy(); tout.destroy();
    rows.push(row);
  }
  // One element: write + dispatch + read (the per-call floor, issue 17).
  const b = new MLGraphBuilder(ctx);
  const g = await b.build({ y: b.relu(b.input('x', { dataType: 'float32', shape: [1] })) });
  const ti = await ctx.createTensor({ dataType: 'float32', shape: [1], writable: true });
  const to = await ctx.createTensor({ dataType: 'float32', shape: [1], readable: true });
  const one = new Float32Array([2]);
  // Rounds after the first show the floor once V8 has tiered the engines' wasm up.
  const tinyRoundsMs = [];
  // Through the timeline worker: the worker's own dispatch of each round's last 64 calls.
  const workerDispatchMs = [];
  for (let r = 0; r < tinyRounds; r++) {
    tinyRoundsMs.push(await timeIt(tinyRuns, async () => {
      ctx.writeTensor(ti, one);
      ctx.dispatch(g, { x: ti }, { y: to });
      await ctx.readTensor(to);
    }));
    const times = await webnnPolyfill.engineStats.timeline.dispatchTimes();
    if (times.length) workerDispatchMs.push(median(times.map(([start, end]) => end - start)));
  }
  const spins = await webnnPolyfill.engineStats.timeline.spins();
  return { rows, tinyMs: tinyRoundsMs[0], tinyRoundsMs, workerDispatchMs, spins, pingPongMs: await pingPong(1000),
    crossOriginIsolated: self.crossOriginIsolated, userAgent: navigator.userAgent };
};

// The floor under any call through a worker: a bare page -> worker -> page round trip of a
// small array (a worker that only echoes), median and minimum of `runs` after 200 untimed.
async function pingPong(runs) {
  const url = URL.createObjectURL(new Blob(['onmessage = (e) => postMessage(e.data);']));
  const worker = new Worker(url);
  const once = () => new Promise((resolve) => { worker.onmessage = resolve; worker.postMessage([1, 2, 3]); });
  for (let i = 0; i < 200; i++) await once();
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await once();
    times.push(performance.now() - t0);
  }
  worker.terminate();
  URL.revokeObjectURL(url);
  return { median: median(times), min: Math.min(...times) };
}
