"""Commands that query: ``search`` (one page of results), ``related`` (papers related to records)
and ``cite`` (citations of records or of a search's results)."""

from __future__ import annotations
from pathlib import Path
from typing import Optional
import typer
from rich.markup import escape
from rich.text import Text
from searchnasa.errors import BadInput
from searchnasa.limits import MAX_EXPORT
from searchnasa.search.schemas import MAX_PAGE, MAX_PER_PAGE, SearchRequest
from searchnasa.cli.app import HomeOption, app, console, err_console, print_json, settings_for, store_for
import sys


@app.command("search")
def search_cmd(
    query: str = typer.Argument(..., help='Query: words, "phrases", OR, NOT/-word, title:, author:, subject:, year:1990-2005, source:ntrs|osti, topic:propulsion.'),
    source: Optional[str] = typer.Option(None, "--source", help="ntrs or osti."),
    page: int = typer.Option(1, "--page", min=1, max=MAX_PAGE),
    per_page: int = typer.Option(10, "--per-page", min=1, max=MAX_PER_PAGE),
    sort: str = typer.Option("relevance", "--sort", help="relevance, newest or oldest."),
    year_from: Optional[int] = typer.Option(None, "--year-from"),
    year_to: Optional[int] = typer.Option(None, "--year-to"),
    mode: str = typer.Option("lexical", "--mode", help="lexical, hybrid or semantic."),
    topic: list[str] = typer.Option([], "--topic", help="A shared topic of both sources (repeatable): a slug, label or alias."),
    json_: bool = typer.Option(False, "--json", help="Print the response as JSON."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Search the index and print one page of results."""
    from pydantic import ValidationError

    from searchnasa.search.service import SearchService

    from searchnasa.topics import resolve_topic, topic_slugs

    slugs = [resolve_topic(t) for t in topic]
    if None in slugs:
        unknown = topic[slugs.index(None)]
        raise BadInput(f"unknown topic {unknown!r}; topics are: {', '.join(topic_slugs())}")
    try:
        req = SearchRequest(q=query, source=source, page=page, per_page=per_page, sort=sort,  # type: ignore[arg-type]
                            year_from=year_from, year_to=year_to, mode=mode, topic=slugs)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise BadInput(f"{where}: {first.get('msg')}") from None
    semantic = None
    if mode != "lexical":
        try:
            from searchnasa.semantic import open_semantic  # type: ignore[attr-defined]

            semantic = open_semantic(settings_for(home))
        except Exception as exc:  # semantic side absent or not built: lexical still answers
            err_console.print(f"[yellow]semantic search unavailable:[/yellow] {exc}", highlight=False)
    service = SearchService(settings_for(home), semantic=semantic)
    resp = service.search(req)
    if json_:
        print_json(resp.model_dump(mode="json"))
        return
    count = f"At least {resp.total:,}" if resp.total_is_lower_bound else f"{resp.total:,}"
    extras = f" · {resp.extras_total:,} more close in meaning" if resp.extras_total else ""
    console.print(f"[bold]{count} records[/bold]{extras} · Page {resp.page} · {escape(resp.interpreted)} "
                  f"({resp.mode}, {resp.took_ms:.1f} ms)", highlight=False)
    if resp.suggestion:
        console.print(f"Did you mean: [bold]{escape(resp.suggestion)}[/bold]?", highlight=False)
    for note in resp.acronyms:
        only = f" (search only it: {escape(note.only_query)})" if note.only_query else ""
        console.print(f"[yellow]acronym:[/yellow] {escape(note.message)}{only}", highlight=False)
    for notice in resp.notices:
        console.print(f"[yellow]note:[/yellow] {escape(notice)}", highlight=False)
    start = (resp.page - 1) * resp.per_page
    for i, hit in enumerate(resp.results, start=start + 1):
        console.print(Text.assemble(f"\n{i}. ", (hit.title, "bold")), highlight=False)
        console.print(f"   {hit.source_label} · {hit.date_label} · {hit.id}", highlight=False)
        if hit.close_in_meaning:
            lacks = f"; does not contain: {', '.join(hit.missing_words)}" if hit.missing_words else ""
            console.print(f"   close in meaning{lacks}", highlight=False, markup=False)
        if hit.url:
            console.print(f"   {hit.url}", highlight=False, markup=False)
        for copy in hit.also_in:
            console.print(f"   also in {copy.get('source_label', '')}: {copy.get('id', '')}", highlight=False,
                          markup=False)
    if not resp.results:
        console.print("No records matched. Try dropping a filter or a quote.")


@app.command()
def related(
    record_id: str = typer.Argument(..., help=(
        "A record id such as ntrs:19730012345 or osti:1234567, or a bare number one source holds.")),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=100, help="How many related records."),
    negative: list[str] = typer.Option([], "--not", help="Less like this record (repeatable)."),
    also: list[str] = typer.Option([], "--and", help="Also like this record (repeatable)."),
    json_: bool = typer.Option(False, "--json", help="Print one JSON object."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Records most related to RECORD_ID, with the reasons each one is related."""
    from searchnasa.search.related import find_related
    from searchnasa.search.service import SearchService
    from searchnasa.semantic import open_semantic

    settings = settings_for(home)
    service = SearchService(settings=settings, semantic=open_semantic(settings))
    seeds = [service.resolve_id(rid) for rid in (record_id, *also)]  # a bare number as the API takes it
    negatives = [service.resolve_id(rid) for rid in negative]
    items = find_related(service, seeds, negatives, limit)
    if json_:
        print_json({"seed_ids": seeds, "negative_ids": negatives,
                    "results": [i.model_dump(mode="json") for i in items]})
        return
    seed = service.get(seeds[0])
    console.print(f"[bold]Related papers:[/bold] {seed.title}", highlight=False)
    for n, item in enumerate(items, 1):
        console.print(f"{n:>2}. [bold]{item.title}[/bold] ({item.source_label}, {item.year or 'no date'})",
                      highlight=False)
        console.print(f"    {item.id} · {item.url or ''}", highlight=False, style="dim")
        console.print(f"    {item.explanation}", highlight=False)


@app.command()
def cite(
    ids: Optional[list[str]] = typer.Argument(None, help="Record ids (ntrs:… / osti:…, or bare numbers)."),
    format: str = typer.Option("bibtex", "--format", "-f", help="bibtex, ris, csl-json or csv."),
    query: Optional[str] = typer.Option(None, "--query", "-q", help="Cite the results of this search instead."),
    limit: int = typer.Option(100, "--limit", help="With --query: at most this many records (1-1000)."),
    source: Optional[str] = typer.Option(None, "--source", help="With --query: ntrs or osti."),
    home: Optional[Path] = HomeOption,
) -> None:
    """Print citations (BibTeX, RIS, CSL-JSON or CSV) of records, or of a search's results, to stdout."""
    from searchnasa.exports import get_format, write
    from searchnasa.exports.resultset import iter_result_records, selected_records

    get_format(format)  # a bad format fails before any lookup
    if bool(ids) == (query is not None):
        raise BadInput("give record ids or --query, not both and not neither")
    if query is not None:
        if not 1 <= limit <= MAX_EXPORT:
            raise BadInput(f"--limit must be between 1 and {MAX_EXPORT}")
        if source not in (None, "ntrs", "osti"):
            raise BadInput("--source must be ntrs or osti")
        from searchnasa.search.service import SearchService

        service = SearchService(settings_for(home))
        records = iter_result_records(service, SearchRequest(q=query, source=source, mode="lexical"), limit)
        for piece in write(records, format):
            sys.stdout.write(piece)
        return
    assert ids is not None
    from searchnasa.search.id_lookup import resolve_record_id

    store = store_for(home)
    resolved = [resolve_record_id(store, rid) for rid in ids]  # bare numbers as the API takes them
    for piece in write(selected_records(store, resolved), format):
        sys.stdout.write(piece)
