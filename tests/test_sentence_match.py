"""The sentence similarity and the head fusion of the related re-rank (search/sentence_match.py)."""

from __future__ import annotations

import numpy as np

from searchnasa.search.sentence_match import adds_nothing, fuse_head, match, match_all


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_batched_match_equals_one_by_one() -> None:
    rng = np.random.default_rng(7)
    for _ in range(100):
        seed = _unit(rng.normal(size=(int(rng.integers(1, 6)), 16)))
        others = [_unit(rng.normal(size=(int(n), 16))) if n else np.zeros((0, 16))
                  for n in rng.integers(0, 6, size=int(rng.integers(1, 9)))]
        for got, want in zip(match_all(seed, others), [match(seed, o) for o in others]):
            assert (got is None) == (want is None)
            if got is not None:
                assert abs(got.similarity - want.similarity) < 1e-9
                assert (got.seed_index, got.other_index, got.other_count) == (want.seed_index, want.other_index, want.other_count)


def test_the_similarity_is_the_mean_of_each_seed_sentence_s_best() -> None:
    seed = np.eye(3)[:2]                           # two seed sentences, along x and y
    other = _unit(np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0]]))
    found = match(seed, other)
    assert found is not None
    assert abs(found.similarity - (1.0 + 0.8) / 2) < 1e-9
    assert (found.seed_index, found.other_index, round(found.pair_cosine, 6)) == (0, 0, 1.0)


def test_the_fused_head_stays_in_its_range_and_follows_the_sentences() -> None:
    scores = [0.9, 0.8, 0.7, 0.6]
    fused = fuse_head(scores, [0.1, 0.2, 0.3, 0.9], weight=0.6)
    assert min(fused) >= 0.6 - 1e-12 and max(fused) <= 0.9 + 1e-12  # the tail below 0.6 keeps its place
    assert fused.index(max(fused)) == 3                             # the best sentence match moved up
    same = fuse_head(scores, [0.5] * 4, weight=0.2)  # no sentence evidence: the order stays
    assert np.allclose(same, [0.6 + 0.3 * 0.8 * x for x in (1, 2 / 3, 1 / 3, 0)])


def test_one_line_seed_and_candidates_add_nothing() -> None:
    assert adds_nothing(1, [1, 1, 1])
    assert not adds_nothing(1, [1, 2])
    assert not adds_nothing(3, [1, 1])
