"""Everything dedup needs from one record, computed once and small enough to ship between
processes: its identifiers, its title+year key and its author surnames.

Computing keys is the costly part of a run (parsing the stored JSON and normalizing text), and it
needs nothing but the record, so it is what :func:`keys_for_range` hands to Dask workers; the
driver only writes the small results and looks pairs up in SQLite.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from searchnasa.store import identifiers
from searchnasa.records import Record
from searchnasa.store import Store
from searchnasa.dedup.normalize import surname, surnames, title_key


@dataclass(frozen=True)
class RecordKeys:
    id: str
    seq: int
    doi: str | None
    idents: tuple[tuple[str, str, str], ...]  # (kind, value_norm, value) for the identifiers table
    title_keys: tuple[tuple[str, str, str], ...]  # (kind, value, extra) for dedup_keys
    names: tuple[tuple[str, str], ...]  # (folded surname, surname as written) for merge reasons


def _display(name: str) -> str:
    name = name.split("[", 1)[0].strip()
    return name.split(",", 1)[0].strip() if "," in name else (name.split() or [name])[-1]


def title_keys(record: Record) -> list[tuple[str, str, str]]:
    """``(kind, value, extra)`` rows for ``dedup_keys``: the title+year key with the surnames."""
    key = title_key(record.title)
    if key is None or record.year is None:
        return []
    names = surnames(record.authors)
    if not names:
        return []  # the rule needs an overlapping author; without authors it can never fire
    return [("title", f"{key}|{record.year}", " ".join(names))]


def compute_keys(seq: int, record: Record) -> RecordKeys:
    names: dict[str, str] = {}
    for author in record.authors:
        folded = surname(author.name)
        if folded and folded not in names:
            names[folded] = _display(author.name)
    return RecordKeys(
        id=record.id, seq=seq,
        doi=record.identifiers.doi.lower() if record.identifiers.doi else None,
        idents=tuple(identifiers.record_identifiers(record)),
        title_keys=tuple(title_keys(record)),
        names=tuple(names.items()),
    )


def keys_for_range(store_path: str, after_seq: int, upto_seq: int) -> list[RecordKeys]:
    """Keys of the records with ``after_seq < seq <= upto_seq`` (a Dask task: opens the store read-only)."""
    store = Store(Path(store_path), readonly=True)
    try:
        return [compute_keys(seq, Record.from_json(blob)) for seq, blob in store.json_between(after_seq, upto_seq)]
    finally:
        store.close()
