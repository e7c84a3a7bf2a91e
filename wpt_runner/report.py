"""Reports: Markdown (totals per directory x variant x global, then per file) and
HTML (per file, failing subtests with messages, a filter box)."""

from __future__ import annotations

from .manifest import SCOPES
from .results import backend_totals, totals


def _pct(n: int, d: int) -> str:
    return f"{100.0 * n / d:.1f}%" if d else "-"


def _md(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _group_label(group: str) -> str:
    """``webnn/conformance_tests`` -> conformance_tests; top-level files -> other."""
    parts = group.split("/")
    return "/".join(parts[1:]) if len(parts) > 1 else f"{group} (idlharness/other)"


META_KEYS = ("wpt", "commit", "browser", "webgpu", "polyfill", "variants", "globals", "duration_s")


def backend_line(b: dict) -> str:
    """One sentence: where the gpu contexts' graphs ran (results.backend_totals)."""
    return (f"graphs built on the WebGPU backend {b['gpu']}, on the cpu fallback {b['cpu']}; "
            f"dispatches on the GPU {b['dispatchesGpu']}, on the cpu fallback {b['dispatchesCpu']}; "
            f"pages with a cpu-fallback graph {b['pages_with_cpu']}/{b['pages']}")


def page_backend(r) -> str:
    """A page's 'GPU/cpu' graph counts ('-' when it reported none)."""
    b = r.backend
    if not b:
        return "-"
    text = f"{b.get('gpu', 0)}/{b.get('cpu', 0)}"
    if b.get("available") is False:
        text += " (no WebGPU)"
    return text


def render(results, meta: dict | None = None) -> str:
    meta = meta or {}
    t = totals(results)
    b = backend_totals(results)
    out = ["# WebNN WPT results", ""]
    for key in META_KEYS:
        if key in meta:
            out.append(f"- {key}: `{meta[key]}`")
    out += [
        f"- files: {t['files_ok']}/{t['files']} fully passing",
        f"- subtests: {t['passed']}/{t['subtests']} passing ({_pct(t['passed'], t['subtests'])})",
        f"- harness statuses: {', '.join(f'{k} {v}' for k, v in t['harness'].items()) or '-'}",
    ]
    if b:
        out.append(f"- gpu contexts: {backend_line(b)}")
    out += [
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

    if b:
        out += ["", "## Where the gpu contexts' graphs ran", "",
                backend_line(b) + ".", "",
                "| cpu-fallback reason | graphs |", "|---|---:|"]
        out += [f"| {_md(reason)} | {n} |" for reason, n in b["reasons"].items()] or ["| (none) | 0 |"]
    out += ["", "## Files", "",
            "| test | result | harness | subtests passing | " + ("graphs GPU/cpu | " if b else "") + "notes |",
            "|---|---|---|---:|" + ("---:|" if b else "") + "---|"]
    for r in sorted(results, key=lambda r: r.url):
        note = r.message or (r.errors[0] if r.errors else "")
        if len(note) > 160:
            note = note[:157] + "..."
        out.append(f"| `{_md(r.url)}` | {'PASS' if r.ok else 'FAIL'} | {r.status} | "
                   f"{r.passed}/{r.total} | " + (f"{page_backend(r)} | " if b else "") + f"{_md(note)} |")
    return "\n".join(out) + "\n"


def write(path: str, results, meta: dict | None = None) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(results, meta))


# ------------------------------------------------------------------ HTML
_HTML_HEAD = """<!doctype html><meta charset=utf-8><title>WebNN WPT results</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 1.5em; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 3px 6px; text-align: left; vertical-align: top; }
td.n { text-align: right; white-space: nowrap; }
tr.fail > td:first-child { border-left: 4px solid #c33; }
tr.pass > td:first-child { border-left: 4px solid #3a3; }
code { font-size: 12px; }
details ul { margin: 4px 0; padding-left: 1.2em; }
.msg { color: #555; white-space: pre-wrap; }
#filter { width: 30em; padding: 4px; }
</style>
"""

_HTML_FILTER = """<script>
// Show only the rows whose text contains every word typed (case-insensitive);
// "fail" alone keeps the failing files.
const box = document.getElementById('filter');
const failedOnly = document.getElementById('failed');
function apply() {
  const words = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
  let shown = 0;
  for (const row of document.querySelectorAll('#files tbody tr')) {
    const text = row.textContent.toLowerCase();
    const ok = words.every((w) => text.includes(w)) && (!failedOnly.checked || row.classList.contains('fail'));
    row.hidden = !ok;
    shown += ok;
  }
  document.getElementById('shown').textContent = shown;
}
box.addEventListener('input', apply);
failedOnly.addEventListener('change', apply);
</script>
"""


def render_html(results, meta: dict | None = None) -> str:
    """One page: the run's facts and totals, then a row per test page (pass/fail counts,
    the failing subtests with their messages), with a filter box."""
    from html import escape

    meta = meta or {}
    t = totals(results)
    b = backend_totals(results)
    out = [_HTML_HEAD, "<h1>WebNN WPT results</h1>", "<ul>"]
    for key in META_KEYS:
        if key in meta:
            out.append(f"<li>{key}: <code>{escape(str(meta[key]))}</code></li>")
    if b:
        out.append(f"<li>gpu contexts: {escape(backend_line(b))}</li>")
    out += [f"<li>files: {t['files_ok']}/{t['files']} fully passing</li>",
            f"<li>subtests: {t['passed']}/{t['subtests']} passing ({_pct(t['passed'], t['subtests'])})</li>",
            "<li>harness statuses: "
            + escape(", ".join(f"{k} {v}" for k, v in t["harness"].items()) or "-") + "</li>",
            "</ul>",
            '<p><input id=filter type=search placeholder="filter: words in the URL, status or messages"> '
            '<label><input id=failed type=checkbox> failing only</label> '
            f'(<span id=shown>{len(results)}</span> shown)</p>',
            '<table id=files><thead><tr><th>test</th><th>result</th><th>harness</th>'
            '<th>passing</th>' + ('<th>graphs GPU/cpu</th>' if b else '') + '<th>failing subtests</th></tr></thead><tbody>']
    for r in sorted(results, key=lambda r: r.url):
        failing = [s for s in r.subtests if s["status"] != "PASS"]
        cell = []
        if r.message:
            cell.append(f'<div class=msg>{escape(r.message)}</div>')
        if failing:
            items = "".join(
                f"<li><b>{escape(s['status'])}</b> {escape(str(s['name']))}"
                + (f'<div class=msg>{escape(str(s["message"]))}</div>' if s.get("message") else "")
                + "</li>" for s in failing)
            cell.append(f"<details><summary>{len(failing)} not passing</summary><ul>{items}</ul></details>")
        if r.backend and r.backend.get("reasons"):
            why = "".join(f"<li>{escape(k)} ({n})</li>" for k, n in r.backend["reasons"].items())
            cell.append(f"<details><summary>graphs on the cpu fallback</summary><ul>{why}</ul></details>")
        if r.errors:
            errs = "".join(f"<li class=msg>{escape(e)}</li>" for e in r.errors[:10])
            cell.append(f"<details><summary>{len(r.errors)} page error(s)</summary><ul>{errs}</ul></details>")
        out.append(f'<tr class={"pass" if r.ok else "fail"}><td><code>{escape(r.url)}</code></td>'
                   f'<td>{"PASS" if r.ok else "FAIL"}</td><td>{escape(r.status)}</td>'
                   f'<td class=n>{r.passed}/{r.total}</td>'
                   + (f'<td class=n>{escape(page_backend(r))}</td>' if b else '')
                   + f'<td>{"".join(cell)}</td></tr>')
    out += ["</tbody></table>", _HTML_FILTER]
    return "\n".join(out)


def write_html(path: str, results, meta: dict | None = None) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(results, meta))
