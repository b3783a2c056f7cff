"""BibTeX entries, escaped so that any title survives LaTeX: the ten specials are escaped, names
that contain " and " are braced, and non-ASCII text is kept as UTF-8 (biber and modern BibTeX
read it; converting to ``{\\'e}`` loses information for scripts without a LaTeX form).

Entry types carry the fields BibTeX requires of them (:data:`REQUIRED`), so a reference manager
takes an entry without edits: a report's institution always (``common.institution``: never NTRS's
"Legacy CDMS" collection marker), an article's journal, a paper's proceedings. Author and year
come from the source when it has them and are never invented. Where the work appeared cannot be
invented either: an article whose journal the source does not name (the OSTI dumps that drop
``journal_name``) or a paper without its proceedings' title is written as ``@misc``, its kind
kept in ``howpublished``. RIS and CSL-JSON have no required fields, so they keep the kind.
"""

from __future__ import annotations

import re

from searchnasa.records import Record
from searchnasa.exports.common import (
    WORK_TYPES,
    authors,
    date_parts,
    institution,
    one_line,
    report_number,
    school,
    work_type,
)

_SPECIALS = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}
_SPECIALS_RE = re.compile("|".join(re.escape(c) for c in _SPECIALS))
_KEY_UNSAFE = re.compile(r"[^A-Za-z0-9_:.\-]")


def escape(text: str | None) -> str:
    """Escape LaTeX specials in a field value (one line)."""
    return _SPECIALS_RE.sub(lambda m: _SPECIALS[m.group(0)], one_line(text))


def cite_key(record: Record) -> str:
    """``ntrs:19930086518`` and ``osti:1442457``: unique, stable, and what the user sees on the page."""
    return _KEY_UNSAFE.sub("_", record.id)


def _name(n) -> str:  # type: ignore[no-untyped-def]
    family = escape(n.family)
    if n.literal or re.search(r"\band\b", n.family, re.I):
        family = "{" + family + "}"
    if n.literal or not n.given:
        return family
    return f"{family}, {escape(n.given)}"


# The field each standard entry type requires besides author, title and year (btxdoc, "Entry Types").
REQUIRED = {"article": "journal", "inproceedings": "booktitle", "book": "publisher",
            "techreport": "institution", "phdthesis": "school"}
# What a work is, for ``howpublished`` when its entry falls back to @misc.
KIND_LABELS = {"article": "Journal article", "conference": "Conference paper", "book": "Book",
               "report": "Technical report", "thesis": "Thesis", "dataset": "Dataset"}

Fields = list[tuple[str, str]]


def _head(record: Record) -> Fields:
    fields: Fields = [("title", "{" + escape(record.title) + "}")]  # inner braces keep case
    names = authors(record)
    if names:
        fields.append(("author", " and ".join(_name(n) for n in names)))
    parts = date_parts(record)
    if parts:
        fields.append(("year", str(parts[0])))
        if len(parts) >= 2:
            fields.append(("month", str(parts[1])))
        fields.append(("date", "-".join(f"{p:02d}" if i else str(p) for i, p in enumerate(parts))))
    return fields


def _venue(record: Record, kind: str) -> Fields:
    """Where the work appeared or who issued it, as the kind's entry type names it."""
    fields: Fields = []
    pub = record.publication
    if kind == "article" and pub and pub.journal:
        fields.append(("journal", escape(pub.journal)))
    if pub:
        for key, value in (("volume", pub.volume), ("number", pub.issue), ("issn", pub.issn)):
            if value and not (key == "number" and kind == "report"):
                fields.append((key, escape(value)))
    if kind == "report":
        fields.append(("institution", escape(institution(record))))
        if report_number(record):
            fields.append(("number", escape(report_number(record))))
    elif kind == "thesis":
        fields.append(("school", escape(school(record))))
    elif pub and pub.publisher:
        fields.append(("publisher", escape(pub.publisher)))
    return fields


def _tail(record: Record) -> Fields:
    fields: Fields = []
    if record.identifiers.doi:
        fields.append(("doi", escape(record.identifiers.doi)))
    if record.url:
        fields.append(("url", escape(record.url)))
    if record.abstract:
        fields.append(("abstract", escape(record.abstract)))
    keywords = record.keywords or record.subjects
    if keywords:
        fields.append(("keywords", escape(", ".join(keywords))))
    if record.language:
        fields.append(("language", escape(record.language)))
    fields.append(("note", escape(f"{record.source_label} {record.id}")))
    return fields


def entry_type(kind: str, venue: Fields) -> str:
    """The kind's entry type when the venue holds the field that type requires, else ``misc``."""
    wanted = WORK_TYPES[kind][0]
    needed = REQUIRED.get(wanted)
    return wanted if needed is None or any(key == needed for key, _ in venue) else "misc"


def entry(record: Record) -> str:
    """One ``@type{key, ...}`` entry ending in a blank line."""
    kind = work_type(record)
    venue = _venue(record, kind)
    chosen = entry_type(kind, venue)
    if chosen == "misc" and kind in KIND_LABELS:
        venue.append(("howpublished", KIND_LABELS[kind]))
    fields = _head(record) + venue + _tail(record)
    body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields)
    return f"@{chosen}{{{cite_key(record)},\n{body}\n}}\n\n"
