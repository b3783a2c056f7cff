"""NASA NTRS: map API citations, the flattened CSV and the STI JSONL export to :class:`Record`.

Ground truth for shapes: ``shared/data/raw/ntrs-*`` and ``shared/SOURCES.md`` (part A.1).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from searchnasa.errors import FormatError
from searchnasa.organizations import is_collection_marker
from searchnasa.records import (
    Author,
    Identifiers,
    Links,
    Organization,
    Publication,
    Record,
    RecordDate,
    Rights,
    make_id,
    normalize_doi,
)
from searchnasa.ingest.text import (
    clean_label,
    clean_list,
    clean_text,
    dated,
    format_orcid,
    parse_date,
    record_head,
)

NTRS_SITE = "https://ntrs.nasa.gov"
_REPORT_PREFIX = re.compile(r"^\s*Report Number:\s*", re.IGNORECASE)


def absolute_ntrs_url(link: object) -> str | None:
    """Download links in results are relative (``/api/citations/...``): prefix the site."""
    if not isinstance(link, str) or not link.strip():
        return None
    link = link.strip()
    if link.startswith(("http://", "https://")):
        return link
    return NTRS_SITE + (link if link.startswith("/") else "/" + link)


def landing_url(ntrs_id: str) -> str:
    return f"{NTRS_SITE}/citations/{ntrs_id}"


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _publications(item: dict[str, Any]) -> list[dict[str, Any]]:
    """The publication entries that are objects: an odd entry costs itself, not the record."""
    return [p for p in _list(item.get("publications")) if isinstance(p, dict)]


def _dates(item: dict[str, Any]) -> tuple[RecordDate | None, list[RecordDate]]:
    """The publication date, and the other dates NTRS gives (created, distributed, modified)."""
    published = None
    for pub in _publications(item):
        published = parse_date(pub.get("publicationDate"), "published")
        if published:
            break
    others: list[RecordDate] = []
    for key, kind in (("created", "created"), ("distributionDate", "distributed"),
                      ("modified", "modified")):
        d = parse_date(item.get(key), kind)  # type: ignore[arg-type]
        if d:
            others.append(d)
    return published, others


def _authors(item: dict[str, Any]) -> list[Author]:
    entries = [a for a in _list(item.get("authorAffiliations")) if isinstance(a, dict)]
    entries.sort(key=lambda a: a.get("sequence") if isinstance(a.get("sequence"), int) else 1 << 30)
    authors = []
    for entry in entries:
        meta = _dict(entry.get("meta"))
        person = _dict(meta.get("author"))
        name = clean_label(person.get("name"))
        if not name:
            continue
        org = _dict(meta.get("organization"))
        affiliation = clean_label(org.get("name"))
        authors.append(Author(name=name, affiliation=affiliation,
                              orcid=format_orcid(person.get("orcidId") or None)))
    return authors


def _report_numbers(item: dict[str, Any]) -> list[str]:
    raw = [_REPORT_PREFIX.sub("", str(v)) for v in _list(item.get("otherReportNumbers")) if v]
    for ident in _list(item.get("sourceIdentifiers")):
        if isinstance(ident, dict) and ident.get("number"):
            raw.append(str(ident["number"]))
    return clean_list(raw)


def _is_journal_metadata(item: dict[str, Any]) -> bool:
    """CHORUS journal metadata answers the same endpoint: ``chorus-*`` index, 14-digit string ids.

    The index decides when present; older responses have none, and then a string id does.
    """
    index_name = str(item.get("index") or "")
    return index_name.startswith("chorus") if index_name else isinstance(item["id"], str)


def _organizations(item: dict[str, Any], authors: list[Author]) -> list[Organization]:
    """The NASA center first, then each author affiliation once, in author order."""
    organizations: list[Organization] = []
    center_info = _dict(item.get("center"))
    center = clean_label(center_info.get("name"))
    if center and not is_collection_marker(center, center_info.get("code")):
        organizations.append(Organization(name=center, role="center"))
    seen_orgs = {o.name for o in organizations}
    for a in authors:
        if a.affiliation and a.affiliation not in seen_orgs:
            seen_orgs.add(a.affiliation)
            organizations.append(Organization(name=a.affiliation, role="affiliation"))
    return organizations


def _publication(item: dict[str, Any]) -> Publication | None:
    """Journal details of the first publication entry; ``None`` when it names none of them."""
    publications = _publications(item)
    pub0 = publications[0] if publications else {}
    if not any(pub0.get(k) for k in ("publicationName", "volume", "issue", "publisher", "issn")):
        return None
    return Publication(
        journal=clean_label(pub0.get("publicationName")), volume=clean_label(pub0.get("volume")),
        issue=clean_label(pub0.get("issue")), publisher=clean_label(pub0.get("publisher")),
        issn=clean_label(pub0.get("issn")),
    )


def _funding_numbers(item: dict[str, Any]) -> tuple[list[str], list[str]]:
    """Contract and grant numbers, and every other funding or accession number (kept searchable)."""
    contracts: list[str] = []
    other_ids: list[str] = []
    for f in _list(item.get("fundingNumbers")):
        if isinstance(f, dict) and f.get("number"):
            kind = str(f.get("type") or "")
            if kind.upper() in ("CONTRACT_GRANT", "CONTRACT", "GRANT"):
                contracts.append(str(f["number"]))
            else:
                other_ids.append(f"{kind} {f['number']}".strip())
    accession = _dict(item.get("legacyMeta")).get("accessionNumber")
    if accession:
        other_ids.append(f"Accession {accession}")
    return contracts, other_ids


def _identifiers(item: dict[str, Any]) -> Identifiers:
    """The first DOI any publication entry gives, report numbers, and funding numbers."""
    doi = next((normalize_doi(p.get("doi")) for p in _publications(item) if normalize_doi(p.get("doi"))), None)
    contracts, other_ids = _funding_numbers(item)
    return Identifiers(doi=doi, report_numbers=_report_numbers(item),
                       contract_numbers=clean_list(contracts), other=clean_list(other_ids))


def _links(item: dict[str, Any], ntrs_id: str, journal_metadata: bool) -> Links:
    """The landing page (none for CHORUS metadata without a numeric id), the first PDF and full
    text among the downloads, and the originals that are neither."""
    pdf = fulltext = None
    others: list[str] = []
    for download in _list(item.get("downloads")):
        links = _dict(_dict(download).get("links"))
        pdf = pdf or absolute_ntrs_url(links.get("pdf"))
        fulltext = fulltext or absolute_ntrs_url(links.get("fulltext"))
        original = absolute_ntrs_url(links.get("original"))
        if original and original not in (pdf, fulltext):
            others.append(original)
    return Links(landing=None if journal_metadata and not ntrs_id.isdigit() else landing_url(ntrs_id),
                 pdf=pdf, fulltext=fulltext, other=others)


def _export_control(item: dict[str, Any]) -> str | None:
    """``ITAR``/``EAR``/``ITAR/EAR`` when flagged, else NTRS's own ``isExportControl``; ``None`` without the block."""
    export = _dict(item.get("exportControl"))
    if not export:
        return None
    export_flags = [k.upper() for k in ("itar", "ear") if str(export.get(k, "")).upper() == "YES"]
    return "/".join(export_flags) if export_flags else str(export.get("isExportControl") or "NO")


