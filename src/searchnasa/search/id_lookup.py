"""The records a query names when it is an identifier typed alone (DOI, NTRS/OSTI id, report
number): the search shows just those, and sends the user straight to a single one."""

from __future__ import annotations

from collections.abc import Callable

import tantivy

from searchnasa.errors import SearchNasaError
from searchnasa.search.identifiers import IdentifierGuess, recognize
from searchnasa.store import Store
from searchnasa.store import identifiers as id_table

Q = tantivy.Query


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
