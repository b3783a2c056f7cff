"""The query language, parsed into a tree (never string-pasted into Tantivy's own parser).

Grammar (loosest first)::

    query   := group+                       # implicit AND; an explicit "AND" is accepted
    group   := unary ("OR" unary)*          # OR binds tighter: ``jet OR rocket engine``
    unary   := ("NOT" | "-") unary | primary
    primary := "(" query ")" | PHRASE | WORD | FIELD ":" (WORD | PHRASE | "(" query ")")

A WORD ending in ``*`` (``turbo*``, ``title:aero*``) is truncated: it matches every word that
starts with it (at least :data:`MIN_PREFIX` letters or digits before the ``*``). A WORD starting
with ``=`` (``=TBC``) is searched exactly as typed: an acronym so written is not also searched as
its meanings (:mod:`.acronyms`).

Fields: ``title:``, ``author:``, ``subject:``, ``abstract:``, ``keyword:``, ``year:1990-2005``
(also ``year:1990``, ``year:1990-``, ``year:-2005``), ``source:ntrs|osti`` and ``topic:propulsion``
(a shared topic of both sources, by slug, label or alias: :mod:`searchnasa.topics`).

Nothing a user types makes parsing fail: an unclosed quote runs to the end, an unclosed
parenthesis closes at the end, a stray ``)``/``OR``/``NOT`` or an empty ``title:`` is dropped, an
unknown ``field:`` is read as words. Each repair adds a human sentence to ``notices`` and the
tree's :func:`describe` says how the query was read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from searchnasa.search.query_tree import (And, MatchAll, Node, Not, Or, Phrase, Prefix, SourceIs, Term, TopicIs,
                                         YearRange, describe, positive_texts, tree_depth)
from searchnasa.index.acronym_lexicon import Lexicon
from searchnasa.search.acronyms import expand_acronyms
from searchnasa.search.query_lexer import Token, lex
from searchnasa.search.reading import read_as_typed
from searchnasa.search.schemas import AcronymNote
from searchnasa.topics import resolve_topic, topic_slugs

FIELD_ALIASES = {
    "title": "title", "ti": "title",
    "author": "author", "authors": "author", "au": "author",
    "subject": "subject", "subjects": "subject",
    "abstract": "abstract", "ab": "abstract",
    "keyword": "keyword", "keywords": "keyword", "kw": "keyword",
    "year": "year", "years": "year",
    "source": "source",
    "topic": "topic", "topics": "topic",
}
SOURCE_ALIASES = {"ntrs": "ntrs", "nasa": "ntrs", "osti": "osti", "doe": "osti"}


@dataclass
class ParsedQuery:
    """The tree plus what the parser had to repair, in words a user can read."""

    raw: str
    tree: Node
    notices: list[str] = field(default_factory=list)
    # every word and phrase as typed (stop words too): what a semantic model reads, since the
    # tree keeps only the words a record must hold (:mod:`.reading`)
    typed_words: list[str] = field(default_factory=list)
    # the acronyms the tree also searches as their meanings, or found too ambiguous to (:mod:`.acronyms`)
    acronyms: list[AcronymNote] = field(default_factory=list)

    @property
    def interpreted(self) -> str:
        return describe(self.tree)


# -- parsing ------------------------------------------------------------------------------------

MAX_NESTING = 32  # deeper nesting is ignored (with a notice): every tree walk stays shallow


class _Parser:
    def __init__(self, toks: list[Token], notices: list[str]) -> None:
        self.toks = toks
        self.i = 0
        self.depth = 0
        self.notices = notices

    def peek(self) -> Token | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> Token:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def note(self, message: str) -> None:
        if message not in self.notices:
            self.notices.append(message)

    def parse(self) -> Node | None:
        node = self.or_expr(None)
        while self.peek() is not None:  # only a stray ")" stops or_expr early at top level
            self.take()
            self.note("Ignored an unmatched closing parenthesis.")
            more = self.or_expr(None)
            node = _and([n for n in (node, more) if n is not None])
        return node

    def or_expr(self, fld: str | None) -> Node | None:
        """A whole (sub)query: OR-groups joined by implicit AND, up to ``)`` or the end."""
        parts: list[Node] = []
        while True:
            tok = self.peek()
            if tok is None or tok.kind == "RPAREN":
                break
            if tok.kind == "AND":
                self.take()
                if not parts:
                    self.note("Ignored “AND” with nothing before it.")
                continue
            if tok.kind == "OR":
                self.take()
                self.note("Ignored “OR” with nothing before it.")
                continue
            node = self.or_group(fld)
            if node is not None:
                parts.append(node)
        if not parts:
            return None
        return _and(parts)

    def or_group(self, fld: str | None) -> Node | None:
        """``a OR b OR c``: OR binds tighter than the implicit AND (``jet OR rocket engine``)."""
        alternatives: list[Node] = []
        node = self.unary(fld)
        if node is not None:
            alternatives.append(node)
        while True:
            tok = self.peek()
            if tok is None or tok.kind != "OR":
                break
            self.take()
            nxt = self.peek()
            if nxt is None or nxt.kind in ("OR", "RPAREN", "AND"):
                self.note("Ignored “OR” with nothing after it.")
                continue
            node = self.unary(fld)
            if node is not None:
                alternatives.append(node)
        if not alternatives:
            return None
        flat: list[Node] = []
        for alt in alternatives:
            flat.extend(alt.children if isinstance(alt, Or) else (alt,))
        return flat[0] if len(flat) == 1 else Or(tuple(flat))

    def unary(self, fld: str | None) -> Node | None:
        """One operand: a word, phrase, field clause or parenthesized group, after any NOTs."""
        if self.depth >= MAX_NESTING and not self._skip_deep_openers():
            return None
        tok = self.take()
        negations = 0
        while tok.kind in ("NOT", "MINUS"):  # iterative: a long run of NOTs must not recurse
            nxt = self.peek()
            if nxt is None or nxt.kind in ("OR", "RPAREN", "AND"):
                self.note("Ignored “NOT” with nothing after it." if tok.kind == "NOT"
                          else "Ignored a lone “-”.")
                return None
            negations += 1
            tok = self.take()
        if negations:
            self.i -= 1
            return self._negated(fld, negations)
        if tok.kind == "LPAREN":
            return self._group(tok, fld)
        if tok.kind == "RPAREN":  # defensive: callers stop before ")"
            self.note("Ignored an unmatched closing parenthesis.")
            return None
        if tok.kind == "PHRASE":
            return _phrase(tok.value, fld, self)
        if tok.kind == "FIELD":
            return self.fielded(tok, fld)
        if tok.kind in ("OR", "AND"):
            return None
        return _word(tok.value, fld, self, tok.pos)

    def _skip_deep_openers(self) -> bool:
        """Past ``MAX_NESTING``, further "(", NOT and "-" add nothing but stack depth: skip them.
        False when nothing is left to read as an operand."""
        skipped = False
        while (ahead := self.peek()) is not None and ahead.kind in ("LPAREN", "NOT", "MINUS"):
            self.take()
            skipped = True
        if skipped:
            self.note(f"Ignored parentheses and NOTs nested deeper than {MAX_NESTING} levels.")
        ahead = self.peek()
        return not (ahead is None or ahead.kind in ("RPAREN", "OR", "AND"))

    def _negated(self, fld: str | None, negations: int) -> Node | None:
        """The operand after ``negations`` NOTs: NOT NOT x reads as x."""
        self.depth += 1
        try:
            child = self.unary(fld)
        finally:
            self.depth -= 1
        if child is None or negations % 2 == 0:
            return child
        return child.child if isinstance(child, Not) else Not(child)

    def _group(self, tok: Token, fld: str | None) -> Node | None:
        """A parenthesized group; a missing ")" is added (and said)."""
        if self.depth >= MAX_NESTING:
            self.note(f"Ignored parentheses nested deeper than {MAX_NESTING} levels.")
            while tok.kind == "LPAREN":  # skip the run without recursing
                nxt = self.peek()
                if nxt is None or nxt.kind in ("OR", "RPAREN", "AND"):
                    return None
                tok = self.take()
            self.i -= 1
            return self.unary(fld)
        self.depth += 1
        inner = self.or_expr(fld)
        nxt = self.peek()
        if nxt is not None and nxt.kind == "RPAREN":
            self.take()
        else:
            self.note("Added the missing closing parenthesis.")
        self.depth -= 1
        return inner

    def fielded(self, tok: Token, outer: str | None) -> Node | None:
        name = FIELD_ALIASES.get(tok.value.lower())
        nxt = self.peek()
        attached = nxt is not None and nxt.pos == tok.pos + len(tok.value) + 1 and nxt.kind in (
            "WORD", "PHRASE", "LPAREN")
        if name is None:
            self.note(f"Unknown field “{tok.value}:”; read it as words.")
            if attached and nxt is not None and nxt.kind == "WORD":
                self.take()
                return _word(f"{tok.value} {nxt.value}", outer, self)
            return _word(tok.value, outer, self)
        if not attached:
            self.note(f"Ignored “{tok.value}:” with nothing after it.")
            return None
        value_tok = self.take()
        if name == "year":
            text = value_tok.value if value_tok.kind != "LPAREN" else self._skip_group()
            return _year(text, self)
        if name == "source":
            text = value_tok.value if value_tok.kind != "LPAREN" else self._skip_group()
            src = SOURCE_ALIASES.get(text.strip().lower())
            if src is None:
                self.note(f"Unknown source “{text}”; use source:ntrs or source:osti. Ignored it.")
                return None
            return SourceIs(src)
        if name == "topic":
            return self._topic(value_tok)
        if value_tok.kind == "PHRASE":
            return _phrase(value_tok.value, name, self)
        if value_tok.kind == "LPAREN" and self.depth >= MAX_NESTING:
            self.note(f"Ignored parentheses nested deeper than {MAX_NESTING} levels.")
            return None
        if value_tok.kind == "LPAREN" and self.depth >= MAX_NESTING:
            return self.unary(name)  # too deep: read what follows the "(" on its own
        if value_tok.kind == "LPAREN":
            self.depth += 1
            inner = self.or_expr(name)
            if self.peek() is not None and self.peek().kind == "RPAREN":  # type: ignore[union-attr]
                self.take()
            else:
                self.note("Added the missing closing parenthesis.")
            self.depth -= 1
            return inner
        return _word(value_tok.value, name, self)

    def _topic(self, value_tok: Token) -> Node | None:
        """``topic:propulsion``, ``topic:"heat transfer"`` or ``topic:(batteries)``: a shared topic by
        slug, label or alias; an unknown one is dropped with a notice naming the topics."""
        text = value_tok.value if value_tok.kind != "LPAREN" else self._skip_group()
        slug = resolve_topic(text)
        if slug is None:
            self.note(f"Unknown topic “{text}”; topics are: {', '.join(topic_slugs())}. Ignored it.")
            return None
        return TopicIs(slug)

    def _skip_group(self) -> str:
        words: list[str] = []
        while self.peek() is not None and self.peek().kind != "RPAREN":  # type: ignore[union-attr]
            words.append(self.take().value)
        if self.peek() is not None:
            self.take()
        return " ".join(words)


def _and(parts: list[Node]) -> Node:
    flat: list[Node] = []
    for part in parts:
        flat.extend(part.children if isinstance(part, And) else (part,))
    return flat[0] if len(flat) == 1 else And(tuple(flat))


_WORDISH = re.compile(r"\w", re.U)


MIN_PREFIX = 3  # "a*" would be every word starting with "a": too broad to mean anything
_PREFIX = re.compile(r"([^\W_]+)\*+")


def _word(text: str, fld: str | None, parser: _Parser, pos: int | None = None) -> Node | None:
    """A bare word (``pos``: where it starts in the query); ``=word``: as typed, never expanded."""
    typed = text.strip()
    literal = typed.startswith("=")
    text = typed.lstrip("=")
    if not _WORDISH.search(text):
        if typed:
            parser.note(f"Ignored “{typed}” (no letters or digits).")
        return None
    truncated = _PREFIX.fullmatch(text)
    if truncated:
        stem = truncated.group(1)
        if len(stem) >= MIN_PREFIX:
            return Prefix(stem.lower(), fld)
        parser.note(f"“{text}”: a truncated word needs at least {MIN_PREFIX} letters before the *; "
                    f"searched “{stem}”.")
    return Term(text, fld, literal=literal, pos=pos)


def _phrase(text: str, fld: str | None, parser: _Parser) -> Node | None:
    text = " ".join(text.split())
    if not _WORDISH.search(text):
        parser.note("Ignored an empty quoted phrase.")
        return None
    return Phrase(text, fld)


_YEAR_RE = re.compile(r"^\s*(\d{4})?\s*(?:(-|–|\.\.|to)\s*(\d{4})?)?\s*$")


def _year(text: str, parser: _Parser) -> Node | None:
    m = _YEAR_RE.match(text)
    if not m or not (m.group(1) or m.group(3)):
        parser.note(f"Could not read “year:{text}” as a year or range (e.g. year:1990-2005). Ignored it.")
        return None
    lo = int(m.group(1)) if m.group(1) else None
    hi = int(m.group(3)) if m.group(3) else (lo if not m.group(2) else None)
    if lo is not None and hi is not None and lo > hi:
        lo, hi = hi, lo
        parser.note(f"Read the year range backwards as {lo}–{hi}.")
    return YearRange(lo, hi)


MAX_TREE_DEPTH = 60


def _flat(toks: list[Token], notices: list[str]) -> Node | None:
    """The query as plain words and phrases, every operator dropped (the last-resort reading)."""
    notices.append("The query nests too deeply to follow; read its words and phrases, all required.")
    parts: list[Node] = []
    for tok in toks:
        if tok.kind == "WORD" and _WORDISH.search(tok.value):
            parts.append(Term(tok.value.strip().lstrip("="), literal=tok.value.strip().startswith("="), pos=tok.pos))
        elif tok.kind == "PHRASE" and _WORDISH.search(tok.value):
            parts.append(Phrase(" ".join(tok.value.split())))
    parts = list(dict.fromkeys(parts))
    return _and(parts) if parts else None


def parse(text: str, acronyms: Lexicon | None = None) -> ParsedQuery:
    """Parse ``text``; never raises. An empty query becomes :class:`MatchAll`. With ``acronyms``
    (the mined lexicon), acronyms typed as bare words are also searched as their meanings."""
    notices: list[str] = []
    toks = lex(text or "", notices)
    try:
        tree = _Parser(toks, notices).parse() if toks else None
        if tree is not None and tree_depth(tree) > MAX_TREE_DEPTH:
            tree = _flat(toks, notices)
    except RecursionError:  # pathological nesting ("-(-(-(" ...): fall back to the words
        tree = _flat(toks, notices)
    if tree is None:
        if (text or "").strip() and not notices:
            notices.append("Nothing searchable in the query; showing all records.")
        tree = MatchAll()
    elif isinstance(tree, Not) or (isinstance(tree, And) and all(isinstance(c, Not) for c in tree.children)):
        notices.append("Only exclusions given: showing all records except those.")
    typed = positive_texts(tree)
    tree, notes = expand_acronyms(tree, acronyms, text or "")
    if not any(tok.kind == "AND" for tok in toks):  # an explicit AND asks for every word
        tree = read_as_typed(tree)
    return ParsedQuery(text or "", tree, notices, typed, notes)
