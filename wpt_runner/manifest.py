"""Test discovery and ``// META:`` parsing.

A *source* is a test file in the tree (``X.any.js`` or ``X.window.js``).  Each
source expands into one *run* per (global scope, variant): a page URL that the
browser loads, e.g. ``/webnn/conformance_tests/add.https.any.worker.html?cpu``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

# Global scopes a run can execute in, in report order.
SCOPES = ("window", "dedicatedworker", "sharedworker", "serviceworker")

# Wrapper suffix (replacing ``.any.js``) for each scope.
ANY_SUFFIX = {
    "window": ".any.html",
    "dedicatedworker": ".any.worker.html",
    "sharedworker": ".any.sharedworker.html",
    "serviceworker": ".any.serviceworker.html",
}

# What the names accepted in ``// META: global=`` and ``--globals`` stand for.
GLOBAL_ALIASES = {
    "window": {"window"},
    "worker": {"dedicatedworker", "sharedworker", "serviceworker"},
    "dedicatedworker": {"dedicatedworker"},
    "sharedworker": {"sharedworker"},
    "serviceworker": {"serviceworker"},
}
DEFAULT_ANY_GLOBALS = frozenset({"window", "dedicatedworker"})

DEVICES = ("cpu", "gpu", "npu")
LONG_TIMEOUT_MULTIPLIER = 5

_META_RE = re.compile(r"^//\s*META:\s*(\w[\w-]*)\s*=\s*(.*?)\s*$")


@dataclass
class Meta:
    globals: frozenset = DEFAULT_ANY_GLOBALS
    variants: list = field(default_factory=list)
    scripts: list = field(default_factory=list)
    timeout: str = "normal"  # or "long"
    title: str | None = None
    unknown_globals: list = field(default_factory=list)


def parse_meta(text: str) -> Meta:
    """Parse the leading ``// META: key=value`` comment block of a test file.

    Like WPT, only the comment block at the very top is considered; parsing
    stops at the first line that is neither blank nor a ``//`` comment.
    """
    meta = Meta()
    global_spec = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("//"):
            break
        m = _META_RE.match(stripped)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        if key == "global":
            global_spec = value
        elif key == "variant":
            meta.variants.append(normalize_variant(value))
        elif key == "script":
            meta.scripts.append(value)
        elif key == "timeout":
            meta.timeout = "long" if value == "long" else "normal"
        elif key == "title":
            meta.title = value
    if global_spec is not None:
        meta.globals, meta.unknown_globals = parse_global_spec(global_spec)
    return meta


def parse_global_spec(spec: str):
    """``window,worker,!sharedworker`` -> ({scopes}, [ignored names])."""
    include, exclude, unknown = set(), set(), []
    for raw in spec.split(","):
        name = raw.strip()
        if not name:
            continue
        target = include
        if name.startswith("!"):
            target, name = exclude, name[1:]
        if name in GLOBAL_ALIASES:
            target |= GLOBAL_ALIASES[name]
        else:
            # shadowrealm, jsshell, *-module ...: not supported by this runner.
            unknown.append(name)
    if not include and exclude:
        include = set(DEFAULT_ANY_GLOBALS)
    return frozenset(include - exclude), unknown


def parse_scope_list(spec: str) -> frozenset:
    """Parse ``--globals`` (``window,worker`` etc.)."""
    scopes = set()
    for raw in spec.split(","):
        name = raw.strip()
        if not name:
            continue
        if name not in GLOBAL_ALIASES:
            raise ValueError(f"unknown global {name!r}; expected one of "
                             f"{', '.join(sorted(GLOBAL_ALIASES))}")
        scopes |= GLOBAL_ALIASES[name]
    return frozenset(scopes)


def normalize_variant(value: str) -> str:
    value = value.strip()
    if value and not value.startswith(("?", "#")):
        value = "?" + value
    return value


def variant_device(variant: str) -> str | None:
    """The device a variant selects: ``?cpu`` -> cpu, ``?op=add&device=gpu`` -> gpu."""
    if not variant:
        return None
    params = parse_qsl(variant.lstrip("?#"), keep_blank_values=True)
    for key, value in params:
        if key == "device" and value:
            return value
    for key, value in params:
        if key in DEVICES and value == "":
            return key
    return None


def variant_label(variant: str) -> str:
    dev = variant_device(variant)
    if dev:
        return dev
    return variant.lstrip("?#") or "default"


@dataclass(frozen=True)
class Run:
    """One page load: a source file in one scope with one variant."""
    source: str          # tree-relative path, e.g. webnn/foo.https.any.js
    scope: str           # window | dedicatedworker | sharedworker | serviceworker
    variant: str         # "" or "?cpu" ...
    long: bool

    @property
    def url(self) -> str:
        return "/" + wrapper_path(self.source, self.scope) + self.variant

    @property
    def group(self) -> str:
        return os.path.dirname(self.source) or "."

    @property
    def variant_label(self) -> str:
        return variant_label(self.variant)

    def timeout(self, base: float) -> float:
        return base * (LONG_TIMEOUT_MULTIPLIER if self.long else 1)


def wrapper_path(source: str, scope: str) -> str:
    if source.endswith(".any.js"):
        return source[: -len(".any.js")] + ANY_SUFFIX[scope]
    if source.endswith(".window.js"):
        return source[: -len(".js")] + ".html"
    raise ValueError(f"not a wrapped test source: {source}")


def is_test_source(name: str) -> bool:
    return name.endswith(".any.js") or name.endswith(".window.js")


def discover_sources(root: str, dirs) -> list:
    """Tree-relative paths of all test sources under ``root/<dir>`` for each dir.

    ``resources``/``support`` directories and dot-dirs are skipped.
    """
    found = []
    for d in dirs:
        base = os.path.join(root, d)
        if os.path.isfile(base) and is_test_source(base):
            found.append(d.replace(os.sep, "/"))
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(n for n in dirnames
                                 if n not in ("resources", "support") and not n.startswith("."))
            for fn in sorted(filenames):
                if is_test_source(fn):
                    rel = os.path.relpath(os.path.join(dirpath, fn), root)
                    found.append(rel.replace(os.sep, "/"))
    return sorted(set(found))


def split_patterns(values) -> list:
    out = []
    for v in values or ():
        out.extend(p.strip() for p in v.split(",") if p.strip())
    return out


def matches_filter(run: Run, patterns) -> bool:
    """Globs match against the source path, its URL-style path and the run URL.

    A pattern without glob characters also matches as a directory prefix.
    """
    if not patterns:
        return True
    candidates = (run.source, "/" + run.source, run.url, run.url.split("?")[0])
    for pat in patterns:
        for c in candidates:
            if fnmatch.fnmatchcase(c, pat):
                return True
        if not any(ch in pat for ch in "*?["):
            p = pat.strip("/")
            if run.source == p or run.source.startswith(p + "/"):
                return True
    return False


def variant_selected(variant: str, devices) -> bool:
    """Variants naming a device run only when that device was asked for."""
    if devices is None:
        return True
    dev = variant_device(variant)
    return dev is None or dev in devices


def expand_runs(root: str, sources, scopes=None, devices=None, patterns=None) -> list:
    """Expand test sources into the list of runs, applying all selections."""
    runs = []
    for source in sources:
        with open(os.path.join(root, source), encoding="utf-8", errors="replace") as f:
            meta = parse_meta(f.read())
        if source.endswith(".window.js"):
            file_scopes = ["window"]
        else:
            file_scopes = [s for s in SCOPES if s in meta.globals]
        for scope in file_scopes:
            if scopes is not None and scope not in scopes:
                continue
            for variant in (meta.variants or [""]):
                if not variant_selected(variant, devices):
                    continue
                run = Run(source, scope, variant, meta.timeout == "long")
                if matches_filter(run, patterns):
                    runs.append(run)
    return runs


# Sharding the way wptrunner does (testloader.py's HashChunker): a run belongs
# to chunk N of M when md5(key) % M == N - 1, with the key the test file's
# tree-relative path ("hash", wptrunner's PathHashChunker: all pages of one file
# in one chunk) or the page URL ("id_hash", IDHashChunker).  wptrunner's
# default for M > 1, dir_hash, is not offered: webnn/ has three directories.
CHUNK_TYPES = ("hash", "id_hash")


def chunk_key(run: Run, chunk_type: str) -> str:
    if chunk_type == "hash":
        return run.source
    if chunk_type == "id_hash":
        return run.url
    raise ValueError(f"unknown chunk type {chunk_type!r} (one of {', '.join(CHUNK_TYPES)})")


def in_chunk(run: Run, this_chunk: int, total_chunks: int, chunk_type: str = "hash") -> bool:
    import hashlib

    digest = hashlib.md5(chunk_key(run, chunk_type).encode()).hexdigest()
    return int(digest, 16) % total_chunks == this_chunk - 1


def select_chunk(runs, this_chunk: int, total_chunks: int, chunk_type: str = "hash") -> list:
    """The runs of chunk ``this_chunk`` (1-based) of ``total_chunks``, order kept."""
    if total_chunks < 1 or not 1 <= this_chunk <= total_chunks:
        raise ValueError(f"--this-chunk must be in 1..--total-chunks (got {this_chunk} of {total_chunks})")
    return [r for r in runs if in_chunk(r, this_chunk, total_chunks, chunk_type)]
