"""The topic filter and facet, and the full year facet, on the real sample's index.

Expected counts come from the sample file itself and the data file's lists, read here on their own
(not through the index or :mod:`searchnasa.topics`), so the index, the filter and the facet are
checked against what the records really carry.
"""

from __future__ import annotations

import gzip
import tomllib
from pathlib import Path

import orjson
import pytest

from searchnasa.ingest.sample import sample_path
from searchnasa.limits import NO_DATE_LABEL
from searchnasa.search.schemas import SearchRequest, SearchResponse
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings
from searchnasa.topics import CROSSWALK_PATH, topic_slugs


@pytest.fixture(scope="module")
def service(indexed_home: Path) -> SearchService:
    return SearchService(Settings().with_home(indexed_home))


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    with gzip.open(sample_path(), "rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]


def search(service: SearchService, q: str = "", **kwargs) -> SearchResponse:
    return service.search(SearchRequest(q=q, mode="lexical", **kwargs))


def all_ids(service: SearchService, q: str = "", **kwargs) -> set[str]:
    ids: set[str] = set()
    page = 1
    while True:
        resp = service.search(SearchRequest(q=q, mode="lexical", per_page=100, page=page, **kwargs),
                              fold_copies=False)
        ids.update(hit.id for hit in resp.results)
        if page * 100 >= resp.total:
            return ids
        page += 1


def mapped_records(sample: list[dict], slug: str) -> tuple[set[str], set[str]]:
    """The ids of the sample records filed under a category the data file maps to ``slug``, and
    the spellings of those categories seen in the sample (NTRS by name, OSTI by DOE number or a
    whole category as the file spells it)."""
    doc = tomllib.loads(CROSSWALK_PATH.read_text(encoding="utf-8"))
    entry = next(t for t in doc["topic"] if t["slug"] == slug)
    ntrs = {" ".join(n.split()).upper() for n in entry.get("ntrs", [])}
    osti = {n for n in entry.get("osti", []) if n.isdigit()}
    osti_whole = {n for n in entry.get("osti", []) if not n.isdigit()}  # a whole category as spelled
    ids: set[str] = set()
    spellings: set[str] = set()
    for rec in sample:
        for subject in rec.get("subjects") or []:
            if rec["source"] == "ntrs" and " ".join(subject.split()).upper() in ntrs:
                ids.add(rec["id"]), spellings.add(subject)
            if rec["source"] == "osti" and (subject.split()[0] in osti or subject.replace(" - ", " ") in osti_whole):
                ids.add(rec["id"]), spellings.add(subject)
    return ids, spellings


def test_topic_propulsion_selects_both_sources_and_the_union_of_its_categories(
        service: SearchService, sample: list[dict]) -> None:
    expected, spellings = mapped_records(sample, "propulsion")
    by_query = search(service, "topic:propulsion")
    assert by_query.interpreted == "Read as: topic Propulsion" and by_query.notices == []
    sources = {b.value: b.count for b in by_query.facets["source"]}
    assert sources["ntrs"] > 0 and sources["osti"] > 0
    assert by_query.total == len(expected) == sum(sources.values())
    assert all_ids(service, "topic:propulsion") == expected
    # the API's filter and the union of the source's own categories, as subject filters, agree
    assert search(service, topic=["propulsion"]).total == len(expected)
    assert search(service, subject=sorted(spellings)).total == len(expected)
    # every match is listed (equal scores may put either source first): both sources are among them
    assert {rid.split(":")[0] for rid in all_ids(service, "topic:propulsion")} == {"ntrs", "osti"}


def test_every_topic_count_equals_its_mapped_records(service: SearchService, sample: list[dict]) -> None:
    facet = {b.value: b for b in search(service).facets["topic"]}
    assert set(facet) == set(topic_slugs())
    for slug in topic_slugs():
        expected, _ = mapped_records(sample, slug)
        assert facet[slug].count == len(expected) == search(service, topic=[slug]).total, slug
        assert facet[slug].label and facet[slug].label != slug


def test_topic_combines_with_words_sources_and_other_topics(service: SearchService) -> None:
    both = search(service, "engine topic:propulsion")
    assert 0 < both.total < search(service, "engine").total
    assert search(service, "topic:propulsion", source="osti").total == \
        {b.value: b.count for b in both.facets["source"]}.get("osti", 0) + \
        search(service, "-engine topic:propulsion", source="osti").total
    union = search(service, topic=["propulsion", "aeronautics"]).total
    assert union == search(service, "topic:propulsion OR topic:aeronautics").total
    assert union <= search(service, topic=["propulsion"]).total + search(service, topic=["aeronautics"]).total
    # the topic facet ignores its own filter: it still lists the other topics to switch to
    assert len(search(service, topic=["propulsion"]).facets["topic"]) == len(topic_slugs())


@pytest.mark.parametrize("q", ['topic:"Heat transfer and fluids"', "topic:heat-transfer", "topics:(fluids)"])
def test_topic_by_label_or_alias(service: SearchService, q: str) -> None:
    assert search(service, q).total == search(service, topic=["fluids-heat-transfer"]).total > 0


def test_an_unknown_topic_is_said_and_ignored(service: SearchService) -> None:
    resp = search(service, "engine topic:warp-drive")
    assert resp.total == search(service, "engine").total
    assert any("Unknown topic “warp-drive”" in n and "propulsion" in n for n in resp.notices)


def test_year_facet_lists_every_year_and_counts_undated_apart(service: SearchService, sample: list[dict]) -> None:
    resp = search(service)
    years: dict[str, int] = {}
    for rec in sample:
        if rec.get("year") is not None:
            years[str(rec["year"])] = years.get(str(rec["year"]), 0) + 1
    undated = sum(1 for rec in sample if rec.get("year") is None)
    assert undated > 0 and len(years) > 15  # more years than any top-N facet would list
    assert [(b.value, b.count) for b in resp.facets["year"]] == sorted(years.items())
    assert [(b.value, b.count) for b in resp.facets["no_date"]] == [(NO_DATE_LABEL, undated)]
    assert sum(int(d.count) for d in resp.facets["decade"]) == len(sample) - undated


def test_year_facet_follows_the_filters_but_its_own(service: SearchService, sample: list[dict]) -> None:
    ntrs = [r for r in sample if r["source"] == "ntrs"]
    resp = search(service, source="ntrs", year_from=1965, year_to=1965)
    assert resp.total == sum(1 for r in ntrs if r.get("year") == 1965)
    counts = {b.value: b.count for b in resp.facets["year"]}  # every year of the NTRS tab, not only 1965
    assert counts["1965"] == resp.total and len(counts) > 10
    assert sum(counts.values()) + resp.facets["no_date"][0].count == len(ntrs)
    assert resp.facets["no_date"][0].count == sum(1 for r in ntrs if r.get("year") is None)
    osti_only = search(service, source="osti")
    assert osti_only.facets["no_date"][0].count == sum(1 for r in sample if r["source"] == "osti" and r.get("year") is None)
