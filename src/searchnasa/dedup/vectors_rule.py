"""The optional embedding rule: records whose title+abstract embeddings are near-identical
(cosine above the configured threshold) are the same work written up twice.

It runs only when the semantic stage has stored vectors (``<home>/vectors/vectors.sqlite3``, see
:mod:`searchnasa.semantic`); without them dedup uses the other rules and says so. Candidates come
from the semantic stage's own nearest-neighbour index (exact below 50k vectors, HNSW above), so
each changed record costs one k-NN query, not a scan; every candidate is then re-scored with the
stored float vectors, because the HNSW index holds int8 approximations. Both records need a real
abstract: short texts embed close together without being the same work.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from ..store import Store
from .rules import Edge

log = logging.getLogger(__name__)

MIN_ABSTRACT_CHARS = 200
NEIGHBOURS = 10


def vectors_available(vectors_dir: Path | None) -> bool:
    if vectors_dir is None:
        return False
    try:
        from ..semantic.vectors import VectorStore
    except ImportError:
        return False
    return (Path(vectors_dir) / VectorStore.FILENAME).is_file()


def embedding_edges(store: Store, vectors_dir: Path, changed_ids: list[str], threshold: float,
                    neighbours: int = NEIGHBOURS) -> list[Edge]:
    """Pairs (changed record, any record) with cosine >= ``threshold`` and real abstracts on both."""
    from ..semantic.provider import SemanticProvider

    provider = SemanticProvider(Path(vectors_dir))
    if not changed_ids or not provider.available():
        return []
    hits: dict[tuple[str, str], float] = {}
    for rid, vec in provider.vectors_for(changed_ids).items():
        others = [o for o, score in provider.nearest(vec, neighbours + 1) if o != rid and score >= threshold - 0.02]
        exact = provider.vectors_for(others)
        for other, ovec in exact.items():
            sim = float(np.dot(vec, ovec))
            if sim >= threshold:
                hits[(min(rid, other), max(rid, other))] = sim
    if not hits:
        return []
    records = store.get_many(sorted({x for pair in hits for x in pair}))

    def rich(rid: str) -> bool:
        rec = records.get(rid)
        return bool(rec and rec.abstract and len(rec.abstract) >= MIN_ABSTRACT_CHARS)

    return [Edge.of(a, b, "embedding", f"near-identical abstracts (cosine {sim:.3f})")
            for (a, b), sim in sorted(hits.items()) if rich(a) and rich(b)]
