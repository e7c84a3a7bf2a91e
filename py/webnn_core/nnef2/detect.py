"""Telling NNEF 1.0 from NNEF 2.0 by content: a 1.0 document starts with
`version 1.0;` (after comments) and lives in graph.nnef; a 2.0 model has
main.sknd (SkriptND: imports, `graph`/`operator` with @blocks)."""
from __future__ import annotations

import re

_SKND = re.compile(r"^\s*(import\b|(public\s+)?operator\b|graph\s+\w+\s*\{\s*@)", re.M)


def _strip_comments(text):
    return re.sub(r"#[^\n]*", "", text)


def text_is_nnef2(text: str) -> bool:
    body = _strip_comments(text).lstrip()
    if body.startswith("version"):
        return False
    return bool(_SKND.search(body)) or "@compose" in body


def is_nnef2(files) -> bool:
    """files: {path: bytes}, archive bytes, or document bytes/text."""
    if isinstance(files, dict):
        names = [str(p).replace("\\", "/") for p in files]
        if any(n.endswith(".sknd") for n in names):
            return True
        if any(n.endswith("graph.nnef") for n in names):
            return False
        texts = [v for v in files.values() if isinstance(v, (bytes, str))]
        return any(text_is_nnef2(v if isinstance(v, str) else v[:65536].decode("utf-8", "replace"))
                   for v in texts[:1])
    if isinstance(files, str):
        return text_is_nnef2(files)
    data = bytes(files)
    from .model import is_archive, untar
    if is_archive(data):
        return is_nnef2({p: b"" for p in untar(data)})
    return text_is_nnef2(data[:65536].decode("utf-8", "replace"))
