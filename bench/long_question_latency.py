"""What the rare-word rule costs a long question typed as a sentence: lexical ``SearchService.search``
(counted, facets included) with a long question's rare words allowed to match alone (the default,
``reading.RARE_SHARE``) and without (``RARE_SHARE = 0``), each question timed both ways, taking
turns to go first, several rounds; also each way's match counts.

The questions are fixed, engineering-report questions of 6-9 content words (the rule only applies
from four content words on; the 200-request mix of ``bench/search_latency.py`` has 2-3 words).

    python bench/long_question_latency.py                              # the bundled sample
    python bench/long_question_latency.py --home bench/out/scale-1m/home --rounds 3
    python bench/long_question_latency.py --passages ../shared/data/eval/csfcube-related-dev/queries.jsonl

``--passages``: whole abstracts pasted in the box instead (a BEIR ``queries.jsonl``, its first 8
texts, cut at a word to the box's 1,000 characters as ``searchnasa eval --words all`` does): the rule
leaves a passage's "at least m of" group (m of 3 or more) as it is, so both ways should match the same.
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


def passages(path: Path, n: int = 8) -> list[str]:
    """The first ``n`` query texts of a BEIR ``queries.jsonl``, as a user pasting them would type them."""
    from searchnasa.eval.runner import as_plain_text

    texts = [json.loads(line)["text"] for line in path.read_text().splitlines() if line.strip()]
    return [as_plain_text(t) for t in texts[:n]]


def measure(settings: Settings, rounds: int, questions: list[str] = QUESTIONS) -> dict[str, object]:
    service = SearchService(settings)
    shares = {"rare_alone": reading.RARE_SHARE, "every_group_needs_m": 0.0}
    times: dict[str, list[float]] = {k: [] for k in shares}
    totals: dict[str, list[int]] = {k: [] for k in shares}
    for r in range(rounds + 1):  # round 0 warms the index's pages and is not counted
        for i, q in enumerate(questions):
            for label in (list(shares) if (r + i) % 2 == 0 else list(shares)[::-1]):
                reading.RARE_SHARE = shares[label]
                start = time.perf_counter()
                resp = service.search(SearchRequest(q=q, mode="lexical"))
                if r:
                    times[label].append((time.perf_counter() - start) * 1000)
                    if r == 1:
                        totals[label].append(int(resp.total or 0))
    reading.RARE_SHARE = shares["rare_alone"]
    out: dict[str, object] = {"questions": len(questions), "rounds": rounds}
    for label in shares:
        v = sorted(times[label])
        out[label] = {"p50_ms": round(statistics.median(v), 1), "max_ms": round(v[-1], 1),
                      "matches": totals[label]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, help="an indexed home (default: the bundled sample)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--passages", type=Path, help="a BEIR queries.jsonl: time pasted passages instead")
    args = ap.parse_args()
    questions = passages(args.passages) if args.passages else QUESTIONS
    if args.home:
        result = measure(Settings().with_home(args.home), args.rounds, questions)
    else:
        with sample_home("long-question-") as (settings, _):
            result = measure(settings, args.rounds, questions)
    print(json.dumps({"home": str(args.home or "sample"), **result}))


if __name__ == "__main__":
    main()
