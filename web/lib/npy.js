// Minimal .npy reader (format 1.0/2.0, little-endian, C order): enough for
// model weights. Returns {dtype, shape, data: TypedArray}.
const NPY_TYPES = { '<f4': Float32Array, '<f8': Float64Array, '<i4': Int32Array, '<i8': BigInt64Array, '|u1': Uint8Array, '|i1': Int8Array };

export function parseNpy(buffer) {
  const bytes = new Uint8Array(buffer);
  if (bytes[0] !== 0x93 || String.fromCharCode(...bytes.subarray(1, 6)) !== 'NUMPY') throw new Error('not a .npy file');
  const major = bytes[6];
  const view = new DataView(buffer);
  const headerLength = major === 1 ? view.getUint16(8, true) : view.getUint32(8, true);
  const offset = major === 1 ? 10 : 12;
  const header = new TextDecoder().decode(bytes.subarray(offset, offset + headerLength));
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error('Fortran-order .npy is not supported');
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const Ctor = NPY_TYPES[descr];
  if (!Ctor) throw new Error(`unsupported .npy dtype ${descr}`);
  const start = offset + headerLength;
  const count = shape.reduce((a, b) => a * b, 1);
  return { dtype: descr, shape, data: new Ctor(buffer.slice(start, start + count * Ctor.BYTES_PER_ELEMENT)) };
}

export async function fetchNpy(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  return parseNpy(await r.arrayBuffer());
}

// Fetch `${baseUrl}${name}.npy` for every name, a few at a time;
// onProgress(fraction) after each file. Returns {name: npy}.
export async function fetchNpyAll(baseUrl, names, onProgress = () => {}, concurrency = 8) {
  const weights = {};
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < names.length) {
      const name = names[next++];
      weights[name] = await fetchNpy(`${baseUrl}${name}.npy`);
      onProgress(++done / names.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, names.length) }, worker));
  return weights;
}
