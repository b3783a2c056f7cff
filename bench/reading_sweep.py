"""Sweep how long queries are read as typed (search/reading.py: MIN_SHARE, MIN_REQUIRED) with the
product's own evaluation: each BEIR query typed as a sentence (``--words all``).

    .venv/bin/python bench/reading_sweep.py scifact,npl 0.1:2,0.2:1 lexical,hybrid

Prints one line per set and setting: nDCG@10 and Recall@100 per retrieval.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from searchnasa.eval.runner import run_eval
from searchnasa.search import reading

EVAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "eval"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", help="comma-separated BEIR folders under shared/data/eval")
    parser.add_argument("settings", help="comma-separated SHARE:MIN pairs, e.g. 0.1:2,0.2:1")
    parser.add_argument("retrievals", nargs="?", default="lexical,hybrid")
    parser.add_argument("--eval-dir", type=Path, default=EVAL)
    args = parser.parse_args()
    for name in args.sets.split(","):
        for pair in args.settings.split(","):
            share, minimum = pair.split(":")
            reading.MIN_SHARE, reading.MIN_REQUIRED = float(share), int(minimum)
            result = run_eval(args.eval_dir / name, words="all", retrievals=args.retrievals.split(","))
            scores = {k: (round(v["ndcg@10"], 4), round(v["recall@100"], 4)) for k, v in result["results"].items()}
            print(name, f"share={share} min={minimum}", scores, flush=True)


if __name__ == "__main__":
    main()
