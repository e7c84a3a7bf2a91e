"""Expectations: per test URL, the subtest names expected to PASS.

File format (JSON)::

    {
      "/webnn/conformance_tests/add.https.any.html?cpu": ["subtest name", ...],
      ...
    }
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field


def load(path: str) -> dict:
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        text = f.read()
    data = json.loads(text) if text.strip() else {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of url -> [subtest names]")
    return {url: list(names) for url, names in data.items()}


def dump(path: str, expectations: dict) -> None:
    doc = {url: sorted(set(names)) for url, names in sorted(expectations.items())}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)


@dataclass
class Comparison:
    regressions: list = field(default_factory=list)     # [(url, name)] expected PASS, ran, did not pass
    missing: list = field(default_factory=list)         # [(url, name)] expected PASS, never registered
    newly_passing: list = field(default_factory=list)   # [(url, name)] PASS, not expected

    @property
    def failed(self) -> bool:
        return bool(self.regressions or self.missing)


def compare(expectations: dict, results) -> Comparison:
    """Compare this run's results with the expectations.

    Only URLs that were run are checked.  An expected subtest the page never
    registered is ``missing``, apart from the ones that ran and did not pass:
    with another engine's expectations these are typically subtests the test
    file only defines where a feature exists (``typeof SharedArrayBuffer``,
    cross-origin isolation).  Both fail the comparison.
    """
    cmp = Comparison()
    for r in results:
        passing = r.passing_names()
        seen = {s["name"] for s in r.subtests}
        expected = set(expectations.get(r.url, ()))
        cmp.regressions += [(r.url, n) for n in sorted(expected - passing) if n in seen]
        cmp.missing += [(r.url, n) for n in sorted(expected - seen)]
        cmp.newly_passing += [(r.url, n) for n in sorted(passing - expected)]
    return cmp


def updated(expectations: dict, results) -> dict:
    """Merge: entries for the URLs that were run are replaced, others kept."""
    new = dict(expectations)
    for r in results:
        new.pop(r.url, None)
        names = r.passing_names()
        if names:
            new[r.url] = sorted(names)
    return new


def describe(cmp: Comparison, limit: int = 200) -> str:
    lines = []
    for title, items in (("Regressions (expected PASS, ran and did not pass)", cmp.regressions),
                         ("Not registered (expected PASS, the page never defined them: "
                          "a feature the test file checks for, or a harness error)", cmp.missing),
                         ("Newly passing (not in expectations)", cmp.newly_passing)):
        if not items:
            continue
        lines.append(f"{title}: {len(items)}")
        for url, name in items[:limit]:
            lines.append(f"  {url} :: {name}")
        if len(items) > limit:
            lines.append(f"  ... and {len(items) - limit} more")
    return "\n".join(lines)
