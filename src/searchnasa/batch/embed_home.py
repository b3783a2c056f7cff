"""``searchnasa embed`` as one library call: embed a home's new and changed records, in this
process or on Dask, then leave the vector index a server needs built.

The command only parses its options, calls :func:`embed_home` and renders what the run reports
through :class:`EmbedEvents` (progress, notices, the summary). Everything else is decided here:
which backend and index kind, whether the home must be walked again because its vectors were
made by the other backend, which caches serve, where the work runs, and the serving index built
at the end so that a server never builds it in front of a user.
"""

from __future__ import annotations

import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from searchnasa.batch.cluster import LOCAL, batch_client, check_scheduler, describe_scheduler
from searchnasa.batch.embed import embed_distributed
from searchnasa.errors import BadInput
from searchnasa.semantic import bundle
from searchnasa.semantic.ann import check_kind
from searchnasa.semantic.cache import open_default_cache
from searchnasa.semantic.embedder import Embedder
from searchnasa.semantic.model import BACKENDS, check_backend, record_text, use_backend
from searchnasa.semantic.onnx_export import ensure_onnx_model
from searchnasa.semantic.provider import prepare_serving_index
from searchnasa.semantic.sentence_vectors import SentenceStore, embed_sentences_pending
from searchnasa.semantic.text_keys import text_key
from searchnasa.semantic.vectors import EmbedReport, VectorStore
from searchnasa.settings import Settings
from searchnasa.store import Store, open_store

BACKEND_PROBE = 64  # stored vectors looked at to tell which backend made a home's vectors


@dataclass
class EmbedOptions:
    """What ``searchnasa embed`` was asked (None: the setting, see :class:`~searchnasa.settings.Settings`)."""

    batch_size: int = 128
    use_cache: bool = True
    threads: int = 0           # model threads; 0: all cores (per Dask worker: 1)
    backend: str | None = None
    vector_index: str | None = None
    scheduler: str = LOCAL
    workers: int = 2
    sentences: bool = False    # also embed each record's sentences (related papers' re-rank), in this process


class EmbedEvents(Protocol):
    """What a run tells its caller, in this order (the CLI renders each)."""

    def backend_switched(self, previous: str, chosen: str) -> None:
        """The home's vectors were made by ``previous``: every record is walked again."""

    def started(self, total: int, where: str | None) -> None:
        """``total`` records to walk; ``where``: the Dask cluster they go to (None: this process)."""

    def announce(self, line: str) -> None:
        """A one-time pause is starting (the ONNX model being exported)."""

    def advanced(self, n: int) -> None:
        """``n`` more records walked."""

    def embedded(self, report: EmbedReport, count: int, seconds: float) -> None:
        """Embedding is done: what it did, how many vectors the home now holds, how long it took."""

    def preparing_index(self) -> AbstractContextManager[object]:
        """Held while the serving index is built (only when the home holds vectors)."""


def embed_home(settings: Settings, options: EmbedOptions, events: EmbedEvents) -> str | None:
    """Run ``searchnasa embed`` on a home; returns how its vectors will be served (None: it holds none)."""
    check_scheduler(options.scheduler, options.workers)
    kind = options.vector_index or settings.vector_index or None
    if kind is not None:
        check_kind(kind)
    # Set for the whole process (and Dask workers it starts): every vector key computed from here
    # on names this backend, so vectors of the two backends are never mixed.
    chosen = use_backend(check_backend(options.backend or settings.embed_backend))
    if not settings.store_path.exists():
        raise BadInput(f"no store at {settings.store_path}: import or load records first")
    store = open_store(settings.home)
    vstore = VectorStore(settings.vectors_dir)
    try:
        previous = _other_backend(store, vstore, chosen)
        if previous is not None:
            events.backend_switched(previous, chosen)
            vstore.set_meta("store_seq", "0")
        started = time.perf_counter()
        report = _embed(store, vstore, options, chosen, events)
        count = vstore.count()
        if options.sentences:
            _embed_sentences(settings, store, options, reset=previous is not None, events=events)
    finally:
        vstore.close()
        store.close()
    events.embedded(report, count, time.perf_counter() - started)
    if not count:
        return None
    with events.preparing_index():
        return prepare_serving_index(settings.vectors_dir, kind)


