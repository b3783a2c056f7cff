"""How two copies of one work are compared: titles and author surnames without case, accents,
markup or punctuation, because NTRS and OSTI write the same title and names differently
(``Flux averaging devices for the infrared.`` vs ``FLUX AVERAGING DEVICES FOR THE INFRARED``,
``Gorham, P. W.`` vs ``Peter W. Gorham``)."""

from __future__ import annotations

import re
import unicodedata

from searchnasa.records import Author

_TAGS = re.compile(r"<[^>]{0,200}>")
_NON_WORD = re.compile(r"[^a-z0-9]+")

# Titles made only of these words name a series, not a work ("Quarterly progress report"): two
# reports of one series by one author in one year are different works, so such titles never merge.
GENERIC_TITLE_WORDS = frozenset(
    "a an the of and for on in to annual quarterly monthly semiannual semi weekly progress report "
    "reports final interim technical summary status letter memo memorandum minutes meeting notes "
    "abstract abstracts proceedings presentation slides poster untitled no title volume vol part "
    "i ii iii iv v first second third fourth quarter year fy data dataset".split()
)
MIN_TITLE_CHARS = 20
MIN_TITLE_WORDS = 3


def fold(text: str) -> str:
    """Lower-case ASCII letters and digits separated by single spaces."""
    text = _TAGS.sub(" ", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    return _NON_WORD.sub(" ", text).strip()


def title_key(title: str | None) -> str | None:
    """The normalized title, or ``None`` when it is too short or too generic to identify a work."""
    if not title:
        return None
    folded = fold(title)
    words = folded.split()
    if len(folded) < MIN_TITLE_CHARS or len(words) < MIN_TITLE_WORDS:
        return None
    if all(w in GENERIC_TITLE_WORDS or w.isdigit() for w in words):
        return None
    return folded


def surname(name: str) -> str | None:
    """``Gorham, P. W.`` -> ``gorham``; ``Peter W. Gorham`` -> ``gorham``; ``Smith Jr., J.`` -> ``smith``."""
    name = re.sub(r"\[.*?\]|\(.*?\)", " ", name)  # OSTI puts affiliations and ORCIDs in brackets
    if "," in name:
        part = name.split(",", 1)[0]
    else:
        tokens = [t for t in name.split() if t.strip(".")]
        tokens = [t for t in tokens if fold(t) not in ("jr", "sr", "ii", "iii", "iv")]
        part = tokens[-1] if tokens else ""
    folded = fold(part).replace(" ", "")
    return folded if len(folded) >= 2 else None


def surnames(authors: list[Author]) -> list[str]:
    """Distinct surnames in author order."""
    seen: dict[str, None] = {}
    for author in authors:
        s = surname(author.name)
        if s:
            seen.setdefault(s, None)
    return list(seen)
