"""The store: SQLite in WAL mode, the source of truth every other stage is rebuilt from.

Why this shape:
- Upsert by id with a content hash, so re-importing or re-harvesting the same data changes nothing.
- Whole batches in one transaction, so a process killed mid-import leaves whole batches or none,
  and re-running the import completes it (upserts are idempotent).
- Every change gets a sequence number (``seq``) so the index and the embedder can do only the
  records that changed since they last ran.
- The raw payload is kept (zstd-compressed) with its format, so records can be re-normalized after
  a mapping fix without re-harvesting.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson
import zstandard

from searchnasa.errors import NotFound, StoreError
from searchnasa.records import DEFAULT_FIDELITY, Record, fidelity_of, hash_json
from searchnasa.store.sqlite_util import select_in, sqlite_errors

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    record BLOB NOT NULL,
    raw_format TEXT NOT NULL,
    raw BLOB,
    seq INTEGER NOT NULL,
    year INTEGER,
    decade INTEGER,
    document_type TEXT,
    has_abstract INTEGER NOT NULL,
    first_seen TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_seq ON records(seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS checkpoints (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
"""

_ZSTD_LEVEL = 3
RECORDS_FORMAT = "records-jsonl"  # our own export: the raw payload is the record itself


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class UpsertCounts:
    """What an upsert did; ``skipped`` counts poorer copies that did not replace richer ones."""

    new: int = 0
    changed: int = 0
    unchanged: int = 0
    kept_richer: int = 0
    changed_ids: list[str] = field(default_factory=list)

    def add(self, other: "UpsertCounts") -> None:
        self.new += other.new
        self.changed += other.changed
        self.unchanged += other.unchanged
        self.kept_richer += other.kept_richer
        self.changed_ids.extend(other.changed_ids)


@dataclass
class StoredItem:
    """A record to store, with the raw payload it was mapped from."""

    record: Record
    raw_format: str
    raw: Any
    fidelity: int = DEFAULT_FIDELITY


