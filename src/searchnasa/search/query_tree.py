"""The query tree: the nodes the parser (:mod:`.query`) builds, and how the rest of search reads a
tree back: its description, its strict and loose parts (hybrid retrieval), the words a user asked
for, its depth."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypeGuard, Union

from searchnasa.topics import topic_label

SOURCE_NAMES = {"ntrs": "NASA NTRS", "osti": "DOE OSTI"}


@dataclass(frozen=True)
class Term:
    """A bare word: stemmed, on every text field (or one field). ``literal``: typed as ``=TBC``,
    so never expanded (:mod:`.acronyms`); ``pos``: where it starts in the query text (the link
    that turns an expansion off rewrites the word there). Neither changes what it matches."""

    text: str
    field: str | None = None
    literal: bool = False
    pos: int | None = dataclasses.field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Phrase:
    """A quoted phrase: exact words in order, unstemmed. ``stemmed``: the words in order in any
    inflection (an acronym's meaning, :class:`Expanded`: "thermal barrier coated" also finds
    "thermal barrier coatings"); never made from what a user quotes."""

    text: str
    field: str | None = None
    stemmed: bool = False


@dataclass(frozen=True)
class Prefix:
    """A bare word ending in ``*`` (``turbo*``): any word that starts with ``text`` (lower case,
    unstemmed), on every text field or one field."""

    text: str
    field: str | None = None


@dataclass(frozen=True)
class YearRange:
    lo: int | None
    hi: int | None


@dataclass(frozen=True)
class SourceIs:
    source: str


@dataclass(frozen=True)
class TopicIs:
    """Records of one shared topic (``topic:propulsion``), whichever source's category put them
    there (:mod:`searchnasa.topics`)."""

    slug: str


@dataclass(frozen=True)
class IdSet:
    """Records by id (identifier lookups)."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class MatchAll:
    pass


@dataclass(frozen=True)
class Not:
    child: "Node"


@dataclass(frozen=True)
class And:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    """Alternatives: a record matches when it holds at least ``minimum`` of them (1: any one;
    more for a long question read as typed, see :mod:`searchnasa.search.reading`), or any one of
    ``alone``: those of the children specific enough to match on their own (a long question's
    rare words, :func:`searchnasa.search.reading.rare_words_alone`)."""

    children: tuple["Node", ...]
    minimum: int = 1
    alone: tuple["Node", ...] = ()


@dataclass(frozen=True)
class Expanded(Or):
    """An acronym typed as a bare word, OR the meanings the collection defines for it
    (:mod:`searchnasa.search.acronyms`): its first child is the word as typed, the others
    stemmed phrases. An ``Or`` to every walker of the tree (compiled, counted, budgeted, scored by
    BM25 like any alternatives); where a walker asks for the words a user typed it is one word,
    the acronym (:func:`asked_parts`, :mod:`searchnasa.search.reading`)."""

    acronym: str = ""


@dataclass(frozen=True)
class Nearby:
    """The bare words as typed, in order, stop words too: records holding them side by side (the
    phrase-like matches) score higher. Only scores, never decides which records match; added where
    the reading (:mod:`searchnasa.search.reading`) dropped or loosened words, so the words' order
    is not lost with them."""

    words: tuple[str, ...]


Node = Union[Term, Phrase, Prefix, YearRange, SourceIs, TopicIs, IdSet, MatchAll, Not, And, Or, Expanded, Nearby]


def is_at_least_group(node: Node) -> TypeGuard[Or]:
    """Whether ``node`` is an "at least m of" group (m > 1): a long question's words, read as
    typed (:mod:`searchnasa.search.reading`), where a match need not hold every word. The one test
    the reading, the compiler, the scorer of partial matches and :func:`describe` all ask."""
    return isinstance(node, Or) and node.minimum > 1