def _rights(item: dict[str, Any]) -> Rights:
    """What may be done with the document, as NTRS states it: copyright, distribution, export control."""
    copyright_ = _dict(item.get("copyright"))
    return Rights(
        copyright_determination=clean_label(copyright_.get("determinationType")),
        license_type=clean_label(copyright_.get("licenseType")),
        distribution=clean_label(item.get("distribution")),
        export_control=_export_control(item),
        availability=clean_label(item.get("disseminated")),
    )


def map_citation(item: dict[str, Any]) -> Record:
    """Map one ``results[]`` item of ``/api/citations/search`` (or ``/api/citations/{id}``)."""
    if not isinstance(item, dict) or item.get("id") in (None, ""):
        raise FormatError("NTRS citation without an id")
    ntrs_id = str(item["id"]).strip()
    journal_metadata = _is_journal_metadata(item)
    published, other_dates = _dates(item)
    authors = _authors(item)
    return Record(
        **record_head("ntrs", ntrs_id, item.get("title")),
        kind="journal_metadata" if journal_metadata else "citation",
        abstract=clean_text(item.get("abstract")),
        authors=authors,
        **dated(published, *other_dates),
        subjects=clean_list(item.get("subjectCategories")),
        keywords=clean_list(item.get("keywords")),
        document_type=clean_label(item.get("stiType")),
        document_type_label=clean_label(item.get("stiTypeDetails")) or clean_label(item.get("stiType")),
        organizations=_organizations(item, authors),
        identifiers=_identifiers(item),
        links=_links(item, ntrs_id, journal_metadata),
        rights=_rights(item),
        publication=_publication(item),
        related_ids=[make_id("ntrs", str(r["id"])) for r in _list(item.get("related"))
                     if isinstance(r, dict) and r.get("id")],
        source_modified=clean_label(item.get("modified")),
    )


