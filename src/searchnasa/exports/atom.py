"""Atom 1.0 feeds of the newest records matching a search, so a user can follow a query in any
feed reader (``/search.atom?q=…``).

Built with the standard library's ElementTree, which escapes text and attributes correctly
(titles with ``&`` and ``<`` are common in physics), rather than by string templates. Entries take
either stored :class:`~searchnasa.records.Record` objects or search hits (anything with ``id``,
``title``, ``url`` and optionally ``abstract``, ``authors``, ``date``/``year``), so the web layer
can feed search results straight in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote
from xml.etree import ElementTree as ET

from searchnasa.search.text import cut_at_last_space

ATOM_NS = "http://www.w3.org/2005/Atom"
MEDIA_TYPE = "application/atom+xml; charset=utf-8"
TAG_AUTHORITY = "searchnasa"
TAG_DATE = "2026"
SUMMARY_CHARS = 1000

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")

ET.register_namespace("", ATOM_NS)


def _t(tag: str) -> str:
    return f"{{{ATOM_NS}}}{tag}"


def _clean(text: Any) -> str:
    """XML 1.0 forbids most control characters even when escaped: drop them."""
    return _XML_INVALID.sub("", str(text or "")).strip()


def _rfc3339(value: str | None, year: int | None = None) -> str | None:
    """A source date (``1973``, ``1973-11``, ``1973-11-01``, or a full timestamp) as an Atom date."""
    if value:
        m = re.match(r"^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", value)
        if m:
            y, mo, d = int(m.group(1)), int(m.group(2) or 1), int(m.group(3) or 1)
            try:
                return datetime(y, mo, d, tzinfo=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            except ValueError:
                pass
    if year:
        return f"{year:04d}-01-01T00:00:00Z"
    return None


def entry_id(record_id: str) -> str:
    """A permanent ``tag:`` URI per record (RFC 4151): readers use it to spot entries already seen."""
    return f"tag:{TAG_AUTHORITY},{TAG_DATE}:record:{quote(record_id, safe=':')}"


def feed_id(query: str) -> str:
    return f"tag:{TAG_AUTHORITY},{TAG_DATE}:search?q={quote(query, safe='')}"


def _get(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, dict):
        return item.get(name, default)
    return getattr(item, name, default)


def _entry_fields(item: Any) -> dict[str, Any]:
    date = _get(item, "date")
    date_value = date if isinstance(date, str) else _get(date, "value") if date is not None else None
    if date_value is None and _get(item, "dates"):
        date_value = _get(_get(item, "dates")[0], "value")  # created/entry date: better than "now"
    authors = [(_get(a, "name") if not isinstance(a, str) else a) for a in (_get(item, "authors") or [])]
    return {
        "id": str(_get(item, "id")),
        "title": _clean(_get(item, "title")) or "(untitled)",
        "url": _get(item, "url"),
        "summary": _clean(_get(item, "abstract")),
        "updated": _rfc3339(date_value, _get(item, "year")),
        "authors": [_clean(a) for a in authors if _clean(a)],
        "source_label": _get(item, "source_label"),
    }


def atom_feed(query: str, items: Iterable[Any], self_url: str, html_url: str | None = None,
              title: str | None = None, base_url: str | None = None) -> str:
    """The Atom document for ``query`` with one entry per item, newest first as given.

    Each entry links to the original record; a record without a known original links to our own
    record page under ``base_url`` (``<base_url>/records/<id>``) when given, else has no link.

    ``updated`` of an entry is the record's own date (the publication date, which is what "newest"
    means here); records without a date get the feed's time, since Atom requires one.
    """
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    entries = [_entry_fields(i) for i in items]
    feed = ET.Element(_t("feed"))
    ET.SubElement(feed, _t("id")).text = feed_id(query)
    ET.SubElement(feed, _t("title")).text = _clean(title or f"Search NASA: {query or 'all records'}")
    dated = [e["updated"] for e in entries if e["updated"]]
    ET.SubElement(feed, _t("updated")).text = max(dated) if dated else now
    author = ET.SubElement(feed, _t("author"))
    ET.SubElement(author, _t("name")).text = "Search NASA (NASA NTRS and DOE OSTI records)"
    ET.SubElement(feed, _t("link"), rel="self", type="application/atom+xml", href=self_url)
    if html_url:
        ET.SubElement(feed, _t("link"), rel="alternate", type="text/html", href=html_url)
    ET.SubElement(feed, _t("generator")).text = "Search NASA"
    for e in entries:
        node = ET.SubElement(feed, _t("entry"))
        ET.SubElement(node, _t("id")).text = entry_id(e["id"])
        ET.SubElement(node, _t("title"), type="text").text = e["title"]
        ET.SubElement(node, _t("updated")).text = e["updated"] or now
        web_url = e["url"] if str(e["url"] or "").strip().lower().startswith(("http://", "https://")) else None
        href = web_url or (f"{base_url.rstrip('/')}/records/{quote(e['id'], safe=':')}" if base_url else None)
        if href:
            ET.SubElement(node, _t("link"), rel="alternate", href=str(href))
        for name in e["authors"][:20]:
            ET.SubElement(ET.SubElement(node, _t("author")), _t("name")).text = name
        if e["summary"]:
            summary = cut_at_last_space(e["summary"], SUMMARY_CHARS, trailing="", mark=" …")
            ET.SubElement(node, _t("summary"), type="text").text = summary
        if e["source_label"]:
            ET.SubElement(node, _t("category"), term=str(e["source_label"]))
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(feed, encoding="unicode") + "\n"
