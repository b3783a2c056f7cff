"""The acronym lexicon: which mined acronyms a search expands, to which meanings, and why.

Built from the definition counts (:mod:`.acronym_table`) and kept as one small JSON file beside
the index generations (``index/acronyms.json``), written atomically, so a searching process reads
it with one ``stat`` per search and a reload only when it changed (:class:`LexiconFile`).

The rule, per acronym, over the records that define it (a record counts once per meaning):

- a meaning is **seen often enough** when at least :data:`MIN_RECORDS` records define it;
- it **dominates** when, besides, it holds at least :data:`MIN_SHARE` of the acronym's definitions;
- the acronym **expands** to its dominating meanings (at most :data:`MAX_MEANINGS`, most defined
  first) when together they hold at least :data:`COVER` of its definitions; otherwise its meanings
  are too scattered to pick from, and it expands to none (a search says so).

``SAR`` defined 7 times as "synthetic aperture radar", once as "search and rescue" and once as
"stable auroral red" expands to the first only (0.78 of its definitions); an acronym defined once
each in three ways is not in the lexicon at all. Every meaning's count is recorded in the file.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson

from searchnasa.index.acronyms import acronym_of

LEXICON_FILE = "acronyms.json"
MIN_RECORDS = 2
MIN_SHARE = 0.2
COVER = 0.6
MAX_MEANINGS = 3
MAX_LISTED = 6  # meanings an entry keeps for the notice beyond the ones it expands to


@dataclass(frozen=True)
class Meaning:
    """One meaning of an acronym: its commonest written form, its key and how many records define it."""

    form: str
    key: str
    records: int


@dataclass(frozen=True)
class Entry:
    """An acronym in the lexicon: the meanings a search adds (``expand``, maybe none) and the others."""

    acronym: str
    definitions: int  # records defining it, summed over its meanings
    expand: tuple[Meaning, ...]
    others: tuple[Meaning, ...] = ()

    @property
    def ambiguous(self) -> bool:
        return bool(self.others)


@dataclass
class Lexicon:
    """Acronym -> :class:`Entry`. ``lookup`` takes a word as typed."""

    entries: dict[str, Entry] = field(default_factory=dict)
    records: int = 0  # records the counts were taken over

    def lookup(self, word: str) -> Entry | None:
        """The entry for a word typed as the collection writes the acronym (``TBC``, ``TBCs``,
        ``SiC``); a word in lower case is a word (``ice`` is not ``ICE``)."""
        entry = self.entries.get(word)
        if entry is None:
            acronym = acronym_of(word)
            entry = self.entries.get(acronym) if acronym is not None else None
        return entry

    def __len__(self) -> int:
        return len(self.entries)


def decide(acronym: str, meanings: Iterable[Meaning]) -> Entry | None:
    """The lexicon's entry for one acronym from all its meanings' counts (the rule above); None
    when no meaning is seen often enough."""
    ranked = sorted(meanings, key=lambda m: (-m.records, m.key))
    total = sum(m.records for m in ranked)
    if not ranked or ranked[0].records < MIN_RECORDS:
        return None
    dominant = [m for m in ranked if m.records >= MIN_RECORDS and m.records / total >= MIN_SHARE][:MAX_MEANINGS]
    if sum(m.records for m in dominant) / total < COVER:
        dominant = []
    others = tuple(m for m in ranked if m not in dominant)[:MAX_LISTED]
    return Entry(acronym, total, tuple(dominant), others)


def build_lexicon(rows: Iterable[tuple[str, str, str, int]], records: int) -> Lexicon:
    """The lexicon from ``(acronym, key, form, records)`` count rows (one per written form): a
    meaning's count is the sum over its forms, its form the commonest one."""
    forms: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for acronym, key, form, count in rows:
        forms.setdefault((acronym, key), []).append((count, form))
    by_acronym: dict[str, list[Meaning]] = {}
    for (acronym, key), written in forms.items():
        best = min(written, key=lambda cf: (-cf[0], len(cf[1]), cf[1]))[1]
        by_acronym.setdefault(acronym, []).append(Meaning(best, key, sum(c for c, _ in written)))
    entries = {}
    for acronym, meanings in by_acronym.items():
        entry = decide(acronym, meanings)
        if entry is not None:
            entries[acronym] = entry
    return Lexicon(dict(sorted(entries.items())), records)


# -- the file ----------------------------------------------------------------------------------

def lexicon_path(index_dir: Path) -> Path:
    return Path(index_dir) / LEXICON_FILE


def write_lexicon(index_dir: Path, lexicon: Lexicon) -> None:
    """Replace the file atomically (a reader sees the old lexicon or the new one)."""
    path = lexicon_path(index_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"records": lexicon.records, "rule": {"min_records": MIN_RECORDS, "min_share": MIN_SHARE,
                                                "cover": COVER, "max_meanings": MAX_MEANINGS},
            "acronyms": [asdict(e) for e in lexicon.entries.values()]}
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2))
    os.replace(tmp, path)


def _entry(data: dict) -> Entry:
    return Entry(data["acronym"], int(data["definitions"]), tuple(Meaning(**m) for m in data["expand"]),
                 tuple(Meaning(**m) for m in data.get("others", ())))


def read_lexicon(index_dir: Path) -> Lexicon:
    """The lexicon on disk; empty when there is none (never built, or an older home) or when it
    cannot be read: expansion is a help, and a search never fails for want of it."""
    try:
        data = orjson.loads(lexicon_path(index_dir).read_bytes())
        entries = [_entry(item) for item in data["acronyms"]]
    except (OSError, ValueError, KeyError, TypeError):
        return Lexicon()
    return Lexicon({e.acronym: e for e in entries}, int(data.get("records", 0)))


class LexiconFile:
    """The lexicon a searching process uses: read on first use, read again when the file changes
    (one ``stat`` a search)."""

    def __init__(self, index_dir: Path) -> None:
        self.path = lexicon_path(index_dir)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._lexicon = Lexicon()

    def _current_stamp(self) -> tuple[int, int]:
        try:
            st = self.path.stat()
        except OSError:
            return (-1, -1)
        return (st.st_mtime_ns, st.st_size)

    def get(self) -> Lexicon:
        stamp = self._current_stamp()
        if stamp != self._stamp:
            with self._lock:
                if stamp != self._stamp:
                    self._lexicon = read_lexicon(self.path.parent) if stamp[0] >= 0 else Lexicon()
                    self._stamp = stamp
        return self._lexicon
