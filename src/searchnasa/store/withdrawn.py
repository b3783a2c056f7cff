"""Records withdrawn upstream, and which records each harvest selection has seen.

Why a table of its own, keyed by id with the date: a record the source no longer serves stays in
the store (the source of truth keeps what it was told, and its record page can still say what it
was), but search and related papers must stop offering it. ``withdrawn`` holds the id, the day a
reconcile pass found it gone and the selection whose listing missed it; marking or restoring a
record gives it a new ``seq``, so every derived stage that follows ``seq`` (the lexical index
above all) sees the change on its next incremental update, exactly as it sees an edit.

``harvest_seen`` says which selection (a harvest checkpoint name: the source plus its query or
date range) read which record, in which run: a reconcile pass compares the run that just listed
the selection with what earlier runs stored under it. A harvest that reads a withdrawn record
again restores it in the same transaction as the page it came in.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date

from searchnasa.store.database import Store
from searchnasa.store.sqlite_util import select_in

SCHEMA = """
CREATE TABLE IF NOT EXISTS withdrawn (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    withdrawn_on TEXT NOT NULL,
    selection TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS harvest_seen (
    selection TEXT NOT NULL,
    id TEXT NOT NULL,
    run TEXT NOT NULL,
    PRIMARY KEY (selection, id)
) WITHOUT ROWID;
"""


def ensure_tables(store: Store) -> None:
    """Create the two tables in a writable store (a harvest does this before its first page)."""
    store.ensure_tables(SCHEMA)


def _bump_seq(conn: sqlite3.Connection, ids: list[str]) -> None:
    """Give ``ids`` new sequence numbers, so derived stages redo them (drop or re-add)."""
    seq = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM records").fetchone()[0]
    conn.executemany("UPDATE records SET seq = ? WHERE id = ?",
                     [(seq + n, rid) for n, rid in enumerate(ids, start=1)])


@dataclass
class SeenMarker:
    """Written inside a harvest page's upsert transaction (``Store.upsert(..., also=marker)``):
    the page's ids are seen by ``selection`` in ``run``, and any of them marked withdrawn is back."""

    selection: str
    run: str
    ids: list[str]
    restored: int = 0

    def __call__(self, conn: sqlite3.Connection) -> None:
        if not self.ids:
            return
        conn.executemany(
            "INSERT INTO harvest_seen (selection, id, run) VALUES (?,?,?) "
            "ON CONFLICT(selection, id) DO UPDATE SET run = excluded.run",
            [(self.selection, rid, self.run) for rid in self.ids])
        back = [row[0] for row in select_in(conn, "SELECT id FROM withdrawn WHERE id IN ({marks})", self.ids)]
        if back:
            conn.executemany("DELETE FROM withdrawn WHERE id = ?", [(rid,) for rid in back])
            _bump_seq(conn, back)
        self.restored = len(back)


def unseen(store: Store, selection: str, run: str, source: str, whole_source: bool) -> list[str]:
    """Stored records of ``selection`` that its listing in ``run`` did not return (and not already
    withdrawn): every record of ``source`` for the source's main selection (imports included),
    else the records earlier runs of the selection stored."""
    with store.reading() as conn:
        if whole_source:
            rows = conn.execute(
                "SELECT r.id FROM records r WHERE r.source = ? "
                "AND NOT EXISTS (SELECT 1 FROM harvest_seen s WHERE s.selection = ? AND s.id = r.id AND s.run = ?) "
                "AND NOT EXISTS (SELECT 1 FROM withdrawn w WHERE w.id = r.id) ORDER BY r.id",
                (source, selection, run))
        else:
            rows = conn.execute(
                "SELECT s.id FROM harvest_seen s JOIN records r ON r.id = s.id "
                "WHERE s.selection = ? AND s.run != ? "
                "AND NOT EXISTS (SELECT 1 FROM withdrawn w WHERE w.id = s.id) ORDER BY s.id",
                (selection, run))
        return [row[0] for row in rows]


def mark_withdrawn(store: Store, ids: list[str], on: date, selection: str,
                   checkpoint: tuple[str, dict] | None = None) -> int:
    """Mark ``ids`` withdrawn upstream on ``on``; one transaction, with the harvest's checkpoint."""
    with store.transaction() as conn:
        present = [row[0] for row in select_in(
            conn, "SELECT id FROM records WHERE id IN ({marks}) "
                  "AND id NOT IN (SELECT id FROM withdrawn)", ids)] if ids else []
        conn.executemany(
            "INSERT INTO withdrawn (id, source, withdrawn_on, selection) VALUES (?,?,?,?)",
            [(rid, rid.split(":", 1)[0], on.isoformat(), selection) for rid in present])
        _bump_seq(conn, present)
        if checkpoint is not None:
            store.set_checkpoint(checkpoint[0], checkpoint[1], conn=conn)
    return len(present)


def withdrawn_among(store: Store, ids: list[str]) -> dict[str, str]:
    """``id -> withdrawn_on`` for those of ``ids`` withdrawn upstream (none in a store that has
    never run a harvest since withdrawals existed)."""
    if not ids or not store.has_table("withdrawn"):
        return {}
    with store.reading() as conn:
        return dict(select_in(conn, "SELECT id, withdrawn_on FROM withdrawn WHERE id IN ({marks})", ids))


def withdrawn_on(store: Store, record_id: str) -> str | None:
    """The day ``record_id`` was found withdrawn upstream, or None."""
    return withdrawn_among(store, [record_id]).get(record_id)


def count_withdrawn(store: Store) -> int:
    if not store.has_table("withdrawn"):
        return 0
    with store.reading() as conn:
        return conn.execute("SELECT COUNT(*) FROM withdrawn").fetchone()[0]


def iter_index_rows_since(store: Store, since_seq: int = 0,
                          batch_size: int = 2000) -> Iterator[tuple[int, bytes, bool]]:
    """``(seq, stored record JSON, withdrawn)`` in seq order: the indexer drops a withdrawn record
    instead of (re)adding it."""
    if not store.has_table("withdrawn"):
        for seq, blob in store.iter_json_since(since_seq, batch_size):
            yield seq, blob, False
        return
    last = since_seq
    while True:
        with store.reading() as conn:
            rows = conn.execute(
                "SELECT r.seq, r.record, w.id IS NOT NULL FROM records r "
                "LEFT JOIN withdrawn w ON w.id = r.id WHERE r.seq > ? ORDER BY r.seq LIMIT ?",
                (last, batch_size)).fetchall()
        if not rows:
            return
        for seq, blob, gone in rows:
            yield seq, blob, bool(gone)
        last = rows[-1][0]
