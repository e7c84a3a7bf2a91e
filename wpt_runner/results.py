"""Result records and the JSON results file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .manifest import Run

# Harness-level statuses: testharness.js's OK/ERROR/TIMEOUT/PRECONDITION_FAILED,
# plus CRASH when the page's renderer died.
HARNESS_OK = "OK"


@dataclass
class FileResult:
    run: Run
    status: str                      # harness status of the page
    message: str | None = None
    subtests: list = field(default_factory=list)   # [{name, status, message}]
    errors: list = field(default_factory=list)     # console errors / uncaught exceptions
    duration: float = 0.0
    # The polyfill's tally of where the page's gpu-context graphs ran (report-hook.js
    # gpuGraphs(): gpu / cpu graphs built, dispatchesGpu / dispatchesCpu, reasons), or None.
    backend: dict | None = None

    @property
    def url(self) -> str:
        return self.run.url

    @property
    def passed(self) -> int:
        return sum(1 for s in self.subtests if s["status"] == "PASS")

    @property
    def total(self) -> int:
        return len(self.subtests)

    @property
    def ok(self) -> bool:
        """The file passes: harness OK, at least one subtest, all subtests PASS."""
        return self.status == HARNESS_OK and self.total > 0 and self.passed == self.total

    def passing_names(self) -> set:
        return {s["name"] for s in self.subtests if s["status"] == "PASS"}

    def to_json(self) -> dict:
        return {
            "test": self.run.source,
            "global": self.run.scope,
            "variant": self.run.variant,
            "status": self.status,
            "message": self.message,
            "duration": round(self.duration, 3),
            "passed": self.passed,
            "total": self.total,
            "subtests": self.subtests,
            "errors": self.errors,
            **({"backend": self.backend} if self.backend is not None else {}),
        }

    @classmethod
    def from_json(cls, url: str, d: dict) -> "FileResult":
        run = Run(d["test"], d["global"], d.get("variant", ""), False)
        assert run.url == url, (run.url, url)
        return cls(run, d["status"], d.get("message"), list(d.get("subtests", [])),
                   list(d.get("errors", [])), d.get("duration", 0.0), d.get("backend"))


def totals(results) -> dict:
    files = len(results)
    return {
        "files": files,
        "files_ok": sum(1 for r in results if r.ok),
        "subtests": sum(r.total for r in results),
        "passed": sum(r.passed for r in results),
        "harness": _count(r.status for r in results),
        "subtest_status": _count(s["status"] for r in results for s in r.subtests),
    }


def backend_totals(results) -> dict | None:
    """Where the graphs of the pages that report it ran (None when no page does):
    pages, graphs built on the GPU / on the cpu fallback, dispatches of each,
    pages with any cpu graph, and the fallback reasons with their counts."""
    reported = [r for r in results if r.backend]
    if not reported:
        return None
    out = {"pages": len(reported), "gpu": 0, "cpu": 0, "dispatchesGpu": 0, "dispatchesCpu": 0,
           "pages_with_cpu": 0, "reasons": {}}
    for r in reported:
        b = r.backend
        for k in ("gpu", "cpu", "dispatchesGpu", "dispatchesCpu"):
            out[k] += int(b.get(k) or 0)
        if b.get("cpu") or b.get("dispatchesCpu"):
            out["pages_with_cpu"] += 1
        for reason, n in (b.get("reasons") or {}).items():
            out["reasons"][reason] = out["reasons"].get(reason, 0) + int(n)
    out["reasons"] = dict(sorted(out["reasons"].items(), key=lambda kv: (-kv[1], kv[0])))
    return out


def _count(values) -> dict:
    out = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def write_json(path: str, results, meta: dict) -> None:
    doc = {
        "meta": meta,
        "totals": totals(results),
        **({"backend": backend_totals(results)} if backend_totals(results) else {}),
        "results": {r.url: r.to_json() for r in results},
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")


def read_json(path: str) -> list:
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return [FileResult.from_json(url, d) for url, d in doc["results"].items()]


def read_json_with_meta(path: str):
    """(results, meta) of a file written by write_json."""
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    return [FileResult.from_json(url, d) for url, d in doc["results"].items()], dict(doc.get("meta") or {})


def merge(results) -> list:
    """The results of several runs (e.g. the chunks of a sharded run) as one, by URL;
    a URL present twice is an error (chunks are disjoint)."""
    by_url = {}
    for r in results:
        if r.url in by_url:
            raise ValueError(f"{r.url} is in more than one results file")
        by_url[r.url] = r
    return [by_url[u] for u in sorted(by_url)]


def merge_meta(a: dict, b: dict) -> dict:
    """Meta of merged runs: equal facts kept, durations added, the time span widened."""
    if not a:
        return dict(b)
    out = {k: v for k, v in a.items() if b.get(k) == v}
    if "duration_s" in a and "duration_s" in b:
        out["duration_s"] = round(a["duration_s"] + b["duration_s"], 1)
    if a.get("time_start") is not None and b.get("time_start") is not None:
        out["time_start"] = min(a["time_start"], b["time_start"])
        out["time_end"] = max(a.get("time_end") or 0, b.get("time_end") or 0)
    return out
