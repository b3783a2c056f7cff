"""Acronym definitions mined from a record's own text: ``thermal barrier coating (TBC)`` and
``TBC (thermal barrier coating)``.

Why mine them: NASA and DOE reports are written in acronyms, and a reader searching ``TBC`` wants
the records that spell it out too. The collection defines its acronyms itself, so the list is
learned from it rather than kept by hand (:mod:`.acronym_table` counts the definitions over the
whole store and keeps the frequent, unambiguous ones).

The matcher is the Schwartz-Hearst algorithm (A. Schwartz and M. Hearst, "A simple algorithm for
identifying abbreviation definitions in biomedical text", PSB 2003): the short form's letters are
matched right to left against the words before the parenthesis, the first letter at the start of
a word, and the shortest long form that holds them all wins. Three checks are added for
precision on technical prose (measured in bench/README.md, "Acronyms"):

- a short form is an acronym only with at least two capital letters (``TBC``, ``NOx``, ``CO2``;
  not ``(a)``, ``(see)``, ``(Fig. 2)``);
- every content word of the long form must contribute a letter to the short form, or the long form
  may have at most one word that does not (``of``, ``and`` never count): ``in a new thermal barrier
  coating (TBC)`` yields ``thermal barrier coating``, never ``new thermal barrier coating``;
- the long form must not start or end with a stop word, hold a digit-only word, or contain the
  short form itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from searchnasa.index.schema import STEM_ANALYZER

MIN_SHORT, MAX_SHORT = 2, 10  # characters of a short form, as Schwartz-Hearst
MAX_LONG_WORDS = 10
MAX_WINDOW_CHARS = 400  # more than the longest window of words (2 x 10 words) takes
# Words that may sit inside a long form without giving it a letter ("coefficient of thermal
# expansion (CTE)"), and that never start or end one.
FUNCTION_WORDS = frozenset("""a an and as at by for from in into of on or the to with via""".split())

_PAREN = re.compile(r"\(([^()]{1,120})\)")
_SHORT = re.compile(r"^[A-Za-z][A-Za-z0-9\-/&]{1,9}$")
_CLAUSE_BREAK = re.compile(r"[.;:!?\[\]{}()]\s|[;:!?\[\]{}()]")
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


@dataclass(frozen=True)
class Definition:
    """One definition found in a text: the acronym (a trailing plural ``s`` removed: ``TBCs`` is
    ``TBC``), the long form as written (spaces collapsed, lower case), and its key (the long form's
    stemmed words: ``thermal barrier coatings`` and ``thermal barrier coating`` are one meaning)."""

    acronym: str
    form: str
    key: str


def acronym_of(text: str) -> str | None:
    """``text`` as an acronym (``TBCs`` -> ``TBC``), or None when it is not shaped like one."""
    text = text.strip()
    if not (MIN_SHORT <= len(text) <= MAX_SHORT) or not _SHORT.match(text):
        return None
    if sum(ch.isupper() for ch in text) < 2:
        return None
    if text.endswith("s") and len(text) > 2 and text[:-1].isupper():
        text = text[:-1]  # the plural of an acronym: TBCs, SOFCs
    return text


def expansion_key(form: str) -> str:
    """How meanings are compared: the long form's words, stemmed (the index's own analyzer)."""
    return " ".join(STEM_ANALYZER.analyze(form))


def best_long_form(short: str, candidate: str) -> str | None:
    """Schwartz-Hearst: the shortest tail of ``candidate`` whose letters spell ``short``, right to
    left, the short form's first letter at the start of a word; None when there is none."""
    s, c = len(short) - 1, len(candidate) - 1
    while s >= 0:
        ch = short[s].lower()
        if not ch.isalnum():
            s -= 1
            continue
        while c >= 0 and (candidate[c].lower() != ch or (s == 0 and c > 0 and candidate[c - 1].isalnum())):
            c -= 1
        if c < 0:
            return None
        c -= 1
        s -= 1
    start = candidate.rfind(" ", 0, c + 1) + 1
    return candidate[start:].strip()


