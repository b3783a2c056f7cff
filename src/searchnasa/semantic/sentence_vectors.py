"""Sentence vectors: one vector per sentence of a record's title + abstract, stored beside the
record's own vector, so related papers can re-rank their head by the best sentence matches
without embedding anything at request time (bench/README.md, "Sentence vectors (issue 17)").

Stored in the vector store's file (``vectors/vectors.sqlite3``), table ``sentences``: per record
id the key of the text its sentences came from (the same text key as its record vector) and the
sentence vectors as int8 with one float32 scale per sentence (388 bytes a sentence, cosine error
about 1e-3; float16 would double that for nothing the re-rank can see). A row is served only
while its key equals the record vector's key, so a record whose text changed falls back to the
ranking without sentences until ``searchnasa embed --sentences`` catches up. Optional: a home
without the table ranks exactly as before. The sentences themselves are not stored: they are
split again from the record (``searchnasa.sentences``, deterministic) when a pair is shown.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path

import numpy as np

from searchnasa.records import Record
from searchnasa.sentences import record_sentences
from searchnasa.semantic.bundle import dequantize, quantize
from searchnasa.semantic.embedder import Embedder
from searchnasa.semantic.model import DIM, record_text
from searchnasa.semantic.text_keys import text_key
from searchnasa.semantic.vectors import EmbedReport, EmbeddingCache, VectorStore, _connect, embed_texts
from searchnasa.store.sqlite_util import select_in

SCHEMA = """
CREATE TABLE IF NOT EXISTS sentences (id TEXT PRIMARY KEY, key TEXT NOT NULL, q BLOB NOT NULL,
                                      scale BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
CHECKPOINT = "sentence_seq"
# A serving process without sentence vectors looks for the table again this often (every hybrid
# search asks; opening the file each time would cost more than the search's own lookups).
RECHECK_SECONDS = 2.0


def pack(matrix: np.ndarray) -> tuple[bytes, bytes]:
    """Sentence vectors (n x DIM) as int8 bytes and their float32 scales."""
    q, scale = quantize(np.asarray(matrix, dtype=np.float32))
    return q.tobytes(), scale.tobytes()


def unpack(q: bytes, scale: bytes) -> np.ndarray:
    """Stored bytes back as unit vectors (n x DIM, float32)."""
    scales = np.frombuffer(scale, dtype=np.float32)
    return dequantize(np.frombuffer(q, dtype=np.int8).reshape(len(scales), DIM), scales)


class SentenceStore:
    """Writes and reads the ``sentences`` table of one home's vector store."""

    def __init__(self, vectors_dir: Path) -> None:
        self.path = Path(vectors_dir) / VectorStore.FILENAME
        self.conn = _connect(self.path)
        self.conn.executescript(SCHEMA)

    @property
    def checkpoint_seq(self) -> int:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (CHECKPOINT,)).fetchone()
        return int(row[0]) if row else 0

    def count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM sentences").fetchone()[0]

    def keys_for(self, ids: list[str]) -> dict[str, str]:
        return dict(select_in(self.conn, "SELECT id, key FROM sentences WHERE id IN ({marks})", ids))

    def put_many(self, rows: list[tuple[str, str, np.ndarray]], store_seq: int | None) -> None:
        """Write ``(id, text key, sentence matrix)`` rows and the checkpoint in one transaction."""
        with closing(self.conn.cursor()) as cur:
            cur.execute("BEGIN IMMEDIATE")
            try:
                cur.executemany("INSERT OR REPLACE INTO sentences (id, key, q, scale) VALUES (?, ?, ?, ?)",
                                [(rid, key, *pack(m)) for rid, key, m in rows])
                if store_seq is not None:
                    cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (CHECKPOINT, str(store_seq)))
                cur.execute("COMMIT")
            except BaseException:
                cur.execute("ROLLBACK")
                raise

    def close(self) -> None:
        self.conn.close()


def _pending(records: list[Record], sstore: SentenceStore) -> list[tuple[str, str, list[str]]]:
    """``(id, text key, sentences)`` of the records whose stored sentences are missing or stale."""
    keyed = {r.id: (text_key(t), r) for r in records if (t := record_text(r))}
    stored = sstore.keys_for(list(keyed))
    return [(rid, key, record_sentences(rec.title, rec.abstract))
            for rid, (key, rec) in keyed.items() if stored.get(rid) != key]


