"""Truncated words (``turbo*``) on the real sample's index: they match exactly the records holding
a word that starts so, through either form of the query (term expansions, or the regular
expression past ``MAX_EXPANSIONS``), are ranked, highlighted, costed and offered by the
spelling check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tantivy
from semantic_util import semantic_home_from

from searchnasa.index.reader import IndexReader
from searchnasa.search import budget, lexical
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.query import parse
from searchnasa.search.query_tree import Prefix
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings


@pytest.fixture(scope="module")
def service(indexed_home: Path) -> SearchService:
    return SearchService(Settings().with_home(indexed_home))


@pytest.fixture(scope="module")
def settings_with_vectors(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings().with_home(semantic_home_from(indexed_home, tmp_path_factory.mktemp("truncation_home")))


@pytest.fixture(scope="module")
def searcher(indexed_home: Path):
    return IndexReader(Settings().with_home(indexed_home).index_dir).searcher()


def total(service: SearchService, q: str) -> int:
    return service.search(SearchRequest(q=q, mode="lexical")).total


@pytest.mark.parametrize(("prefix", "many"), [("turbo", False), ("pro", True)])
def test_a_truncated_word_matches_every_word_that_starts_so(
        service: SearchService, searcher, prefix: str, many: bool) -> None:
    """The count equals that of a Tantivy term set of every expansion (the catch-all holds the
    title too), counted independently of the query code."""
    words = [w for w, _ in searcher.terms_with_prefix("all_exact", prefix)]
    assert (len(words) > lexical.MAX_EXPANSIONS) is many  # both forms of the query are covered
    schema = service.reader.index.schema
    expected = searcher.search(tantivy.Query.term_set_query(schema, "all_exact", words), limit=1, count=True).count
    assert total(service, f"{prefix}*") == expected > 0
    bare = lexical.compile_node(schema, Prefix(prefix))  # no searcher: the regular expression alone
    assert searcher.search(bare, limit=1, count=True).count == expected


def test_truncation_combines_with_words_fields_and_exclusions(service: SearchService) -> None:
    both = total(service, "turbo* engine")
    assert 0 < both < total(service, "turbo*")
    assert total(service, "turbo* -engine") == total(service, "turbo*") - both
    titled = service.search(SearchRequest(q="title:aero*", mode="lexical", per_page=100))
    assert titled.total > 0
    assert all(re.search(r"(?<![^\W_])aero", h.title, re.IGNORECASE) for h in titled.results)


def test_truncated_matches_are_ranked_and_marked(service: SearchService) -> None:
    resp = service.search(SearchRequest(q="turbo*", mode="lexical", per_page=10))
    assert len({h.score for h in resp.results}) > 1  # BM25 of the words it expands to, not a constant
    for hit in resp.results:
        marked = re.findall(r"<mark>(.*?)</mark>", hit.title_html + hit.snippet_html)
        assert marked and all(m.lower().startswith("turbo") for m in marked), hit.id


def test_cost_is_the_postings_of_every_expansion(searcher) -> None:
    expected = sum(df for _, df in searcher.terms_with_prefix("all_exact", "turbo"))
    expected += sum(df for _, df in searcher.terms_with_prefix("title_exact", "turbo"))
    assert budget.postings_cost(searcher, Prefix("turbo")) == expected > 0


def test_hybrid_search_reads_a_truncated_word_as_a_word(settings_with_vectors: Settings) -> None:
    from searchnasa.semantic.provider import VectorProvider as SemanticProvider

    service = SearchService(settings_with_vectors, semantic=SemanticProvider(settings_with_vectors.vectors_dir))
    resp = service.search(SearchRequest(q="turbo* engine", mode="hybrid"))
    assert resp.mode == "hybrid" and resp.total >= total(service, "turbo* engine") > 0


def test_a_word_that_only_starts_words_is_offered_truncated(service: SearchService) -> None:
    resp = service.search(SearchRequest(q="turbo engine", mode="lexical"))
    assert resp.total == 0 and resp.suggestion == "turbo* engine"
    assert total(service, resp.suggestion) > 0
    # in a phrase, which cannot be truncated, the fragment is left alone rather than edited
    assert service.search(SearchRequest(q='"turbo engine"', mode="lexical")).suggestion is None
    # a truncated word is never "corrected"
    assert service.search(SearchRequest(q="turbo* aerodynamcs", mode="lexical")).suggestion == "turbo* aerodynamics"


def test_parse_keeps_the_prefix_lower_case() -> None:
    assert parse("TURBO*").tree == Prefix("turbo")
