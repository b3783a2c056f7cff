"""Commands that write records into the store: ``import`` (dump files), ``load-sample`` (the
bundled sample) and ``renormalize`` (re-map stored raw payloads after a mapping fix)."""

from __future__ import annotations
import time
from pathlib import Path
from typing import Optional
import typer
from searchnasa.errors import BadInput, FormatError
from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.formats import FIDELITY, FORMATS, map_item
from searchnasa.store import StoredItem, UpsertCounts
from searchnasa.cli.app import (
    HomeOption, SchedulerOption, WorkersOption, app, console, err_console, progress_bar, rate_advancer, settings_for, store_for,
)


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
    session = _index_session(store, home) if index else None
    started = time.perf_counter()
    try:
        with progress_bar() as bar:
            task = bar.add_task("importing" + (" + indexing" if session else ""), total=None, rate="")

            advance = rate_advancer(bar, task, started)

            report = import_paths(store, paths, format, on_progress=advance,
                                  after_batch=session.feed if session else None)
            if session is not None:
                session.feed()  # anything committed before this run that the index lacks
                built = session.commit()
    except BaseException:
        if session is not None:
            session.abort()  # the store keeps what was imported; `searchnasa index` catches up
        raise
    elapsed = time.perf_counter() - started
    for problem in report.problems:
        err_console.print(f"[yellow]skipped[/yellow] {problem}", highlight=False, soft_wrap=True)
    console.print(f"{report.summary()} ({report.read} read in {elapsed:.1f}s)", highlight=False)
    if session is not None:
        from searchnasa.cli.index import _update_identifier_table

        _update_identifier_table(store)
        console.print(f"index {'full build' if built.full else 'update'}: {built.indexed:,} records indexed; "
                      f"{built.documents:,} documents in {built.generation}", highlight=False)
    if report.skipped:
        raise typer.Exit(1)


def _index_session(store: object, home: Optional[Path]):  # -> IndexSession
    """An index writer following the store (a corrupt index is rebuilt, as `searchnasa index` does)."""
    from searchnasa.index.build import IndexSession
    from searchnasa.index.health import check_index

    index_dir = settings_for(home).index_dir
    rebuild = check_index(index_dir).state == "corrupt"
    if rebuild:
        err_console.print("the index is corrupt; rebuilding it from the store while importing", highlight=False)
    return IndexSession(store, index_dir, rebuild=rebuild)  # type: ignore[arg-type]


@app.command()
def renormalize(
    scheduler: str = SchedulerOption,
    workers: int = WorkersOption,
    home: Optional[Path] = HomeOption,
) -> None:
    """Re-map every stored raw payload with the current mapping code (after a mapping fix)."""
    store = store_for(home)
    totals = UpsertCounts()
    failures: list[str] = []
    batch: list[StoredItem] = []
    with progress_bar() as bar:
        task = bar.add_task("renormalizing", total=store.count(), rate="")
        if scheduler != "local":  # Dask workers re-map, this process stays the single writer
            from searchnasa.batch import batch_client, renormalize_distributed

            with batch_client(scheduler, workers) as client:
                result = renormalize_distributed(client, store, on_progress=lambda n: bar.advance(task, n))
            totals, failures = result.counts, result.failures
        for rid, fmt, raw in store.iter_raw() if scheduler == "local" else ():
            try:
                record = map_item(fmt, raw)
            except FormatError as exc:
                failures.append(f"{rid}: {exc.message}")
                continue
            batch.append(StoredItem(record, fmt, raw, FIDELITY.get(fmt, 3)))
            if len(batch) >= 1000:
                totals.add(store.upsert(batch))
                bar.advance(task, len(batch))
                batch.clear()
        totals.add(store.upsert(batch))
        bar.advance(task, len(batch))
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
    from searchnasa.ingest.sample import sample_path

    store = store_for(home)
    if store.count() and not force:
        console.print(f"store already holds {store.count():,} records; sample not loaded (use --force)")
        return
    report = import_paths(store, [sample_path()], "records-jsonl")
    console.print(f"bundled sample: {report.summary()}")
    if report.skipped:
        raise typer.Exit(1)
