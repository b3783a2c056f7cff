"""Citations out: BibTeX, RIS, CSL-JSON and CSV for one record, a selection or a whole result set.

:func:`write` is the one entry point. It takes any iterable of records and yields text pieces, one
record at a time, so a web response or a file can stream a thousand records without ever holding
them all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from searchnasa.errors import BadInput
from searchnasa.records import Record
from searchnasa.exports import bibtex, csl, csv_out, ris


@dataclass(frozen=True)
class CitationFormat:
    name: str
    media_type: str
    extension: str


FORMATS: dict[str, CitationFormat] = {
    "bibtex": CitationFormat("bibtex", "application/x-bibtex; charset=utf-8", "bib"),
    "ris": CitationFormat("ris", "application/x-research-info-systems; charset=utf-8", "ris"),
    "csl-json": CitationFormat("csl-json", "application/vnd.citationstyles.csl+json; charset=utf-8", "json"),
    "csv": CitationFormat("csv", "text/csv; charset=utf-8", "csv"),
}


def get_format(name: str) -> CitationFormat:
    """The format called ``name`` (case-insensitive; ``bib`` and ``json`` accepted), else BadInput."""
    key = (name or "").strip().lower()
    key = {"bib": "bibtex", "json": "csl-json", "csljson": "csl-json", "csl": "csl-json"}.get(key, key)
    if key not in FORMATS:
        raise BadInput(f"unknown citation format {name!r}; use one of: {', '.join(FORMATS)}")
    return FORMATS[key]


def write(records: Iterable[Record], format: str) -> Iterator[str]:
    """Yield the citations of ``records`` in ``format``, piece by piece (see module docstring)."""
    fmt = get_format(format).name
    if fmt == "csl-json":
        yield "["
        first = True
        for record in records:
            yield ("\n" if first else ",\n") + csl.entry(record)
            first = False
        yield "\n]\n" if not first else "]\n"
        return
    if fmt == "csv":
        yield csv_out.header()
        for record in records:
            yield csv_out.entry(record)
        return
    module = bibtex if fmt == "bibtex" else ris
    for record in records:
        yield module.entry(record)


def render(records: Iterable[Record], format: str) -> str:
    """The whole text at once (one record, a small selection, the CLI)."""
    return "".join(write(records, format))


def filename(stem: str, format: str) -> str:
    return f"{stem}.{get_format(format).extension}"


__all__ = ["FORMATS", "CitationFormat", "filename", "get_format", "render", "write"]
