"""Ranking quality rules on the real sample with its real (bundled) embeddings:
the similarity floor for semantic candidates, the honest notice when no word matched, and the
weighted-sum fusion that scores every fused candidate by its own cosine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from semantic_util import semantic_home_from

from searchnasa.index import build_index
from searchnasa.index.reader import IndexReader
from searchnasa.index.schema import build_schema
from searchnasa.records import Record
from searchnasa.search import fusion, lexical
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.query import parse
from searchnasa.search.query_tree import positive_texts
from searchnasa.search.fusion import SEMANTIC_WEIGHT
from searchnasa.search.hybrid import FUSION_DEPTH, NO_WORD_MATCH
from searchnasa.search.service import SearchService
from searchnasa.semantic.provider import SIMILARITY_FLOOR, VectorProvider as SemanticProvider
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store

NONSENSE = ("zzhostilesynthetic", "qwxzvbn", "xyzzy plugh")


@pytest.fixture(scope="module")
def settings(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings().with_home(semantic_home_from(indexed_home, tmp_path_factory.mktemp("ranking_home")))


@pytest.fixture(scope="module")
def provider(settings: Settings) -> SemanticProvider:
    return SemanticProvider(settings.vectors_dir)


@pytest.fixture(scope="module")
def service(settings: Settings, provider: SemanticProvider) -> SearchService:
    return SearchService(settings, semantic=provider)


class Recording:
    """The real provider, recording which ids the service asked it to score."""

    def __init__(self, inner: SemanticProvider) -> None:
        self.inner = inner
        self.scored: list[str] = []

    def available(self) -> bool:
        return self.inner.available()

    def query_candidates(self, text: str, k: int) -> list[tuple[str, float]]:
        return self.inner.query_candidates(text, k)

    def similarities(self, text: str, ids: list[str]) -> dict[str, float]:
        self.scored.extend(ids)
        return self.inner.similarities(text, ids)

    def similarities_by_key(self, text: str, keys: list[int]) -> None:
        return None  # by id only, so the ids asked for are recorded


@pytest.mark.parametrize("q", NONSENSE)
def test_nonsense_gets_no_semantic_candidates(provider: SemanticProvider, q: str) -> None:
    assert provider.available()
    # without the floor the nearest neighbours exist, they are just not similar
    assert provider.nearest(provider.embed_text(q), 5)
    assert provider.query_candidates(q, 200) == []


def test_a_real_query_keeps_candidates_above_the_floor(provider: SemanticProvider) -> None:
    hits = provider.query_candidates("battery thermal runaway", 200)
    assert len(hits) >= 10
    assert all(sim >= SIMILARITY_FLOOR for _, sim in hits)
    assert len(hits) < 200  # the floor cut the long tail of unrelated records


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_nonsense_query_finds_nothing_in_any_mode(service: SearchService, mode: str) -> None:
    resp = service.search(SearchRequest(q="qwxzvbn", mode=mode))
    assert resp.total == 0 and resp.results == []
    assert sum(b.count for b in resp.facets["source"]) == 0


def test_meaning_without_matching_words_says_so(service: SearchService) -> None:
    lexical = service.search(SearchRequest(q="exoplanet habitability", mode="lexical"))
    assert lexical.total == 0  # no sample record holds both words
    resp = service.search(SearchRequest(q="exoplanet habitability", mode="hybrid", per_page=100))
    # nothing matches: no record is counted, the records close in meaning are listed as such
    assert resp.mode == "hybrid" and resp.total == 0 and resp.extras_total == len(resp.results) > 0
    assert all(h.close_in_meaning and h.missing_words for h in resp.results)
    assert NO_WORD_MATCH in resp.notices
    words = service.search(SearchRequest(q="battery thermal runaway", mode="hybrid"))
    assert words.total > 0 and NO_WORD_MATCH not in words.notices


def test_hybrid_head_is_the_weighted_sum_of_bm25_and_every_candidates_cosine(
        settings: Settings, provider: SemanticProvider) -> None:
    q = "heat OR shield OR ablation"  # OR: many lexical hits, some far in meaning
    recording = Recording(provider)
    service = SearchService(settings, semantic=recording)
    resp = service.search(SearchRequest(q=q, mode="hybrid", per_page=20))
    # recompute the fusion independently from the two rankings the product exposes
    lexical: list[tuple[str, float]] = []
    page = 1
    while len(lexical) < FUSION_DEPTH:
        got = service.search(SearchRequest(q=q, mode="lexical", per_page=100, page=page)).results
        lexical.extend((h.id, h.score) for h in got)
        if len(got) < 100:
            break
        page += 1
    lexical = lexical[:FUSION_DEPTH]
    text = " ".join(positive_texts(parse(q).tree))  # what the service embeds: the words, no operators
    assert text == "heat shield ablation"
    candidates = dict(provider.query_candidates(text, 200))
    outside = [rid for rid, _ in lexical if rid not in candidates]
    assert outside, "the query should have lexical hits outside the semantic candidates"
    assert set(outside) <= set(recording.scored)  # their cosines were asked for, not taken as 0
    cosines = {**provider.similarities(text, [rid for rid, _ in lexical]), **candidates}
    expected = fusion.weighted_sum(lexical, list(cosines.items()), SEMANTIC_WEIGHT)
    assert [h.id for h in resp.results] == [rid for rid, _ in expected[:20]]


def _lexical_scores(service: SearchService, q: str) -> dict[str, float]:
    """Every lexical match of ``q`` with its score, through the public search."""
    scores: dict[str, float] = {}
    page = 1
    while True:
        got = service.search(SearchRequest(q=q, mode="lexical", per_page=100, page=page)).results
        scores.update((h.id, h.score) for h in got)
        if len(got) < 100:
            return scores
        page += 1


def test_candidates_lacking_a_word_score_by_the_words_they_hold(
        service: SearchService, provider: SemanticProvider) -> None:
    """An AND query with few matches: every match is listed, so lexical scores run from the best
    down to 0 (not down to the last match), and a semantic candidate lacking a word gets the BM25
    of the words it holds, as the OR of the same words scores it (same clauses, same scale)."""
    q = "battery thermal runaway"
    strict = _lexical_scores(service, q)
    assert 0 < len(strict) < FUSION_DEPTH  # the whole lexical list: the floor is 0
    text = " ".join(positive_texts(parse(q).tree))
    candidates = dict(provider.query_candidates(text, 200))
    any_word = _lexical_scores(service, "battery OR thermal OR runaway")
    partial = {rid: any_word[rid] for rid in candidates if rid not in strict and rid in any_word}
    assert partial, "some candidates should hold some of the words"
    assert all(rid not in any_word for rid in candidates if rid not in strict and rid not in partial)
    lexical_list = sorted({**strict, **partial}.items(), key=lambda kv: -kv[1])
    cosines = {**provider.similarities(text, list(strict)), **candidates}
    expected = fusion.weighted_sum(lexical_list, list(cosines.items()), SEMANTIC_WEIGHT, lexical_floor=0.0)
    resp = service.search(SearchRequest(q=q, mode="hybrid", per_page=30))
    assert [h.id for h in resp.results] == [rid for rid, _ in expected[:30]]
    assert [h.score for h in resp.results] == pytest.approx([score for _, score in expected[:30]])
    # what changed: without the partial scores and the floor the page is ordered otherwise
    before = fusion.weighted_sum(sorted(strict.items(), key=lambda kv: -kv[1]), list(cosines.items()),
                                 SEMANTIC_WEIGHT)
    assert [rid for rid, _ in before[:30]] != [rid for rid, _ in expected[:30]]


def test_partial_query_only_for_conjunctions() -> None:
    """An OR, a single word or a word with exclusions is its own partial match: no extra pass."""
    schema = build_schema()
    for q in ("battery OR thermal", "battery", "battery -thermal", '"thermal runaway"'):
        assert lexical.partial_query(schema, parse(q).tree) is None, q
    for q in ("battery thermal", 'battery "thermal runaway" -lithium', "title:battery thermal"):
        assert lexical.partial_query(schema, parse(q).tree) is not None, q


def test_rrf_stays_available(settings: Settings, provider: SemanticProvider) -> None:
    rrf = SearchService(settings, semantic=provider, fusion_method="rrf")
    weighted = SearchService(settings, semantic=provider)
    a = rrf.search(SearchRequest(q="heat shield ablation", mode="hybrid", per_page=50))
    b = weighted.search(SearchRequest(q="heat shield ablation", mode="hybrid", per_page=50))
    assert a.total == b.total  # the same union, honestly counted
    assert [h.id for h in a.results] != [h.id for h in b.results]  # the option changes the ranking


class BrokenScores(Recording):
    """The real provider whose per-record scoring fails (a wrapper bug, a reloading index)."""

    def similarities(self, text: str, ids: list[str]) -> dict[str, float]:
        raise RuntimeError("synthetic failure")


def test_failing_similarities_fall_back_to_rank_fusion(settings: Settings, provider: SemanticProvider) -> None:
    q = "heat OR shield OR ablation"
    broken = SearchService(settings, semantic=BrokenScores(provider))
    rrf = SearchService(settings, semantic=provider, fusion_method="rrf")
    a = broken.search(SearchRequest(q=q, mode="hybrid", per_page=30))
    b = rrf.search(SearchRequest(q=q, mode="hybrid", per_page=30))
    assert a.mode == "hybrid" and a.total == b.total
    assert [h.id for h in a.results] == [h.id for h in b.results]


# -- term proximity (adjacent word pairs) --------------------------------------------------------

# SYNTHETIC records written for this test: "near" and "far" hold exactly the same words, so
# their BM25 on every word is identical; only "near" has "thermal runaway" side by side.
PROXIMITY_DOCS = {
    "far": "runaway was observed in the lithium cell during the thermal overcharge test of the pack",
    "near": "thermal runaway was observed in the lithium cell during the overcharge test of the pack",
    "other1": "wind tunnel balance calibration for a transonic half model",
    "other2": "ablative heat shield char layer growth in arc jet tests",
    "other3": "thermal conductivity of aerogel blankets at low pressure",
}


@pytest.fixture
def proximity_searcher(tmp_home: Path) -> tuple[object, object]:
    store = open_store(tmp_home)
    store.upsert([StoredItem(Record(id=f"osti:{key}", source="osti", source_id=key, title="Synthetic test record",
                                    abstract=text), "synthetic", {"_id": key})
                  for key, text in PROXIMITY_DOCS.items()])
    settings = Settings().with_home(tmp_home)
    build_index(store, settings.index_dir)
    store.close()
    reader = IndexReader(settings.index_dir)
    return reader.searcher(), reader.index.schema


def _scores(searcher_schema: tuple[object, object], q: str) -> dict[str, float]:
    searcher, schema = searcher_schema
    hits = searcher.search(lexical.compile_node(schema, parse(q).tree), limit=50).hits  # type: ignore[attr-defined]
    return {searcher.doc(addr).get_first("id").split(":", 1)[1]: score for score, addr in hits}  # type: ignore[attr-defined]


@pytest.mark.parametrize("q", ["thermal runaway", "thermal OR runaway", "lithium thermal runaway"])
def test_words_side_by_side_rank_above_the_same_words_apart(
        proximity_searcher: tuple[object, object], q: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert lexical.PAIR_WEIGHT > 0
    with_pairs = _scores(proximity_searcher, q)
    assert with_pairs["near"] > with_pairs["far"]
    monkeypatch.setattr(lexical, "PAIR_WEIGHT", 0.0)
    without = _scores(proximity_searcher, q)
    assert without["near"] == pytest.approx(without["far"])  # the difference is the pair score alone
    assert set(without) == set(with_pairs)  # and the pair clause matched nothing new


def test_pairs_follow_query_order(proximity_searcher: tuple[object, object]) -> None:
    # "runaway thermal" is side by side in neither record: no proximity bonus for either
    scores = _scores(proximity_searcher, "runaway thermal")
    assert scores["near"] == pytest.approx(scores["far"])


@pytest.mark.parametrize(("q", "pairs"), [
    ("battery thermal runaway", ["battery_thermal", "thermal_runaway"]),
    ("heat OR shield OR ablation", ["heat_shield", "shield_ablation"]),
    ('thermal "heat shield" runaway', []),  # a phrase breaks the run of bare words
    ("wind tunnel -noise title:jet engine", ["wind_tunnel"]),  # so do exclusions and field clauses
    ("X-15 flight", ["x_15", "15_flight"]),
    ("runaway", []),
])
def test_adjacent_pairs_are_bare_words_side_by_side(q: str, pairs: list[str]) -> None:
    tree = parse(q).tree
    children = getattr(tree, "children", (tree,))
    assert lexical.adjacent_pairs(children) == pairs


@pytest.mark.parametrize("q", ["battery thermal runaway", "heat OR shield OR ablation",
                               "wind tunnel -supersonic", 'boundary layer "heat transfer"',
                               "jet OR rocket engine nozzle", "title:rocket engine test"])
def test_proximity_never_changes_what_matches(indexed_home: Path, q: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    reader = IndexReader(Settings().with_home(indexed_home).index_dir)
    searcher, schema = reader.searcher(), reader.index.schema

    def run() -> tuple[int, dict[object, float]]:
        query = lexical.compile_node(schema, parse(q).tree)
        result = searcher.search(query, limit=10_000, count=True)
        return int(result.count or 0), {(addr.segment_ord, addr.doc): score for score, addr in result.hits}

    count_pairs, scored_pairs = run()
    monkeypatch.setattr(lexical, "PAIR_WEIGHT", 0.0)
    count_plain, scored_plain = run()
    assert count_pairs == count_plain > 0
    assert set(scored_pairs) == set(scored_plain)
    assert all(scored_pairs[d] >= scored_plain[d] - 1e-4 for d in scored_plain)  # only ever adds
