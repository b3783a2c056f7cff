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
    progress_bar,
)


@app.command()
def stats(
    json_: bool = typer.Option(False, "--json", help="Print one JSON object."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Counts by source, decade and document type; records without a date or an abstract."""
    data = existing_store_for(home).stats()
    if json_:
        print_json(data)
        return
    from rich.table import Table

    console.print(f"[bold]{data['total']:,}[/bold] records")
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
