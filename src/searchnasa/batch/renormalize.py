"""``searchnasa renormalize``: in this process, or on Dask where workers re-map and the driver upserts.

Re-mapping is pure (raw payload in, :class:`StoredItem` out, :func:`searchnasa.ingest.renormalize.remap`),
so partitions of the store (id ranges, in the order :meth:`Store.iter_raw` walks them) can go to
any worker and be rerun if one dies; the driver stays the store's single writer. Upserts are
idempotent (content hash), so a rerun of the whole job after a crash changes only what the crash
left unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from searchnasa.ingest.renormalize import RenormalizeReport, remap, renormalize_store
from searchnasa.store import Store
from searchnasa.batch.cluster import LOCAL, batch_client, bounded_results

DEFAULT_PARTITION = 2000


def renormalize(store: Store, scheduler: str = LOCAL, workers: int = 2,
                on_progress: Callable[[int], None] | None = None) -> RenormalizeReport:
    """Re-map every stored payload where ``--scheduler`` says (see :mod:`searchnasa.batch.cluster`)."""
    if scheduler == LOCAL:
        return renormalize_store(store, on_progress=on_progress)
    with batch_client(scheduler, workers) as client:
        return renormalize_distributed(client, store, on_progress=on_progress)


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
        return client.submit(remap, chunk, key=f"searchnasa-renormalize-{chunk[0][0]}-{len(chunk)}",
                             retries=1)

    for chunk, (items, failures) in bounded_results(client, chunks(), submit, window):
        report.failures.extend(failures)
        report.counts.add(store.upsert(items))
        if on_progress:
            on_progress(len(chunk))
    return report
