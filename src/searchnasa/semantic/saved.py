"""What every saved vector index shares: its folder, its sorted ids, the id-hash lookup,
``ann.json``, the int8 form of its vectors, and the streaming build from the vector store.

A saved index is a folder ``<vectors>/ann-<version>-<token>/`` named by ``<vectors>/ann.json``
(renamed in last, so a reader never sees half an index), holding:

- the kind's own files (``graph.usearch`` for HNSW, see :mod:`.hnsw`; ``ivfpq.faiss`` +
  ``rows.npy`` for IVF-PQ, see :mod:`.ivfpq`); ``ann.json`` says which kind;
- ``ids.npy``: the record ids, sorted, as one fixed-width byte array; a vector's key in the index
  is its row, so key -> id is an array read and id -> key a binary search (``np.searchsorted``):
  millions of ids cost one compact file, not GBs of Python strings and dict entries;
- ``keys.npy`` + ``key_rows.npy``: the ids' 63-bit hashes (``index.schema.id_key``, the lexical
  index's ``key`` fast field), sorted, and the row of each, so search can ask for the vectors of
  its lexical hits by the key it already read from a fast field instead of fetching each hit's
  stored document for its id (12 bytes a vector).

All three arrays are opened memory-mapped: their pages are shared page cache, not per-process
heap. The folder records the vector store's version (and identity) it was built from, so the
provider knows which vectors are newer than the index (see :mod:`.provider`).

Vectors are stored as int8, quantized here (:func:`to_int8`), not by the index library: each
vector scaled so that its own largest component is 127. Scaling every unit vector by 127 instead
would use only a few dozen of the 255 levels (a MiniLM component is small) and cap recall whatever
the index's parameters (bench/README.md, "Vector index"). Cosine ignores a vector's length, so the
per-vector scale needs storing nowhere.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import orjson

from searchnasa.index.schema import id_key
from searchnasa.semantic.vectors import from_blobs

log = logging.getLogger(__name__)

META_NAME = "ann.json"
# 2: the graph holds per-vector int8 (to_int8) and is the only copy of the vectors; 3: with the
# id-hash lookup (keys.npy, key_rows.npy). Both 2026-12-01; an index of another layout is rebuilt.
LAYOUT = 3
BUILD_CHUNK = 50_000


def to_int8(matrix: np.ndarray) -> np.ndarray:
    """Vectors as the saved indexes store them: each row scaled so its largest component is 127,
    rounded. Works on one vector (a query) or a matrix."""
    m = np.asarray(matrix, dtype=np.float32)
    top = np.abs(m).max(axis=-1, keepdims=True)
    top[top == 0] = 1.0
    return np.rint(m * (127.0 / top)).astype(np.int8)


def unit_rows(q: np.ndarray) -> np.ndarray:
    """Unit float32 rows back from int8 ones (cosine is scale-free, so the multiplier cancels)."""
    m = np.asarray(q, dtype=np.float32)
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


class SavedIndex:
    """What every saved approximate index shares: rows named by sorted ids, found by id or id hash.

    A vector's row (its key in the approximate index) is its position in the sorted :attr:`ids`
    array, so key -> id is an array read and id -> key a binary search. Subclasses store the
    vectors and search them (``hnsw.HnswIndex``: a usearch graph; ``ivfpq.IvfPqIndex``: faiss
    IVF-PQ codes in RAM with the int8 rows on disk)."""

    kind = ""
    params: Any  # the kind's parameters, saved in ann.json

    def __init__(self, ids: np.ndarray, keys: np.ndarray, key_rows: np.ndarray, version: str | None = None,
                 uid: str | None = None, path: Path | None = None) -> None:
        self.ids = ids          # sorted fixed-width bytes (np.ndarray of dtype S<n>), maybe memory-mapped
        self.keys = keys        # the ids' id_key hashes, sorted (uint64), maybe memory-mapped
        self.key_rows = key_rows  # the row of each hash in ``keys`` (uint32)
        self.version = version  # vector store version the index was built from
        self.uid = uid          # vector store identity it was built from
        self.path = path

    def __len__(self) -> int:
        return len(self.ids)

    # -- ids <-> rows -------------------------------------------------------------------------
    def id_of(self, key: int) -> str:
        return bytes(self.ids[int(key)]).decode()

    def ids_of(self, keys: Iterable[int]) -> list[str]:
        return [bytes(self.ids[int(k)]).decode() for k in keys]

    def keys_of(self, ids: Sequence[str]) -> dict[str, int]:
        """``id -> key`` for the given ids that the index holds (a binary search each, in numpy)."""
        if not len(self.ids) or not ids:
            return {}
        width = self.ids.dtype.itemsize
        wanted = [(rid, rid.encode()) for rid in ids]
        wanted = [(rid, b) for rid, b in wanted if 0 < len(b) <= width]
        if not wanted:
            return {}
        found, pos = _find_sorted(self.ids, np.array([b for _, b in wanted], dtype=self.ids.dtype))
        return {wanted[i][0]: int(pos[i]) for i in found}

    def rows_of_keys(self, keys: Sequence[int]) -> dict[int, int]:
        """``id hash -> row`` for the given hashes the index holds (binary search in ``keys``)."""
        if not len(self.keys) or not keys:
            return {}
        probe = np.asarray(keys, dtype=np.uint64)
        found, pos = _find_sorted(self.keys, probe)
        return {int(probe[i]): int(self.key_rows[pos[i]]) for i in found}

    # -- vectors ------------------------------------------------------------------------------
    def vectors_at(self, keys: np.ndarray) -> np.ndarray:
        """Unit float32 vectors for rows (the subclass reads them from where it keeps them)."""
        raise NotImplementedError

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest records with their cosines to the (float) query, best first."""
        raise NotImplementedError

    def vectors_for(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        keys = self.keys_of(list(ids))
        if not keys:
            return {}
        mat = self.vectors_at(np.fromiter(keys.values(), dtype=np.int64, count=len(keys)))
        return {rid: mat[i] for i, rid in enumerate(keys)}

    def vectors_for_keys(self, keys: Sequence[int]) -> dict[int, np.ndarray]:
        """Vectors by id hash (:func:`~searchnasa.index.schema.id_key`), for callers holding keys."""
        rows = self.rows_of_keys(keys)
        if not rows:
            return {}
        mat = self.vectors_at(np.fromiter(rows.values(), dtype=np.int64, count=len(rows)))
        return {k: mat[i] for i, k in enumerate(rows)}

    def save_lookup(self, target: Path) -> None:
        """Write the sorted ids and the id-hash lookup into ``target`` (an in-memory build's save)."""
        np.save(target / "ids.npy", np.asarray(self.ids))
        np.save(target / "keys.npy", np.asarray(self.keys))
        np.save(target / "key_rows.npy", np.asarray(self.key_rows))

    def _ranked(self, rows: np.ndarray, vector: np.ndarray, k: int | None = None) -> list[tuple[str, float]]:
        """The best ``k`` (default: all) of ``rows`` as (id, cosine to ``vector`` from their stored
        vectors), best first."""
        sims = self.vectors_at(rows) @ vector
        order = np.argsort(-sims, kind="stable")[:k]
        return [(self.id_of(rows[i]), float(sims[i])) for i in order]


# -- reading a saved folder --------------------------------------------------------------------
def read_saved(folder: Path, kind: str, version: str | None = None
               ) -> tuple[dict, Path, np.ndarray, np.ndarray, np.ndarray] | None:
    """(meta, folder, ids, keys, key_rows) of the saved index of ``kind`` named by ``ann.json``,
    memory-mapped; None when there is none, it is of another kind, layout or version, or unreadable."""
    folder = Path(folder)
    try:
        meta = orjson.loads((folder / META_NAME).read_bytes())
    except (FileNotFoundError, ValueError):
        return None
    if meta.get("layout") != LAYOUT or meta.get("kind", "hnsw") != kind:
        return None  # an earlier layout (ids in the JSON; usearch-quantized graph), or another kind: rebuilt
    if version is not None and meta.get("version") != version:
        return None
    path = folder / meta["dir"]
    try:
        ids = np.load(path / "ids.npy", mmap_mode="r")
        keys = np.load(path / "keys.npy", mmap_mode="r")
        key_rows = np.load(path / "key_rows.npy", mmap_mode="r")
    except (OSError, ValueError) as exc:
        log.warning("cannot open the saved vector index %s: %s", path, exc)
        return None
    if not len(ids) == len(keys) == len(key_rows) == meta.get("count"):
        return None
    return meta, path, ids, keys, key_rows


def saved_kind(folder: Path) -> str | None:
    """The kind of index ``ann.json`` names (``hnsw`` or ``ivfpq``), or None when there is none."""
    try:
        return orjson.loads((Path(folder) / META_NAME).read_bytes()).get("kind", "hnsw")
    except (FileNotFoundError, ValueError):
        return None


# -- writing a saved folder --------------------------------------------------------------------
def fresh_dir(folder: Path, version: str) -> Path:
    """A new, empty ``ann-*`` folder for an index about to be written."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"ann-{version}-{uuid.uuid4().hex[:8]}"
    target.mkdir()
    return target


def publish(folder: Path, target: Path, version: str, uid: str | None, count: int, params: object,
            kind: str = "hnsw") -> None:
    """Point ``ann.json`` at ``target`` (atomic rename), then remove older ``ann-*`` folders.

    A process still serving an older folder keeps its memory maps: on POSIX a removed file lives
    until its last mapping goes."""
    meta = {"layout": LAYOUT, "kind": kind, "version": version, "uid": uid, "dir": target.name,
            "count": count, "params": params.__dict__}
    tmp = folder / f"{META_NAME}.{uuid.uuid4().hex[:8]}.tmp"
    tmp.write_bytes(orjson.dumps(meta))
    os.replace(tmp, folder / META_NAME)
    for old in folder.glob("ann-*"):
        if old.is_dir() and old != target:
            shutil.rmtree(old, ignore_errors=True)
    (folder / "ann.usearch").unlink(missing_ok=True)  # the graph file of the first, folderless layout


def key_lookup(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted id hashes, the row of each) from the hashes in row order."""
    order = np.argsort(hashes, kind="stable")
    return hashes[order], order.astype(np.uint32)


def _find_sorted(haystack: np.ndarray, probe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Binary search of ``probe`` in the sorted, non-empty ``haystack``: (indices of the probes
    found, each probe's position in ``haystack``)."""
    pos = np.minimum(np.searchsorted(haystack, probe), len(haystack) - 1)
    return np.flatnonzero(haystack[pos] == probe), pos


# -- the streaming build -----------------------------------------------------------------------
class Builder(Protocol):
    """One kind's side of a streaming build: takes the vectors chunk by chunk, then saves itself."""

    params: Any

    def add(self, start: int, mat: np.ndarray) -> None: ...

    def save(self, target: Path) -> None: ...


# (read cursor inside the build's transaction, vector count, target folder) -> the kind's builder
StartBuilder = Callable[[sqlite3.Cursor, int, Path], Builder]


def stream_build(conn: sqlite3.Connection, folder: Path, uid: str | None, kind: str, start: StartBuilder,
                 chunk: int = BUILD_CHUNK) -> tuple[str, Path]:
    """Build and publish a saved index of every vector in a vector store, streaming; returns the
    store version it was built at and the folder written.

    Reads the rows in id order in one read transaction (a consistent snapshot whose version the
    index records) and writes the ids straight into a memory-mapped file, so the builder holds one
    chunk of float vectors at a time plus what the index itself keeps (usearch's graph; IVF-PQ's
    codes, its int8 rows going to a memory-mapped file), never the whole float matrix or a list of
    every id."""
    folder = Path(folder)
    cur = conn.cursor()
    cur.execute("BEGIN")
    try:
        row = cur.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        version = row[0] if row else "0"
        count, width = cur.execute("SELECT COUNT(*), MAX(LENGTH(CAST(id AS BLOB))) FROM vectors").fetchone()
        target = fresh_dir(folder, version)
        ids = np.lib.format.open_memmap(target / "ids.npy", mode="w+", dtype=f"S{max(int(width or 1), 1)}",
                                        shape=(count,))
        hashes = np.zeros(count, dtype=np.uint64)  # 8 bytes a vector, sorted into keys.npy below
        builder = start(cur, count, target)
        done = 0
        for chunk_ids, mat in _chunks(cur.execute("SELECT id, vec FROM vectors ORDER BY id"), chunk):
            ids[done:done + len(chunk_ids)] = chunk_ids
            hashes[done:done + len(chunk_ids)] = [id_key(b.decode()) for b in chunk_ids]
            builder.add(done, mat)
            done += len(chunk_ids)
    finally:
        cur.execute("COMMIT")
        cur.close()
    if done != count:
        raise RuntimeError(f"read {done} vectors, expected {count}")
    if count > 1 and not bool(np.all(ids[1:] > ids[:-1])):  # keys are found by binary search
        raise RuntimeError("vector ids did not come back in byte order")
    ids.flush()
    del ids
    keys, key_rows = key_lookup(hashes)
    np.save(target / "keys.npy", keys)
    np.save(target / "key_rows.npy", key_rows)
    del hashes, keys, key_rows
    builder.save(target)
    publish(folder, target, version, uid, count, builder.params, kind)
    return version, target


def _chunks(cursor: Iterator[tuple[str, bytes]], size: int) -> Iterator[tuple[list[bytes], np.ndarray]]:
    """``(ids as bytes, float32 matrix)`` per ``size`` rows of an ``(id, float16 blob)`` cursor."""
    while True:
        batch = cursor.fetchmany(size)  # type: ignore[attr-defined]
        if not batch:
            return
        yield [r[0].encode() for r in batch], from_blobs([r[1] for r in batch])
