"""CSL-JSON (what citeproc, Zotero and pandoc read): one object per record in a JSON array."""

from __future__ import annotations

from typing import Any

import orjson

from searchnasa.records import Record
from searchnasa.exports.common import (
    WORK_TYPES,
    authors,
    date_parts,
    one_line,
    publisher_of,
    report_number,
    work_type,
)


def item(record: Record) -> dict[str, Any]:
    kind = work_type(record)
    out: dict[str, Any] = {"id": record.id, "type": WORK_TYPES[kind][2], "title": one_line(record.title)}
    names = authors(record)
    if names:
        out["author"] = [{"literal": n.family} if n.literal or not n.given else {"family": n.family, "given": n.given}
                         for n in names]
    parts = date_parts(record)
    if parts:
        out["issued"] = {"date-parts": [parts]}
    if record.abstract:
        out["abstract"] = record.abstract
    pub = record.publication
    if pub:
        for key, value in (("container-title", pub.journal), ("volume", pub.volume), ("issue", pub.issue),
                           ("ISSN", pub.issn)):
            if value:
                out[key] = one_line(value)
    publisher = publisher_of(record, kind)
    if publisher:
        out["publisher"] = one_line(publisher)
    if report_number(record):
        out["number"] = report_number(record)
    if record.identifiers.doi:
        out["DOI"] = record.identifiers.doi
    if record.url:
        out["URL"] = record.url
    keywords = record.keywords or record.subjects
    if keywords:
        out["keyword"] = ", ".join(one_line(k) for k in keywords)
    if record.language:
        out["language"] = record.language
    out["source"] = record.source_label
    return out


def entry(record: Record) -> str:
    """One item as one line of JSON (UTF-8 kept, not ``\\u``-escaped)."""
    return orjson.dumps(item(record)).decode()
