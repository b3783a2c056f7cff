"""The records of a whole result set, in rank order, fetched one search page at a time: the input
of a streamed export (web ``/api/export``, ``searchnasa cite --query``). Memory stays at one page
of records whatever the limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from searchnasa.errors import NotFound
from searchnasa.records import Record
from searchnasa.search.schemas import MAX_PER_PAGE, SearchRequest, SearchResponse

if TYPE_CHECKING:
    from searchnasa.search.service import SearchService
    from searchnasa.store import Store


def iter_result_records(service: SearchService, req: SearchRequest, limit: int,
                        first: SearchResponse | None = None) -> Iterator[Record]:
    """Yield up to ``limit`` records matching ``req`` (its ``page``/``per_page`` are replaced).

    Every record is exported, copies of one work included (the search does not fold them); only
    records that match: a hybrid search's extras (close in meaning only) are not part of it.
    ``first`` is page 1 when the caller already fetched it (the web does, so errors surface
    before streaming).
    """
    req = req.model_copy(update={"page": 1, "per_page": MAX_PER_PAGE, "extras": False})
    resp = first if first is not None else service.search(req, fold_copies=False)
    page, sent = 1, 0
    while resp.results and sent < limit:
        ids = [h.id for h in resp.results][: limit - sent]
        found = service.store.get_many(ids)
        for rid in ids:
            if rid in found:
                yield found[rid]
        sent += len(ids)
        if page * MAX_PER_PAGE >= resp.total or sent >= limit:
            return
        page += 1
        resp = service.search(req.model_copy(update={"page": page}), fold_copies=False)


def selected_records(store: Store, ids: list[str]) -> list[Record]:
    """The records a user selected by id, once each in the order given: the input of an export of
    a selection (web ``/api/export?ids=``, ``searchnasa cite ID...``). An unknown id fails the whole
    export before anything is written (404 / one CLI line)."""
    wanted = list(dict.fromkeys(ids))
    found = store.get_many(wanted)
    missing = [rid for rid in wanted if rid not in found]
    if missing:
        raise NotFound(f"no record {', '.join(repr(m) for m in missing)}")
    return [found[rid] for rid in wanted]


def feed_records(service: SearchService, req: SearchRequest, entries: int) -> list[Any]:
    """The newest records matching ``req``, for an Atom feed: every record (copies of one work
    too, a feed reader follows each), as stored records, which carry the full date and every
    author (a search hit has only the year); a hit stands in for a record the store lacks."""
    req = req.model_copy(update={"sort": "newest", "page": 1, "per_page": entries, "mode": "lexical"})
    resp = service.search(req, fold_copies=False)
    found = service.store.get_many([hit.id for hit in resp.results])
    return [found.get(hit.id, hit) for hit in resp.results]
