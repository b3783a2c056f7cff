"""``searchnasa dedup``: cross-source duplicate clusters."""

from __future__ import annotations
import time
from pathlib import Path
from typing import Optional
import typer
from searchnasa.cli.app import (
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
    from searchnasa.dedup import load_config, records_to_compare, run_dedup
    from searchnasa.batch.cluster import batch_client

    settings = settings_for(home)
    cfg = load_config(config, settings.home)
    store = store_for(home)
    todo = records_to_compare(store, full)
    started = time.perf_counter()
    with batch_client(scheduler, workers) as client, progress_bar(transient=json_) as bar:
        task = bar.add_task("comparing", total=todo, rate="")

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
