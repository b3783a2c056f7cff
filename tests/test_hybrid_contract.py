"""The hybrid contract on the bundled sample, through a real server with the real embedding
provider: the records that match are the result set (counted, ranked by the fused score, sorted
by date); records only close in meaning come after them, labelled and counted apart."""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest

from searchnasa.records import Record

from search_util import contains_word, load_records
from server_util import Server, copy_home, running_server


@pytest.fixture(scope="module")
def server(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    base = tmp_path_factory.mktemp("contract_server")
    with running_server(copy_home(indexed_home, base / "home"), base / "server.log") as srv:
        deadline = time.monotonic() + 120
        while "query encoder ready" not in srv.log() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "query encoder ready" in srv.log(), srv.log()[-2000:]
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> httpx.Client:
    with httpx.Client(base_url=server.base_url, timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def records(indexed_home: Path) -> dict[str, Record]:
    return load_records(indexed_home)


def search(client: httpx.Client, **params) -> dict:
    """``/api/search``; a hybrid search answered "busy" (the encoder's short wait ran out on a
    loaded machine) is asked again, as a user would reload."""
    deadline = time.monotonic() + 60
    while True:
        resp = client.get("/api/search", params=params)
        assert resp.status_code == 200, resp.text[:300]
        body = resp.json()
        busy = "Semantic search is busy; showing keyword matches." in body["notices"]
        if not busy or time.monotonic() > deadline:
            return body
        time.sleep(1.0)


def page_text(client: httpx.Client, url: str, **params) -> str:
    """A search page, asked again while it says semantic search was busy (see :func:`search`)."""
    deadline = time.monotonic() + 60
    while True:
        text = client.get(url, params=params or None).text
        if "Semantic search is busy" not in text or time.monotonic() > deadline:
            return text
        time.sleep(1.0)


def test_film_cooled_counts_the_records_holding_it_and_ranks_them_first(client, records) -> None:
    holding = {rid for rid, rec in records.items() if contains_word(rec, "film-cooled")}
    body = search(client, q="film-cooled", per_page=20)
    assert body["mode"] == "hybrid" and body["total"] == len(holding) > 0
    ids = [h["id"] for h in body["results"]]
    assert set(ids[:len(holding)]) == holding  # the matches first
    assert body["extras_total"] > 0  # then the records close in meaning, counted apart
    for hit in body["results"][len(holding):]:
        assert hit["close_in_meaning"] and hit["missing_words"] == ["film-cooled"]
        assert not contains_word(records[hit["id"]], "film-cooled")


def test_the_hybrid_count_is_the_lexical_count(client) -> None:
    hybrid = search(client, q="photovoltaic")
    lexical = search(client, q="photovoltaic", mode="lexical")
    assert hybrid["mode"] == "hybrid" and hybrid["total"] == lexical["total"] > 0
    assert hybrid["facets"]["source"] == lexical["facets"]["source"]


@pytest.mark.parametrize("sort", ["newest", "oldest"])
def test_a_date_sort_holds_only_matches(client, records, sort: str) -> None:
    body = search(client, q="photovoltaic", sort=sort, per_page=100)
    assert body["extras_total"] == 0 and len(body["results"]) == body["total"]
    assert all(contains_word(records[h["id"]], "photovoltaic") and not h["close_in_meaning"]
               for h in body["results"])


def test_extras_are_labelled_on_the_page_and_can_be_turned_off(client) -> None:
    page = page_text(client, "/search", q="film-cooled")
    assert re.search(r"\b2 records · <span class=\"extras-count\">\d+ more close in meaning</span>", page)
    assert "close in meaning; does not contain: film-cooled" in page
    assert 'class="card extra"' in page
    toggle = re.search(r'class="extras-toggle" href="([^"]+)"', page).group(1)
    off = page_text(client, toggle.replace("&amp;", "&"))
    assert "extras=0" in toggle and "close in meaning; does not contain" not in off
    assert off.count('class="card') == 2 and "Show records close in meaning" in off


def test_a_page_past_the_end_says_so_once_and_links_to_the_last_page(client) -> None:
    body = search(client, q="film-cooled", per_page=20)
    last = -(-(body["total"] + body["extras_total"]) // 20)
    page = page_text(client, "/search", q="film-cooled", page=last + 5)
    assert page.count("is past the last page") == 1 and "No records match" not in page
    assert f'class="last-page" href="/search?q=film-cooled&amp;page={last}"' in page
