"""Proxy quality of related papers on the bundled sample (no human judgments exist for it).

- subject agreement: share of each seed's top 10 related records that share one of its subject
  categories (seeds: records with a subject and an abstract);
- link recall: for NTRS records whose ``related_ids`` point to other records inside the sample,
  the share of those links found in the top 10 / top 50 related records.

Builds a temporary home from the sample with its bundled vectors (no embedding needed).

    python bench/related_proxy.py [--seeds 300] [--lexical-only]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from _common import sample_home

from searchnasa.search.related import find_related
from searchnasa.search.service import SearchService
from searchnasa.semantic import seed_from_bundle
from searchnasa.semantic.provider import VectorProvider


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--lexical-only", action="store_true")
    args = ap.parse_args()
    with sample_home("related-proxy-") as (settings, stored):
        records = {r.id: r for r in stored}
        semantic = None
        if not args.lexical_only:
            seed_from_bundle(settings)
            semantic = VectorProvider(settings.vectors_dir)
        service = SearchService(settings, semantic=semantic)
        rng = random.Random(0)
        with_subject = [r for r in records.values() if r.subjects and r.abstract]
        seeds = rng.sample(with_subject, min(args.seeds, len(with_subject)))
        shares, times = [], []
        for seed in seeds:
            t = time.perf_counter()
            items = find_related(service, [seed.id], [], 10)
            times.append((time.perf_counter() - t) * 1000)
            shares.append(np.mean([bool(set(records[i.id].subjects) & set(seed.subjects)) for i in items]))
        linked = [(r, [x for x in r.related_ids if x in records and x != r.id]) for r in records.values()]
        linked = [(r, xs) for r, xs in linked if xs]
        found10 = found50 = total = 0
        for rec, targets in linked:
            got = [i.id for i in find_related(service, [rec.id], [], 50)]
            total += len(targets)
            found10 += sum(t in got[:10] for t in targets)
            found50 += sum(t in got for t in targets)
        label = "lexical only" if args.lexical_only else "semantic + lexical"
        print(f"{label}: {len(seeds)} seeds, subject agreement in top 10: {np.mean(shares):.3f}; "
              f"NTRS related links inside the sample: {total} from {len(linked)} records, "
              f"recall@10 {found10 / max(total, 1):.3f}, recall@50 {found50 / max(total, 1):.3f}; "
              f"find_related(limit=10) p50 {np.percentile(times, 50):.0f} ms, p95 {np.percentile(times, 95):.0f} ms")


if __name__ == "__main__":
    main()
