"""Import dump files into the store: read, map, upsert in batches, report what was skipped and why."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from searchnasa.errors import FormatError
from searchnasa.index.update import CorruptFn, IndexUpdate, finish_session, open_session
from searchnasa.ingest.formats import RawItem, read_file
from searchnasa.ingest.mapping import stored_items
from searchnasa.store import Store, StoredItem, UpsertCounts

BATCH_SIZE = 1000
# What a directory given to ``import`` contributes (PROVENANCE.md and the like are left out).
IMPORTABLE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".csv", ".gz")


def expand_paths(paths: Iterable[Path]) -> Iterator[Path]:
    """Files as given; a directory stands for the importable files under it, in sorted order."""
    for path in map(Path, paths):
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(IMPORTABLE_SUFFIXES))
            if not found:
                raise FormatError(f"no importable files ({', '.join(IMPORTABLE_SUFFIXES)}) in this directory",
                                  str(path))
            yield from found
        else:
            yield path


@dataclass
class ImportReport:
    """Counts for the summary line, and every problem with its path and line."""

    counts: UpsertCounts = field(default_factory=UpsertCounts)
    read: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> int:
        return len(self.problems)

    def summary(self) -> str:
        c = self.counts
        text = f"{c.new} new, {c.changed} changed, {c.unchanged} unchanged"
        if c.kept_richer:
            text += f", {c.kept_richer} kept (a richer copy is stored)"
        return text + f", {self.skipped} skipped"


def import_paths(
    store: Store,
    paths: Iterable[Path],
    fmt: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    batch_size: int = BATCH_SIZE,
    after_batch: Callable[[], object] | None = None,
) -> ImportReport:
    """Import every file (a directory: the importable files under it); a bad file or line is
    recorded in the report and the rest goes on.

    Records are committed in whole batches, so a crash leaves the store consistent and a re-run
    (idempotent upserts) completes the import. ``after_batch`` runs after each committed batch
    (``import --index`` feeds the index writer there, following the store's seq).
    """
    report = ImportReport()
    batch: list[StoredItem] = []

    def flush() -> None:
        if batch:
            report.counts.add(store.upsert(batch))
            if on_progress:
                on_progress(len(batch))
            batch.clear()
            if after_batch is not None:
                after_batch()

    for given in paths:
        try:
            files = list(expand_paths([given]))
        except FormatError as exc:
            report.problems.append(exc.message)
            continue
        for path in files:
            try:
                for item in stored_items(_raw_rows(path, fmt, report), partial(_unmappable, report)):
                    batch.append(item)
                    if len(batch) >= batch_size:
                        flush()
            except FormatError as exc:
                report.problems.append(exc.message)
            flush()
    return report


def _raw_rows(path: Path, fmt: str | None,
              report: ImportReport) -> Iterator[tuple[tuple[RawItem, int], str, Any]]:
    """``((item, position in its file), format, payload)`` for each item of one file; unreadable
    lines go to the report. The position names items of files without lines (JSON)."""
    in_file = 0
    for item in read_file(path, fmt):
        if isinstance(item, FormatError):
            report.problems.append(item.message)
            continue
        report.read += 1
        in_file += 1
        yield (item, in_file), item.format, item.payload


def _unmappable(report: ImportReport, key: tuple[RawItem, int], exc: FormatError) -> None:
    item, in_file = key
    where = item.path + (f":{item.line}" if item.line else f" item {in_file}")
    report.problems.append(f"{where}: {exc.message}")


def import_and_index(store: Store, paths: Iterable[Path], index_dir: Path, fmt: str | None = None,
                     on_progress: Callable[[int], None] | None = None,
                     on_corrupt: CorruptFn | None = None) -> tuple[ImportReport, IndexUpdate]:
    """``import --index``: import while an index writer follows the store, commit the index once.

    The writer indexes each committed batch while the next one is parsed. Anything that stops
    the import drops what the index was fed (the live index stays as it was); the store keeps
    what was imported and ``searchnasa index`` catches up.
    """
    session = open_session(store, index_dir, on_corrupt)
    try:
        report = import_paths(store, paths, fmt, on_progress=on_progress, after_batch=session.feed)
        update = finish_session(session, store)
    except BaseException:
        session.abort()
        raise
    return report, update
