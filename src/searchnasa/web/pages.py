"""The HTML pages: search results, a record, its related papers, the Atom feed of a search.

Server-rendered; every page works without JavaScript (``static/search.js`` only makes the sort and
filters apply when changed and folds the filter panel on narrow screens). Each route reads its request (:mod:`~searchnasa.web.form`), makes
one call through :mod:`~searchnasa.web.deps`, and renders a template (:mod:`~searchnasa.web.render`)
with links from :mod:`~searchnasa.web.urls`.
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from searchnasa.errors import BadInput
from searchnasa.records import SOURCE_LABELS, Record
from searchnasa.search.query import parse
from searchnasa.search.reading import reads_loosely
from searchnasa.search.schemas import MAX_PAGE, SearchRequest, SearchResponse
from searchnasa.search.service import SearchService
from searchnasa.search.text import cut_hard
from searchnasa.web.deps import record_id_of, related_items, services
from searchnasa.topics import topic_label, topics_of
from searchnasa.web.form import FILTER_FACETS, SORTS, read_search_form
from searchnasa.web.histogram import year_histogram
from searchnasa.web.render import humanize, render
from searchnasa.web.urls import (
    author_search_url,
    clear_filters_url,
    export_url,
    feed_url,
    keyword_search_url,
    organization_search_url,
    public_base_url,
    public_url,
    record_url,
    search_url,
    topic_search_url,
)

router = APIRouter(include_in_schema=False)

LINK_LABEL_CHARS = 50
MAX_BACK_CHARS = 4000  # a results-page address carried to a record page (?back=)
EXPORT_FORMATS = ("bibtex", "ris", "csl-json", "csv")
MAX_SELECTION = 100  # a results page shows at most 100 records
RELATED_TITLE_CHARS = 50
RECORD_PAGE_RELATED = 10
RELATED_PAGE_LIMIT = 20
FEED_ENTRIES = 50
FACET_VALUES_SHOWN = 12


def page_numbers(current: int, last: int, around: int = 2) -> list[int | None]:
    """1 … 4 5 [6] 7 8 … 20: ``None`` marks a gap."""
    wanted = {1, last, *range(max(1, current - around), min(last, current + around) + 1)}
    out: list[int | None] = []
    prev = 0
    for n in sorted(wanted):
        if n - prev > 1:
            out.append(None)
        out.append(n)
        prev = n
    return out


def _source_tabs(req: SearchRequest, resp: SearchResponse) -> list[dict[str, Any]]:
    counts = {b.value: b.count for b in resp.facets.get("source", [])}
    tabs = [{"label": "All sources", "source": None, "count": sum(counts.values()) if counts else None}]
    for key, label in SOURCE_LABELS.items():
        tabs.append({"label": label, "source": key, "count": counts.get(key, 0) if counts else None})
    for tab in tabs:
        tab["active"] = req.source == tab["source"]
        tab["url"] = search_url(req, source=tab["source"], page=1)
    return tabs


def _facet_label(name: str, value: str) -> str:
    """What a facet value reads as: a topic's label, a document type humanized, else the value."""
    if name == "topic":
        return topic_label(value)
    return humanize(value) if name == "document_type" else value


def _facet_lists(req: SearchRequest, resp: SearchResponse) -> dict[str, list[dict[str, Any]]]:
    """The filter facets' values with counts and labels; chosen values stay visible even when the
    facet does not list them (their count is then unknown). Every topic is listed (there are few)."""
    facets: dict[str, list[dict[str, Any]]] = {}
    for name, _ in FILTER_FACETS:
        listed = resp.facets.get(name, [])
        buckets = [{"value": b.value, "count": b.count, "label": _facet_label(name, b.value)}
                   for b in (listed if name == "topic" else listed[:FACET_VALUES_SHOWN])]
        shown = {b["value"] for b in buckets}
        facets[name] = buckets + [{"value": v, "count": None, "label": _facet_label(name, v)}
                                  for v in getattr(req, name) if v not in shown]
    return facets


