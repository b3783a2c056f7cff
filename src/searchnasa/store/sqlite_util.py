"""SQLite helpers shared by the store, the vector store, dedup and the identifier table."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

# SQLite caps the number of bound parameters per statement; lookups of many ids go in chunks.
IN_CHUNK = 500


def select_in(conn: sqlite3.Connection, sql: str, values: Sequence[Any]) -> Iterator[tuple]:
    """Rows of ``sql`` for every value, where ``sql`` holds ``IN ({marks})`` for the placeholders.

    Runs one statement per chunk of :data:`IN_CHUNK` values, so a page of 20 ids and a batch of
    50,000 take the same path.
    """
    for start in range(0, len(values), IN_CHUNK):
        chunk = list(values[start : start + IN_CHUNK])
        yield from conn.execute(sql.format(marks=",".join("?" * len(chunk))), chunk)
