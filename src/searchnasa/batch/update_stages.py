"""The stages of ``searchnasa update`` after the lock is taken, each one library call it already
had (harvest, index, embed, dedup, identifier table), wrapped to report progress and to do
nothing when there is nothing to do (a run with nothing new upstream writes nothing).

Each function takes the running :class:`~searchnasa.batch.update.Pipeline` (its store, settings,
events and ``stage`` context) so that ordering and error mapping stay in one place, there.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from searchnasa.batch.freshness import note_newest_dates
from searchnasa.batch.update_harvest import harvest_source
from searchnasa.batch.update_report import StageReport
from searchnasa.errors import SearchNasaError, UpdateFailed
from searchnasa.profiles import Selection

if TYPE_CHECKING:
    from searchnasa.batch.update import Pipeline
    from searchnasa.semantic.vectors import EmbedReport


def harvest_stage(p: Pipeline, source: str) -> None:
    """Every selection of the profile for ``source``, incremental from its own checkpoint."""
    selections = p.profile.selections(source)
    name = f"harvest:{source}"
    if not selections:
        p.events.notice(f"{source}: not part of profile {p.profile.name}; not harvested")
        return
    with p.stage(name, f"harvest {source}") as report:
        def progress(selection: Selection, n: int, done: int, total: int | None) -> None:
            label = f"harvest {source}" + (f" {n}/{len(selections)} {selection.label}" if len(selections) > 1 else "")
            p.events.stage_progress(name, done, total, label)

        tally = harvest_source(source, p.profile, p.store, p.settings, rate=p.options.rate,
                               page_size=p.options.page_size, on_progress=progress,
                               reconcile=p.options.reconcile)
        p.report.sources[source] = tally
        report.records = tally.fetched
        report.detail = (f"{tally.new:,} new, {tally.changed:,} changed, {tally.unchanged:,} unchanged, "
                         f"{tally.withdrawn:,} withdrawn; {tally.requests:,} requests in {tally.walks} walk(s)")


def index_stage(p: Pipeline) -> None:
    """The lexical index catches up with the store (a corrupt one is rebuilt, after saying so)."""
    from searchnasa.index.build import build_index
    from searchnasa.index.update import rebuild_needed

    index_dir = p.settings.index_dir
    with p.stage("index", "lexical index") as report:
        rebuild = rebuild_needed(index_dir, lambda problem: p.events.notice(
            f"the index is corrupt ({problem}); rebuilding it from the store"))
        built = build_index(p.store, index_dir, rebuild=rebuild,
                            progress=lambda done, total: p.events.stage_progress("index", done, total))
        report.records = built.indexed
        report.detail = (f"{built.indexed:,} records indexed; {built.documents:,} documents in {built.generation}"
                         if built.indexed or built.full else f"already current ({built.generation})")


def semantic_unavailable() -> str | None:
    """Why the semantic stages cannot run here (None: the model is installed)."""
    try:
        from searchnasa.semantic.model import model_dir

        model_dir()
    except (ImportError, SearchNasaError) as exc:
        return f"no embedding model installed ({getattr(exc, 'message', exc)})"
    return None


class _EmbedEvents:
    """``batch.embed_home.EmbedEvents`` turned into the update's events; the serving index build
    at its end becomes the ``vectors`` stage (timed apart, failing with its own exit code)."""

    def __init__(self, p: Pipeline, report: StageReport) -> None:
        self.p = p
        self.report = report
        self.done = 0
        self.total: int | None = None
        self.index_seconds = 0.0
        self.result: EmbedReport | None = None
        self.count = 0

    def backend_switched(self, previous: str, chosen: str) -> None:
        self.p.events.notice(f"vectors in this home were made by the {previous} backend: "
                             f"re-embedding every record with {chosen}")

    def started(self, total: int, where: str | None) -> None:
        self.total = total
        self.p.events.stage_progress("embed", 0, total)

    def announce(self, line: str) -> None:
        self.p.events.notice(line)

    def advanced(self, n: int) -> None:
        self.done += n
        self.p.events.stage_progress("embed", self.done, self.total)

    def embedded(self, report: EmbedReport, count: int, seconds: float) -> None:
        self.result, self.count = report, count

    @contextmanager
    def preparing_index(self) -> Iterator[None]:
        self.report.name = "vectors"  # a failure from here on is the vector index's
        self.p.lock.stage("vectors")
        started = time.perf_counter()
        try:
            yield
        finally:
            self.index_seconds = time.perf_counter() - started


def embed_stage(p: Pipeline) -> None:
    """Embeddings for new and changed records, then the serving vector index; both skipped, with
    a notice, when the model is not installed or ``--no-semantic`` was given."""
    from searchnasa.batch.embed_home import EmbedOptions, embed_home
    why = "--no-semantic" if p.options.semantic is False else semantic_unavailable()
    if why is not None:
        p.events.notice(f"skipping embeddings and the vector index: {why}; lexical search is up to date")
        p.report.stages += [StageReport("embed", skipped=why), StageReport("vectors", skipped=why)]
        return
    with p.stage("embed", "embeddings") as report:
        events = _EmbedEvents(p, report)
        serving = embed_home(p.settings, EmbedOptions(), events)
        report.name = "embed"
        embedded = events.result
        report.records = embedded.seen if embedded else 0
        report.detail = embedded.summary() if embedded else ""
    report.seconds -= events.index_seconds
    vectors = StageReport("vectors", seconds=events.index_seconds, records=events.count,
                          detail=serving or "no vectors")
    p.report.stages.append(vectors)
    p.events.stage_finished(vectors)


def dedup_stage(p: Pipeline) -> None:
    """Duplicate clusters over the records changed since the last run (none changed: nothing)."""
    from searchnasa.dedup import load_config, records_to_compare, run_dedup

    todo = records_to_compare(p.store)
    with p.stage("dedup", "duplicate clusters", total=todo) as report:
        if todo == 0:
            report.skipped = "no record changed since the last run"
            return
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            p.events.stage_progress("dedup", done, todo)

        result = run_dedup(p.store, load_config(None, p.settings.home), vectors_dir=p.settings.vectors_dir,
                           on_progress=advance)
        report.records = result.scanned
        report.detail = result.summary()


def identifiers_stage(p: Pipeline) -> None:
    """The report/contract number table, then the newest record dates ``/api/status`` shows."""
    from searchnasa.store.identifiers import build_identifier_table

    with p.stage("identifiers", "identifier table") as report:
        report.records = build_identifier_table(p.store)
        note_newest_dates(p.store)


__all__ = ["UpdateFailed", "dedup_stage", "embed_stage", "harvest_stage", "identifiers_stage", "index_stage",
           "semantic_unavailable"]
