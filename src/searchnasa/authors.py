"""Author names as people type them: "Last, First", "First Last", initials, with or without
diacritics (ADS's author search is the model).

Records write a name one way ("Christensen, Rasmus"); people type it another ("Rasmus
Christensen", "Christensen, R", "christensen"). Each author is indexed under a few *name keys*
(:func:`name_keys`), and a typed name becomes the keys it could mean (:func:`query_keys`); a record
matches when one key is shared. Keys are folded to ASCII, lower case, punctuation dropped:

- ``christensen``: the surname alone;
- ``christensen r``: surname and first initial;
- ``christensen rasmus``: surname and first given name, or ``christensen r~`` when the record
  gives only the initial (so "Christensen, Rasmus" also finds "Christensen, R.", as ADS does,
  while "Christensen, Rasmus" does not find "Christensen, Robert").

A typed name without a comma may be "First Last" or "Last First" (and a surname may have several
words: "Jan van der Berg"), so every split of its words is tried.
"""

from __future__ import annotations

import re
import unicodedata

INITIAL_ONLY = "~"
# Letters NFKD does not split into a base letter and a mark.
_FOLD = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "Ł": "L",
                       "đ": "d", "Đ": "D", "þ": "th", "Þ": "Th", "œ": "oe", "Œ": "OE", "ı": "i"})
MAX_QUERY_WORDS = 6  # a longer "name" is no name: only its whole-surname key is tried


def fold(text: str) -> str:
    """ASCII, lower case, words separated by single spaces (diacritics and punctuation dropped)."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD))
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(re.sub(r"[^0-9a-z]+", " ", plain.lower()).split())


def split_name(name: str) -> tuple[str, list[str]]:
    """(folded surname, folded given names) of a name as a record writes it."""
    if "," in name:
        last, _, given = name.partition(",")
        return fold(last), fold(given).split()
    words = fold(name).split()
    if not words:
        return "", []
    return words[-1], words[:-1]


def _keys(last: str, given: list[str]) -> list[str]:
    if not last:
        return []
    if not given:
        return [last]
    first = given[0]
    return [last, f"{last} {first[0]}", f"{last} {first}" if len(first) > 1 else f"{last} {first}{INITIAL_ONLY}"]


def name_keys(name: str) -> list[str]:
    """The keys a record's author is indexed under (module docs)."""
    last, given = split_name(name)
    return _keys(last, given)


def _wanted(last: str, given: list[str]) -> list[str]:
    """The keys that match a typed surname and given names."""
    if not last:
        return []
    if not given:
        return [last]
    first = given[0]
    if len(first) == 1:
        return [f"{last} {first}"]
    return [f"{last} {first}", f"{last} {first[0]}{INITIAL_ONLY}"]


def query_keys(typed: str) -> list[str]:
    """The name keys a typed author name could mean, in order, without repeats."""
    if "," in typed:
        last, _, given = typed.partition(",")
        return list(dict.fromkeys(_wanted(fold(last), fold(given).split())))
    words = fold(typed).split()
    if len(words) <= 1 or len(words) > MAX_QUERY_WORDS:
        return [" ".join(words)] if words else []
    keys: list[str] = []
    for cut in range(1, len(words)):
        keys += _wanted(" ".join(words[cut:]), words[:cut])  # First [Middle] Last
        keys += _wanted(" ".join(words[:cut]), words[cut:])  # Last First
    return list(dict.fromkeys(keys))