class Store:
    """One SQLite file under ``SEARCHNASA_HOME``. Safe for one writer and many readers."""

    def __init__(self, path: Path, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._local = threading.local()
        self._cctx = zstandard.ZstdCompressor(level=_ZSTD_LEVEL)
        if not readonly:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.ensure_tables(SCHEMA)

    # -- connection ---------------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        """One connection per thread (sqlite3 connections must not cross threads)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            if self.readonly:
                if not self.path.exists():
                    raise StoreError(f"no store at {self.path}: import or harvest records first")
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
            else:
                conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=30000")
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def _guard(self) -> AbstractContextManager[None]:
        return sqlite_errors(self.path)

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection for reads outside a transaction, with the store's error
        mapping, for the store's other tables (identifiers, clusters, dedup keys and pairs)."""
        with self._guard():
            yield self.conn

    def ensure_tables(self, script: str) -> None:
        """Run a ``CREATE ... IF NOT EXISTS`` script: the tables a later stage keeps in the store."""
        with self._guard():
            self.conn.executescript(script)

    def has_table(self, name: str) -> bool:
        """Whether ``name`` exists (a stage's tables are missing until it first runs)."""
        with self._guard():
            row = self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,)).fetchone()
        return row is not None

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``: a batch is stored whole or not at all."""
        with self._guard():
            conn = self.conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:  # SQLite has already rolled back after a disk-full error
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    # -- writing ------------------------------------------------------------------------------
    def _compress(self, raw: Any) -> bytes:
        return self._cctx.compress(orjson.dumps(raw))

    def _raw_blob(self, item: StoredItem) -> bytes | None:
        """The compressed raw payload; none for our own JSON Lines, whose payload *is* the record
        (the stored record JSON stands in for it in :meth:`iter_raw`, so nothing is lost and the
        commonest import, the bundled sample, neither serializes nor stores each record twice)."""
        if item.raw_format == RECORDS_FORMAT:
            return None
        return self._compress(item.raw)

    def upsert(self, items: Iterable[StoredItem],
               checkpoint: tuple[str, dict[str, Any]] | None = None,
               also: Callable[[sqlite3.Connection], None] | None = None) -> UpsertCounts:
        """Insert new records, replace changed ones, leave identical ones alone; one transaction.

        A copy from a poorer format (e.g. a CSV flattening) never replaces a copy from a richer one
        (the API JSON) of the same record. A harvest passes its ``checkpoint`` so the checkpoint
        and the records it covers commit together, and ``also`` for its own bookkeeping in the same
        transaction (which records its selection has seen: ``store/withdrawn.py``).
        """
        batch: dict[str, StoredItem] = {}
        for item in items:
            batch[item.record.id] = item  # the same id twice in a batch: the last copy wins
        counts = UpsertCounts()
        if not batch and checkpoint is None and also is None:
            return counts
        now = _now()
        with self.transaction() as conn:
            existing: dict[str, tuple[str, str]] = {}
            for rid, digest, fmt in select_in(
                    conn, "SELECT id, content_hash, raw_format FROM records WHERE id IN ({marks})", list(batch)):
                existing[rid] = (digest, fmt)
            seq = conn.execute("SELECT COALESCE(MAX(seq), 0) FROM records").fetchone()[0]
            rows = []
            for rid, item in batch.items():
                rec = item.record
                blob = rec.to_json()
                digest = hash_json(blob)
                old = existing.get(rid)
                if old is not None:
                    if old[0] == digest:
                        counts.unchanged += 1
                        continue
                    if fidelity_of(old[1]) > item.fidelity:
                        counts.kept_richer += 1
                        continue
                    counts.changed += 1
                else:
                    counts.new += 1
                counts.changed_ids.append(rid)
                seq += 1
                rows.append((
                    rid, rec.source, digest, blob, item.raw_format, self._raw_blob(item),
                    seq, rec.year, (rec.year // 10 * 10) if rec.year else None, rec.document_type,
                    1 if rec.abstract else 0, now, now,
                ))
            conn.executemany(
                """INSERT INTO records (id, source, content_hash, record, raw_format, raw, seq, year,
                       decade, document_type, has_abstract, first_seen, updated_at)
                   VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
                   ON CONFLICT(id) DO UPDATE SET
                       source=excluded.source, content_hash=excluded.content_hash,
                       record=excluded.record, raw_format=excluded.raw_format, raw=excluded.raw,
                       seq=excluded.seq, year=excluded.year, decade=excluded.decade,
                       document_type=excluded.document_type, has_abstract=excluded.has_abstract,
                       updated_at=excluded.updated_at""",
                rows,
            )
            if also is not None:
                also(conn)
            if checkpoint is not None:
                self.set_checkpoint(checkpoint[0], checkpoint[1], conn=conn)
        return counts

    # -- reading ------------------------------------------------------------------------------
    def get(self, record_id: str) -> Record:
        with self._guard():
            row = self.conn.execute("SELECT record FROM records WHERE id = ?", (record_id,)).fetchone()
        if row is None:
            raise NotFound(f"no record {record_id!r}")
        return Record.from_json(row[0])

    def get_many(self, ids: list[str]) -> dict[str, Record]:
        out: dict[str, Record] = {}
        with self._guard():
            for rid, blob in select_in(self.conn, "SELECT id, record FROM records WHERE id IN ({marks})", ids):
                out[rid] = Record.from_json(blob)
        return out

    def exists(self, record_id: str) -> bool:
        with self._guard():
            return self.conn.execute("SELECT 1 FROM records WHERE id = ?", (record_id,)).fetchone() is not None

    def count(self) -> int:
        with self._guard():
            return self.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]

    def max_seq(self) -> int:
        with self._guard():
            return self.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM records").fetchone()[0]

    def count_since(self, since_seq: int) -> int:
        """How many records changed after ``since_seq``: the work a derived stage has left."""
        with self._guard():
            return self.conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (since_seq,)).fetchone()[0]

    def json_between(self, after_seq: int, upto_seq: int) -> list[tuple[int, bytes]]:
        """``(seq, stored record JSON)`` with ``after_seq < seq <= upto_seq``, in seq order: one
        partition of a batch job."""
        with self._guard():
            return self.conn.execute("SELECT seq, record FROM records WHERE seq > ? AND seq <= ? ORDER BY seq",
                                     (after_seq, upto_seq)).fetchall()

    def iter_records(self, since_seq: int = 0, batch_size: int = 2000) -> Iterator[tuple[int, Record]]:
        """Stream ``(seq, record)`` in seq order, in pages, never holding the whole store."""
        for seq, blob in self.iter_json_since(since_seq, batch_size):
            yield seq, Record.from_json(blob)

    def iter_json_since(self, since_seq: int = 0, batch_size: int = 2000) -> Iterator[tuple[int, bytes]]:
        """Stream ``(seq, stored record JSON)`` in seq order, a page at a time: the indexer's input,
        which needs no re-validation (every stored record was validated on the way in)."""
        last = since_seq
        while True:
            with self._guard():
                rows = self.conn.execute(
                    "SELECT seq, record FROM records WHERE seq > ? ORDER BY seq LIMIT ?", (last, batch_size)
                ).fetchall()
            if not rows:
                return
            yield from rows
            last = rows[-1][0]

    def iter_json(self, batch_size: int = 5000) -> Iterator[bytes]:
        """Stream the stored record JSON as-is (the export path needs no re-validation)."""
        for _, blob in self.iter_json_since(0, batch_size):
            yield blob

    def iter_raw(self, batch_size: int = 2000) -> Iterator[tuple[str, str, Any]]:
        """Stream ``(id, raw_format, raw_payload)`` for re-normalization.

        Records imported from our own JSON Lines keep no separate raw copy: their payload is the
        stored record, given back as a dict like any other payload."""
        dctx = zstandard.ZstdDecompressor()
        last = ""
        while True:
            with self._guard():
                rows = self.conn.execute(
                    "SELECT id, raw_format, raw, CASE WHEN raw IS NULL THEN record END FROM records "
                    "WHERE id > ? ORDER BY id LIMIT ?", (last, batch_size)
                ).fetchall()
            if not rows:
                return
            for rid, fmt, raw, record in rows:
                if raw is not None:
                    yield rid, fmt, orjson.loads(dctx.decompress(raw))
                else:
                    yield rid, fmt, orjson.loads(record) if fmt == RECORDS_FORMAT else None
            last = rows[-1][0]

    def stats(self) -> dict[str, Any]:
        """Counts by source, decade and document type, and what is missing: the ``stats`` command."""
        with self._guard():
            c = self.conn
            total = c.execute("SELECT COUNT(*) FROM records").fetchone()[0]
            by_source = dict(c.execute("SELECT source, COUNT(*) FROM records GROUP BY source ORDER BY source"))
            by_decade = {
                (str(d) + "s" if d is not None else "unknown"): n
                for d, n in c.execute("SELECT decade, COUNT(*) FROM records GROUP BY decade ORDER BY decade")
            }
            by_type = {
                (t or "unknown"): n
                for t, n in c.execute(
                    "SELECT document_type, COUNT(*) FROM records GROUP BY document_type ORDER BY 2 DESC")
            }
            no_year = c.execute("SELECT COUNT(*) FROM records WHERE year IS NULL").fetchone()[0]
            no_abstract = c.execute("SELECT COUNT(*) FROM records WHERE has_abstract = 0").fetchone()[0]
            by_format = dict(c.execute("SELECT raw_format, COUNT(*) FROM records GROUP BY raw_format"))
        return {
            "total": total,
            "by_source": by_source,
            "by_decade": by_decade,
            "by_document_type": by_type,
            "by_format": by_format,
            "without_date": no_year,
            "year_null": no_year,
            "without_abstract": no_abstract,
        }

    # -- checkpoints --------------------------------------------------------------------------
    def get_checkpoint(self, name: str) -> dict[str, Any] | None:
        with self._guard():
            row = self.conn.execute("SELECT state FROM checkpoints WHERE name = ?", (name,)).fetchone()
        return orjson.loads(row[0]) if row else None

    def set_checkpoint(self, name: str, state: dict[str, Any], conn: sqlite3.Connection | None = None) -> None:
        """Write a checkpoint; pass the open transaction's connection to commit it with a batch."""
        sql = ("INSERT INTO checkpoints (name, state, updated_at) VALUES (?,?,?) "
               "ON CONFLICT(name) DO UPDATE SET state=excluded.state, updated_at=excluded.updated_at")
        self._write(sql, (name, orjson.dumps(state).decode(), _now()), conn)

    def get_meta(self, key: str) -> str | None:
        with self._guard():
            row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        """Write a meta value; pass the open transaction's connection to commit it with a batch."""
        self._write("INSERT INTO meta (key, value) VALUES (?,?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                    (key, value), conn)

    def delete_meta(self, key: str, conn: sqlite3.Connection | None = None) -> None:
        """Forget a meta value (a derived stage's checkpoint: it starts over)."""
        self._write("DELETE FROM meta WHERE key = ?", (key,), conn)

    def _write(self, sql: str, args: tuple[Any, ...], conn: sqlite3.Connection | None) -> None:
        """One statement in the caller's open transaction (``conn``), else in a transaction of its own."""
        if conn is not None:
            conn.execute(sql, args)
            return
        with self.transaction() as c:
            c.execute(sql, args)


def open_store(home: Path, readonly: bool = False) -> Store:
    return Store(Path(home) / "store.sqlite3", readonly=readonly)
