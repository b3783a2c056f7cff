"""Recognize an identifier typed alone in the search box (DOI, NTRS or OSTI id, report number).

Recognition only says what the text could be; the service then checks the index, so a number that
is not a record id is still searched as words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

_DOI_RE = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)$", re.I)
_PREFIXED_RE = re.compile(r"^(ntrs|osti)\s*:\s*(\d+)$", re.I)
_NTRS_URL_RE = re.compile(r"^https?://ntrs\.nasa\.gov/(?:api/)?citations/(\d+)\S*$", re.I)
_OSTI_URL_RE = re.compile(r"^https?://(?:www\.)?osti\.gov/(?:biblio|servlets/purl|pages/biblio|dataexplorer/biblio/dataset)/(\d+)\S*$", re.I)
_NUMBER_RE = re.compile(r"^\d{5,12}$")
# report numbers look like NASA-TM-X-1234, NACA-RM-A51A03, SAND2019-1234: letters, digits, hyphens
_REPORT_RE = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9][A-Za-z0-9./_]*(?:-[A-Za-z0-9./_]+)+$")


@dataclass(frozen=True)
class IdentifierGuess:
    """What the text may identify: ``ids`` are candidate record ids, ``values`` identifier strings."""

    kind: str  # doi | record | number | report
    text: str
    ids: tuple[str, ...] = ()
    values: tuple[str, ...] = ()

    @property
    def confident(self) -> bool:
        """Whether a miss deserves a notice (a report-number-like word may just be a word)."""
        return self.kind != "report"


def recognize(text: str) -> IdentifierGuess | None:
    """Classify ``text`` when it is one identifier and nothing else; None otherwise."""
    t = (text or "").strip()
    if not t or len(t) > 300:
        return None
    m = _DOI_RE.match(t)
    if m:
        doi = unquote(m.group(1)).rstrip(".,;").lower()
        return IdentifierGuess("doi", t, values=(doi,))
    m = _PREFIXED_RE.match(t)
    if m:
        return IdentifierGuess("record", t, ids=(f"{m.group(1).lower()}:{m.group(2)}",))
    m = _NTRS_URL_RE.match(t)
    if m:
        return IdentifierGuess("record", t, ids=(f"ntrs:{m.group(1)}",))
    m = _OSTI_URL_RE.match(t)
    if m:
        return IdentifierGuess("record", t, ids=(f"osti:{m.group(1)}",))
    if _NUMBER_RE.match(t):
        return IdentifierGuess("number", t, ids=(f"ntrs:{t}", f"osti:{t}"))
    if " " not in t and _REPORT_RE.match(t):
        return IdentifierGuess("report", t, values=(t.lower(),))
    return None
