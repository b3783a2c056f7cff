"""What the topic facet and the full year histogram add to a search: the search function timed
with today's facets and with the facets as they were before them, query by query, in one process.

The two configurations differ only in the facets counted: before, the year aggregation without its
``missing`` bucket (no ``no_date`` count) and no ``topic`` aggregation; now, both. Each of the 200
requests of ``search_latency.query_set`` runs cold (facet cache cleared) under both, in alternating
order, best of ``--rounds`` each, so load from other jobs on a shared machine falls on both alike
(separate processes a minute apart differed by more than the effect under a load of 13-15).

    python bench/facet_cost.py --home bench/out/home-corpus-500k
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from _common import print_and_save  # noqa: E402
from search_latency import percentiles, query_set  # noqa: E402

from searchnasa.search import facets  # noqa: E402
from searchnasa.search.schemas import SearchRequest  # noqa: E402
from searchnasa.search.service import SearchService  # noqa: E402
from searchnasa.settings import Settings  # noqa: E402

NOW = (dict(facets.FACET_OWN_FILTER), dict(facets._AGGS))
BEFORE = ({k: v for k, v in NOW[0].items() if k not in ("topic", "no_date")},
          {**{k: v for k, v in NOW[1].items() if k != "topic"},
           "year": {"terms": {"field": "year", "size": 1000}}})


def configure(which: tuple[dict, dict]) -> None:
    facets.FACET_OWN_FILTER, facets._AGGS = which


def timed(service: SearchService, req: SearchRequest, which: tuple[dict, dict]) -> tuple[float, float]:
    configure(which)
    service.clear_caches()
    c0, w0 = time.process_time(), time.perf_counter()
    service.search(req)
    return (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True, help="a data home with an index (schema 6)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    service = SearchService(Settings().with_home(args.home))
    reqs = [SearchRequest(mode="lexical", **{k: v for k, v in q.items() if k != "kind"}) for q in query_set()]
    names = {"before": BEFORE, "now": NOW}
    for req in reqs:  # warm-up under both
        for which in names.values():
            timed(service, req, which)
    best: dict[str, list[list[float]]] = {n: [[float("inf")] * len(reqs), [float("inf")] * len(reqs)] for n in names}
    for round_ in range(args.rounds):
        for i, req in enumerate(reqs):
            order = list(names) if (i + round_) % 2 == 0 else list(reversed(names))
            for name in order:
                wall, cpu = timed(service, req, names[name])
                best[name][0][i] = min(best[name][0][i], wall)
                best[name][1][i] = min(best[name][1][i], cpu)
    configure(NOW)
    result: dict[str, Any] = {"home": str(args.home), "documents": service.reader.searcher().num_docs,
                              "queries": len(reqs), "rounds": args.rounds}
    for name in names:
        result[name] = {"function_ms": percentiles(best[name][0]), "function_cpu_ms": percentiles(best[name][1])}
    for kind in ("function_ms", "function_cpu_ms"):
        result[f"p95_ratio_{kind}"] = round(result["now"][kind]["p95"] / result["before"][kind]["p95"], 3)
        result[f"p50_ratio_{kind}"] = round(result["now"][kind]["p50"] / result["before"][kind]["p50"], 3)
    result["load_average"] = [round(x, 1) for x in os.getloadavg()]
    print_and_save(result, args.json)


if __name__ == "__main__":
    main()
