// Prototype of the browser kernel pool (docs/threads.md), under Node: the threads
// build of the kernels (atomics + bulk memory, shared memory imported) instantiated
// on ONE shared WebAssembly.Memory in this thread and in THREADS-1 worker_threads.
// One wk_conv2d call is run twice in that memory: as a single call, and as tiles
// (parameter blocks from webnn_core's fast/tiles.py) taken from an atomic counter
// by every thread, this one included. Reads a JSON job on stdin, prints both outputs.
import { readFileSync } from 'node:fs';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

const CTRL = 0;  // byte offset of the control words: [generation, next tile, done, tile count]

function runTiles(exports, i32, job, who) {
  // Take tiles until none are left; each is a whole kernel call on its slice of y.
  for (;;) {
    const t = Atomics.add(i32, CTRL / 4 + 1, 1);
    if (t >= job.tiles.length) break;
    const tile = job.tiles[t];
    exports.wk_conv2d(tile.p, job.x + tile.dx, job.w, job.bias, job.y2 + tile.dy, tile.scratch, -Infinity, Infinity);
    Atomics.add(i32, CTRL / 4 + 2, 1);
  }
}

if (!isMainThread) {
  const { memory, module, job } = workerData;
  const { exports } = new WebAssembly.Instance(module, { env: { memory } });
  const i32 = new Int32Array(memory.buffer);
  Atomics.wait(i32, CTRL / 4, 0);  // wait for generation 1
  runTiles(exports, i32, job, 'worker');
  parentPort.postMessage('done');
} else {
  const input = JSON.parse(readFileSync(0, 'utf8'));
  const module = new WebAssembly.Module(readFileSync(input.wasm));
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 16384, shared: true });
  const u8 = new Uint8Array(memory.buffer);
  let top = 4096;  // a bump allocator over the shared memory (16-byte aligned)
  const alloc = (n) => { const a = top; top += Math.ceil(n / 16) * 16; if (top > u8.length) throw new Error('out of memory'); return a; };
  const put = (b64) => { const bytes = Buffer.from(b64, 'base64'); const a = alloc(bytes.length); u8.set(bytes, a); return a; };
  const job = { x: put(input.x), w: put(input.w), bias: put(input.bias), y1: alloc(input.yBytes), y2: alloc(input.yBytes) };
  const p = put(input.p);
  const scratch = alloc(input.scratchBytes);
  job.tiles = input.tiles.map((t) => ({ p: put(t.p), dx: t.dx, dy: t.dy, scratch: alloc(input.scratchBytes) }));
  const { exports } = new WebAssembly.Instance(module, { env: { memory } });
  exports.wk_conv2d(p, job.x, job.w, job.bias, job.y1, scratch, -Infinity, Infinity);
  const workers = [];
  for (let i = 1; i < input.threads; i++) {
    workers.push(new Promise((resolve, reject) => {
      const w = new Worker(new URL(import.meta.url), { workerData: { memory, module, job } });
      w.on('message', resolve); w.on('error', reject);
    }));
  }
  const i32 = new Int32Array(memory.buffer);
  await new Promise((r) => setTimeout(r, 50));  // let the workers reach their wait
  Atomics.store(i32, CTRL / 4, 1);
  Atomics.notify(i32, CTRL / 4);
  runTiles(exports, i32, job, 'main');  // the calling thread takes its share
  while (Atomics.load(i32, CTRL / 4 + 2) < job.tiles.length) { /* spin: a window's main thread cannot wait */ }
  await Promise.all(workers);
  const out = (a) => Buffer.from(u8.slice(a, a + input.yBytes)).toString('base64');
  process.stdout.write(JSON.stringify({ single: out(job.y1), tiled: out(job.y2), shared: memory.buffer instanceof SharedArrayBuffer }));
}
