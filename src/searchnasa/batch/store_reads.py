"""The batch stage's raw reads of the record store, kept in this one place.

The store is being given a public query API (no ``store.conn`` outside the store); until it has
one for these reads, the seq-range reads the embed run needs go through here, so switching them
is one edit.
"""

from __future__ import annotations

import sqlite3

from searchnasa.records import Record
from searchnasa.store import Store


def store_connection(store: Store) -> sqlite3.Connection:
    """The store's SQLite connection, for ``batch.partitions.seq_partitions``."""
    return store.conn


def records_in(store: Store, lo: int, hi: int) -> list[Record]:
    """The records with ``lo < seq <= hi``, in seq order (one partition)."""
    rows = store.conn.execute("SELECT record FROM records WHERE seq > ? AND seq <= ? ORDER BY seq",
                              (lo, hi)).fetchall()
    return [Record.from_json(r[0]) for r in rows]


def count_after(store: Store, since: int) -> int:
    """How many records changed after ``since`` (what an incremental run has to walk)."""
    return store.conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (since,)).fetchone()[0]