def map_csv_row(row: dict[str, str]) -> Record:
    """Map one row of the flattened NTRS CSV (``ntrs-word-space-explorer``)."""
    ntrs_id = (row.get("document_id") or "").strip()
    if not ntrs_id:
        raise FormatError("row without document_id")
    published = parse_date(row.get("publicationDate"), "published")
    created = parse_date(row.get("createDate"), "created")
    related = [r.strip() for r in (row.get("related") or "").split(",") if r.strip()]
    return Record(
        **record_head("ntrs", ntrs_id, row.get("title")),
        abstract=clean_text(row.get("abstract")),
        **dated(published, created),
        subjects=clean_list(row.get("subjectCategories")),
        # "CDMS" is NTRS's legacy collection, not an organization: such rows name none
        organizations=[Organization(name=str(row.get("center")), role="center")]
        if row.get("center") and not is_collection_marker(row.get("center")) else [],
        links=Links(landing=landing_url(ntrs_id), pdf=absolute_ntrs_url(row.get("downloads_pdf_url")),
                    fulltext=absolute_ntrs_url(row.get("downloads_text_url"))),
        rights=Rights(copyright_determination=clean_label(row.get("copyright"))),
        related_ids=[make_id("ntrs", r) for r in related],
    )


STI_TITLE = "D245A (Title)"
STI_ABSTRACT = "D520B (Abstract)"


_STI_TERM_KEYS = (
    "D650A (NASA Major Indexing Terms)",
    "D659A (NASA Minor Indexing Terms)",
    "D901A Non-NASA Primary Controlled Index Terms",
    "D902A Non-NASA Secondary Controlled Index Terms",
    "D653A Uncontrolled Index Terms",
)


def _list_or_one(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def sti_export_id(item: dict[str, Any]) -> str:
    """The STI export has no id: derive a stable one from title + abstract (same text, same id)."""
    key = f"{item.get(STI_TITLE) or ''}\x1f{item.get(STI_ABSTRACT) or ''}".encode()
    return "sti-" + hashlib.sha1(key).hexdigest()[:16]


def map_sti_export(item: dict[str, Any]) -> Record:
    """Map one line of the NASA STI JSONL export (MARC-like keys, no id, date, author or link)."""
    if not isinstance(item, dict) or STI_TITLE not in item:
        raise FormatError(f"STI export line without {STI_TITLE!r}")
    source_id = sti_export_id(item)
    keywords = clean_list([term for key in _STI_TERM_KEYS for term in _list_or_one(item.get(key))])
    restrictions = clean_list(item.get("D359C (Access Restrictions)"))
    return Record(
        **record_head("ntrs", source_id, item.get(STI_TITLE)),
        kind="export",
        abstract=clean_text(item.get(STI_ABSTRACT)),
        subjects=clean_list(item.get("D072B (Subject Category)")),
        keywords=keywords,
        rights=Rights(distribution=clean_label(item.get("D359A (Authorized Users)")),
                      availability="; ".join(restrictions) or None),
    )
