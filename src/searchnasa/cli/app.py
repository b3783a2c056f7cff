"""The typer app and the helpers every command module shares."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TaskID,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from searchnasa.errors import BadInput
from searchnasa.settings import Settings, get_settings
from searchnasa.store import Store, open_store

app = typer.Typer(
    name="searchnasa",
    help="Search NASA NTRS and DOE OSTI technical reports as one collection.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err_console = Console(stderr=True)

HomeOption = typer.Option(None, "--home", help="Data directory (default: $SEARCHNASA_HOME or ./data).")
# Every batch job runs the same three ways (see batch/cluster.py), so they share these two options.
SchedulerOption = typer.Option(
    "local", "--scheduler",
    help="local (this process), processes (a local Dask cluster of --workers processes) or a "
         "Dask scheduler address such as tcp://host:8786.")
WorkersOption = typer.Option(2, "--workers", min=1, max=512, help="Worker processes for --scheduler processes.")


def settings_for(home: Path | None) -> Settings:
    settings = get_settings()
    return settings.with_home(home) if home else settings


def store_for(home: Path | None) -> Store:
    return open_store(settings_for(home).home)


def existing_store_for(home: Path | None) -> Store:
    """The store of a home that exists, for commands that only read it (``stats``, ``export``):
    a mistyped ``--home`` is an error, not a new empty home created on the way."""
    where = settings_for(home).home
    if not where.is_dir():
        raise BadInput(f"no data home at {where}: check --home or SEARCHNASA_HOME "
                       "(`searchnasa import` or `load-sample` creates one)")
    return open_store(where)


def progress_bar(transient: bool = False) -> Progress:
    """The one progress bar style: what, bar, done/total, rate-friendly elapsed and ETA."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err_console,
        transient=transient,
    )


def rate_advancer(bar: Progress, task: TaskID, started: float | None = None,
                  decimals: int = 0) -> Callable[[int], None]:
    """A progress callback for batch jobs: advance ``task`` by ``n`` and show records/s so far."""
    began = time.perf_counter() if started is None else started
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        rate = done / max(time.perf_counter() - began, 1e-9)
        bar.update(task, advance=n, rate=f"{rate:,.{decimals}f} rec/s")

    return advance


def rate_reporter(bar: Progress, task: TaskID, started: float) -> Callable[[int, int | None], None]:
    """A progress callback for walks that know how far they are (index, harvest): show ``done`` of
    ``total`` (``None`` while unknown) and records/s since ``started``."""

    def report(done: int, total: int | None) -> None:
        rate = done / max(time.perf_counter() - started, 1e-9)
        bar.update(task, completed=done, total=total, rate=f"{rate:,.0f} rec/s")

    return report


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")
