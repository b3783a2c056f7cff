"""Build the lexical index from the store: incremental by default, atomic always.

Incremental: only records whose store ``seq`` is above the generation's ``last_seq`` are
(re)indexed, each as delete-by-id then add, in one commit. Atomic: Tantivy publishes a commit all
at once, and a full rebuild goes to a new generation that replaces the old one only when complete
(see :mod:`.layout`).
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import tantivy

from ..errors import SearchNasaError
from ..records import Record
from . import layout
from .documents import to_document
from .schema import SCHEMA_VERSION, build_schema

log = logging.getLogger(__name__)

Progress = Callable[[int, int | None], None]
"""Called as ``progress(done, total)``; ``total`` is None when unknown."""

WRITER_HEAP = 256_000_000


class RecordSource(Protocol):
    """What the builder needs from a store (the :class:`~searchnasa.store.Store` satisfies it)."""

    def iter_records(self, since_seq: int = 0) -> Iterator[tuple[int, Record]]: ...

    def max_seq(self) -> int: ...


@dataclass
class BuildReport:
    """What a build did: records (re)indexed, the generation, whether it was a full build."""

    indexed: int
    generation: str
    full: bool
    last_seq: int
    documents: int


def _pending(store: RecordSource, since_seq: int) -> int | None:
    """How many records changed since ``since_seq``, when the store can say cheaply."""
    counter = getattr(store, "count_since", None)
    if callable(counter):
        return int(counter(since_seq))
    conn = getattr(store, "conn", None)
    if conn is not None:
        return conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (since_seq,)).fetchone()[0]
    return None


def _threads() -> int:
    return max(1, min(4, (os.cpu_count() or 1)))


def build_index(store: RecordSource, index_dir: Path, progress: Progress | None = None,
                rebuild: bool = False, commit_every: int = 0) -> BuildReport:
    """Bring the index at ``index_dir`` up to date with ``store``.

    ``rebuild`` (or a schema change) builds a fresh generation and swaps it in when complete.
    ``commit_every`` > 0 commits an incremental build in batches (resumable, but a reader may see
    part of the batch set); 0 means one commit, all or nothing.
    """
    index_dir = Path(index_dir)
    generation = layout.current_generation(index_dir)
    state = layout.read_state(generation) if generation else None
    full = rebuild or generation is None or state is None or state.schema_version != SCHEMA_VERSION
    if full:
        generation = layout.new_generation(index_dir)
        state = layout.GenerationState(schema_version=SCHEMA_VERSION)
    assert generation is not None and state is not None
    index = tantivy.Index(build_schema(), path=str(generation), reuse=not full)
    since = state.last_seq
    total = _pending(store, since)
    if not full and total == 0:
        return BuildReport(0, generation.name, False, state.last_seq, state.documents)
    writer = index.writer(heap_size=WRITER_HEAP, num_threads=_threads())
    done = 0
    last_seq = since
    try:
        for seq, record in store.iter_records(since_seq=since):
            if not full:
                writer.delete_documents_by_term("id", record.id)
            writer.add_document(to_document(record))
            done += 1
            last_seq = max(last_seq, seq)
            if progress is not None and done % 1000 == 0:
                progress(done, total)
            if commit_every and not full and done % commit_every == 0:
                writer.commit()
                state.last_seq = last_seq
                layout.write_state(generation, state)
        writer.commit()
        writer.wait_merging_threads()
    except BaseException as exc:
        try:
            writer.rollback()
        except Exception:  # the writer may already be unusable; the previous commit stands
            log.debug("rollback failed", exc_info=True)
        if full:  # never published: give its disk space back
            shutil.rmtree(generation, ignore_errors=True)
        if getattr(exc, "errno", None) == errno.ENOSPC or "No space left on device" in str(exc):
            raise SearchNasaError(f"disk full while writing the index under {index_dir}; "
                                  "the live index is unchanged") from exc
        raise
    index.reload()
    state.last_seq = last_seq
    state.documents = index.searcher().num_docs
    layout.write_state(generation, state)
    if full:
        layout.publish(index_dir, generation)
    if progress is not None:
        progress(done, total)
    log.info("indexed %d records into %s (full=%s)", done, generation.name, full)
    return BuildReport(done, generation.name, full, last_seq, state.documents)
