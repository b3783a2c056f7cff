"""Recall of the usearch int8 HNSW index against exact search, on the sample's real embeddings.

Sweeps connectivity (M) and search expansion (ef) and prints, for each, recall@10 of the graph the
product builds (each vector quantized to int8 by ``ann.to_int8``, its own largest component at
127), recall@10 of the same graph built the way usearch quantizes floats itself (``round(127 x)``,
the product's graph until 2026-12-01), recall@200 with the beam the provider uses for hybrid's 200
semantic candidates (``2k``), build time, query latency and the graph's bytes per vector.

Two query sets: ``held-out`` (sample vectors left out of the index: their neighbours are other
records, at the distances real queries have) and ``perturbed`` (stored vectors plus a little
noise: near-duplicates, the easy case the first measurements used).

    python bench/ann_recall.py [--queries 300] [--synthetic 200000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from searchnasa.semantic.ann import ExactIndex, HnswIndex, HnswParams, _new_usearch, recall_at_k
from searchnasa.semantic.bundle import load_bundle


def latency_ms(index, queries: np.ndarray, k: int) -> tuple[float, float]:
    times = []
    for q in queries:
        t = time.perf_counter()
        index.search(q, k)
        times.append((time.perf_counter() - t) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def usearch_quantized_recall(ids: list[str], matrix: np.ndarray, params: HnswParams, exact: ExactIndex,
                             queries: np.ndarray, k: int = 10) -> float:
    """Recall@k of the same graph given float vectors, which usearch rounds to ``127 x`` itself."""
    index = _new_usearch(params)
    order = np.argsort(np.array([r.encode() for r in ids]), kind="stable")
    index.add(np.arange(len(ids), dtype=np.uint64), np.asarray(matrix, dtype=np.float32)[order], threads=1)
    sorted_ids = [ids[i] for i in order]
    hits = 0
    for q in queries:
        truth = {rid for rid, _ in exact.search(q, k)}
        hits += len(truth & {sorted_ids[int(key)] for key in index.search(q, k).keys})
    return hits / (k * len(queries))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--synthetic", type=int, default=0,
                    help="also time HNSW vs exact on this many synthetic vectors (sample vectors plus noise)")
    args = ap.parse_args()
    bundle = load_bundle()
    assert bundle is not None, "run scripts/embed_sample.py first"
    rng = np.random.default_rng(0)
    held = rng.choice(len(bundle.ids), args.queries, replace=False)
    keep = np.setdiff1d(np.arange(len(bundle.ids)), held)
    ids, matrix = [bundle.ids[i] for i in keep], bundle.matrix[keep]
    perturbed = matrix[rng.choice(len(ids), args.queries, replace=False)]
    perturbed = perturbed + rng.normal(0, 0.02, perturbed.shape).astype(np.float32)
    perturbed /= np.linalg.norm(perturbed, axis=1, keepdims=True)
    query_sets = {"held-out": bundle.matrix[held], "perturbed": perturbed}
    exact = ExactIndex(ids, matrix)
    print(f"sample: {len(ids)} real vectors x {matrix.shape[1]} indexed, {args.queries} queries per set")
    print("queries   M   ef_add ef_search recall@10 (usearch-quantized) recall@200 build_s p50_ms p95_ms bytes/vector")
    for m, ef_add, ef in ((8, 64, 32), (8, 64, 64), (16, 128, 32), (16, 128, 64), (16, 128, 96),
                          (16, 128, 128), (32, 200, 128)):
        params = HnswParams(connectivity=m, expansion_add=ef_add, expansion_search=ef)
        t = time.perf_counter()
        hnsw = HnswIndex.build(ids, matrix, params, threads=1)
        build = time.perf_counter() - t
        with tempfile.TemporaryDirectory() as tmp:
            hnsw.index.save(str(Path(tmp) / "g.usearch"))
            per_vector = (Path(tmp) / "g.usearch").stat().st_size / len(ids)
        for name, queries in query_sets.items():
            p50, p95 = latency_ms(hnsw, queries[:200], 10)
            rec = recall_at_k(exact, hnsw, queries, 10)
            theirs = usearch_quantized_recall(ids, matrix, params, exact, queries)
            rec200 = recall_at_k(exact, hnsw, queries[:100], 200)
            print(f"{name:<9} {m:<3} {ef_add:<6} {ef:<9} {rec:.4f}    ({theirs:.4f})          {rec200:.4f}     "
                  f"{build:6.2f} {p50:6.3f} {p95:6.3f} {per_vector:.0f}", flush=True)
    p50, p95 = latency_ms(exact, query_sets["held-out"][:200], 10)
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
        queries = query_sets["held-out"]
        rec = recall_at_k(ex, hnsw, queries[:200], 10)
        hp50, hp95 = latency_ms(hnsw, queries[:200], 200)
        ep50, ep95 = latency_ms(ex, queries[:100], 200)
        per = hnsw.index.memory_usage / n
        print(f"synthetic {n:,}: HNSW (default params) build {build:.1f}s, recall@10 {rec:.4f}, "
              f"k=200 p50 {hp50:.2f} ms p95 {hp95:.2f} ms; index {per:.0f} bytes/vector in RAM while built "
              f"({per * 1e6 / 2**30:.2f} GiB per million); exact k=200 p50 {ep50:.1f} ms p95 {ep95:.1f} ms")


if __name__ == "__main__":
    main()
