"""``searchnasa embed`` on Dask: workers turn texts into vectors, the driver does everything else.

Per partition (a seq range of the store) the driver reads the records, computes each text key,
drops records whose stored vector already matches (unchanged) or whose vector a cache holds, and
submits only the texts that need the model. A worker embeds them with its process's model (loaded
once per worker process, see :func:`_worker_embedder`) and returns float32 vectors. The driver
writes them through :meth:`VectorStore.put_many`, the single writer.

Why no vector is lost or doubled when a worker dies: a partition's result reaches the driver only
through its future, which Dask recomputes on another worker if the first one died; rows are keyed
by record id (``INSERT OR REPLACE``), so even a repeated partition writes each vector once. The
resume checkpoint moves only past partitions that are written *and* have no unwritten partition
before them, so a killed driver resumes without a gap, and whatever was written after the
checkpoint is skipped on the rerun as unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from searchnasa.batch.cluster import bounded_results
from searchnasa.batch.partitions import ContiguousCheckpoint, SeqRange, seq_partitions
from searchnasa.records import Record
from searchnasa.semantic.embedder import Embedder
from searchnasa.semantic.model import default_backend
from searchnasa.semantic.vectors import EmbedReport, PendingBatch, VectorStore, sort_pending
from searchnasa.store import Store

log = logging.getLogger(__name__)

DEFAULT_PARTITION = 256
ENCODE_BATCH = 32  # the same inner batch as the in-process path, so vectors match


@lru_cache(maxsize=2)
def _worker_embedder(threads: int, backend: str | None = None) -> Embedder:
    """One model per worker process (loading takes seconds; every later partition reuses it)."""
    return Embedder(threads=threads or None, backend=backend)


def encode_texts(texts: list[str], threads: int = 1, backend: str | None = None) -> np.ndarray:
    """The task a worker runs: unit vectors for ``texts`` (pure, so Dask may rerun it anywhere).
    ``backend`` is the driver's, so a remote worker never embeds with another one than the keys name."""
    return _worker_embedder(threads, backend).encode(texts, batch_size=ENCODE_BATCH)


@dataclass
class _Job:
    """One partition on its way through the driver."""

    part: SeqRange
    pending: PendingBatch


def embed_distributed(
    client: Any,
    store: Store,
    vstore: VectorStore,
    cache: Any = None,
    partition_size: int = DEFAULT_PARTITION,
    threads_per_worker: int = 1,
    on_progress: Callable[[int], None] | None = None,
    window: int | None = None,
    only_cached: bool = False,
) -> EmbedReport:
    """Embed the store's new and changed records on the Dask cluster behind ``client``.

    Same result as :meth:`VectorStore.embed_pending` (the in-process path), same resume point
    (:attr:`VectorStore.checkpoint_seq`). ``window`` caps the partitions in flight (default twice
    the workers, plus one) so the driver never holds more than a few partitions of texts.
    """
    report = EmbedReport()
    since = vstore.checkpoint_seq
    checkpoint = ContiguousCheckpoint(since)

    def jobs() -> Iterator[_Job]:
        with store.reading() as conn:
            parts = list(seq_partitions(conn, since, partition_size))
        for part in parts:
            records = [Record.from_json(blob) for _, blob in store.json_between(part.lo, part.hi)]
            yield _Job(part, sort_pending(records, vstore, cache, report, only_cached))

    def submit(job: _Job) -> Any | None:
        if not job.pending.need:
            return None  # every text was cached or unchanged: nothing for the model
        return client.submit(encode_texts, job.pending.need_texts(), threads_per_worker, default_backend(),
                             key=f"searchnasa-embed-{since}-{job.part.lo}-{job.part.hi}", retries=1)

    for job, vecs in bounded_results(client, jobs(), submit, window):
        fresh: dict[str, np.ndarray] = {}
        if vecs is not None:
            vecs = np.asarray(vecs, dtype=np.float32)
            if len(vecs) != len(job.pending.need):
                raise RuntimeError(f"partition {job.part.index}: {len(vecs)} vectors for "
                                   f"{len(job.pending.need)} texts")
            fresh = job.pending.fresh(vecs, report, cache)
        moved = checkpoint.done(job.part)
        vstore.put_many(job.pending.rows(fresh), store_seq=None if only_cached else moved)
        report.seen += job.part.count
        if on_progress:
            on_progress(job.part.count)
    log.info("distributed embed: %s", report.summary())
    return report
