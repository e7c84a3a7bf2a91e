"""NNEF 1.0 lexical analysis (spec §3.1): identifiers, keywords, numeric,
string and logical literals, operators, punctuation, `#` comments."""
from __future__ import annotations

import re
from typing import NamedTuple

from .errors import NNEFSyntaxError

KEYWORDS = frozenset((
    "version", "extension", "graph", "fragment", "tensor", "integer", "scalar", "logical", "string",
    "shape_of", "length_of", "range_of", "for", "in", "yield", "if", "else", "true", "false"))

# Longest first, so that '<=' wins over '<' and '->' over '-'.
SYMBOLS = ("->", "<=", ">=", "==", "!=", "&&", "||",
           "(", ")", "[", "]", "{", "}", ":", "=", ",", ";", "<", ">", "+", "-", "*", "/", "^", "!", "?")
WHITESPACE = " \t\n\r\v\f"


class Pos(NamedTuple):
    file: str
    line: int
    column: int

    def __str__(self):
        return f"{self.file}:{self.line}:{self.column}"


class Token:
    __slots__ = ("kind", "text", "pos")

    def __init__(self, kind, text, pos):
        self.kind = kind   # 'identifier' | 'integer' | 'scalar' | 'string' | a keyword | a symbol | 'eof'
        self.text = text   # the source text (for strings: the decoded value)
        self.pos = pos

    def __repr__(self):
        return f"Token({self.kind!r}, {self.text!r}, {self.pos})"

    def describe(self) -> str:
        if self.kind == "eof":
            return "end of file"
        if self.kind in ("identifier", "integer", "scalar"):
            return f"{self.kind} '{self.text}'"
        if self.kind == "string":
            return "string literal"
        return f"'{self.kind}'"


_TOKEN = re.compile(r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r\v\f]+)
  | (?P<comment>\#[^\n\f]*)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9]+(?P<frac>\.[0-9]*)?(?P<exp>[eE][+-]?[0-9]+)?)
  | (?P<string>'(?:[^'\\\n]|\\[^\n])*'|"(?:[^"\\\n]|\\[^\n])*")
  | (?P<sym>->|<=|>=|==|!=|&&|\|\||[()\[\]{}:=,;<>+\-*/^!?])
""", re.X)
_UNESCAPE = re.compile(r"\\(.)")


def tokenize(text: str, file: str = "<input>") -> list:
    tokens = []
    append = tokens.append
    i, n = 0, len(text)
    line, line_start = 1, 0
    match = _TOKEN.match
    while i < n:
        m = match(text, i)
        if m is None:
            c = text[i]
            col = i - line_start + 1
            if c in "'\"":
                raise NNEFSyntaxError("unterminated string literal", file, line, col)
            raise NNEFSyntaxError(f"unexpected character {c!r}", file, line, col)
        kind = m.lastgroup
        j = m.end()
        if kind == "nl":
            line += 1
            line_start = j
        elif kind == "ident":
            word = m.group(kind)
            append(Token(word if word in KEYWORDS else "identifier", word, Pos(file, line, i - line_start + 1)))
        elif kind in ("number", "frac", "exp"):
            word = m.group("number")
            scalar = m.group("frac") is not None or m.group("exp") is not None
            if j < n and text[j] in "eE" and not scalar:
                pass  # '1e' : the 'e' becomes an identifier and the parser reports it
            append(Token("scalar" if scalar else "integer", word, Pos(file, line, i - line_start + 1)))
        elif kind == "string":
            raw = m.group(kind)[1:-1]
            for k, ch in enumerate(raw):
                if not (" " <= ch <= "~"):
                    raise NNEFSyntaxError(
                        f"string literals may only contain printable ASCII characters, found {ch!r}",
                        file, line, i - line_start + 2 + k)
            append(Token("string", _UNESCAPE.sub(r"\1", raw), Pos(file, line, i - line_start + 1)))
        elif kind == "sym":
            sym = m.group(kind)
            append(Token(sym, sym, Pos(file, line, i - line_start + 1)))
        i = j
    append(Token("eof", "", Pos(file, line, i - line_start + 1)))
    return tokens
