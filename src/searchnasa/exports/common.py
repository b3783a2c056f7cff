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


def institution(record: Record) -> str:
    """The organization that issued the work: NASA center, else the research org, else the publisher."""
    for role in ("center", "research", "publisher"):
        for org in record.organizations:
            if org.role == role and org.name and not org.name.startswith("Legacy "):
                return one_line(org.name)
    if record.publication and record.publication.publisher:
        return one_line(record.publication.publisher)
    return ""


def report_number(record: Record) -> str:
    return one_line(record.identifiers.report_numbers[0]) if record.identifiers.report_numbers else ""
