"""Nearest-neighbour search over record embeddings: usearch HNSW (int8) and exact numpy search.

Exact search is the reference (tests and ``bench/ann_recall.py`` measure the HNSW index against
it) and is used for collections small enough that a matrix product is cheap. The HNSW index
stores int8 vectors (384 bytes each, a quarter of float32) and is what scales to millions.

The index file sits beside the vectors with the ids in key order and the vectors' version, so a
stale index (vectors changed since it was built) is detected and rebuilt, never served.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson

from .embedder import DIM

log = logging.getLogger(__name__)

# Chosen by bench/ann_recall.py on the sample's real embeddings (recall@10 vs exact, see bench/README.md).
CONNECTIVITY = 16
EXPANSION_ADD = 128
EXPANSION_SEARCH = 96
# Below this many vectors an exact matrix product is fast (about 2 ms at 50k x 384) and exact.
EXACT_BELOW = 50_000


class ExactIndex:
    """Brute-force cosine search over unit vectors: always right, O(n) per query."""

    def __init__(self, ids: list[str], matrix: np.ndarray) -> None:
        self.ids = list(ids)
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)

    def __len__(self) -> int:
        return len(self.ids)

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        if not self.ids or k <= 0:
            return []
        sims = self.matrix @ np.asarray(vector, dtype=np.float32)
        k = min(k, len(self.ids))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top], kind="stable")]
        return [(self.ids[i], float(sims[i])) for i in top]


@dataclass
class HnswParams:
    connectivity: int = CONNECTIVITY
    expansion_add: int = EXPANSION_ADD
    expansion_search: int = EXPANSION_SEARCH
    dtype: str = "i8"


class HnswIndex:
    """usearch HNSW over int8 vectors; keys are positions in :attr:`ids`.

    int8 storage alone finds about 96% of the true top 10 (ties and rounding reorder near
    neighbours); with ``rescore`` (the float vectors, kept anyway for related papers) it fetches
    a wider candidate list and re-ranks it exactly, which restores recall to about 0.99.
    """

    RESCORE_FACTOR = 3

    def __init__(self, ids: list[str], index: "object", params: HnswParams,
                 rescore: np.ndarray | None = None) -> None:
        self.ids = ids
        self.index = index
        self.params = params
        self.rescore = rescore

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def build(cls, ids: list[str], matrix: np.ndarray, params: HnswParams | None = None,
              threads: int = 0, rescore: bool = False) -> "HnswIndex":
        from usearch.index import Index

        params = params or HnswParams()
        index = Index(ndim=DIM, metric="cos", dtype=params.dtype, connectivity=params.connectivity,
                      expansion_add=params.expansion_add, expansion_search=params.expansion_search)
        if len(ids):
            index.add(np.arange(len(ids), dtype=np.uint64), np.ascontiguousarray(matrix, dtype=np.float32),
                      threads=threads)
        return cls(list(ids), index, params, rescore=matrix if rescore else None)

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
        if not self.ids or k <= 0:
            return []
        k = min(k, len(self.ids))
        vector = np.asarray(vector, dtype=np.float32)
        wide = min(len(self.ids), k * self.RESCORE_FACTOR) if self.rescore is not None else k
        self.index.expansion_search = max(self.params.expansion_search, wide)
        matches = self.index.search(vector, wide)
        keys = np.asarray(matches.keys, dtype=np.int64)
        if self.rescore is not None:
            sims = self.rescore[keys].astype(np.float32) @ vector
            order = np.argsort(-sims, kind="stable")[:k]
            return [(self.ids[int(keys[i])], float(sims[i])) for i in order]
        # usearch's cosine distance is 1 - cosine
        return [(self.ids[int(key)], float(1.0 - dist)) for key, dist in zip(keys, matches.distances)]

    def save(self, folder: Path, version: str) -> None:
        """Write index + ids + version atomically enough: the meta file is renamed in last."""
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / "ann.usearch.tmp"
        self.index.save(str(tmp))
        os.replace(tmp, folder / "ann.usearch")
        meta = {"version": version, "ids": self.ids, "params": self.params.__dict__}
        tmp_meta = folder / "ann.json.tmp"
        tmp_meta.write_bytes(orjson.dumps(meta))
        os.replace(tmp_meta, folder / "ann.json")

    @classmethod
    def load(cls, folder: Path, version: str, rescore: np.ndarray | None = None) -> "HnswIndex | None":
        """The saved index if it matches ``version``; None when missing or stale."""
        from usearch.index import Index

        try:
            meta = orjson.loads((folder / "ann.json").read_bytes())
        except (FileNotFoundError, ValueError):
            return None
        if meta.get("version") != version or not (folder / "ann.usearch").is_file():
            return None
        params = HnswParams(**meta.get("params", {}))
        index = Index.restore(str(folder / "ann.usearch"), view=True)
        if index is None or len(index) != len(meta["ids"]):
            return None
        return cls(list(meta["ids"]), index, params, rescore=rescore)


def recall_at_k(exact: ExactIndex, approx: "ExactIndex | HnswIndex", queries: np.ndarray, k: int = 10) -> float:
    """Share of the exact top-k that the approximate index also returns (averaged over queries)."""
    hits = 0
    for q in queries:
        truth = {rid for rid, _ in exact.search(q, k)}
        got = {rid for rid, _ in approx.search(q, k)}
        hits += len(truth & got)
    return hits / (k * len(queries)) if len(queries) else 1.0