def _decades(req: SearchRequest, resp: SearchResponse) -> list[dict[str, Any]]:
    """The decade filter: each decade of the result set as a link that sets the year range."""
    out = []
    for bucket in resp.facets.get("decade", []):
        start = int(bucket.value.rstrip("s"))
        out.append({"label": bucket.value, "count": bucket.count,
                    "url": search_url(req, year_from=start, year_to=start + 9, page=1),
                    "current": req.year_from == start and req.year_to == start + 9})
    return out


def back_to_results(request: Request) -> str:
    """The results page a record page was opened from (``?back=``), when it is one of ours."""
    back = request.query_params.get("back", "")
    return back if back.startswith("/search?") and len(back) <= MAX_BACK_CHARS else ""


def query_of(back: str) -> str:
    """The query of a results-page address, for the search box of the page it led to."""
    return parse_qs(urlsplit(back).query).get("q", [""])[0] if back else ""


def _read_as(resp: SearchResponse) -> str:
    """How a degraded query, or a long question, was read ("" when every word typed is required as
    typed): a question's "at least 2 of (...)" is worth saying, since a match need not hold every
    word (its reading depends on the words alone, not on the collection's acronyms)."""
    repaired = [n for n in resp.notices if not n.startswith("Semantic search")]  # not about the query text
    if (repaired or reads_loosely(parse(resp.query).tree)) and resp.interpreted:
        return resp.interpreted.removeprefix("Read as:").strip()
    return ""


def _acronym_notes(req: SearchRequest, resp: SearchResponse) -> list[dict[str, str]]:
    """What the page says about each acronym the query held, with the link that searches it only
    as typed (the same search, the acronym written ``=TBC``)."""
    return [{"acronym": note.acronym, "message": note.message,
             "only_url": search_url(req, q=note.only_query, page=1) if note.only_query else ""}
            for note in resp.acronyms]


def _search_page(request: Request) -> Response:
    req, notices = read_search_form(request)
    resp: SearchResponse = services(request).search().search(req)
    if resp.redirect_id:
        return RedirectResponse(record_url(resp.redirect_id), status_code=303)
    listed = resp.total + resp.extras_total  # the matches, then the records only close in meaning
    last_page = max(1, min(MAX_PAGE, math.ceil(listed / req.per_page))) if listed else 1
    return render(
        "search.html",
        request=request,
        req=req,
        resp=resp,
        query=req.q,
        notices=notices + list(resp.notices),
        read_as=_read_as(resp),
        acronym_notes=_acronym_notes(req, resp),
        tabs=_source_tabs(req, resp),
        last_page=last_page,
        past_the_end=listed > 0 and resp.page > last_page,
        extras_toggle_url=search_url(req, extras=None if not req.extras else 0),
        pages=page_numbers(min(resp.page, last_page), last_page),
        page_url=lambda n: search_url(req, page=n),
        clear_filters_url=clear_filters_url(req),
        facets=_facet_lists(req, resp),
        histogram=year_histogram(req, resp),
        filter_facets=FILTER_FACETS,
        selected={name: set(getattr(req, name)) for name, _ in FILTER_FACETS},
        sorts=SORTS,
        has_filters=any(getattr(req, n) for n, _ in FILTER_FACETS) or req.year_from or req.year_to,
        link_label_chars=LINK_LABEL_CHARS,
        permalink=search_url(req, page=resp.page),
        suggestion_url=search_url(req, q=resp.suggestion, page=1) if resp.suggestion else "",
        feed_url=feed_url(req),
        export_url=lambda fmt: export_url(req, fmt),
        decades=_decades(req, resp),
        back=search_url(req, page=resp.page),
    )


@router.get("/search.atom")
def search_feed(request: Request) -> Response:
    """The newest records matching a search, as Atom 1.0, so a feed reader can follow the query."""
    from searchnasa.exports.atom import MEDIA_TYPE, atom_feed
    from searchnasa.exports.resultset import feed_records

    req, _ = read_search_form(request)
    entries = feed_records(services(request).search(), req, FEED_ENTRIES)
    base = public_base_url(request)  # never the Host header: a forged one would land in the feed
    html_url = base + search_url(req.model_copy(update={"sort": "relevance"}))
    xml = atom_feed(req.q, entries, self_url=public_url(request), html_url=html_url, base_url=base)
    return Response(xml, media_type=MEDIA_TYPE)


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> Response:
    if "q" in request.query_params:
        return _search_page(request)
    try:
        count = services(request).record_count()
    except Exception:  # the front page must render even before anything is loaded
        count = None
    return render("home.html", request=request, query="", record_count=count)


