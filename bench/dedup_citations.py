"""Speed of the issue-7 pieces: duplicate detection (full and incremental), bulk cluster lookup for
a results page, identifier lookup, and citation export.

Data: the bundled sample (6,514 real records), optionally grown with SYNTHETIC copies (new ids,
titles suffixed " [synthetic copy N]") to measure scaling; every 50th synthetic copy keeps the
original's DOI so clusters exist at scale too. Prints numbers; asserts nothing.

    .venv/bin/python bench/dedup_citations.py [--copies 4]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from searchnasa.exports import write
from searchnasa.dedup import clusters_for, run_dedup
from searchnasa.store.identifiers import lookup
from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_path
from searchnasa.store import StoredItem, open_store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=4, help="synthetic copies of the sample to add")
    parser.add_argument("--workers", type=int, default=0, help="also time a full run on a local Dask cluster")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-dedup-"))
    store = open_store(home)
    import_paths(store, [sample_path()], "records-jsonl")
    originals = [r for _, r in store.iter_records()]
    for n in range(1, args.copies + 1):
        batch = []
        for i, rec in enumerate(originals):
            copy = rec.model_copy(deep=True)
            copy.id = f"{rec.source}:synthetic{n}-{rec.source_id}"
            copy.source_id = f"synthetic{n}-{rec.source_id}"
            copy.title = f"{rec.title} [synthetic copy {n}]"
            if i % 50 != 0:
                copy.identifiers.doi = None
                copy.identifiers.report_numbers = []
            batch.append(StoredItem(copy, "records-jsonl", {}))
        store.upsert(batch)
    total = store.count()
    print(f"records: {total:,} ({len(originals):,} real + {total - len(originals):,} synthetic)")

    t = time.perf_counter()
    report = run_dedup(store)
    full = time.perf_counter() - t
    print(f"dedup full run: {full:.2f}s = {total / full:,.0f} records/s; {report.clusters:,} clusters, "
          f"{report.records_in_clusters:,} records in clusters")

    if args.workers:
        from searchnasa.batch.cluster import batch_client

        with batch_client("processes", workers=args.workers) as client:
            t = time.perf_counter()
            run_dedup(store, client=client, full=True)
            el = time.perf_counter() - t
        print(f"dedup full run on a local Dask cluster of {args.workers} processes: {el:.2f}s = "
              f"{total / el:,.0f} records/s (cluster start-up not counted)")

    new = [r.model_copy(update={"id": f"{r.source}:synthetic-new-{r.source_id}",
                                "source_id": f"synthetic-new-{r.source_id}"}) for r in originals[:100]]
    store.upsert([StoredItem(r, "records-jsonl", {}) for r in new])
    t = time.perf_counter()
    report = run_dedup(store)
    inc = time.perf_counter() - t
    print(f"dedup incremental run after 100 new records: {inc:.3f}s ({report.scanned} compared, "
          f"{report.clusters:,} clusters)")

    ids = [rid for (rid,) in store.conn.execute("SELECT id FROM records ORDER BY random() LIMIT 5000")]
    clustered = [rid for (rid,) in store.conn.execute("SELECT record_id FROM clusters LIMIT 2000")]
    for size in (20, 100):
        times = []
        for k in range(200):
            page = ids[(k * size) % 4000:(k * size) % 4000 + size - 2] + clustered[k * 2:k * 2 + 2]
            t = time.perf_counter()
            clusters_for(store, page)
            times.append((time.perf_counter() - t) * 1000)
        times.sort()
        print(f"clusters_for({size} ids): p50 {statistics.median(times):.2f} ms, p95 {times[int(len(times) * .95)]:.2f} ms")

    queries = ["ORNL/TM-2005/102", "naca rm l6l09", "DE-AC05-00OR22725", "10.1103/PhysRevD.72.023002",
               "heat transfer", "mars"]
    times = []
    for _ in range(100):
        for q in queries:
            t = time.perf_counter()
            lookup(store, q)
            times.append((time.perf_counter() - t) * 1000)
    times.sort()
    print(f"identifier lookup: p50 {statistics.median(times):.3f} ms, p95 {times[int(len(times) * .95)]:.3f} ms")

    recs = list(store.get_many(ids[:1000]).values())
    for fmt in ("bibtex", "ris", "csl-json", "csv"):
        t = time.perf_counter()
        size = sum(len(piece) for piece in write(iter(recs), fmt))
        el = time.perf_counter() - t
        print(f"citations {fmt}: 1,000 records in {el * 1000:.0f} ms ({size / 1e6:.1f} MB)")
    store.close()


if __name__ == "__main__":
    main()
