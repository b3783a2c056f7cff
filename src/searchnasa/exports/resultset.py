"""The records of a whole result set, in rank order, fetched one search page at a time: the input
of a streamed export (web ``/api/export``, ``searchnasa cite --query``). Memory stays at one page
of records whatever the limit."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from searchnasa.records import Record
from searchnasa.search.schemas import MAX_PER_PAGE, SearchRequest, SearchResponse

if TYPE_CHECKING:
    from searchnasa.search.service import SearchService


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
