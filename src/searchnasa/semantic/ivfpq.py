"""A compact vector index for machines whose RAM cannot hold the HNSW graph: faiss IVF-PQ.

The HNSW graph (:mod:`.hnsw`) wants all of itself in RAM, and a walk touches thousands of
scattered nodes per query, so when the page cache cannot keep it next to the lexical index every
query faults pages back in and search thrashes (bench/README.md, "Full pipeline at scale"). This
index splits the work in two:

- **in RAM**, a faiss ``IndexIVFPQ``: the vectors clustered into ``nlist`` cells (inverted file),
  each vector kept as a 48-byte product-quantization code plus its 8-byte row, memory-mapped
  (``IO_FLAG_MMAP``), so the serve workers share one copy in the page cache and a process opens
  it at once. A query scans the codes of its ``nprobe`` nearest cells (each cell contiguous on
  disk) and keeps the best few hundred candidates by approximate score;
- **on disk**, ``rows.npy``: every vector in int8 (:func:`.saved.to_int8`, 384 bytes). The
  candidates are re-ranked by their exact cosine to the query, read from those rows, so the
  cosines reported are as exact as the graph's and recall comes back close to the graph's. That
  is a small read per candidate and lexical hit, not a graph walk's scattered nodes, and the page
  cache keeps the popular rows.

The rows are read with ``pread`` on a descriptor advised ``POSIX_FADV_RANDOM``, not through a
memory map: a page fault in a mapping makes the kernel read ahead around it (``read_ahead_kb``,
megabytes on a virtual disk), so a thousand faults per query read gigabytes and, under a memory
limit, evicted everything else (bench/README.md, "Full pipeline at scale").
``madvise(MADV_RANDOM)`` would stop the read-ahead but, since Linux 6.3, also makes the mapping's
accesses invisible to page reclaim; a random-advised *descriptor* only stops the read-ahead.

It shares the saved layout of :mod:`.saved` (sorted ids, id hashes, ``ann.json``), so the
provider, the delta of newer vectors and hybrid fusion use it exactly as they use the graph.
Chosen with ``SEARCHNASA_VECTOR_INDEX=ivfpq`` (or ``searchnasa embed --vector-index ivfpq``);
parameters chosen by ``bench/ann_recall.py`` (bench/README.md, "Vector index").
"""

from __future__ import annotations

import logging
import math
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchnasa.semantic.model import DIM
from searchnasa.semantic.saved import SavedIndex, read_saved, to_int8, unit_rows
from searchnasa.semantic.vectors import from_blobs

log = logging.getLogger(__name__)

KIND = "ivfpq"
FAISS_NAME = "ivfpq.faiss"
ROWS_NAME = "rows.npy"
# bytes of PQ code per vector: 48 sub-vectors of 8 dimensions, 256 centroids each
PQ_SUBVECTORS = 48
# Re-rank at least this many candidates, and at least RERANK_FACTOR x k: fewer lost recall at
# millions of vectors, more gained none (bench/README.md, "Vector index").
RERANK_MIN = 800
RERANK_FACTOR = 4
# k-means wants ~40-256 training points per cell; more only costs training time
TRAIN_PER_CELL = 64
TRAIN_MAX = 262_144
TRAIN_SQL_BATCH = 500


def _faiss():  # type: ignore[no-untyped-def]
    """faiss, imported on first use: a process serving the HNSW kind never loads it."""
    import faiss

    return faiss


