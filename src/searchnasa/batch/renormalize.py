"""``searchnasa renormalize`` on Dask: workers re-map raw payloads, the driver upserts.

Re-mapping is pure (raw payload in, :class:`Record` out), so partitions of the store (id ranges,
in the order :meth:`Store.iter_raw` walks them) can go to any worker and be rerun if one dies;
the driver stays the store's single writer. Upserts are idempotent (content hash), so a rerun of
the whole job after a crash changes only what the crash left unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from searchnasa.errors import FormatError
from searchnasa.records import Record
from searchnasa.ingest.formats import FIDELITY, map_item
from searchnasa.store import Store, StoredItem, UpsertCounts
from searchnasa.batch.cluster import bounded_results

DEFAULT_PARTITION = 2000


def map_partition(items: list[tuple[str, str, Any]]) -> list[Record | str]:
    """The task a worker runs: each raw payload mapped to a Record, or the reason it cannot be."""
    out: list[Record | str] = []
    for rid, fmt, raw in items:
        try:
            out.append(map_item(fmt, raw))
        except FormatError as exc:
            out.append(f"{rid}: {exc.message}")
    return out


@dataclass
class RenormalizeReport:
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    failures: list[str] = field(default_factory=list)


def renormalize_distributed(client: Any, store: Store, partition_size: int = DEFAULT_PARTITION,
                            on_progress: Callable[[int], None] | None = None,
                            window: int | None = None) -> RenormalizeReport:
    """Re-map every stored payload on the cluster behind ``client`` and upsert the results."""
    report = RenormalizeReport()
    raw = store.iter_raw(batch_size=partition_size)

    def chunks() -> Iterator[list[tuple[str, str, Any]]]:
        while chunk := list(islice(raw, partition_size)):
            yield chunk

    def submit(chunk: list[tuple[str, str, Any]]) -> Any:
        return client.submit(map_partition, chunk, key=f"searchnasa-renormalize-{chunk[0][0]}-{len(chunk)}",
                             retries=1)

    for chunk, mapped in bounded_results(client, chunks(), submit, window):
        batch: list[StoredItem] = []
        for (rid, fmt, payload), result in zip(chunk, mapped):
            if isinstance(result, str):
                report.failures.append(result)
            else:
                batch.append(StoredItem(result, fmt, payload, FIDELITY.get(fmt, 3)))
        report.counts.add(store.upsert(batch))
        if on_progress:
            on_progress(len(chunk))
    return report
