"""The HTML pages: search results, a record, its related papers. Server-rendered, no JavaScript.

Pages are forgiving where the API is strict: a page number past the end or a year typed as words is
read sensibly and said so, because a person typed it; only an over-long query is refused.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import jinja2
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from searchnasa.errors import BadInput
from searchnasa.records import SOURCE_LABELS, Record
from searchnasa.search.schemas import MAX_PAGE, MAX_QUERY_CHARS, SearchRequest, SearchResponse
from searchnasa.search.service import SearchService
from searchnasa.search.text import cut_hard
from searchnasa.search.text import shorten_at_word as truncate
from searchnasa.web.api import check_record_id, related_items
from searchnasa.web.app import services

router = APIRouter(include_in_schema=False)

TEMPLATES_DIR = Path(__file__).parent / "templates"
PER_PAGE = 20
LINK_LABEL_CHARS = 50
RELATED_TITLE_CHARS = 50
RECORD_PAGE_RELATED = 10
RELATED_PAGE_LIMIT = 20
FILTER_FACETS = (("document_type", "Document type"), ("subject", "Subject"),
                 ("organization", "Organization"))
SORTS = (("relevance", "Relevance"), ("newest", "Newest first"), ("oldest", "Oldest first"))


def safe_url(url: str | None) -> str | None:
    """Only http(s) links leave the site: a ``javascript:`` or ``data:`` URL in a record is dropped."""
    if not url:
        return None
    try:
        scheme = urlsplit(url.strip()).scheme.lower()
    except ValueError:
        return None
    return url.strip() if scheme in ("http", "https") else None


def humanize(value: str | None) -> str:
    """``GOV_PUBLIC_USE_PERMITTED`` -> ``Gov public use permitted``: source codes, readable."""
    if not value:
        return ""
    if value.isupper() or "_" in value:
        words = value.replace("_", " ").strip().lower()
        return words[:1].upper() + words[1:]
    return value


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,  # every value is escaped unless a template says |safe (only pre-escaped HTML)
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["safe_url"] = safe_url
    env.filters["truncate_text"] = truncate
    env.filters["humanize"] = humanize
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["urlpart"] = lambda s: quote(str(s), safe=":")
    env.globals["SOURCE_LABELS"] = SOURCE_LABELS
    return env


ENV = _env()


def render(name: str, status: int = 200, headers: dict[str, str] | None = None, **context: Any) -> HTMLResponse:
    html = ENV.get_template(name).render(**context)
    return HTMLResponse(html, status_code=status, headers=headers)


def render_error(request: Request, status: int, message: str,
                 headers: dict[str, str] | None = None) -> HTMLResponse:
    return render("error.html", status=status, headers=headers, status_code=status, message=message,
                  query=request.query_params.get("q", "")[:MAX_QUERY_CHARS])


# -- reading the search form ---------------------------------------------------------------------
def _int_or_none(text: str | None, low: int, high: int, notices: list[str], name: str) -> int | None:
    if text is None or not text.strip():
        return None
    try:
        value = int(text.strip())
    except ValueError:
        notices.append(f"Ignored {name} “{text[:20]}”: not a number.")
        return None
    if not low <= value <= high:
        notices.append(f"Ignored {name} {value}: outside {low}-{high}.")
        return None
    return value


def read_search_form(request: Request) -> tuple[SearchRequest, list[str]]:
    """The page's GET parameters as a :class:`SearchRequest`, plus notices about what was ignored."""
    params = request.query_params
    notices: list[str] = []
    q = params.get("q", "")
    if len(q) > MAX_QUERY_CHARS:
        raise BadInput(f"the query is {len(q):,} characters long; the limit is {MAX_QUERY_CHARS:,}")
    source = params.get("source") or None
    if source not in (None, "ntrs", "osti"):
        notices.append(f"Ignored unknown source “{source[:20]}”.")
        source = None
    page = _int_or_none(params.get("page"), 1, 10**9, notices, "page") or 1
    if page > MAX_PAGE:
        notices.append(f"Showing page {MAX_PAGE}, the last page we serve.")
        page = MAX_PAGE
    sort = params.get("sort") or "relevance"
    if sort not in ("relevance", "newest", "oldest"):
        sort = "relevance"
    mode = params.get("mode") or "hybrid"
    if mode not in ("lexical", "semantic", "hybrid"):
        mode = "hybrid"
    year_from = _int_or_none(params.get("year_from"), 1000, 2100, notices, "year")
    year_to = _int_or_none(params.get("year_to"), 1000, 2100, notices, "year")
    lists = {name: [v for v in params.getlist(name) if v.strip()][:20] for name, _ in FILTER_FACETS}
    req = SearchRequest(q=q, source=source, page=page, per_page=PER_PAGE, sort=sort, mode=mode,
                        year_from=year_from, year_to=year_to, **lists)
    return req, notices


def form_params(req: SearchRequest) -> list[tuple[str, str]]:
    """The non-default parameters of a search, in a stable order, for links that keep the query."""
    out: list[tuple[str, str]] = [("q", req.q)]
    if req.source:
        out.append(("source", req.source))
    for name in ("year_from", "year_to"):
        if getattr(req, name) is not None:
            out.append((name, str(getattr(req, name))))
    for name, _ in FILTER_FACETS:
        out.extend((name, v) for v in getattr(req, name))
    if req.sort != "relevance":
        out.append(("sort", req.sort))
    if req.mode != "hybrid":
        out.append(("mode", req.mode))
    return out


