"""NTRS field mappings, each checked on a real record from ``shared/data/raw/ntrs-*``.

Where the raw files hold no example of a documented case (``"Report Number: "`` prefixes, CHORUS
journal metadata), the test edits a *copy* of a real item and says so; nothing is invented whole.
"""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import pytest

from searchnasa.errors import FormatError
from searchnasa.ingest.formats import map_item
from searchnasa.ingest.ntrs import sti_export_id


@pytest.fixture(scope="module")
def ui_items(raw_dir: Path) -> dict[int, dict]:
    doc = json.loads((raw_dir / "ntrs-nasa-ui" / "search-response.json").read_text(encoding="utf-8"))
    return {item["id"]: item for item in doc["results"]}


@pytest.fixture(scope="module")
def tacoma_items(raw_dir: Path) -> dict[int, dict]:
    doc = json.loads((raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json").read_text(encoding="utf-8"))
    return {item["id"]: item for item in doc[0]}


@pytest.fixture(scope="module")
def csv_rows(raw_dir: Path) -> dict[str, dict]:
    path = raw_dir / "ntrs-word-space-explorer" / "ntrs_cdms_results.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        return {row["document_id"]: row for row in csv.DictReader(fh)}


@pytest.fixture(scope="module")
def sti_lines(raw_dir: Path) -> list[dict]:
    path = raw_dir / "ntrs-sti-sample100" / "STI_public_metadata_records_sample100.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_relative_download_links_become_absolute(ui_items: dict[int, dict]) -> None:
    raw = ui_items[19770084252]
    assert raw["downloads"][0]["links"]["pdf"] == "/api/citations/19770084252/downloads/19770084252.pdf"
    rec = map_item("ntrs-api", raw)
    assert rec.links.pdf == "https://ntrs.nasa.gov/api/citations/19770084252/downloads/19770084252.pdf"
    assert rec.links.fulltext == "https://ntrs.nasa.gov/api/citations/19770084252/downloads/19770084252.txt"
    assert rec.links.landing == "https://ntrs.nasa.gov/citations/19770084252"
    assert rec.url == rec.links.landing
    for item in ui_items.values():
        links = map_item("ntrs-api", item).links
        for link in (links.landing, links.pdf, links.fulltext, *links.other):
            assert link is None or link.startswith("https://ntrs.nasa.gov/"), link


def test_citation_fields(ui_items: dict[int, dict]) -> None:
    rec = map_item("ntrs-api", ui_items[19770084252])
    assert rec.id == "ntrs:19770084252" and rec.source_id == "19770084252" and rec.kind == "citation"
    assert rec.title == "Supercritical Wing Technology: A Progress Report on Flight Evaluations"
    assert rec.abstract.startswith("The papers in this compilation were presented at the NASA Symposium")
    assert rec.document_type == "SPECIAL_PUBLICATION"
    assert rec.document_type_label == "Special Publication (SP)"
    assert rec.subjects == ["Aerodynamics"]
    assert rec.organizations[0].name == "Armstrong Flight Research Center"
    assert rec.organizations[0].role == "center"
    assert rec.identifiers.report_numbers == ["NASA-SP-301", "C72-71337"]
    assert "ntrs:19770084253" in rec.related_ids
    assert rec.publication is not None
    assert rec.publication.publisher == "National Aeronautics and Space Administration"


def test_dates_keep_kind_and_precision(ui_items: dict[int, dict]) -> None:
    rec = map_item("ntrs-api", ui_items[19770084252])
    # publications[0].publicationDate "1972-02-29T00:00:00.0000000+00:00" (7 fractional digits).
    assert rec.date is not None
    assert (rec.date.value, rec.date.kind, rec.date.precision) == ("1972-02-29", "published", "day")
    assert rec.year == 1972
    kinds = {d.kind: d.value for d in rec.dates}
    assert kinds == {"published": "1972-02-29", "created": "2013-08-09", "distributed": "2019-06-20",
                     "modified": "2015-12-09"}


def test_rights_fields_kept(ui_items: dict[int, dict], tacoma_items: dict[int, dict]) -> None:
    rec = map_item("ntrs-api", ui_items[19770084252])
    assert rec.rights.copyright_determination == "GOV_PUBLIC_USE_PERMITTED"
    assert rec.rights.license_type == "NO"
    assert rec.rights.distribution == "PUBLIC"
    assert rec.rights.export_control == "NO"
    assert rec.rights.availability == "DOCUMENT_AND_METADATA"
    other = map_item("ntrs-api", ui_items[19920075361])
    assert other.rights.copyright_determination == "PUBLIC_USE_PERMITTED"
    io = map_item("ntrs-api", tacoma_items[19840031406])
    assert io.rights.copyright_determination == "OTHER"


def test_export_control_flags(ui_items: dict[int, dict]) -> None:
    # Edited copy of a real item: the raw files only hold items that are not export controlled.
    item = copy.deepcopy(ui_items[19770084252])
    item["exportControl"] = {"isExportControl": "YES", "ear": "NO", "itar": "YES"}
    assert map_item("ntrs-api", item).rights.export_control == "ITAR"


def test_report_number_prefix_is_stripped_and_repeats_dropped(ui_items: dict[int, dict]) -> None:
    # Edited copy of a real item: SOURCES.md says otherReportNumbers may repeat entries with a
    # "Report Number: " prefix; no raw file here shows it, so the prefixed repeat is added.
    item = copy.deepcopy(ui_items[19930086518])
    assert item["otherReportNumbers"] == ["NACA-RM-A51A03"]
    item["otherReportNumbers"] = ["NACA-RM-A51A03", "Report Number: NACA-RM-A51A03", "report number:  X-17"]
    rec = map_item("ntrs-api", item)
    assert rec.identifiers.report_numbers == ["NACA-RM-A51A03", "X-17"]


def test_authors_with_affiliations_in_sequence(tacoma_items: dict[int, dict]) -> None:
    rec = map_item("ntrs-api", tacoma_items[19870036046])
    assert [a.name for a in rec.authors] == [
        "Nash, Douglas B.", "Yoder, Charles F.", "Carr, Michael H.", "Gradie, Jonathan", "Hunten, Donald M."]
    assert rec.authors[2].affiliation == "USGS"
    assert ("affiliation", "Cornell University") in {(o.role, o.name) for o in rec.organizations}
    io = map_item("ntrs-api", tacoma_items[19840031406])
    assert io.title == "Io"
    assert io.publication is not None and io.publication.journal == "Scientific American"
    assert io.publication.issn == "0036-8733"
    assert io.links.pdf is None  # downloads: [] -> no PDF link, not a made-up one


def test_ntrs_orcid_formatted(tacoma_items: dict[int, dict]) -> None:
    # Edited copy of a real item: the raw NTRS files carry no orcidId; the API gives bare digits.
    item = copy.deepcopy(tacoma_items[19840031406])
    item["authorAffiliations"][0]["meta"]["author"]["orcidId"] = "0000000249820865"
    rec = map_item("ntrs-api", item)
    assert rec.authors[0].orcid == "0000-0002-4982-0865"
    assert rec.authors[1].orcid is None


def test_chorus_journal_metadata(tacoma_items: dict[int, dict]) -> None:
    # Edited copy of a real item, shaped as SOURCES.md describes CHORUS journal metadata: a 14-digit
    # string id, a chorus-* index, no copyright block and an empty downloads list.
    item = copy.deepcopy(tacoma_items[19840031406])
    item.update(id="20230001234567", index="chorus-2023-01-01-00-00", downloads=[])
    item.pop("copyright")
    item["publications"][0]["doi"] = "https://doi.org/10.1038/Scientificamerican1283-56"
    rec = map_item("ntrs-api", item)
    assert rec.kind == "journal_metadata"
    assert rec.id == "ntrs:20230001234567"
    assert rec.identifiers.doi == "10.1038/scientificamerican1283-56"
    assert rec.rights.copyright_determination is None
    assert rec.links.pdf is None
    # A string id alone (older responses have no index) also marks journal metadata ...
    older = copy.deepcopy(item)
    older.pop("index")
    assert map_item("ntrs-api", older).kind == "journal_metadata"
    # ... but a native item keeps kind citation even if a tool wrote its id as a string.
    native = copy.deepcopy(tacoma_items[19840031406])
    native["id"] = "19840031406"
    assert map_item("ntrs-api", native).kind == "citation"
    assert map_item("ntrs-api", tacoma_items[19840031406]).kind == "citation"


def test_csv_row_mapping(csv_rows: dict[str, dict]) -> None:
    row = csv_rows["19810002806"]
    rec = map_item("ntrs-csv", row)
    assert rec.id == "ntrs:19810002806"
    assert rec.title.startswith("User's design handbook for a Standardized Control Module (SCM)")
    assert rec.subjects == ["ELECTRONICS AND ELECTRICAL ENGINEERING"]
    assert rec.date is not None and rec.date.value == row["publicationDate"] and rec.date.precision == "day"
    assert rec.year == int(row["publicationDate"][:4])
    assert rec.rights.copyright_determination == "GOV_PUBLIC_USE_PERMITTED"
    assert rec.organizations == []  # CDMS is the legacy collection, not an organization
    if row["downloads_pdf_url"]:
        assert rec.links.pdf == "https://ntrs.nasa.gov" + row["downloads_pdf_url"]


def test_record_without_date_has_null_year(csv_rows: dict[str, dict]) -> None:
    row = csv_rows["19650002810"]
    assert row["publicationDate"] == "" and row["createDate"] == "2013-08-02"
    rec = map_item("ntrs-csv", row)
    assert rec.year is None and rec.date is None  # never the created date passed off as publication
    assert [(d.kind, d.value) for d in rec.dates] == [("created", "2013-08-02")]
    assert rec.links.pdf == "https://ntrs.nasa.gov/api/citations/19650002810/downloads/19650002810.pdf"


def test_csv_related_ids(csv_rows: dict[str, dict]) -> None:
    row = next(r for r in csv_rows.values() if "," in r["related"])
    rec = map_item("ntrs-csv", row)
    expected = [f"ntrs:{x.strip()}" for x in row["related"].split(",") if x.strip()]
    assert rec.related_ids == expected


def test_sti_export_has_stable_derived_id(sti_lines: list[dict]) -> None:
    first = sti_lines[0]
    rec = map_item("sti-jsonl", first)
    assert rec.kind == "export" and rec.source == "ntrs"
    assert rec.id == f"ntrs:{sti_export_id(first)}" and rec.source_id.startswith("sti-")
    assert map_item("sti-jsonl", copy.deepcopy(first)).id == rec.id  # same content, same id
    assert rec.title == first["D245A (Title)"].strip()
    assert rec.year is None and rec.date is None and rec.authors == []
    assert rec.links.landing is None and rec.url is None
    assert rec.keywords  # NASA thesaurus terms kept as keywords
    ids = {map_item("sti-jsonl", line).id for line in sti_lines}
    assert len(ids) == len(sti_lines) == 100


def test_missing_id_is_a_format_error(ui_items: dict[int, dict]) -> None:
    item = copy.deepcopy(ui_items[19770084252])
    item.pop("id")
    with pytest.raises(FormatError, match="without an id"):
        map_item("ntrs-api", item)
    with pytest.raises(FormatError, match="document_id"):
        map_item("ntrs-csv", {"title": "x"})
    with pytest.raises(FormatError, match="unknown format"):
        map_item("nope", {})
