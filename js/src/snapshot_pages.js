// Zero-page elision for the engine snapshot's memory image (startup.js).
// About a third of Pyodide's memory image is 4 KiB pages of zeros (free heap):
// a snapshot keeps only the other pages and lists the zero ones as runs, so
// there is less to inflate, hash and read back from Cache Storage (which is
// what makes WebKit's start slow). No imports: tests/dist/test_snapshot_pages.py
// runs it in Node.

export const SNAPSHOT_PAGE_SIZE = 4096;

function pageIsZero(bytes, start, end) {
  // Whole 32-bit words where the view allows (a fresh buffer: always), bytes otherwise.
  if ((bytes.byteOffset + start) % 4 === 0 && (end - start) % 4 === 0) {
    const words = new Uint32Array(bytes.buffer, bytes.byteOffset + start, (end - start) / 4);
    for (let i = 0; i < words.length; i++) if (words[i] !== 0) return false;
    return true;
  }
  for (let i = start; i < end; i++) if (bytes[i] !== 0) return false;
  return true;
}

// -> { kept: the non-zero pages back to back, zeroRuns: [[firstPage, pageCount], ...] }
// (the last page may be shorter than SNAPSHOT_PAGE_SIZE).
export function elideZeroPages(bytes) {
  const pages = Math.ceil(bytes.length / SNAPSHOT_PAGE_SIZE);
  const zeroRuns = [];
  let keptLength = 0;
  for (let page = 0; page < pages; page++) {
    const start = page * SNAPSHOT_PAGE_SIZE;
    const end = Math.min(start + SNAPSHOT_PAGE_SIZE, bytes.length);
    if (!pageIsZero(bytes, start, end)) {
      keptLength += end - start;
      continue;
    }
    const last = zeroRuns[zeroRuns.length - 1];
    if (last && last[0] + last[1] === page) last[1]++;
    else zeroRuns.push([page, 1]);
  }
  const kept = new Uint8Array(keptLength);
  let at = 0;
  let page = 0;
  const copyUpTo = (endPage) => {
    const from = Math.min(page * SNAPSHOT_PAGE_SIZE, bytes.length);  // past the end after a last zero run
    const to = Math.min(endPage * SNAPSHOT_PAGE_SIZE, bytes.length);
    kept.set(bytes.subarray(from, to), at);
    at += to - from;
  };
  for (const [first, count] of zeroRuns) {
    copyUpTo(first);
    page = first + count;
  }
  copyUpTo(pages);
  return { kept, zeroRuns };
}

// The inverse: a new buffer of `length` bytes, all of them written (zero pages
// are zeros of a fresh buffer). Throws when the parts do not add up.
//
// With `into`: bytes [from, to) of the image (default: all of it) are written
// into `into` at index 0, the zero pages' bytes as zeros, and `into` is returned
// (a restore writes Pyodide's memory so, without an image-sized buffer between).
// `into: null` with a range: a new buffer of that range. Either way the whole
// list is checked first, so nothing is written when the parts do not add up.
export function restoreZeroPages(kept, zeroRuns, length, { into = undefined, from = 0, to = length } = {}) {
  checkZeroPages(kept.length, zeroRuns, length);
  if (!(from >= 0 && from <= to && to <= length)) throw new Error('snapshot memory range out of bounds');
  const fresh = !into;
  const out = into || new Uint8Array(to - from);
  if (out.length < to - from) throw new Error('snapshot memory image does not fit');
  // Image bytes [a, b) from `src` (kept bytes starting at image offset a), or zeros.
  const place = (a, b, src) => {
    const lo = Math.max(a, from);
    const hi = Math.min(b, to);
    if (hi <= lo) return;
    if (src) out.set(src.subarray(lo - a, hi - a), lo - from);
    else if (!fresh) out.fill(0, lo - from, hi - from);
  };
  let at = 0;
  let page = 0;
  const copyUpTo = (endPage) => {
    const a = Math.min(page * SNAPSHOT_PAGE_SIZE, length);
    const b = Math.min(endPage * SNAPSHOT_PAGE_SIZE, length);
    place(a, b, kept.subarray(at, at + (b - a)));
    at += b - a;
  };
  for (const [first, count] of zeroRuns) {
    copyUpTo(first);
    place(Math.min(first * SNAPSHOT_PAGE_SIZE, length), Math.min((first + count) * SNAPSHOT_PAGE_SIZE, length), null);
    page = first + count;
  }
  copyUpTo(Math.ceil(length / SNAPSHOT_PAGE_SIZE));
  return out;
}

// Throws unless `keptLength` kept bytes and `zeroRuns` make an image of `length` bytes.
export function checkZeroPages(keptLength, zeroRuns, length) {
  const pages = Math.ceil(length / SNAPSHOT_PAGE_SIZE);
  let at = 0;
  let page = 0;
  const keepUpTo = (endPage) => {
    at += Math.min(endPage * SNAPSHOT_PAGE_SIZE, length) - Math.min(page * SNAPSHOT_PAGE_SIZE, length);
    if (at > keptLength) throw new Error('snapshot memory image truncated');
  };
  for (const run of zeroRuns) {
    const [first, count] = run;
    if (!Number.isInteger(first) || !Number.isInteger(count) || first < page || count < 1 || first + count > pages) {
      throw new Error('snapshot zero-page list is malformed');
    }
    keepUpTo(first);
    page = first + count;
  }
  keepUpTo(pages);
  if (at !== keptLength) throw new Error('snapshot memory image has bytes left over');
}
