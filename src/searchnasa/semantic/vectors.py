"""Durable storage of embeddings, so a record is embedded once and only again when its text changes.

Two small SQLite files, both keyed so work is never repeated:

- :class:`VectorStore` (``<home>/vectors/vectors.sqlite3``): one row per record id with the key of
  the text it was embedded from. ``searchnasa embed`` walks the store's change sequence from the
  last checkpoint, embeds only records whose text key differs, and commits batch by batch with the
  checkpoint, so a killed run resumes where it stopped.
- :class:`EmbeddingCache`: vectors by text key alone, shared across homes. Evaluation builds a
  fresh temporary home for every run; the cache spares the second run all the model's work.

Vectors are stored as float16 (768 bytes each): cosine error about 1e-4, half the disk of float32.
Each row also carries the store version it was written at (``version``, indexed), so a saved HNSW
index built at version V learns exactly which vectors are newer than itself
(:meth:`VectorStore.load_since`) without reading the rest.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from searchnasa.errors import StoreError
from searchnasa.records import Record
from searchnasa.store.sqlite_util import select_in
from searchnasa.semantic.embedder import Embedder, get_embedder
from searchnasa.semantic.model import DIM, MODEL_NAME, record_text
from searchnasa.semantic.text_keys import text_key

STORE_DTYPE = np.float16


def _to_blob(vec: np.ndarray) -> bytes:
    return np.asarray(vec, dtype=STORE_DTYPE).tobytes()


def from_blobs(blobs: list[bytes]) -> np.ndarray:
    """Stored float16 blobs as one float32 matrix (what every reader of the ``vec`` column needs)."""
    if not blobs:
        return np.zeros((0, DIM), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=STORE_DTYPE).reshape(len(blobs), DIM).astype(np.float32)


def _vectors_by(conn: sqlite3.Connection, sql: str, keys: list[str]) -> dict[str, np.ndarray]:
    """``key -> vector`` for the rows of a ``(key, vec)`` lookup over ``keys``."""
    rows = list(select_in(conn, sql, keys))
    if not rows:
        return {}
    mat = from_blobs([r[1] for r in rows])
    return {r[0]: mat[i] for i, r in enumerate(rows)}


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=30000")
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from exc
    return conn


class EmbeddingCache:
    """Vectors by text key, reusable by any home (see module docstring)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.conn = _connect(self.path)
        self.conn.execute("CREATE TABLE IF NOT EXISTS cache (key TEXT PRIMARY KEY, vec BLOB NOT NULL)")

    def get_many(self, keys: list[str]) -> dict[str, np.ndarray]:
        return _vectors_by(self.conn, "SELECT key, vec FROM cache WHERE key IN ({marks})", keys)

    def put_many(self, items: Iterable[tuple[str, np.ndarray]]) -> None:
        rows = [(k, _to_blob(v)) for k, v in items]
        with self.conn:
            self.conn.execute("BEGIN")
            self.conn.executemany("INSERT OR REPLACE INTO cache (key, vec) VALUES (?, ?)", rows)

    def close(self) -> None:
        self.conn.close()


def embed_texts(texts: list[str], embedder: Embedder | None, cache: EmbeddingCache | None,
                batch_size: int = 32) -> np.ndarray:
    """Vectors for ``texts``, taking what the cache has and embedding (and caching) the rest."""
    keys = [text_key(t) for t in texts]
    have = cache.get_many(keys) if cache else {}
    missing = [i for i, k in enumerate(keys) if k not in have]
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    if missing:
        embedder = embedder or get_embedder()
        fresh = embedder.encode([texts[i] for i in missing], batch_size=batch_size)
        if cache:
            cache.put_many((keys[i], fresh[j]) for j, i in enumerate(missing))
        for j, i in enumerate(missing):
            out[i] = fresh[j]
    for i, k in enumerate(keys):
        if k in have:
            out[i] = have[k]
    return out


@dataclass
class EmbedReport:
    """What one ``embed`` run did."""

    seen: int = 0
    embedded: int = 0
    from_cache: int = 0
    unchanged: int = 0
    empty: int = 0

    def summary(self) -> str:
        return (f"{self.seen} records seen: {self.embedded} embedded, {self.from_cache} from cache, "
                f"{self.unchanged} unchanged, {self.empty} without text")


