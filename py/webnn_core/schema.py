"""The WebIDL schema (idl_schema.json, generated at build time from the IDL file by
tools/idl_schema.mjs): the op signatures, option dictionaries with their
defaults, and enums that the JS shim converts arguments with. The builder
normalises every caller's options with it (`normalize_options`), so a Python or
importer call gets the same defaults and the same enum TypeErrors as a JS call.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from .errors import Invalid

SCHEMA_FILE = Path(__file__).with_name("idl_schema.json")


@lru_cache(maxsize=1)
def schema() -> dict:
    try:
        return json.loads(SCHEMA_FILE.read_text())
    except FileNotFoundError:
        raise RuntimeError(f"{SCHEMA_FILE.name} is missing: run ./dev build (or python tools/idl_schema.py) "
                           "to generate it from the IDL") from None


def idl_name() -> str:
    return schema()["idl"]


def enum_values(name: str) -> list:
    return schema()["enums"][name]


def op_signature(name: str):
    """{params: [[name, type]], options: dictionary name, returnsSequence} or None
    (an op this IDL version does not have)."""
    return schema()["ops"].get(name)


@lru_cache(maxsize=None)
def _members(dictionary: str) -> dict:
    """member -> (member, type, default), in IDL order, with each alias's target as the
    member name (an older IDL's member, e.g. roundingType, is known to the core by its
    current name). Made once per dictionary: every op call reads it."""
    renames = {alias: target for alias, target in _extension_aliases(dictionary).items()}
    out = {}
    for m in schema()["dictionaries"][dictionary]:
        out[renames.get(m[0], m[0])] = (renames.get(m[0], m[0]), m[1], m[2])
    return out


def _extension_aliases(dictionary: str) -> dict:
    """alias -> current member name, from spec/extensions.json (e.g. roundingType -> outputShapeRounding)."""
    return schema().get("extensionAliases", {}).get(dictionary, {})


def _check_type(type_code: str, value, what: str) -> None:
    if type_code.endswith("[]"):
        item = type_code[:-2]
        if item in schema()["enums"]:
            if not isinstance(value, (list, tuple)):
                raise Invalid(f"{what} must be a sequence")
            for i, v in enumerate(value):
                _check_type(item, v, f"{what}[{i}]")
        return
    values = schema()["enums"].get(type_code)
    if values is not None and value not in values:
        raise Invalid(f"{what}: {value!r} is not a valid value for enumeration {type_code} ({', '.join(values)})")


def normalize_args(op_name: str, args: tuple) -> None:
    """Check the enum-typed positional arguments (e.g. cast's dataType)."""
    sig = op_signature(op_name)
    if sig is None:
        return
    for (name, type_code), value in zip(sig["params"], args):
        _check_type(type_code, value, name)


def normalize_options(op_name: str, options: dict) -> dict:
    """The op's options dictionary with aliases resolved, enums checked and IDL
    defaults applied; an unknown member is an error (a Python caller's typo must
    not be silently ignored). `label` is handled by the builder. Raises Invalid."""
    sig = op_signature(op_name)
    if sig is None:
        return options
    dictionary = sig["options"]
    options = {k: v for k, v in options.items() if v is not None}
    for alias, target in _extension_aliases(dictionary).items():
        if alias in options:
            value = options.pop(alias)
            options.setdefault(target, value)  # the current name wins when both are given
    members = _members(dictionary)
    unknown = [k for k in options if k not in members]
    if unknown:
        known = ", ".join(m for m in members if m != "label")
        raise Invalid(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                      f"({dictionary} has: {known})")
    out = {}
    for name, type_code, default in members.values():
        if name == "label":
            continue
        if name in options:
            _check_type(type_code, options[name], f"options.{name}")
            out[name] = options[name]
        elif default is not None:
            out[name] = default
    return out
