"""Commands that read the store whole: ``stats`` (what it holds) and ``export`` (every record as
JSON Lines)."""

from __future__ import annotations
import sys
from pathlib import Path
from typing import Optional
import typer
from searchnasa.errors import BadInput
from searchnasa.store.export import open_export, write_jsonl
from searchnasa.cli.app import (
    HomeOption, app, console, existing_store_for, print_json,
    progress_bar, settings_for,
)


def _print_freshness(data: dict) -> None:
    """The footer's line and ``/api/status`` as text: profile, then per source, then the index."""
    status = data["status"]
    profile = status["profile"]
    outside = sum(data["outside_profile"].values())
    console.print(f"profile: {profile['name'] or 'none chosen (everything)'}: {profile['description']}",
                  highlight=False, soft_wrap=True)
    if profile["name"]:
        console.print(f"outside the profile (kept, searchable): {outside:,}", highlight=False)
    for source in status["sources"].values():
        waiting = source["waiting_for_embeddings"]
        console.print(f"{source['label']}: {source['records']:,} records, last harvest "
                      f"{source['last_harvest'] or 'never'}, newest record {source['newest_record_date'] or 'unknown'}, "
                      f"waiting for the index {source['waiting_for_index']:,}, for embeddings "
                      f"{'no vectors' if waiting is None else f'{waiting:,}'}", highlight=False, soft_wrap=True)
    index = status["index"]
    console.print(f"index: {index['generation']}, updated {index['updated_at']} ({index['age_seconds']:,.0f} s ago)"
                  if index else "index: none (run `searchnasa index` or `searchnasa update`)", highlight=False)


@app.command()
def stats(
    json_: bool = typer.Option(False, "--json", help="Print one JSON object."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Counts by source, decade and document type; records without a date or an abstract; how
    fresh each source is and how many records lie outside the active profile."""
    from searchnasa.batch.freshness import home_status, outside_profile
    from searchnasa.profiles import active_profile

    settings = settings_for(home)
    store = existing_store_for(home)
    data = store.stats()
    status = home_status(settings, store)
    profile = active_profile(settings.home)
    data["status"] = status.as_json()
    data["outside_profile"] = outside_profile(store, profile)
    if json_:
        print_json(data)
        return
    from rich.table import Table

    console.print(f"[bold]{data['total']:,}[/bold] records")
    _print_freshness(data)
    for title, key in (("Source", "by_source"), ("Decade", "by_decade"), ("Document type", "by_document_type")):
        table = Table(title=None, show_header=True)
        table.add_column(title)
        table.add_column("records", justify="right")
        for label, n in data[key].items():
            table.add_row(str(label), f"{n:,}")
        console.print(table)
    console.print(f"without a date (year null): {data['year_null']:,}")
    console.print(f"without an abstract: {data['without_abstract']:,}")


@app.command()
def export(
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="File to write (default stdout; .gz compresses)."),
    format: str = typer.Option("jsonl", "--format", help="Only jsonl: one Record per line."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Export every record as JSON Lines of Records (re-importable with ``searchnasa import``)."""
    if format != "jsonl":
        raise BadInput(f"unknown export format {format!r}; only 'jsonl' is supported")
    store = existing_store_for(home)
    total = store.count()
    if output is None:
        write_jsonl(store, sys.stdout.buffer)
        return
    if not output.parent.is_dir():
        raise BadInput(f"cannot write {output}: the folder {output.parent} does not exist")
    try:
        out_file = open_export(output)
    except OSError as exc:
        raise BadInput(f"cannot write {output}: {exc.strerror or exc}") from exc
    with out_file as out, progress_bar() as bar:
        task = bar.add_task("exporting", total=total, rate="")
        write_jsonl(store, out, on_record=lambda: bar.advance(task))
    console.print(f"{total:,} records written to {output}")
