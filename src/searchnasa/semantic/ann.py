"""Nearest-neighbour search over record embeddings: usearch HNSW (int8) and exact numpy search.

Exact search is the reference (tests and ``bench/ann_recall.py`` measure the HNSW index against
it) and is used for collections small enough that a matrix product is cheap. The HNSW index
stores int8 vectors (384 bytes each, a quarter of float32) and is what scales to millions.

A saved index is a folder ``<vectors>/ann-<version>-<token>/`` named by ``<vectors>/ann.json``
(renamed in last, so a reader never sees half an index), holding:

- ``graph.usearch``: the HNSW graph, opened memory-mapped (``view=True``): its pages live in the
  page cache, shared by every worker process, not in each process's heap;
- ``ids.npy``: the record ids, sorted, as one fixed-width byte array; a vector's HNSW key is its
  row, so key -> id is an array read and id -> key a binary search (``np.searchsorted``): 4M ids
  cost ~90 MB of file, not GBs of Python strings and dict entries;
- ``rows.npy`` + ``scale.npy``: each vector as int8 with one float scale (388 bytes; cosine to the
  float original > 0.999), to re-rank the int8 graph's candidates and to give the vectors of seeds
  and fused candidates without holding any float matrix in RAM. The rows are read with ``pread``
  (:class:`RowFile`), only those needed; the scales (4 bytes a vector) are loaded.

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

import numpy as np
import orjson

from .embedder import DIM
from .pagecache import advise_fd_random, advise_mapped_random
from .vectors import STORE_DTYPE

log = logging.getLogger(__name__)

# Chosen by bench/ann_recall.py on the sample's real embeddings (recall@10 vs exact, see bench/README.md).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96
# Below this many vectors an exact matrix product is fast (about 2 ms at 50k x 384) and exact.
EXACT_BELOW = 50_000
META_NAME = "ann.json"
BUILD_CHUNK = 50_000


def quantize_rows(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-vector symmetric int8 (``vec ~= q * scale``): a quarter of float32, cosine > 0.999."""
    matrix = np.asarray(matrix, dtype=np.float32)
    scale = np.abs(matrix).max(axis=1) / 127.0 if len(matrix) else np.zeros(0, np.float32)
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(matrix / scale[:, None]), -127, 127).astype(np.int8)
    return q, scale.astype(np.float32)