def tree_depth(node: Node) -> int:
    """How deeply a tree nests (iteratively)."""
    deepest, stack = 0, [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(current, (And, Or)):
            stack.extend((child, depth + 1) for child in current.children)
        elif isinstance(current, Not):
            stack.append((current.child, depth + 1))
    return deepest


# -- reading a tree back ------------------------------------------------------------------------

def describe(node: Node, top: bool = True) -> str:
    """A compact, readable rendering: ``“wind tunnel” AND (jet OR rocket) AND NOT noise``."""
    if isinstance(node, MatchAll):
        return "all records"
    if isinstance(node, Term):
        text = f"={node.text}" if node.literal else node.text
        return f"{node.field}:{text}" if node.field else text
    if isinstance(node, Prefix):
        return f"{node.field}:{node.text}*" if node.field else f"{node.text}*"
    if isinstance(node, Phrase):
        quoted = f"“{node.text}”"
        return f"{node.field}:{quoted}" if node.field else quoted
    if isinstance(node, YearRange):
        if node.lo is not None and node.hi is not None:
            return f"year {node.lo}" if node.lo == node.hi else f"years {node.lo}–{node.hi}"
        return f"year ≥ {node.lo}" if node.lo is not None else f"year ≤ {node.hi}"
    if isinstance(node, SourceIs):
        return f"source {SOURCE_NAMES[node.source]}"
    if isinstance(node, TopicIs):
        return f"topic {topic_label(node.slug)}"
    if isinstance(node, IdSet):
        return "identifier " + ", ".join(node.ids)
    if isinstance(node, Not):
        return "NOT " + describe(node.child, top=False)
    if isinstance(node, And):
        shown = [c for c in node.children if not isinstance(c, Nearby)]
        if len(shown) == 1:
            return describe(shown[0], top)
        text = " AND ".join(describe(c, top=False) for c in shown)
        return text if top else f"({text})"
    if is_at_least_group(node):
        text = f"at least {node.minimum} of ({', '.join(describe(c, top=False) for c in node.children)})"
        if node.alone:
            text += f", or a rare one alone ({', '.join(describe(c, top=False) for c in node.alone)})"
        return text
    if isinstance(node, Or):
        text = " OR ".join(describe(c, top=False) for c in node.children)
        return text if top else f"({text})"
    raise TypeError(node)


# -- strict / loose split (hybrid retrieval) ----------------------------------------------------

def is_strict(node: Node) -> bool:
    """Strict parts must hold for every result: phrases, field clauses, exclusions, ids."""
    if isinstance(node, (Term, Prefix)):
        return node.field is not None
    if isinstance(node, (Phrase, YearRange, SourceIs, TopicIs, IdSet, Not)):
        return True
    if isinstance(node, Or):
        return all(is_strict(c) for c in node.children)
    if isinstance(node, And):
        return all(is_strict(c) for c in node.children)
    return False  # MatchAll


def strict_part(node: Node) -> Node | None:
    """The sub-tree a semantic candidate must satisfy; None when nothing is strict."""
    if isinstance(node, And):
        parts = [strict_part(c) for c in node.children]
        kept = [p for p in parts if p is not None]
        if not kept:
            return None
        return kept[0] if len(kept) == 1 else And(tuple(kept))
    return node if is_strict(node) else None


def has_loose(node: Node) -> bool:
    """Whether the query holds any bare words a semantic model could interpret."""
    if isinstance(node, (Term, Prefix)):
        return node.field is None
    if isinstance(node, (And, Or)):
        return any(has_loose(c) for c in node.children)
    return False


def positive_parts(node: Node) -> list[Term | Phrase | Prefix]:
    """The words, truncated words and phrases a user asked for (not excluded), in query order;
    of an acronym's expansion, the acronym as typed (its meanings were added, not asked for)."""
    if isinstance(node, (Term, Phrase, Prefix)):
        return [node]
    if isinstance(node, Expanded):
        return positive_parts(node.children[0])
    if isinstance(node, (And, Or)):
        out: list[Term | Phrase | Prefix] = []
        for child in node.children:
            out.extend(positive_parts(child))
        return out
    return []


def positive_texts(node: Node) -> list[str]:
    """The text of :func:`positive_parts` (a truncated word without its ``*``): what a semantic
    model embeds."""
    return [part.text for part in positive_parts(node)]


def asked_parts(node: Node) -> list[Node]:
    """Like :func:`positive_parts`, but an acronym's expansion is one part (the record holds the
    acronym or one of its meanings): what "lacks the word" means for a record close in meaning."""
    if isinstance(node, (Term, Phrase, Prefix, Expanded)):
        return [node]
    if isinstance(node, (And, Or)):
        out: list[Node] = []
        for child in node.children:
            out.extend(asked_parts(child))
        return out
    return []


def part_label(node: Node) -> str:
    """How a part of :func:`asked_parts` is named to a user (an expansion by its acronym)."""
    return node.acronym if isinstance(node, Expanded) else describe(node, top=False)
