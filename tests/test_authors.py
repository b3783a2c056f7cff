"""Author names as people type them (issue 19): "Last, First", "First Last", initials, with and
without diacritics; an author facet and filter; on the sample, through a real server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from searchnasa.authors import fold, name_keys, query_keys
from server_util import Server, copy_home, running_server


@pytest.fixture(scope="module")
def server(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("authors")
    with running_server(copy_home(indexed_home, base / "home"), base / "server.log") as srv:
        yield srv


def ids_for(server: Server, **params: object) -> set[str]:
    got = httpx.get(server.base_url + "/api/search", timeout=30,
                    params={"mode": "lexical", "per_page": 100, **params})
    assert got.status_code == 200, got.text
    return {hit["id"] for hit in got.json()["results"]}


def test_name_keys_fold_diacritics_and_punctuation() -> None:
    assert fold("Öström, Henrik") == "ostrom henrik"
    assert fold("Fernández-Domínguez, Antonio I.") == "fernandez dominguez antonio i"
    assert name_keys("Christensen, Rasmus") == ["christensen", "christensen r", "christensen rasmus"]
    assert name_keys("Christensen, R.") == ["christensen", "christensen r", "christensen r~"]
    # a full first name finds the same initial but not another first name
    assert "christensen r~" in query_keys("Christensen, Rasmus")
    assert "christensen robert" not in query_keys("Christensen, Rasmus")
    assert query_keys("Christensen, R") == ["christensen r"]
    assert set(query_keys("Rasmus Christensen")) >= {"christensen rasmus"}
    assert query_keys("") == [] and query_keys(",") == []


@pytest.mark.parametrize("typed", ['author:"Christensen, Rasmus"', 'author:"Rasmus Christensen"',
                                   'author:"Christensen, R"', 'author:"christensen, rasmus"'])
def test_the_three_author_forms_find_the_same_records(server: Server, typed: str) -> None:
    assert ids_for(server, q=typed) == ids_for(server, q='author:"Christensen, Rasmus"') != set()


@pytest.mark.parametrize("typed", ["Öström, Henrik", "Ostrom, Henrik", "Henrik Ostrom", "Ostrom, H"])
def test_diacritics_are_optional(server: Server, typed: str) -> None:
    assert "osti:3008076" in ids_for(server, q=f'author:"{typed}"')


def test_the_initial_alone_finds_every_first_name_with_it(server: Server) -> None:
    by_surname = ids_for(server, q="author:christensen")
    assert len(by_surname) >= 2  # Christensen, Adam Scott and Christensen, Rasmus
    assert ids_for(server, q='author:"Christensen, A"') < by_surname
    assert ids_for(server, q='author:"Christensen, Zed"') == set()


def test_the_author_filter_and_facet(server: Server) -> None:
    body = httpx.get(server.base_url + "/api/search", timeout=30,
                     params={"q": "catalyst", "mode": "lexical"}).json()
    authors = body["facets"]["author"]
    assert authors and all(b["count"] >= 1 for b in authors)
    top = authors[0]
    filtered = httpx.get(server.base_url + "/api/search", timeout=30,
                         params={"q": "catalyst", "mode": "lexical", "author": top["value"], "per_page": 100}).json()
    assert filtered["total"] == top["count"]
    wanted = set(name_keys(top["value"]))
    for hit in filtered["results"]:  # every record holds the author, under some spelling
        names = hit["authors"] if isinstance(hit["authors"][0], str) else [a["name"] for a in hit["authors"]]
        assert any(wanted & set(name_keys(name)) for name in names), (hit["id"], names)
    # the filter takes the name as people type it, too
    last, _, first = top["value"].partition(",")
    retyped = f"{first.strip()} {last.strip()}"
    again = httpx.get(server.base_url + "/api/search", timeout=30,
                      params={"q": "catalyst", "mode": "lexical", "author": retyped, "per_page": 100}).json()
    assert {h["id"] for h in again["results"]} >= {h["id"] for h in filtered["results"]}
    page = httpx.get(server.base_url + "/search", params={"q": "catalyst"}, timeout=30).text
    assert "<legend>Author</legend>" in page


def test_the_author_facet_is_left_out_of_large_result_sets(server: Server) -> None:
    from searchnasa.search.facets import AUTHOR_FACET_MAX

    broad = httpx.get(server.base_url + "/api/search", timeout=30, params={"q": "", "mode": "lexical"}).json()
    assert broad["total"] > AUTHOR_FACET_MAX and broad["facets"]["author"] == []
    narrow = httpx.get(server.base_url + "/api/search", timeout=30, params={"q": "", "mode": "lexical",
                                                                        "source": "osti"}).json()
    assert narrow["total"] <= AUTHOR_FACET_MAX and narrow["facets"]["author"]
