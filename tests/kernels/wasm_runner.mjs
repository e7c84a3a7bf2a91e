// Runs dist/webnn-kernels.wasm under Node for the CPython tests: one JSON
// request per line on stdin, one JSON reply per line on stdout.
//   request: {fn, args: [number | {buf: i}], bufs: [{data: base64, bytes, out}]}
//   reply:   {outs: [base64 | null]}  or  {error}
// Buffers are copied into a fresh region of the module's memory (imported,
// like Pyodide's), the export is called with their addresses, and buffers
// marked `out` are copied back.
import fs from 'fs';
import readline from 'readline';

const wasmPath = process.argv[2];
const memory = new WebAssembly.Memory({ initial: 256 });
const { instance } = await WebAssembly.instantiate(fs.readFileSync(wasmPath), { env: { memory } });
const exports = instance.exports;
const BASE = 1 << 16;  // leave page 0 alone, as Pyodide's memory would have data there

function decodeNumber(v) {
  if (v === 'inf') return Infinity;
  if (v === '-inf') return -Infinity;
  if (v === 'nan') return NaN;
  return v;
}

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
  let reply;
  try {
    const req = JSON.parse(line);
    let top = BASE;
    const addrs = [];
    const total = req.bufs.reduce((s, b) => s + b.bytes + 64, BASE);
    const need = Math.ceil(total / 65536) - memory.buffer.byteLength / 65536;
    if (need > 0) memory.grow(need);
    for (const b of req.bufs) {
      const addr = top;
      top += Math.ceil((b.bytes + 1) / 16) * 16 + 16;
      const dst = new Uint8Array(memory.buffer, addr, b.bytes);
      if (b.data) dst.set(Buffer.from(b.data, 'base64'));
      else dst.fill(0xff);  // scratch: garbage, as a real allocation would hold
      addrs.push(addr);
    }
    const args = req.args.map((a) => (a !== null && typeof a === 'object' ? addrs[a.buf] : decodeNumber(a)));
    const fn = exports[req.fn];
    if (typeof fn !== 'function') throw new Error(`no export ${req.fn}`);
    fn(...args);
    reply = {
      outs: req.bufs.map((b, i) => (b.out
        ? Buffer.from(new Uint8Array(memory.buffer, addrs[i], b.bytes)).toString('base64') : null)),
    };
  } catch (e) {
    reply = { error: String(e && e.stack ? e.stack : e) };
  }
  process.stdout.write(JSON.stringify(reply) + '\n');
}
