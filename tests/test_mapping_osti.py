"""OSTI field mappings, each checked on a real record from ``shared/data/raw/osti-*``.

The expected values are read off the raw files by hand (quoted in the asserts), so a mapper change
that alters what users see fails here.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from searchnasa.records import Record
from searchnasa.ingest.formats import map_item
from searchnasa.ingest.text import clean_text, parse_osti_author

TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:]*[^>]*>")
ENTITY = re.compile(r"&(?:#\d+|#x[0-9a-fA-F]+|[A-Za-z]+);")


def _osti_items(path: Path) -> dict[str, dict]:
    return {str(item["osti_id"]): item for item in json.loads(path.read_text(encoding="utf-8"))}


@pytest.fixture(scope="module")
def hepcrawl(raw_dir: Path) -> dict[str, dict]:
    items: dict[str, dict] = {}
    for path in sorted((raw_dir / "osti-hepcrawl").glob("*.json")):
        items.update(_osti_items(path))
    return items


@pytest.fixture(scope="module")
def pppl(raw_dir: Path) -> dict[str, dict]:
    return _osti_items(raw_dir / "osti-dspace-pppl" / "osti_scrape.json")


@pytest.fixture(scope="module")
def cmm(raw_dir: Path) -> dict[str, dict]:
    return _osti_items(raw_dir / "osti-cmm-data" / "document_catalog.json")


def test_sub_sup_markup_becomes_plain_text(hepcrawl: dict[str, dict]) -> None:
    raw = hepcrawl["1442851"]
    assert "E<sub>μ</sub>" in raw["description"]  # the raw text really carries the markup
    rec = map_item("osti-api", raw)
    assert rec.id == "osti:1442851" and rec.source == "osti"
    assert "2(Eμ/M) sin2(1/2θμ)" in rec.abstract
    assert not TAG.search(rec.abstract)
    assert rec.abstract.startswith("The scaling variable ν = xy")


def test_api_record_fields(hepcrawl: dict[str, dict]) -> None:
    rec = map_item("osti-api", hepcrawl["1442851"])
    assert rec.title == "Flux-Independent Measurements of Deep-Inelastic Neutrino Processes"
    assert [a.name for a in rec.authors] == ["Bjorken, J. D.", "Cline, D.", "Mann, A. K."]
    assert rec.authors[0].affiliation == "Stanford Univ., Stanford, CA (United States)"
    assert rec.identifiers.doi == "10.1103/physrevd.8.3207"  # given as 10.1103/PhysRevD.8.3207
    assert rec.identifiers.report_numbers == ["SLAC-PUB-1244"]
    assert rec.identifiers.contract_numbers == ["AC02-76SF00515"]
    assert rec.date is not None and (rec.date.value, rec.date.kind, rec.date.precision) == (
        "1973-11-01", "published", "day")
    assert rec.year == 1973
    assert [(d.kind, d.value) for d in rec.dates] == [("published", "1973-11-01"), ("entry", "2019-04-26")]
    assert rec.subjects == ["72 PHYSICS OF ELEMENTARY PARTICLES AND FIELDS"]
    assert rec.document_type == "Journal Article"
    assert rec.links.landing == "https://www.osti.gov/biblio/1442851"
    assert rec.links.fulltext == "https://www.osti.gov/servlets/purl/1442851"
    assert rec.url == "https://www.osti.gov/biblio/1442851"
    assert rec.publication is not None and rec.publication.journal == "Physical Review. D, Particles Fields"
    assert (rec.publication.volume, rec.publication.issue) == ("8", "9")
    roles = {(o.role, o.name) for o in rec.organizations}
    assert ("research", "SLAC National Accelerator Lab., Menlo Park, CA (United States)") in roles
    assert ("sponsor", "USDOE Office of Science (SC)") in roles


def test_long_author_list_kept_in_order(hepcrawl: dict[str, dict]) -> None:
    raw = hepcrawl["1502988"]
    rec = map_item("osti-api", raw)
    assert len(rec.authors) == len(raw["authors"]) > 100
    assert rec.authors[0].name == "Aad, G."


def test_author_with_orcid_and_affiliation_is_split(pppl: dict[str, dict]) -> None:
    with_orcid = [(oid, a) for oid, item in pppl.items() for a in item.get("authors") or []
                  if "(ORCID:" in a and "[" in a]
    assert with_orcid, "the PPPL file holds authors with both an affiliation and an ORCID"
    oid, raw_author = with_orcid[0]
    rec = map_item("osti-dataexplorer", pppl[oid])
    raw_orcid = re.search(r"\(ORCID:([0-9X]+)\)", raw_author).group(1)
    author = next(a for a in rec.authors if a.orcid and a.orcid.replace("-", "") == raw_orcid)
    assert re.fullmatch(r"\d{4}-\d{4}-\d{4}-\d{3}[\dX]", author.orcid)
    assert "[" not in author.name and "ORCID" not in author.name and "(" not in author.name
    assert author.name == raw_author.split("[", 1)[0].strip()
    assert author.affiliation and author.affiliation in raw_author and "ORCID" not in author.affiliation


@pytest.mark.parametrize(
    ("raw", "name", "affiliation", "orcid"),
    [
        # Real author strings: SOURCES.md (Carlson), osti-hepcrawl (Bjorken), osti-cmm-data (others).
        ("Carlson, Hans K. (ORCID:0000000215835313)", "Carlson, Hans K.", None, "0000-0002-1583-5313"),
        ("Bjorken, J. D. [Stanford Univ., Stanford, CA (United States)]", "Bjorken, J. D.",
         "Stanford Univ., Stanford, CA (United States)", None),
        ("Wang, Meng-Jen (Vince) [University of Utah, Salt Lake City, UT (United States)]",
         "Wang, Meng-Jen (Vince)", "University of Utah, Salt Lake City, UT (United States)", None),
        ("Zhao, Huan [Oak Ridge National Laboratory (ORNL), Oak Ridge, TN (United States). Center for "
         "Nanophase Materials Sciences (CNMS)] (ORCID:0000000249820865)", "Zhao, Huan",
         "Oak Ridge National Laboratory (ORNL), Oak Ridge, TN (United States). Center for Nanophase "
         "Materials Sciences (CNMS)", "0000-0002-4982-0865"),
        ("Wang, Meng-Jen (Vince) [University of Utah, Salt Lake City, UT (United States); University of "
         "Nevada, Las Vegas, NV (United States)] (ORCID:0000000168401845)", "Wang, Meng-Jen (Vince)",
         "University of Utah, Salt Lake City, UT (United States); University of Nevada, Las Vegas, NV "
         "(United States)", "0000-0001-6840-1845"),
    ],
)
def test_osti_author_strings(raw: str, name: str, affiliation: str | None, orcid: str | None) -> None:
    author = parse_osti_author(raw)
    assert author is not None
    assert (author.name, author.affiliation, author.orcid) == (name, affiliation, orcid)


def test_doi_given_as_url_is_bare_and_lower_case(pppl: dict[str, dict]) -> None:
    raw = pppl["1367164"]
    assert raw["doi"] == "https://doi.org/10.11578/1367164"
    rec = map_item("osti-dataexplorer", raw)
    assert rec.identifiers.doi == "10.11578/1367164"
    every = [map_item("osti-dataexplorer", item).identifiers.doi for item in pppl.values()]
    assert all(d and d.startswith("10.") and "doi.org" not in d for d in every)


def test_availability_kept_as_rights(pppl: dict[str, dict]) -> None:
    oid, raw = next((k, v) for k, v in pppl.items() if v.get("availability"))
    rec = map_item("osti-dataexplorer", raw)
    assert rec.rights.availability == raw["availability"].strip()


def test_dataexplorer_links_and_keywords(pppl: dict[str, dict]) -> None:
    rec = map_item("osti-dataexplorer", pppl["1367164"])
    assert rec.document_type == "Dataset"
    assert rec.links.landing and rec.links.landing.startswith("https://www.osti.gov/")
    # OSTI mixes DOE categories and free keywords in `subjects`: categories start with a number.
    assert all(re.match(r"^\d{2,3} ", s) for s in rec.subjects)
    assert not any(re.match(r"^\d{2,3} [A-Z]", k) for k in rec.keywords)


def test_html_entities_decoded_even_when_escaped_twice(cmm: dict[str, dict]) -> None:
    raw = cmm["2404551"]
    assert "NETL&amp;#39;s applied R&amp;amp;D" in raw["description"]  # escaped twice by the source
    rec = map_item("osti-api", raw)
    assert rec.abstract.startswith("Presentation of NETL's applied R&D on unconventional critical minerals")
    assert not ENTITY.search(rec.abstract)


def test_entities_and_literal_less_than(cmm: dict[str, dict]) -> None:
    # "&lt;250 °C" is a literal less-than sign, not markup: it must survive as text.
    item = next(v for v in cmm.values() if "at &lt;250" in (v.get("description") or ""))
    rec = map_item("osti-api", item)
    assert "at <250 °C" in rec.abstract


def test_no_markup_or_entities_left_in_any_osti_text(cmm: dict[str, dict], pppl: dict[str, dict]) -> None:
    for fmt, items in (("osti-api", cmm), ("osti-dataexplorer", pppl)):
        for item in items.values():
            rec = map_item(fmt, item)
            for text in (rec.title, rec.abstract or "", rec.document_type or ""):
                assert not TAG.search(text), (rec.id, text[:200])
                assert not ENTITY.search(text), (rec.id, text[:200])


def test_product_type_entity_decoded(cmm: dict[str, dict]) -> None:
    item = next(v for v in cmm.values() if v.get("product_type") == "S&amp;T Accomplishment Report")
    assert map_item("osti-api", item).document_type == "S&T Accomplishment Report"


def test_legacy_csv_row(raw_dir: Path) -> None:
    path = raw_dir / "osti-ostidatatutorial" / "osti_recs.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r.get("OstiID")]
    row = next(r for r in rows if "Becquart, C. S." in r["Author"])
    rec = map_item("osti-csv", row)
    assert rec.id == f"osti:{row['OstiID'].strip()}"
    assert rec.title.startswith("Evaluation of Reaction Rate Theory and Monte Carlo Methods")
    assert [a.name for a in rec.authors][:2] == ["Stoller, Roger E", "Golubov, Stanislav I"]
    assert rec.authors[0].affiliation == "ORNL"
    assert any(a.affiliation == "EDF R&D, Clamart, France" for a in rec.authors)
    assert rec.date is not None and rec.date.value == "2007-08-01" and rec.year == 2007
    assert rec.identifiers.report_numbers == [row["Report Number"].strip()]
    # The CSV's URL is the retired SciTech Connect page: link to today's, keep the old one too.
    assert row["URL"].strip() == f"http://www.osti.gov/scitech/biblio/{row['OstiID'].strip()}"
    assert rec.links.landing == f"https://www.osti.gov/biblio/{row['OstiID'].strip()}"
    assert rec.links.other == [row["URL"].strip()]


def test_clean_text_block_tags_keep_words_apart() -> None:
    text = clean_text("<jats:p>First paragraph.</jats:p><jats:p>Second &amp; last.</jats:p>")
    assert text == "First paragraph. Second & last."


def test_missing_id_is_a_format_error() -> None:
    from searchnasa.errors import FormatError

    with pytest.raises(FormatError, match="osti_id"):
        map_item("osti-api", {"title": "no id"})


def test_mapped_records_validate_round_trip(cmm: dict[str, dict]) -> None:
    for item in list(cmm.values())[:200]:
        rec = map_item("osti-api", item)
        assert Record.from_json(rec.to_json()) == rec


def test_packed_identifiers_split_and_issn_bare(hepcrawl: dict[str, dict]) -> None:
    raw = hepcrawl["1442851"]
    assert raw["other_identifiers"] == ["Journal ID: ISSN 0556-2821; PRVDAQ; TRN: US1900937"]
    assert raw["journal_issn"] == "ISSN 0556-2821"
    rec = map_item("osti-api", raw)
    assert rec.identifiers.other == ["Journal ID: ISSN 0556-2821", "PRVDAQ", "TRN: US1900937"]
    assert rec.publication is not None and rec.publication.issn == "0556-2821"


def test_placeholder_description_is_no_abstract(cmm: dict[str, dict]) -> None:
    placeholders = [v for v in cmm.values() if (v.get("description") or "").strip() == "Not provided."]
    assert len(placeholders) == 7
    for item in placeholders:
        assert map_item("osti-api", item).abstract is None


def test_doe_categories_written_with_a_dash_are_subjects(cmm: dict[str, dict]) -> None:
    item = next(v for v in cmm.values() if any(s.startswith("42 - ENGINEERING") for s in v.get("subjects") or []))
    rec = map_item("osti-api", item)
    assert any(s.startswith("42 - ENGINEERING") for s in rec.subjects)
    assert not any(k.startswith("42 - ") for k in rec.keywords)
