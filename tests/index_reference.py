"""The index document as it was built before the fast path: one ``add_text`` per value and one
analyzer call per value for the word pairs, from a validated :class:`Record`.

Kept only as the reference that tests/test_index_documents.py (and bench/index_speed.py) compare
the fast builder in :mod:`searchnasa.index.documents` against: same terms, frequencies, positions,
fast fields and stored card.
"""

from __future__ import annotations

import orjson
import tantivy

from searchnasa.authors import name_keys
from searchnasa.organizations import canonical_organization
from searchnasa.index.schema import (
    PLAIN_ANALYZER,
    TEXT_FIELDS,
    id_key,
    sample_terms,
    sort_keys,
    word_pairs,
)
from searchnasa.records import Record

MAX_CARD_AUTHORS = 10


def card_of(record: Record) -> dict:
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
    ids = record.identifiers
    values = [record.source_id, record.id]
    if ids.doi:
        values.append(ids.doi)
    values.extend(ids.report_numbers)
    values.extend(ids.contract_numbers)
    values.extend(ids.other)
    return values


def _add_everywhere(doc: tantivy.Document, value: str) -> None:
    doc.add_text("all", value)
    doc.add_text("all_exact", value)
    pairs = word_pairs(PLAIN_ANALYZER.analyze(value))
    if pairs:
        doc.add_text("all_pairs", " ".join(pairs))


def reference_document(record: Record) -> tantivy.Document:
    """The pre-fast-path document for ``record`` (schema version 5 layout)."""
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
    for org in dict.fromkeys(canonical_organization(o.name) for o in record.organizations):
        doc.add_text("organization_value", org)
    for key in dict.fromkeys(k for a in record.authors for k in name_keys(a.name)):
        doc.add_text("author_key", key)
    for name in dict.fromkeys(a.name.strip() for a in record.authors if a.name.strip()):
        doc.add_text("author_value", name)
    for level in sample_terms(record.id):
        doc.add_text("sample", level)
    newest, oldest = sort_keys(record.id, record.year)
    doc.add_integer("newest_key", newest)
    doc.add_integer("oldest_key", oldest)
    doc.add_bytes("card", orjson.dumps(card_of(record)))
    return doc
