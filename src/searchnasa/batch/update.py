"""``searchnasa update``: the whole mirror pipeline as one resumable, lock-guarded library call.

harvest (each source, each profile selection, incremental from its checkpoint) -> lexical index
-> embeddings -> vector index -> duplicate clusters -> identifier table -> freshness.

Why it can run from cron while ``serve`` answers: every stage was already incremental by the
store's ``seq`` and atomic for readers (a harvest page commits with its checkpoint, the index
commits or swaps a generation at once, vectors commit per batch and the provider reloads), so a
run killed anywhere leaves a home the next run finishes, and a reader never sees a half state.
What this module adds: the order, one lock per home (``batch/lock.py``), skipping stages with
nothing to do (so a run with nothing new upstream writes nothing), and one report.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from searchnasa.batch import update_stages as stages
from searchnasa.batch.lock import UpdateLock
from searchnasa.batch.update_report import StageReport, UpdateEvents, UpdateOptions, UpdateReport
from searchnasa.errors import BadInput, SearchNasaError, UpdateFailed
from searchnasa.profiles import SOURCES, Profile, active_profile, everything, load_profile, save_active
from searchnasa.settings import Settings, env_value
from searchnasa.store import Store, open_store

STAGES = ("harvest", "index", "embed", "vectors", "dedup", "identifiers")
EXIT_CODES = {"lock": 3, "harvest": 10, "index": 11, "embed": 12, "vectors": 13, "dedup": 14,
              "identifiers": 15}


def resolve_profile(settings: Settings, requested: str | None) -> tuple[Profile, bool]:
    """The profile to run under and whether it becomes the home's active one: ``--profile``,
    else ``SEARCHNASA_PROFILE``, else the home's own, else everything (today's page text)."""
    chosen = requested or env_value("PROFILE") or None
    if chosen:
        return load_profile(chosen), True
    return active_profile(settings.home) or everything(), False


class Pipeline:
    """One run over one home, stage by stage; each stage timed, failures mapped to exit codes."""

    def __init__(self, settings: Settings, options: UpdateOptions, events: UpdateEvents, lock: UpdateLock) -> None:
        self.settings = settings
        self.options = options
        self.events = events
        self.lock = lock
        self.profile, self.save = resolve_profile(settings, options.profile)
        self.report = UpdateReport(profile=self.profile.name if (self.save or active_profile(settings.home)) else None)
        self.store: Store = open_store(settings.home)

    @contextmanager
    def stage(self, name: str, label: str, total: int | None = None) -> Iterator[StageReport]:
        """Run a stage: announce it, write it into the lock, time it, map its failure."""
        report = StageReport(name)
        self.lock.stage(name)
        self.events.stage_started(name, label, total)
        started = time.perf_counter()
        try:
            yield report
        except UpdateFailed:
            raise
        except SearchNasaError as exc:
            raise _failed(report.name, exc.message) from exc
        except Exception as exc:  # noqa: BLE001  one line for the operator, never a traceback
            raise _failed(report.name, f"{type(exc).__name__}: {exc}") from exc
        report.seconds = time.perf_counter() - started
        self.report.stages.append(report)
        self.events.stage_finished(report)

    def run(self) -> UpdateReport:
        started = time.perf_counter()
        if self.save:
            save_active(self.settings.home, self.profile)
        try:
            for source in self.options.sources:
                stages.harvest_stage(self, source)
            stages.index_stage(self)
            stages.embed_stage(self)
            stages.dedup_stage(self)
            stages.identifiers_stage(self)
        finally:
            self.store.close()
        self.report.seconds = time.perf_counter() - started
        return self.report


def _failed(stage: str, message: str) -> UpdateFailed:
    return UpdateFailed(f"update stopped in stage {stage}: {message}; what earlier stages did is kept: "
                        "run `searchnasa update` again to resume from there", stage,
                        EXIT_CODES[stage.split(":")[0]])


def check_sources(sources: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [s for s in sources if s not in SOURCES]
    if unknown or not sources:
        raise BadInput(f"unknown source(s) {', '.join(unknown) or '(none)'}; choose from: {', '.join(SOURCES)}")
    return tuple(dict.fromkeys(sources))


def run_update(settings: Settings, options: UpdateOptions, events: UpdateEvents) -> UpdateReport:
    """``searchnasa update`` on a home: take the lock (or refuse), run every stage, release."""
    options.sources = check_sources(options.sources)
    with UpdateLock(settings.home) as lock:
        if lock.took_over is not None:
            events.notice(f"took over the lock of an update that stopped without releasing it "
                          f"(pid {lock.took_over.pid}, stage {lock.took_over.stage}); resuming")
        pipeline = Pipeline(settings, options, events, lock)
        if lock.took_over is not None:
            pipeline.report.took_over = {"pid": lock.took_over.pid, "stage": lock.took_over.stage}
        return pipeline.run()


__all__ = ["EXIT_CODES", "STAGES", "Pipeline", "StageReport", "UpdateEvents", "UpdateOptions",
           "UpdateReport", "resolve_profile", "run_update"]
