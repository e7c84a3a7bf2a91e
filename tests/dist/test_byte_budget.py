"""The first visit's bytes (tools/build.py's size report) stay within the budget written in
tools/byte-budget.toml. Which files a first visit fetches comes from the one list the build
bakes into the script (RUNTIME_MANIFEST.firstVisit, also dist/package.json
webnnPolyfill.firstVisit; tests/browser/test_first_visit.py checks the page fetches exactly
those); their sizes are what tools/serve.py sends: the precompressed copies in dist/."""
import gzip
import json
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DIST = ROOT / "dist"
sys.path.insert(0, str(ROOT / "tools"))
import build  # noqa: E402
import precompress  # noqa: E402


def first_visit_list():
    meta = DIST / "package.json"
    if not (DIST / "webnn-polyfill.js").exists() or not meta.exists():
        pytest.skip("dist/ is not built (run ./dev build)")
    listed = json.loads(meta.read_text())["webnnPolyfill"].get("firstVisit")
    assert listed, "dist/package.json has no webnnPolyfill.firstVisit: rebuild (./dev build)"
    return listed


def test_first_visit_within_the_byte_budget():
    budget = tomllib.loads(build.BUDGET.read_text())["first_visit"]
    rows = build.first_visit_sizes(DIST, first_visit_list())
    report = build.size_report(rows)
    gzip_total, brotli_total = sum(r[2] for r in rows), sum(r[3] for r in rows)
    assert brotli_total <= budget["brotli"], f"over the brotli budget ({budget['brotli']:,} bytes):\n{report}"
    assert gzip_total <= budget["gzip"], f"over the gzip budget ({budget['gzip']:,} bytes):\n{report}"


def test_the_list_is_the_one_baked_into_the_script():
    listed = first_visit_list()
    script = (DIST / "webnn-polyfill.js").read_text()
    # esbuild writes the manifest define as an object literal; its firstVisit array is JSON.
    start = script.index("firstVisit: [") + len("firstVisit: ")
    assert json.loads(_array(script, start)) == listed


def _array(text, start):
    depth, i = 0, start
    while True:
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        i += 1
        if depth == 0:
            return text[start:i]


def test_size_report_counts_what_is_sent(tmp_path):
    """The report's gzip / brotli columns are the sizes of the precompressed copies where the
    build wrote them, else the file's own; one of several alternatives counts at its largest."""
    text = ("let x = [" + ",".join(str(i % 89) for i in range(30000)) + "];\n").encode()
    (tmp_path / build.ENTRY_SCRIPT).write_bytes(text)
    (tmp_path / "a.wasm").write_bytes(b"\0asm" + bytes(range(256)) * 100)
    (tmp_path / "b.zip").write_bytes(bytes(range(256)) * 7)
    (tmp_path / "k1.wasm").write_bytes(b"\0asm" + b"\1" * 100)
    (tmp_path / "k2.wasm").write_bytes(b"\0asm" + b"\2" * 200)
    precompress.precompress(tmp_path, cache=tmp_path / "cache")
    rows = build.first_visit_sizes(tmp_path, ["a.wasm", "b.zip", ["k1.wasm", "k2.wasm"]])
    assert [r[0] for r in rows] == [build.ENTRY_SCRIPT, "a.wasm", "b.zip", "k2.wasm (largest of 2)"]
    raw = (tmp_path / build.ENTRY_SCRIPT).read_bytes()
    assert rows[0][1] == len(raw) and rows[0][2] == len(gzip.compress(raw, 9, mtime=0))
    assert rows[0][3] < rows[0][2] < rows[0][1] / 3
    assert rows[2][1:] == (7 * 256,) * 4  # no copies for an archive: sent as it is
    report = build.size_report(rows)
    for name, *sizes in rows:
        assert name in report
    assert report.splitlines()[-1].split()[1:] == [f"{sum(r[i] for r in rows):,}" for i in (1, 2, 3, 4)]
