"""js/src/snapshot_pages.js: the engine snapshot's zero-page elision, run in Node.

Expectations come from the original bytes: what is kept must be exactly the
pages that are not all zeros, in order, the zero runs exactly the others, and
the round trip must give back the original bytes."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "js" / "src" / "snapshot_pages.js"
NODE = shutil.which("node")
PAGE = 4096

pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")

# Loads the module from its source (no package.json says "type": "module"), then
# for each case: elide (optionally from an unaligned view), restore, report.
DRIVER = r"""
const fs = require('fs');
(async () => {
  const src = fs.readFileSync(process.argv[1], 'utf8');
  const m = await import('data:text/javascript;base64,' + Buffer.from(src).toString('base64'));
  const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
  const out = [];
  for (const c of cases) {
    const raw = Buffer.from(c.hex, 'hex');
    let bytes;
    if (c.unaligned) {
      const buf = new Uint8Array(raw.length + 1);
      buf.set(raw, 1);
      bytes = buf.subarray(1);
    } else {
      bytes = new Uint8Array(raw.length);
      bytes.set(raw);
    }
    if (c.restoreOnly) {
      try {
        m.restoreZeroPages(bytes, c.zeroRuns, c.length);
        out.push({ error: null });
      } catch (e) {
        out.push({ error: String(e.message) });
      }
      continue;
    }
    const { kept, zeroRuns } = m.elideZeroPages(bytes);
    if (c.range) {  // a part of the image, into a buffer of garbage (or a new one)
      const [from, to, spare] = c.range;
      let into = null;
      if (spare !== null) {
        into = new Uint8Array(to - from + spare);
        into.fill(0xab);
      }
      const got = m.restoreZeroPages(kept, zeroRuns, bytes.length, { into, from, to });
      out.push({ range: Buffer.from(got).toString('hex') });
      continue;
    }
    const back = m.restoreZeroPages(kept, zeroRuns, bytes.length);
    out.push({ kept: Buffer.from(kept).toString('hex'), zeroRuns, back: Buffer.from(back).toString('hex'),
      pageSize: m.SNAPSHOT_PAGE_SIZE });
  }
  process.stdout.write(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
"""


def run(cases):
    proc = subprocess.run([NODE, "-e", DRIVER, str(MODULE)], input=json.dumps(cases), capture_output=True,
                          text=True, check=True, timeout=120)
    return json.loads(proc.stdout)


def page(fill: int | None = None, at: int | None = None, size: int = PAGE) -> bytes:
    """A page of zeros; with `at`, one byte `fill` at that offset; with only `fill`, all `fill`."""
    if fill is None:
        return bytes(size)
    if at is None:
        return bytes([fill]) * size
    b = bytearray(size)
    b[at] = fill
    return bytes(b)


def expected(raw: bytes):
    """Kept bytes and zero runs, worked out page by page from the original."""
    pages = [raw[i:i + PAGE] for i in range(0, len(raw), PAGE)]
    kept = b"".join(p for p in pages if any(p))
    runs = []
    for n, p in enumerate(pages):
        if any(p):
            continue
        if runs and runs[-1][0] + runs[-1][1] == n:
            runs[-1][1] += 1
        else:
            runs.append([n, 1])
    return kept, runs


CASES = {
    # zero page first and last, non-zero pages between (one with only its last byte set)
    "zero_at_both_ends": page() + page(7) + page() + page() + page(1, at=PAGE - 1) + page(3, at=0) + page(),
    "no_zero_pages": page(9) + page(1, at=100),
    "all_zero": page() * 5,
    "partial_last_page_nonzero": page() + page(5) + page(2, at=10, size=1000),
    "partial_last_page_zero": page(4) + page() + page(size=123),
    "shorter_than_a_page": page(6, at=3, size=50),
    "empty": b"",
}


@pytest.mark.parametrize("unaligned", [False, True], ids=["aligned", "unaligned"])
def test_round_trip_keeps_exactly_the_non_zero_pages(unaligned):
    names = list(CASES)
    results = run([{"hex": CASES[n].hex(), "unaligned": unaligned} for n in names])
    for name, got in zip(names, results):
        raw = CASES[name]
        kept, runs = expected(raw)
        assert got["pageSize"] == PAGE
        assert bytes.fromhex(got["back"]) == raw, name
        assert bytes.fromhex(got["kept"]) == kept, name
        assert got["zeroRuns"] == runs, name


def test_zero_pages_at_start_and_end_are_elided():
    raw = CASES["zero_at_both_ends"]
    (got,) = run([{"hex": raw.hex()}])
    assert got["zeroRuns"] == [[0, 1], [2, 2], [6, 1]]
    assert len(bytes.fromhex(got["kept"])) == 3 * PAGE


@pytest.mark.parametrize("kept_pages,zero_runs,length", [
    (1, [[0, 1]], 2 * PAGE - 1),           # kept bytes too short: the last page is missing
    (2, [[0, 1]], 2 * PAGE),               # a page left over
    (0, [[0, 1], [0, 1]], PAGE),           # runs overlap
    (0, [[1, 1], [0, 1]], 2 * PAGE),       # runs out of order
    (0, [[0, 3]], 2 * PAGE),               # run beyond the end
    (1, [[0, 0]], PAGE),                   # empty run
    (1, [[0.5, 1]], 2 * PAGE),             # not a page number
], ids=["truncated", "left_over", "overlap", "out_of_order", "beyond_end", "empty_run", "fraction"])
def test_malformed_lists_are_refused(kept_pages, zero_runs, length):
    (got,) = run([{"restoreOnly": True, "hex": page(1).hex() * kept_pages, "zeroRuns": zero_runs,
                   "length": length}])
    assert got["error"], got


@pytest.mark.parametrize("spare", [None, 0, 5], ids=["new_buffer", "into_exact", "into_larger"])
@pytest.mark.parametrize("name", ["zero_at_both_ends", "partial_last_page_zero", "no_zero_pages"])
def test_a_range_written_into_a_buffer(name, spare):
    """A restore writes Pyodide's memory straight from the kept pages: any range of the image,
    zero pages written as zeros over what the buffer held, the rest of the buffer untouched."""
    raw = CASES[name]
    ranges = [(0, len(raw)), (10, len(raw)), (PAGE + 1, len(raw) - 3), (0, 16), (len(raw), len(raw))]
    results = run([{"hex": raw.hex(), "range": [a, b, spare]} for a, b in ranges])
    for (a, b), got in zip(ranges, results):
        want = raw[a:b] + (b"\xab" * spare if spare else b"")
        assert bytes.fromhex(got["range"]) == want, (name, a, b)
