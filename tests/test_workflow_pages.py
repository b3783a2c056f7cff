"""The everyday workflow on the results and record pages (issue 19): a reversed year range swapped
with a notice, a decade filter, record pages that keep the search they came from, and exporting
just the records ticked on a results page (over HTTP and in Chromium)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from selectolax.lexbor import LexborHTMLParser as HTMLParser

from server_util import Server, copy_home, running_server

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def server(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("workflow")
    with running_server(copy_home(indexed_home, base / "home"), base / "server.log") as srv:
        yield srv


@pytest.fixture()
def client(server: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.base_url, timeout=30, headers={"accept": "text/html"}) as c:
        yield c


def test_a_reversed_year_range_is_swapped_with_a_notice(client: httpx.Client) -> None:
    ordered = client.get("/api/search", params={"q": "engine", "mode": "lexical", "year_from": 1970,
                                                "year_to": 1990}).json()
    reversed_ = client.get("/api/search", params={"q": "engine", "mode": "lexical", "year_from": 1990,
                                                  "year_to": 1970}).json()
    assert ordered["total"] > 0 and reversed_["total"] == ordered["total"]
    assert reversed_["notices"][0] == "Years swapped: showing 1970–1990 (the range was given as 1990–1970)."
    assert not any("swapped" in n for n in ordered["notices"])
    tree = HTMLParser(client.get("/search", params={"q": "engine", "year_from": 1990, "year_to": 1970}).text)
    assert any("Years swapped" in n.text() for n in tree.css("p.notice"))
    assert tree.css_first("input[name=year_from]").attributes["value"] == "1970"
    assert tree.css_first("input[name=year_to]").attributes["value"] == "1990"


def test_the_decade_filter_sets_the_year_range(client: httpx.Client) -> None:
    api = client.get("/api/search", params={"q": "engine", "mode": "lexical"}).json()
    decades = {b["value"]: b["count"] for b in api["facets"]["decade"]}
    tree = HTMLParser(client.get("/search", params={"q": "engine", "mode": "lexical"}).text)
    links = tree.css("fieldset.decades a.decade")
    assert [a.text() for a in links] == list(decades)
    link = links[len(links) // 2]
    params = parse_qs(urlsplit(link.attributes["href"]).query)
    start = int(link.text().rstrip("s"))
    assert params["year_from"] == [str(start)] and params["year_to"] == [str(start + 9)]
    chosen = HTMLParser(client.get(link.attributes["href"]).text)
    count = chosen.css_first("p.count").text()
    assert re.match(rf"{decades[link.text()]:,} record", count), count
    current = chosen.css_first("fieldset.decades a.current")
    assert current is not None and current.text() == link.text()


def test_a_record_page_keeps_the_search_it_came_from(client: httpx.Client) -> None:
    results = HTMLParser(client.get("/search", params={"q": "heat transfer", "page": 2}).text)
    href = results.css_first("article.card h2 a").attributes["href"]
    back = parse_qs(urlsplit(href).query)["back"][0]
    assert back.startswith("/search?") and parse_qs(urlsplit(back).query) == {"q": ["heat transfer"], "page": ["2"]}
    record = HTMLParser(client.get(href).text)
    link = record.css_first("a.back-to-results")
    assert link.attributes["href"] == back and "heat transfer" in link.text()
    assert record.css_first("input#q").attributes["value"] == "heat transfer"
    related = HTMLParser(client.get(record.css_first("a.more-related").attributes["href"]).text)
    assert related.css_first("a.back-to-results").attributes["href"] == back
    # only our own results pages: anything else is ignored, never linked
    for forged in ("https://evil.example/search?q=x", "//evil.example/search", "javascript:alert(1)"):
        page = HTMLParser(client.get("/records/osti:3002088", params={"back": forged}).text)
        assert page.css_first("a.back-to-results") is None


def test_exporting_the_ticked_records(client: httpx.Client) -> None:
    chosen = ["osti:3002088", "ntrs:19810053652"]
    answer = client.get("/export/selection", params={"format": "ris", "ids": chosen}, follow_redirects=True)
    assert answer.status_code == 200
    assert answer.text.count("TY  - ") == 2
    none = client.get("/export/selection", params={"format": "ris"})
    assert none.status_code == 400 and "tick at least one record" in none.text
    bad = client.get("/export/selection", params={"format": "doc", "ids": chosen})
    assert bad.status_code == 400 and "unknown export format" in bad.text


@pytest.mark.browser
def test_ticking_records_and_exporting_them_in_chromium(server: Server) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(base_url=server.base_url, accept_downloads=True)
        page.goto("/search?q=battery")
        cards = page.locator("article.card")
        ticked = [cards.nth(i).get_attribute("data-id") for i in (0, 2)]
        for i in (0, 2):
            cards.nth(i).locator("input[name=ids]").check()
        page.select_option("#selection-format", "csv")
        with page.expect_download() as download:
            page.click("form#selection button[type=submit]")
        text = Path(download.value.path()).read_text(encoding="utf-8")
        browser.close()
    rows = [line for line in text.splitlines()[1:] if line.strip()]
    assert len(rows) == 2 and all(any(rid in row for row in rows) for rid in ticked), rows
