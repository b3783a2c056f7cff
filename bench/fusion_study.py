"""Compare ways of fusing lexical and semantic rankings on a BEIR set (prints nDCG@10 per method).

Retrieves once per query through the product (the search service's lexical ranking, the semantic
provider's exact cosine), then fuses offline: reciprocal rank fusion, min-max and z-score weighted
sums (semantic scores known for every candidate, since every record has a vector), and the same
after dense pseudo-relevance feedback (Rocchio on the query vector with the fused top documents).
Choose constants on one set, confirm on the other. The product uses min-max with semantic weight
0.7 (``search/fusion.py: SEMANTIC_WEIGHT``), chosen here on SciFact and confirmed on NPL. The
lists here ignore the similarity floor (it cost about 0.002 nDCG@10 on SciFact, 0 on NPL).

    python bench/fusion_study.py ../shared/data/eval/scifact [--home DIR] [--title-boost 0.3]
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

import numpy as np

from searchnasa.eval.beir import load_beir
from searchnasa.eval.metrics import evaluate
from searchnasa.eval.runner import as_any_words, build_eval_home, doc_id_of
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.semantic.provider import VectorProvider
from searchnasa.settings import Settings

DEPTH = 200


def lexical_lists(service: SearchService, queries: dict[str, str]) -> dict[str, list[tuple[str, float]]]:
    out = {}
    for qid, text in queries.items():
        hits = []
        for page in (1, 2):
            resp = service.search(SearchRequest(q=as_any_words(text), per_page=100, page=page, mode="lexical"))
            hits.extend((h.id, h.score) for h in resp.results)
            if len(resp.results) < 100:
                break
        out[qid] = hits
    return out


def norm_minmax(d: dict[str, float]) -> dict[str, float]:
    if not d:
        return {}
    lo, hi = min(d.values()), max(d.values())
    return {k: (v - lo) / (hi - lo) if hi > lo else 1.0 for k, v in d.items()}


def norm_z(d: dict[str, float]) -> dict[str, float]:
    if not d:
        return {}
    v = np.array(list(d.values()))
    mu, sd = v.mean(), v.std() or 1.0
    return {k: (x - mu) / sd for k, x in d.items()}


def fuse(lex: list[tuple[str, float]], sem_all: dict[str, float], method: str, w: float) -> list[str]:
    """``sem_all`` holds the cosine of every candidate (lexical ones included)."""
    lex_d = dict(lex)
    cands = set(lex_d) | set(sem_all)
    if method == "rrf":
        lex_rank = {d: i for i, (d, _) in enumerate(lex)}
        sem_sorted = sorted(sem_all, key=lambda d: -sem_all[d])
        sem_rank = {d: i for i, d in enumerate(sem_sorted[:DEPTH])}
        s = {d: ((1 - w) / (61 + lex_rank[d]) if d in lex_rank else 0.0) + (w / (61 + sem_rank[d]) if d in sem_rank else 0.0)
             for d in cands}
    elif method == "related":  # the related-papers formula: raw cosine + BM25 / best BM25
        top = max(lex_d.values(), default=0.0) or 1.0
        s = {d: w * sem_all.get(d, 0.0) + (1 - w) * lex_d.get(d, 0.0) / top for d in cands}
    else:
        floor = min(lex_d.values(), default=0.0)
        lex_full = {d: lex_d.get(d, floor) for d in cands}
        sem_full = {d: sem_all.get(d, 0.0) for d in cands}
        n = norm_minmax if method == "minmax" else norm_z
        ln, sn = n(lex_full), n(sem_full)
        s = {d: (1 - w) * ln[d] + w * sn[d] for d in cands}
    return [d for d, _ in sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))][:100]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", type=Path)
    ap.add_argument("--home", type=Path, default=None)
    ap.add_argument("--title-boost", type=float, default=None)
    args = ap.parse_args()
    data = load_beir(args.folder)
    home = args.home or Path(f"/tmp/fusion-{data.name}")
    if not (home / "vectors").exists():
        home.mkdir(parents=True, exist_ok=True)
        from searchnasa.semantic.cache import open_default_cache  # noqa: F401
        build_eval_home(data, home, need_vectors=True)
    from searchnasa.index import build_index, schema
    from searchnasa.search import lexical

    if args.title_boost is not None:
        lexical.TITLE_BOOST = args.title_boost
    settings = Settings().with_home(home)
    from searchnasa.store import open_store

    store = open_store(home)
    build_index(store, settings.index_dir)  # rebuilds by itself when the schema changed
    store.close()
    provider = VectorProvider(settings.vectors_dir)
    service = SearchService(settings)
    t = time.time()
    assert provider.available(), "no vectors in the eval home"
    saved = home / f"lists-v{schema.SCHEMA_VERSION}-{lexical.TITLE_BOOST}.pkl"
    if saved.exists():
        lex, qvec = pickle.loads(saved.read_bytes())
    else:
        lex = lexical_lists(service, data.queries)
        qvec = {q: provider.embed_text(text) for q, text in data.queries.items()}
        saved.write_bytes(pickle.dumps((lex, qvec)))
    print(f"retrieved in {time.time() - t:.0f}s", file=sys.stderr)
    ids, mat = provider._ids, provider._matrix  # noqa: SLF001 (a study script)

    def sem_scores(vec: np.ndarray, extra: list[str]) -> dict[str, float]:
        sims = mat @ vec
        top = np.argpartition(-sims, DEPTH)[:DEPTH]
        d = {ids[i]: float(sims[i]) for i in top}
        pos = provider._pos  # noqa: SLF001
        for e in extra:
            if e in pos:
                d[e] = float(sims[pos[e]])
        return d

    def score(rank: dict[str, list[str]]) -> dict[str, float]:
        return evaluate(data.qrels, {q: [doc_id_of(d) for d in r] for q, r in rank.items()})

    base_sem = {q: sem_scores(qvec[q], [d for d, _ in lex[q]]) for q in data.queries}
    lex_only = {q: [d for d, _ in lex[q]][:100] for q in data.queries}
    sem_only = {q: sorted(base_sem[q], key=lambda d: -base_sem[q][d])[:100] for q in data.queries}
    print(f"lexical  {score(lex_only)}")
    print(f"semantic {score(sem_only)}")
    for method, weights in (("rrf", (0.5,)), ("related", (0.5, 0.65, 0.8)), ("minmax", (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)), ("z", (0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9))):
        for w in weights:
            fused = {q: fuse(lex[q], base_sem[q], method, w) for q in data.queries}
            print(f"{method:7s} w={w}: {score(fused)['ndcg@10']:.4f}")
    # dense PRF: move the query vector toward the top fused documents, then fuse again
    for method, w in (("z", 0.5), ("minmax", 0.5), ("z", 0.6)):
        for m, beta in ((3, 0.5), (5, 0.5), (5, 1.0), (10, 1.0)):
            fused0 = {q: fuse(lex[q], base_sem[q], method, w) for q in data.queries}
            ranked = {}
            for q in data.queries:
                top = [provider._pos[d] for d in fused0[q][:m] if d in provider._pos]  # noqa: SLF001
                v = qvec[q] + beta * mat[top].mean(axis=0)
                v /= np.linalg.norm(v)
                ranked[q] = fuse(lex[q], sem_scores(v, [d for d, _ in lex[q]]), method, w)
            print(f"prf {method} w={w} m={m} beta={beta}: {score(ranked)['ndcg@10']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
