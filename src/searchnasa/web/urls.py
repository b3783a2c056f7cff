"""The site's links, built in one place for the pages and their templates.

A link that keeps a search carries only its non-default parameters (:func:`form_params`), so the
same search always has the same address.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from starlette.requests import Request

from searchnasa.search.schemas import SearchRequest
from searchnasa.settings import env_value
from searchnasa.web.form import FILTER_FACETS, form_params


def record_id_part(record_id: Any) -> str:
    """A record id as a path segment: its ``:`` stays readable, anything else is escaped."""
    return quote(str(record_id), safe=":")


def record_url(record_id: str) -> str:
    return f"/records/{record_id_part(record_id)}"


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


def clear_filters_url(req: SearchRequest) -> str:
    """This search without its year range and filters (the source tab stays)."""
    return search_url(req, year_from=None, year_to=None, **{name: None for name, _ in FILTER_FACETS})


def feed_url(req: SearchRequest) -> str:
    """The Atom feed of this search (always newest first, so the sort is not carried)."""
    return "/search.atom?" + urlencode([(k, v) for k, v in form_params(req) if k != "sort"])


def export_url(req: SearchRequest, fmt: str) -> str:
    """Citations of this whole result set in ``fmt``, from the JSON API."""
    return "/api/export?" + urlencode([("format", fmt), *form_params(req)])


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


def topic_search_url(slug: str) -> str:
    """Every record of this shared topic, in both sources: the topic filter."""
    return "/search?" + urlencode([("q", ""), ("topic", slug)])


_DEFAULT_PORTS = {"http": 80, "https": 443}


def public_base_url(request: Request) -> str:
    """The site's own address for links that leave the page (the Atom feed's self and entry links):
    ``SEARCHNASA_PUBLIC_URL`` when set, else the address the server itself listens on (the ASGI
    scope's ``server``), never the request's ``Host`` header, which any client can forge."""
    configured = env_value("PUBLIC_URL").strip()
    if configured:
        return configured.rstrip("/")
    scheme = request.scope.get("scheme", "http")
    host, port = request.scope.get("server") or ("localhost", None)
    host = f"[{host}]" if ":" in host else host
    netloc = host if port in (None, _DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    return f"{scheme}://{netloc}{request.scope.get('root_path', '')}".rstrip("/")


def public_url(request: Request) -> str:
    """This request's own address under :func:`public_base_url` (path and query kept)."""
    query = request.url.query
    return public_base_url(request) + request.url.path + (f"?{query}" if query else "")
