"""``searchnasa harvest {ntrs,osti}``: bring the live collections into the store, then keep them current."""

from __future__ import annotations

from enum import Enum
import logging
import time
from datetime import date
from pathlib import Path
from typing import Optional
import typer
from searchnasa.errors import BadInput, HarvestError
from searchnasa.ingest.harvest.runner import HarvestOptions, HarvestReport, run_harvest
from searchnasa.store import open_store
from searchnasa.cli.app import (
    HomeOption, app, console, err_console, print_json, progress_bar, rate_reporter, settings_for,
)


class HarvestSource(str, Enum):
    ntrs = "ntrs"
    osti = "osti"


def _log_to_stderr() -> None:
    """Harvest warnings (fallbacks, window limits) go to stderr above the progress bar, once."""
    from rich.logging import RichHandler

    logger = logging.getLogger("searchnasa.ingest.harvest")
    if not any(isinstance(h, RichHandler) for h in logger.handlers):
        handler = RichHandler(console=err_console, show_time=False, show_path=False)
        handler.setLevel(logging.WARNING)
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)


def _parse_day(value: Optional[str], flag: str) -> Optional[date]:
    if value is None:
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise BadInput(f"{flag} expects a date as YYYY-MM-DD, got {value!r}") from None


def _print_summary(report: HarvestReport, as_json: bool) -> None:
    if as_json:
        print_json({
            "source": report.source, "mode": report.mode, "finished": report.finished,
            "new": report.counts.new, "changed": report.counts.changed,
            "unchanged": report.counts.unchanged, "kept_richer": report.counts.kept_richer,
            "skipped": report.skipped_total, "skipped_reasons": report.skipped,
            "fetched": report.fetched, "total": report.total, "requests": report.requests,
            "retries": report.retries, "retry_reasons": report.retry_reasons,
            "withdrawn": report.withdrawn, "still_upstream": report.still_upstream,
            "restored": report.restored, "notes": report.notes,
            "index": report.index, "elapsed_s": round(report.elapsed, 3),
        })
        return
    console.print(report.summary(), highlight=False)
    for note in report.notes:
        console.print(f"  note: {note}", highlight=False, soft_wrap=True)
    for reason, n in sorted(report.skipped.items(), key=lambda kv: -kv[1]):
        console.print(f"  skipped {n:,}: {reason}", highlight=False, soft_wrap=True)
    if report.retry_reasons:
        reasons = ", ".join(f"{why} x{n}" for why, n in report.retry_reasons.items())
        console.print(f"  retried: {reasons}", highlight=False, soft_wrap=True)
    console.print(f"  {report.index}", highlight=False)


@app.command()
def harvest(
    source: HarvestSource = typer.Argument(..., help="ntrs or osti."),
    since: Optional[str] = typer.Option(None, "--since", help="Only records modified (NTRS) / entered (OSTI) on or after YYYY-MM-DD; default: the last checkpoint."),
    until: Optional[str] = typer.Option(None, "--until", help="Only records modified / entered on or before YYYY-MM-DD."),
    max_records: Optional[int] = typer.Option(None, "--max-records", help="Stop after this many records; the next run continues."),
    query: Optional[str] = typer.Option(None, "--query", help="Harvest only what matches this search (own checkpoint)."),
    rate: Optional[float] = typer.Option(None, "--rate", help="Requests per second (0 = no limit). Default: NTRS 0.5, OSTI 1."),
    full: bool = typer.Option(False, "--full", help="Walk the whole collection again, ignoring the checkpoint."),
    title: Optional[str] = typer.Option(None, "--title", help="Keep only titles containing this text (checked on our side)."),
    distribution: Optional[str] = typer.Option(None, "--distribution", help="NTRS: keep only this distribution, e.g. PUBLIC (checked on our side)."),
    page_size: Optional[int] = typer.Option(None, "--page-size", help="Records per request (default 100)."),
    reconcile: bool = typer.Option(False, "--reconcile", help="Walk the whole selection (same --query/--since/--until) and mark stored records the source no longer serves as withdrawn (hidden from search, kept in the store). Costs a full walk plus one request per missing record; monthly is plenty."),
    overlap_days: Optional[int] = typer.Option(None, "--overlap-days", help="Days before the source's newest date an incremental run re-reads (default NTRS 7, OSTI 30)."),
    json_: bool = typer.Option(False, "--json", help="Print the summary as one JSON object."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Harvest NTRS or OSTI: everything on the first run, then only what is new or modified.

    Resumable: a run that is killed or stops (a request failing again and again, or the server
    failing most requests) continues where it stopped. The lexical index, when it exists, is
    updated afterwards. --reconcile also finds records withdrawn upstream.
    """
    options = HarvestOptions(
        since=_parse_day(since, "--since"), until=_parse_day(until, "--until"),
        max_records=max_records, query=query, rate=rate, full=full, title=title,
        distribution=distribution, page_size=page_size, reconcile=reconcile, overlap_days=overlap_days,
    )
    options.check()
    _log_to_stderr()
    settings = settings_for(home)
    store = open_store(settings.home)
    started = time.perf_counter()
    with progress_bar() as bar:
        task = bar.add_task(f"harvesting {source.value}", total=None, rate="")
        try:
            report = run_harvest(source.value, store, settings, options,
                                 on_progress=rate_reporter(bar, task, started))
        except HarvestError as exc:
            partial: HarvestReport | None = getattr(exc, "report", None)
            bar.stop()
            if partial is not None and not json_:
                err_console.print(f"stored before the stop: {partial.summary()}", highlight=False,
                                  soft_wrap=True)
            raise
    _print_summary(report, json_)
