"""Descriptions, in the OpenAPI spec, of the record model's fields and of the error answer.

The record model (``records.py``) is the core every stage shares; its docstrings say what each
class is for, and this table says, for API readers, what each field holds. It is applied to the
generated spec (``describe_spec``) rather than written into the core model, so the web's wording
stays with the web. tests/test_api_docs.py fails on any schema property or parameter left
without a description, so a field added to the model must be described here too.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

FIELD_DOCS: dict[str, dict[str, str]] = {
    "Author": {
        "name": "The name as the source writes it (`Gorham, P. W.`; sometimes an organization).",
        "affiliation": "The author's organization when the source gives it; null otherwise.",
        "orcid": "The author's ORCID iD (`0000-0002-1825-0097`) when the source gives it; null otherwise.",
    },
    "RecordDate": {
        "value": "The date, as precise as the source says: `1973`, `1973-11` or `1973-11-01`.",
        "kind": "Which date it is: published, issued, created, entry, modified or distributed.",
        "precision": "How precise `value` is: year, month or day.",
    },
    "Organization": {
        "name": "The organization's name as the source gives it.",
        "role": ("The part it played: `center` (the NASA center), `research` (did the work), `sponsor` "
                 "(paid for it), `affiliation` (of an author), `publisher`, `contributing`."),
    },
    "Identifiers": {
        "doi": "The DOI, bare and lower-cased (`10.1103/physrevd.8.3207`); null when there is none.",
        "report_numbers": "Report numbers as the source writes them (`NASA-TM-X-3470`, `ORNL/TM-2007/137`).",
        "contract_numbers": "Contract and grant numbers (`DE-AC05-00OR22725`).",
        "other": "Other identifiers the source lists, each with its kind where known.",
    },
    "Links": {
        "landing": "The record's page at its source (the 'link to original').",
        "pdf": "A PDF of the full text when the source offers one.",
        "fulltext": "Another full-text address when the source offers one.",
        "other": "Other addresses the source lists.",
    },
    "Rights": {
        "copyright_determination": "NTRS's copyright determination (`PUBLIC_USE_PERMITTED`, ...).",
        "license_type": "The licence the source states, if any.",
        "distribution": "Distribution as the source states it (`PUBLIC`, ...).",
        "export_control": "Export control as the source states it.",
        "availability": "OSTI's availability statement.",
    },
    "Publication": {
        "journal": "The journal the work appeared in, when the source names it.",
        "volume": "The journal volume.",
        "issue": "The journal issue.",
        "publisher": "The publisher, when the source names one.",
        "issn": "The journal's ISSN.",
    },
    "RecordResponse": {
        "id": "The record id: `ntrs:<NTRS id>` or `osti:<OSTI id>`.",
        "source": "The collection that holds the record: `ntrs` (NASA) or `osti` (DOE).",
        "source_id": "The record's id within its source (the part after the colon).",
        "kind": ("`citation` (a source's catalogue record), `journal_metadata` (NTRS's CHORUS journal "
                 "metadata) or `export` (read from an export without the source's full record)."),
        "title": "The title as plain text.",
        "abstract": "The abstract as plain text (markup stripped, entities decoded); null when there is none.",
        "authors": "The authors in the source's order, each with affiliation and ORCID when given.",
        "date": ("The record's main date with its kind and precision; null when the source gives none "
                 "(never invented)."),
        "dates": "Every date the source gives, each with its kind.",
        "year": "The year of `date`; null when the source gives no date.",
        "subjects": "Subject categories, as the source labels them.",
        "keywords": "Keywords and index terms.",
        "document_type": "The source's document type code (NTRS STI type, OSTI product type).",
        "document_type_label": "The document type for display.",
        "organizations": "Organizations and the part each played (NASA center, research org, sponsor, ...).",
        "identifiers": "DOI, report numbers, contract numbers and other identifiers.",
        "links": "Addresses of the original: landing page, PDF, full text.",
        "rights": "Rights as the source states them; shown, never interpreted as a licence grant.",
        "publication": "Where the work appeared (journal, volume, issue, publisher), when the source says.",
        "language": "The language of the work, when the source says.",
        "related_ids": "Ids of records the source itself lists as related.",
        "source_modified": "When the source last changed the record, as it says.",
    },
}


class ErrorBody(BaseModel):
    """What went wrong, for a program (`code`) and for a person (`message`)."""

    code: str = Field(description=(
        "A stable, machine-readable code: `not_found`, `bad_request`, `invalid_request`, `ambiguous_id`, "
        "`rate_limited`, `too_large`, `index_missing`, ..."))
    message: str = Field(description="One sentence for a person: what was wrong and, where it helps, what to do.")


class ErrorResponse(BaseModel):
    """Every error the API answers, whatever its status."""

    error: ErrorBody = Field(description="The error's code and message.")


def describe_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """Fill in the descriptions of :data:`FIELD_DOCS` where the generated spec has none."""
    schemas = spec.get("components", {}).get("schemas", {})
    for name, fields in FIELD_DOCS.items():
        props = schemas.get(name, {}).get("properties", {})
        for field, text in fields.items():
            if field in props and not props[field].get("description"):
                props[field]["description"] = text
    return spec
