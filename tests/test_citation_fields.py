"""Citations a reference manager takes without edits: every record of the bundled sample (6,514
real NTRS and OSTI records) is written as BibTeX, RIS and CSL-JSON, parsed back by independent
parsers (bibtexparser, rispy, json), and checked against the fields each entry type requires.

The tables below are written from the formats' own documentation, not from the code under test:
BibTeX's from btxdoc ("Entry Types": required fields), RIS's from the RIS specification's tag
list as reference managers read it (a report's publisher is its institution, ``PB``), CSL's from
the CSL-JSON schema's variables. Author and year are required only when the source gives them:
a citation never invents them (NTRS's legacy records name no author).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter

import bibtexparser
import pytest
import rispy

from searchnasa.exports import render
from searchnasa.exports.common import work_type
from searchnasa.ingest.sample import sample_path
from searchnasa.records import Author, Organization, Publication, Record, RecordDate

BIBTEX_REQUIRED: dict[str, set[str]] = {
    "article": {"author", "title", "journal", "year"},
    "book": {"author", "title", "publisher", "year"},
    "inproceedings": {"author", "title", "booktitle", "year"},
    "techreport": {"author", "title", "institution", "year"},
    "phdthesis": {"author", "title", "school", "year"},
    "mastersthesis": {"author", "title", "school", "year"},
    "misc": set(),
}
# rispy's names for the tags: TY type_of_reference, TI title, AU authors, PY year, PB publisher,
# JO journal_name
RIS_REQUIRED: dict[str, set[str]] = {
    "RPRT": {"type_of_reference", "title", "authors", "year", "publisher"},
    "THES": {"type_of_reference", "title", "authors", "year", "publisher"},
    "JOUR": {"type_of_reference", "title", "authors", "year", "journal_name"},
    "CPAPER": {"type_of_reference", "title", "authors", "year"},
    "BOOK": {"type_of_reference", "title", "authors", "year"},
    "DATA": {"type_of_reference", "title", "authors", "year"},
    "GEN": {"type_of_reference", "title", "authors", "year"},
}
CSL_REQUIRED: dict[str, set[str]] = {
    "report": {"type", "title", "author", "issued", "publisher"},
    "thesis": {"type", "title", "author", "issued", "publisher"},
    "article-journal": {"type", "title", "author", "issued", "container-title"},
    "paper-conference": {"type", "title", "author", "issued"},
    "book": {"type", "title", "author", "issued"},
    "dataset": {"type", "title", "author", "issued"},
    "document": {"type", "title", "author", "issued"},
}
# what the source may simply not hold: then the field is not required (never invented)
NOT_INVENTED = {"author": "authors", "year": "year", "authors": "authors", "issued": "year",
                "journal": "journal", "journal_name": "journal", "container-title": "journal",
                "booktitle": "booktitle"}


def _holds(record: Record, what: str) -> bool:
    if what == "authors":
        return bool(record.authors)
    if what == "year":
        return record.year is not None
    if what == "journal":
        return bool(record.publication and record.publication.journal)
    return False  # no record model field holds a proceedings title


def missing_fields(record: Record, required: set[str], present: set[str]) -> set[str]:
    return {f for f in required - present if f not in NOT_INVENTED or _holds(record, NOT_INVENTED[f])}


def assert_required_fields(entries: list[dict], sample: list[Record], required_by_type: dict[str, set[str]],
                           type_key: str) -> None:
    """Every parsed-back entry (RIS or CSL-JSON, one per record, in order) has its type's required
    fields, except those the record has no value for and the writer must not invent."""
    assert [e["id"] for e in entries] == [r.id for r in sample]
    for entry, record in zip(entries, sample):
        required = required_by_type[entry[type_key]]
        assert not missing_fields(record, required, set(entry)), (record.id, required - set(entry))


@pytest.fixture(scope="module")
def sample() -> list[Record]:
    with gzip.open(sample_path(), "rt", encoding="utf-8") as fh:
        records = [Record.model_validate_json(line) for line in fh]
    assert len(records) > 6000
    return records


@pytest.fixture(scope="module")
def bibtex_library(sample: list[Record]) -> bibtexparser.Library:
    return bibtexparser.parse_string(render(sample, "bibtex"))


def test_bibtex_of_every_sample_record_parses_with_its_required_fields(
        sample: list[Record], bibtex_library: bibtexparser.Library) -> None:
    library = bibtex_library
    assert not library.failed_blocks  # unbalanced braces, bad syntax and duplicate keys land here
    assert [e.key for e in library.entries] == [r.id for r in sample]
    types: Counter[str] = Counter()
    for entry, record in zip(library.entries, sample):
        types[entry.entry_type] += 1
        assert entry.entry_type in BIBTEX_REQUIRED, (record.id, entry.entry_type)
        assert not missing_fields(record, BIBTEX_REQUIRED[entry.entry_type], set(entry.fields_dict)), record.id
        if entry.entry_type == "misc" and work_type(record) in ("article", "conference"):
            assert entry["howpublished"] in ("Journal article", "Conference paper"), record.id
    assert types["techreport"] > 5000 and types["article"] > 0 and types["phdthesis"] > 0, types


def test_reports_name_their_institution_and_never_a_collection_marker(
        sample: list[Record], bibtex_library: bibtexparser.Library) -> None:
    library = bibtex_library
    by_id = {r.id: r for r in sample}
    institutions: Counter[str] = Counter()
    for entry in library.entries:
        if entry.entry_type != "techreport":
            continue
        record = by_id[entry.key]
        institution = entry["institution"]
        assert institution and "legacy" not in institution.lower() and "cdms" not in institution.lower(), entry.key
        if record.source == "ntrs":
            institutions[institution] += 1
            assert institution.startswith(("NASA", "National Advisory Committee for Aeronautics")), institution
        if record.identifiers.report_numbers:
            assert entry["number"] == record.identifiers.report_numbers[0]
    # the rule: the center, else a NASA/NACA affiliation, else NACA before 1 October 1958, else NASA
    assert institutions["NASA Glenn Research Center"] > 0 and institutions["NASA"] > 0
    assert institutions["National Advisory Committee for Aeronautics"] > 0


def test_the_named_records(sample: list[Record]) -> None:
    """osti:3002088 is a journal article whose copy here (the osti-cmm-data dump, which drops
    OSTI's ``journal_*`` fields) names no journal: it is @misc "Journal article" with its DOI, not
    an @article without a journal. An OSTI article whose record names the journal is @article with
    it. ntrs:19810053652 (Legacy CDMS, no author or center) is a NASA report."""
    by_id = {r.id: r for r in sample}
    assert by_id["osti:3002088"].publication is None  # the premise: the source copy has no journal
    (misc,) = bibtexparser.parse_string(render([by_id["osti:3002088"]], "bibtex")).entries
    assert misc.entry_type == "misc" and misc["howpublished"] == "Journal article"
    assert misc["doi"] == "10.1016/j.scriptamat.2025.116576"
    (article,) = bibtexparser.parse_string(render([by_id["osti:1442457"]], "bibtex")).entries
    assert article.entry_type == "article" and article["journal"].startswith("Physical Review. D")
    (report,) = bibtexparser.parse_string(render([by_id["ntrs:19810053652"]], "bibtex")).entries
    assert report.entry_type == "techreport" and report["institution"] == "NASA"
    ris = rispy.loads(render([by_id["osti:3002088"]], "ris"))[0]
    assert ris["type_of_reference"] == "JOUR" and ris["doi"] == "10.1016/j.scriptamat.2025.116576"


def test_ris_of_every_sample_record_parses_with_its_required_fields(sample: list[Record]) -> None:
    entries = rispy.loads(render(sample, "ris"))
    assert_required_fields(entries, sample, RIS_REQUIRED, "type_of_reference")
    for entry in entries:
        if entry["type_of_reference"] == "RPRT":
            assert "legacy" not in entry["publisher"].lower()


def test_csl_json_of_every_sample_record_has_its_required_fields(sample: list[Record]) -> None:
    assert_required_fields(json.loads(render(sample, "csl-json")), sample, CSL_REQUIRED, "type")


@pytest.mark.parametrize(("center", "affiliation", "date", "expected"), [
    ("Langley Research Center", None, "1990", "NASA Langley Research Center"),
    ("Legacy CDMS", "NASA Ames Research Center", "1975-02", "NASA Ames Research Center"),
    ("Legacy CDMS", "Boeing Co.", "1975", "NASA"),
    ("Legacy CDMS", None, "1950-06-01", "National Advisory Committee for Aeronautics"),
    ("Legacy CDMS", None, "1958-09-30", "National Advisory Committee for Aeronautics"),
    ("Legacy CDMS", None, "1958-10-01", "NASA"),
    (None, "National Advisory Committee for Aeronautics. Lewis Flight Propulsion Lab.", "1952",
     "National Advisory Committee for Aeronautics. Lewis Flight Propulsion Lab."),
    (None, None, None, "NASA"),
])
def test_ntrs_institution_rule(center: str | None, affiliation: str | None, date: str | None,
                               expected: str) -> None:
    """SYNTHETIC records, one per step of the documented rule."""
    precision = {4: "year", 7: "month", 10: "day"}
    record = Record(
        id="ntrs:1", source="ntrs", source_id="1", title="SYNTHETIC report",
        authors=[Author(name="Doe, J.", affiliation=affiliation)],
        organizations=[Organization(name=center, role="center")] if center else [],
        date=RecordDate(value=date, kind="published", precision=precision[len(date)]) if date else None,
        year=int(date[:4]) if date else None)
    (entry,) = bibtexparser.parse_string(render([record], "bibtex")).entries
    assert entry.entry_type == "techreport" and entry["institution"] == expected


def test_a_conference_paper_without_its_proceedings_is_misc() -> None:
    """SYNTHETIC: BibTeX's @inproceedings requires the proceedings' title, which no record holds."""
    record = Record(id="osti:1", source="osti", source_id="1", title="SYNTHETIC paper",
                    document_type="Conference", authors=[Author(name="Doe, J.")],
                    publication=Publication(publisher="SYNTHETIC Society"))
    (entry,) = bibtexparser.parse_string(render([record], "bibtex")).entries
    assert entry.entry_type == "misc" and entry["howpublished"] == "Conference paper"
    assert rispy.loads(render([record], "ris"))[0]["type_of_reference"] == "CPAPER"