def initials_long_form(short: str, candidate: str) -> str | None:
    """The long form whose words' initials spell the short form exactly, function words skipped
    inside it: ``National Nuclear Security Administration (NNSA)``, where Schwartz-Hearst's letter
    matching stops at ``Nuclear Security Administration``. None when the initials differ."""
    letters = [ch.lower() for ch in short if ch.isalpha()]
    picked: list[str] = []
    needed = len(letters)
    for word in reversed(_WORD.findall(candidate)):
        if needed == 0:
            break
        picked.append(word)
        if word.lower() not in FUNCTION_WORDS:
            needed -= 1
    picked.reverse()
    content = [w for w in picked if w.lower() not in FUNCTION_WORDS]
    if needed or [w[0].lower() for w in content] != letters:
        return None
    return " ".join(picked)


def _initials_fit(short: str, words: list[str]) -> bool:
    """Every word that is not a function word gives the short form a letter, but at most one
    (``magnetohydrodynamic`` gives M, H and D): a long form wider than its acronym is not its
    definition."""
    letters = [ch.lower() for ch in short if ch.isalpha()]
    content = [w for w in words if w.lower() not in FUNCTION_WORDS]
    if not content or len(content) > len(letters) + 1:
        return False
    missing = [w for w in content if w[0].lower() not in letters]
    return len(missing) <= (1 if len(content) > 2 else 0)


def _clean_long(short: str, long_form: str | None) -> str | None:
    """The long form, checked (see the module docstring) and normalized; None when rejected."""
    if not long_form:
        return None
    words = [_POSSESSIVE.sub("", w) for w in _WORD.findall(long_form)]
    if len(words) < 2 or len(words) > min(MAX_LONG_WORDS, len(short) + 5):
        return None
    if words[0].lower() in FUNCTION_WORDS or words[-1].lower() in FUNCTION_WORDS:
        return None
    if any(w.isdigit() for w in words) or short.lower() in (w.lower() for w in words):
        return None
    if not _initials_fit(short, words):
        return None
    return " ".join(words).lower()


def _before(text: str, end: int, short: str) -> str:
    """The words before a parenthesis that may hold the long form: the same clause, at most
    ``min(|A| + 5, 2|A|)`` words (Schwartz-Hearst's window)."""
    head = text[max(0, end - MAX_WINDOW_CHARS):end]  # never the whole text: abstracts define many
    breaks = list(_CLAUSE_BREAK.finditer(head))
    if breaks:
        head = head[breaks[-1].end():]
    limit = min(len(short) + 5, 2 * len(short))
    words = head.split()
    return " ".join(words[-limit:])


def _definition(acronym: str, long_form: str | None) -> Definition | None:
    form = _clean_long(acronym, long_form)
    if form is None:
        return None
    key = expansion_key(form)
    return Definition(acronym, form, key) if key else None


def _long_before(acronym: str, text: str, end: int) -> str | None:
    """``long form (SF)``: the long form in the clause before the parenthesis."""
    window = _before(text, end, acronym)
    return initials_long_form(acronym, window) or best_long_form(acronym, window)


def _long_inside(acronym: str, inside: str) -> str | None:
    """``SF (long form)``: the whole parenthesis must be the long form."""
    if initials_long_form(acronym, inside) == " ".join(_WORD.findall(inside)):
        return inside
    found = best_long_form(acronym, inside)
    return inside if found is not None and found.lower() == inside.lower() else None


def find_definitions(text: str) -> Iterator[Definition]:
    """Every definition in ``text``, both ways round, in order (repeats included)."""
    for m in _PAREN.finditer(text or ""):
        inside = " ".join(m.group(1).split())
        first = re.split(r"[,;]", inside, maxsplit=1)[0].strip()
        acronym = acronym_of(first)
        found = None
        if acronym is not None:  # long form (SF)
            found = _definition(acronym, _long_before(acronym, text, m.start()))
        elif len(inside.split()) >= 2:  # SF (long form): the word before is the acronym
            prev = text[max(0, m.start() - 2 * MAX_SHORT):m.start()].split()
            acronym = acronym_of(prev[-1].strip(",.;:")) if prev else None
            if acronym is not None:
                found = _definition(acronym, _long_inside(acronym, inside))
        if found is not None:
            yield found


def record_definitions(texts: Iterable[str | None]) -> set[Definition]:
    """The distinct definitions one record makes in its texts (each counts once per record)."""
    out: set[Definition] = set()
    for text in texts:
        if text:
            out.update(find_definitions(text))
    return out

