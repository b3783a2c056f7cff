"""The records a query names when it is an identifier typed alone (DOI, NTRS/OSTI id, report
number): the search shows just those, and sends the user straight to a single one."""

from __future__ import annotations

import re
from collections.abc import Callable

import tantivy

from searchnasa.errors import AmbiguousId, NotFound, SearchNasaError
from searchnasa.search.identifiers import IdentifierGuess, recognize
from searchnasa.store import Store
from searchnasa.store import identifiers as id_table

Q = tantivy.Query

# A record id as stored: the source, a colon, the source's own id (digits, or ``sti-...`` for
# NTRS records without an NTRS number). Anything else (paths, markup) never reaches a lookup.
RECORD_ID = re.compile(r"^(ntrs|osti):[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
ID_HINT = "ids look like ntrs:19810053652, osti:3002088, or a bare number such as 19810053652"


def identify(searcher: tantivy.Searcher, schema: tantivy.Schema, text: str,
             store: Callable[[], Store | None]) -> tuple[list[str], IdentifierGuess | None]:
    """Ids from the index (exact DOI, record id, whole report number), then from the store's
    identifier table, which also knows report numbers typed with spaces or other punctuation.
    ``store`` opens the store on demand (None: there is none), as most queries never need it."""
    guess = recognize(text)
    if guess is not None:
        ids = _lookup(searcher, schema, guess)
        if ids:
            return ids, guess
    table_ids = _table_lookup(store(), text)
    return (_in_index(searcher, schema, table_ids) if table_ids else []), guess


def _table_lookup(store: Store | None, text: str) -> list[str]:
    if store is None:
        return []
    try:
        match = id_table.lookup(store, text)
    except SearchNasaError:
        return []
    return list(match.record_ids) if match else []


def _in_index(searcher: tantivy.Searcher, schema: tantivy.Schema, ids: list[str]) -> list[str]:
    if not ids:
        return []
    result = searcher.search(Q.term_set_query(schema, "id", ids), limit=len(ids), count=False)
    found = {searcher.doc(addr).get_first("id") for _, addr in result.hits}
    return [rid for rid in ids if rid in found]


def _lookup(searcher: tantivy.Searcher, schema: tantivy.Schema, guess: IdentifierGuess) -> list[str]:
    if guess.ids:
        query = Q.term_set_query(schema, "id", list(guess.ids))
    else:
        query = Q.term_set_query(schema, "ident_raw", list(guess.values))
    result = searcher.search(query, limit=20, count=False)
    found = {searcher.doc(addr).get_first("id") for _, addr in result.hits}
    order = {rid: i for i, rid in enumerate(guess.ids)}
    return sorted(found, key=lambda rid: (order.get(rid, len(order)), rid))


def resolve_record_id(store: Store | None, text: str) -> str:
    """The one record id ``text`` names, wherever a record id is accepted (API paths, related
    papers, the CLI), read as the search box reads an identifier typed alone.

    ``ntrs:N``/``osti:N`` (any case, a pasted landing-page address too) is that id, checked by the
    caller's read; a bare number ``N`` is ``ntrs:N`` or ``osti:N``, whichever the store holds. The
    rule for a number both sources hold is to refuse it (:class:`AmbiguousId`, 409, naming both),
    never to pick one silently: the two are different works. Anything else is :class:`NotFound`.
    """
    if RECORD_ID.match(text or ""):
        return text
    query = id_table.recognize(text or "", max_length=200)
    if query is not None and query.kind == "id":
        return query.value
    if query is None or query.kind != "number" or not query.value.isdigit():
        raise NotFound(f"no record {(text or '')[:80]!r}: {ID_HINT}")
    candidates = [f"{source}:{query.value}" for source in ("ntrs", "osti")]
    held = [rid for rid in candidates if store is not None and store.exists(rid)]
    if len(held) > 1:
        raise AmbiguousId(f"{query.value} is a record id in both sources: use {held[0]} or {held[1]}")
    if not held:
        raise NotFound(f"no record with the number {query.value} in either source ({ID_HINT})")
    return held[0]
