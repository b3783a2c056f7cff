"""Highlighted, escaped snippets of titles and abstracts.

Matching uses the index's own analyzers, so a word marks exactly what it matched: ``tunnels`` marks
"tunnel" and "tunneling" (same English stem), a quoted phrase marks its words only where they
occur in order. All record text is HTML-escaped (``markupsafe.escape``); the only markup in the
output is ``<mark>``. A long abstract is cut to the window with the most distinct matches, with
``…`` where text was dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from markupsafe import escape

from searchnasa.index.schema import MAX_TOKEN_LEN, PLAIN_ANALYZER, STEM_ANALYZER
from searchnasa.search.query_tree import And, Node, Not, Or, Phrase, Prefix, Term
from searchnasa.search.text import ELLIPSIS

SNIPPET_CHARS = 320


_ALNUM = r"[^\W_]"  # tantivy's simple tokenizer keeps runs of alphanumeric characters
_BEFORE, _AFTER = rf"(?<!{_ALNUM})", rf"(?!{_ALNUM})"


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    tokens = STEM_ANALYZER.analyze(word)
    return tokens[0] if len(tokens) == 1 else ""


@dataclass
class Highlight:
    """What to mark: stems of bare words, and phrases as lists of unstemmed tokens.

    Matching scans the text with one regex of stem prefixes (cheap) and stems only the words it
    finds, instead of tokenizing and stemming every word of every abstract.
    """

    stems: set[str] = field(default_factory=set)
    phrases: list[list[str]] = field(default_factory=list)
    prefixes: set[str] = field(default_factory=set)  # truncated words: any word starting so
    # stemmed phrases (an acronym's meanings) as lists of stems: each word marked in any inflection
    stem_phrases: list[list[str]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.stems and not self.phrases and not self.prefixes and not self.stem_phrases

    @cached_property
    def prefix_pattern(self) -> re.Pattern[str] | None:
        if not self.prefixes:
            return None
        alternation = "|".join(re.escape(p) for p in sorted(self.prefixes, key=len, reverse=True))
        return re.compile(rf"{_BEFORE}(?:{alternation}){_ALNUM}*", re.IGNORECASE)

    @cached_property
    def word_pattern(self) -> re.Pattern[str] | None:
        if not self.stems:
            return None
        # the stem's first letters start every inflected form (a 1-letter prefix for short stems,
        # whose endings the stemmer may rewrite: "sky" <- "skies")
        prefixes = sorted({st[:3] if len(st) >= 4 else st[:1] for st in self.stems}, key=len, reverse=True)
        alternation = "|".join(re.escape(p) for p in prefixes)
        return re.compile(rf"{_BEFORE}(?:{alternation}){_ALNUM}*", re.IGNORECASE)

    @cached_property
    def phrase_patterns(self) -> list[tuple[str, re.Pattern[str]]]:
        out = []
        for phrase in self.phrases:
            body = r"[\W_]+".join(re.escape(t) for t in phrase)
            out.append((" ".join(phrase), re.compile(rf"{_BEFORE}{body}{_AFTER}", re.IGNORECASE)))
        for stems in self.stem_phrases:  # a stem's letters but its last start its inflections
            body = r"[\W_]+".join(re.escape(st[:-1] if len(st) > 3 else st) + f"{_ALNUM}*" for st in stems)
            out.append((" ".join(stems), re.compile(rf"{_BEFORE}{body}", re.IGNORECASE)))
        return out


def highlight_for(node: Node, fields: Iterable[str | None] = (None, "title", "abstract")) -> Highlight:
    """The terms to mark for a query tree (excluded terms are never marked)."""
    wanted = set(fields)
    out = Highlight()

    def walk(n: Node) -> None:
        if isinstance(n, Term) and n.field in wanted:
            out.stems.update(STEM_ANALYZER.analyze(n.text))
        elif isinstance(n, Phrase) and n.stemmed:
            stems = STEM_ANALYZER.analyze(n.text)
            if stems:
                out.stem_phrases.append(stems)
        elif isinstance(n, Phrase) and n.field in wanted:
            tokens = PLAIN_ANALYZER.analyze(n.text)
            if tokens:
                out.phrases.append(tokens)
        elif isinstance(n, Prefix) and n.field in wanted:
            out.prefixes.add(n.text)
        elif isinstance(n, (And, Or)):
            for child in n.children:
                walk(child)
        elif isinstance(n, Not):
            return

    walk(node)
    return out


def _spans(text: str, hl: Highlight) -> list[tuple[int, int, str]]:
    """Character spans to mark, as (start, end, what-matched) in text order.

    A phrase occurrence is one span from its first to its last word (so "wind-tunnel" is marked
    whole); spans separated only by spaces are merged.
    """
    if hl.empty or not text:
        return []
    raw: list[tuple[int, int, str]] = []
    pattern = hl.word_pattern
    if pattern is not None:
        for m in pattern.finditer(text):
            word = m.group(0)
            if len(word) < MAX_TOKEN_LEN:
                stem = _stem(word.lower())
                if stem in hl.stems:
                    raw.append((m.start(), m.end(), stem))
    for label, phrase_re in hl.phrase_patterns:
        raw.extend((m.start(), m.end(), label) for m in phrase_re.finditer(text))
    if hl.prefix_pattern is not None:
        raw.extend((m.start(), m.end(), m.group(0).lower()) for m in hl.prefix_pattern.finditer(text))
    if not raw:
        return []
    raw.sort()
    marks: list[tuple[int, int, str]] = []
    for start, end, what in raw:
        if marks and (start <= marks[-1][1] or text[marks[-1][1]:start].isspace()):
            last = marks[-1]
            label = last[2] if what in last[2] else f"{last[2]} {what}"
            marks[-1] = (last[0], max(last[1], end), label)
        else:
            marks.append((start, end, what))
    return marks


def _render(text: str, marks: list[tuple[int, int, str]], lo: int, hi: int) -> str:
    out: list[str] = []
    pos = lo
    for start, end, _ in marks:
        if end <= lo or start >= hi:
            continue
        start, end = max(start, lo), min(end, hi)
        out.append(str(escape(text[pos:start])))
        out.append("<mark>" + str(escape(text[start:end])) + "</mark>")
        pos = end
    out.append(str(escape(text[pos:hi])))
    return "".join(out)


def highlight_html(text: str | None, hl: Highlight) -> str:
    """The whole text, escaped, with matches marked (titles)."""
    if not text:
        return ""
    return _render(text, _spans(text, hl), 0, len(text))


def _best_window(text: str, marks: list[tuple[int, int, str]], width: int) -> tuple[int, int]:
    """The ``width``-char window covering the most distinct matched terms (then the most marks)."""
    if not marks:
        return 0, width
    best = (-1, -1, 0)
    j = 0
    for i, (start, _, _) in enumerate(marks):
        while j < len(marks) and marks[j][1] - start <= width:
            j += 1
        window = marks[i:j]
        score = (len({m[2] for m in window}), len(window))
        if score > best[:2]:
            best = (score[0], score[1], start)
    anchor = best[2]
    # start a little before the first match, so it reads in context
    lo = max(0, anchor - width // 5)
    return lo, min(len(text), lo + width)


def _snap(text: str, lo: int, hi: int) -> tuple[int, int]:
    """Move cut points to word boundaries so no word is split."""
    if lo > 0:
        space = text.find(" ", lo)
        if space != -1 and space - lo < 25:
            lo = space + 1
    if hi < len(text):
        space = text.rfind(" ", lo, hi)
        if space != -1 and hi - space < 25:
            hi = space
    return lo, hi


def snippet_html(text: str | None, hl: Highlight, width: int = SNIPPET_CHARS) -> str:
    """An escaped snippet of ``text``: whole when short, else the best passage with ``…``."""
    if not text:
        return ""
    marks = _spans(text, hl)
    if len(text) <= width:
        return _render(text, marks, 0, len(text))
    lo, hi = _best_window(text, marks, width)
    if hi - lo < width and lo > 0:  # near the end: use the full width
        lo = max(0, hi - width)
    lo, hi = _snap(text, lo, hi)
    body = _render(text, marks, lo, hi).strip()
    return (ELLIPSIS if lo > 0 else "") + body + (ELLIPSIS if hi < len(text) else "")
