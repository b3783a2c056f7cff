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

``--home HOME`` instead measures the saved index of a home (e.g. the 4M synthetic home of
``bench/scale.py --keep``) against exact search over its vector store, streamed: the queries are
real sample vectors (not in a synthetic store), recall@10 and recall@200 for a sweep of IVF-PQ
``nprobe`` values (or the HNSW graph as saved), with warm query latency.

    python bench/ann_recall.py --home bench/out/scale-4m/home [--queries 200] [--nprobe 16 32 64 128]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from searchnasa.semantic.ann import load_index
from searchnasa.semantic.exact import ExactIndex, recall_at_k
from searchnasa.semantic.hnsw import HnswIndex, HnswParams, _new_usearch
from searchnasa.semantic.saved import _chunks, saved_kind
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


def ivfpq_sweep(ids: list[str], matrix: np.ndarray, exact: ExactIndex, query_sets: dict[str, np.ndarray]) -> None:
    """The compact index (``ivfpq.py``) built the product's way, from a vector store, with the
    parameters it picks for this many vectors; recall for a sweep of probed cells."""
    from searchnasa.semantic.ann import build_from_store
    from searchnasa.semantic.ivfpq import FAISS_NAME
    from searchnasa.semantic.vectors import VectorStore

    with tempfile.TemporaryDirectory() as tmp:
        vs = VectorStore(Path(tmp))
        vs.put_many([(rid, f"k{i}", matrix[i]) for i, rid in enumerate(ids)])
        t = time.perf_counter()
        index = build_from_store(vs.conn, Path(tmp), uid=vs.uid(), kind="ivfpq")
        build = time.perf_counter() - t
        vs.close()
        in_ram = (index.path / FAISS_NAME).stat().st_size / len(ids)
        print(f"IVF-PQ {index.params.__dict__}: build {build:.1f}s, {in_ram:.0f} bytes/vector in RAM "
              f"(codes, rows, centroids), 384 on disk")
        print("queries   nprobe recall@10 recall@200 p50_ms p95_ms")
        chosen = index.params.nprobe
        for nprobe in sorted({8, 16, 32, 64, chosen}):
            index.params.nprobe = min(nprobe, index.params.nlist)
            for name, queries in query_sets.items():
                p50, p95 = latency_ms(index, queries[:200], 10)
                print(f"{name:<9} {nprobe:<6} {recall_at_k(exact, index, queries, 10):.4f}    "
                      f"{recall_at_k(exact, index, queries[:100], 200):.4f}     {p50:6.3f} {p95:6.3f}"
                      f"{'  (chosen)' if nprobe == chosen else ''}", flush=True)


def exact_top(home: Path, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows (positions in id order, the saved index's rows) of each query's exact top ``k`` over the
    home's whole vector store, and their cosines, read in chunks: never the whole float matrix."""
    import sqlite3

    conn = sqlite3.connect(home / "vectors" / "vectors.sqlite3")
    best_rows = np.zeros((len(queries), 0), dtype=np.int64)
    best_sims = np.zeros((len(queries), 0), dtype=np.float32)
    start = 0
    for ids, mat in _chunks(conn.execute("SELECT id, vec FROM vectors ORDER BY id"), 100_000):
        mat /= np.linalg.norm(mat, axis=1, keepdims=True)
        sims = queries @ mat.T
        rows = np.broadcast_to(np.arange(start, start + len(ids)), sims.shape)
        all_sims, all_rows = np.hstack([best_sims, sims]), np.hstack([best_rows, rows])
        top = np.argpartition(-all_sims, min(k, all_sims.shape[1] - 1), axis=1)[:, :k]
        best_sims, best_rows = np.take_along_axis(all_sims, top, 1), np.take_along_axis(all_rows, top, 1)
        start += len(ids)
    conn.close()
    order = np.argsort(-best_sims, axis=1)
    return np.take_along_axis(best_rows, order, 1), np.take_along_axis(best_sims, order, 1)


def saved_index_recall(home: Path, n_queries: int, nprobes: list[int]) -> None:
    kind = saved_kind(home / "vectors")
    index = load_index(home / "vectors", kind or "hnsw")
    assert index is not None, f"no saved vector index in {home / 'vectors'}"
    bundle = load_bundle()
    rng = np.random.default_rng(0)
    queries = bundle.matrix[rng.choice(len(bundle.ids), n_queries, replace=False)]
    t = time.perf_counter()
    truth, truth_sims = exact_top(home, queries, 200)
    print(f"{kind} index of {len(index):,} vectors in {home}; exact top 200 of {n_queries} real sample "
          f"vectors took {time.perf_counter() - t:.0f}s; params {index.params.__dict__}")
    # A synthetic store packs ~200 vectors around each real one, so the 10th and 11th nearest often
    # differ by less than int8 rounding (median gap 2e-4): "tied" also counts a result whose cosine
    # is within 1e-3 of the exact k-th (an epsilon-recall), which separates ties from misses.
    print("nprobe recall@10 (tied) recall@200 (tied) k10_p50_ms k10_p95_ms k200_p50_ms k200_p95_ms")
    for nprobe in nprobes if kind == "ivfpq" else [0]:
        if kind == "ivfpq":
            index.params.nprobe = nprobe
        r10 = r200 = t10 = t200 = 0
        for q, want, sims in zip(queries, truth, truth_sims):
            for k in (10, 200):
                got = index.search(q, k)
                hits = len(set(index.keys_of([r for r, _ in got]).values()) & set(want[:k].tolist()))
                tied = sum(sim >= sims[k - 1] - 1e-3 for _, sim in got)
                if k == 10:
                    r10, t10 = r10 + hits, t10 + tied
                else:
                    r200, t200 = r200 + hits, t200 + tied
        p50, p95 = latency_ms(index, queries, 10)
        q50, q95 = latency_ms(index, queries, 200)
        print(f"{nprobe:<6} {r10 / (10 * n_queries):.4f} ({t10 / (10 * n_queries):.4f}) "
              f"{r200 / (200 * n_queries):.4f} ({t200 / (200 * n_queries):.4f})     "
              f"{p50:6.2f}     {p95:6.2f}     {q50:6.2f}      {q95:6.2f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--home", type=Path, help="measure this home's saved index against its whole store")
    ap.add_argument("--nprobe", type=int, nargs="+", default=[16, 32, 64, 128])
    ap.add_argument("--synthetic", type=int, default=0,
                    help="also time HNSW vs exact on this many synthetic vectors (sample vectors plus noise)")
    args = ap.parse_args()
    if args.home:
        return saved_index_recall(args.home, args.queries, args.nprobe)
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
    ivfpq_sweep(ids, matrix, exact, query_sets)

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
