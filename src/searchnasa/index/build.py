"""Build the lexical index from the store: incremental by default, atomic always.

Incremental: only records whose store ``seq`` is above the generation's ``last_seq`` are
(re)indexed, each as delete-by-id then add, in one commit. A record withdrawn upstream
(``store/withdrawn.py``) is only deleted: the index never returns it, while the store keeps it. Atomic: Tantivy publishes a commit all
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

from searchnasa.errors import SearchNasaError
from searchnasa.records import Record
from searchnasa.index import layout
from searchnasa.index.documents import document_json, record_json_document
from searchnasa.index.schema import build_schema
from searchnasa.store import Store
from searchnasa.store.withdrawn import iter_index_rows_since

log = logging.getLogger(__name__)

Progress = Callable[[int, int | None], None]
"""Called as ``progress(done, total)``; ``total`` is None when unknown."""

# Tantivy splits this between its indexing threads; each thread flushes a segment when its share is
# full, and segments are merged 8 at a time. A larger heap means fewer, larger first segments and
# so less merging at millions of records (merging is the costly part of a large build); the
# process holds up to about this much memory for the writer while indexing.
WRITER_HEAP = 1_000_000_000


class RecordSource(Protocol):
    """What the builder needs from a store (the :class:`~searchnasa.store.Store` satisfies it).

    A source that also has ``iter_json_since(since_seq)`` (``(seq, stored JSON)`` pairs, as the
    store does) is read through it: the JSON goes straight into documents, with no model in between.
    """

    def iter_records(self, since_seq: int = 0) -> Iterator[tuple[int, Record]]: ...

    def max_seq(self) -> int: ...


def _documents(store: RecordSource, since_seq: int) -> Iterator[tuple[int, str, str | None]]:
    """``(seq, record id, document JSON)`` for every record changed since ``since_seq``; the
    document is None for a record withdrawn upstream (delete it, add nothing)."""
    if isinstance(store, Store):
        for seq, blob, gone in iter_index_rows_since(store, since_seq):
            rid, doc = record_json_document(blob)
            yield seq, rid, None if gone else doc
        return
    raw = getattr(store, "iter_json_since", None)
    if callable(raw):
        for seq, blob in raw(since_seq):
            rid, doc = record_json_document(blob)
            yield seq, rid, doc
        return
    for seq, record in store.iter_records(since_seq=since_seq):
        yield seq, record.id, document_json(record.model_dump(mode="json"))


@dataclass
class BuildReport:
    """What a build did: records (re)indexed, the generation, whether it was a full build."""

    indexed: int
    generation: str
    full: bool
    last_seq: int
    documents: int
    dropped: int = 0


def _pending(store: RecordSource, since_seq: int) -> int | None:
    """How many records changed since ``since_seq``, when the store can say cheaply."""
    counter = getattr(store, "count_since", None)
    return int(counter(since_seq)) if callable(counter) else None


def _threads() -> int:
    return max(1, min(4, (os.cpu_count() or 1)))


class IndexSession:
    """An open index writer that follows the store's ``seq``: :meth:`feed` indexes every record the
    store holds above what was fed so far, :meth:`commit` publishes it all at once.

    ``searchnasa index`` opens one, feeds once and commits; ``searchnasa import --index`` feeds
    after every committed import batch (Tantivy's indexing threads run while the import parses the
    next batch), and commits once at the end. A crash before the commit leaves the live index as it was (a full build's generation is never published) and the
    store holds every imported record, so the next ``searchnasa index`` catches up from the
    generation's ``last_seq``.
    """

    def __init__(self, store: RecordSource, index_dir: Path, rebuild: bool = False,
                 progress: Progress | None = None, commit_every: int = 0) -> None:
        self.store = store
        self.index_dir = Path(index_dir)
        self.progress = progress
        self.commit_every = commit_every
        for name in layout.remove_abandoned_generations(self.index_dir):
            log.warning("removed %s, a rebuild that was stopped before it finished", name)
        generation = layout.current_generation(self.index_dir)
        state = layout.read_state(generation) if generation else None
        self.full = rebuild or generation is None or state is None or layout.stale_reason(state) is not None
        if self.full:
            generation = layout.new_generation(self.index_dir)
            state = layout.fresh_state()
        assert generation is not None and state is not None
        self.generation, self.state = generation, state
        self.index = tantivy.Index(build_schema(), path=str(generation), reuse=not self.full)
        self.last_seq = state.last_seq
        self.done = 0
        self.dropped = 0
        self.total: int | None = None
        self._writer: tantivy.IndexWriter | None = None
        self._closed = False

    def _open_writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            self._writer = self.index.writer(heap_size=WRITER_HEAP, num_threads=_threads())
        return self._writer

    def feed(self, total: int | None = None) -> int:
        """Index every record changed since the last fed ``seq``; how many were added."""
        self.total = total
        if self._closed:
            raise RuntimeError("this index session is closed")
        writer = None
        added = 0
        try:
            for seq, rid, doc in _documents(self.store, self.last_seq):
                writer = writer or self._open_writer()
                if not self.full:
                    writer.delete_documents_by_term("id", rid)
                self.last_seq = max(self.last_seq, seq)
                if doc is None:  # withdrawn upstream: out of the index, kept in the store
                    self.dropped += 1
                    continue
                writer.add_json(doc)
                added += 1
                self.done += 1
                if self.progress is not None and self.done % 1000 == 0:
                    self.progress(self.done, total)
                if self.commit_every and not self.full and self.done % self.commit_every == 0:
                    writer.commit()
                    self.state.last_seq = self.last_seq
                    layout.write_state(self.generation, self.state)
        except BaseException as exc:
            self.abort(exc)
            raise self._disk_full(exc) or exc
        return added

    def commit(self) -> BuildReport:
        """Commit what was fed (one Tantivy commit), record ``last_seq``, publish a full build."""
        if self._closed:
            raise RuntimeError("this index session is closed")
        try:
            if self._writer is not None:
                self._writer.commit()
                self._writer.wait_merging_threads()
            elif self.full:  # an empty store still gets a valid, empty generation
                writer = self._open_writer()
                writer.commit()
                writer.wait_merging_threads()
        except BaseException as exc:
            self.abort(exc)
            raise self._disk_full(exc) or exc
        self._closed = True
        self.index.reload()
        self.state.last_seq = self.last_seq
        self.state.documents = self.index.searcher().num_docs
        layout.write_state(self.generation, self.state)
        if self.full:
            layout.publish(self.index_dir, self.generation)
        if self.progress is not None:
            self.progress(self.done, self.total)
        log.info("indexed %d records into %s (full=%s)", self.done, self.generation.name, self.full)
        return BuildReport(self.done, self.generation.name, self.full, self.last_seq, self.state.documents,
                           self.dropped)

    def abort(self, exc: BaseException | None = None) -> None:
        """Drop what was fed since the last commit; a full build's unpublished generation goes."""
        if self._closed:
            return
        self._closed = True
        if self._writer is not None:
            try:
                self._writer.rollback()
            except Exception:  # the writer may already be unusable; the previous commit stands
                log.debug("rollback failed", exc_info=True)
        if self.full:  # never published: give its disk space back
            self._writer = None
            shutil.rmtree(self.generation, ignore_errors=True)

    def _disk_full(self, exc: BaseException) -> SearchNasaError | None:
        if getattr(exc, "errno", None) == errno.ENOSPC or "No space left on device" in str(exc):
            err = SearchNasaError(f"disk full while writing the index under {self.index_dir}; "
                                  "the live index is unchanged")
            err.__cause__ = exc
            return err
        return None


def build_index(store: RecordSource, index_dir: Path, progress: Progress | None = None,
                rebuild: bool = False, commit_every: int = 0) -> BuildReport:
    """Bring the index at ``index_dir`` up to date with ``store``.

    ``rebuild`` (or a schema change) builds a fresh generation and swaps it in when complete.
    ``commit_every`` > 0 commits an incremental build in batches (resumable, but a reader may see
    part of the batch set); 0 means one commit, all or nothing.
    """
    session = IndexSession(store, index_dir, rebuild=rebuild, progress=progress, commit_every=commit_every)
    total = _pending(store, session.last_seq)
    if not session.full and total == 0:
        session.abort()
        return BuildReport(0, session.generation.name, False, session.state.last_seq, session.state.documents)
    session.feed(total)
    return session.commit()
