"""Facet counts: the per-snapshot cache, and the estimated path under a source filter.

Facets are most of a search's cost at scale (bench/README.md, "Cost of our layers at 1M"), so the
service remembers them per index snapshot, query and filters. These tests check that a cached
answer is always the answer a fresh computation gives, and that a new commit is never answered
from the old snapshot's counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import searchnasa.search.facets as svc
from searchnasa.index import build_index
from searchnasa.records import Record
from searchnasa.search.lexical import compile_node, named_filters
from searchnasa.search.query import parse
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.store import StoredItem, open_store


def lexical(service: SearchService, q: str = "", **kw):
    return service.search(SearchRequest(q=q, mode="lexical", **kw))


def count_facet_runs(service: SearchService, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Wrap the service's facet computation; the returned list grows by one per real run."""
    calls: list[int] = []
    inner = service.facet_counter.count

    def counted(*args, **kwargs):
        calls.append(1)
        return inner(*args, **kwargs)

    monkeypatch.setattr(service.facet_counter, "count", counted)
    return calls


def synthetic(rid: str, source: str, title: str, year: int) -> Record:
    """A SYNTHETIC record made for these tests (not a real report)."""
    return Record(id=f"{source}:{rid}", source=source, source_id=rid, title=title,
                  abstract=f"SYNTHETIC abstract about {title.lower()}.",
                  date={"value": f"{year}-01-01", "kind": "published", "precision": "day"}, year=year,
                  links={"landing": f"https://example.invalid/synthetic/{rid}"})


def test_turning_a_page_or_the_sort_reuses_the_facet_counts(indexed_home: Path, monkeypatch) -> None:
    service = SearchService(Settings().with_home(indexed_home))
    calls = count_facet_runs(service, monkeypatch)
    first = lexical(service, "wind tunnel")
    assert first.total > 40 and len(calls) == 1
    second = lexical(service, "wind tunnel", page=2)
    newest = lexical(service, "wind tunnel", sort="newest")
    assert len(calls) == 1  # neither the page nor the sort changes the counts
    assert second.facets == first.facets == newest.facets
    assert [h.id for h in second.results] != [h.id for h in first.results]
    lexical(service, "wind tunnel", source="ntrs")  # a filter is a different question
    lexical(service, "wind tunnels")  # so is different text (even with the same stems)
    assert len(calls) == 3


def test_cached_answers_equal_fresh_ones(indexed_home: Path, monkeypatch) -> None:
    """A mixed sequence with repeats: the cached service answers exactly like an uncached one."""
    cached = SearchService(Settings().with_home(indexed_home))
    fresh = SearchService(Settings().with_home(indexed_home))
    requests = [
        {"q": ""}, {"q": "heat transfer"}, {"q": "", "source": "ntrs"}, {"q": "heat transfer", "page": 2},
        {"q": "", "year_from": 1970, "year_to": 1989}, {"q": "heat transfer", "source": "osti"},
        {"q": '"wind tunnel"', "sort": "oldest"}, {"q": ""}, {"q": "", "source": "ntrs"},
        {"q": "heat transfer", "year_from": 1970, "year_to": 1989},
        {"q": "heat transfer", "year_from": 1970, "year_to": 1989, "page": 3},
    ]
    for req in requests:
        got = lexical(cached, **req)
        monkeypatch.setenv("SEARCHNASA_FACET_CACHE", "0")
        want = lexical(fresh, **req)
        monkeypatch.delenv("SEARCHNASA_FACET_CACHE")
        assert got.total == want.total, req
        assert got.facets == want.facets, req
        assert got.facets_estimated == want.facets_estimated, req


def test_a_new_commit_is_never_answered_from_the_old_counts(tmp_home: Path) -> None:
    settings = Settings().with_home(tmp_home)
    store = open_store(tmp_home)
    records = [synthetic(f"fc{i}", "osti", f"Cryogenic pump test {i}", 1990 + i % 3) for i in range(12)]
    store.upsert([StoredItem(r, "records-jsonl", r.model_dump(mode="json")) for r in records])
    build_index(store, settings.index_dir)
    service = SearchService(settings)
    before = lexical(service, "cryogenic")
    assert {b.value: b.count for b in before.facets["source"]} == {"osti": 12}
    assert lexical(service, "cryogenic").facets == before.facets  # answered from the cache

    added = synthetic("fc-new", "ntrs", "Cryogenic pump test new", 2001)
    store.upsert([StoredItem(added, "records-jsonl", added.model_dump(mode="json"))])
    build_index(store, settings.index_dir)  # an incremental commit to the live generation
    after = lexical(service, "cryogenic")
    assert after.total == 13
    assert {b.value: b.count for b in after.facets["source"]} == {"osti": 12, "ntrs": 1}
    assert {b.value: b.count for b in after.facets["decade"]} == {"1990s": 12, "2000s": 1}

    # an edit that keeps every count the key could see (documents, matches) but moves a year
    moved = synthetic("fc0", "osti", "Cryogenic pump test 0", 2005)
    store.upsert([StoredItem(moved, "records-jsonl", moved.model_dump(mode="json"))])
    build_index(store, settings.index_dir)
    edited = lexical(service, "cryogenic")
    assert edited.total == 13
    assert {b.value: b.count for b in edited.facets["decade"]} == {"1990s": 11, "2000s": 2}

    build_index(store, settings.index_dir, rebuild=True)  # a new generation swapped in
    assert lexical(service, "cryogenic").facets == edited.facets
    store.close()


