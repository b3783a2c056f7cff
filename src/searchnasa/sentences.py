"""Split a title + abstract into sentences: the units sentence vectors are made of.

MiniLM reads 256 word pieces and was trained on sentence pairs, while an abstract states several
claims; a vector per sentence lets a query (or a seed paper's sentence) meet the one sentence that
says what it asks (bench/README.md, "Sentence vectors"). The splitter is deliberately small and
rule-based (no NLP dependency): a sentence ends at ``.``, ``!`` or ``?`` followed by space and a
capital, digit or opening bracket, unless the word before the stop is a common abbreviation
("e.g.", "et al.", "Fig.", "Eq.", "vs."), a single letter (an initial, "U.S."), or a number's
decimal point (no space follows those). Fragments shorter than ``MIN_WORDS`` join their
neighbour, so a stray "Results." does not become a vector of its own. The title is its own first
sentence. Core module: the semantic stage embeds these sentences and the search stage shows the
best-matching pair, and the two must split alike.
"""

from __future__ import annotations

import re

MIN_WORDS = 4          # a fragment with fewer words is joined to its neighbour
MAX_SENTENCES = 24     # sentences kept per record (title included): bounds storage and re-rank cost
MAX_SENTENCE_CHARS = 600  # a run-on "sentence" (a list, a table) is cut here; the model reads ~1,000

ABBREVIATIONS = frozenset("""
e.g i.e al fig figs eq eqs ref refs vs cf approx no nos vol dr mr ms prof st inc ltd co corp jr sr
etc ca resp sec secs tab dept univ natl lab int est min max avg
""".split())

_CANDIDATE_END = re.compile(r"[.!?]+[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
_SPACES = re.compile(r"\s+")


def _is_abbreviation(before: str) -> bool:
    """True when the text before a full stop ends in an abbreviation or an initial."""
    match = _LAST_WORD.search(before)
    if not match:
        return False
    word = match.group(1).lower().rstrip(".")
    return len(word) == 1 or word in ABBREVIATIONS or "." in word  # "U.S", "e.g" written as one token


def _raw_pieces(text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for match in _CANDIDATE_END.finditer(text):
        end = match.end()
        stop = text[max(start, match.start() - 40):match.start() + 1].rstrip()  # the word before the stop
        if stop.endswith(".") and _is_abbreviation(stop):
            continue
        pieces.append(text[start:end].strip())
        start = end
    pieces.append(text[start:].strip())
    return [p for p in pieces if p]


def _join_short(pieces: list[str]) -> list[str]:
    """Join fragments under ``MIN_WORDS`` words to the sentence before (or after, for the first)."""
    out: list[str] = []
    for piece in pieces:
        if out and len(piece.split()) < MIN_WORDS:
            out[-1] = f"{out[-1]} {piece}"
        elif out and len(out[-1].split()) < MIN_WORDS:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def split_sentences(text: str | None) -> list[str]:
    """The sentences of ``text`` in order, whitespace collapsed, each at most ``MAX_SENTENCE_CHARS``."""
    text = _SPACES.sub(" ", text or "").strip()
    if not text:
        return []
    return [s[:MAX_SENTENCE_CHARS] for s in _join_short(_raw_pieces(text))]


def record_sentences(title: str | None, abstract: str | None) -> list[str]:
    """A record's sentence units: the title (when it has one), then the abstract's sentences, at
    most ``MAX_SENTENCES`` in all (the first ones: an abstract opens with what the paper is about)."""
    title = _SPACES.sub(" ", title or "").strip()
    units = ([title[:MAX_SENTENCE_CHARS]] if title else []) + split_sentences(abstract)
    return units[:MAX_SENTENCES]
