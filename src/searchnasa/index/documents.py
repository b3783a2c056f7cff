"""Turn a :class:`Record` into the index document, and a stored card back into card data.

A card is the minimum a result needs (id, source, title, abstract, year, url, first authors,
document type, subjects, keywords); keeping it in the index lets a results page render from one
engine without a SQLite round trip per hit.
"""

from __future__ import annotations

from typing import Any

import orjson
import tantivy

from ..records import Record
from .schema import PLAIN_ANALYZER, TEXT_FIELDS, id_key, sample_terms, sort_keys, word_pairs

MAX_CARD_AUTHORS = 10


def card_of(record: Record) -> dict[str, Any]:
    """The stored card for one record."""
    return {
        "id": record.id,
        "source": record.source,
        "title": record.title,
        "abstract": record.abstract,
        "year": record.year,
        "url": record.url,
        "authors": [a.name for a in record.authors[:MAX_CARD_AUTHORS]],
        "document_type": record.document_type_label or record.document_type,
        "subjects": record.subjects,
        "keywords": record.keywords,
    }


def identifier_strings(record: Record) -> list[str]:
    """Identifiers a user may type: the source id, DOI, report and contract numbers."""
    ids = record.identifiers
    values = [record.source_id, record.id]
    if ids.doi:
        values.append(ids.doi)
    values.extend(ids.report_numbers)
    values.extend(ids.contract_numbers)
    values.extend(ids.other)
    return values


def _add_everywhere(doc: tantivy.Document, value: str) -> None:
    """The catch-all copies of one text value: stemmed, unstemmed, and its word pairs."""
    doc.add_text("all", value)
    doc.add_text("all_exact", value)
    pairs = word_pairs(PLAIN_ANALYZER.analyze(value))
    if pairs:
        doc.add_text("all_pairs", " ".join(pairs))


def to_document(record: Record) -> tantivy.Document:
    """The index document for ``record``: text fields twice (stemmed/exact), facets, card."""
    doc = tantivy.Document()
    doc.add_text("id", record.id)
    doc.add_integer("key", id_key(record.id))
    texts = {
        "title": [record.title],
        "abstract": [record.abstract] if record.abstract else [],
        "subjects": record.subjects,
        "keywords": record.keywords,
    }
    for name, values in texts.items():
        stem_name, exact_name = TEXT_FIELDS[name]
        for value in values:
            doc.add_text(stem_name, value)
            if exact_name:
                doc.add_text(exact_name, value)
            _add_everywhere(doc, value)
    for org in record.organizations:
        _add_everywhere(doc, org.name)
    for author in record.authors:
        doc.add_text("authors", author.name)
        _add_everywhere(doc, author.name)
    for value in identifier_strings(record):
        doc.add_text("identifiers", value)
        doc.add_text("ident_raw", value.strip().lower())
        _add_everywhere(doc, value)
    doc.add_text("source", record.source)
    if record.year is not None:
        doc.add_integer("year", record.year)
    if record.document_type_label or record.document_type:
        doc.add_text("document_type", record.document_type_label or record.document_type)
    for subject in dict.fromkeys(record.subjects):
        doc.add_text("subject_value", subject)
    for org in dict.fromkeys(o.name for o in record.organizations):
        doc.add_text("organization_value", org)
    for level in sample_terms(record.id):
        doc.add_text("sample", level)
    newest, oldest = sort_keys(record.id, record.year)
    doc.add_integer("newest_key", newest)
    doc.add_integer("oldest_key", oldest)
    doc.add_bytes("card", orjson.dumps(card_of(record)))
    return doc


def card_from_bytes(blob: bytes) -> dict[str, Any]:
    return orjson.loads(blob)
