"""DOE OSTI: map API v1 records (and Data Explorer records, same shape) and the legacy CSV.

Ground truth for shapes: ``shared/data/raw/osti-*`` and ``shared/SOURCES.md`` (part A.2).
"""

from __future__ import annotations

from typing import Any

from searchnasa.errors import FormatError
from searchnasa.records import Author, Identifiers, Links, Organization, Publication, Record, Rights, normalize_doi
from searchnasa.ingest.text import (
    clean_label,
    clean_list,
    clean_text,
    dated,
    parse_date,
    parse_osti_author,
    record_head,
    split_osti_subjects,
    split_outside_brackets,
)

OSTI_SITE = "https://www.osti.gov"


def landing_url(osti_id: str) -> str:
    return f"{OSTI_SITE}/biblio/{osti_id}"


def _split_numbers(*values: Any) -> list[str]:
    """OSTI packs several numbers in one string (``"Journal ID: ISSN 0556-2821; PRVDAQ"``), in
    list elements as well as in plain strings: one identifier each, so each can be searched."""
    out: list[str] = []
    for value in values:
        for part in value if isinstance(value, list) else [value]:
            if isinstance(part, (str, int)) and str(part).strip():
                out.extend(split_outside_brackets(str(part), ";"))
    return clean_list(out)


# OSTI writes this placeholder where a record has no description; it is not an abstract.
_NO_DESCRIPTION = {"not provided", "not provided.", "none", "n/a"}


def _description(value: Any) -> str | None:
    text = clean_text(value)
    return None if text is None or text.lower() in _NO_DESCRIPTION else text


def _described(osti_id: str, title: Any, description: Any, authors: list[Author],
               subjects: list[str], keywords: list[str]) -> dict[str, Any]:
    """The fields both OSTI mappers fill the same way, whatever the column names: who wrote what,
    about what (OSTI's subject list already split into DOE categories and free keywords)."""
    return {**record_head("osti", osti_id, title), "abstract": _description(description),
            "authors": authors, "subjects": subjects, "keywords": keywords}


def _issn(value: Any) -> str | None:
    """``"ISSN 0556-2821"`` -> ``"0556-2821"`` (NTRS gives the bare number; keep one form)."""
    text = clean_label(value)
    if text and text.upper().startswith("ISSN"):
        text = text[4:].lstrip(" :") or None
    return text


def _orgs(values: Any, role: str) -> list[Organization]:
    names = clean_list(values if isinstance(values, list) else split_outside_brackets(values, ";")
                       if isinstance(values, str) else [])
    return [Organization(name=n, role=role) for n in names]  # type: ignore[arg-type]


def map_record(item: dict[str, Any]) -> Record:
    """Map one OSTI API v1 record (also Data Explorer and trimmed catalog copies of it)."""
    if not isinstance(item, dict) or not str(item.get("osti_id") or "").strip():
        raise FormatError("OSTI record without osti_id")
    osti_id = str(item["osti_id"]).strip()
    published = parse_date(item.get("publication_date"), "published")
    entry = parse_date(item.get("entry_date"), "entry")
    subjects, keywords = split_osti_subjects(clean_list(item.get("subjects")))
    authors = [a for a in (parse_osti_author(s) for s in item.get("authors") or []) if a]

    links = Links(landing=landing_url(osti_id))
    for link in item.get("links") or []:
        if not isinstance(link, dict) or not isinstance(link.get("href"), str):
            continue
        rel, href = link.get("rel"), link["href"].strip()
        if rel == "citation":
            links.landing = href
        elif rel == "fulltext":
            links.fulltext = href
            if href.lower().endswith(".pdf"):
                links.pdf = href
        elif href:
            links.other.append(href)

    organizations = (_orgs(item.get("research_orgs"), "research")
                     + _orgs(item.get("sponsor_orgs"), "sponsor")
                     + _orgs(item.get("contributing_org"), "contributing"))
    publication = None
    if any(item.get(k) for k in ("journal_name", "journal_volume", "journal_issue", "publisher")):
        publication = Publication(
            journal=clean_label(item.get("journal_name")), volume=clean_label(item.get("journal_volume")),
            issue=clean_label(item.get("journal_issue")), publisher=clean_label(item.get("publisher")),
            issn=_issn(item.get("journal_issn")),
        )
    return Record(
        **_described(osti_id, item.get("title"), item.get("description"), authors, subjects, keywords),
        **dated(published, entry),
        document_type=clean_label(item.get("product_type")),
        document_type_label=clean_label(item.get("product_type")),
        organizations=organizations,
        identifiers=Identifiers(
            doi=normalize_doi(item.get("doi")),
            report_numbers=_split_numbers(item.get("report_number")),
            contract_numbers=_split_numbers(item.get("doe_contract_number"), item.get("contract_number"),
                                            item.get("nondoe_contract_number")),
            other=_split_numbers(item.get("other_identifiers")),
        ),
        links=links,
        rights=Rights(availability=clean_label(item.get("availability"))),
        publication=publication,
        language=clean_label(item.get("language")),
        source_modified=entry.value if entry else None,
    )


def map_csv_row(row: dict[str, str]) -> Record:
    """Map one row of the legacy OSTI CSV (SciTech Connect XML flattened; ``osti-ostidatatutorial``)."""
    osti_id = (row.get("OstiID") or "").strip()
    if not osti_id:
        raise FormatError("row without OstiID")
    published = parse_date(row.get("Date"), "published")
    subjects, keywords = split_osti_subjects(
        clean_list(split_outside_brackets(row.get("Subjects") or "", ";")))
    authors = [a for a in (parse_osti_author(s) for s in
                           split_outside_brackets(row.get("Author") or "", ";")) if a]
    url = (row.get("URL") or "").strip()
    return Record(
        **_described(osti_id, row.get("Title"), row.get("Description"), authors, subjects, keywords),
        **dated(published),
        identifiers=Identifiers(
            doi=normalize_doi(row.get("DOI")),
            report_numbers=_split_numbers(row.get("Report Number")),
            contract_numbers=_split_numbers(row.get("DOE Number")),
        ),
        # The CSV's URL points at the retired SciTech Connect (http://www.osti.gov/scitech/biblio/N):
        # link to today's page and keep the old URL beside it.
        links=Links(landing=landing_url(osti_id),
                    other=[url] if url.startswith("http") and url != landing_url(osti_id) else []),
    )
