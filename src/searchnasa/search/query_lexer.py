"""The query language's lexer: the text of a query as tokens (words, phrases, fields, operators).

Total, like the parser: an unclosed quote runs to the end of the text, and each repair adds a
sentence to ``notices``. :mod:`searchnasa.search.query` parses the tokens into a tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Token:
    kind: str  # WORD PHRASE LPAREN RPAREN OR AND NOT MINUS FIELD
    value: str = ""
    pos: int = 0


_FIELD_RE = re.compile(r"^([A-Za-z]+):(.*)$", re.S)
_BREAK = set(' \t\r\n()"')


def lex(text: str, notices: list[str]) -> list[Token]:
    toks: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "(":
            toks.append(Token("LPAREN", pos=i))
            i += 1
        elif ch == ")":
            toks.append(Token("RPAREN", pos=i))
            i += 1
        elif ch == '"' or ch == "\u201c" or ch == "\u201d":
            end = _find_quote(text, i + 1)
            if end < 0:
                notices.append("Added the missing closing quote.")
                toks.append(Token("PHRASE", text[i + 1:], i))
                i = n
            else:
                toks.append(Token("PHRASE", text[i + 1:end], i))
                i = end + 1
        elif ch == "-" and i + 1 < n and not text[i + 1].isspace() and text[i + 1] != "-" and (
                not toks or toks[-1].kind != "FIELD" or toks[-1].pos + len(toks[-1].value) + 1 != i):
            toks.append(Token("MINUS", pos=i))
            i += 1
        else:
            j = i
            while j < n and text[j] not in _BREAK and text[j] not in "\u201c\u201d":
                j += 1
            word = text[i:j]
            m = _FIELD_RE.match(word)
            if m:
                toks.append(Token("FIELD", m.group(1), i))
                if m.group(2):
                    toks.append(Token("WORD", m.group(2), i + len(m.group(1)) + 1))
            elif word == "OR" or word == "||":
                toks.append(Token("OR", pos=i))
            elif word == "AND" or word == "&&":
                toks.append(Token("AND", pos=i))
            elif word == "NOT":
                toks.append(Token("NOT", pos=i))
            else:
                toks.append(Token("WORD", word, i))
            i = j
    return toks


def _find_quote(text: str, start: int) -> int:
    for k in range(start, len(text)):
        if text[k] in '"\u201c\u201d':
            return k
    return -1
