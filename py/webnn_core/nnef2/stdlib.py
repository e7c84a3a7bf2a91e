"""The NNEF 2.0 standard library as SkriptND data: stdlib/<module>.sknd holds
the definitions the draft's §4 prints (repaired text, see
docs/nnef2-stdlib-repairs.md); stdlib/<module>_extra.sknd holds the operators §4 names
but does not print, written in the same style and marked as such."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .ast import Module
from .parser import parse_module

STDLIB_DIR = Path(__file__).resolve().parent / "stdlib"
MODULES = ("layout", "math", "linalg", "nn", "image", "quant", "algo")


def source(name: str) -> str | None:
    """The SkriptND text of standard module `name` (printed + extra), or None."""
    if name not in MODULES:
        return None
    text = (STDLIB_DIR / f"{name}.sknd").read_text(encoding="utf-8")
    extra = STDLIB_DIR / f"{name}_extra.sknd"
    if extra.exists():
        text += "\n" + extra.read_text(encoding="utf-8")
    return text


@lru_cache(maxsize=None)
def printed_module(name: str):
    path = STDLIB_DIR / f"{name}.sknd"
    return parse_module(path.read_text(encoding="utf-8"), f"stdlib/{name}.sknd", name)


@lru_cache(maxsize=None)
def module(name: str):
    """The parsed standard module `name` (printed operators, then the extras)."""
    printed = printed_module(name)
    extra = STDLIB_DIR / f"{name}_extra.sknd"
    if not extra.exists():
        return printed
    more = parse_module(extra.read_text(encoding="utf-8"), f"stdlib/{name}_extra.sknd", name)
    return Module(name, printed.file, [], printed.operators + more.operators)
