"""Related-papers latency: ``find_related(limit=10)`` for random seeds, with the seeds' vectors stored.

Issue 17 asks for the p95 on the sample and at 1M SYNTHETIC records (target: under 150 ms). The
function is what ``/related/{id}`` and ``/api/related`` call; the server adds the page around it.
One BLAS thread, as a served worker runs (``web/app.py``).

    python bench/related_latency.py                       # the bundled sample, bundled vectors
    python bench/related_latency.py --home bench/out/scale-1000000/home   # a home kept by scale.py --keep
    python bench/related_latency.py --compare             # also each seed in one pass, taking turns

Seeds are drawn from the store (records with an abstract when ``--with-abstract``; by default any
record, as people open any record page). The first ``--warm`` seeds are timed but not counted (the
vector index and the store's pages come into memory).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from _common import sample_home

from searchnasa.records import Record
from searchnasa.search import related
from searchnasa.search.related import find_related
from searchnasa.search.service import SearchService
from searchnasa.semantic import seed_from_bundle
from searchnasa.semantic.provider import VectorProvider
from searchnasa.settings import Settings
from searchnasa.store import open_store


def pick_seeds(settings: Settings, n: int, seed: int, with_abstract: bool) -> list[str]:
    """``n`` distinct record ids drawn at random by change sequence (no walk over a 1M store)."""
    rng = random.Random(seed)
    chosen: dict[str, None] = {}
    store = open_store(settings.home, readonly=True)
    try:
        top = store.max_seq()
        for _ in range(50 * n):
            if len(chosen) == n:
                break
            at = rng.randint(1, top)
            for _, raw in store.json_between(at - 1, at):
                rec = Record.model_validate_json(raw)
                if rec.abstract or not with_abstract:
                    chosen[rec.id] = None
    finally:
        store.close()
    return list(chosen)


def measure(settings: Settings, seeds: int, warm: int, with_abstract: bool,
            compare: bool = False) -> dict[str, float | int]:
    """p50 / p95 of ``find_related``; with ``compare``, each seed is also ranked with the seed's
    words in one pass (``related.COMMON_SHARE`` above 1: no word is common), the two taking turns
    to go first, so both see the same machine."""
    service = SearchService(settings, semantic=VectorProvider(settings.vectors_dir))
    ids = pick_seeds(settings, seeds + warm, 17, with_abstract)
    shares = {"": related.COMMON_SHARE} | ({"one_pass_": 2.0} if compare else {})
    times: dict[str, list[float]] = {k: [] for k in shares}
    cpu: dict[str, list[float]] = {k: [] for k in shares}
    for n, rid in enumerate(ids):
        for label in (list(shares) if n % 2 == 0 else list(shares)[::-1]):
            related.COMMON_SHARE = shares[label]
            t, c = time.perf_counter(), time.process_time()
            items = find_related(service, [rid], [], 10)
            if n >= warm:
                times[label].append((time.perf_counter() - t) * 1000)
                cpu[label].append((time.process_time() - c) * 1000)
            assert items, f"no related papers for {rid}"
    related.COMMON_SHARE = shares[""]
    out: dict[str, float | int] = {"seeds": len(times[""]), "vectors": service.semantic.count()}
    for label in shares:
        q = statistics.quantiles(times[label], n=100)
        out |= {f"{label}p50_ms": round(q[49], 1), f"{label}p95_ms": round(q[94], 1),
                f"{label}max_ms": round(max(times[label]), 1), f"{label}cpu_p50_ms": round(statistics.median(cpu[label]), 1)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, help="a home with store, index and vectors (default: the sample)")
    ap.add_argument("--seeds", type=int, default=200)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--with-abstract", action="store_true", help="only seeds that have an abstract")
    ap.add_argument("--compare", action="store_true",
                    help="also time each seed with its words in one pass (before the two-pass seed query)")
    args = ap.parse_args()
    threadpool_limits(limits=1, user_api="blas")
    if args.home:
        result = measure(Settings().with_home(args.home), args.seeds, args.warm, args.with_abstract, args.compare)
    else:
        with sample_home("related-latency-") as (settings, _):
            seed_from_bundle(settings)
            result = measure(settings, args.seeds, args.warm, args.with_abstract, args.compare)
    print(json.dumps({"home": str(args.home or "sample"), **result}))


if __name__ == "__main__":
    main()
