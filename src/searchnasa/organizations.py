"""Organization names as people filter by them: NASA centers merged under one name each.

NTRS writes one center many ways ("Glenn Research Center", "NASA Glenn Research Center",
"National Advisory Committee for Aeronautics. Lewis Flight Propulsion Lab."), so the organization
facet listed one center as several values and a filter on one missed the others. The table in
``data/nasa_centers.toml`` (codes, canonical names, current and historical names, reviewed by hand)
maps each to one canonical name. Only the facet and filter use it: a record keeps the name its
source wrote, shown on its page and in citations.

NTRS's legacy collection marker (center code ``CDMS``, "Legacy CDMS") says which collection a
record came in with, not who wrote it: :func:`is_collection_marker` lets the mappers drop it.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib import resources

COLLECTION_MARKERS = frozenset({"cdms", "legacy cdms"})
# An alias this long (in words) also matches a name that goes on with a place ("…, Cleveland, OH");
# shorter ones ("Headquarters") must match whole.
PREFIX_MIN_WORDS = 3


def _normal(name: str) -> str:
    """Lower case, punctuation to spaces, one space between words, no leading "NASA"."""
    words = re.sub(r"[^\w]+", " ", name.lower()).split()
    if words and words[0] == "nasa" and len(words) > 1:
        words = words[1:]
    return " ".join(words)


@lru_cache(maxsize=1)
def _table() -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(exact normal name -> canonical, [(normal alias usable as a prefix, canonical)])."""
    text = resources.files("searchnasa").joinpath("data/nasa_centers.toml").read_text(encoding="utf-8")
    exact: dict[str, str] = {}
    prefixes: list[tuple[str, str]] = []
    for center in tomllib.loads(text)["center"]:
        canonical = center["name"]
        for alias in [canonical, *center.get("aliases", [])]:
            key = _normal(alias)
            exact[key] = canonical
            if len(key.split()) >= PREFIX_MIN_WORDS:
                prefixes.append((key + " ", canonical))
    prefixes.sort(key=lambda pair: -len(pair[0]))  # the most specific alias wins
    return exact, prefixes


def center_names() -> list[str]:
    """The canonical names of every center in the table."""
    return sorted(set(_table()[0].values()))


def canonical_organization(name: str) -> str:
    """The name an organization is filtered under: its NASA center's canonical name, else itself."""
    key = _normal(name)
    exact, prefixes = _table()
    if key in exact:
        return exact[key]
    for prefix, canonical in prefixes:
        if key.startswith(prefix):
            return canonical
    return name


def is_collection_marker(name: str | None, code: str | None = None) -> bool:
    """True for NTRS's legacy collection marker, which is not an organization."""
    return (code or "").strip().lower() == "cdms" or _normal(name or "") in COLLECTION_MARKERS
