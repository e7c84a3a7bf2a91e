"""NNEF 1.0 lexical analysis (spec §3.1): identifiers, keywords, numeric,
string and logical literals, operators, punctuation, `#` comments."""
from __future__ import annotations

from dataclasses import dataclass

from .errors import NNEFSyntaxError

KEYWORDS = frozenset((
    "version", "extension", "graph", "fragment", "tensor", "integer", "scalar", "logical", "string",
    "shape_of", "length_of", "range_of", "for", "in", "yield", "if", "else", "true", "false"))

# Longest first, so that '<=' wins over '<' and '->' over '-'.
SYMBOLS = ("->", "<=", ">=", "==", "!=", "&&", "||",
           "(", ")", "[", "]", "{", "}", ":", "=", ",", ";", "<", ">", "+", "-", "*", "/", "^", "!", "?")
WHITESPACE = " \t\n\r\v\f"


@dataclass(frozen=True)
class Pos:
    file: str
    line: int
    column: int

    def __str__(self):
        return f"{self.file}:{self.line}:{self.column}"


@dataclass
class Token:
    kind: str      # 'identifier' | 'integer' | 'scalar' | 'string' | a keyword | a symbol | 'eof'
    text: str      # the source text (for strings: the decoded value)
    pos: Pos

    def describe(self) -> str:
        if self.kind == "eof":
            return "end of file"
        if self.kind in ("identifier", "integer", "scalar"):
            return f"{self.kind} '{self.text}'"
        if self.kind == "string":
            return "string literal"
        return f"'{self.kind}'"


def tokenize(text: str, file: str = "<input>") -> list:
    tokens = []
    i, line, col = 0, 1, 1
    n = len(text)

    def advance(k):
        nonlocal i, line, col
        for _ in range(k):
            if text[i] == "\n":
                line += 1
                col = 1
            else:
                col += 1
            i += 1

    while True:
        # whitespace and comments
        while i < n:
            c = text[i]
            if c in WHITESPACE:
                advance(1)
            elif c == "#":
                while i < n and text[i] not in "\n\f":
                    advance(1)
            else:
                break
        if i >= n:
            tokens.append(Token("eof", "", Pos(file, line, col)))
            return tokens
        pos = Pos(file, line, col)
        c = text[i]
        if c.isascii() and (c.isalpha() or c == "_"):
            j = i
            while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            tokens.append(Token(word if word in KEYWORDS else "identifier", word, pos))
            advance(j - i)
        elif c.isascii() and c.isdigit():
            j = i
            while j < n and text[j].isdigit() and text[j].isascii():
                j += 1
            kind = "integer"
            if j < n and text[j] == ".":
                kind = "scalar"
                j += 1
                while j < n and text[j].isdigit() and text[j].isascii():
                    j += 1
            if j < n and text[j] in "eE":
                k = j + 1
                if k < n and text[k] in "+-":
                    k += 1
                if k < n and text[k].isdigit() and text[k].isascii():
                    kind = "scalar"
                    j = k
                    while j < n and text[j].isdigit() and text[j].isascii():
                        j += 1
                else:
                    advance(k - i)
                    raise NNEFSyntaxError("expected exponent digits in numeric literal", file, line, col)
            tokens.append(Token(kind, text[i:j], pos))
            advance(j - i)
        elif c in "'\"":
            quote = c
            j = i + 1
            chars = []
            while True:
                if j >= n or text[j] == "\n":
                    raise NNEFSyntaxError("unterminated string literal", file, pos.line, pos.column)
                ch = text[j]
                if ch == "\\":
                    if j + 1 >= n:
                        raise NNEFSyntaxError("unterminated string literal", file, pos.line, pos.column)
                    chars.append(text[j + 1])
                    j += 2
                    continue
                if ch == quote:
                    break
                if not (" " <= ch <= "~"):
                    raise NNEFSyntaxError(f"string literals may only contain printable ASCII characters, found {ch!r}",
                                          file, pos.line, pos.column + (j - i))
                chars.append(ch)
                j += 1
            tokens.append(Token("string", "".join(chars), pos))
            advance(j + 1 - i)
        else:
            for sym in SYMBOLS:
                if text.startswith(sym, i):
                    tokens.append(Token(sym, sym, pos))
                    advance(len(sym))
                    break
            else:
                raise NNEFSyntaxError(f"unexpected character {c!r}", file, line, col)
