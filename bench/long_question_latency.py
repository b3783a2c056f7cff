"""What the rare-word rule costs a long question typed as a sentence: lexical ``SearchService.search``
(counted, facets included) with a long question's rare words allowed to match alone (the default,
``reading.RARE_SHARE``) and without (``RARE_SHARE = 0``), each question timed both ways, taking
turns to go first, several rounds; also each way's match counts.

The questions are fixed, engineering-report questions of 6-9 content words (the rule only applies
from four content words on; the 200-request mix of ``bench/search_latency.py`` has 2-3 words).

    python bench/long_question_latency.py                              # the bundled sample
    python bench/long_question_latency.py --home bench/out/scale-1m/home --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from _common import sample_home

from searchnasa.search import reading
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.settings import Settings

QUESTIONS = [
    "what is the effect of the heat flux on the thermal protection of a reentry vehicle",
    "turbine blade cooling effectiveness measured at high blowing ratios",
    "lithium-ion battery cathode degradation mechanisms at high temperature",
    "how does boundary layer transition affect drag on a supersonic wing",
    "radiation damage in reactor pressure vessel steels under neutron irradiation",
    "measurements of jet noise from a supersonic nozzle with chevrons",
    "hydrogen embrittlement of high strength steels in pipelines",
    "numerical simulation of combustion instability in liquid rocket engines",
]


def measure(settings: Settings, rounds: int) -> dict[str, object]:
    service = SearchService(settings)
    shares = {"rare_alone": reading.RARE_SHARE, "every_group_needs_m": 0.0}
    times: dict[str, list[float]] = {k: [] for k in shares}
    totals: dict[str, list[int]] = {k: [] for k in shares}
    for r in range(rounds + 1):  # round 0 warms the index's pages and is not counted
        for i, q in enumerate(QUESTIONS):
            for label in (list(shares) if (r + i) % 2 == 0 else list(shares)[::-1]):
                reading.RARE_SHARE = shares[label]
                start = time.perf_counter()
                resp = service.search(SearchRequest(q=q, mode="lexical"))
                if r:
                    times[label].append((time.perf_counter() - start) * 1000)
                    if r == 1:
                        totals[label].append(int(resp.total or 0))
    reading.RARE_SHARE = shares["rare_alone"]
    out: dict[str, object] = {"questions": len(QUESTIONS), "rounds": rounds}
    for label in shares:
        v = sorted(times[label])
        out[label] = {"p50_ms": round(statistics.median(v), 1), "max_ms": round(v[-1], 1),
                      "matches": totals[label]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, help="an indexed home (default: the bundled sample)")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.home:
        result = measure(Settings().with_home(args.home), args.rounds)
    else:
        with sample_home("long-question-") as (settings, _):
            result = measure(settings, args.rounds)
    print(json.dumps({"home": str(args.home or "sample"), **result}))


if __name__ == "__main__":
    main()
