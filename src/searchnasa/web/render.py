"""The page templates and the filters they use, set up once for every HTML answer.

Both the pages and the error handlers render through :func:`render`, so an error page wears the
same layout, escaping and labels as the page it replaces.
"""

from __future__ import annotations

import re

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from fastapi import Request
from fastapi.responses import HTMLResponse

from searchnasa.limits import NO_DATE_LABEL, YEAR_MAX, YEAR_MIN
from searchnasa.records import SOURCE_LABELS
from searchnasa.search.schemas import MAX_QUERY_CHARS
from searchnasa.search.text import shorten_at_word
from searchnasa.web.labels import cut_at_source, distinct_labels
from searchnasa.web.status import site_info
from searchnasa.web.urls import record_id_part

TEMPLATES_DIR = Path(__file__).parent / "templates"


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


def facet_labels(buckets: list[Any], name: str) -> dict[str, str]:
    """A facet's values -> the labels its checkboxes show (readable, short, no two alike)."""
    def field(bucket: Any, key: str) -> Any:
        return bucket.get(key) if isinstance(bucket, dict) else getattr(bucket, key, None)

    given = {field(b, "value"): field(b, "label") for b in buckets}  # a topic's label, a type's words

    def readable(value: str) -> str:
        label = given.get(value) or value
        return humanize(label) if name == "document_type" else label

    return distinct_labels(given, readable)


def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES_DIR),
        autoescape=True,  # every value is escaped unless a template says |safe (only pre-escaped HTML)
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        auto_reload=False,  # the templates are package files: no stat of each one on every page
    )
    env.filters["safe_url"] = safe_url
    env.filters["truncate_text"] = shorten_at_word
    env.filters["humanize"] = humanize
    env.filters["thousands"] = lambda n: f"{n:,}"
    env.filters["urlpart"] = record_id_part
    env.filters["cut_at_source"] = cut_at_source
    env.filters["facet_labels"] = facet_labels
    # limits and labels the templates show, declared once in searchnasa.limits and search.schemas
    env.globals.update(SOURCE_LABELS=SOURCE_LABELS, NO_DATE_LABEL=NO_DATE_LABEL, YEAR_MIN=YEAR_MIN,
                       YEAR_MAX=YEAR_MAX, MAX_QUERY_CHARS=MAX_QUERY_CHARS)
    return env


ENV = _env()


_CONTROL_CHARS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def render(name: str, status: int = 200, headers: dict[str, str] | None = None,
           request: Request | None = None, **context: Any) -> HTMLResponse:
    """A page in the site's layout; ``request`` gives it the home's description line and
    freshness footer (:mod:`~searchnasa.web.status`)."""
    context["site"] = site_info(request)
    # C0 control characters (but tab, newline, carriage return) from record text are not valid in
    # HTML and some browsers show them as boxes; the templates hold none, so the whole page is cleaned.
    html = _CONTROL_CHARS.sub("", ENV.get_template(name).render(**context))
    return HTMLResponse(html, status_code=status, headers=headers)
