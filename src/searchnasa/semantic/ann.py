"""Nearest-neighbour search over record embeddings: usearch HNSW (int8) and exact numpy search.

Exact search is the reference (tests and ``bench/ann_recall.py`` measure the HNSW index against
it) and is used for collections small enough that a matrix product is cheap. The HNSW index
stores int8 vectors (384 bytes each, a quarter of float32) and is what scales to millions.

The int8 vectors are quantized here, not by usearch. Given float vectors, usearch's ``i8`` maps
each unit vector's components to ``round(127 * x)``; a MiniLM component rarely exceeds 0.28, so
that uses about 35 of the 255 levels, and recall@10 stops at ~0.957 whatever the graph's
parameters (bench/README.md). We hand usearch int8 vectors each scaled so that its own largest
component is 127 (:func:`to_int8`). Cosine ignores a vector's length, so the per-vector scale
needs storing nowhere: the cosine usearch computes between two int8 vectors is the cosine of the
vectors they stand for, to ~7 bits: recall@10 0.99 from the graph alone, cosines within ~1e-4 of
float (measured on the sample, bench/README.md). So the graph is also where a record's vector is
read back from (:meth:`HnswIndex.vectors_at`); there is no second copy of the vectors to re-rank
with (until 2026-12-01 a 1.5 GB file of int8 rows at 4M vectors).

A saved index is a folder ``<vectors>/ann-<version>-<token>/`` named by ``<vectors>/ann.json``
(renamed in last, so a reader never sees half an index), holding:

- ``graph.usearch``: the HNSW graph, opened memory-mapped (``view=True``): its pages live in the
  page cache, shared by every worker process, not in each process's heap (or, for the compact
  kind, ``ivfpq.faiss`` + ``rows.npy``: see ``ivfpq.py``; ``ann.json`` says which kind);
- ``ids.npy``: the record ids, sorted, as one fixed-width byte array; a vector's HNSW key is its
  row, so key -> id is an array read and id -> key a binary search (``np.searchsorted``): 4M ids
  cost ~90 MB of file, not GBs of Python strings and dict entries;
- ``keys.npy`` + ``key_rows.npy``: the ids' 63-bit hashes (``index.schema.id_key``, the lexical
  index's ``key`` fast field), sorted, and the row of each, so search can ask for the vectors of
  its lexical hits by the key it already read from a fast field instead of fetching each hit's
  stored document for its id (12 bytes a vector).

The folder records the vector store's version (and identity) it was built from, so the provider
knows which vectors are newer than the index (see ``provider.py``).
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from searchnasa.semantic.embedder import DIM
from searchnasa.index.schema import id_key
from searchnasa.semantic.vectors import from_blobs

log = logging.getLogger(__name__)

# Chosen by bench/ann_recall.py on the sample's real embeddings (recall@10 vs exact, see bench/README.md).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96
# Below this many vectors an exact matrix product is fast (about 2 ms at 50k x 384) and exact.
EXACT_BELOW = 50_000
META_NAME = "ann.json"
# 2: the graph holds per-vector int8 (to_int8) and is the only copy of the vectors; 3: with the
# id-hash lookup (keys.npy, key_rows.npy). Both 2026-12-01; an index of another layout is rebuilt.
LAYOUT = 3
BUILD_CHUNK = 50_000
# The kinds of saved index: "hnsw" (usearch graph of int8 vectors, all of it wanted in RAM: the
# fastest) and "ivfpq" (faiss IVF-PQ: 48-byte codes in RAM, int8 rows read from disk per query, for
# machines whose RAM cannot hold the graph next to the lexical index; see ivfpq.py).
KINDS = ("hnsw", "ivfpq")


def to_int8(matrix: np.ndarray) -> np.ndarray:
    """Vectors as the graph stores them: each row scaled so its largest component is 127, rounded.
    Works on one vector (a query) or a matrix."""
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


class ExactIndex:
    """Brute-force cosine search over unit vectors: always right, O(n) per query."""

    def __init__(self, ids: list[str], matrix: np.ndarray) -> None:
        self.ids = list(ids)
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32).reshape(len(self.ids), DIM)
        self._pos = {rid: i for i, rid in enumerate(self.ids)}
        self._key_pos: dict[int, int] | None = None  # built on first use

    def __len__(self) -> int:
        return len(self.ids)

    def __contains__(self, rid: object) -> bool:
        return rid in self._pos

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        if not self.ids or k <= 0:
            return []
        sims = self.matrix @ np.asarray(vector, dtype=np.float32)
        k = min(k, len(self.ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(self.ids[i], float(sims[i])) for i in top]

    def vectors_for(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        return {rid: self.matrix[self._pos[rid]] for rid in ids if rid in self._pos}

    def vectors_for_keys(self, keys: Iterable[int]) -> dict[int, np.ndarray]:
        """Vectors by id hash (:func:`~searchnasa.index.schema.id_key`), for callers holding keys."""
        if self._key_pos is None:
            self._key_pos = {id_key(rid): i for i, rid in enumerate(self.ids)}
        pos = self._key_pos
        return {k: self.matrix[pos[k]] for k in keys if k in pos}


@dataclass
class HnswParams:
    connectivity: int = CONNECTIVITY
    expansion_add: int = EXPANSION_ADD
    expansion_search: int = EXPANSION_SEARCH
    dtype: str = "i8"


def _usearch_index() -> type:
    """usearch's ``Index`` class, imported safely next to the ONNX query encoder.

    Importing onnxruntime (1.32.0) *after* usearch (2.26.6; its bundled numkong SIMD library)
    crashes the process with a segmentation fault; the other order works. A serving process loads
    the HNSW index before the query encoder, so onnxruntime, when installed, is imported first."""
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is not None:
        try:
            import onnxruntime  # noqa: F401
        except (ImportError, OSError) as exc:  # the ONNX backend reports its own problems when chosen
            log.debug("onnxruntime did not import: %s", exc)
    from usearch.index import Index

    return Index


def _new_usearch(params: HnswParams) -> object:
    Index = _usearch_index()

    return Index(ndim=DIM, metric="cos", dtype=params.dtype, connectivity=params.connectivity,
                 expansion_add=params.expansion_add, expansion_search=params.expansion_search)


class SavedIndex:
    """What every saved approximate index shares: rows named by sorted ids, found by id or id hash.

    A vector's row (its key in the approximate index) is its position in the sorted :attr:`ids`
    array, so key -> id is an array read and id -> key a binary search. Subclasses store the
    vectors and search them (:class:`HnswIndex`: a usearch graph; ``ivfpq.IvfPqIndex``: faiss
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

    def _ranked(self, rows: np.ndarray, vector: np.ndarray, k: int | None = None) -> list[tuple[str, float]]:
        """The best ``k`` (default: all) of ``rows`` as (id, cosine to ``vector`` from their stored
        vectors), best first."""
        sims = self.vectors_at(rows) @ vector
        order = np.argsort(-sims, kind="stable")[:k]
        return [(self.id_of(rows[i]), float(sims[i])) for i in order]


class HnswIndex(SavedIndex):
    """usearch HNSW over int8 vectors; a vector's key is its row in the sorted :attr:`ids` array.

    The graph holds the only copy of the vectors the index serves (int8, :func:`to_int8`): the graph
    is walked with the query in int8, the cosines reported are the float query's against the int8
    vectors found, and seeds and fused candidates get their vectors from the graph too
    (:meth:`vectors_at`).
    """

    kind = "hnsw"

    def __init__(self, ids: np.ndarray, index: object, params: HnswParams, keys: np.ndarray,
                 key_rows: np.ndarray, version: str | None = None, uid: str | None = None,
                 path: Path | None = None) -> None:
        super().__init__(ids, keys, key_rows, version, uid, path)
        self.index = index
        self.params = params

    def vectors_at(self, keys: np.ndarray) -> np.ndarray:
        """Unit float32 vectors for keys, read from the graph (only those nodes' pages)."""
        keys = np.asarray(keys, dtype=np.uint64)
        if not len(keys):
            return np.zeros((0, DIM), dtype=np.float32)
        if int(keys.max()) >= len(self.ids):
            raise IndexError("vector key out of range")
        return unit_rows(np.vstack(self.index.get(keys, dtype=np.int8)))

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest records with their cosines to the (float) query.

        The graph is walked with the query in int8; the cosines reported are then taken between the
        float query and the found int8 vectors (0.2 ms for 200), so only the records' rounding
        counts, not the query's (within 1e-4 of float cosines on the sample). The beam is at least
        twice ``k``: for k=200 (hybrid's semantic candidates) a beam of 200 finds 98.2% of the true
        top 200 on real embeddings, 400 finds 99.2% (bench/README.md)."""
        if not len(self.ids) or k <= 0:
            return []
        k = min(k, len(self.ids))
        vector = np.asarray(vector, dtype=np.float32)
        self.index.expansion_search = max(self.params.expansion_search, 2 * k)
        keys = np.asarray(self.index.search(to_int8(vector), k).keys, dtype=np.int64)
        return self._ranked(keys, vector)

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(cls, ids: Sequence[str], matrix: np.ndarray, params: HnswParams | None = None,
              threads: int = 0) -> HnswIndex:
        """An in-memory index over ``ids``/``matrix`` (any order; sorted by id here)."""
        params = params or HnswParams()
        raw = np.array([rid.encode() for rid in ids], dtype=f"S{max([1, *map(len, (r.encode() for r in ids))])}")
        order = np.argsort(raw, kind="stable")
        sorted_ids = raw[order]
        if len(sorted_ids) > 1 and (sorted_ids[1:] == sorted_ids[:-1]).any():
            raise ValueError("duplicate ids")
        mat = np.asarray(matrix, dtype=np.float32)[order]
        index = _new_usearch(params)
        if len(mat):
            index.add(np.arange(len(mat), dtype=np.uint64), to_int8(mat), threads=threads)
        hashes = np.array([id_key(bytes(b).decode()) for b in sorted_ids], dtype=np.uint64)
        keys, key_rows = _key_lookup(hashes)
        return cls(sorted_ids, index, params, keys, key_rows)

    def save(self, folder: Path, version: str, uid: str | None = None) -> Path:
        """Write the index into a fresh ``ann-*`` folder and point ``ann.json`` at it."""
        folder = Path(folder)
        target = _fresh_dir(folder, version)
        self.index.save(str(target / "graph.usearch"))
        np.save(target / "ids.npy", np.asarray(self.ids))
        np.save(target / "keys.npy", np.asarray(self.keys))
        np.save(target / "key_rows.npy", np.asarray(self.key_rows))
        _publish(folder, target, version, uid, len(self.ids), self.params)
        self.version, self.uid, self.path = version, uid, target
        return target

    @classmethod
    def load(cls, folder: Path, version: str | None = None) -> HnswIndex | None:
        """The saved index (memory-mapped), or None when missing, unreadable, of another kind, or
        not of ``version``."""
        Index = _usearch_index()

        saved = read_saved(folder, cls.kind, version)
        if saved is None:
            return None
        meta, path, ids, keys, key_rows = saved
        try:
            index = Index.restore(str(path / "graph.usearch"), view=True)
        except (OSError, ValueError) as exc:
            log.warning("cannot open the saved HNSW index %s: %s", path, exc)
            return None
        if index is None or len(index) != len(ids):
            return None
        params = HnswParams(**meta.get("params", {}))
        return cls(ids, index, params, keys, key_rows, version=meta.get("version"), uid=meta.get("uid"),
                   path=path)


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


def load_index(folder: Path, kind: str = "hnsw", version: str | None = None) -> SavedIndex | None:
    """The saved index of ``kind`` (see :data:`KINDS`), or None (missing, another kind, stale)."""
    if kind == "ivfpq":
        from searchnasa.semantic.ivfpq import IvfPqIndex

        return IvfPqIndex.load(folder, version)
    return HnswIndex.load(folder, version)


def _fresh_dir(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"ann-{version}-{uuid.uuid4().hex[:8]}"
    target.mkdir()
    return target


def _publish(folder: Path, target: Path, version: str, uid: str | None, count: int, params: object,
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
    for legacy in (folder / "ann.usearch",):
        legacy.unlink(missing_ok=True)


class _HnswBuilder:
    """Adds streamed chunks to a usearch graph (see :func:`build_from_store`)."""

    def __init__(self, params: HnswParams, threads: int) -> None:
        self.params, self.threads = params, threads
        self.index = _new_usearch(params)

    def add(self, start: int, mat: np.ndarray) -> None:
        self.index.add(np.arange(start, start + len(mat), dtype=np.uint64), to_int8(mat), threads=self.threads)

    def save(self, target: Path) -> None:
        self.index.save(str(target / "graph.usearch"))
        del self.index


def build_from_store(conn: sqlite3.Connection, folder: Path, uid: str | None = None, kind: str = "hnsw",
                     params: object | None = None, threads: int = 0, chunk: int = BUILD_CHUNK) -> SavedIndex:
    """Build and save the vector index (``kind``: see :data:`KINDS`) of every vector in a vector
    store, streaming.

    Reads the rows in id order in one read transaction (a consistent snapshot whose version the
    index records) and writes the ids straight into a memory-mapped file, so the builder holds one
    chunk of float vectors at a time plus what the index itself keeps (usearch's graph; IVF-PQ's
    codes, its int8 rows going to a memory-mapped file), never the whole float matrix or a list of
    every id."""
    if kind not in KINDS:
        raise ValueError(f"unknown vector index kind {kind!r}: choose one of {', '.join(KINDS)}")
    folder = Path(folder)
    cur = conn.cursor()
    cur.execute("BEGIN")
    try:
        row = cur.execute("SELECT value FROM meta WHERE key = 'version'").fetchone()
        version = row[0] if row else "0"
        count, width = cur.execute("SELECT COUNT(*), MAX(LENGTH(CAST(id AS BLOB))) FROM vectors").fetchone()
        width = max(int(width or 1), 1)
        target = _fresh_dir(folder, version)
        ids = np.lib.format.open_memmap(target / "ids.npy", mode="w+", dtype=f"S{width}", shape=(count,))
        hashes = np.zeros(count, dtype=np.uint64)  # 8 bytes a vector, sorted into keys.npy below
        builder: Any
        if kind == "ivfpq":
            from searchnasa.semantic.ivfpq import IvfPqBuilder, IvfPqParams

            params = params or IvfPqParams.for_count(count)
            builder = IvfPqBuilder(params, cur, count, target, threads)
        else:
            params = params or HnswParams()
            builder = _HnswBuilder(params, threads)  # type: ignore[arg-type]
        start = 0
        for chunk_ids, mat in _chunks(cur.execute("SELECT id, vec FROM vectors ORDER BY id"), chunk):
            end = start + len(chunk_ids)
            ids[start:end] = chunk_ids
            hashes[start:end] = [id_key(b.decode()) for b in chunk_ids]
            builder.add(start, mat)
            start = end
    finally:
        cur.execute("COMMIT")
        cur.close()
    if start != count:
        raise RuntimeError(f"read {start} vectors, expected {count}")
    if count > 1 and not bool(np.all(ids[1:] > ids[:-1])):  # keys are found by binary search
        raise RuntimeError("vector ids did not come back in byte order")
    ids.flush()
    del ids
    keys, key_rows = _key_lookup(hashes)
    np.save(target / "keys.npy", keys)
    np.save(target / "key_rows.npy", key_rows)
    del hashes, keys, key_rows
    builder.save(target)
    del builder
    _publish(folder, target, version, uid, count, params, kind)
    loaded = load_index(folder, kind, version)
    if loaded is None:
        raise RuntimeError(f"the vector index just saved in {target} does not load")
    return loaded


def _find_sorted(haystack: np.ndarray, probe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Binary search of ``probe`` in the sorted, non-empty ``haystack``: (indices of the probes
    found, each probe's position in ``haystack``)."""
    pos = np.minimum(np.searchsorted(haystack, probe), len(haystack) - 1)
    return np.flatnonzero(haystack[pos] == probe), pos


def _key_lookup(hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted id hashes, the row of each) from the hashes in row order."""
    order = np.argsort(hashes, kind="stable")
    return hashes[order], order.astype(np.uint32)


def _chunks(cursor: Iterator[tuple[str, bytes]], size: int) -> Iterator[tuple[list[bytes], np.ndarray]]:
    """``(ids as bytes, float32 matrix)`` per ``size`` rows of an ``(id, float16 blob)`` cursor."""
    while True:
        batch = cursor.fetchmany(size)  # type: ignore[attr-defined]
        if not batch:
            return
        yield [r[0].encode() for r in batch], from_blobs([r[1] for r in batch])


def recall_at_k(exact: ExactIndex, approx: ExactIndex | SavedIndex, queries: np.ndarray, k: int = 10) -> float:
    """Share of the exact top-k that the approximate index also returns (averaged over queries)."""
    hits = 0
    for q in queries:
        truth = {rid for rid, _ in exact.search(q, k)}
        got = {rid for rid, _ in approx.search(q, k)}
        hits += len(truth & got)
    return hits / (k * len(queries)) if len(queries) else 1.0
