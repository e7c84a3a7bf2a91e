"""SkriptND (NNEF 2.0 draft) tokens: identifiers, keywords, numbers, strings
(adjacent literals join), `@block` names, back-ticked built-ins and the
operator symbols of seed §2.4 and §2.16. Every token carries file:line:column."""
from __future__ import annotations

from typing import NamedTuple

from ..nnef.errors import NNEFSyntaxError

KEYWORDS = frozenset((
    "import", "operator", "graph", "public", "optional", "true", "false", "inf", "pi",
    "if", "then", "elif", "else", "with", "for", "do", "unroll", "while", "yield", "is", "in"))
TYPE_NAMES = frozenset(("type", "arith", "num", "int", "real", "bool", "str"))

# Longest first, so that '...' wins over '..' and '??' over '?'.
SYMBOLS = ("...", "..", "->", "<-", "<>", "<=", ">=", "==", "!=", "&&", "||", "=>", "**", "??", ":=",
           "+=", "*=", "&=", "|=", "<<", ">>",
           "(", ")", "[", "]", "{", "}", ":", "=", ",", ";", "<", ">", "+", "-", "*", "/", "\\", "%",
           "^", "!", "?", "|", "~", ".")


class Pos(NamedTuple):
    file: str
    line: int
    column: int

    def __str__(self):
        return f"{self.file}:{self.line}:{self.column}"


class Token:
    __slots__ = ("kind", "text", "pos", "end")

    def __init__(self, kind, text, pos, end):
        self.kind = kind   # 'id' | 'int' | 'real' | 'str' | 'block' | 'builtin' | a keyword | a symbol | 'eof'
        self.text = text   # source text; the decoded value for strings, the name for blocks/builtins
        self.pos = pos
        self.end = end     # offset just past the token in the source

    def describe(self) -> str:
        if self.kind == "eof":
            return "end of file"
        if self.kind == "str":
            return f"string {self.text!r}"
        if self.kind == "block":
            return f"'@{self.text}'"
        return f"'{self.text}'"

    def __repr__(self):
        return f"Token({self.kind!r}, {self.text!r}, {self.pos})"


def tokenize(text: str, file: str = "<input>") -> list:
    tokens = []
    i, n, line, line_start = 0, len(text), 1, 0

    def pos(at):
        return Pos(file, line, at - line_start + 1)

    def fail(message, at):
        raise NNEFSyntaxError(message, file, line, at - line_start + 1)

    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            line_start = i + 1
            i += 1
            continue
        if c in " \t\r\v\f":
            i += 1
            continue
        if c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        start = i
        if c.isalpha() or c == "_":
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            word = text[start:i]
            tokens.append(Token(word if word in KEYWORDS else "id", word, pos(start), i))
            continue
        if c.isdigit():
            while i < n and text[i].isdigit():
                i += 1
            kind = "int"
            # '1.5' is real, but '1..' is the integer 1 followed by '..' (seed §2.4 asks for a space; we do not)
            if i + 1 < n and text[i] == "." and text[i + 1].isdigit():
                i += 1
                while i < n and text[i].isdigit():
                    i += 1
                kind = "real"
            elif i < n and text[i] == "." and not text.startswith("..", i):
                i += 1
                kind = "real"
            if i < n and text[i] in "eE":
                j = i + 1
                if j < n and text[j] in "+-":
                    j += 1
                if j < n and text[j].isdigit():
                    while j < n and text[j].isdigit():
                        j += 1
                    i, kind = j, "real"
            tokens.append(Token(kind, text[start:i], pos(start), i))
            continue
        if c in "\"'":
            i += 1
            chars = []
            while True:
                if i >= n or text[i] == "\n":
                    fail("unterminated string literal", start)
                ch = text[i]
                if ch == c:
                    i += 1
                    break
                if ch == "\\" and i + 1 < n:
                    nxt = text[i + 1]
                    # keep '\{' and '\}' escaped: string formatting decides what they mean
                    chars.append({"n": "\n", "t": "\t", "\\": "\\", "'": "'", '"': '"'}.get(nxt, "\\" + nxt))
                    i += 2
                    continue
                chars.append(ch)
                i += 1
            value = "".join(chars)
            prev = tokens[-1] if tokens else None
            if prev is not None and prev.kind == "str" and text[prev.end:start].strip() == "":
                prev.text += value       # adjacent literals form one string (seed §2.4)
                prev.end = i
            else:
                tokens.append(Token("str", value, pos(start), i))
            continue
        if c == "@":
            i += 1
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            if i == start + 1:
                fail("expected a block name after '@'", start)
            tokens.append(Token("block", text[start + 1:i], pos(start), i))
            continue
        if c == "`":
            j = text.find("`", i + 1)
            if j < 0 or "\n" in text[i + 1:j] or not text[i + 1:j].isidentifier():
                fail("expected a built-in function name between back-ticks", start)
            tokens.append(Token("builtin", text[i + 1:j], pos(start), j + 1))
            i = j + 1
            continue
        for sym in SYMBOLS:
            if text.startswith(sym, i):
                tokens.append(Token(sym, sym, pos(start), i + len(sym)))
                i += len(sym)
                break
        else:
            fail(f"unexpected character {c!r}", start)
    tokens.append(Token("eof", "", Pos(file, line, i - line_start + 1), n))
    return tokens