def _embed(store: Store, vstore: VectorStore, options: EmbedOptions, chosen: str,
           events: EmbedEvents) -> EmbedReport:
    """Walk the records changed since the checkpoint, on Dask when asked and there is work."""
    since = vstore.checkpoint_seq
    total = store.count_since(since)
    chain = bundle.ChainCache(bundle.load_bundle(), open_default_cache() if options.use_cache else None)
    try:
        if options.scheduler != LOCAL and total:  # Dask: partitions of batch_size records, written here
            events.started(total, describe_scheduler(options.scheduler, options.workers))
            with batch_client(options.scheduler, options.workers) as client:
                return embed_distributed(client, store, vstore, cache=chain, partition_size=options.batch_size,
                                         threads_per_worker=options.threads or 1, on_progress=events.advanced)
        events.started(total, None)
        embedder = None
        if total and chosen == "onnx":  # a first use exports the model: say so, then build it
            ensure_onnx_model(announce=events.announce)
        if total and options.threads:
            embedder = Embedder(threads=options.threads, backend=chosen)
        return vstore.embed_pending(store.iter_records(since), embedder=embedder, cache=chain,
                                    batch_size=options.batch_size, on_batch=events.advanced)
    finally:
        chain.close()


def _embed_sentences(settings: Settings, store: Store, options: EmbedOptions, reset: bool,
                     events: EmbedEvents) -> None:
    """Sentence vectors for records new or changed since their own checkpoint (always in this
    process: they cost 2-3x the record vectors, see bench/README.md "Sentence vectors")."""
    sstore = SentenceStore(settings.vectors_dir)
    try:
        since = 0 if reset else sstore.checkpoint_seq
    finally:
        sstore.close()
    total = store.count_since(since)
    events.announce(f"sentence vectors: {total} records to walk")
    started = time.perf_counter()
    # the bundled sample's sentences first (as for record vectors): a sample home embeds none of them
    cache = bundle.ChainCache(bundle.load_sentence_bundle(), open_default_cache() if options.use_cache else None)
    embedder = Embedder(threads=options.threads or None) if total else None
    try:
        report = embed_sentences_pending(settings.vectors_dir, store.iter_records(since), embedder=embedder,
                                         cache=cache, batch_size=options.batch_size)
    finally:
        cache.close()
    events.announce(f"sentence vectors: {report.seen} records walked, {report.embedded} sentences embedded, "
                    f"{report.unchanged} unchanged, in {time.perf_counter() - started:.0f} s")


def _other_backend(store: Store, vstore: VectorStore, chosen: str) -> str | None:
    """The other backend, when it made the home's vectors and ``chosen`` made none of them.

    A vector's key names the backend that made it (:func:`~searchnasa.semantic.text_keys.text_key`),
    so the resumed walk re-embeds each record whose stored key is the other backend's; but the
    records before the checkpoint would keep their old vectors and the home would mix the two, so
    the caller walks every record again. Which backend made the vectors is read off a probe of
    stored keys: no extra bookkeeping.
    """
    rows = vstore.sample_keys(BACKEND_PROBE)
    if not rows:
        return None
    records = store.get_many([rid for rid, _ in rows])
    made_by: dict[str, int] = {}
    for rid, key in rows:
        rec = records.get(rid)
        if rec is None:
            continue
        text = record_text(rec)
        for name in BACKENDS:
            if text_key(text, name) == key:
                made_by[name] = made_by.get(name, 0) + 1
    others = {name: n for name, n in made_by.items() if name != chosen}
    if others and made_by.get(chosen, 0) == 0:
        return max(others, key=others.__getitem__)
    return None
