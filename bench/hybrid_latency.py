"""Hybrid search latency on the bundled sample: p50/p95 of ``SearchService.search`` in hybrid
mode, query embedding included (every query is new to the provider's query cache), next to the
same queries in lexical mode.

Queries: 2-4 word spans cut deterministically from the sample's real titles.

    python bench/hybrid_latency.py [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import re
import time

import numpy as np

from _common import sample_home

from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.semantic import seed_from_bundle
from searchnasa.semantic.provider import VectorProvider


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--exact-below", type=int, default=None,
                    help="serve the sample through the saved HNSW index (as 50k+ homes are) by "
                         "setting the provider's exact-search threshold below its 6,514 vectors")
    args = ap.parse_args()
    with sample_home("hybrid-latency-") as (settings, records):
        titles = [r.title for r in records]
        seed_from_bundle(settings)
        provider = (VectorProvider(settings.vectors_dir) if args.exact_below is None
                    else VectorProvider(settings.vectors_dir, exact_below=args.exact_below))
        provider.count()  # load (and, on the HNSW path, build and save the index) before timing
        service = SearchService(settings, semantic=provider)
        rng = random.Random(3)
        queries = []
        while len(queries) < args.queries:
            words = re.findall(r"[A-Za-z]{3,}", rng.choice(titles))
            if len(words) >= 2:
                n = rng.randint(2, min(4, len(words)))
                start = rng.randint(0, len(words) - n)
                q = " ".join(words[start:start + n]).lower()
                if q not in queries:
                    queries.append(q)
        service.search(SearchRequest(q="warm up", mode="hybrid"))
        for mode in ("lexical", "hybrid"):
            times = []
            for q in queries:
                t = time.perf_counter()
                service.search(SearchRequest(q=q, mode=mode))
                times.append((time.perf_counter() - t) * 1000)
            print(f"{mode:8s} {len(queries)} queries: p50 {np.percentile(times, 50):.1f} ms, "
                  f"p95 {np.percentile(times, 95):.1f} ms")
        times = []
        for q in queries[:50]:
            t = time.perf_counter()
            provider.embed_text(q + " x")
            times.append((time.perf_counter() - t) * 1000)
        print(f"query embedding alone: p50 {np.percentile(times, 50):.1f} ms, p95 {np.percentile(times, 95):.1f} ms")


if __name__ == "__main__":
    main()