def dequantize_rows(q: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Unit float32 rows back from :func:`quantize_rows` (re-normalized, so dot = cosine)."""
    m = np.asarray(q, dtype=np.float32) * np.asarray(scale, dtype=np.float32)[:, None]
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return m / norms


class ExactIndex:
    """Brute-force cosine search over unit vectors: always right, O(n) per query."""

    def __init__(self, ids: list[str], matrix: np.ndarray) -> None:
        self.ids = list(ids)
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32).reshape(len(self.ids), DIM)
        self._pos = {rid: i for i, rid in enumerate(self.ids)}

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


class RowFile:
    """The int8 rows of a saved ``rows.npy``, read row by row with ``pread``.

    Not memory-mapped on purpose: a query re-ranks ~600 random rows, and the kernel maps pages
    around each touched row, so a mapped row file becomes wholly resident in every serving process
    within a few hundred queries (measured at 1M: 366 of 384 MB after 200 queries), counted in its
    RSS. Read with ``pread`` the rows sit in the shared page cache only. Cost: ~0.9 ms per 600
    rows against ~0.2 ms mapped (bench/README.md)."""

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as fh:
            major, _minor = np.lib.format.read_magic(fh)
            reader = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, _fortran, dtype = reader(fh)
            self.offset = fh.tell()
        if np.dtype(dtype) != np.int8 or len(shape) != 2:
            raise ValueError(f"{path}: expected an int8 matrix, found {dtype} {shape}")
        self.shape = shape
        self.width = int(shape[1])
        self.path = path
        self._fd = os.open(path, os.O_RDONLY)
        advise_fd_random(self._fd)  # one row per read: no read-ahead around it

    def __len__(self) -> int:
        return int(self.shape[0])

    def __getitem__(self, keys: np.ndarray) -> np.ndarray:
        keys = np.asarray(keys, dtype=np.int64).ravel()
        if len(keys) and (keys.min() < 0 or keys.max() >= len(self)):
            raise IndexError("row key out of range")
        w, off, fd = self.width, self.offset, self._fd
        data = b"".join([os.pread(fd, w, off + int(k) * w) for k in keys])
        return np.frombuffer(data, dtype=np.int8).reshape(len(keys), w)

    def __del__(self) -> None:
        try:
            os.close(self._fd)
        except (OSError, AttributeError):
            pass


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


class HnswIndex:
    """usearch HNSW over int8 vectors; a vector's key is its row in the sorted :attr:`ids` array.

    int8 storage alone finds about 96% of the true top 10 (ties and rounding reorder near
    neighbours); with re-rank rows (per-vector int8, far finer than the graph's fixed-scale int8)
    it fetches a wider candidate list and re-ranks it, which restores recall to about 0.99.
    """

    RESCORE_FACTOR = 3

    def __init__(self, ids: np.ndarray, index: object, params: HnswParams,
                 rows: np.ndarray | None = None, scale: np.ndarray | None = None,
                 version: str | None = None, uid: str | None = None, path: Path | None = None) -> None:
        self.ids = ids          # sorted fixed-width bytes (np.ndarray of dtype S<n>), maybe memory-mapped
        self.index = index
        self.params = params
        self.rows = rows        # int8 (n, DIM): an array, or a RowFile on disk; None: rank by the graph alone
        self.scale = scale      # float32 (n,)
        self.version = version  # vector store version the index was built from
        self.uid = uid          # vector store identity it was built from
        self.path = path

    def __len__(self) -> int:
        return len(self.ids)

    # -- ids <-> keys -------------------------------------------------------------------------
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
        probe = np.array([b for _, b in wanted], dtype=self.ids.dtype)
        pos = np.minimum(np.searchsorted(self.ids, probe), len(self.ids) - 1)
        found = self.ids[pos] == probe
        return {wanted[i][0]: int(pos[i]) for i in np.flatnonzero(found)}

    # -- vectors ------------------------------------------------------------------------------
    def vectors_at(self, keys: np.ndarray) -> np.ndarray:
        """Unit float32 rows for keys, from the re-rank rows (reads only those rows)."""
        if self.rows is None or self.scale is None:
            raise ValueError("this index was built without re-rank rows")
        keys = np.asarray(keys, dtype=np.int64)
        if not len(keys):
            return np.zeros((0, DIM), dtype=np.float32)
        return dequantize_rows(self.rows[keys], self.scale[keys])

    def vectors_for(self, ids: Iterable[str]) -> dict[str, np.ndarray]:
        keys = self.keys_of(list(ids))
        if not keys or self.rows is None:
            return {}
        mat = self.vectors_at(np.fromiter(keys.values(), dtype=np.int64, count=len(keys)))
        return {rid: mat[i] for i, rid in enumerate(keys)}

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        if not len(self.ids) or k <= 0:
            return []
        k = min(k, len(self.ids))
        vector = np.asarray(vector, dtype=np.float32)
        wide = min(len(self.ids), k * self.RESCORE_FACTOR) if self.rows is not None else k
        self.index.expansion_search = max(self.params.expansion_search, wide)
        matches = self.index.search(vector, wide)
        keys = np.asarray(matches.keys, dtype=np.int64)
        if self.rows is not None:
            sims = self.vectors_at(keys) @ vector
            order = np.argsort(-sims, kind="stable")[:k]
            return [(self.id_of(keys[i]), float(sims[i])) for i in order]
        # usearch's cosine distance is 1 - cosine
        return [(self.id_of(key), float(1.0 - dist)) for key, dist in zip(keys, matches.distances)]

    # -- building -----------------------------------------------------------------------------
    @classmethod
    def build(cls, ids: Sequence[str], matrix: np.ndarray, params: HnswParams | None = None,
              threads: int = 0, rescore: bool = True) -> HnswIndex:
        """An in-memory index over ``ids``/``matrix`` (any order; sorted by id here)."""
        params = params or HnswParams()
        raw = np.array([rid.encode() for rid in ids], dtype=f"S{max([1, *map(len, (r.encode() for r in ids))])}")
        order = np.argsort(raw, kind="stable")
        sorted_ids = raw[order]
        if len(sorted_ids) > 1 and (sorted_ids[1:] == sorted_ids[:-1]).any():
            raise ValueError("duplicate ids")
        mat = np.ascontiguousarray(np.asarray(matrix, dtype=np.float32)[order])
        index = _new_usearch(params)
        if len(mat):
            index.add(np.arange(len(mat), dtype=np.uint64), mat, threads=threads)
        rows, scale = quantize_rows(mat) if rescore else (None, None)
        return cls(sorted_ids, index, params, rows, scale)

    def save(self, folder: Path, version: str, uid: str | None = None) -> Path:
        """Write the index into a fresh ``ann-*`` folder and point ``ann.json`` at it."""
        folder = Path(folder)
        target = _fresh_dir(folder, version)
        self.index.save(str(target / "graph.usearch"))
        np.save(target / "ids.npy", np.asarray(self.ids))
        if self.rows is not None and self.scale is not None:
            np.save(target / "rows.npy", np.asarray(self.rows))
            np.save(target / "scale.npy", np.asarray(self.scale))
        _publish(folder, target, version, uid, len(self.ids), self.params)
        self.version, self.uid, self.path = version, uid, target
        return target

    @classmethod
    def load(cls, folder: Path, version: str | None = None) -> HnswIndex | None:
        """The saved index (memory-mapped), or None when missing, unreadable, or not of ``version``."""
        Index = _usearch_index()

        folder = Path(folder)
        try:
            meta = orjson.loads((folder / META_NAME).read_bytes())
        except (FileNotFoundError, ValueError):
            return None
        if "dir" not in meta:  # the earlier layout (ids in the JSON): rebuilt, not migrated
            return None
        if version is not None and meta.get("version") != version:
            return None
        path = folder / meta["dir"]
        try:
            ids = np.load(path / "ids.npy", mmap_mode="r")
            rows = RowFile(path / "rows.npy") if (path / "rows.npy").is_file() else None
            scale = np.load(path / "scale.npy") if rows is not None else None  # 4 bytes a vector, in RAM
            index = Index.restore(str(path / "graph.usearch"), view=True)
            for name in ("graph.usearch", "ids.npy"):  # walked / bisected at random
                advise_mapped_random(path / name)
        except (OSError, ValueError) as exc:
            log.warning("cannot open the saved HNSW index %s: %s", path, exc)
            return None
        if index is None or len(index) != len(ids) or meta.get("count") != len(ids):
            return None
        params = HnswParams(**meta.get("params", {}))
        return cls(ids, index, params, rows, scale, version=meta.get("version"), uid=meta.get("uid"), path=path)


def _fresh_dir(folder: Path, version: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"ann-{version}-{uuid.uuid4().hex[:8]}"
    target.mkdir()
    return target


def _publish(folder: Path, target: Path, version: str, uid: str | None, count: int, params: HnswParams) -> None:
    """Point ``ann.json`` at ``target`` (atomic rename), then remove older ``ann-*`` folders.

    A process still serving an older folder keeps its memory maps: on POSIX a removed file lives
    until its last mapping goes."""
    meta = {"version": version, "uid": uid, "dir": target.name, "count": count, "params": params.__dict__}
    tmp = folder / f"{META_NAME}.{uuid.uuid4().hex[:8]}.tmp"
    tmp.write_bytes(orjson.dumps(meta))
    os.replace(tmp, folder / META_NAME)
    for old in folder.glob("ann-*"):
        if old.is_dir() and old != target:
            shutil.rmtree(old, ignore_errors=True)
    for legacy in (folder / "ann.usearch",):
        legacy.unlink(missing_ok=True)


def build_from_store(conn: sqlite3.Connection, folder: Path, uid: str | None = None,
                     params: HnswParams | None = None, threads: int = 0,
                     chunk: int = BUILD_CHUNK) -> HnswIndex:
    """Build and save the HNSW index of every vector in a vector store, streaming.

    Reads the rows in id order in one read transaction (a consistent snapshot whose version the
    index records) and writes ids and re-rank rows straight into memory-mapped files, so the
    builder holds one chunk of float vectors at a time plus usearch's graph, never the whole
    float matrix or a list of every id."""
    params = params or HnswParams()
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
        rows = np.lib.format.open_memmap(target / "rows.npy", mode="w+", dtype=np.int8, shape=(count, DIM))
        scale = np.lib.format.open_memmap(target / "scale.npy", mode="w+", dtype=np.float32, shape=(count,))
        index = _new_usearch(params)
        start = 0
        for chunk_ids, mat in _chunks(cur.execute("SELECT id, vec FROM vectors ORDER BY id"), chunk):
            end = start + len(chunk_ids)
            ids[start:end] = chunk_ids
            rows[start:end], scale[start:end] = quantize_rows(mat)
            index.add(np.arange(start, end, dtype=np.uint64), mat, threads=threads)
            start = end
    finally:
        cur.execute("COMMIT")
        cur.close()
    if start != count:
        raise RuntimeError(f"read {start} vectors, expected {count}")
    if count > 1 and not bool(np.all(ids[1:] > ids[:-1])):  # keys are found by binary search
        raise RuntimeError("vector ids did not come back in byte order")
    for arr in (ids, rows, scale):
        arr.flush()
    del ids, rows, scale
    index.save(str(target / "graph.usearch"))
    del index
    _publish(folder, target, version, uid, count, params)
    loaded = HnswIndex.load(folder, version)
    if loaded is None:
        raise RuntimeError(f"the HNSW index just saved in {target} does not load")
    return loaded


def _chunks(cursor: Iterator[tuple[str, bytes]], size: int) -> Iterator[tuple[list[bytes], np.ndarray]]:
    """``(ids as bytes, float32 matrix)`` per ``size`` rows of an ``(id, float16 blob)`` cursor."""
    while True:
        batch = cursor.fetchmany(size)  # type: ignore[attr-defined]
        if not batch:
            return
        mat = np.frombuffer(b"".join(r[1] for r in batch), dtype=STORE_DTYPE).reshape(len(batch), DIM)
        yield [r[0].encode() for r in batch], mat.astype(np.float32)


def recall_at_k(exact: ExactIndex, approx: ExactIndex | HnswIndex, queries: np.ndarray, k: int = 10) -> float:
    """Share of the exact top-k that the approximate index also returns (averaged over queries)."""
    hits = 0
    for q in queries:
        truth = {rid for rid, _ in exact.search(q, k)}
        got = {rid for rid, _ in approx.search(q, k)}
        hits += len(truth & got)
    return hits / (k * len(queries)) if len(queries) else 1.0
