"""The cost of our layers over a raw Tantivy query, and where our time goes, per query class.

For every request of ``search_latency.query_set()`` (200 requests: words, phrases, operators,
filters, sorts, deep pages; all facets), interleaved query by query so that both sides see the
same load on a shared machine:

- **ours**: ``SearchService.search`` in lexical mode (the function behind the page, the JSON API
  and the CLI): identifier lookup, work budget, query compilation, the page, cards with
  highlighted titles and snippets, all six facets; cold (the facet cache is cleared before each
  run), and separately with the facets cached (what turning a page or changing the sort costs);
  copies of one work are not folded (``fold_copies=False``): the raw side cannot fold them;
- **raw**: the same query text through Tantivy's own parser on the ``all`` field of the same
  index: top ``per_page`` at the same offset, exact count, and the page's stored documents (the
  comparison ``bench/scale.py`` makes). It does no filtering, sorting, facets or highlighting.

Each side keeps its best of ``--rounds`` runs per request (after one warm-up pass). A second,
instrumented pass splits our time into stages (the wrappers add a few microseconds each, so the
stage sums are slightly above the plain timings):

    .venv/bin/python bench/search_overhead.py                     # bench/out/home-corpus-1m (SYNTHETIC 1M)
    .venv/bin/python bench/search_overhead.py --home bench/out/home-sample --json out.json

The home is only read.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_and_save  # noqa: E402
from search_latency import query_set  # noqa: E402

from searchnasa.search import facets as facets_module  # noqa: E402
from searchnasa.search import service as service_module  # noqa: E402
from searchnasa.search.schemas import SearchRequest  # noqa: E402
from searchnasa.search.service import SearchService  # noqa: E402
from searchnasa.settings import Settings  # noqa: E402

STAGES = ("identify", "budget", "page", "hits", "facets", "sampled_facets")


def pct(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": round(q[49], 2), "p95": round(q[94], 2), "p99": round(q[98], 2),
            "mean": round(statistics.fmean(ordered), 2)}


def raw_runner(service: SearchService, q: dict[str, Any]) -> Callable[[], None] | None:
    """The raw Tantivy query for one request, or None when Tantivy's parser rejects the text."""
    index = service.reader.index
    searcher = service.reader.searcher()
    try:
        parsed = index.parse_query(q["q"], ["all"])
    except ValueError:
        return None
    per_page = q.get("per_page", 20)
    offset = (q.get("page", 1) - 1) * per_page

    def run() -> None:
        hits = searcher.search(parsed, limit=per_page, offset=offset, count=True)
        for _, addr in hits.hits:
            searcher.doc(addr)

    return run


def best_ms(fn: Callable[[], Any], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - started) * 1000)
    return best


def stage_profile(service: SearchService, reqs: list[SearchRequest]) -> list[dict[str, float]]:
    """Per request, ms spent in each stage (one instrumented run)."""
    spent: dict[str, float] = collections.defaultdict(float)

    def wrap(owner: Any, name: str, label: str) -> None:
        inner = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] += (time.perf_counter() - started) * 1000

        setattr(owner, name, timed)

    targets = ((service_module, "identify", "identify"), (service_module, "fit_to_budget", "budget"),
               (service_module, "lexical_page", "page"), (service_module, "hit_card", "hits"),
               (service.facet_counter, "count", "facets"), (facets_module, "sampled_aggs", "sampled_facets"))
    saved = [(owner, name, getattr(owner, name)) for owner, name, _ in targets]
    for owner, name, label in targets:
        wrap(owner, name, label)
    rows = []
    try:
        for req in reqs:
            service.clear_caches()  # the stage profile times cold searches
            spent.clear()
            started = time.perf_counter()
            service.search(req, fold_copies=False)
            total = (time.perf_counter() - started) * 1000
            rows.append({"total": total, **{s: spent.get(s, 0.0) for s in STAGES}})
    finally:
        for owner, name, inner in saved:
            setattr(owner, name, inner)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=ROOT / "bench" / "out" / "home-corpus-1m")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    service = SearchService(Settings().with_home(args.home))
    queries = query_set()
    reqs = [SearchRequest(mode="lexical", **{k: v for k, v in q.items() if k != "kind"}) for q in queries]
    raws = [raw_runner(service, q) for q in queries]
    load_before = os.getloadavg()
    for req, raw in zip(reqs, raws):  # warm-up
        service.search(req, fold_copies=False)
        if raw is not None:
            raw()
    ours, raw_ms, ours_paired, warm = [], [], [], []
    kinds: dict[str, dict[str, list[float]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for q, req, raw in zip(queries, reqs, raws):
        def cold(req: SearchRequest = req) -> None:
            service.clear_caches()  # no facet counts remembered from the previous run
            service.search(req, fold_copies=False)

        mine = best_ms(cold, args.rounds)
        ours.append(mine)
        warm.append(best_ms(lambda req=req: service.search(req, fold_copies=False), args.rounds))  # facets from the cache
        kinds[q["kind"]]["ours"].append(mine)
        if raw is not None:
            theirs = best_ms(raw, args.rounds)
            raw_ms.append(theirs)
            ours_paired.append(mine)
            kinds[q["kind"]]["raw"].append(theirs)
    profile = stage_profile(service, reqs)
    load_after = os.getloadavg()

    by_kind: dict[str, Any] = {}
    for kind, sides in kinds.items():
        rows = [p for q, p in zip(queries, profile) if q["kind"] == kind]
        by_kind[kind] = {
            "n": len(sides["ours"]),
            "ours_ms": pct(sides["ours"]) if len(sides["ours"]) > 1 else None,
            "raw_ms": pct(sides["raw"]) if len(sides["raw"]) > 1 else None,
            "stage_mean_ms": {s: round(statistics.fmean(r[s] for r in rows), 2) for s in ("total",) + STAGES},
        }
    ours_p, raw_p = pct(ours_paired), pct(raw_ms)
    stage_all = {s: round(statistics.fmean(r[s] for r in profile), 2) for s in ("total",) + STAGES}
    result = {
        "home": str(args.home), "documents": service.reader.searcher().num_docs,
        "requests": len(reqs), "rounds": args.rounds,
        "ours_ms": pct(ours), "ours_facets_cached_ms": pct(warm), "raw_tantivy_requests": len(raw_ms), "raw_tantivy_ms": raw_p,
        "ours_on_same_requests_ms": ours_p,
        "ratio": {k: round(ours_p[k] / max(raw_p[k], 1e-6), 2) for k in ("p50", "p95", "p99")},
        "stage_mean_ms": stage_all,
        "stage_share": {s: round(stage_all[s] / max(stage_all["total"], 1e-9), 3) for s in STAGES},
        "by_kind": by_kind,
        "load_average_before_after": [[round(x, 1) for x in load_before], [round(x, 1) for x in load_after]],
    }
    print_and_save(result, args.json)


if __name__ == "__main__":
    main()
