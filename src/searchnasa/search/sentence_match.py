"""Sentence-level similarity for re-ranking the head of a related-papers list.

A record vector reads at most 256 word pieces of title + abstract as one text, while a paper
states several claims. With sentence vectors stored (``semantic/sentence_vectors.py``) a
candidate's *sentence similarity* to the seed is the mean, over the seed's sentences, of the best
cosine to any of the candidate's sentences: every claim of the seed looks for its counterpart.
The head of the list is re-ranked by

    score' = (1 - W_SENTENCE) * minmax(score) + W_SENTENCE * minmax(sentence similarity)

mapped back into the head's own score range, so the tail below the head keeps its order and
scores. ``HEAD`` and ``W_SENTENCE`` were chosen on SciFact in related mode and confirmed on NPL and
CSFCube-related dev (bench/README.md, "Sentence vectors (issue 17)"); chosen again on the ONNX
vectors once they became the default ("Sentence constants on ONNX vectors": head 100 / weight 0.2
-> 30 / 0.4, SciFact 0.7425 -> 0.7458, CSFCube 0.6160 -> 0.6365, NPL 0.5044 both). Hybrid search
re-ranks its matches' head the same way (:mod:`.hybrid`). The best single pair
(seed sentence, candidate sentence) is what the reasons show.

When the seed and every candidate are one sentence each (:func:`adds_nothing`: NPL's untitled
one-line abstracts and one-line queries), the sentence similarity *is* the record cosine the score
already holds, and re-ranking would only count it twice (NPL lost 0.004 that way): such a head is
left as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

HEAD = 30            # candidates re-ranked (those past it keep their order)
W_SENTENCE = 0.4     # weight of the sentence similarity in the head's fused score


@dataclass(frozen=True)
class SentenceMatch:
    """A candidate's sentence similarity and its best pair (indexes into the two sentence lists)."""

    similarity: float
    seed_index: int
    other_index: int
    pair_cosine: float
    other_count: int = 0  # the candidate's stored sentences (a pair is shown only if its text still splits so)


def match(seed: np.ndarray, other: np.ndarray) -> SentenceMatch | None:
    """The sentence similarity of ``other`` (rows: its sentence vectors) to ``seed`` (rows: the
    seed's); None when either has no sentence."""
    if len(seed) == 0 or len(other) == 0:
        return None
    sims = seed @ other.T
    i, j = np.unravel_index(int(np.argmax(sims)), sims.shape)
    return SentenceMatch(float(sims.max(axis=1).mean()), int(i), int(j), float(sims[i, j]), len(other))


def adds_nothing(seed_sentences: int, candidate_sentences: Sequence[int]) -> bool:
    """True when one seed sentence meets candidates of one sentence each (see the module docstring)."""
    return seed_sentences <= 1 and all(n <= 1 for n in candidate_sentences)


def match_all(seed: np.ndarray, others: Sequence[np.ndarray]) -> list[SentenceMatch | None]:
    """:func:`match` for many candidates at once: one matrix product and segmented maxima, no
    per-candidate numpy calls (those were most of the re-rank's time)."""
    counts = np.array([len(o) for o in others], dtype=np.int64)
    if len(seed) == 0 or not counts.any():
        return [None] * len(others)
    sizes = counts[counts > 0]
    sims = seed @ np.vstack([o for o in others if len(o)]).T
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    best = np.maximum.reduceat(sims, starts, axis=1)      # seed sentence x candidate: its closest sentence
    means, rows = best.mean(axis=0), best.argmax(axis=0)  # the similarity; the seed sentence of the best pair
    along = sims[np.repeat(rows, sizes), np.arange(sims.shape[1])]  # that seed sentence against each column
    top = np.repeat(best[rows, np.arange(len(rows))], sizes)
    first = np.flatnonzero(along >= top)                  # the best pair's candidate sentence: first such column
    cols = first[np.searchsorted(first, starts)] - starts
    found = iter(zip(means.tolist(), rows.tolist(), cols.tolist(), best[rows, np.arange(len(rows))].tolist(),
                     sizes.tolist()))
    return [SentenceMatch(*next(found)) if n else None for n in counts.tolist()]


def _minmax(values: np.ndarray) -> np.ndarray:
    lo, hi = float(values.min()), float(values.max())
    return (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values)


def fuse_head(scores: Sequence[float], sentence: Sequence[float], weight: float = W_SENTENCE) -> list[float]:
    """The head's new scores: the fused value mapped into ``[min(scores), max(scores)]``, so every
    record below the head still scores no higher than the head's lowest."""
    base = np.asarray(scores, dtype=np.float64)
    if len(base) < 2:
        return list(base)
    fused = (1 - weight) * _minmax(base) + weight * _minmax(np.asarray(sentence, dtype=np.float64))
    lo, hi = float(base.min()), float(base.max())
    return [lo + (hi - lo) * float(f) for f in fused]
