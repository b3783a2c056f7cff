"""Batch and utility commands: ``dedup`` (duplicate clusters and the identifier table) and
``cite`` (citations of stored records)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Optional

import typer

from ..errors import BadInput, NotFound
from .app import (
    HomeOption, SchedulerOption, WorkersOption, app, console, print_json, progress_bar,
    rate_advancer, settings_for, store_for,
)


@app.command()
def dedup(
    config: Optional[Path] = typer.Option(None, "--config", help="Dedup TOML file with split rules "
                                          "(default: $SEARCHNASA_HOME/dedup.toml if present)."),
    full: bool = typer.Option(False, "--full", help="Forget earlier runs and compare every record again."),
    scheduler: str = SchedulerOption,
    workers: int = WorkersOption,
    json_: bool = typer.Option(False, "--json", help="Print the run's report as JSON."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Cluster records that are the same work (same DOI, report number, title+year+author, or
    near-identical abstracts); incremental: only records changed since the last run are compared."""
    from ..dedup import load_config, run_dedup
    from ..batch.cluster import batch_client

    settings = settings_for(home)
    cfg = load_config(config, settings.home)
    store = store_for(home)
    todo = store.max_seq() - int(store.get_meta("dedup_seq") or 0) if not full else store.count()
    started = time.perf_counter()
    with batch_client(scheduler, workers) as client, progress_bar(transient=json_) as bar:
        task = bar.add_task("comparing", total=max(todo, 0), rate="")

        advance = rate_advancer(bar, task, started)

        report = run_dedup(store, cfg, vectors_dir=settings.vectors_dir, full=full, on_progress=advance,
                           client=client)
    elapsed = time.perf_counter() - started
    if json_:
        data = dict(report.__dict__)
        data["seconds"] = round(elapsed, 3)
        data["config"] = str(cfg.source) if cfg.source else None
        print_json(data)
        return
    if cfg.source:
        console.print(f"config: {cfg.source} ({len(cfg.splits)} split rule(s))", highlight=False)
    console.print(f"{report.summary()} ({elapsed:.1f}s)", highlight=False)


@app.command()
def cite(
    ids: Optional[list[str]] = typer.Argument(None, help="Record ids (ntrs:… / osti:…)."),
    format: str = typer.Option("bibtex", "--format", "-f", help="bibtex, ris, csl-json or csv."),
    query: Optional[str] = typer.Option(None, "--query", "-q", help="Cite the results of this search instead."),
    limit: int = typer.Option(100, "--limit", help="With --query: at most this many records (1-1000)."),
    source: Optional[str] = typer.Option(None, "--source", help="With --query: ntrs or osti."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Print citations (BibTeX, RIS, CSL-JSON or CSV) of records, or of a search's results, to stdout."""
    from ..citations import get_format, write
    from ..citations.resultset import MAX_EXPORT, iter_result_records

    get_format(format)  # a bad format fails before any lookup
    if bool(ids) == (query is not None):
        raise BadInput("give record ids or --query, not both and not neither")
    if query is not None:
        if not 1 <= limit <= MAX_EXPORT:
            raise BadInput(f"--limit must be between 1 and {MAX_EXPORT}")
        if source not in (None, "ntrs", "osti"):
            raise BadInput("--source must be ntrs or osti")
        from ..search.models import SearchRequest
        from ..search.service import SearchService

        service = SearchService(settings_for(home))
        records = iter_result_records(service, SearchRequest(q=query, source=source, mode="lexical"), limit)
        for piece in write(records, format):
            sys.stdout.write(piece)
        return
    store = store_for(home)
    assert ids is not None
    found = store.get_many(ids)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"no record {', '.join(repr(m) for m in missing)}")
    for piece in write((found[i] for i in dict.fromkeys(ids)), format):
        sys.stdout.write(piece)