def _only_cached(todo: list[tuple[str, str, list[str]]],
                 cache: EmbeddingCache | None) -> tuple[list[tuple[str, str, list[str]]], np.ndarray]:
    """The records of ``todo`` whose every sentence ``cache`` holds, and those sentences' vectors
    in order (one cache lookup: they need no second pass through :func:`embed_texts`)."""
    keys = {s: text_key(s) for _, _, sents in todo for s in sents}
    have = cache.get_many(list(set(keys.values()))) if cache is not None else {}
    kept = [t for t in todo if all(keys[s] in have for s in t[2])]
    rows = [have[keys[s]] for _, _, sents in kept for s in sents]
    return kept, (np.stack(rows).astype(np.float32, copy=False) if rows else np.zeros((0, DIM), np.float32))


def embed_sentences_pending(vectors_dir: Path, records: Iterator[tuple[int, Record]],
                            embedder: Embedder | None = None, cache: EmbeddingCache | None = None,
                            batch_size: int = 64, on_batch: Callable[[int], None] | None = None,
                            only_cached: bool = False) -> EmbedReport:
    """Embed the sentences of records that are new or changed since the last run, batch by batch,
    each batch committed with its checkpoint (a killed run resumes). Sentences go through ``cache``
    like record texts, so a rerun or a second home embeds nothing it has seen. ``only_cached``:
    store only the records whose every sentence the cache holds and never load the model (seeding a
    home from the bundled sample; the checkpoint is left alone, so ``embed --sentences`` still
    visits every record)."""
    sstore = SentenceStore(vectors_dir)
    report = EmbedReport()
    batch: list[tuple[int, Record]] = []

    def flush() -> None:
        todo = [t for t in _pending([rec for _, rec in batch], sstore) if t[2]]
        if only_cached:
            todo, vecs = _only_cached(todo, cache)
        else:  # the model loads only if the cache lacks a sentence
            flat = [s for _, _, sents in todo for s in sents]
            vecs = embed_texts(flat, embedder, cache, batch_size=64) if flat else np.zeros((0, DIM), np.float32)
        rows, i = [], 0
        for rid, key, sents in todo:
            rows.append((rid, key, vecs[i:i + len(sents)]))
            i += len(sents)
        sstore.put_many(rows, store_seq=None if only_cached else batch[-1][0])
        report.seen += len(batch)
        if only_cached:
            report.from_cache += len(vecs)
        else:
            report.embedded += len(vecs)
        report.unchanged += len(batch) - len(todo)
        if on_batch:
            on_batch(len(batch))
        batch.clear()

    try:
        for seq, rec in records:
            batch.append((seq, rec))
            if len(batch) >= batch_size:
                flush()
        if batch:
            flush()
    finally:
        sstore.close()
    return report


class SentenceReader:
    """Read-only access for a serving process: sentence vectors of records whose row matches their
    record vector's text key (see the module docstring); nothing when the home has no table.
    Its one connection serves every request thread, one read at a time, under its own lock (not
    the provider's, which query-vector lookups of every search take)."""

    def __init__(self, vectors_dir: Path) -> None:
        self.path = Path(vectors_dir) / VectorStore.FILENAME
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._next_check = 0.0  # a home without the table is looked at again after RECHECK_SECONDS

    def _connection(self) -> sqlite3.Connection | None:
        if self._conn is None and time.monotonic() >= self._next_check and self.path.is_file():
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5, check_same_thread=False)
            if conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='sentences'").fetchone():
                self._conn = conn
            else:
                conn.close()
                self._next_check = time.monotonic() + RECHECK_SECONDS
        return self._conn

    def present(self) -> bool:
        """Whether the home stores sentence vectors at all (checked once a connection opens)."""
        with self._lock:
            return self._connection() is not None

    def vectors_for(self, ids: list[str]) -> dict[str, np.ndarray]:
        if not ids:
            return {}
        sql = ("SELECT s.id, s.q, s.scale FROM sentences s JOIN vectors v ON v.id = s.id AND v.key = s.key "
               "WHERE s.id IN ({marks})")
        with self._lock:
            conn = self._connection()
            rows = list(select_in(conn, sql, ids)) if conn is not None else []
        if not rows:
            return {}
        # one dequantization for all rows, then split: per-row numpy calls were most of the cost
        counts = [len(scale) // 4 for _, _, scale in rows]
        mat = unpack(b"".join(q for _, q, _ in rows), b"".join(scale for _, _, scale in rows))
        bounds = np.cumsum([0, *counts])
        return {rid: mat[bounds[i]:bounds[i + 1]] for i, (rid, _, _) in enumerate(rows)}
