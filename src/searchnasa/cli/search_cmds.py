"""Commands over the lexical index: ``index`` (build/update) and ``search`` (query from the shell)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.text import Text

from ..errors import BadInput
from ..search.models import MAX_PAGE, MAX_PER_PAGE, SearchRequest
from .app import HomeOption, app, console, err_console, print_json, progress_bar, settings_for, store_for


@app.command("index")
def index_cmd(
    rebuild: bool = typer.Option(False, "--rebuild", help="Build a fresh index and swap it in when complete."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Build or update the search index from the store (only changed records; atomic)."""
    from ..index import build_index

    settings = settings_for(home)
    store = store_for(home)
    if not rebuild:  # an update cannot open a damaged index: rebuild it from the store instead
        from ..index.health import check_index

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
        from .. import identifiers
    except ImportError:
        return
    try:
        identifiers.build_identifier_table(store)  # type: ignore[arg-type]
    except Exception as exc:  # the lexical index is built; number lookups degrade gracefully
        err_console.print(f"[yellow]identifier table not updated:[/yellow] {exc}", highlight=False)


@app.command("search")
def search_cmd(
    query: str = typer.Argument(..., help='Query: words, "phrases", OR, NOT/-word, title:, author:, subject:, year:1990-2005, source:ntrs|osti.'),
    source: Optional[str] = typer.Option(None, "--source", help="ntrs or osti."),
    page: int = typer.Option(1, "--page", min=1, max=MAX_PAGE),
    per_page: int = typer.Option(10, "--per-page", min=1, max=MAX_PER_PAGE),
    sort: str = typer.Option("relevance", "--sort", help="relevance, newest or oldest."),
    year_from: Optional[int] = typer.Option(None, "--year-from"),
    year_to: Optional[int] = typer.Option(None, "--year-to"),
    mode: str = typer.Option("lexical", "--mode", help="lexical, hybrid or semantic."),
    json_: bool = typer.Option(False, "--json", help="Print the response as JSON."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Search the index and print one page of results."""
    from pydantic import ValidationError

    from ..search.service import SearchService

    try:
        req = SearchRequest(q=query, source=source, page=page, per_page=per_page, sort=sort,  # type: ignore[arg-type]
                            year_from=year_from, year_to=year_to, mode=mode)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise BadInput(f"{where}: {first.get('msg')}") from None
    semantic = None
    if mode != "lexical":
        try:
            from ..semantic import open_semantic  # type: ignore[attr-defined]

            semantic = open_semantic(settings_for(home))
        except Exception as exc:  # semantic side absent or not built: lexical still answers
            err_console.print(f"[yellow]semantic search unavailable:[/yellow] {exc}", highlight=False)
    from ..dedup.collapse import search_folded

    service = SearchService(settings_for(home), semantic=semantic)
    resp = search_folded(service, req)
    if json_:
        print_json(resp.model_dump(mode="json"))
        return
    count = f"At least {resp.total:,}" if resp.total_is_lower_bound else f"{resp.total:,}"
    console.print(f"[bold]{count} records[/bold] · Page {resp.page} · {escape(resp.interpreted)} "
                  f"({resp.mode}, {resp.took_ms:.1f} ms)", highlight=False)
    if resp.suggestion:
        console.print(f"Did you mean: [bold]{escape(resp.suggestion)}[/bold]?", highlight=False)
    for notice in resp.notices:
        console.print(f"[yellow]note:[/yellow] {escape(notice)}", highlight=False)
    start = (resp.page - 1) * resp.per_page
    for i, hit in enumerate(resp.results, start=start + 1):
        console.print(Text.assemble(f"\n{i}. ", (hit.title, "bold")), highlight=False)
        console.print(f"   {hit.source_label} · {hit.date_label} · {hit.id}", highlight=False)
        if hit.url:
            console.print(f"   {hit.url}", highlight=False, markup=False)
        for copy in hit.also_in:
            console.print(f"   also in {copy.get('source_label', '')}: {copy.get('id', '')}", highlight=False,
                          markup=False)
    if not resp.results:
        console.print("No records matched. Try dropping a filter or a quote.")
