"""Acronyms typed in a query, also searched as the meanings the collection defines for them.

A bare word that the acronym lexicon (:mod:`searchnasa.index.acronym_lexicon`, mined from the
records themselves) knows becomes one OR group, :class:`~.query_tree.Expanded`: the word as typed
or any of its dominating meanings, each meaning a stemmed phrase ("thermal barrier coated" also
finds "thermal barrier coatings"), all BM25-scored like the words typed. ``TBC`` then finds the
records that spell it out too.

Left exactly as typed: a word typed ``=TBC`` (the "search only TBC" link writes that), words in
quoted phrases and field clauses, excluded words (``-TBC`` excludes the acronym only), words
in lower case (``ice`` is a word, ``ICE`` an acronym), and every word of a query typed all in
capitals from :data:`CAPS_LOCK_WORDS` words on (``MEASUREMENT OF DIELECTRIC CONSTANT``: the
capitals say nothing about which words are acronyms). An acronym whose meanings are too scattered
to pick from is searched as typed, and the page says so. Every acronym met is reported as an
:class:`~.schemas.AcronymNote`: the page's notice, the API's ``acronyms`` field.
"""

from __future__ import annotations

import dataclasses

from searchnasa.index.acronym_lexicon import Entry, Lexicon
from searchnasa.search.query_tree import And, Expanded, Node, Or, Phrase, Term
from searchnasa.search.schemas import AcronymNote

MAX_OTHERS_SHOWN = 3
CAPS_LOCK_WORDS = 3  # a query of this many bare words or more, all in capitals, is not read for acronyms


def expand_acronyms(tree: Node, lexicon: Lexicon | None, raw: str) -> tuple[Node, list[AcronymNote]]:
    """``tree`` with every known acronym typed as a bare word expanded, and a note per acronym."""
    if lexicon is None or not len(lexicon) or _caps_lock(tree):
        return tree, []
    met: dict[str, tuple[Entry, list[int | None]]] = {}
    expanded = _walk(tree, lexicon, met)
    return expanded, [_note(entry, typed, positions, raw) for typed, (entry, positions) in met.items()]


def _bare_words(node: Node) -> list[str]:
    if isinstance(node, Term):
        return [node.text] if node.field is None and not node.literal else []
    if isinstance(node, (And, Or)):
        return [w for child in node.children for w in _bare_words(child)]
    return []


def _caps_lock(tree: Node) -> bool:
    """Whether the query's words were all typed in capitals (a long one: see the module docstring)."""
    words = [w for w in _bare_words(tree) if any(ch.isalpha() for ch in w)]
    return len(words) >= CAPS_LOCK_WORDS and all(w.isupper() for w in words)


def _walk(node: Node, lexicon: Lexicon, met: dict[str, tuple[Entry, list[int | None]]]) -> Node:
    if isinstance(node, Term):
        return _expand_word(node, lexicon, met)
    if isinstance(node, (And, Or)) and not isinstance(node, Expanded):
        children = tuple(_walk(child, lexicon, met) for child in node.children)
        return node if children == node.children else dataclasses.replace(node, children=children)
    return node  # phrases, truncated words, exclusions, filters: as typed


def _expand_word(term: Term, lexicon: Lexicon, met: dict[str, tuple[Entry, list[int | None]]]) -> Node:
    if term.field is not None or term.literal:
        return term
    entry = lexicon.lookup(term.text)
    if entry is None:
        return term
    met.setdefault(term.text, (entry, []))[1].append(term.pos)
    if not entry.expand:
        return term
    meanings = tuple(Phrase(m.form, stemmed=True) for m in entry.expand)
    return Expanded((term, *meanings), acronym=term.text)


def only_query(raw: str, positions: list[int | None]) -> str | None:
    """The query with ``=`` put before each expanded occurrence, so it is searched as typed."""
    if not positions or any(p is None or not 0 <= p < len(raw) for p in positions):
        return None
    out = raw
    for pos in sorted(positions, reverse=True):  # type: ignore[type-var]
        out = out[:pos] + "=" + out[pos:]
    return out


def _note(entry: Entry, typed: str, positions: list[int | None], raw: str) -> AcronymNote:
    searched = [m.form for m in entry.expand]
    others = [m.form for m in entry.others]
    return AcronymNote(acronym=typed, expanded_to=searched, other_meanings=others,
                       definitions=entry.definitions, only_query=only_query(raw, positions) if searched else None,
                       message=message(typed, searched, others))


def message(typed: str, searched: list[str], others: list[str]) -> str:
    """The sentence a page shows about one acronym (the link to turn it off is added by the page)."""
    shown = ", ".join(others[:MAX_OTHERS_SHOWN]) + (", …" if len(others) > MAX_OTHERS_SHOWN else "")
    if not searched:
        return f"{typed} has several meanings here ({shown}); searched only as typed"
    meanings = " or ".join(searched)
    if not others:
        return f"{typed} also searched as {meanings}"
    which = "its commonest meaning" if len(searched) == 1 else "its commonest meanings"
    return f"{typed} also searched as {meanings}, {which} here (others: {shown})"

