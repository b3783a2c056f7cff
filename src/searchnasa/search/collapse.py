"""One card per work on a results page: later copies of a work already shown are folded into the
first card's ``also_in`` list, which links to every other copy (on the page or not).

The search service folds every page it answers (``SearchService.search``, unless asked not to).
Folding is per page: it needs only the page's ids (one bulk cluster lookup), keeps pagination
stable, and leaves ``total`` counting records, which the response says (``count_unit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from searchnasa.store import Store
from searchnasa.store.clusters import clusters_for


class _Hit(Protocol):
    id: str
    also_in: list[dict[str, str]]


H = TypeVar("H", bound=_Hit)


def collapse_hits(store: Store, hits: Sequence[H]) -> tuple[list[H], int]:
    """``(cards, folded)``: the hits with copies folded into the first one, and how many were folded."""
    clusters = clusters_for(store, [h.id for h in hits])
    if not clusters:
        return list(hits), 0
    shown: set[str] = set()
    cards: list[H] = []
    folded = 0
    for hit in hits:
        cluster = clusters.get(hit.id)
        if cluster is None:
            cards.append(hit)
            continue
        if cluster.id in shown:
            folded += 1
            continue
        shown.add(cluster.id)
        hit.also_in = cluster.also_in(hit.id)
        cards.append(hit)
    return cards, folded
