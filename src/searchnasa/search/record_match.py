"""What two records share, as related papers judge it: the same work stored twice, a report
series, the organizations behind the work."""

from __future__ import annotations

import re

from searchnasa.records import Record

DUPLICATE_COSINE = 0.985  # a candidate this close in meaning to the lone seed is the same work


def _norm_title(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", (title or "").lower()).strip()


def is_duplicate(a: Record, b: Record, cosine: float | None = None) -> bool:
    """The same work stored twice (across sources, or twice in one): never 'related' to itself."""
    if a.id == b.id:
        return True
    if a.identifiers.doi and a.identifiers.doi == b.identifiers.doi:
        return True
    ta, tb = _norm_title(a.title), _norm_title(b.title)
    if ta and ta == tb and len(ta) >= 12:
        if not a.abstract or not b.abstract or _norm_title(a.abstract)[:200] == _norm_title(b.abstract)[:200]:
            return True
        if cosine is not None and cosine >= 0.95:
            return True
    return cosine is not None and cosine >= DUPLICATE_COSINE


def report_series(record: Record) -> set[str]:
    """Report-number prefixes such as ``NASA-TM`` or ``SAND``: a series a reader follows."""
    out = set()
    for num in record.identifiers.report_numbers:
        m = re.match(r"([A-Za-z]+(?:[-/ ][A-Za-z]+)*)", num.strip())
        if m and len(m.group(1)) >= 3:
            out.add(m.group(1).upper().replace(" ", "-"))
    return out


def organizations_behind(record: Record) -> set[str]:
    """The organizations that did or paid for the work (not publishers or distributors)."""
    return {o.name for o in record.organizations if o.role in ("center", "research", "sponsor")}
