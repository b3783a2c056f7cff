"""Embedding throughput: in-process vs a Dask LocalCluster of 2 single-threaded workers.

Real records (the first N sample records with an abstract) are embedded with all-MiniLM-L6-v2
through the same code paths ``searchnasa embed`` takes, into fresh temporary homes, with the
bundled sample vectors and the shared cache switched off so every vector comes from the model:

- in-process, torch on all cores (``--scheduler local``, the default);
- in-process, torch on 1 thread (the single-worker baseline);
- ``LocalCluster(n_workers=2, threads_per_worker=1)`` (``--scheduler processes --workers 2``).

Model loading and cluster start are timed separately (once per job, not per record). Parallel
efficiency = cluster rate / (workers x 1-thread rate).

    .venv/bin/python bench/embed_dask.py [--records 384] [--workers 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


from searchnasa.batch import batch_client, embed_distributed  # noqa: E402
from searchnasa.batch.embed import _worker_embedder  # noqa: E402
from searchnasa.ingest.importer import import_paths  # noqa: E402
from searchnasa.ingest.sample import sample_lines_with_abstract  # noqa: E402
from searchnasa.semantic.embedder import Embedder  # noqa: E402
from searchnasa.semantic.vectors import VectorStore  # noqa: E402
from searchnasa.store import open_store  # noqa: E402


def make_home(root: Path, name: str, src: Path) -> Path:
    home = root / name
    store = open_store(home)
    import_paths(store, [src], "records-jsonl")
    store.close()
    return home


def sample_subset(n: int, out: Path) -> Path:
    out.write_bytes(b"".join(sample_lines_with_abstract(n)))
    return out


def in_process(home: Path, threads: int, batch: int) -> dict:
    t0 = time.perf_counter()
    embedder = Embedder(threads=threads)
    embedder.encode(["warm up"])
    load_s = time.perf_counter() - t0
    store, vs = open_store(home), VectorStore(home / "vectors")
    t0, c0 = time.perf_counter(), time.process_time()
    report = vs.embed_pending(store.iter_records(0), embedder=embedder, cache=None, batch_size=batch)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    store.close()
    vs.close()
    return {"records": report.embedded, "seconds": round(wall, 2), "rec_per_s": round(report.embedded / wall, 2),
            "cpu_s": round(cpu, 2), "model_load_s": round(load_s, 2)}


def on_cluster(home: Path, workers: int, batch: int) -> dict:
    t0 = time.perf_counter()
    with batch_client("processes", workers) as client:
        client.wait_for_workers(workers)
        client.run(lambda: _worker_embedder(1).encode(["warm up"]) is not None)  # load every model once
        start_s = time.perf_counter() - t0
        store, vs = open_store(home), VectorStore(home / "vectors")
        t0 = time.perf_counter()
        report = embed_distributed(client, store, vs, cache=None, partition_size=batch, threads_per_worker=1)
        wall = time.perf_counter() - t0
        store.close()
        vs.close()
    return {"records": report.embedded, "seconds": round(wall, 2), "rec_per_s": round(report.embedded / wall, 2),
            "cluster_start_and_model_load_s": round(start_s, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=384)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64, help="records per partition / committed batch")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="embed-dask-") as tmp:
        root = Path(tmp)
        src = sample_subset(args.records, root / "subset.jsonl")
        result: dict = {"records": args.records, "cpus": os.cpu_count(),
                        "load_average_before": [round(x, 1) for x in os.getloadavg()]}
        result["in_process_all_threads"] = in_process(make_home(root, "a", src), os.cpu_count() or 1,
                                                      args.batch_size)
        result["in_process_1_thread"] = in_process(make_home(root, "b", src), 1, args.batch_size)
        result[f"local_cluster_{args.workers}x1"] = on_cluster(make_home(root, "c", src), args.workers,
                                                               args.batch_size)
        one = result["in_process_1_thread"]["rec_per_s"]
        cluster = result[f"local_cluster_{args.workers}x1"]["rec_per_s"]
        result["parallel_efficiency"] = round(cluster / (args.workers * one), 3)
        result["speedup_vs_in_process_all_threads"] = round(
            cluster / result["in_process_all_threads"]["rec_per_s"], 3)
        result["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
