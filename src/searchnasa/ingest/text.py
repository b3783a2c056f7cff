"""Field cleaners shared by every source mapper: markup to text, dates, author strings
(DOIs are normalized by :func:`searchnasa.records.normalize_doi`, beside the model).

Each function is total: odd input gives ``None`` or the input cleaned, never an exception, because
one bad field must not cost a whole record.
"""

from __future__ import annotations

import html
import re
from datetime import datetime
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from searchnasa.records import Author, DateKind, RecordDate, Source, make_id

_BLOCK_TAGS = re.compile(
    r"</?(?:p|jats:p|div|br|li|ul|ol|tr|td|th|h[1-6]|jats:sec|jats:title|section|table)\b[^>]*>",
    re.IGNORECASE,
)
_SPACES = re.compile(r"\s+")
_MARKUP_HINT = re.compile(r"<[A-Za-z/!]|&[#A-Za-z0-9]+;")
_ENTITY = re.compile(r"&(?:#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]{1,31});")


def _unescape(text: str) -> str:
    """Decode entities; decode once more when the source escaped them twice (``NETL&amp;#39;s``).

    The second pass runs only when a whole entity is left after the first, so a literal ``&lt;5``
    (already decoded to ``<5``) is never touched again.
    """
    text = html.unescape(text)
    if "&" in text and _ENTITY.search(text):
        text = html.unescape(text)
    return text


def clean_text(value: object) -> str | None:
    """Turn a title or abstract that may hold HTML/JATS markup and entities into plain text.

    Block tags become spaces (paragraphs stay apart); inline tags such as ``<sub>`` vanish so that
    ``E<sub>μ</sub>`` reads ``Eμ``; entities are decoded once. Empty text becomes ``None``.
    """
    if value is None:
        return None
    text = str(value)
    if _MARKUP_HINT.search(text):
        text = _BLOCK_TAGS.sub(" ", text)
        if "<" in text:
            # The HTML parser drops tags; wrapping keeps leading text that looks like a tag intact.
            tree = LexborHTMLParser(f"<div>{text}</div>")
            body = tree.body
            text = body.text(deep=True, separator="", strip=False) if body is not None else text
        text = _unescape(text)
    text = _SPACES.sub(" ", text.replace("\x00", " ")).strip()
    return text or None


def clean_label(value: object) -> str | None:
    """A short label (subject, type, organization): entities decoded, spaces collapsed."""
    if value is None or not isinstance(value, (str, int, float)):
        return None
    text = _SPACES.sub(" ", _unescape(str(value))).strip()
    return text or None


def clean_list(values: object) -> list[str]:
    """A list of labels with empties, non-strings and repeats removed, order kept."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    seen: dict[str, None] = {}
    if isinstance(values, (list, tuple)):
        for v in values:
            label = clean_label(v)
            if label and label not in seen:
                seen[label] = None
    return list(seen)


_DATE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*$")
_US_DATE = re.compile(r"^\s*(\d{1,2})/(\d{1,2})/(\d{4})\s*$")


def parse_date(value: object, kind: DateKind, precision: str | None = None) -> RecordDate | None:
    """Parse ``2016-05-06T10:59:49.8800000+00:00``, ``1973-11-01T00:00:00Z``, ``2007-08``, ``1980``
    or ``08/01/2007`` into a dated value that remembers its precision. Anything else is ``None``.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    m = _DATE.match(value)
    if m:
        year, month, day = m.group(1), m.group(2), m.group(3)
    else:
        us = _US_DATE.match(value)
        if not us:
            return None
        month, day, year = us.group(1), us.group(2), us.group(3)
    y = int(year)
    if not 1000 <= y <= 2100:
        return None
    try:
        if day is not None and month is not None:
            datetime(y, int(month), int(day))
            return RecordDate(value=f"{y:04d}-{int(month):02d}-{int(day):02d}", kind=kind,
                              precision="day")
        if month is not None:
            if not 1 <= int(month) <= 12:
                return None
            return RecordDate(value=f"{y:04d}-{int(month):02d}", kind=kind, precision="month")
    except ValueError:
        return None
    return RecordDate(value=f"{y:04d}", kind=kind, precision="year")


def dated(published: RecordDate | None, *others: RecordDate | None) -> dict[str, Any]:
    """A record's date fields from its publication date and the other dates the source gives:
    ``date`` is the publication date, ``dates`` every one known, and ``year`` stays ``None``
    without a publication date (missing stays missing)."""
    return {"date": published, "dates": [d for d in (published, *others) if d],
            "year": published.year if published else None}


def record_head(source: Source, source_id: str, title: object) -> dict[str, Any]:
    """The fields every mapper fills alike: the global id, the source and its id, and a title that
    is never empty (``(untitled)`` when the source gives none), so no source names records its own way."""
    return {"id": make_id(source, source_id), "source": source, "source_id": source_id,
            "title": clean_text(title) or "(untitled)"}


_ORCID = re.compile(r"\(ORCID:\s*([0-9Xx-]{15,19})\)")


def format_orcid(raw: str | None) -> str | None:
    """ORCIDs come as ``0000000249820865`` or ``https://orcid.org/0000-...``: give ``0000-0002-4982-0865``."""
    if not raw:
        return None
    digits = re.sub(r"[^0-9Xx]", "", raw.rsplit("/", 1)[-1]).upper()
    if len(digits) != 16:
        return None
    return "-".join(digits[i : i + 4] for i in range(0, 16, 4))


def parse_osti_author(value: object) -> Author | None:
    """Split ``"Zhao, Huan [ORNL, Oak Ridge, TN (United States)] (ORCID:0000000249820865)"``.

    The affiliation is everything inside the outermost brackets (it may itself hold brackets and
    parentheses); the ORCID is the ``(ORCID:...)`` group; the name is what remains.
    """
    if not isinstance(value, str):
        return None
    text = _SPACES.sub(" ", html.unescape(value)).strip()
    if not text:
        return None
    orcid = None
    m = _ORCID.search(text)
    if m:
        orcid = format_orcid(m.group(1))
        text = (text[: m.start()] + text[m.end() :]).strip()
    affiliation = None
    start = text.find("[")
    if start != -1:
        end = text.rfind("]")
        if end > start:
            affiliation = text[start + 1 : end].strip() or None
            text = (text[:start] + text[end + 1 :]).strip()
        else:
            affiliation = text[start + 1 :].strip() or None
            text = text[:start].strip()
    name = text.strip(" ;,")
    if not name:
        return None
    return Author(name=name, affiliation=affiliation, orcid=orcid)


def split_outside_brackets(value: str, sep: str = ";") -> list[str]:
    """Split ``"A [x; y]; B"`` on ``sep`` only where it is not inside brackets or parentheses."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in value:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth = max(0, depth - 1)
        if ch == sep and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


_DOE_CATEGORY = re.compile(r"^\d{2,3}\s+(?:-\s+)?[A-Z]")  # "72 PHYSICS ..." and "42 - ENGINEERING"


def split_osti_subjects(values: list[str]) -> tuple[list[str], list[str]]:
    """OSTI mixes DOE subject categories (``72 PHYSICS OF ...``) with free keywords in one list."""
    subjects: list[str] = []
    keywords: list[str] = []
    for v in values:
        (subjects if _DOE_CATEGORY.match(v) else keywords).append(v)
    return subjects, keywords
