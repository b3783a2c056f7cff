"""Citations out, parsed back by independent parsers: bibtexparser (v2, LaTeX decoded by
pylatexenc), rispy, json and csv. Real sample records whose titles hold LaTeX specials and
non-ASCII names, plus synthetic records (labelled SYNTHETIC) that pack every special together."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import bibtexparser
import pytest
import rispy
from bibtexparser.middlewares import LatexDecodingMiddleware, SeparateCoAuthors
from pylatexenc.latex2text import LatexNodes2Text

from searchnasa.exports import FORMATS, get_format, render, write
from searchnasa.exports.common import one_line, split_name, work_type
from searchnasa.errors import BadInput
from searchnasa.records import Author, Identifiers, Record, RecordDate
from searchnasa.store import open_store

# Real sample records chosen for their titles/names: & % _ { } $ \ # and accented/non-Latin text.
REAL_IDS = [
    "ntrs:sti-6c5ac36c993e6ecc",  # R&D of Accelerator Structures at SLAC
    "ntrs:19810068620",           # ... 100% ... (percent sign)
    "osti:3002493",               # Fernández-Domínguez
    "osti:3003006",               # Wiedemann–Franz (en dash)
    "osti:2574845",               # FOA_2364_CORE-CM_data
    "osti:2566969",               # CeO2-δ{100}
    "osti:2587429",               # spin-$\frac{1}{2}$ and math italic letters
    "osti:2386888",               # Live #8876
    "osti:1442457",               # Milinčić, Miočinović
]


def synthetic_records() -> list[Record]:
    """SYNTHETIC records (not real works): every LaTeX special and hard names in one place."""
    return [
        Record(id="ntrs:synthetic-1", source="ntrs", source_id="synthetic-1",
               title="SYNTHETIC {Braces} & 100% of $x_1^2$ #3 ~ tilde \\ backslash}{",
               abstract="SYNTHETIC abstract with a\nnewline, a tab\tand 50% & more {",
               authors=[Author(name="Ångström, Jöns"), Author(name="Nguyễn Thị Hà"),
                        Author(name="Smith and Sons Laboratory")],
               date=RecordDate(value="1985-03", kind="published", precision="month"), year=1985,
               document_type="TECHNICAL_MEMORANDUM",
               identifiers=Identifiers(doi="10.9999/synthetic_{1}", report_numbers=["NASA-TM-85_%1"])),
        Record(id="osti:synthetic-2", source="osti", source_id="synthetic-2",
               title="SYNTHETIC Ünïcödé ≥ 5 σ — 東京 “quoted” title", document_type="Journal Article"),
    ]


@pytest.fixture(scope="module")
def records(sample_home: Path) -> list[Record]:
    store = open_store(sample_home, readonly=True)
    found = store.get_many(REAL_IDS)
    store.close()
    assert set(found) == set(REAL_IDS)
    return [found[i] for i in REAL_IDS] + synthetic_records()


def _decoded(value: str) -> str:
    """pylatexenc renders ``\\textasciicircum{}`` (the standard LaTeX escape of ``^``) as U+02C6."""
    return value.replace("\u02c6", "^")


def test_bibtex_round_trips_through_bibtexparser(records: list[Record]) -> None:
    text = render(records, "bibtex")
    library = bibtexparser.parse_string(
        text, append_middleware=[SeparateCoAuthors(), LatexDecodingMiddleware()])
    assert not library.failed_blocks
    assert len(library.entries) == len(records)
    for entry, record in zip(library.entries, records):
        assert entry.key == record.id
        assert _decoded(entry["title"]) == one_line(record.title)
        if record.authors:
            expected = [split_name(a.name).display for a in record.authors]
            # split at brace level 0 by bibtexparser, each name decoded by pylatexenc
            assert [LatexNodes2Text().latex_to_text(n) for n in entry["author"]] == expected
        if record.identifiers.doi:
            assert entry["doi"] == record.identifiers.doi
    synthetic = library.entries[-2]
    assert synthetic.entry_type == "techreport"
    assert synthetic["number"] == "NASA-TM-85_%1"
    assert synthetic["abstract"] == "SYNTHETIC abstract with a newline, a tab and 50% & more {"
    assert (synthetic["year"], synthetic["month"]) == ("1985", "3")


def test_bibtex_escapes_every_special() -> None:
    text = render(synthetic_records()[:1], "bibtex")
    title_line = next(line for line in text.splitlines() if line.strip().startswith("title"))
    assert r"\{Braces\} \& 100\% of \$x\_1\textasciicircum{}2\$ \#3 \textasciitilde{} tilde" in title_line
    assert r"\textbackslash{} backslash\}\{" in title_line
    assert "{Smith and Sons Laboratory}" in text  # braced, so BibTeX does not split it in two
    assert "Ångström, Jöns" in text  # UTF-8 kept


def test_ris_round_trips_through_rispy(records: list[Record]) -> None:
    text = render(records, "ris")
    entries = rispy.loads(text)
    assert len(entries) == len(records)
    for entry, record in zip(entries, records):
        assert entry["title"] == one_line(record.title)
        assert entry["id"] == record.id
        assert entry.get("authors", []) == [split_name(a.name).display for a in record.authors]
        if record.year:
            assert entry["year"] == str(record.year)
        if record.identifiers.doi:
            assert entry["doi"] == record.identifiers.doi
        if record.url:
            assert entry["urls"] == [record.url]
    assert entries[-2]["type_of_reference"] == "RPRT" and entries[-1]["type_of_reference"] == "JOUR"
    assert entries[-2]["date"] == "1985/03//"


def test_csl_json_round_trips(records: list[Record]) -> None:
    items = json.loads(render(records, "csl-json"))
    assert [i["id"] for i in items] == [r.id for r in records]
    for item, record in zip(items, records):
        assert item["title"] == one_line(record.title)
    fd = next(i for i in items if i["id"] == "osti:3002493")
    assert {"family": "Fernández-Domínguez", "given": "Antonio I."} in fd["author"]
    syn = items[-2]
    assert syn["author"][0] == {"family": "Ångström", "given": "Jöns"}
    assert syn["author"][2] == {"literal": "Smith and Sons Laboratory"}
    assert syn["issued"] == {"date-parts": [[1985, 3]]} and syn["type"] == "report"
    assert json.loads(render([], "csl-json")) == []


def test_csv_round_trips(records: list[Record]) -> None:
    rows = list(csv.DictReader(io.StringIO(render(records, "csv"), newline="")))
    assert len(rows) == len(records)
    for row, record in zip(rows, records):
        assert row["id"] == record.id
        assert row["title"] == one_line(record.title)
        assert row["doi"] == (record.identifiers.doi or "")
        assert row["authors"].split("; ") == ([split_name(a.name).display for a in record.authors] or [""])


def test_write_streams_one_record_at_a_time(records: list[Record]) -> None:
    pulled: list[str] = []

    def source() -> Iterator[Record]:
        for r in records:
            pulled.append(r.id)
            yield r

    for fmt in FORMATS:
        pulled.clear()
        pieces = write(source(), fmt)
        next(pieces)
        if fmt in ("csv", "csl-json"):
            next(pieces)  # the header / opening bracket comes first
        assert len(pulled) == 1, fmt
        rest = "".join(pieces)
        assert len(pulled) == len(records) and rest


def test_unknown_format_is_bad_input() -> None:
    with pytest.raises(BadInput, match="unknown citation format"):
        list(write([], "endnote"))
    assert get_format("BIB").name == "bibtex" and get_format("json").name == "csl-json"
    assert get_format("ris").media_type.startswith("application/x-research-info-systems")


@pytest.mark.parametrize("doc_type, source, expected", [
    ("Journal Article", "osti", "article"), ("Technical Report", "osti", "report"),
    ("CONFERENCE_PAPER", "ntrs", "conference"), ("Thesis/Dissertation", "osti", "thesis"),
    ("Dataset", "osti", "dataset"), (None, "ntrs", "report"), (None, "osti", "other"),
])
def test_work_types(doc_type: str | None, source: str, expected: str) -> None:
    r = Record(id=f"{source}:x", source=source, source_id="x", title="t", document_type=doc_type)  # type: ignore[arg-type]
    assert work_type(r) == expected


def test_csv_cells_that_spreadsheets_would_run_are_made_inert() -> None:
    """Harvested text is untrusted: a title like ``=HYPERLINK(...)`` must reach a spreadsheet as text."""
    hostile = Record(id="osti:1", source="osti", source_id="1", title='=HYPERLINK("http://x.invalid","click")',
                     abstract="@SUM(A1:A9) and more", subjects=["+cmd|' /C calc'!A0"])  # type: ignore[arg-type]
    plain = Record(id="osti:2", source="osti", source_id="2", title="Wind tunnel = test", abstract="a - b")  # type: ignore[arg-type]
    rows = list(csv.DictReader(io.StringIO(render([hostile, plain], "csv"), newline="")))
    assert rows[0]["title"] == "'" + hostile.title
    assert rows[0]["abstract"] == "'@SUM(A1:A9) and more"
    assert rows[0]["subjects"].startswith("'+cmd")
    assert rows[1]["title"] == "Wind tunnel = test" and rows[1]["abstract"] == "a - b"
    assert rows[0]["id"] == "osti:1"
