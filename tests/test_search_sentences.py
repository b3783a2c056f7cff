"""Hybrid search re-ranks the head of its matches by sentence (``search/hybrid.py``
``sentence_head``), on the bundled sample's real vectors and sentence vectors: only the order of
the first ``HEAD`` matches changes; what matches, the count, the extras and the tail do not."""

from __future__ import annotations

from pathlib import Path

import pytest
from semantic_util import semantic_home_from, semantic_service

from searchnasa.search.schemas import SearchRequest
from searchnasa.search.sentence_match import HEAD
from searchnasa.search.service import SearchService

QUERIES = ["film cooling effectiveness of turbine blades", "thermal protection system for reentry vehicles",
           "lithium-ion battery thermal runaway", "wind tunnel", "boundary layer transition at hypersonic speeds",
           "radiation damage in reactor materials"]


@pytest.fixture(scope="module")
def plain(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> SearchService:
    return semantic_service(semantic_home_from(indexed_home, tmp_path_factory.mktemp("plain")))


@pytest.fixture(scope="module")
def with_sentences(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> SearchService:
    return semantic_service(semantic_home_from(indexed_home, tmp_path_factory.mktemp("sentences"), sentences=True))


def _pages(service: SearchService, q: str, pages: int = 2) -> tuple[list, int | None, int]:
    hits, total, extras = [], None, 0
    for page in range(1, pages + 1):
        res = service.search(SearchRequest(q=q, mode="hybrid", per_page=50, page=page))
        hits += [(h.id, h.close_in_meaning) for h in res.results]
        total, extras = res.total, res.extras_total
    return hits, total, extras


def test_only_the_head_of_the_matches_is_reordered(plain: SearchService, with_sentences: SearchService) -> None:
    moved = 0
    for q in QUERIES:
        before, total_before, extras_before = _pages(plain, q)
        after, total_after, extras_after = _pages(with_sentences, q)
        assert (total_after, extras_after) == (total_before, extras_before), q
        assert sorted(before) == sorted(after), q  # the same records, extras the same ones
        matches = sum(1 for _, extra in before if not extra)
        head = min(HEAD, matches)
        assert sorted(before[:head]) == sorted(after[:head]), q  # the head's records stay in the head
        assert before[head:] == after[head:], q  # the rest keeps its order, extras after every match
        moved += before[:head] != after[:head]
    assert moved >= 3, "sentence similarity should reorder the head of most of these searches"


def test_a_failing_sentence_store_leaves_the_fused_order(plain: SearchService, with_sentences: SearchService,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(ids):  # type: ignore[no-untyped-def]
        raise OSError("disk gone")

    monkeypatch.setattr(with_sentences.semantic, "sentence_vectors_for", broken)
    for q in QUERIES[:3]:
        assert _pages(with_sentences, q, 1) == _pages(plain, q, 1)
