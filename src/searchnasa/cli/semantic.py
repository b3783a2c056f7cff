"""``searchnasa embed``: embeddings for new or changed records, then the vector index."""

from __future__ import annotations
import time
from pathlib import Path
from typing import Optional
import typer
from searchnasa.errors import BadInput
from searchnasa.cli.app import (
    HomeOption, SchedulerOption, WorkersOption, app, console, err_console, progress_bar, rate_advancer, settings_for,
)


@app.command()
def embed(
    batch_size: int = typer.Option(128, "--batch-size", min=1, max=4096,
                                   help="Records per committed batch (an interrupted run loses at most one)."),
    cache: bool = typer.Option(True, "--cache/--no-cache",
                               help="Reuse and fill the shared embedding cache ($SEARCHNASA_EMBED_CACHE)."),
    threads: int = typer.Option(0, "--threads", min=0,
                                help="Model threads (0: all cores; per worker on Dask: 1)."),
    backend: Optional[str] = typer.Option(
        None, "--backend", help="Embedding backend: torch (fp32, the reference) or onnx (int8, "
                                "~2.7x faster); default $SEARCHNASA_EMBED_BACKEND or torch."),
    vector_index: Optional[str] = typer.Option(
        None, "--vector-index", help="Index built for serving past 50,000 vectors: hnsw (fastest; "
                                     "~0.5 GiB RAM per million vectors) or ivfpq (~0.06 GiB per million, "
                                     "rows read from disk); default $SEARCHNASA_VECTOR_INDEX, else the "
                                     "kind already built, else hnsw."),
    scheduler: str = SchedulerOption,
    workers: int = WorkersOption,
    home: Optional[Path] = HomeOption,
) -> None:
    """Embed new and changed records (title + abstract) for semantic search; resumable."""
    from searchnasa.batch import batch_client, check_scheduler, describe_scheduler, embed_distributed
    from searchnasa.semantic.ann import KINDS
    from searchnasa.semantic.bundle import ChainCache, load_bundle
    from searchnasa.semantic.cache import open_default_cache
    from searchnasa.semantic.embedder import Embedder, check_backend, use_backend
    from searchnasa.semantic.vectors import VectorStore
    from searchnasa.store import open_store

    check_scheduler(scheduler, workers)
    settings = settings_for(home)
    kind = vector_index or settings.vector_index or None
    if kind is not None and kind not in KINDS:
        raise BadInput(f"unknown vector index {kind!r}: choose one of {', '.join(KINDS)}")
    # Set for the whole process (and Dask workers it starts): every vector key computed from here
    # on names this backend, so vectors of the two backends are never mixed.
    chosen = use_backend(check_backend(backend or settings.embed_backend))
    if not settings.store_path.exists():
        raise BadInput(f"no store at {settings.store_path}: import or load records first")
    store = open_store(settings.home)
    vstore = VectorStore(settings.vectors_dir)
    _restart_if_other_backend(store, vstore, chosen)
    since = vstore.checkpoint_seq
    total = store.conn.execute("SELECT COUNT(*) FROM records WHERE seq > ?", (since,)).fetchone()[0]
    chain = ChainCache(load_bundle(), open_default_cache() if cache else None)
    embedder = None
    started = time.perf_counter()
    with progress_bar() as bar:
        task = bar.add_task("embedding", total=total, rate="")

        advance = rate_advancer(bar, task, started, decimals=1)

        if scheduler != "local" and total:  # Dask: partitions of --batch-size records, written here
            err_console.print(f"embedding on {describe_scheduler(scheduler, workers)}", highlight=False)
            with batch_client(scheduler, workers) as client:
                report = embed_distributed(client, store, vstore, cache=chain, partition_size=batch_size,
                                           threads_per_worker=threads or 1, on_progress=advance)
        else:
            if total and chosen == "onnx":  # a first use exports the model: say so, then build it
                from searchnasa.semantic.onnx_export import ensure_onnx_model

                ensure_onnx_model(announce=lambda line: err_console.print(line, highlight=False))
            if total:
                embedder = Embedder(threads=threads or None, backend=chosen) if threads else None
            report = vstore.embed_pending(store.iter_records(since), embedder=embedder, cache=chain,
                                          batch_size=batch_size, on_batch=advance)
    count = vstore.count()
    vstore.close()
    chain.close()
    store.close()
    console.print(f"{report.summary()}; {count:,} vectors stored "
                  f"({time.perf_counter() - started:.1f}s)", highlight=False)
    if count:
        from searchnasa.semantic.provider import prepare_serving_index

        with console.status("preparing the vector index for serving"):
            console.print(f"search index: {prepare_serving_index(settings.vectors_dir, kind)}", highlight=False)


def _restart_if_other_backend(store: object, vstore: object, chosen: str, probe: int = 64) -> None:
    """If the home's vectors were made by the other backend, walk every record again.

    A vector's key names the backend that made it (semantic.embedder.text_key), so the resumed
    walk re-embeds each record whose stored key is the other backend's; without the restart, the
    records before the checkpoint would keep their old vectors and the home would mix the two.
    Which backend made the vectors is read off a probe of stored keys: no extra bookkeeping.
    """
    from searchnasa.semantic.embedder import BACKENDS, record_text, text_key

    rows = vstore.conn.execute("SELECT id, key FROM vectors LIMIT ?", (probe,)).fetchall()  # type: ignore[attr-defined]
    if not rows:
        return
    records = store.get_many([r[0] for r in rows])  # type: ignore[attr-defined]
    made_by: dict[str, int] = {}
    for rid, key in rows:
        rec = records.get(rid)
        if rec is None:
            continue
        text = record_text(rec)
        for name in BACKENDS:
            if text_key(text, name) == key:
                made_by[name] = made_by.get(name, 0) + 1
    others = {name: n for name, n in made_by.items() if name != chosen}
    if others and made_by.get(chosen, 0) == 0:
        previous = max(others, key=others.__getitem__)
        err_console.print(f"vectors in this home were made by the {previous} backend: "
                          f"re-embedding every record with {chosen}", highlight=False, soft_wrap=True)
        vstore.set_meta("store_seq", "0")  # type: ignore[attr-defined]
