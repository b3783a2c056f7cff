"""``searchnasa update``: harvest, index, embed, cluster and look up, in one resumable command."""

from __future__ import annotations

import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import typer
from rich.progress import Progress, TaskID
from rich.table import Table

from searchnasa.cli.app import HomeOption, app, console, err_console, print_json, progress_bar, settings_for
from searchnasa.cli.harvest import _log_to_stderr
from searchnasa.errors import UpdateBusy, UpdateFailed

if TYPE_CHECKING:  # the pipeline is imported when the command runs, not at CLI start-up
    from searchnasa.batch.update import StageReport, UpdateReport
    from searchnasa.batch.update_plan import UpdatePlan


class _UpdateView:
    """Draws ``UpdateEvents``: one progress row per stage (ETA from the totals the sources report
    and, for embeddings, from the documents per second measured so far), notices on stderr."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.tasks: dict[str, TaskID] = {}
        self.started: dict[str, float] = {}

    def stage_started(self, name: str, label: str, total: int | None) -> None:
        self.started[name] = time.perf_counter()
        self.tasks[name] = self.bar.add_task(label, total=total, rate="")

    def stage_progress(self, name: str, done: int, total: int | None, label: str | None = None) -> None:
        task = self.tasks.get(name)
        if task is None:
            return
        rate = done / max(time.perf_counter() - self.started[name], 1e-9)
        fields: dict[str, Any] = {"completed": done, "total": total, "rate": f"{rate:,.1f} rec/s"}
        if label:
            fields["description"] = label
        self.bar.update(task, **fields)

    def stage_finished(self, report: StageReport) -> None:
        task = self.tasks.get(report.name)
        if task is not None:
            done = max(report.records, 1)
            self.bar.update(task, completed=done, total=done)

    def notice(self, line: str) -> None:
        err_console.print(line, highlight=False, soft_wrap=True)


def _report_json(report: UpdateReport) -> dict[str, Any]:
    return {
        "profile": report.profile,
        "sources": {s: asdict(t) for s, t in report.sources.items()},
        "stages": [{"name": s.name, "seconds": round(s.seconds, 3), "records": s.records,
                    "records_per_second": round(s.per_second, 1) if s.per_second else None,
                    "detail": s.detail, "skipped": s.skipped} for s in report.stages],
        "took_over_lock": report.took_over,
        "seconds": round(report.seconds, 3),
    }


def _print_report(report: UpdateReport) -> None:
    console.print(f"update finished in {report.seconds:.1f}s (profile: {report.profile or 'none chosen: everything'})",
                  highlight=False)
    table = Table("source", "new", "changed", "unchanged", "withdrawn", "skipped", "requests")
    for source, t in report.sources.items():
        table.add_row(source, *(f"{n:,}" for n in (t.new, t.changed, t.unchanged, t.withdrawn, t.skipped, t.requests)))
    if report.sources:
        console.print(table)
    stages = Table("stage", "seconds", "records", "rec/s", "what")
    for s in report.stages:
        stages.add_row(s.name, f"{s.seconds:.2f}", f"{s.records:,}",
                       f"{s.per_second:,.0f}" if s.per_second else "", s.skipped and f"skipped: {s.skipped}" or s.detail)
    console.print(stages)


def _print_plan(plan: UpdatePlan, as_json: bool) -> None:
    if as_json:
        print_json({"profile": plan.profile, "description": plan.description,
                    "becomes_active": plan.becomes_active, "requests": plan.requests,
                    "seconds": round(plan.seconds, 1),
                    "stages": [{"name": s.name, "touches": s.touches, "records": s.records,
                                "requests": s.requests, "seconds": None if s.seconds is None else round(s.seconds, 1),
                                "walks": [{"selection": w.selection.label, "mode": w.mode, "records": w.records,
                                           "requests": w.requests} for w in s.walks]}
                               for s in plan.stages]})
        return
    console.print(f"dry run: nothing is written. Profile {plan.profile}"
                  f"{' (becomes the active profile)' if plan.becomes_active else ''}: {plan.description}",
                  highlight=False, soft_wrap=True)
    table = Table("stage", "touches", "records", "requests", "est. time")
    for s in plan.stages:
        table.add_row(s.name, s.touches, "?" if s.records is None else f"{s.records:,}",
                      "" if s.requests is None else f"{s.requests:,}",
                      "" if s.seconds is None else _duration(s.seconds))
        for w in s.walks:
            table.add_row("", f"  {w.selection.label} ({w.mode})", "?" if w.records is None else f"{w.records:,}",
                          "?" if w.requests is None else f"{w.requests:,}",
                          "" if w.seconds is None else _duration(w.seconds))
    console.print(table)
    total = "unknown" if plan.requests is None else f"{plan.requests:,}"
    console.print(f"about {total} requests and {_duration(plan.seconds)} in all", highlight=False)


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


@app.command()
def update(
    profile: Optional[str] = typer.Option(None, "--profile", help="Collection profile: a bundled name "
                                          "(all, energy-propulsion) or a TOML file; it becomes the home's "
                                          "active profile. Default: $SEARCHNASA_PROFILE, else the home's own."),
    sources: str = typer.Option("ntrs,osti", "--sources", help="Comma-separated sources to harvest."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (stages, what each touches, "
                                 "estimated requests and time) and write nothing."),
    semantic: Optional[bool] = typer.Option(None, "--semantic/--no-semantic", help="Run the embedding and "
                                            "vector-index stages (default: when the model is installed)."),
    rate: Optional[float] = typer.Option(None, "--rate", help="Harvest requests per second (0 = no limit)."),
    page_size: Optional[int] = typer.Option(None, "--page-size", min=1, help="Records per harvest request."),
    reconcile: bool = typer.Option(False, "--reconcile", help="Also walk each selection whole and mark "
                                   "stored records no longer upstream as withdrawn (monthly; hidden from "
                                   "search, kept in the store)."),
    json_: bool = typer.Option(False, "--json", help="Print the summary (or the plan) as one JSON object."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Bring the home up to date: harvest every source of the profile, then index, embed, build the
    vector index, cluster duplicates and update the identifier table. Resumable; one run per home.

    Exit status: 0 done; 3 another update is running; 10 harvest, 11 index, 12 embed, 13 vector
    index, 14 dedup, 15 identifier table failed (run it again to resume); 2 bad input.
    """
    from searchnasa.batch.update import EXIT_CODES, UpdateOptions, run_update

    options = UpdateOptions(profile=profile, sources=tuple(s.strip() for s in sources.split(",") if s.strip()),
                            semantic=semantic, rate=rate, page_size=page_size, reconcile=reconcile)
    if rate is not None and rate < 0:
        raise typer.BadParameter("--rate must be 0 (no limit) or a positive number", param_hint="--rate")
    settings = settings_for(home)
    if dry_run:
        from searchnasa.batch.update_plan import plan_update

        _print_plan(plan_update(settings, options), json_)
        return
    _log_to_stderr()
    try:
        with progress_bar(transient=json_) as bar:
            report = run_update(settings, options, _UpdateView(bar))
    except UpdateBusy as exc:
        err_console.print(f"[red]error:[/red] {exc.message}", highlight=False, soft_wrap=True)
        sys.exit(EXIT_CODES["lock"])
    except UpdateFailed as exc:
        err_console.print(f"[red]error:[/red] {exc.message}", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
    if json_:
        print_json(_report_json(report))
    else:
        _print_report(report)
