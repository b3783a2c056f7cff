"""nDCG@10, Recall@100 and MRR@10 as BEIR reports them, computed by ``ir-measures`` (trec_eval's
definitions via pytrec_eval), so the numbers compare with published BEIR tables.

Rankings are passed as ordered id lists; scores handed to trec_eval are derived from the rank so
our order is kept exactly (trec_eval would otherwise re-sort ties by document id).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import ir_measures
from ir_measures import RR, R, nDCG

MEASURES = {"ndcg@10": nDCG @ 10, "recall@100": R @ 100, "mrr@10": RR @ 10}


def to_run(rankings: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """Ordered id lists -> trec run dict with strictly decreasing scores (duplicates dropped)."""
    run: dict[str, dict[str, float]] = {}
    for qid, ids in rankings.items():
        unique = list(dict.fromkeys(ids))
        run[qid] = {doc: float(len(unique) - i) for i, doc in enumerate(unique)}
    return run


def evaluate(qrels: Mapping[str, Mapping[str, int]], rankings: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Mean metrics over the judged queries; a query with no results scores 0, not skipped."""
    judged = {q: dict(d) for q, d in qrels.items() if any(g > 0 for g in d.values())}
    run = to_run({q: rankings.get(q, []) for q in judged})
    # trec_eval skips queries absent from the run; an empty ranking must count as zero.
    per_query = per_query_metrics(judged, run)
    n = len(judged)
    return {name: (sum(per_query[name].values()) / n if n else 0.0) for name in MEASURES}


def per_query_metrics(qrels: Mapping[str, Mapping[str, int]],
                      run: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {name: {q: 0.0 for q in qrels} for name in MEASURES}
    by_measure = {m: name for name, m in MEASURES.items()}
    nonempty = {q: r for q, r in run.items() if r}
    for metric in ir_measures.iter_calc(list(MEASURES.values()), dict(qrels), nonempty):
        name = by_measure[metric.measure]
        if metric.query_id in out[name]:
            out[name][metric.query_id] = float(metric.value)
    return out