@dataclass
class PendingBatch:
    """A batch of records sorted by what each needs (see :func:`sort_pending`)."""

    texts: dict[str, str]            # id -> the text it is embedded from
    keys: dict[str, str]             # id -> that text's key, for records with any text
    todo: list[str]                  # ids whose stored vector is missing or stale, in batch order
    cached: dict[str, np.ndarray]    # text key -> vector, found in a cache
    need: list[str]                  # ids the model has to embed

    def need_texts(self) -> list[str]:
        return [self.texts[r] for r in self.need]

    def fresh(self, vecs: np.ndarray, report: EmbedReport, cache: Any) -> dict[str, np.ndarray]:
        """The model's vectors for :attr:`need` (in that order) by text key, counted and cached."""
        fresh = {self.keys[r]: vecs[i] for i, r in enumerate(self.need)}
        report.embedded += len(self.need)
        if cache is not None:
            cache.put_many(fresh.items())
        return fresh

    def rows(self, fresh: dict[str, np.ndarray]) -> list[tuple[str, str, np.ndarray]]:
        """``(id, key, vector)`` of every record to write, from a cache or ``fresh`` (by key)."""
        found = {**self.cached, **fresh}
        return [(r, self.keys[r], found[self.keys[r]]) for r in self.todo]


def sort_pending(records: Sequence[Record], vstore: VectorStore, cache: Any, report: EmbedReport,
                 only_cached: bool = False) -> PendingBatch:
    """Sort records into unchanged (the stored vector's key matches their text: skipped), served by
    a cache, and needing the model; the in-process run and the Dask driver share this step, so both
    skip and count alike. ``only_cached``: records no cache serves are left for a later run."""
    texts = {rec.id: record_text(rec) for rec in records}
    keys = {rid: text_key(t) for rid, t in texts.items() if t}
    report.empty += len(texts) - len(keys)
    stored = vstore.keys_for(list(keys))
    todo = [rid for rid, k in keys.items() if stored.get(rid) != k]
    report.unchanged += len(keys) - len(todo)
    cached = cache.get_many([keys[r] for r in todo]) if (cache is not None and todo) else {}
    need = [r for r in todo if keys[r] not in cached]
    report.from_cache += len(todo) - len(need)
    if only_cached:
        todo, need = [r for r in todo if keys[r] in cached], []
    return PendingBatch(texts, keys, todo, cached, need)


