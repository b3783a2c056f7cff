"""The acronym definitions of the whole store, counted incrementally, and the lexicon made of them.

Two tables in the store: ``acronym_definitions`` (each record's definitions, one row per record,
acronym and meaning, :mod:`.acronyms`) and ``acronym_counts`` (how many records define each
acronym, meaning and written form). They follow the store's ``seq`` like the index and the
identifier table: a run reads only the records changed since the last one, takes their old rows
off the counts and adds their new ones, batch by batch, each batch committed with its checkpoint
(so a killed run resumes). When anything changed, the lexicon (:mod:`.acronym_lexicon`) is made
again from the counts and written beside the index, where searches read it.

A new miner (:data:`MINER_VERSION`) or ``searchnasa index --rebuild`` starts the counts over.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from searchnasa.index.acronym_lexicon import MIN_RECORDS, Lexicon, build_lexicon, lexicon_path, write_lexicon
from searchnasa.index.acronyms import Definition, record_definitions
from searchnasa.store import Store
from searchnasa.store.sqlite_util import select_in

SCHEMA = """
CREATE TABLE IF NOT EXISTS acronym_definitions (
    record_id TEXT NOT NULL,
    acronym TEXT NOT NULL,
    key TEXT NOT NULL,
    form TEXT NOT NULL,
    PRIMARY KEY (record_id, acronym, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS acronym_counts (
    acronym TEXT NOT NULL,
    key TEXT NOT NULL,
    form TEXT NOT NULL,
    records INTEGER NOT NULL,
    PRIMARY KEY (acronym, key, form)
) WITHOUT ROWID;
"""
SEQ_META_KEY = "acronyms_seq"
MINER_META_KEY = "acronyms_miner"
MINER_VERSION = "1"  # bump when the miner's output changes: the counts are then taken again
BATCH = 2000

Row = tuple[str, str, str]  # (acronym, key, form)


@dataclass
class AcronymUpdate:
    """What a run did: records read, and the lexicon's size afterwards (None: not rewritten)."""

    records: int
    acronyms: int | None = None


def definitions_of(record_json: bytes) -> tuple[str, list[Row]]:
    """A stored record's id and its definitions (one form per acronym and meaning)."""
    data = orjson.loads(record_json)
    found: dict[tuple[str, str], str] = {}
    for d in sorted(record_definitions([data.get("title"), data.get("abstract")]), key=_order):
        found.setdefault((d.acronym, d.key), d.form)
    return data["id"], [(a, k, f) for (a, k), f in found.items()]


def _order(d: Definition) -> tuple[str, str, str]:
    return (d.acronym, d.key, d.form)


def _apply(conn: sqlite3.Connection, batch: list[tuple[str, list[Row]]]) -> None:
    """Inside a transaction: replace these records' rows and move the counts by the difference."""
    ids = [rid for rid, _ in batch]
    delta: Counter[Row] = Counter()
    for _, acronym, key, form in select_in(
            conn, "SELECT record_id, acronym, key, form FROM acronym_definitions WHERE record_id IN ({marks})", ids):
        delta[(acronym, key, form)] -= 1
    for _, rows in batch:
        delta.update(rows)
    conn.executemany("DELETE FROM acronym_definitions WHERE record_id = ?", [(rid,) for rid in ids])
    conn.executemany("INSERT INTO acronym_definitions (record_id, acronym, key, form) VALUES (?,?,?,?)",
                     [(rid, *row) for rid, rows in batch for row in rows])
    conn.executemany(
        "INSERT INTO acronym_counts (acronym, key, form, records) VALUES (?,?,?,?) "
        "ON CONFLICT(acronym, key, form) DO UPDATE SET records = records + excluded.records",
        [(*row, n) for row, n in delta.items() if n])
    conn.execute("DELETE FROM acronym_counts WHERE records <= 0")


def _start(store: Store, rebuild: bool) -> int:
    """The tables ready, emptied for a new miner or a rebuild; the ``seq`` to read from."""
    store.ensure_tables(SCHEMA)
    if rebuild or store.get_meta(MINER_META_KEY) != MINER_VERSION:
        with store.transaction() as conn:
            conn.execute("DELETE FROM acronym_definitions")
            conn.execute("DELETE FROM acronym_counts")
            store.set_meta(SEQ_META_KEY, "0", conn)
            store.set_meta(MINER_META_KEY, MINER_VERSION, conn)
        return 0
    return int(store.get_meta(SEQ_META_KEY) or 0)


def count_definitions(store: Store, rebuild: bool = False) -> int:
    """Bring the two tables up to date with the store; how many records were read."""
    since = _start(store, rebuild)
    done = 0
    batch: list[tuple[str, list[Row]]] = []
    last = since
    for seq, blob in store.iter_json_since(since, BATCH):
        batch.append(definitions_of(blob))
        last = seq
        if len(batch) >= BATCH:
            done += _commit(store, batch, last)
    return done + _commit(store, batch, last)


def _commit(store: Store, batch: list[tuple[str, list[Row]]], last: int) -> int:
    if not batch:
        return 0
    with store.transaction() as conn:
        _apply(conn, batch)
        store.set_meta(SEQ_META_KEY, str(last), conn)
    n = len(batch)
    batch.clear()
    return n


def count_rows(store: Store) -> Iterable[tuple[str, str, str, int]]:
    """The count rows of every acronym with a meaning seen often enough (the others cannot enter
    the lexicon, and at millions of records they are most rows)."""
    with store.reading() as conn:
        return conn.execute(
            "SELECT acronym, key, form, records FROM acronym_counts WHERE acronym IN "
            "(SELECT acronym FROM acronym_counts GROUP BY acronym, key HAVING SUM(records) >= ?)",
            (MIN_RECORDS,)).fetchall()


def lexicon_of(store: Store) -> Lexicon:
    """The lexicon the store's counts make now."""
    store.ensure_tables(SCHEMA)
    return build_lexicon(count_rows(store), store.count())


def update_acronyms(store: Store, index_dir: Path, rebuild: bool = False) -> AcronymUpdate:
    """``searchnasa index``: count the definitions of the records changed since the last run and,
    when any were read (or the file is missing), write the lexicon beside the index."""
    read = count_definitions(store, rebuild)
    if read == 0 and lexicon_path(index_dir).exists():
        return AcronymUpdate(0)
    lexicon = lexicon_of(store)
    write_lexicon(index_dir, lexicon)
    return AcronymUpdate(read, len(lexicon))
