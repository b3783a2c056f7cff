"""Split the store's change stream into partitions (seq ranges) of about equal record counts."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class SeqRange:
    """Records with ``lo < seq <= hi``; ``count`` of them (the last range may be shorter)."""

    index: int
    lo: int
    hi: int
    count: int


def seq_partitions(conn: sqlite3.Connection, since: int, size: int) -> Iterator[SeqRange]:
    """Ranges of ``size`` records each above ``since``, found lazily with the seq index.

    Lazy on purpose: a 4M-record store yields its partitions one query at a time (each an index
    walk of ``size`` rows), never a list of all seqs in memory.
    """
    if size < 1:
        raise ValueError("partition size must be at least 1")
    lo = since
    index = 0
    while True:
        row = conn.execute("SELECT seq FROM records WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?",
                           (lo, size - 1)).fetchone()
        if row is not None:
            yield SeqRange(index, lo, row[0], size)
            lo = row[0]
            index += 1
            continue
        rest = conn.execute("SELECT COUNT(*), MAX(seq) FROM records WHERE seq > ?", (lo,)).fetchone()
        if rest[0]:
            yield SeqRange(index, lo, rest[1], rest[0])
        return


class ContiguousCheckpoint:
    """The highest seq below which every partition is done, when partitions finish out of order.

    A resumable job may only checkpoint a seq once everything before it is written; partitions
    done early are remembered until the gap before them closes.
    """

    def __init__(self, start: int) -> None:
        self.value = start
        self._next = 0
        self._done: dict[int, int] = {}

    def done(self, part: SeqRange) -> int | None:
        """Mark ``part`` done; the new checkpoint if it moved, else None."""
        self._done[part.index] = part.hi
        moved = False
        while self._next in self._done:
            self.value = self._done.pop(self._next)
            self._next += 1
            moved = True
        return self.value if moved else None