class VectorStore:
    """One vector per record id, with the text key it came from and a resume checkpoint."""

    FILENAME = "vectors.sqlite3"

    def __init__(self, vectors_dir: Path) -> None:
        self.dir = Path(vectors_dir)
        self.path = self.dir / self.FILENAME
        self.conn = _connect(self.path)
        self.conn.executescript(
            """
            CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, key TEXT NOT NULL, vec BLOB NOT NULL,
                                                version INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            """
        )
        self._migrate()
        model = self.get_meta("model")
        if model is None:
            self.set_meta("model", MODEL_NAME)
        elif model != MODEL_NAME:
            raise StoreError(f"{self.path} holds {model} vectors, not {MODEL_NAME}: delete it and re-embed")
        if self.get_meta("uid") is None:
            self.set_meta("uid", uuid.uuid4().hex)

    def _migrate(self) -> None:
        """Stores written before vectors carried their version get the column (old rows: 0)."""
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(vectors)")}
        if "version" not in columns:
            try:
                self.conn.execute("ALTER TABLE vectors ADD COLUMN version INTEGER NOT NULL DEFAULT 0")
            except sqlite3.OperationalError as exc:  # another process (a serve worker) added it first
                if "duplicate column" not in str(exc):
                    raise
        self.conn.execute("CREATE INDEX IF NOT EXISTS vectors_by_version ON vectors (version)")

    # -- meta ---------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str, conn: sqlite3.Connection | None = None) -> None:
        (conn or self.conn).execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    @property
    def checkpoint_seq(self) -> int:
        """The store sequence number up to which every record has been embedded."""
        return int(self.get_meta("store_seq") or 0)

    # -- reads --------------------------------------------------------------------------------
    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]

    def keys_for(self, ids: list[str]) -> dict[str, str]:
        return dict(select_in(self.conn, "SELECT id, key FROM vectors WHERE id IN ({marks})", ids))

    def get_many(self, ids: list[str]) -> dict[str, np.ndarray]:
        return _vectors_by(self.conn, "SELECT id, vec FROM vectors WHERE id IN ({marks})", ids)

    def load_all(self) -> tuple[list[str], np.ndarray]:
        """Every id and its vector (float32), in id order: the input of the vector index."""
        ids: list[str] = []
        blobs: list[bytes] = []
        for rid, blob in self.conn.execute("SELECT id, vec FROM vectors ORDER BY id"):
            ids.append(rid)
            blobs.append(blob)
        return ids, from_blobs(blobs)

    def version(self) -> str:
        """Changes whenever vectors change, so a loaded index knows when to reload."""
        return self.get_meta("version") or "0"

    def uid(self) -> str:
        """This store's identity: a saved vector index built from another store is not reused."""
        return self.get_meta("uid") or ""

    def count_since(self, version: str) -> int:
        """How many vectors were written (new or changed) after ``version``."""
        return self.conn.execute("SELECT COUNT(*) FROM vectors WHERE version > ?", (int(version),)).fetchone()[0]

    def load_since(self, version: str) -> tuple[list[str], np.ndarray]:
        """The vectors written after ``version`` (float32, id order): what a saved index lacks.

        Read through the version index and sorted here: with ``ORDER BY id`` SQLite walked the
        whole table in id order instead, reading every vector to find none (a serving process does
        this on every load)."""
        rows = sorted(self.conn.execute(
            "SELECT id, vec FROM vectors INDEXED BY vectors_by_version WHERE version > ?", (int(version),)))
        return [rid for rid, _ in rows], from_blobs([blob for _, blob in rows])

    # -- writes -------------------------------------------------------------------------------
    def put_many(self, rows: list[tuple[str, str, np.ndarray]], store_seq: int | None = None) -> None:
        """Write ``(id, key, vector)`` rows and, in the same transaction, the resume checkpoint."""
        with closing(self.conn.cursor()) as cur:
            cur.execute("BEGIN IMMEDIATE")
            try:
                if rows:
                    # each row carries the version it was written at, so a saved vector index
                    # (built at some version) finds exactly the vectors newer than itself
                    version = int(self.get_meta("version") or 0) + 1
                    cur.executemany(
                        "INSERT OR REPLACE INTO vectors (id, key, vec, version) VALUES (?, ?, ?, ?)",
                        [(rid, key, _to_blob(vec), version) for rid, key, vec in rows],
                    )
                    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('version', ?)", (str(version),))
                if store_seq is not None:
                    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('store_seq', ?)", (str(store_seq),))
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise

    def embed_pending(
        self,
        records: Iterator[tuple[int, Record]],
        embedder: Embedder | None = None,
        cache: EmbeddingCache | None = None,
        batch_size: int = 64,
        on_batch: Callable[[int], None] | None = None,
        only_cached: bool = False,
    ) -> EmbedReport:
        """Embed the records that are new or whose title/abstract changed, batch by batch.

        ``records`` is the store's change stream from :attr:`checkpoint_seq`; each batch commits its
        vectors with the checkpoint, so an interrupted run loses at most one batch of work.
        ``only_cached`` takes vectors from ``cache`` alone (no model) and leaves the checkpoint
        alone, so a later full run still embeds whatever the cache lacked.
        """
        report = EmbedReport()
        batch: list[tuple[int, Record]] = []

        def flush() -> None:
            if not batch:
                return
            pending = sort_pending([rec for _, rec in batch], self, cache, report, only_cached)
            fresh: dict[str, np.ndarray] = {}
            if pending.need:
                vecs = (embedder or get_embedder()).encode(pending.need_texts(), batch_size=32)
                fresh = pending.fresh(vecs, report, cache)
            self.put_many(pending.rows(fresh), store_seq=None if only_cached else batch[-1][0])
            report.seen += len(batch)
            if on_batch:
                on_batch(len(batch))
            batch.clear()

        for seq, rec in records:
            batch.append((seq, rec))
            if len(batch) >= batch_size:
                flush()
        flush()
        return report

    def sample_keys(self, n: int) -> list[tuple[str, str]]:
        """Up to ``n`` stored ``(id, text key)`` pairs: enough to tell which backend made the vectors."""
        return self.conn.execute("SELECT id, key FROM vectors LIMIT ?", (n,)).fetchall()

    def close(self) -> None:
        self.conn.close()


def open_vectors(vectors_dir: Path) -> VectorStore:
    return VectorStore(vectors_dir)


def embedded_upto(vectors_dir: Path) -> int | None:
    """The store ``seq`` every record up to which is embedded, read without writing (a server's
    home may be read-only); None when the home holds no vectors."""
    path = Path(vectors_dir) / VectorStore.FILENAME
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'store_seq'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return int(row[0]) if row else 0
