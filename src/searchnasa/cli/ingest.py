"""Commands that write records into the store: ``import`` (dump files), ``load-sample`` (the
bundled sample) and ``renormalize`` (re-map stored raw payloads after a mapping fix)."""

from __future__ import annotations
import time
from pathlib import Path
from typing import Optional
import typer
from searchnasa.errors import BadInput
from searchnasa.ingest.importer import import_and_index, import_paths
from searchnasa.ingest.formats import FORMATS
from searchnasa.ingest.sample import load_bundled_sample
from searchnasa.cli.app import (
    HomeOption, SchedulerOption, WorkersOption, app, console, err_console, progress_bar, rate_advancer, settings_for, store_for,
)
from searchnasa.cli.index import warn_identifier_table


@app.command("import")
def import_cmd(
    paths: list[Path] = typer.Argument(
        ..., help="Files to import (format detected from content); a directory means the files under it."),
    format: Optional[str] = typer.Option(None, "--format", "-f", help=f"One of: {', '.join(FORMATS)}."),
    index: bool = typer.Option(False, "--index", help="Update the search index while importing "
                               "(same result as `searchnasa index` afterwards, in one command)."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Import dump files (NTRS API JSON/CSV, STI JSONL, OSTI API/Data Explorer JSON, OSTI CSV, our JSONL)."""
    if format is not None and format not in FORMATS:
        raise BadInput(f"unknown format {format!r}; known: {', '.join(FORMATS)}")
    store = store_for(home)
    started = time.perf_counter()
    update = None
    with progress_bar() as bar:
        task = bar.add_task("importing" + (" + indexing" if index else ""), total=None, rate="")
        advance = rate_advancer(bar, task, started)
        if index:
            report, update = import_and_index(store, paths, settings_for(home).index_dir, format,
                                              on_progress=advance, on_corrupt=_say_rebuilding)
        else:
            report = import_paths(store, paths, format, on_progress=advance)
    elapsed = time.perf_counter() - started
    for problem in report.problems:
        err_console.print(f"[yellow]skipped[/yellow] {problem}", highlight=False, soft_wrap=True)
    console.print(f"{report.summary()} ({report.read} read in {elapsed:.1f}s)", highlight=False)
    if update is not None:
        warn_identifier_table(update)
        built = update.build
        console.print(f"index {'full build' if built.full else 'update'}: {built.indexed:,} records indexed; "
                      f"{built.documents:,} documents in {built.generation}", highlight=False)
    if report.skipped:
        raise typer.Exit(1)


def _say_rebuilding(problem: str | None) -> None:
    err_console.print("the index is corrupt; rebuilding it from the store while importing", highlight=False)


@app.command()
def renormalize(
    scheduler: str = SchedulerOption,
    workers: int = WorkersOption,
    home: Optional[Path] = HomeOption,
) -> None:
    """Re-map every stored raw payload with the current mapping code (after a mapping fix)."""
    from searchnasa.batch.renormalize import renormalize as run_renormalize

    store = store_for(home)
    with progress_bar() as bar:
        task = bar.add_task("renormalizing", total=store.count(), rate="")
        report = run_renormalize(store, scheduler, workers, on_progress=lambda n: bar.advance(task, n))
    totals, failures = report.counts, report.failures
    for failure in failures:
        err_console.print(f"[yellow]kept as stored[/yellow] {failure}", highlight=False)
    console.print(f"{totals.changed} changed, {totals.unchanged} unchanged, {len(failures)} could not be re-mapped")
    if failures:
        raise typer.Exit(1)


@app.command("load-sample")
def load_sample(
    force: bool = typer.Option(False, "--force", help="Import even if the store already holds records."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Load the bundled sample (real NTRS and OSTI records) into an empty store."""
    store = store_for(home)
    report = load_bundled_sample(store, force=force)
    if report is None:
        console.print(f"store already holds {store.count():,} records; sample not loaded (use --force)")
        return
    console.print(f"bundled sample: {report.summary()}")
    if report.skipped:
        raise typer.Exit(1)