@dataclass
class IvfPqParams:
    nlist: int = 256
    m: int = PQ_SUBVECTORS
    nbits: int = 8
    nprobe: int = 32
    rerank: int = RERANK_MIN

    @classmethod
    def for_count(cls, count: int) -> IvfPqParams:
        """Cells: the power of two nearest ``2 sqrt(count)`` (4,096 at 4M)."""
        nlist = 2 ** round(math.log2(max(2 * math.sqrt(max(count, 1)), 16)))
        nlist = int(min(nlist, 65_536))
        return cls(nlist=nlist, nprobe=cls.probes_for(nlist))

    @staticmethod
    def probes_for(nlist: int) -> int:
        """Cells probed per query: 1/8 of them, at least 32 and at most 128. On real sample vectors
        fewer than 32 probes lost recall; at millions of synthetic vectors more probes gained none,
        and 128 is kept for real collections, whose neighbours spread over more cells
        (bench/README.md, "Vector index")."""
        return int(min(nlist, max(32, min(nlist // 8, 128))))


class IvfPqIndex(SavedIndex):
    """faiss IVF-PQ codes in RAM choose candidates; their int8 rows on disk rank them."""

    kind = KIND

    def __init__(self, ids: np.ndarray, index: object, rows: RowReader, params: IvfPqParams,
                 keys: np.ndarray, key_rows: np.ndarray, version: str | None = None,
                 uid: str | None = None, path: Path | None = None) -> None:
        super().__init__(ids, keys, key_rows, version, uid, path)
        self.index = index
        self.rows = rows        # the int8 rows on disk
        self.params = params

    def vectors_at(self, keys: np.ndarray) -> np.ndarray:
        """Unit float32 vectors for rows, read from ``rows.npy`` in file order (fewer seeks)."""
        keys = np.asarray(keys, dtype=np.int64)
        if not len(keys):
            return np.zeros((0, DIM), dtype=np.float32)
        if int(keys.max()) >= len(self.ids) or int(keys.min()) < 0:
            raise IndexError("vector key out of range")
        order = np.argsort(keys, kind="stable")
        out = np.empty((len(keys), DIM), dtype=np.int8)
        out[order] = self.rows.read(keys[order])
        return unit_rows(out)

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest records with their cosines to the (float) query: the best
        ``max(rerank, 4k)`` by PQ score in the ``nprobe`` nearest cells, re-ranked by cosine to
        their int8 rows."""
        if not len(self.ids) or k <= 0:
            return []
        k = min(k, len(self.ids))
        vector = np.asarray(vector, dtype=np.float32)
        depth = min(max(self.params.rerank, RERANK_FACTOR * k), len(self.ids))
        faiss = _faiss()
        _, found = self.index.search(vector.reshape(1, DIM), depth,
                                     params=faiss.SearchParametersIVF(nprobe=self.params.nprobe))
        candidates = found[0][found[0] >= 0]
        return self._ranked(candidates, vector, k)

    @classmethod
    def load(cls, folder: Path, version: str | None = None) -> IvfPqIndex | None:
        """The saved index (codes memory-mapped, rows read per row), or None when missing,
        unreadable, of another kind, or not of ``version``."""
        saved = read_saved(folder, KIND, version)
        if saved is None:
            return None
        meta, path, ids, keys, key_rows = saved
        try:
            faiss = _faiss()
            index = faiss.read_index(str(path / FAISS_NAME), faiss.IO_FLAG_MMAP)
            rows = RowReader(path / ROWS_NAME)
        except (OSError, RuntimeError, ValueError) as exc:  # faiss raises RuntimeError on a bad file
            log.warning("cannot open the saved IVF-PQ index %s: %s", path, exc)
            return None
        if index.ntotal != len(ids) or len(rows) != len(ids):
            return None
        saved_params = meta.get("params", {})
        # search-time settings follow the code (so a retuned rule applies to saved indexes too)
        nlist = int(saved_params.get("nlist", index.nlist))
        params = IvfPqParams(nlist=nlist, m=int(saved_params.get("m", PQ_SUBVECTORS)),
                             nbits=int(saved_params.get("nbits", 8)), nprobe=IvfPqParams.probes_for(nlist))
        return cls(ids, index, rows, params, keys, key_rows, version=meta.get("version"),
                   uid=meta.get("uid"), path=path)


class RowReader:
    """The int8 rows of ``rows.npy``, read row by row with ``pread`` (see the module docstring for
    why not a memory map). One descriptor per process serves every thread: ``pread`` takes its
    offset, so there is no shared file position."""

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as f:
            fmt = np.lib.format
            header = fmt.read_array_header_1_0 if fmt.read_magic(f) == (1, 0) else fmt.read_array_header_2_0
            shape, _, dtype = header(f)
            self.offset = f.tell()
        if dtype != np.int8 or len(shape) != 2 or shape[1] != DIM:
            raise ValueError(f"{path}: expected int8 rows of {DIM}, found {dtype} {shape}")
        self.count = int(shape[0])
        self.fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_RANDOM)  # read what is asked, no read-ahead

    def __len__(self) -> int:
        return self.count

    def read(self, rows: np.ndarray) -> np.ndarray:
        """The rows (int8, one per given row number), each one ``pread``."""
        fd, base = self.fd, self.offset
        data = b"".join([os.pread(fd, DIM, base + DIM * int(r)) for r in rows])
        if len(data) != DIM * len(rows):
            raise OSError("rows.npy is shorter than its header says")
        return np.frombuffer(data, dtype=np.int8).reshape(len(rows), DIM)

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except (AttributeError, OSError):
            pass


class IvfPqBuilder:
    """Trains on a sample of the store, then adds streamed chunks (see :func:`.saved.stream_build`).

    Training reads a random sample of rows by rowid inside the builder's read transaction, so the
    cells fit the whole collection, not the first ids in sort order (one source's records)."""

    def __init__(self, params: IvfPqParams, cursor: sqlite3.Cursor, count: int, target: Path,
                 threads: int = 0) -> None:
        faiss = _faiss()
        if threads:
            faiss.omp_set_num_threads(threads)
        self.params = params
        self.rows = np.lib.format.open_memmap(target / ROWS_NAME, mode="w+", dtype=np.int8,
                                              shape=(count, DIM))
        nlist = max(1, min(params.nlist, count // 39 or 1))  # k-means needs >= 39 points a cell
        params.nlist = nlist
        self.index = faiss.IndexIVFPQ(faiss.IndexFlatIP(DIM), DIM, nlist, params.m, params.nbits,
                                      faiss.METRIC_INNER_PRODUCT)
        sample = training_sample(cursor, min(count, max(TRAIN_PER_CELL * nlist, 10_000), TRAIN_MAX))
        if len(sample) < 2 ** params.nbits:
            raise ValueError(f"IVF-PQ needs at least {2 ** params.nbits} vectors to train, found {len(sample)}")
        if len(sample) < 39 * 2 ** params.nbits:  # small (test-sized) collections: train quietly
            self.index.cp.min_points_per_centroid = self.index.pq.cp.min_points_per_centroid = 1
        log.info("training IVF-PQ (%d cells, %d-byte codes) on %d vectors", nlist, params.m, len(sample))
        self.index.train(sample)

    def add(self, start: int, mat: np.ndarray) -> None:
        self.rows[start:start + len(mat)] = to_int8(mat)
        self.index.add_with_ids(np.ascontiguousarray(mat, dtype=np.float32),
                                np.arange(start, start + len(mat), dtype=np.int64))

    def save(self, target: Path) -> None:
        self.rows.flush()
        del self.rows
        _faiss().write_index(self.index, str(target / FAISS_NAME))
        del self.index


def training_sample(cursor: sqlite3.Cursor, size: int, seed: int = 0) -> np.ndarray:
    """Up to ``size`` vectors (float32) at random rowids of the store, by rowid lookups rather than
    a scan of the whole table."""
    top = cursor.execute("SELECT MAX(rowid) FROM vectors").fetchone()[0] or 0
    if top <= size:
        wanted = np.arange(1, top + 1)
    else:
        wanted = np.sort(np.random.default_rng(seed).choice(top, size, replace=False)) + 1
    blobs: list[bytes] = []
    for i in range(0, len(wanted), TRAIN_SQL_BATCH):
        part = [int(r) for r in wanted[i:i + TRAIN_SQL_BATCH]]
        sql = f"SELECT vec FROM vectors WHERE rowid IN ({','.join('?' * len(part))})"
        blobs.extend(r[0] for r in cursor.execute(sql, part))
    return from_blobs(blobs)
