"""What every citation format needs from a Record: the kind of work, split author names, dates and
the publisher, decided once so BibTeX, RIS, CSL-JSON and CSV always agree."""

from __future__ import annotations

import re
from dataclasses import dataclass

from searchnasa.records import Record

_SPACES = re.compile(r"\s+")
# Control characters other than tab/newline break every format (XML, BibTeX, RIS lines).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# The work types the formats share: (BibTeX entry type, RIS TY, CSL type).
WORK_TYPES: dict[str, tuple[str, str, str]] = {
    "article": ("article", "JOUR", "article-journal"),
    "report": ("techreport", "RPRT", "report"),
    "conference": ("inproceedings", "CPAPER", "paper-conference"),
    "thesis": ("phdthesis", "THES", "thesis"),
    "book": ("book", "BOOK", "book"),
    "dataset": ("misc", "DATA", "dataset"),
    "other": ("misc", "GEN", "document"),
}


def one_line(text: str | None) -> str:
    """Collapse whitespace and drop control characters: every field is written on one line."""
    if not text:
        return ""
    return _SPACES.sub(" ", _CONTROL.sub(" ", text)).strip()


def work_type(record: Record) -> str:
    """Map NTRS STI types and OSTI product types onto the shared work types above."""
    t = (record.document_type or "").upper().replace("/", " ").replace("_", " ")
    if "JOURNAL" in t or t in ("REPRINT", "ACCEPTED MANUSCRIPT", "PREPRINT"):
        return "article"
    if "CONFERENCE" in t or "MEETING" in t or t in ("PRESENTATION", "POSTER"):
        return "conference"
    if "THESIS" in t or "DISSERTATION" in t:
        return "thesis"
    if t in ("BOOK", "BOOK CHAPTER"):
        return "book"
    if "DATASET" in t or t == "DATA":
        return "dataset"
    if "REPORT" in t or "MEMORANDUM" in t or "PUBLICATION" in t or "TRANSLATION" in t:
        return "report"
    if record.source == "ntrs" or record.identifiers.report_numbers:
        return "report"  # NTRS is a report server; untyped legacy records are reports
    return "other"


@dataclass(frozen=True)
class Name:
    """A person (family, given) or an organization written as one literal name."""

    family: str
    given: str = ""
    literal: bool = False

    @property
    def display(self) -> str:
        if self.literal or not self.given:
            return self.family
        return f"{self.family}, {self.given}"


_ORG_WORDS = re.compile(r"\b(laboratory|university|univ|center|centre|institute|agency|administration|"
                        r"corporation|corp|inc|company|department|office|nasa|team|collaboration)\b", re.I)


def split_name(name: str) -> Name:
    """``Gorham, P. W.`` -> family Gorham, given P. W.; ``Peter W. Gorham`` -> the same split;
    ``NASA Langley Research Center`` -> one literal name (never reversed into "Center, NASA")."""
    name = one_line(name)
    if "," in name:
        family, given = (p.strip() for p in name.split(",", 1))
        if family and given:
            return Name(family, given)
        return Name(family or given, literal=True)
    if _ORG_WORDS.search(name):
        return Name(name, literal=True)
    parts = name.split()
    if len(parts) < 2:
        return Name(name, literal=True)
    return Name(parts[-1], " ".join(parts[:-1]))


def authors(record: Record) -> list[Name]:
    return [split_name(a.name) for a in record.authors if one_line(a.name)]


def date_parts(record: Record) -> list[int]:
    """``[year]``, ``[year, month]`` or ``[year, month, day]`` as precise as the source said."""
    if record.date is None:
        return [record.year] if record.year else []
    parts = [int(p) for p in record.date.value.split("-")[:3] if p.isdigit()]
    size = {"year": 1, "month": 2, "day": 3}[record.date.precision]
    return parts[:size]


# A collection marker, not an organization: NTRS files its legacy (pre-2000s CDMS) holdings under
# the "center" CDMS, which the mappers keep as "Legacy CDMS". It never issued anything.
_COLLECTION_MARKER = re.compile(r"^(legacy\b|cdms$)", re.I)
_NASA_OR_NACA = re.compile(r"\bNASA\b|National Aeronautics and Space|\bNACA\b|"
                           r"National Advisory Committee for Aeronautics", re.I)
NASA = "NASA"
NACA = "National Advisory Committee for Aeronautics"
NASA_FOUNDED = "1958-10-01"  # NACA's laboratories became NASA's centers on this day


def _organizations(record: Record, role: str) -> list[str]:
    return [one_line(o.name) for o in record.organizations
            if o.role == role and one_line(o.name) and not _COLLECTION_MARKER.match(one_line(o.name))]


def _affiliations(record: Record) -> list[str]:
    return [one_line(a.affiliation) for a in record.authors if one_line(a.affiliation)]


def ntrs_institution(record: Record) -> str:
    """Who issued an NTRS report: its NASA center (``NASA`` prefixed where the name lacks it), else
    the first author affiliation naming NASA or NACA, else NACA for a work dated before NASA
    existed (1 October 1958), else NASA. Never the "Legacy CDMS" collection marker."""
    centers = _organizations(record, "center")
    if centers:
        return centers[0] if _NASA_OR_NACA.search(centers[0]) else f"{NASA} {centers[0]}"
    agency = [name for name in _affiliations(record) + _organizations(record, "affiliation")
              if _NASA_OR_NACA.search(name)]
    if agency:
        return agency[0]
    when = record.date.value if record.date else (str(record.year) if record.year else "")
    return NACA if when and when < NASA_FOUNDED[: len(when)] else NASA


def osti_institution(record: Record) -> str:
    """Who issued an OSTI work: the research organization, else the first author affiliation, else
    the sponsor, else the publisher, else the U.S. Department of Energy, whose office (OSTI)
    catalogues only work it funded or published."""
    for names in (_organizations(record, "research"), _affiliations(record), _organizations(record, "sponsor"),
                  _organizations(record, "publisher")):
        if names:
            return names[0]
    if record.publication and one_line(record.publication.publisher):
        return one_line(record.publication.publisher)
    return "U.S. Department of Energy"


def institution(record: Record) -> str:
    """The organization that issued the work (a report's institution, a thesis's school when the
    author's affiliation is unknown, a report's RIS/CSL publisher): one rule per source."""
    return ntrs_institution(record) if record.source == "ntrs" else osti_institution(record)


def school(record: Record) -> str:
    """Where a thesis was written: the author's affiliation when given, else :func:`institution`."""
    affiliations = _affiliations(record)
    return affiliations[0] if affiliations else institution(record)


def publisher_of(record: Record, kind: str) -> str:
    """RIS ``PB`` and CSL ``publisher``: a report's institution, a thesis's school, else the
    publisher the source names (empty when it names none)."""
    if kind == "report":
        return institution(record)
    if kind == "thesis":
        return school(record)
    return one_line(record.publication.publisher) if record.publication else ""


def report_number(record: Record) -> str:
    return one_line(record.identifiers.report_numbers[0]) if record.identifiers.report_numbers else ""
