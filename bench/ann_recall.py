"""Recall@10 of the usearch int8 HNSW index against exact search, on the sample's real embeddings.

Sweeps connectivity (M) and search expansion (ef), prints recall, build time, query latency and
the index's memory per vector (so per million records). Queries are the sample's own vectors with
a little noise (a real query is never exactly a stored point), and held out of nothing: HNSW's
failure mode is missing true neighbours, which this measures directly.

    python bench/ann_recall.py [--queries 500] [--synthetic 200000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from searchnasa.semantic.ann import ExactIndex, HnswIndex, HnswParams, recall_at_k
from searchnasa.semantic.bundle import load_bundle


def latency_ms(index, queries: np.ndarray, k: int = 100) -> tuple[float, float]:
    times = []
    for q in queries:
        t = time.perf_counter()
        index.search(q, k)
        times.append((time.perf_counter() - t) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--synthetic", type=int, default=0,
                    help="also time exact vs HNSW on this many synthetic vectors (sample vectors plus noise)")
    args = ap.parse_args()
    bundle = load_bundle()
    assert bundle is not None, "run scripts/embed_sample.py first"
    ids, matrix = bundle.ids, bundle.matrix
    rng = np.random.default_rng(0)
    queries = matrix[rng.choice(len(ids), min(args.queries, len(ids)), replace=False)]
    queries = queries + rng.normal(0, 0.02, queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    exact = ExactIndex(ids, matrix)
    print(f"sample: {len(ids)} real vectors x {matrix.shape[1]}, {len(queries)} queries")
    print("M   ef_add ef_search recall@10 +int8rows +f16rows build_s p50_ms p95_ms  (int8 HNSW graph; +rows: "
          "3x candidates re-ranked with the memory-mapped per-vector int8 rows the provider uses, or float16)")
    for m, ef_add, ef in ((8, 64, 32), (8, 64, 64), (16, 128, 32), (16, 128, 64), (16, 128, 96),
                          (16, 128, 128), (32, 128, 64), (32, 200, 128)):
        t = time.perf_counter()
        hnsw = HnswIndex.build(ids, matrix, HnswParams(connectivity=m, expansion_add=ef_add, expansion_search=ef))
        build = time.perf_counter() - t
        p50, p95 = latency_ms(hnsw, queries[:200], 10)
        rec_rows = recall_at_k(exact, hnsw, queries, 10)
        rows, scale = hnsw.rows, hnsw.scale
        hnsw.rows, hnsw.scale = None, None
        rec = recall_at_k(exact, hnsw, queries, 10)
        keys = hnsw.keys_of(ids)
        order = np.argsort([keys[r] for r in ids])
        hnsw.rows, hnsw.scale = matrix[order].astype(np.float16), np.ones(len(ids), np.float32)
        rec_f16 = recall_at_k(exact, hnsw, queries, 10)
        hnsw.rows, hnsw.scale = rows, scale
        print(f"{m:<3} {ef_add:<6} {ef:<9} {rec:.4f}    {rec_rows:.4f}   {rec_f16:.4f}  {build:6.2f} {p50:6.3f} {p95:6.3f}")
    p50, p95 = latency_ms(exact, queries[:200], 10)
    print(f"exact numpy over {len(ids)}: p50 {p50:.3f} ms, p95 {p95:.3f} ms")

    if args.synthetic:
        n = args.synthetic
        base = matrix[rng.integers(0, len(ids), n)] + rng.normal(0, 0.05, (n, matrix.shape[1])).astype(np.float32)
        base /= np.linalg.norm(base, axis=1, keepdims=True)
        syn_ids = [str(i) for i in range(n)]
        t = time.perf_counter()
        hnsw = HnswIndex.build(syn_ids, base)
        build = time.perf_counter() - t
        ex = ExactIndex(syn_ids, base)
        rec = recall_at_k(ex, hnsw, queries[:200], 10)
        hp50, hp95 = latency_ms(hnsw, queries[:200], 200)
        ep50, ep95 = latency_ms(ex, queries[:100], 200)
        per = hnsw.index.memory_usage / n
        print(f"synthetic {n:,}: HNSW (default params, rescored) build {build:.1f}s, recall@10 {rec:.4f}, "
              f"k=200 p50 {hp50:.2f} ms p95 {hp95:.2f} ms; index {per:.0f} bytes/vector "
              f"({per * 1e6 / 2**30:.2f} GiB per million) + int8 re-rank rows 388 bytes "
              f"({388e6 / 2**30:.2f} GiB per million, memory-mapped); exact k=200 p50 {ep50:.1f} ms p95 {ep95:.1f} ms")


if __name__ == "__main__":
    main()
