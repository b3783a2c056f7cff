"""``searchnasa eval``: search quality on a BEIR folder (nDCG@10, Recall@100, MRR@10)."""

from __future__ import annotations
from pathlib import Path
import typer
from searchnasa.cli.app import (
    app, console, err_console, print_json,
    progress_bar,
)


@app.command("eval")
def eval_cmd(
    beir_dir: Path = typer.Argument(..., help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/test.tsv."),
    mode: str = typer.Option("search", "--mode", help="search: rank queries; related: queries are papers."),
    retrieval: str = typer.Option("all", "--retrieval",
                                  help="lexical, semantic, hybrid or all (search mode)."),
    words: str = typer.Option("any", "--words",
                              help="any: a query's words joined by OR (default); all: as typed (AND)."),
    acronyms: bool = typer.Option(True, "--acronyms/--no-acronyms",
                                  help="Mine the corpus's acronyms and expand them in queries, as "
                                       "`searchnasa index` does (default), or search every word as typed."),
    sentences: bool = typer.Option(False, "--sentences/--no-sentences",
                                   help="Also embed every sentence of the corpus (as `searchnasa embed "
                                        "--sentences`), so related mode and hybrid search re-rank their head by the closest sentences."),
    json_: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Index a BEIR folder in a temporary home and print nDCG@10, Recall@100 and MRR@10."""
    from searchnasa.eval.runner import RETRIEVALS, run_eval

    retrievals = list(RETRIEVALS) if retrieval == "all" else [retrieval]
    with progress_bar(transient=True) as bar:
        tasks: dict[str, int] = {}

        def progress(what: str, done: int, total: int) -> None:
            if what not in tasks:
                tasks[what] = bar.add_task(what, total=total, rate="")
            bar.update(tasks[what], completed=done)

        result = run_eval(beir_dir, mode=mode, retrievals=retrievals, progress=progress, words=words,
                          acronyms=acronyms, sentences=sentences)
    if json_:
        print_json(result)
        return
    from rich.table import Table

    table = Table(title=f"{result['dataset']}: {result['documents']:,} documents, "
                        f"{result['queries']} judged queries ({mode})")
    for col in ("ranking", "nDCG@10", "Recall@100", "MRR@10"):
        table.add_column(col, justify="left" if col == "ranking" else "right")
    for name, m in result["results"].items():
        table.add_row(name, f"{m['ndcg@10']:.3f}", f"{m['recall@100']:.3f}", f"{m['mrr@10']:.3f}")
    console.print(table)
    err_console.print(f"acronyms: {result['acronyms']['lexicon']:,} in the lexicon, "
                      f"{result['acronyms']['queries_expanded']} queries expand one", highlight=False)
    if "embedding" in result:
        err_console.print(f"vectors: {result['embedding']}", highlight=False)
    if "sentence_embedding" in result:
        err_console.print(f"sentence vectors: {result['sentence_embedding']}", highlight=False)
