"""``searchnasa renormalize`` in this process: re-map every stored raw payload with the current
mapping code and upsert the results (after a mapping fix, without re-harvesting).

The store keeps each record's raw payload and format, so re-mapping needs nothing else; upserts
are idempotent (content hash), so only records whose mapping changed get a new ``seq``. A payload
that no longer maps keeps its stored record and is reported. ``batch.renormalize`` runs the same
:func:`remap` on Dask workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from searchnasa.ingest.mapping import stored_items
from searchnasa.store import Store, StoredItem, UpsertCounts

BATCH_SIZE = 1000


@dataclass
class RenormalizeReport:
    """What a run changed, and each record whose payload could not be re-mapped (``id: why``)."""

    counts: UpsertCounts = field(default_factory=UpsertCounts)
    failures: list[str] = field(default_factory=list)


def remap(rows: Iterable[tuple[str, str, Any]]) -> tuple[list[StoredItem], list[str]]:
    """``(id, format, payload)`` rows from :meth:`Store.iter_raw` re-mapped, and the failures."""
    failures: list[str] = []
    items = list(stored_items(rows, lambda rid, exc: failures.append(f"{rid}: {exc.message}")))
    return items, failures


def renormalize_store(store: Store, on_progress: Callable[[int], None] | None = None,
                      batch_size: int = BATCH_SIZE) -> RenormalizeReport:
    """Re-map every stored payload in batches of ``batch_size``, each upserted in one transaction."""
    report = RenormalizeReport()
    raw = store.iter_raw()
    while True:
        chunk = list(islice(raw, batch_size))
        items, failures = remap(chunk)
        report.failures.extend(failures)
        report.counts.add(store.upsert(items))
        if on_progress:
            on_progress(len(items))
        if len(chunk) < batch_size:
            return report
