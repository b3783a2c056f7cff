"""A page of ranked hits as index addresses: the common output of the lexical and the fused page,
turned into cards only once the page is final (:mod:`.cards`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tantivy


@dataclass
class Ranked:
    """One hit on the page: where its stored card is, and its score."""

    address: Any  # a tantivy.DocAddress
    score: float


def lexical_page(searcher: tantivy.Searcher, query: tantivy.Query, sort: str, offset: int,
                 limit: int, count: bool = True) -> tuple[int | None, list[Ranked]]:
    """One page in relevance or date order; ties break by position (relevance) or id hash.
    The total is None when ``count`` is off (the caller counts elsewhere)."""
    if sort == "newest":
        result = searcher.search(query, limit=limit, offset=offset, count=count,
                                 order_by_field="newest_key", order=tantivy.Order.Desc)
    elif sort == "oldest":
        result = searcher.search(query, limit=limit, offset=offset, count=count,
                                 order_by_field="oldest_key", order=tantivy.Order.Asc)
    else:
        result = searcher.search(query, limit=limit, offset=offset, count=count)
    ranked = [Ranked(addr, float(score) if sort == "relevance" else 0.0) for score, addr in result.hits]
    return (int(result.count or 0) if count else None), ranked
