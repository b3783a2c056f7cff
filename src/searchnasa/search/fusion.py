"""Fuse ranked lists from different retrievers into one ranking.

The search service's default is the min-max weighted sum, fed with the cosine of *every* fused
candidate (lexical hits included), at :data:`SEMANTIC_WEIGHT` (how it was chosen is in
bench/README.md). Reciprocal rank fusion (Cormack et al., 2009) needs no scores at all, so it is
kept as the option and the fallback when a provider cannot score given records.
Ties break by id so a fused ranking is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

RRF_K = 60
# Weight of the cosine in the weighted-sum fusion; chosen on SciFact, confirmed on NPL (bench/README.md).
SEMANTIC_WEIGHT = 0.7


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], k: int = RRF_K,
                           weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """``sum(w / (k + rank))`` over the rankings a document appears in (rank from 1)."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights):
        for rank, doc in enumerate(ranking, start=1):
            scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _min_max(scored: Sequence[tuple[str, float]], floor: float | None = None) -> dict[str, float]:
    """Scores mapped to [0, 1] between the list's best and ``floor`` (default: the list's worst).

    A floor below the list's worst is right when the list holds every match: its last record
    still holds the words, so it must not be scored like a record that holds none (0). Scores
    under the floor are clipped to 0, which is what an unlisted record gets.
    """
    if not scored:
        return {}
    values = [s for _, s in scored]
    lo = min(values) if floor is None else floor
    hi = max(values)
    span = hi - lo
    return {doc: (max(0.0, (s - lo) / span) if span > 0 else 1.0) for doc, s in scored}


def weighted_sum(lexical: Sequence[tuple[str, float]], semantic: Sequence[tuple[str, float]],
                 semantic_weight: float = 0.5, lexical_floor: float | None = None) -> list[tuple[str, float]]:
    """Min-max normalize each list to [0, 1], then ``(1-w)*lexical + w*semantic`` (absent = 0).
    ``lexical_floor``: the lexical score that maps to 0 (see :func:`_min_max`)."""
    lex, sem = _min_max(lexical, lexical_floor), _min_max(semantic)
    docs = set(lex) | set(sem)
    fused = {d: (1 - semantic_weight) * lex.get(d, 0.0) + semantic_weight * sem.get(d, 0.0) for d in docs}
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def fuse_by_key(lexical: Sequence[tuple[int, float]], cosines: Mapping[int, float],
                lexical_floor: float | None = None) -> list[tuple[str, float]]:
    """The service's hybrid head: :func:`weighted_sum` at :data:`SEMANTIC_WEIGHT` over records
    named by their id hash (the lexical index's ``key``), every fused record with its cosine
    (a lexical hit outside the semantic candidates is scored by its own similarity, not by 0,
    which is what lifts fusion above either ranking)."""
    return weighted_sum([(str(k), s) for k, s in lexical], [(str(k), c) for k, c in cosines.items()],
                        SEMANTIC_WEIGHT, lexical_floor)
