"""``searchnasa index``: build or update the lexical index (and the identifier table and the acronym
lexicon) from the store."""

from __future__ import annotations
import time
from pathlib import Path
from typing import TYPE_CHECKING, Optional
import typer
from searchnasa.cli.app import (
    HomeOption, app, console, err_console, progress_bar, rate_reporter, settings_for, store_for,
)

if TYPE_CHECKING:
    from searchnasa.index.update import IndexUpdate


@app.command("index")
def index_cmd(
    rebuild: bool = typer.Option(False, "--rebuild", help="Build a fresh index and swap it in when complete."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Build or update the search index from the store (only changed records; atomic)."""
    from searchnasa.index.update import update_index

    settings = settings_for(home)
    store = store_for(home)
    started = time.perf_counter()
    with progress_bar() as bar:
        task = bar.add_task("indexing", total=None, rate="")
        progress = rate_reporter(bar, task, started)

        def say_rebuilding(problem: str | None) -> None:
            err_console.print(f"the index is corrupt ({problem}); rebuilding it from the store",
                              highlight=False, soft_wrap=True)

        update = update_index(store, settings.index_dir, rebuild=rebuild, progress=progress,
                              on_corrupt=say_rebuilding)
    warn_identifier_table(update)
    elapsed = time.perf_counter() - started
    report = update.build
    what = "full build" if report.full else "update"
    console.print(f"index {what}: {report.indexed:,} records indexed in {elapsed:.1f}s; "
                  f"{report.documents:,} documents in {report.generation}", highlight=False)
    if update.acronyms is not None and update.acronyms.acronyms is not None:
        console.print(f"acronyms: {update.acronyms.records:,} records read; {update.acronyms.acronyms:,} "
                      "acronyms in the lexicon", highlight=False)


def warn_identifier_table(update: IndexUpdate) -> None:
    """The identifier table or the acronym lexicon failing to update is a warning: the lexical
    index is built."""
    if update.identifiers_problem is not None:
        err_console.print(f"[yellow]identifier table not updated:[/yellow] {update.identifiers_problem}",
                          highlight=False)
    if update.acronyms_problem is not None:
        err_console.print(f"[yellow]acronym lexicon not updated:[/yellow] {update.acronyms_problem}",
                          highlight=False)
