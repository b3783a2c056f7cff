"""Import dump files into the store: read, map, upsert in batches, report what was skipped and why."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from searchnasa.errors import FormatError
from searchnasa.ingest.formats import FIDELITY, map_item, read_file
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
            in_file = 0  # position of the item in its file, for files without line numbers (JSON)
            try:
                for item in read_file(path, fmt):
                    if isinstance(item, FormatError):
                        report.problems.append(item.message)
                        continue
                    report.read += 1
                    in_file += 1
                    try:
                        record = map_item(item.format, item.payload)
                    except FormatError as exc:
                        where = item.path + (f":{item.line}" if item.line else f" item {in_file}")
                        report.problems.append(f"{where}: {exc.message}")
                        continue
                    batch.append(StoredItem(record, item.format, item.payload, FIDELITY.get(item.format, 3)))
                    if len(batch) >= batch_size:
                        flush()
            except FormatError as exc:
                report.problems.append(exc.message)
            flush()
    return report