@router.get("/search", response_class=HTMLResponse)
def search_page(request: Request) -> Response:
    return _search_page(request)


def _record_context(record: Record) -> dict[str, Any]:
    rights = record.rights
    badges = []
    if record.source == "ntrs":
        if rights.copyright_determination:
            badges.append(("Copyright", humanize(rights.copyright_determination)))
        if rights.export_control:
            badges.append(("Export control", "None" if rights.export_control.upper() == "NO"
                           else humanize(rights.export_control)))
        if rights.distribution:
            badges.append(("Distribution", humanize(rights.distribution)))
    else:
        if rights.availability:
            badges.append(("Availability", humanize(rights.availability)))
        if rights.distribution:
            badges.append(("Distribution", humanize(rights.distribution)))
    if rights.license_type and rights.license_type.upper() != "NO":
        badges.append(("License", humanize(rights.license_type)))
    topics = [{"label": topic_label(slug), "url": topic_search_url(slug)}
              for slug in topics_of(record.source, record.subjects)]
    return {"record": record, "rights_badges": badges, "author_url": author_search_url, "topics": topics,
            "keyword_url": keyword_search_url, "organization_url": organization_search_url}


def copies_of(service: SearchService, record_id: str) -> dict[str, Any] | None:
    """The other copies of this work (NTRS and OSTI holding the same report) and why they match."""
    from searchnasa.store.clusters import cluster_of

    cluster = cluster_of(service.store, record_id)
    if cluster is None:
        return None
    return {"others": cluster.others(record_id), "reasons": cluster.reasons_for(record_id)}


@router.get("/records/{record_id}", response_class=HTMLResponse)
def record_page(request: Request, record_id: str) -> Response:
    service = services(request).search()
    canonical = record_id_of(service, record_id)
    if canonical != record_id:  # a bare number: the page lives at its one address
        query = f"?{request.url.query}" if request.url.query else ""  # ?back= travels along
        return RedirectResponse(record_url(canonical) + query, status_code=301)
    record = service.get(canonical)
    related = related_items(service, [record.id], [], RECORD_PAGE_RELATED)
    back = back_to_results(request)
    return render("record.html", request=request, query=query_of(back), back=back, related=related,
                  copies=copies_of(service, record.id), withdrawn_on=service.withdrawn_on(record.id),
                  **_record_context(record))


@router.get("/records/{record_id}/related", response_class=HTMLResponse)
def related_page(request: Request, record_id: str) -> Response:
    service = services(request).search()
    canonical = record_id_of(service, record_id)
    if canonical != record_id:
        return RedirectResponse(record_url(canonical) + "/related", status_code=301)
    record = service.get(canonical)
    related = related_items(service, [record.id], [], RELATED_PAGE_LIMIT)
    back = back_to_results(request)
    return render("related.html", request=request, query=query_of(back), back=back, record=record, related=related,
                  heading_title=cut_hard(record.title, RELATED_TITLE_CHARS))


@router.get("/export/selection")
def export_selection(request: Request) -> Response:
    """The records ticked on a results page, as citations: on to the export API with their ids
    (a page form cannot tell "none ticked" from "export everything", so this step can)."""
    ids = [i for i in request.query_params.getlist("ids") if i.strip()]
    fmt = request.query_params.get("format", "bibtex")
    if fmt not in EXPORT_FORMATS:
        raise BadInput(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    if not ids:
        raise BadInput("tick at least one record to export the selection")
    if len(ids) > MAX_SELECTION:
        raise BadInput(f"at most {MAX_SELECTION} records can be exported as a selection")
    return RedirectResponse("/api/export?" + urlencode([("format", fmt), *(("ids", i) for i in ids)]),
                            status_code=303)
