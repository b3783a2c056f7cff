"""Helpers the search tests share: what a record's searched fields say, checked independently of
the index (plain Python over the stored record)."""

from __future__ import annotations

from searchnasa.index.schema import plain_tokens, stem_tokens
from searchnasa.records import Record


def searched_texts(rec: Record) -> list[str]:
    """Every field a bare word or an unfielded phrase is searched in."""
    ids = rec.identifiers
    return ([rec.title, rec.abstract or ""] + rec.subjects + rec.keywords
            + [o.name for o in rec.organizations] + [a.name for a in rec.authors]
            + [rec.source_id, rec.id] + ([ids.doi] if ids.doi else []) + ids.report_numbers
            + ids.contract_numbers + ids.other)


def has_sequence(tokens: list[str], seq: list[str]) -> bool:
    return any(tokens[i:i + len(seq)] == seq for i in range(len(tokens) - len(seq) + 1))


def contains_phrase(rec: Record, phrase: str) -> bool:
    want = plain_tokens(phrase)
    return any(has_sequence(plain_tokens(t), want) for t in searched_texts(rec))


def contains_word(rec: Record, word: str) -> bool:
    stem = stem_tokens(word)
    return any(has_sequence(stem_tokens(t), stem) for t in searched_texts(rec))


def load_records(home) -> dict[str, Record]:
    """Every record of a data home, by id (read-only)."""
    from searchnasa.store import open_store

    store = open_store(home, readonly=True)
    try:
        return {rec.id: rec for _, rec in store.iter_records()}
    finally:
        store.close()
