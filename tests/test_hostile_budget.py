"""A query that would run too long is cut off, and its count reported as a lower bound.

``search.budget`` estimates the postings an exact evaluation would walk (from the term
dictionaries, no postings read); over the budget, repeats are dropped first (exact), then the
commonest OR alternatives (a narrower match set, so the count is a true lower bound). In-process
checks on the real sample index, then the whole path over HTTP with a small budget configured.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from searchnasa.errors import BadInput

from server_util import copy_home, running_server
from searchnasa.search.budget import count_budget, fit_to_budget, postings_cost
from searchnasa.search.lexical import compile_node
from searchnasa.search.query import parse
from searchnasa.search.query_tree import And, Or, Term
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings

COMMON = ["the", "of", "and", "to", "for", "in", "on", "with", "is", "by", "from", "at", "be", "as",
          "that", "this", "are", "an", "was", "system", "test", "data", "flow", "model", "analysis"]


@pytest.fixture(scope="module")
def service(indexed_home: Path) -> SearchService:
    return SearchService(Settings().with_home(indexed_home))


def ids_matching(service: SearchService, tree) -> set[str]:
    searcher = service.reader.searcher()
    query = compile_node(service.reader.index.schema, tree)
    hits = searcher.search(query, limit=searcher.num_docs, count=False).hits
    return {searcher.doc(addr).get_first("id") for _, addr in hits}


def count(service: SearchService, tree) -> int:
    query = compile_node(service.reader.index.schema, tree)
    return service.reader.searcher().search(query, limit=1, count=True).count


def test_cost_follows_the_term_dictionaries(service: SearchService) -> None:
    searcher = service.reader.searcher()
    rare, common = parse("regolith").tree, parse("the").tree
    assert 0 < postings_cost(searcher, rare) < postings_cost(searcher, common)
    either = parse("regolith OR the").tree
    both = parse("regolith AND the").tree  # AND: every word required, stop words too
    assert postings_cost(searcher, either) == postings_cost(searcher, rare) + postings_cost(searcher, common)
    assert postings_cost(searcher, both) == 2 * postings_cost(searcher, rare)  # driven by the rarer word
    assert postings_cost(searcher, parse("-the").tree) == searcher.num_docs


def test_within_budget_the_query_is_untouched(service: SearchService) -> None:
    tree = parse("heat OR transfer OR rocket").tree
    fitted, cut = fit_to_budget(service.reader.searcher(), tree)
    assert fitted is tree and not cut
    assert count_budget() == 20_000_000


def test_repeats_are_dropped_exactly_before_anything_is_cut(service: SearchService) -> None:
    tree = parse(" OR ".join(["heat", "the", "engine"] * 60)).tree
    searcher = service.reader.searcher()
    budget = postings_cost(searcher, tree) // 10
    fitted, cut = fit_to_budget(searcher, tree, budget)
    assert not cut and isinstance(fitted, Or) and len(fitted.children) == 3
    assert count(service, fitted) == count(service, tree)


def test_over_budget_the_commonest_alternatives_go_and_the_count_is_a_lower_bound(service: SearchService) -> None:
    tree = parse(" OR ".join(COMMON + ["regolith", "lunar"])).tree
    searcher = service.reader.searcher()
    full = postings_cost(searcher, tree)
    fitted, cut = fit_to_budget(searcher, tree, full // 20)
    assert cut
    assert postings_cost(searcher, fitted) <= full // 20
    kept = {c.text for c in (fitted.children if isinstance(fitted, Or) else (fitted,))}
    assert {"regolith", "lunar"} <= kept and "the" not in kept  # the rarest words stay
    narrowed, everything = ids_matching(service, fitted), ids_matching(service, tree)
    assert narrowed and narrowed <= everything  # a subset: the count is a true lower bound
    assert count(service, fitted) == len(narrowed) < len(everything)


def test_an_and_is_narrowed_part_by_part_and_a_not_is_kept_whole(service: SearchService) -> None:
    tree = parse("(" + " OR ".join(COMMON) + ") -regolith").tree
    searcher = service.reader.searcher()
    fitted, cut = fit_to_budget(searcher, tree, postings_cost(searcher, tree) // 20 + searcher.num_docs)
    assert cut and isinstance(fitted, And)
    assert ids_matching(service, fitted) <= ids_matching(service, tree)


def test_pathological_nesting_costs_a_lot_without_recursing_forever(service: SearchService) -> None:
    searcher = service.reader.searcher()
    alternatives = Term("engine")
    for depth in range(3000):
        alternatives = Or((alternatives, Term(f"w{depth}")))
    assert postings_cost(searcher, alternatives) > count_budget()  # and no RecursionError
    with pytest.raises(BadInput, match="nested more than 100 levels"):
        fit_to_budget(searcher, alternatives)
    shallow = parse(" OR ".join(f"(heat OR w{i})" for i in range(60))).tree
    assert fit_to_budget(searcher, shallow)[0] is not None


# -- over HTTP: the page and the API say "at least" --------------------------------------------
def test_a_query_over_the_budget_answers_fast_with_a_lower_bound(indexed_home: Path, tmp_path: Path) -> None:
    home = copy_home(indexed_home, tmp_path / "home")
    q = " OR ".join(COMMON + ["regolith"])
    with running_server(home, tmp_path / "server.log", extra_env={"SEARCHNASA_COUNT_BUDGET": "20000"}) as server:
        with httpx.Client(base_url=server.base_url, timeout=10.0) as client:
            body = client.get("/api/search", params={"q": q, "mode": "lexical"}).json()
            assert body["total_is_lower_bound"] is True
            assert body["total"] >= len(body["results"]) > 0
            assert any("lower bound" in notice for notice in body["notices"]), body["notices"]
            plain = client.get("/api/search", params={"q": "regolith", "mode": "lexical"}).json()
            assert plain["total_is_lower_bound"] is False  # a cheap query is counted exactly
            page = client.get("/search", params={"q": q}, headers={"accept": "text/html"})
            assert page.status_code == 200 and "At least " in page.text
        assert "Traceback" not in server.log()
