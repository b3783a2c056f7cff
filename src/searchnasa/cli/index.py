"""``searchnasa index``: build or update the lexical index (and the identifier table) from the store."""

from __future__ import annotations
import time
from pathlib import Path
from typing import Optional
import typer
from searchnasa.cli.app import HomeOption, app, console, err_console, progress_bar, settings_for, store_for


@app.command("index")
def index_cmd(
    rebuild: bool = typer.Option(False, "--rebuild", help="Build a fresh index and swap it in when complete."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Build or update the search index from the store (only changed records; atomic)."""
    from searchnasa.index import build_index

    settings = settings_for(home)
    store = store_for(home)
    if not rebuild:  # an update cannot open a damaged index: rebuild it from the store instead
        from searchnasa.index.health import check_index

        health = check_index(settings.index_dir)
        if health.state == "corrupt":
            err_console.print(f"the index is corrupt ({health.problem}); rebuilding it from the store",
                              highlight=False, soft_wrap=True)
            rebuild = True
    started = time.perf_counter()
    with progress_bar() as bar:
        task = bar.add_task("indexing", total=None, rate="")

        def progress(done: int, total: int | None) -> None:
            rate = done / max(time.perf_counter() - started, 1e-9)
            bar.update(task, completed=done, total=total, rate=f"{rate:,.0f} rec/s")

        report = build_index(store, settings.index_dir, progress=progress, rebuild=rebuild)
    _update_identifier_table(store)
    elapsed = time.perf_counter() - started
    what = "full build" if report.full else "update"
    console.print(f"index {what}: {report.indexed:,} records indexed in {elapsed:.1f}s; "
                  f"{report.documents:,} documents in {report.generation}", highlight=False)


def _update_identifier_table(store: object) -> None:
    """Keep the store's identifier table (report/contract numbers) in step with the index."""
    try:
        from searchnasa.store import identifiers
    except ImportError:
        return
    try:
        identifiers.build_identifier_table(store)  # type: ignore[arg-type]
    except Exception as exc:  # the lexical index is built; number lookups degrade gracefully
        err_console.print(f"[yellow]identifier table not updated:[/yellow] {exc}", highlight=False)
