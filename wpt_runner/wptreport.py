"""Results in wptrunner's ``wptreport.json`` format (the one wpt.fyi ingests).

The shape is the one ``tools/wptrunner/wptrunner/formatters/wptreport.py``
writes: ``{"run_info", "time_start", "time_end", "results": [...], "subsuites"}``
with one entry per test URL::

    {"test": "/webnn/x.https.any.html?cpu", "subsuite": "", "status": "OK",
     "message": null, "duration": <ms>, "subtests": [{"name", "status", "message"}]}

As in wptrunner, ``expected`` appears only where the result differs from the
expectation: a subtest the expectations file lists as passing that did not pass
gets ``"expected": "PASS"``; a page whose harness status is not OK gets
``"expected": "OK"``.  Times are milliseconds since the epoch.
"""

from __future__ import annotations

import json
import platform

from .results import HARNESS_OK


def run_info(meta: dict) -> dict:
    """wptrunner's run_info keys that wpt.fyi reads (product, browser_version, os, ...)."""
    browser = str(meta.get("browser") or "chromium")
    product, _, version = browser.partition(" ")
    product = product.split("/")[0]
    return {
        "product": product,
        "browser_version": version.split("/")[-1] if version else None,
        "os": platform.system().lower(),
        "os_version": platform.release(),
        "processor": platform.machine(),
        "headless": True,
        "webnn_polyfill": True,
        "wpt_commit": meta.get("commit"),
        "variants": meta.get("variants"),
    }


def build(results, meta: dict, expected: dict | None = None) -> dict:
    """The wptreport document for ``results`` (FileResults); ``expected`` is an
    expectations mapping ``{url: [subtests expected to PASS]}``, or None."""
    end = meta.get("time_end")
    start = meta.get("time_start")
    if start is None or end is None:
        end = end if end is not None else 0
        start = end - int(1000 * sum(r.duration for r in results))
    out = []
    for r in sorted(results, key=lambda r: r.url):
        want = set(expected.get(r.url, ())) if expected else set()
        subtests = []
        for s in r.subtests:
            sub = {"name": s["name"], "status": s["status"], "message": s.get("message")}
            if s["name"] in want and s["status"] != "PASS":
                sub["expected"] = "PASS"
            subtests.append(sub)
        entry = {"test": r.url, "subsuite": "", "subtests": subtests, "status": r.status,
                 "message": r.message, "duration": int(round(1000 * r.duration))}
        if r.status != HARNESS_OK:
            entry["expected"] = HARNESS_OK
        out.append(entry)
    return {"run_info": run_info(meta), "time_start": int(start), "time_end": int(end),
            "results": out, "subsuites": {}}


def write(path: str, results, meta: dict, expected: dict | None = None) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump(build(results, meta, expected), f, ensure_ascii=False)
        f.write("\n")
