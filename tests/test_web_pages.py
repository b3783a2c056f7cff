"""The HTML pages over a real ``searchnasa serve`` on the sample plus one SYNTHETIC hostile record.

Pages are parsed with selectolax, so the checks are about elements and text, not string luck.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import httpx
import pytest
from selectolax.lexbor import LexborHTMLParser as HTMLParser, LexborNode as Node

from server_util import HOSTILE_ID, HOSTILE_MARKER, Server, build_web_home, running_server

HTML = {"accept": "text/html"}
INTRO = ("Search indexed NASA NTRS and DOE OSTI research on propulsion, heat transfer, battery materials "
         "and energy systems. Follow report and document links to the original sources.")
# "N records · M more close in meaning · Page P · Hide records close in meaning": the middle part
# and the switch appear when hybrid search has records close in meaning (the model has loaded)
COUNT_LINE = re.compile(r"^(At least )?([\d,]+) records?(?: · [\d,]+ more close in meaning)? · Page (\d+)"
                        r"(?: · (?:Hide|Show) records close in meaning)?$")


@pytest.fixture(scope="module")
def web_home(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_web_home(tmp_path_factory.getbasetemp(), sample_home)


@pytest.fixture(scope="module")
def server(web_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    log = tmp_path_factory.mktemp("pages_server") / "server.log"
    with running_server(web_home, log) as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> httpx.Client:
    with httpx.Client(base_url=server.base_url, timeout=30.0, headers=HTML) as c:
        yield c


def page(client: httpx.Client, url: str, status: int = 200, **params) -> HTMLParser:
    resp = client.get(url, params=params or None)
    assert resp.status_code == status, (url, resp.status_code, resp.text[:500])
    assert resp.headers["content-type"].startswith("text/html")
    return HTMLParser(resp.text)


def text(node: Node | None) -> str:
    assert node is not None
    return " ".join(node.text(separator=" ").split())


def count_line(tree: HTMLParser) -> tuple[bool, int, int]:
    match = COUNT_LINE.match(text(tree.css_first("p.count")))
    assert match, text(tree.css_first("p.count"))
    return bool(match.group(1)), int(match.group(2).replace(",", "")), int(match.group(3))


def cards(tree: HTMLParser) -> list[Node]:
    return tree.css("article.card")


def api(client: httpx.Client, **params) -> dict:
    resp = client.get("/api/search", params=params, headers={"accept": "application/json"})
    assert resp.status_code == 200
    return resp.json()


# -- the results page -----------------------------------------------------------------------------
def test_home_has_the_box_and_the_reference_lines(client: httpx.Client) -> None:
    tree = page(client, "/")
    assert text(tree.css_first(".brand")) == "Search NASA"
    box = tree.css_first("form.search-box")
    assert box.attributes["action"] == "/search" and box.css_first("input[name=q]") is not None
    body = text(tree.body)
    for line in (INTRO, "Quote a phrase for an exact phrase match.",
                 "Source license links do not imply unrestricted reuse."):
        assert line in body


def test_an_acronym_is_also_searched_as_its_meaning_and_the_page_says_so(client: httpx.Client) -> None:
    tree = page(client, "/search", q="TBC", mode="lexical")
    [notice] = tree.css("p.acronym-notice")
    assert re.match(r"^TBC also searched as thermal barrier \w+ · search only TBC$", text(notice))
    link = notice.css_first("a.acronym-only")
    assert text(link) == "search only TBC"
    query = parse_qs(urlsplit(link.attributes["href"]).query)
    assert query["q"] == ["=TBC"] and query["mode"] == ["lexical"]
    _, expanded, _ = count_line(tree)
    only = page(client, link.attributes["href"])
    assert only.css("p.acronym-notice") == []
    _, literal, _ = count_line(only)
    assert 0 < literal < expanded
    data = api(client, q="TBC", mode="lexical")
    assert data["total"] == expanded and "TBC OR “thermal barrier" in data["interpreted"]
    [note] = data["acronyms"]
    assert note["acronym"] == "TBC" and note["only_query"] == "=TBC" and note["expanded_to"]
    assert note["definitions"] >= 2 and note["message"] == text(notice).split(" · ")[0]
    assert api(client, q="=TBC", mode="lexical")["total"] == literal


def test_acronym_notice_text_is_escaped(client: httpx.Client) -> None:
    """An acronym may hold "&" (the sample defines "research and development (R&D)")."""
    resp = client.get("/search", params={"q": "R&D", "mode": "lexical"})
    assert "R&amp;D also searched as research and development" in resp.text
    notice = HTMLParser(resp.text).css_first("p.acronym-notice a.acronym-only")
    assert parse_qs(urlsplit(notice.attributes["href"]).query)["q"] == ["=R&D"]


def test_results_page_matches_the_reference_layout(client: httpx.Client) -> None:
    tree = page(client, "/search", q="wind tunnel")
    body = text(tree.body)
    assert text(tree.css_first("h1")) == "Results for “wind tunnel”"
    assert INTRO in body and "Quote a phrase for an exact phrase match." in body
    assert tree.css_first("input[name=q]").attributes["value"] == "wind tunnel"
    lower, total, page_no = count_line(tree)
    data = api(client, q="wind tunnel")
    assert (lower, total, page_no) == (data["total_is_lower_bound"], data["total"], 1)
    found = cards(tree)
    assert len(found) == min(20, total) == len(data["results"])
    assert [c.attributes["data-id"] for c in found] == [h["id"] for h in data["results"]]
    for card, hit in zip(found, data["results"]):
        assert text(card.css_first(".badge")) in ("NASA NTRS", "DOE OSTI")
        assert text(card.css_first(".date")) == (str(hit["year"]) if hit["year"] else "Date not supplied")
        # each link carries the results page back (?back=), so the record page can return to it
        back = "?back=" + quote("/search?q=wind+tunnel", safe="/")
        assert card.css_first("h2.title a").attributes["href"] == f"/records/{hit['id']}{back}"
        assert card.css_first("a.related-link").attributes["href"] == f"/records/{hit['id']}/related{back}"
        original = card.css_first("a.original")
        assert original.attributes["href"] == hit["url"]
        label = text(original)
        assert label.endswith("↗") and len(label) <= 51
        assert hit["link_label"].startswith(label[:-1].strip())
    marks = tree.css("p.snippet mark")
    assert marks and all(re.match(r"^(wind|tunnel)", text(m).lower()) for m in marks)  # stems too


def test_source_tabs_show_facet_counts_and_keep_the_query(client: httpx.Client) -> None:
    tree = page(client, "/search", q="energy")
    data = api(client, q="energy")
    counts = {b["value"]: b["count"] for b in data["facets"]["source"]}
    tabs = tree.css("nav.tabs a.tab")
    labels = [text(t) for t in tabs]
    assert labels == [f"All sources {sum(counts.values()):,}", f"NASA NTRS {counts.get('ntrs', 0):,}",
                      f"DOE OSTI {counts.get('osti', 0):,}"]
    assert "active" in tabs[0].attributes["class"]
    for tab, source in zip(tabs, (None, "ntrs", "osti")):
        query = parse_qs(urlsplit(tab.attributes["href"]).query)
        assert query["q"] == ["energy"] and query.get("source") == ([source] if source else None)
    ntrs = page(client, tabs[1].attributes["href"])
    assert {text(c.css_first(".badge")) for c in cards(ntrs)} == {"NASA NTRS"}
    assert "active" in ntrs.css("nav.tabs a.tab")[1].attributes["class"]
    assert count_line(ntrs)[1] == counts["ntrs"]


def test_pagination_moves_through_disjoint_pages(client: httpx.Client) -> None:
    first = page(client, "/search", q="engine")
    total = count_line(first)[1]
    assert total > 40
    nav = first.css_first("nav.pagination")
    assert text(nav.css_first(".current")) == "1" and nav.css_first("a.prev") is None
    second = page(client, nav.css_first("a.next").attributes["href"])
    assert count_line(second)[1:] == (total, 2)
    ids1 = {c.attributes["data-id"] for c in cards(first)}
    ids2 = {c.attributes["data-id"] for c in cards(second)}
    assert len(ids2) == 20 and not ids1 & ids2
    assert second.css_first("nav.pagination a.prev") is not None
    numbers = [text(a) for a in first.css("nav.pagination a.page")]
    assert "2" in numbers and str((total + 19) // 20) in numbers


def undated_record(home: Path) -> tuple[str, str]:
    """A real sample record without a date, whose title is plain words (so it can be searched)."""
    from searchnasa.store import open_store

    store = open_store(home, readonly=True)
    try:
        for _, record in store.iter_records(0):
            if record.year is None and re.fullmatch(r"[A-Za-z ]{20,}", record.title):
                return record.id, record.title
    finally:
        store.close()
    raise AssertionError("the sample has no undated record with a plain title")


def test_missing_dates_say_date_not_supplied(client: httpx.Client, web_home: Path) -> None:
    record_id, _ = undated_record(web_home)
    record = client.get(f"/api/records/{record_id}", headers={"accept": "application/json"}).json()
    assert record["year"] is None
    tree = page(client, "/search", q=record["title"], source="ntrs")
    card = next(c for c in cards(tree) if c.attributes["data-id"] == record_id)
    assert text(card.css_first(".date")) == "Date not supplied"
    record_page = page(client, f"/records/{record_id}")
    assert "Date not supplied" in text(record_page.css_first("p.meta"))


def test_empty_result_suggests_dropping_a_filter(client: httpx.Client) -> None:
    tree = page(client, "/search", q='"zzqx nothing matches this"', source="osti")
    assert count_line(tree)[1] == 0 and not cards(tree)
    empty = text(tree.css_first(".empty"))
    assert "No records match" in empty and "dropping a filter" in empty and "quotes" in empty
    assert tree.css_first("nav.pagination") is None


def test_degraded_query_says_how_it_was_read(client: httpx.Client) -> None:
    tree = page(client, "/search", q='"wind tunnel')
    assert text(tree.css_first(".read-as")).startswith("Read as:")
    assert "Added the missing closing quote." in [text(n) for n in tree.css(".notice")]
    plain = page(client, "/search", q="wind tunnel")
    assert plain.css_first(".read-as") is None


def test_a_long_question_says_how_it_was_read(client: httpx.Client) -> None:
    """Not every word of a long question is required: the page says which it needs."""
    tree = page(client, "/search", q="measurements of jet noise from a supersonic nozzle with chevrons")
    read = text(tree.css_first(".read-as"))
    assert read.startswith("Read as: at least 2 of (measurements, jet, noise, supersonic, nozzle, chevrons)")
    assert "or a rare one alone (" in read and "chevrons" in read.split("rare one alone")[1]
    every = page(client, "/search", q="jet AND noise AND supersonic AND nozzle")  # every word required, as typed
    assert every.css_first(".read-as") is None


def test_identifier_goes_straight_to_the_record(client: httpx.Client) -> None:
    resp = client.get("/search", params={"q": "10.1515/nanoph-2025-0180"})
    assert resp.status_code == 303 and resp.headers["location"] == "/records/osti:3002493"
    resp = client.get("/search", params={"q": "ntrs:19770084252"})
    assert resp.status_code == 303 and resp.headers["location"] == "/records/ntrs:19770084252"


def test_filters_form_and_facet_counts(client: httpx.Client) -> None:
    tree = page(client, "/search", q="wind tunnel")
    form = tree.css_first("aside.filters form")
    assert form.attributes["method"] == "get" and form.attributes["action"] == "/search"
    assert [o.attributes["value"] for o in form.css("select[name=sort] option")] == ["relevance", "newest", "oldest"]
    boxes = form.css("input[type=checkbox][name=subject]")
    assert boxes
    subject = boxes[0].attributes["value"]
    shown = int(text(boxes[0].parent.css_first(".facet-count")).replace(",", ""))
    filtered = page(client, "/search", q="wind tunnel", subject=subject)
    assert count_line(filtered)[1] == shown
    checked = filtered.css_first("input[name=subject][checked]")
    assert checked is not None and checked.attributes["value"] == subject
    assert filtered.css_first("a.clear") is not None
    years = page(client, "/search", q="engine", year_from="1960", year_to="1969", sort="newest")
    got = [int(text(c.css_first(".date"))) for c in cards(years)]
    assert got and all(1960 <= y <= 1969 for y in got) and got == sorted(got, reverse=True)


def test_page_tolerates_typed_nonsense(client: httpx.Client) -> None:
    tree = page(client, "/search", q="engine", page="99999", year_from="nineteen", source="mars")
    notices = " ".join(text(n) for n in tree.css(".notice"))
    assert "not a number" in notices and "unknown source" in notices
    assert count_line(tree)[2] == 1000
    tree = page(client, "/search", status=400, q="x" * 1001)
    assert "1,000" in text(tree.css_first(".error-message"))


# -- record and related pages ---------------------------------------------------------------------
def test_record_page_shows_every_field(client: httpx.Client) -> None:
    tree = page(client, "/records/ntrs:19770084252")
    body = text(tree.body)
    assert text(tree.css_first("h1")).startswith("Supercritical Wing Technology")
    assert text(tree.css_first(".badge")) == "NASA NTRS"
    for expected in ("NASA-SP-301", "Armstrong Flight Research Center", "Aerodynamics",
                     "Special Publication (SP)", "Gov public use permitted", "Export control: None",
                     "Source license links do not imply unrestricted reuse."):
        assert expected in body, expected
    dates = [text(li) for li in tree.css("ul.dates li")]
    assert "Published 1972-02-29" in dates and "Created 2013-08-09" in dates
    hrefs = {a.attributes.get("href") for a in tree.css("a")}
    assert "https://ntrs.nasa.gov/citations/19770084252" in hrefs
    assert "https://ntrs.nasa.gov/api/citations/19770084252/downloads/19770084252.pdf" in hrefs
    related = tree.css("section.related li.related-item")
    assert related and all(r.css_first("a").attributes["href"].startswith("/records/") for r in related)


def test_record_page_authors_orcid_doi(client: httpx.Client) -> None:
    tree = page(client, "/records/osti:3002493")
    authors = [text(li) for li in tree.css("ul.authors li")]
    assert authors[0].startswith("Zhao, Huan (Oak Ridge National Laboratory (ORNL)")
    assert len(authors) == 6
    hrefs = {a.attributes.get("href") for a in tree.css("a")}
    assert "https://orcid.org/0000-0002-4982-0865" in hrefs
    assert "https://doi.org/10.1515/nanoph-2025-0180" in hrefs
    roles = [text(li) for li in tree.css("ul.organizations li")]
    assert "USDOE sponsor" in roles


@pytest.mark.parametrize("record_id", ["osti:3002493", "osti:2584510", HOSTILE_ID])
def test_authors_and_organizations_link_to_their_records(client: httpx.Client, record_id: str) -> None:
    """Each author name and keyword searches for it as a phrase on its field, each organization
    filters by it; every list holds the record the links were followed from (hostile names
    included: see server_util)."""
    tree = page(client, f"/records/{record_id}")
    links = (tree.css("ul.authors a.author-name") + tree.css("ul.organizations a.organization-name")
             + tree.css("ul.chips a.keyword"))
    assert len(links) >= 2
    for link in links:
        href = link.attributes["href"]
        assert href.startswith("/search?")
        assert cards(page(client, href))  # the page the link opens lists records
        params = parse_qs(urlsplit(href).query, keep_blank_values=True)
        ids: list[str] = []
        for n in range(1, 6):  # the same search through the API, every page (organizations are big)
            body = client.get("/api/search", params={**params, "per_page": 100, "page": n},
                              headers={"accept": "application/json"}).json()
            ids += [hit["id"] for hit in body["results"]]
            # by the total, not by a short page: copies of one work on a page fold into one card,
            # so a page may show fewer than 100 with more pages after it
            if n * 100 >= body["total"]:
                break
        assert record_id in ids, (text(link), href)
        kind = link.attributes.get("class") or ""
        if kind in ("author-name", "keyword"):
            field = "author" if kind == "author-name" else "keyword"
            assert params["q"] == [f'{field}:"{" ".join(text(link).replace(chr(34), " ").split())}"']
        else:
            assert params["organization"] == [text(link)]


def test_related_page(client: httpx.Client) -> None:
    title = client.get("/api/records/ntrs:19770084252", headers={"accept": "application/json"}).json()["title"]
    tree = page(client, "/records/ntrs:19770084252/related")
    assert text(tree.css_first("h1")) == f"Related papers: {title[:50].rstrip()}…"
    items = tree.css("li.related-item")
    assert 5 <= len(items) <= 20
    for item in items:
        assert item.css_first("h2.title a").attributes["href"].startswith("/records/")
        assert text(item.css_first(".reasons"))
        snippet = item.css_first(".snippet")
        if snippet is not None:
            assert len(text(snippet)) <= 400
    # the list is ranked by overall relatedness; the page says the similarity figure is one part of it
    note = text(tree.css_first("p.related-note"))
    assert "overall relatedness" in note and "need not fall as the list does" in note
    api = client.get("/api/records/ntrs:19770084252/related", params={"limit": 20}).json()["results"]
    assert [text(i.css_first("h2.title a")) for i in items] == [r["title"] for r in api][:len(items)]


def test_unknown_record_is_a_404_page(client: httpx.Client) -> None:
    tree = page(client, "/records/ntrs:00000000000", status=404)
    assert text(tree.css_first("h1")) == "Not found"
    page(client, "/records/..%2F..%2Fetc%2Fpasswd", status=404)
    page(client, "/no/such/page", status=404)


# -- hostile record text --------------------------------------------------------------------------
def assert_inert(tree: HTMLParser, raw: str) -> None:
    """No markup from record text became markup: no script, no handlers, no script URLs."""
    scripts = tree.css("script")  # only the page's own static script, never one from the text
    assert [(s.attributes.get("src"), s.text()) for s in scripts] == [("/static/search.js", "")], \
        "a <script> element made it into the page"
    assert tree.css("img, iframe, object, embed") == []
    # the one SVG a page draws is the year histogram, of links, titles and rectangles only
    assert [svg.attributes.get("class") for svg in tree.css("svg")] in ([], ["year-bars"])
    assert {n.tag for n in tree.css("svg.year-bars *")} <= {"a", "title", "rect"}
    raw = raw.replace('<svg class="year-bars" ', "")
    for node in tree.css("*"):
        for name, value in node.attributes.items():
            assert not name.lower().startswith("on"), (node.tag, name)
            if name in ("href", "src", "action"):
                assert not (value or "").strip().lower().startswith(("javascript:", "data:")), value
    own_script = '<script src="/static/search.js" defer></script>'
    assert raw.count(own_script) == 1
    for needle in ("<script", "<img", "<svg", "<b onmouseover"):
        assert needle not in raw.replace(own_script, "").lower(), needle


def test_hostile_record_text_renders_as_text(client: httpx.Client) -> None:
    resp = client.get("/search", params={"q": HOSTILE_MARKER})
    tree = HTMLParser(resp.text)
    assert_inert(tree, resp.text)
    card = cards(tree)
    assert [c.attributes["data-id"] for c in card] == [HOSTILE_ID]
    assert "<script>alert(1)</script>" in text(card[0].css_first("h2.title"))
    assert "<img src=x onerror=alert(2)>" in text(card[0].css_first(".snippet"))
    assert card[0].css_first("a.original") is None  # its landing link is javascript: -> dropped

    resp = client.get(f"/records/{HOSTILE_ID}")
    assert resp.status_code == 200
    tree = HTMLParser(resp.text)
    assert_inert(tree, resp.text)
    body = text(tree.body)
    for shown in ("<script>alert(5)</script> Synthetic, Author", "<img src=x onerror=alert(6)>",
                  "<b onmouseover=alert(7)>synthetic subject</b>", "<svg onload=alert(8)>",
                  "<script>alert(9)</script> Synthetic Lab", "SYN-<i>1</i>"):
        assert shown in body, shown
    doi = next(a for a in tree.css("a.doi"))
    assert doi.attributes["href"].startswith("https://doi.org/10.0000/synthetic%22%3E%3Cscript%3E")

    resp = client.get(f"/records/{HOSTILE_ID}/related")
    assert resp.status_code == 200
    assert_inert(HTMLParser(resp.text), resp.text)
    assert text(HTMLParser(resp.text).css_first("h1")).endswith("heat shield <script>a…")


def test_hostile_query_text_is_escaped(client: httpx.Client) -> None:
    evil = '"><script>alert(13)</script><img src=x onerror=alert(14)>'
    resp = client.get("/search", params={"q": evil})
    assert resp.status_code == 200
    tree = HTMLParser(resp.text)
    assert_inert(tree, resp.text)
    assert tree.css_first("input[name=q]").attributes["value"] == evil
    assert evil in text(tree.css_first("h1"))


# -- follow a search, cite, export ----------------------------------------------------------------
def test_results_page_links_a_permalink_and_a_valid_atom_feed(client: httpx.Client) -> None:
    import feedparser

    tree = page(client, "/search", q="heat transfer", source="ntrs", page="2")
    permalink = tree.css_first("a.permalink").attributes["href"]
    assert parse_qs(urlsplit(permalink).query) == {"q": ["heat transfer"], "source": ["ntrs"], "page": ["2"]}
    assert [c.attributes["data-id"] for c in cards(page(client, permalink))] == \
        [c.attributes["data-id"] for c in cards(tree)]
    alternate = tree.css_first('head link[rel=alternate][type="application/atom+xml"]').attributes["href"]
    assert alternate == tree.css_first("a.feed").attributes["href"]
    resp = client.get(alternate)
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("application/atom+xml")
    feed = feedparser.parse(resp.content)
    assert not feed.bozo, feed.bozo_exception
    assert feed.version == "atom10" and "heat transfer" in feed.feed.title
    newest = api(client, q="heat transfer", source="ntrs", sort="newest", per_page=50, mode="lexical")
    assert [e.link for e in feed.entries] == [h["url"] for h in newest["results"]]


def test_record_citations_parse_back(client: httpx.Client) -> None:
    import bibtexparser
    import rispy

    tree = page(client, "/records/osti:3002493")
    links = {text(a): a.attributes["href"] for a in tree.css("a.cite")}
    assert set(links) == {"BibTeX", "RIS", "CSL-JSON", "CSV"}
    bib = client.get(links["BibTeX"])
    assert bib.status_code == 200 and bib.headers["content-type"].startswith("application/x-bibtex")
    entry = bibtexparser.parse_string(bib.text).entries[0]
    assert "Quantum light" in entry.fields_dict["title"].value
    assert "Fern" in entry.fields_dict["author"].value
    ris = rispy.loads(client.get(links["RIS"]).text)
    assert ris[0]["doi"] == "10.1515/nanoph-2025-0180"


def test_export_a_whole_result_set_in_result_order(client: httpx.Client) -> None:
    import csv
    import io

    import rispy

    tree = page(client, "/search", q="engine")
    href = next(a.attributes["href"] for a in tree.css("a.export") if text(a) == "RIS")
    resp = client.get(href + "&limit=150")
    assert resp.status_code == 200
    entries = rispy.loads(resp.text)
    expected = [h["id"] for p in (1, 2) for h in api(client, q="engine", per_page=100, page=p)["results"]]
    assert [e["id"] for e in entries] == expected[:150]
    sel = client.get("/api/export", params=[("format", "csv"), ("ids", HOSTILE_ID), ("ids", "osti:3002493")])
    rows = list(csv.DictReader(io.StringIO(sel.text)))
    assert [r["id"] for r in rows] == [HOSTILE_ID, "osti:3002493"]
    assert rows[0]["title"] == f"Synthetic {HOSTILE_MARKER} heat shield <script>alert(1)</script> test"
    missing = client.get("/api/export", params={"format": "csv", "ids": "osti:0"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


# -- one card per work ----------------------------------------------------------------------------
def test_copies_of_a_work_show_as_one_card_with_also_in(client: httpx.Client) -> None:
    tree = page(client, "/search", q='"Askaryan effect in rock salt"')
    assert count_line(tree)[1] == 2  # the count says records: both copies match
    found = cards(tree)
    assert len(found) == 1
    shown = found[0].attributes["data-id"]
    other = {"osti:1442457": "ntrs:99000000001", "ntrs:99000000001": "osti:1442457"}[shown]
    also = found[0].css_first(".also-in")
    assert text(also) == f"Also in: {'NASA NTRS' if other.startswith('ntrs') else 'DOE OSTI'}"
    assert also.css_first("a").attributes["href"] == f"/records/{other}"
    record = page(client, f"/records/{other}")
    copies = record.css_first("section.copies")
    assert copies.css_first(f'a[href="/records/{shown}"]') is not None
    assert "same DOI 10.1103/physrevd.72.023002" in text(copies.css_first(".merge-reasons"))
    api_hits = api(client, q='"Askaryan effect in rock salt"')["results"]
    assert [h["id"] for h in api_hits] == [shown] and api_hits[0]["also_in"][0]["id"] == other


# -- topics and the year histogram ----------------------------------------------------------------
def histogram_bars(tree: HTMLParser) -> dict[int, tuple[int, str, str]]:
    """year -> (count, accessible name, link) of every bar the year histogram draws."""
    svg = tree.css_first("figure.year-histogram svg.year-bars")
    assert svg is not None and svg.attributes["role"] == "group"
    assert svg.attributes["aria-labelledby"] == "year-histogram-title"
    bars = {}
    for link in svg.css("a.year-bar"):
        year, count = int(link.attributes["data-year"]), int(link.attributes["data-count"])
        assert text(link.css_first("title")) == link.attributes["aria-label"]
        assert link.css_first("rect.bar") is not None
        bars[year] = (count, link.attributes["aria-label"], link.attributes["href"])
    return bars


@pytest.mark.parametrize("params", [{"q": "wind tunnel"}, {"q": "engine", "source": "osti"},
                                    {"q": "", "topic": "propulsion", "year_from": "1965", "year_to": "1969"}])
def test_year_histogram_counts_equal_the_api_and_bars_set_the_year(client: httpx.Client, params: dict) -> None:
    tree = page(client, "/search", **params)
    data = api(client, **params)
    bars = histogram_bars(tree)
    assert {y: c for y, (c, _, _) in bars.items()} == {int(b["value"]): b["count"] for b in data["facets"]["year"]}
    for year, (count, label, href) in bars.items():
        assert label == f"{year}: {count:,} record{'' if count == 1 else 's'}"
        query = parse_qs(urlsplit(href).query)
        assert query["year_from"] == query["year_to"] == [str(year)]
        assert all(query.get(k) == [v] for k, v in params.items() if k not in ("year_from", "year_to") and v)
    undated = data["facets"]["no_date"][0]["count"]
    no_date = tree.css_first("figure.year-histogram .no-date")
    assert (no_date is None) == (undated == 0)
    if undated:
        assert text(no_date).startswith(f"Date not supplied: {undated:,} record")
    chosen = [int(a.attributes["data-year"]) for a in tree.css("a.year-bar[aria-current]")]
    if "year_from" in params:
        assert chosen and all(1965 <= y <= 1969 for y in chosen)
        assert tree.css_first("a.all-years") is not None
    else:
        assert chosen == [] and tree.css_first("a.all-years") is None


def test_a_bar_link_shows_that_year_only(client: httpx.Client) -> None:
    bars = histogram_bars(page(client, "/search", q="engine", mode="lexical"))  # no extras after the matches
    year, (count, _, href) = max(bars.items(), key=lambda item: item[1][0])
    tree = page(client, href)
    assert count_line(tree)[1] == count
    assert {text(c.css_first(".date")) for c in cards(tree)} == {str(year)}


def test_undated_records_are_counted_apart(client: httpx.Client) -> None:
    data = api(client, q="", mode="lexical")
    undated = data["facets"]["no_date"][0]["count"]
    assert undated > 0
    assert sum(b["count"] for b in data["facets"]["year"]) + undated == data["total"]
    assert "Date not supplied" not in {b["value"] for b in data["facets"]["year"]}


def test_topic_facet_filter_and_record_page(client: httpx.Client) -> None:
    tree = page(client, "/search", q="")
    boxes = tree.css("aside.filters input[type=checkbox][name=topic]")
    labels = {b.attributes["value"]: text(b.parent.css_first("span")) for b in boxes}
    assert labels["propulsion"] == "Propulsion" and len(labels) >= 10
    shown = int(text(next(b for b in boxes if b.attributes["value"] == "propulsion")
                     .parent.css_first(".facet-count")).replace(",", ""))
    filtered = page(client, "/search", q="", topic="propulsion")
    assert count_line(filtered)[1] == shown == api(client, q="topic:propulsion")["total"]
    assert filtered.css_first("input[name=topic][checked]").attributes["value"] == "propulsion"
    sources = {b["value"]: b["count"] for b in api(client, topic="propulsion")["facets"]["source"]}
    assert sources["ntrs"] > 0 and sources["osti"] > 0
    # a label works on the page too; an unknown topic is said and dropped (the API refuses it)
    assert count_line(page(client, "/search", q="", topic="Propulsion"))[1] == shown
    odd = page(client, "/search", q="", topic="warp drive")
    assert "Ignored unknown topic “warp drive”" in " ".join(text(n) for n in odd.css(".notice"))
    refused = client.get("/api/search", params={"topic": "warp drive"}, headers={"accept": "application/json"})
    assert refused.status_code == 422 and "propulsion" in refused.json()["error"]["message"]
    record = page(client, "/records/ntrs:19770084252")  # filed under AERODYNAMICS
    topic_links = {text(a): a.attributes["href"] for a in record.css("ul.topics a")}
    assert topic_links == {"Aeronautics and aircraft": "/search?q=&topic=aeronautics"}
    assert "Aerodynamics" in text(record.body)  # the source's own category stays
