"""The semantic seam: admission by the query's strict part and filters, fusion, honest totals.

The provider here is a fixed-candidates implementation of the :class:`SemanticProvider` protocol
(real record ids from the sample, chosen by the test), so each rule can be checked exactly; the
real embedding provider is tested by the semantic side.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from searchnasa.records import Record
from searchnasa.search.fusion import reciprocal_rank_fusion, weighted_sum
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.protocols import SemanticProvider
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.store import open_store

from search_util import contains_phrase, contains_word


class FixedCandidates:
    """Answers every query with the same candidates, and records what it was asked."""

    def __init__(self, ids: list[str], up: bool = True) -> None:
        self.ids = ids
        self.up = up
        self.asked: list[tuple[str, int]] = []

    def available(self) -> bool:
        return self.up

    def query_candidates(self, text: str, k: int) -> list[tuple[str, float]]:
        self.asked.append((text, k))
        return [(rid, 1.0 - i / 100) for i, rid in enumerate(self.ids[:k])]

    # the rest of the provider protocol: no scores (hybrid ranking uses rank fusion) and no vectors
    def warm_up(self) -> None:
        pass

    def similarities(self, text: str, ids: list[str]) -> None:
        return None

    def similarities_by_key(self, text: str, keys: list[int]) -> None:
        return None

    def embed_text(self, text: str, wait: float | None = None):
        raise NotImplementedError("fixed candidates have no vectors")

    def nearest(self, vector, k: int) -> list[tuple[str, float]]:
        return []

    def vectors_for(self, ids: list[str]) -> dict:
        return {}

    def has_sentence_vectors(self) -> bool:
        return False

    def sentence_vectors_for(self, ids: list[str]) -> dict:
        return {}

    def embed_sentences(self, texts: list[str], wait: float | None = None):
        raise NotImplementedError("fixed candidates have no vectors")


@pytest.fixture(scope="module")
def records(indexed_home: Path) -> dict[str, Record]:
    store = open_store(indexed_home, readonly=True)
    out = {rec.id: rec for _, rec in store.iter_records()}
    store.close()
    return out


@pytest.fixture(scope="module")
def settings(indexed_home: Path) -> Settings:
    return Settings().with_home(indexed_home)


def all_ids(service: SearchService, q: str, **kw) -> list[str]:
    ids: list[str] = []
    page = 1
    while True:
        resp = service.search(SearchRequest(q=q, page=page, per_page=100, **kw))
        ids.extend(h.id for h in resp.results)
        if len(resp.results) < 100:
            return ids
        page += 1


def test_provider_protocol_is_runtime_checkable() -> None:
    assert isinstance(FixedCandidates([]), SemanticProvider)


def test_hybrid_counts_the_matches_and_lists_close_candidates_after_them(settings, records) -> None:
    """The hybrid contract: the matches are the result set (counted, ranked by the fused score);
    candidates close in meaning that do not match are extras, listed after every match, labelled
    with the words they lack and counted apart."""
    lexical = SearchService(settings)
    lex_ids = all_ids(lexical, "propeller noise", mode="lexical")
    outside = [rid for rid, r in records.items() if rid not in lex_ids and r.source == "ntrs"][:5]
    inside = lex_ids[:2]
    provider = FixedCandidates(outside + inside)
    hybrid = SearchService(settings, semantic=provider)
    resp = hybrid.search(SearchRequest(q="propeller noise", mode="hybrid", per_page=100))
    assert resp.mode == "hybrid"
    assert provider.asked and provider.asked[0][0] == "propeller noise"
    assert resp.total == len(lex_ids) and resp.extras_total == len(outside)
    every = all_ids(hybrid, "propeller noise", mode="hybrid")
    assert len(every) == len(set(every)) == resp.total + resp.extras_total
    assert set(every[:resp.total]) == set(lex_ids) and set(every[resp.total:]) == set(outside)
    extras = [h for h in resp.results if h.close_in_meaning]
    assert {h.id for h in extras} == set(outside)
    for hit in extras:  # each lacks at least one of the two words, and says which
        assert hit.missing_words and set(hit.missing_words) <= {"propeller", "noise"}
        assert all(not contains_word(records[hit.id], w) for w in hit.missing_words)
    assert not any(h.close_in_meaning or h.missing_words for h in resp.results if h.id in lex_ids)
    off = hybrid.search(SearchRequest(q="propeller noise", mode="hybrid", per_page=100, extras=False))
    assert off.total == resp.total and off.extras_total == 0 and {h.id for h in off.results} == set(lex_ids)
    # a candidate ranked first semantically and present lexically rises to the top of the fusion
    assert resp.results[0].id in inside + [lex_ids[0]]


@pytest.mark.parametrize("q", ["propeller noise", "propeller"])
@pytest.mark.parametrize("filters", [{}, {"year_from": 1900}, {"source": "ntrs"}])
@pytest.mark.parametrize("exact_max", [None, 20])
def test_hybrid_total_counts_the_matches_on_every_page(settings, records, monkeypatch, q: str, filters: dict,
                                                       exact_max: int | None) -> None:
    """Above the facets' exact threshold (``exact_max`` 20 puts the sample there) a page inside
    the fused head does not count the matches itself when the source facet counts them exactly (no
    source filter); the total must be the same either way, and on every page."""
    if exact_max is not None:
        import searchnasa.search.facets as svc

        monkeypatch.setattr(svc, "FACET_EXACT_MAX", exact_max)
    lex_ids = set(all_ids(SearchService(settings), q, mode="lexical", **filters))
    outside = [rid for rid, r in records.items() if rid not in lex_ids and r.source == "ntrs"][:6]
    service = SearchService(settings, semantic=FixedCandidates(outside + sorted(lex_ids)[:2]))
    every = all_ids(service, q, mode="hybrid", **filters)
    assert len(every) == len(set(every)) and set(every) == lex_ids | set(outside)
    assert set(every[:len(lex_ids)]) == lex_ids  # the matches first, then the extras
    for page in (1, 2):
        resp = service.search(SearchRequest(q=q, mode="hybrid", per_page=4, page=page, **filters))
        assert resp.mode == "hybrid" and len(resp.results) == 4
        assert resp.total == len(lex_ids) and resp.extras_total == len(outside)


def test_semantic_candidates_must_match_phrases_exclusions_fields_and_filters(settings, records) -> None:
    phrase_hits = set(all_ids(SearchService(settings), 'flow "wind tunnel"', mode="lexical"))
    with_phrase = [rid for rid, r in records.items()
                   if rid not in phrase_hits and "wind tunnel" in (r.abstract or "").lower()][:3]
    without_phrase = [rid for rid, r in records.items() if not contains_phrase(r, "wind tunnel")][:3]
    service = SearchService(settings, semantic=FixedCandidates(without_phrase + with_phrase))
    ids = set(all_ids(service, 'flow "wind tunnel"', mode="hybrid"))
    assert not ids & set(without_phrase)
    assert set(with_phrase) <= ids

    excluded = [rid for rid, r in records.items() if contains_word(r, "cell")][:3]
    service = SearchService(settings, semantic=FixedCandidates(excluded))
    assert not set(all_ids(service, "solar -cell", mode="hybrid")) & set(excluded)

    osti = [rid for rid, r in records.items() if r.source == "osti"][:3]
    service = SearchService(settings, semantic=FixedCandidates(osti))
    assert not set(all_ids(service, "propeller", mode="hybrid", source="ntrs")) & set(osti)
    assert set(osti) <= set(all_ids(service, "propeller", mode="hybrid"))
    resp = service.search(SearchRequest(q="propeller", mode="hybrid", source="ntrs"))
    # the source tab counts ignore the source filter, so the OSTI tab counts the admitted OSTI ids
    assert {b.value: b.count for b in resp.facets["source"]}["osti"] >= len(osti)


def test_semantic_mode_orders_by_similarity(settings, records) -> None:
    ids = [rid for rid, r in records.items() if r.source == "ntrs"][:10]
    service = SearchService(settings, semantic=FixedCandidates(ids))
    resp = service.search(SearchRequest(q="anything at all", mode="semantic"))
    assert resp.mode == "semantic" and [h.id for h in resp.results] == ids and resp.total == 10


def test_fallbacks_to_lexical(settings) -> None:
    lexical_total = SearchService(settings).search(SearchRequest(q="propeller", mode="lexical")).total
    down = SearchService(settings, semantic=FixedCandidates(["ntrs:19770084252"], up=False))
    resp = down.search(SearchRequest(q="propeller", mode="hybrid"))
    assert resp.mode == "lexical" and resp.total == lexical_total
    resp = down.search(SearchRequest(q="propeller", mode="semantic"))
    assert resp.mode == "lexical" and resp.notices
    provider = FixedCandidates(["ntrs:19770084252"])
    strict_only = SearchService(settings, semantic=provider)
    resp = strict_only.search(SearchRequest(q='"wind tunnel" year:1960-1970', mode="hybrid"))
    assert resp.mode == "lexical" and not provider.asked
    assert SearchService(settings).search(SearchRequest(q="propeller")).mode == "lexical"


def test_reciprocal_rank_fusion() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "d"]])
    assert [d for d, _ in fused] == ["c", "a", "b", "d"]
    assert fused[0][1] == pytest.approx(1 / 63 + 1 / 61)
    assert [d for d, _ in reciprocal_rank_fusion([["b"], ["a"]])] == ["a", "b"]  # ties by id


def test_weighted_sum() -> None:
    fused = weighted_sum([("a", 10.0), ("b", 5.0), ("c", 0.0)], [("c", 0.9), ("b", 0.1)], semantic_weight=0.5)
    scores = dict(fused)
    assert scores["a"] == pytest.approx(0.5) and scores["b"] == pytest.approx(0.25)
    assert scores["c"] == pytest.approx(0.5)
    assert [d for d, _ in fused] == ["a", "c", "b"]


def test_weighted_sum_with_a_lexical_floor() -> None:
    """With the floor at 0 the last lexical hit keeps its share; scores under a floor count as 0."""
    lexical = [("a", 10.0), ("b", 5.0)]
    semantic = [("a", 0.5), ("b", 0.5), ("c", 1.0)]
    plain = dict(weighted_sum(lexical, semantic, semantic_weight=0.5))
    assert plain["b"] == pytest.approx(0.0)  # the worst hit maps to 0, like a record with no word
    floored = dict(weighted_sum(lexical, semantic, semantic_weight=0.5, lexical_floor=0.0))
    assert floored["a"] == pytest.approx(0.5) and floored["b"] == pytest.approx(0.25)
    assert floored["c"] == pytest.approx(0.5)
    clipped = dict(weighted_sum([("a", 10.0), ("b", 2.0)], semantic, semantic_weight=0.5, lexical_floor=4.0))
    assert clipped["b"] == pytest.approx(0.0) and clipped["a"] == pytest.approx(0.5)


def test_semantic_mode_with_no_admitted_candidates(settings) -> None:
    service = SearchService(settings, semantic=FixedCandidates([]))
    resp = service.search(SearchRequest(q="propeller", mode="semantic"))
    assert resp.total == 0 and resp.results == []
    service = SearchService(settings, semantic=FixedCandidates(["ntrs:does-not-exist"]))
    resp = service.search(SearchRequest(q="propeller", mode="hybrid"))
    assert resp.mode == "lexical" and resp.total > 0
