"""SQLite helpers shared by the store, the vector store, dedup and the identifier table: chunked
``IN`` lookups and the mapping of SQLite failures to :class:`StoreError`."""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from searchnasa.errors import StoreError

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


@contextmanager
def sqlite_errors(path: Path) -> Iterator[None]:
    """Turn disk-full and corruption of the SQLite file at ``path`` into a StoreError the CLI and
    web can report."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        text = str(exc)
        if "disk is full" in text or "database or disk is full" in text:
            raise StoreError(f"disk full while writing {path}; nothing committed was lost") from exc
        raise StoreError(f"store error ({path}): {text}") from exc
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"store file {path} is not a valid database: {exc}") from exc
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise StoreError(f"disk full while writing {path}; nothing committed was lost") from exc
        raise
