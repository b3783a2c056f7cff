"""The topic crosswalk: each source's subject categories mapped onto one shared set of topics.

NTRS files a report under "AIRCRAFT PROPULSION AND POWER", OSTI under "33 ADVANCED PROPULSION
SYSTEMS"; neither source's own category selects both. The crosswalk (``data/topics.toml``, reviewed
by hand, its reasoning written there as comments) names the shared topics and which categories of
each source belong to each, so the index can give every record its topics (``topic`` field) and
one filter selects a topic in both sources. The source's own categories stay as they are.

A core module (it imports nothing of the package): the index computes topics, search parses and
filters them, the web shows their labels, and all of them read this one table.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

CROSSWALK_PATH = Path(__file__).parent / "data" / "topics.toml"

_OSTI_NUMBER = re.compile(r"^(\d{2,3})\s+(?:-\s+)?(.*)$", re.S)


@dataclass(frozen=True)
class Topic:
    """One shared topic: ``slug`` is what filters and URLs carry, ``label`` what people read."""

    slug: str
    label: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Crosswalk:
    """The loaded table. ``ntrs`` maps a normalized NTRS category name to its topics' slugs;
    ``osti`` maps a DOE category number, or a whole normalized category, to its topics' slugs."""

    topics: tuple[Topic, ...]
    ntrs: dict[str, tuple[str, ...]]
    osti: dict[str, tuple[str, ...]]
    unmapped_ntrs: frozenset[str]
    unmapped_osti: frozenset[str]
    digest: str


def ntrs_key(category: str) -> str:
    """An NTRS category as the crosswalk lists it: upper case, single spaces."""
    return " ".join(category.split()).upper()


def osti_keys(category: str) -> tuple[str, ...]:
    """The crosswalk keys of an OSTI category, most specific first: the whole category as written
    (``" - "`` after the number dropped), then its DOE number with two digits at least."""
    text = " ".join(category.split()).upper()
    m = _OSTI_NUMBER.match(text)
    if not m:
        return (text,)
    number = m.group(1).lstrip("0").zfill(2)
    return (f"{number} {m.group(2)}", number)


def _osti_entry(entry: str) -> str:
    """An ``osti`` entry of the data file as a key: a bare number padded, else a whole category."""
    text = " ".join(str(entry).split()).upper()
    return text.lstrip("0").zfill(2) if text.isdigit() else osti_keys(text)[0]


def _add(table: dict[str, tuple[str, ...]], key: str, slug: str) -> None:
    if slug in table.get(key, ()):
        raise ValueError(f"{CROSSWALK_PATH.name}: {key!r} is listed twice under topic {slug!r}")
    table[key] = (*table.get(key, ()), slug)


def parse_crosswalk(data: bytes) -> Crosswalk:
    """The crosswalk from the data file's bytes; a malformed file raises ``ValueError``."""
    doc = tomllib.loads(data.decode("utf-8"))
    topics: list[Topic] = []
    ntrs: dict[str, tuple[str, ...]] = {}
    osti: dict[str, tuple[str, ...]] = {}
    for entry in doc.get("topic", []):
        slug = str(entry["slug"])
        if not re.fullmatch(r"[a-z][a-z0-9-]*", slug) or any(t.slug == slug for t in topics):
            raise ValueError(f"{CROSSWALK_PATH.name}: bad or repeated topic slug {slug!r}")
        topics.append(Topic(slug, str(entry["label"]), tuple(str(a) for a in entry.get("aliases", ()))))
        for name in entry.get("ntrs", ()):
            _add(ntrs, ntrs_key(name), slug)
        for value in entry.get("osti", ()):
            _add(osti, _osti_entry(value), slug)
    _check_names(topics)
    unmapped = doc.get("unmapped", {})
    unmapped_ntrs = frozenset(ntrs_key(n) for n in unmapped.get("ntrs", ()))
    unmapped_osti = frozenset(_osti_entry(v) for v in unmapped.get("osti", ()))
    both = (unmapped_ntrs & ntrs.keys()) | (unmapped_osti & osti.keys())
    if both:
        raise ValueError(f"{CROSSWALK_PATH.name}: both mapped and unmapped: {sorted(both)}")
    return Crosswalk(tuple(topics), ntrs, osti, unmapped_ntrs, unmapped_osti,
                     hashlib.sha256(data).hexdigest()[:16])


def _check_names(topics: list[Topic]) -> None:
    """Every slug, label and alias names one topic only, so :func:`resolve_topic` is unambiguous."""
    seen: dict[str, str] = {}
    for topic in topics:
        for name in {_folded(n) for n in (topic.slug, topic.label, *topic.aliases)}:
            if seen.setdefault(name, topic.slug) != topic.slug:
                raise ValueError(f"{CROSSWALK_PATH.name}: {name!r} names both {seen[name]!r} and {topic.slug!r}")


@lru_cache(maxsize=1)
def crosswalk() -> Crosswalk:
    """The bundled crosswalk, read once per process."""
    return parse_crosswalk(CROSSWALK_PATH.read_bytes())


def topics() -> tuple[Topic, ...]:
    """Every topic, in the data file's order."""
    return crosswalk().topics


def topic_slugs() -> tuple[str, ...]:
    return tuple(t.slug for t in topics())


def topic_label(slug: str) -> str:
    """A topic's label; an unknown slug is shown as it is."""
    return next((t.label for t in topics() if t.slug == slug), slug)


def category_topics(source: str, category: str) -> tuple[str, ...] | None:
    """The topics one category maps to: ``()`` when it is listed as unmapped, ``None`` when the
    crosswalk does not know it at all."""
    walk = crosswalk()
    if source == "osti":
        for key in osti_keys(category):
            if key in walk.osti:
                return walk.osti[key]
        return () if any(k in walk.unmapped_osti for k in osti_keys(category)) else None
    key = ntrs_key(category)
    if key in walk.ntrs:
        return walk.ntrs[key]
    return () if key in walk.unmapped_ntrs else None


def topics_of(source: str, subjects: Iterable[str]) -> list[str]:
    """A record's topics from its source and subject categories, in the crosswalk's order."""
    found: set[str] = set()
    for subject in subjects:
        found.update(category_topics(source, subject) or ())
    return [slug for slug in topic_slugs() if slug in found]


def _folded(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def resolve_topic(text: str) -> str | None:
    """The topic a person named: its slug, its label or an alias, case and punctuation ignored
    (``heat-transfer``, ``"Heat transfer and fluids"``, ``batteries``); None when none matches."""
    wanted = _folded(text)
    if not wanted:
        return None
    for topic in topics():
        if wanted in (_folded(topic.slug), _folded(topic.label), *map(_folded, topic.aliases)):
            return topic.slug
    return None
