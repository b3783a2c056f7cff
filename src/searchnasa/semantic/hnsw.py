"""The HNSW kind of saved vector index: a usearch graph over int8 vectors, the fastest kind, which
wants all of itself in RAM.

The graph stores each vector in int8 as :func:`.saved.to_int8` quantized it (384 bytes, a quarter
of float32). The cosine usearch computes between two such vectors is the cosine of the vectors
they stand for, to about 7 bits: close enough that the graph alone gives the top results with no
re-rank, and that the graph is also where a record's vector is read back from
(:meth:`HnswIndex.vectors_at`); there is no second copy of the vectors (bench/README.md, "Vector
index"). The graph file ``graph.usearch`` sits in the saved folder beside the sorted ids (see
:mod:`.saved`) and is opened memory-mapped (``view=True``): its pages live in the page cache,
shared by every worker process, not in each process's heap.

usearch is imported only through :func:`usearch_index`, which imports onnxruntime first: importing
onnxruntime *after* usearch (its bundled numkong SIMD library) crashes the process with a
segmentation fault, and a serving process loads the HNSW index before the ONNX query encoder.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from searchnasa.index.schema import id_key
from searchnasa.semantic.model import DIM
from searchnasa.semantic.saved import SavedIndex, fresh_dir, key_lookup, publish, read_saved, to_int8, unit_rows

log = logging.getLogger(__name__)

KIND = "hnsw"
GRAPH_NAME = "graph.usearch"
# Chosen by bench/ann_recall.py on the sample's real embeddings (recall@10 vs exact, see bench/README.md).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96


@dataclass
class HnswParams:
    connectivity: int = CONNECTIVITY
    expansion_add: int = EXPANSION_ADD
    expansion_search: int = EXPANSION_SEARCH
    dtype: str = "i8"


def usearch_index() -> type:
    """usearch's ``Index`` class, with onnxruntime imported before it (see the module docstring).
    Imported on first use: a process that never opens an HNSW index loads neither library."""
    import onnxruntime  # noqa: F401  (must precede usearch)
    from usearch.index import Index

    return Index


def _new_usearch(params: HnswParams) -> object:
    Index = usearch_index()
    return Index(ndim=DIM, metric="cos", dtype=params.dtype, connectivity=params.connectivity,
                 expansion_add=params.expansion_add, expansion_search=params.expansion_search)


class HnswIndex(SavedIndex):
    """usearch HNSW over int8 vectors; a vector's key is its row in the sorted :attr:`ids` array.

    The graph holds the only copy of the vectors the index serves (int8, :func:`.saved.to_int8`):
    the graph is walked with the query in int8, the cosines reported are the float query's against
    the int8 vectors found, and seeds and fused candidates get their vectors from the graph too
    (:meth:`vectors_at`).
    """

    kind = KIND

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
        float query and the found int8 vectors, so only the records' rounding counts, not the
        query's. The beam is at least twice ``k``: for hybrid's many semantic candidates a beam of
        just ``k`` misses noticeably more of the true top ``k`` (bench/README.md, "Vector index")."""
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
        keys, key_rows = key_lookup(hashes)
        return cls(sorted_ids, index, params, keys, key_rows)

    def save(self, folder: Path, version: str, uid: str | None = None) -> Path:
        """Write the index into a fresh ``ann-*`` folder and point ``ann.json`` at it."""
        folder = Path(folder)
        target = fresh_dir(folder, version)
        self.index.save(str(target / GRAPH_NAME))
        self.save_lookup(target)
        publish(folder, target, version, uid, len(self.ids), self.params, KIND)
        self.version, self.uid, self.path = version, uid, target
        return target

    @classmethod
    def load(cls, folder: Path, version: str | None = None) -> HnswIndex | None:
        """The saved index (memory-mapped), or None when missing, unreadable, of another kind, or
        not of ``version``."""
        Index = usearch_index()
        saved = read_saved(folder, KIND, version)
        if saved is None:
            return None
        meta, path, ids, keys, key_rows = saved
        try:
            index = Index.restore(str(path / GRAPH_NAME), view=True)
        except (OSError, ValueError) as exc:
            log.warning("cannot open the saved HNSW index %s: %s", path, exc)
            return None
        if index is None or len(index) != len(ids):
            return None
        params = HnswParams(**meta.get("params", {}))
        return cls(ids, index, params, keys, key_rows, version=meta.get("version"), uid=meta.get("uid"),
                   path=path)


class HnswBuilder:
    """Adds streamed chunks to a usearch graph (see :func:`.saved.stream_build`)."""

    def __init__(self, params: HnswParams, threads: int) -> None:
        self.params, self.threads = params, threads
        self.index = _new_usearch(params)

    def add(self, start: int, mat: np.ndarray) -> None:
        self.index.add(np.arange(start, start + len(mat), dtype=np.uint64), to_int8(mat), threads=self.threads)

    def save(self, target: Path) -> None:
        self.index.save(str(target / GRAPH_NAME))
        del self.index