def test_the_cache_can_be_turned_off(indexed_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("SEARCHNASA_FACET_CACHE", "0")
    service = SearchService(Settings().with_home(indexed_home))
    calls = count_facet_runs(service, monkeypatch)
    lexical(service, "rocket")
    lexical(service, "rocket")
    assert len(calls) == 2


def test_the_cache_stays_bounded(indexed_home: Path, monkeypatch) -> None:
    monkeypatch.setenv("SEARCHNASA_FACET_CACHE", "3")
    service = SearchService(Settings().with_home(indexed_home))
    calls = count_facet_runs(service, monkeypatch)
    for q in ("rocket", "engine", "plasma", "turbine", "rocket"):
        lexical(service, q)
    assert len(service.facet_counter._cache) == 3
    assert len(calls) == 5  # "rocket" was evicted by the fourth query, so it ran again
    lexical(service, "turbine")
    assert len(calls) == 5


def test_source_filtered_estimates_scale_by_the_page_count(indexed_home: Path, monkeypatch) -> None:
    """Under a source filter the page's own count scales the sampled facets (no second counting
    pass); the source tab counts still come exact from the query without the source filter."""
    monkeypatch.setenv("SEARCHNASA_FACET_CACHE", "0")
    service = SearchService(Settings().with_home(indexed_home))
    exact_all = lexical(service, "")
    exact_osti = lexical(service, "", source="osti")
    monkeypatch.setattr(svc, "FACET_EXACT_MAX", 1000)
    monkeypatch.setattr(svc, "FACET_SAMPLE_TARGET", 300)
    est = lexical(service, "", source="osti")
    assert est.total == exact_osti.total > 1000
    # OSTI's ~1,300 records are under AUTHOR_FACET_MAX, so the author facet is counted (and sampled) too
    assert est.facets_estimated == ["decade", "year", "no_date", "document_type", "topic", "subject", "organization",
                                    "author"]
    assert est.facets["source"] == exact_all.facets["source"]  # exact: the tabs
    dated = sum(b.count for b in exact_osti.facets["decade"])
    assert abs(sum(b.count for b in est.facets["decade"]) - dated) < 0.15 * dated
    top = max(exact_osti.facets["decade"], key=lambda b: b.count)
    assert abs({b.value: b.count for b in est.facets["decade"]}[top.value] - top.count) < 0.35 * top.count


@pytest.mark.parametrize("exact_max", [40_000, 50])  # the sample: every facet exact; or mostly sampled
def test_facets_counted_beside_the_page_equal_those_counted_after_it(indexed_home: Path, monkeypatch,
                                                                      exact_max: int) -> None:
    """The facet pass runs on another thread while the page is ranked, so it no longer gets the
    page's count; it counts the matches itself. The counts (and which facets are estimated) must
    be those the sequential pass, given the page's total, computes."""
    import threading

    monkeypatch.setattr(svc, "FACET_EXACT_MAX", exact_max)
    monkeypatch.setenv("SEARCHNASA_FACET_CACHE", "0")
    service = SearchService(Settings().with_home(indexed_home))
    threads: set[str] = set()
    inner = service.facet_counter.count

    def recorded(*args, **kwargs):
        threads.add(threading.current_thread().name)
        return inner(*args, **kwargs)

    monkeypatch.setattr(service.facet_counter, "count", recorded)
    searcher, schema = service.reader.searcher(), service.reader.index.schema
    for q, kw in (("wind tunnel", {}), ("engine", {"source": "ntrs"}), ('"heat transfer"', {}),
                  ("", {"year_from": 1990}), ("combustion", {"sort": "newest", "page": 2})):
        resp = lexical(service, q, **kw)
        req = SearchRequest(q=q, mode="lexical", **kw)
        base = compile_node(schema, parse(q).tree)
        after = inner(searcher, schema, base, named_filters(schema, req), known_total=resp.total)
        assert (resp.facets, resp.facets_estimated) == (after[0], after[1]), q
    assert threads and all(name.startswith("facets") for name in threads)  # not the request's thread
    # with another search running, the cores are busy: the facets are counted after the page, on
    # the request's own thread, from the page's count, and come out the same
    alone = lexical(service, "wind tunnel")
    threads.clear()
    service._in_flight = 1
    try:
        busy = lexical(service, "wind tunnel")
    finally:
        service._in_flight = 0
    assert threads == {threading.current_thread().name}
    assert (busy.facets, busy.facets_estimated, busy.total) == (alone.facets, alone.facets_estimated, alone.total)
