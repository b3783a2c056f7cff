"""``searchnasa embed``: embeddings for new or changed records, then the vector index."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.progress import Progress

from searchnasa.cli.app import (
    HomeOption, SchedulerOption, WorkersOption, app, console, err_console, progress_bar, rate_advancer, settings_for,
)

if TYPE_CHECKING:
    from searchnasa.semantic.vectors import EmbedReport


@app.command()
def embed(
    batch_size: int = typer.Option(128, "--batch-size", min=1, max=4096,
                                   help="Records per committed batch (an interrupted run loses at most one)."),
    cache: bool = typer.Option(True, "--cache/--no-cache",
                               help="Reuse and fill the shared embedding cache ($SEARCHNASA_EMBED_CACHE)."),
    threads: int = typer.Option(0, "--threads", min=0,
                                help="Model threads (0: all cores; per worker on Dask: 1)."),
    backend: Optional[str] = typer.Option(
        None, "--backend", help="Embedding backend: onnx (int8, ~2.7x faster) or torch (fp32, the "
                                "reference); default $SEARCHNASA_EMBED_BACKEND or onnx."),
    vector_index: Optional[str] = typer.Option(
        None, "--vector-index", help="Index built for serving past 50,000 vectors: hnsw (fastest; "
                                     "~0.5 GiB RAM per million vectors) or ivfpq (~0.06 GiB per million, "
                                     "rows read from disk); default $SEARCHNASA_VECTOR_INDEX, else the "
                                     "kind already built, else hnsw."),
    sentences: bool = typer.Option(
        False, "--sentences/--no-sentences",
        help="Also embed every sentence of title + abstract (stored int8 beside the record vectors): "
             "related papers and hybrid search re-rank their head by the closest sentences, and related "
             "papers show the best pair. Costs 1.5-3x the record embedding; always in this process."),
    scheduler: str = SchedulerOption,
    workers: int = WorkersOption,
    home: Optional[Path] = HomeOption,
) -> None:
    """Embed new and changed records (title + abstract) for semantic search; resumable."""
    from searchnasa.batch.embed_home import EmbedOptions, embed_home

    options = EmbedOptions(batch_size=batch_size, use_cache=cache, threads=threads, backend=backend,
                           vector_index=vector_index, scheduler=scheduler, workers=workers,
                           sentences=sentences)
    view = _EmbedView()
    try:
        serving = embed_home(settings_for(home), options, view)
    finally:
        view.stop()
    if serving is not None:
        console.print(f"search index: {serving}", highlight=False)


class _EmbedView:
    """Renders what an embed run reports (``batch.embed_home.EmbedEvents``): notices on stderr, a
    progress bar while records are walked, the summary on stdout."""

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._advance: Callable[[int], None] = lambda n: None

    def backend_switched(self, previous: str, chosen: str) -> None:
        err_console.print(f"vectors in this home were made by the {previous} backend: "
                          f"re-embedding every record with {chosen}", highlight=False, soft_wrap=True)

    def started(self, total: int, where: str | None) -> None:
        started = time.perf_counter()
        self._bar = progress_bar()
        self._bar.start()
        task = self._bar.add_task("embedding", total=total, rate="")
        self._advance = rate_advancer(self._bar, task, started, decimals=1)
        if where is not None:
            err_console.print(f"embedding on {where}", highlight=False)

    def announce(self, line: str) -> None:
        err_console.print(line, highlight=False)

    def advanced(self, n: int) -> None:
        self._advance(n)

    def embedded(self, report: EmbedReport, count: int, seconds: float) -> None:
        self.stop()
        console.print(f"{report.summary()}; {count:,} vectors stored ({seconds:.1f}s)", highlight=False)

    def preparing_index(self) -> AbstractContextManager[object]:
        return console.status("preparing the vector index for serving")

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
