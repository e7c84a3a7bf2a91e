"""Markdown report: totals per directory x variant x global, then per file."""

from __future__ import annotations

from .manifest import SCOPES
from .results import totals


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "-"


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _group_label(group: str) -> str:
    """``webnn/conformance_tests`` -> conformance_tests; top-level files -> other."""
    parts = group.split("/")
    return "/".join(parts[1:]) if len(parts) > 1 else f"{group} (idlharness/other)"


def render(results, meta: dict | None = None) -> str:
    meta = meta or {}
    t = totals(results)
    out = ["# WebNN WPT results", ""]
    for key in ("wpt", "commit", "browser", "polyfill", "variants", "globals", "duration_s"):
        if key in meta:
            out.append(f"- {key}: `{meta[key]}`")
    out += [
        f"- files: {t['files_ok']}/{t['files']} fully passing",
        f"- subtests: {t['passed']}/{t['subtests']} passing ({_pct(t['passed'], t['subtests'])})",
        f"- harness statuses: {', '.join(f'{k} {v}' for k, v in t['harness'].items()) or '-'}",
        "",
        "## Totals by directory, variant and global",
        "",
        "| directory | variant | global | files passing | subtests passing | % |",
        "|---|---|---|---:|---:|---:|",
    ]
    order = {s: i for i, s in enumerate(SCOPES)}
    buckets = {}
    for r in results:
        key = (r.run.group, r.run.variant_label, r.run.scope)
        buckets.setdefault(key, []).append(r)
    for key in sorted(buckets, key=lambda k: (k[0], k[1], order.get(k[2], 99))):
        bt = totals(buckets[key])
        out.append(f"| {_md(_group_label(key[0]))} | {_md(key[1])} | {key[2]} | "
                   f"{bt['files_ok']}/{bt['files']} | {bt['passed']}/{bt['subtests']} | "
                   f"{_pct(bt['passed'], bt['subtests'])} |")

    out += ["", "## Files", "",
            "| test | result | harness | subtests passing | notes |",
            "|---|---|---|---:|---|"]
    for r in sorted(results, key=lambda r: r.url):
        note = r.message or (r.errors[0] if r.errors else "")
        if len(note) > 160:
            note = note[:157] + "..."
        out.append(f"| `{_md(r.url)}` | {'PASS' if r.ok else 'FAIL'} | {r.status} | "
                   f"{r.passed}/{r.total} | {_md(note)} |")
    return "\n".join(out) + "\n"


def write(path: str, results, meta: dict | None = None) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(results, meta))
