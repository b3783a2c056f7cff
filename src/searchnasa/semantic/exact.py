"""Exact nearest-neighbour search over unit vectors: a matrix product, always right.

It is the reference the approximate indexes are measured against (tests and
``bench/ann_recall.py``, :func:`recall_at_k`), and what the provider serves below
:data:`EXACT_BELOW` vectors, where a matrix product is cheap and no index needs building.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

import numpy as np

from searchnasa.index.schema import id_key
from searchnasa.semantic.model import DIM

# Below this many vectors an exact matrix product is fast, so the provider searches exactly in RAM
# and builds no index (bench/README.md, "Vector index").
EXACT_BELOW = 50_000


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


class Searchable(Protocol):
    """Any vector index: ``k`` nearest (id, cosine) pairs to a query, best first."""

    def search(self, vector: np.ndarray, k: int) -> list[tuple[str, float]]: ...


def recall_at_k(exact: ExactIndex, approx: Searchable, queries: np.ndarray, k: int = 10) -> float:
    """Share of the exact top-k that the approximate index also returns (averaged over queries)."""
    hits = 0
    for q in queries:
        truth = {rid for rid, _ in exact.search(q, k)}
        got = {rid for rid, _ in approx.search(q, k)}
        hits += len(truth & got)
    return hits / (k * len(queries)) if len(queries) else 1.0