def search_url(req: SearchRequest, **changes: Any) -> str:
    """A link to this search with some parameters changed (``None`` removes one); page resets to 1."""
    params = [(k, v) for k, v in form_params(req) if k not in changes]
    for key, value in changes.items():
        if value is None or key == "page" and value == 1:
            continue
        if isinstance(value, (list, tuple)):
            params.extend((key, str(v)) for v in value)
        else:
            params.append((key, str(value)))
    return "/search?" + urlencode(params)


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


def _search_page(request: Request) -> Response:
    req, notices = read_search_form(request)
    resp: SearchResponse = services(request).search().search(req)
    if resp.redirect_id:
        return RedirectResponse(f"/records/{quote(resp.redirect_id, safe=':')}", status_code=303)
    last_page = max(1, min(MAX_PAGE, math.ceil(resp.total / req.per_page))) if resp.total else 1
    facets: dict[str, list[dict[str, Any]]] = {}
    selected = {name: set(getattr(req, name)) for name, _ in FILTER_FACETS}
    for name, _ in FILTER_FACETS:  # chosen values stay visible even when the facet does not list them
        buckets = [{"value": b.value, "count": b.count} for b in resp.facets.get(name, [])[:12]]
        shown = {b["value"] for b in buckets}
        facets[name] = buckets + [{"value": v, "count": None} for v in getattr(req, name) if v not in shown]
    read_as = ""
    repaired = [n for n in resp.notices if not n.startswith("Semantic search")]  # not about the query text
    if repaired and resp.interpreted:  # the query was degraded: say how it was read
        read_as = resp.interpreted.removeprefix("Read as:").strip()
    return render(
        "search.html",
        req=req,
        resp=resp,
        query=req.q,
        notices=notices + list(resp.notices),
        read_as=read_as,
        tabs=_source_tabs(req, resp),
        last_page=last_page,
        pages=page_numbers(resp.page, last_page),
        page_url=lambda n: search_url(req, page=n),
        clear_filters_url=search_url(req, year_from=None, year_to=None,
                                     **{name: None for name, _ in FILTER_FACETS}),
        facets=facets,
        filter_facets=FILTER_FACETS,
        selected=selected,
        sorts=SORTS,
        has_filters=any(getattr(req, n) for n, _ in FILTER_FACETS) or req.year_from or req.year_to,
        link_label_chars=LINK_LABEL_CHARS,
        permalink=search_url(req, page=resp.page),
        suggestion_url=search_url(req, q=resp.suggestion, page=1) if resp.suggestion else "",
        feed_url="/search.atom?" + urlencode([(k, v) for k, v in form_params(req) if k != "sort"]),
        export_url=lambda fmt: "/api/export?" + urlencode([("format", fmt), *form_params(req)]),
    )


FEED_ENTRIES = 50


@router.get("/search.atom")
def search_feed(request: Request) -> Response:
    """The newest records matching a search, as Atom 1.0, so a feed reader can follow the query."""
    from searchnasa.exports.atom import MEDIA_TYPE, atom_feed

    req, _ = read_search_form(request)
    req = req.model_copy(update={"sort": "newest", "page": 1, "per_page": FEED_ENTRIES, "mode": "lexical"})
    service = services(request).search()
    resp = service.search(req, fold_copies=False)  # a feed reader follows every record
    # the stored records carry the full date and every author; a hit only has the year
    found = service.store.get_many([hit.id for hit in resp.results])
    entries = [found.get(hit.id, hit) for hit in resp.results]
    base = str(request.base_url).rstrip("/")
    html_url = base + search_url(req.model_copy(update={"sort": "relevance"}))
    xml = atom_feed(req.q, entries, self_url=str(request.url), html_url=html_url, base_url=base)
    return Response(xml, media_type=MEDIA_TYPE)


@router.get("/", response_class=HTMLResponse)
def home(request: Request) -> Response:
    if "q" in request.query_params:
        return _search_page(request)
    try:
        count = services(request).record_count()
    except Exception:  # the front page must render even before anything is loaded
        count = None
    return render("home.html", query="", record_count=count)


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
    return {"record": record, "rights_badges": badges, "author_url": author_search_url,
            "keyword_url": keyword_search_url, "organization_url": organization_search_url}


def _field_phrase_url(field: str, value: str) -> str:
    """A search for ``value`` as a phrase on ``field`` (quote marks in the value would end the
    phrase, so they become spaces)."""
    phrase = " ".join(value.replace('"', " ").split())
    return "/search?" + urlencode([("q", f'{field}:"{phrase}"')])


def author_search_url(name: str) -> str:
    """Every record by this author."""
    return _field_phrase_url("author", name)


def keyword_search_url(keyword: str) -> str:
    """Every record with this keyword."""
    return _field_phrase_url("keyword", keyword)


def organization_search_url(name: str) -> str:
    """Every record of this organization: the organization filter (the facet's own value)."""
    return "/search?" + urlencode([("q", ""), ("organization", name)])


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
    record = service.get(check_record_id(record_id))
    related = related_items(service, [record.id], [], RECORD_PAGE_RELATED)
    return render("record.html", query="", related=related, copies=copies_of(service, record.id),
                  **_record_context(record))


@router.get("/records/{record_id}/related", response_class=HTMLResponse)
def related_page(request: Request, record_id: str) -> Response:
    service = services(request).search()
    record = service.get(check_record_id(record_id))
    related = related_items(service, [record.id], [], RELATED_PAGE_LIMIT)
    return render("related.html", query="", record=record, related=related,
                  heading_title=cut_hard(record.title, RELATED_TITLE_CHARS))
