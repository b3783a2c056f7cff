"""The search form: read from a page's query string, and written back as the parameters of links.

Pages are forgiving where the API is strict: a page number past the end or a year typed as words is
read sensibly and said so, because a person typed it; only an over-long query is refused.
"""

from __future__ import annotations

from typing import get_args

from fastapi import Request

from searchnasa.errors import BadInput
from searchnasa.limits import YEAR_MAX, YEAR_MIN
from searchnasa.search.schemas import MAX_PAGE, MAX_QUERY_CHARS, Mode, SearchRequest
from searchnasa.topics import resolve_topic

PER_PAGE = 20
MAX_FILTER_VALUES = 20  # values of one filter a search takes (the API refuses more, a page keeps the first)
FILTER_FACETS = (("topic", "Topic"), ("document_type", "Document type"), ("subject", "Subject"),
                 ("organization", "Organization"), ("author", "Author"))
SORTS = (("relevance", "Relevance"), ("newest", "Newest first"), ("oldest", "Oldest first"))


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


def _topics(values: list[str], notices: list[str]) -> list[str]:
    """Topic slugs from the page's ``topic`` values (a slug, label or alias is taken); an unknown
    one is dropped with a notice, where the API would refuse it."""
    slugs: list[str] = []
    for value in values:
        slug = resolve_topic(value)
        if slug is None:
            notices.append(f"Ignored unknown topic “{value[:40]}”.")
        elif slug not in slugs:
            slugs.append(slug)
    return slugs


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
    if sort not in dict(SORTS):
        sort = "relevance"
    mode = params.get("mode") or "hybrid"
    if mode not in get_args(Mode):
        mode = "hybrid"
    year_from = _int_or_none(params.get("year_from"), YEAR_MIN, YEAR_MAX, notices, "year")
    year_to = _int_or_none(params.get("year_to"), YEAR_MIN, YEAR_MAX, notices, "year")
    lists = {name: [v for v in params.getlist(name) if v.strip()][:MAX_FILTER_VALUES]
             for name, _ in FILTER_FACETS}
    lists["topic"] = _topics(lists["topic"], notices)
    extras = params.get("extras", "1") not in ("0", "off", "false", "no")
    req = SearchRequest(q=q, source=source, page=page, per_page=PER_PAGE, sort=sort, mode=mode,
                        year_from=year_from, year_to=year_to, extras=extras, **lists)
    req, swapped = req.years_in_order()  # the form shows the range in order, the notice says why
    return req, notices + ([swapped] if swapped else [])


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
    if not req.extras:
        out.append(("extras", "0"))
    return out
