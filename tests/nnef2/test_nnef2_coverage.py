"""The coverage table in docs/nnef.md names every standard operator, and its
counts are the code's: operators marked as mapped are in the WebNN mapping."""
from __future__ import annotations

import re
from pathlib import Path

from webnn_core.nnef2 import intrinsics, stdlib

DOC = (Path(__file__).resolve().parents[2] / "docs" / "nnef.md").read_text()


def all_ops():
    return [op.qualified for m in stdlib.MODULES for op in stdlib.module(m).operators]


def table_rows():
    section = DOC[DOC.index("## Coverage"):]
    section = section[:section.index("| construct |")]
    rows = {}
    for line in section.splitlines():
        if line.startswith("| `"):
            cells = line.split("|")
            names, status = cells[1], cells[2].strip()
            module = None
            for token in re.findall(r"`([^`]*)`", names):
                for word in token.split():
                    if "." in word:
                        module, word = word.split(".", 1)
                    rows[f"{module}.{word}"] = status
    return rows


def test_every_standard_operator_is_in_the_coverage_table():
    rows = table_rows()
    ops = all_ops()
    assert sorted(set(rows)) == sorted(ops)
    counts = re.search(r"\*\*(\d+)\*\* standard operators .*?\*\*(\d+)\*\* map directly.*?\*\*(\d+)\*\* run by "
                       r"inlining.*?\*\*(\d+)\*\* raise", DOC, re.S)
    total, mapped, composed, unsupported = map(int, counts.groups())
    assert total == len(ops) == 133
    assert mapped == sum(1 for o in ops if o in intrinsics.MAPPING)
    assert unsupported == sum(1 for o in ops if rows[o] == "❌")
    assert composed == total - mapped - unsupported


def test_table_status_agrees_with_the_mapping():
    rows = table_rows()
    for op, status in rows.items():
        if status == "❌":
            assert op not in intrinsics.MAPPING or op in ("math.div", "math.mod"), op
