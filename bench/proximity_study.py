"""Term proximity (adjacent word pairs) and exact-form bonus: nDCG@10 per weight on a BEIR set.

For each (pair weight, exact weight) the product's lexical ranking is rebuilt with
``search/lexical.py``'s ``PAIR_WEIGHT`` / ``EXACT_WEIGHT`` set to those values (the same query
path users get: bare words, OR'd for a sentence), its top 200 is scored, and it is fused offline
with the exact cosines the way the product fuses (min-max weighted sum, semantic weight from
``search/service.py``, the cosine of every candidate; no similarity floor). Choose weights on one
set, confirm on the other; then run ``searchnasa eval`` for the product's own numbers.

    python bench/proximity_study.py ../shared/data/eval/scifact --home /tmp/q5/scifact \\
        --pairs 0 0.1 0.2 0.3 --exact 0
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fusion_study import DEPTH, fuse, lexical_lists

from searchnasa.eval.beir import load_beir
from searchnasa.eval.metrics import evaluate
from searchnasa.eval.runner import build_eval_home, doc_id_of
from searchnasa.search import lexical
from searchnasa.search.fusion import SEMANTIC_WEIGHT
from searchnasa.search.service import SearchService
from searchnasa.semantic.provider import VectorProvider
from searchnasa.settings import Settings


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", type=Path)
    ap.add_argument("--home", type=Path, required=True, help="eval home (built here when missing)")
    ap.add_argument("--pairs", type=float, nargs="+", default=[0.0])
    ap.add_argument("--exact", type=float, nargs="+", default=[0.0])
    ap.add_argument("--weights", type=float, nargs="+", default=[SEMANTIC_WEIGHT],
                    help="semantic weights for the fusion")
    ap.add_argument("--fusion", nargs="+", default=["minmax"],
                    help="minmax (the product), related (raw cosine + BM25 / best BM25), z, rrf")
    args = ap.parse_args()
    data = load_beir(args.folder)
    if not (args.home / "vectors").exists():
        args.home.mkdir(parents=True, exist_ok=True)
        build_eval_home(data, args.home, need_vectors=True)
    settings = Settings().with_home(args.home)
    provider = VectorProvider(settings.vectors_dir)
    assert provider.available(), "no vectors in the eval home"
    service = SearchService(settings)
    qvec = {q: provider.embed_text(text) for q, text in data.queries.items()}
    ids, mat, pos = provider._ids, provider._matrix, provider._pos

    def cosines(q: str, extra: list[str]) -> dict[str, float]:
        sims = mat @ qvec[q]
        top = np.argpartition(-sims, DEPTH)[:DEPTH]
        out = {ids[i]: float(sims[i]) for i in top}
        out.update({e: float(sims[pos[e]]) for e in extra if e in pos})
        return out

    def ndcg(rank: dict[str, list[str]]) -> float:
        return evaluate(data.qrels, {q: [doc_id_of(d) for d in r] for q, r in rank.items()})["ndcg@10"]

    print(f"# {data.name}: {len(data.queries)} queries, semantic weights {args.weights}")
    for pair_w in args.pairs:
        for exact_w in args.exact:
            lexical.PAIR_WEIGHT, lexical.EXACT_WEIGHT = pair_w, exact_w
            t = time.perf_counter()
            lex = lexical_lists(service, data.queries)
            took = time.perf_counter() - t
            lex_only = {q: [d for d, _ in lex[q]][:100] for q in data.queries}
            sem = {q: cosines(q, [d for d, _ in lex[q]]) for q in data.queries}
            print(f"pair={pair_w:<5} exact={exact_w:<5} lexical {ndcg(lex_only):.4f}  ({took:.1f}s lexical)")
            for method in args.fusion:
                hybrid = [ndcg({q: fuse(lex[q], sem[q], method, w) for q in data.queries}) for w in args.weights]
                print(f"    hybrid {method:8s} " + " ".join(f"w={w}: {h:.4f}" for w, h in zip(args.weights, hybrid)),
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
