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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from searchnasa.records import Record
from searchnasa.semantic.embedder import Embedder, default_backend, record_text, text_key
from searchnasa.semantic.vectors import EmbedReport, VectorStore
from searchnasa.store import Store
from searchnasa.batch.cluster import bounded_results
from searchnasa.batch.partitions import ContiguousCheckpoint, SeqRange, seq_partitions

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
    rows: list[tuple[str, str, np.ndarray]] = field(default_factory=list)  # ready to write
    need_ids: list[str] = field(default_factory=list)
    need_keys: list[str] = field(default_factory=list)
    need_texts: list[str] = field(default_factory=list)


def _read_partition(store: Store, part: SeqRange) -> list[Record]:
    rows = store.conn.execute("SELECT record FROM records WHERE seq > ? AND seq <= ? ORDER BY seq",
                              (part.lo, part.hi)).fetchall()
    return [Record.from_json(r[0]) for r in rows]


def _prepare(store: Store, vstore: VectorStore, cache: Any, part: SeqRange, report: EmbedReport,
             only_cached: bool) -> _Job:
    """Sort a partition's records into unchanged, served by a cache, and needing the model."""
    job = _Job(part)
    records = _read_partition(store, part)
    texts = {rec.id: record_text(rec) for rec in records}
    keys = {rid: text_key(t) for rid, t in texts.items() if t}
    report.empty += len(texts) - len(keys)
    stored = vstore.keys_for(list(keys))
    todo = [rid for rid, k in keys.items() if stored.get(rid) != k]
    report.unchanged += len(keys) - len(todo)
    cached = cache.get_many([keys[r] for r in todo]) if (cache is not None and todo) else {}
    for rid in todo:
        if keys[rid] in cached:
            job.rows.append((rid, keys[rid], cached[keys[rid]]))
        elif not only_cached:
            job.need_ids.append(rid)
            job.need_keys.append(keys[rid])
            job.need_texts.append(texts[rid])
    report.from_cache += len(job.rows)
    return job


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
        for part in seq_partitions(store.conn, since, partition_size):
            yield _prepare(store, vstore, cache, part, report, only_cached)

    def submit(job: _Job) -> Any | None:
        if not job.need_texts:
            return None  # every text was cached or unchanged: nothing for the model
        return client.submit(encode_texts, job.need_texts, threads_per_worker, default_backend(),
                             key=f"searchnasa-embed-{since}-{job.part.lo}-{job.part.hi}", retries=1)

    for job, vecs in bounded_results(client, jobs(), submit, window):
        fresh: list[tuple[str, str, np.ndarray]] = []
        if vecs is not None:
            vecs = np.asarray(vecs, dtype=np.float32)
            if len(vecs) != len(job.need_ids):
                raise RuntimeError(f"partition {job.part.index}: {len(vecs)} vectors for "
                                   f"{len(job.need_ids)} texts")
            fresh = [(rid, key, vecs[i]) for i, (rid, key) in enumerate(zip(job.need_ids, job.need_keys))]
            report.embedded += len(fresh)
            if cache is not None and fresh:
                cache.put_many((key, vec) for _, key, vec in fresh)
        moved = checkpoint.done(job.part)
        vstore.put_many(job.rows + fresh, store_seq=None if only_cached else moved)
        report.seen += job.part.count
        if on_progress:
            on_progress(job.part.count)
    log.info("distributed embed: %s", report.summary())
    return report
