"""MLIR text (the form `jax.jit(f).lower(...).as_text()` prints) -> a small tree.

The grammar below is MLIR's *generic* structure: operations with results,
nested ( ) [ ] < > <{ }> groups, attribute dictionaries, regions with block
labels, `loc(...)` debug info and `#alias = ...` definitions. It is parsed by
`lark` (LALR, pure Python, so it runs in Pyodide too). The per-operation
custom ("pretty") syntax is then read from each op's flat piece list by
`stablehlo.py`, much as MLIR itself hands an op's text to that op's own parser.

Statement boundaries need no newlines: an operation starts with `%r = `, a
quoted generic name, or one of the few result-less op keywords (return,
func.func, module); a `{` that starts with a bare key is an attribute
dictionary, any other `{` a region.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .errors import StableHLOSyntaxError

GRAMMAR = r"""
start: _stmt*
_stmt: op | alias
alias: ALIAS_DEF _tpiece*
op: RESULT_DEF _name _tpiece*      -> op_results
  | KEYWORD_OP _tpiece*            -> op_plain
  | STRING _tpiece*                -> op_generic
_name: BARE_ID | STRING | KEYWORD_OP

_tpiece: _atom | _group
_npiece: _tpiece | STRING | RESULT_DEF | KEYWORD_OP
_atom: VALUE_USE | SYMBOL | BARE_ID | INT | FLOAT | HEX | TENSOR | HASH_ID | BANG_ID | COLON | EQUAL | COMMA | ARROW
_group: paren | list | angle | props | dict | region
paren: "(" _npiece* ")"
list: "[" _npiece* "]"
angle: "<" _npiece* ">"
props: "<{" _npiece* "}>"
dict: "{" (BARE_ID _npiece*)? "}"
region: "{" (op | label)+ "}"
label: BLOCK_ID paren? COLON

ALIAS_DEF.3: /#[\w.$-]+[ \t]*=(?!=)/
RESULT_DEF.3: /%[\w.$-]+(:\d+)?([ \t]*,[ \t]*%[\w.$-]+(:\d+)?)*[ \t]*=(?!=)/
KEYWORD_OP.3: /(func\.|stablehlo\.|mhlo\.)?return(?![\w.$])|func\.func(?![\w.$])|builtin\.module(?![\w.$])|module(?![\w.$])/
TENSOR.3: /tensor<([0-9]+x)*[a-zA-Z][a-zA-Z0-9]*>/
HEX.3: /-?0x[0-9A-Fa-f]+/
FLOAT.2: /[-+]?(\d+\.\d*([eE][-+]?\d+)?|\d+[eE][-+]?\d+)/
INT.1: /[-+]?\d+/
VALUE_USE: /%[\w.$-]+(#\d+)?/
SYMBOL: /@("[^"]*"|[\w.$-]+)/
HASH_ID: /#[\w.$-]+/
BANG_ID: /![\w.$-]+/
BLOCK_ID: /\^[\w.$-]+/
BARE_ID: /[A-Za-z_][\w.$-]*/
STRING: /"(\\.|[^"\\])*"/
COLON: ":"
EQUAL: "="
COMMA: ","
ARROW: "->"
COMMENT: /\/\/[^\n]*/
%import common.WS
%ignore WS
%ignore COMMENT
"""


@dataclass
class Group:
    kind: str            # paren | list | angle | props | dict | region
    items: list
    line: int
    column: int


@dataclass
class Label:
    name: str
    args: list           # pieces of the argument list


@dataclass
class Op:
    results: list        # [(name, count)]
    name: str            # e.g. "stablehlo.add", "func.func", "return"
    pieces: list         # Tokens and Groups after the name
    line: int
    column: int
    generic: bool = False
    regions: list = field(default_factory=list)

    @property
    def where(self) -> str:
        return f"{self.line}:{self.column}"


def _results(token) -> list:
    out = []
    for part in str(token).rstrip("= \t").split(","):
        part = part.strip()
        name, _, count = part.partition(":")
        out.append((name, int(count) if count else 1))
    return out


def _unquote(s: str) -> str:
    return s[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape") if s.startswith('"') else s


_PARSER = None


def _parser():
    global _PARSER
    if _PARSER is None:
        try:
            from lark import Lark, Transformer
        except ImportError as e:  # lark is a runtime dependency of the importer only
            raise StableHLOSyntaxError("the StableHLO importer needs the 'lark' package (pip install lark)") from e

        def group(kind):
            return lambda self, items: Group(kind, list(items), *_pos(items))

        class Build(Transformer):
            paren = group("paren")
            list = group("list")
            angle = group("angle")
            props = group("props")
            dict = group("dict")

            def region(self, items):
                return Group("region", list(items), *_pos(items))

            def label(self, items):
                return Label(str(items[0]), items[1].items if len(items) > 2 else [])

            def op_results(self, items):
                name = items[1]
                generic = name.type == "STRING"
                return Op(_results(items[0]), _unquote(str(name)), list(items[2:]), items[0].line, items[0].column,
                          generic)

            def op_plain(self, items):
                return Op([], str(items[0]), list(items[1:]), items[0].line, items[0].column)

            def op_generic(self, items):
                return Op([], _unquote(str(items[0])), list(items[1:]), items[0].line, items[0].column, True)

            def alias(self, items):
                return None

            def start(self, items):
                return [i for i in items if i is not None]

        _PARSER = Lark(GRAMMAR, parser="lalr", transformer=Build(), maybe_placeholders=False)
    return _PARSER


def _pos(items):
    for it in items:
        if hasattr(it, "line") and it.line is not None:
            return it.line, it.column
    return 0, 0


def parse(text: str) -> list:
    """Top-level statements of an MLIR document as `Op`s (aliases dropped)."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

    parser = _parser()
    try:
        return parser.parse(text)
    except UnexpectedToken as e:
        tok = e.token
        what = "end of input" if tok.type == "$END" else repr(str(tok))
        raise StableHLOSyntaxError(f"{e.line}:{e.column}: unexpected {what}") from None
    except UnexpectedCharacters as e:
        raise StableHLOSyntaxError(f"{e.line}:{e.column}: unexpected character {text[e.pos_in_stream]!r}") from None
    except UnexpectedEOF:
        raise StableHLOSyntaxError("unexpected end of input (an unclosed bracket or region?)") from None
    except UnexpectedInput as e:
        raise StableHLOSyntaxError(f"{getattr(e, 'line', '?')}:{getattr(e, 'column', '?')}: {e}") from None


def unquote(s: str) -> str:
    return _unquote(s)


__all__ = ["GRAMMAR", "Group", "Label", "Op", "parse", "unquote"]
