"""Fuse ranked lists from different retrievers into one ranking.

Reciprocal rank fusion (Cormack et al., 2009) needs no score calibration, which is why it is the
default: BM25 scores and cosine similarities live on unrelated scales. The min-max weighted sum is
there for when the scores are trusted and a weight should be tuned (e.g. on the eval set).
Ties break by id so a fused ranking is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K,
                           weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """``sum(w / (k + rank))`` over the rankings a document appears in (rank from 1)."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _min_max(scored: Sequence[tuple[str, float]]) -> dict[str, float]:
    if not scored:
        return {}
    values = [s for _, s in scored]
    lo, hi = min(values), max(values)
    span = hi - lo
    return {doc: ((s - lo) / span if span > 0 else 1.0) for doc, s in scored}


def weighted_sum(lexical: Sequence[tuple[str, float]], semantic: Sequence[tuple[str, float]],
                 semantic_weight: float = 0.5) -> list[tuple[str, float]]:
    """Min-max normalize each list to [0, 1], then ``(1-w)*lexical + w*semantic`` (absent = 0)."""
    lex, sem = _min_max(lexical), _min_max(semantic)
    docs = set(lex) | set(sem)
    fused = {d: (1 - semantic_weight) * lex.get(d, 0.0) + semantic_weight * sem.get(d, 0.0) for d in docs}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
