"""Turn a stored record into the index document, and a stored card back into card data.

A card is the minimum a result needs (id, source, title, abstract, year, url, first authors,
document type, subjects, keywords); keeping it in the index lets a results page render from one
engine without a SQLite round trip per hit.

Why documents are built from the record's JSON dict (not a :class:`Record`) and handed to Tantivy
as one JSON string: indexing millions of records is bound by Python work per record. Reading the
store's JSON straight into a dict skips pydantic validation (the store only holds validated
records), and one ``IndexWriter.add_json`` call per record replaces some 70 ``add_text`` calls and
15 analyzer calls; Tantivy tokenizes every text field in Rust. The terms, positions and stored
card are the same as adding each value with ``add_text`` (tests/test_index_documents.py compares
both on the real sample).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

import orjson

from searchnasa.authors import name_keys
from searchnasa.index.schema import PLAIN_ANALYZER, id_key, sample_terms, sort_keys, word_pairs
from searchnasa.organizations import canonical_organization
from searchnasa.records import Record
from searchnasa.topics import topics_of

MAX_CARD_AUTHORS = 10

# Joins the values of one document for a single analyzer call when computing word pairs. It is
# all ASCII digits between spaces, so it always comes out as one token of its own, and only a
# value containing these very digits can produce that token (lower-casing maps nothing else onto
# ASCII digits); such a document falls back to one analyzer call per value.
_SENTINEL = "7302958164730295"
_VALUE_JOINER = f" {_SENTINEL} "


def _url(links: dict[str, Any]) -> str | None:
    """:attr:`Record.url` on the JSON form: the landing page, else the best file we have."""
    return links.get("landing") or links.get("pdf") or links.get("fulltext")


def card_data(data: dict[str, Any]) -> dict[str, Any]:
    """The stored card for one record, from its JSON dict (the store's form)."""
    return {
        "id": data["id"],
        "source": data["source"],
        "title": data["title"],
        "abstract": data.get("abstract"),
        "year": data.get("year"),
        "url": _url(data.get("links") or {}),
        "authors": [a["name"] for a in (data.get("authors") or [])[:MAX_CARD_AUTHORS]],
        "document_type": data.get("document_type_label") or data.get("document_type"),
        "subjects": data.get("subjects") or [],
        "keywords": data.get("keywords") or [],
    }


def card_of(record: Record) -> dict[str, Any]:
    """The stored card for one record."""
    return card_data(record.model_dump(mode="json"))


def identifier_values(data: dict[str, Any]) -> list[str]:
    """Identifiers a user may type: the source id, DOI, report and contract numbers."""
    ids = data.get("identifiers") or {}
    values = [data["source_id"], data["id"]]
    if ids.get("doi"):
        values.append(ids["doi"])
    values.extend(ids.get("report_numbers") or ())
    values.extend(ids.get("contract_numbers") or ())
    values.extend(ids.get("other") or ())
    return values


def identifier_strings(record: Record) -> list[str]:
    """Identifiers a user may type: the source id, DOI, report and contract numbers."""
    return identifier_values(record.model_dump(mode="json"))


def _pairs_per_value(values: Iterable[str]) -> list[str]:
    """Word pairs value by value: one analyzer call each (the reference; also the fallback)."""
    out: list[str] = []
    for value in values:
        out.extend(word_pairs(PLAIN_ANALYZER.analyze(value)))
    return out


def pairs_text(values: list[str]) -> str:
    """Every adjacent pair of unstemmed words within each value, space-separated, for ``all_pairs``.

    One analyzer call over all values joined by the sentinel; the token stream is then cut at the
    sentinel tokens so no pair spans two values. ``all_pairs`` is indexed without positions, so
    one string of all pairs gives the same terms and frequencies as one string per value.
    """
    joined = _VALUE_JOINER.join(values)
    if joined.count(_SENTINEL) != len(values) - 1:  # a value holds the sentinel: be exact instead
        return " ".join(_pairs_per_value(values))
    out: list[str] = []
    for run in " ".join(PLAIN_ANALYZER.analyze(joined)).split(_SENTINEL):
        tokens = run.split()
        if len(tokens) > 1:
            out.extend(map("_".join, pairwise(tokens)))
    return " ".join(out)


def document_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The index document for one record's JSON dict, as field -> values (Tantivy's JSON form).

    Value order within a field is what positions follow, so it is fixed: title, abstract,
    subjects, keywords, organizations, authors, identifiers for the catch-all fields.
    """
    rid = data["id"]
    title = data["title"]
    abstract = data.get("abstract")
    subjects = data.get("subjects") or []
    keywords = data.get("keywords") or []
    orgs = [o["name"] for o in data.get("organizations") or ()]
    authors = [a["name"] for a in data.get("authors") or ()]
    idents = identifier_values(data)
    everything = [title, *([abstract] if abstract else ()), *subjects, *keywords, *orgs, *authors, *idents]
    doc: dict[str, Any] = {
        "id": rid,
        "key": id_key(rid),
        "title": title,
        "title_exact": title,
        "all": everything,
        "all_exact": everything,
        "authors": authors,
        "identifiers": idents,
        "ident_raw": [v.strip().lower() for v in idents],
        "source": data["source"],
    }
    if abstract:
        doc["abstract"] = abstract
    if subjects:
        doc["subjects"] = doc["subjects_exact"] = subjects
        doc["subject_value"] = list(dict.fromkeys(subjects))
        topics = topics_of(data["source"], subjects)
        if topics:
            doc["topic"] = topics
    if keywords:
        doc["keywords"] = doc["keywords_exact"] = keywords
    pairs = pairs_text(everything)
    if pairs:
        doc["all_pairs"] = pairs
    if data.get("year") is not None:
        doc["year"] = data["year"]
    document_type = data.get("document_type_label") or data.get("document_type")
    if document_type:
        doc["document_type"] = document_type
    if authors:
        doc["author_key"] = list(dict.fromkeys(k for a in authors for k in name_keys(a)))
        doc["author_value"] = list(dict.fromkeys(a.strip() for a in authors if a.strip()))
    if orgs:
        # filtered and counted under one name per NASA center; the card keeps the source's names
        doc["organization_value"] = list(dict.fromkeys(canonical_organization(o) for o in orgs))
    levels = sample_terms(rid)
    if levels:
        doc["sample"] = levels
    doc["newest_key"], doc["oldest_key"] = sort_keys(rid, data.get("year"))
    doc["card"] = base64.b64encode(orjson.dumps(card_data(data))).decode("ascii")
    return doc


def document_json(data: dict[str, Any]) -> str:
    """The document as the JSON text ``IndexWriter.add_json`` takes (bytes fields in base64)."""
    return orjson.dumps(document_fields(data)).decode()


def record_json_document(blob: bytes | str) -> tuple[str, str]:
    """``(record id, document JSON)`` for one stored record JSON (the store's ``record`` column)."""
    data = orjson.loads(blob)
    return data["id"], document_json(data)


def card_from_bytes(blob: bytes) -> dict[str, Any]:
    return orjson.loads(blob)
