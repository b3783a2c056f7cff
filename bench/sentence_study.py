"""Sentence vectors (issue 17): where does a sentence-level similarity pay, measured on the product's stages?

For each BEIR set, each query is ranked two ways by the product itself: **related mode** (the query
is a seed paper, ``rank_related``) and **hybrid search** (its words OR-joined, ``service.search``).
The top ``N`` of each list is then re-ranked by

    score' = (1 - w) * minmax(base score) + w * minmax(sentence similarity)

where the sentence similarity of a candidate is the mean, over the query's sentences, of the best
cosine to any of the candidate's sentences (title + abstract split by ``searchnasa.sentences``;
for a one-sentence claim this is the max over the candidate's sentences). Constants are chosen on
``--tune`` (one set) and confirmed on the others; nDCG@10 is printed for every (N, w).

``--cost`` measures embedding cost instead: sentences per record and documents/s vs sentence
vectors/s per backend, on real sample records, projected to 4M records.

    nice -n 15 .venv/bin/python bench/sentence_study.py [--sets scifact,npl,csfcube-related-dev]
        [--tune csfcube-related-dev] [--depths 50,100,200] [--weights 0,0.1,...]
    nice -n 15 .venv/bin/python bench/sentence_study.py --cost [--docs 128]
    nice -n 15 .venv/bin/python bench/sentence_study.py --latency csfcube-related-dev [--seeds 100]

Homes are built once in ``bench/out/sentence-homes`` by ``build_eval_home`` (record vectors from
the shared embedding cache). Sentence vectors go through the
shared embedding cache, so a rerun embeds nothing.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from searchnasa.eval.beir import load_beir
from searchnasa.eval.metrics import evaluate
from searchnasa.eval.runner import as_any_words, build_eval_home, doc_id_of, make_service
from searchnasa.search.related import Seed, parts_of, rank_related
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.sentence_match import adds_nothing
from searchnasa.sentences import record_sentences
from searchnasa.semantic.cache import open_default_cache
from searchnasa.semantic.embedder import get_embedder
from searchnasa.semantic.vectors import embed_texts
from searchnasa.settings import Settings

EVAL = Path("/work/shared/data/eval")
OUT = Path("bench/out/sentence-homes")
DEPTH = 200


@dataclass
class Lists:
    """Each query's top ``DEPTH`` (doc id, base score) for one way of ranking."""

    ranked: dict[str, list[tuple[str, float]]] = field(default_factory=dict)


def home_service(name: str):
    """The eval set and a search service over its home in ``bench/out/sentence-homes``, built
    once with the product's stages (``build_eval_home``; vectors from the shared cache)."""
    data = load_beir(EVAL / name)
    home = OUT / name
    if not (home / "done").exists():
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        build_eval_home(data, home, need_vectors=True)
        (home / "done").touch()
    return data, make_service(Settings().with_home(home), with_semantic=True)


def related_lists(service, queries: dict[str, str]) -> Lists:
    parts = parts_of(service)
    out = Lists()
    for qid, text in queries.items():
        ranked = rank_related(parts, [Seed(title="", abstract=text)], limit=DEPTH, explain=False)
        out.ranked[qid] = [(doc_id_of(c.id), c.score) for c, _ in ranked]
    return out


def hybrid_lists(service, queries: dict[str, str]) -> Lists:
    out = Lists()
    for qid, text in queries.items():
        hits = []
        for page in (1, 2):
            req = SearchRequest(q=as_any_words(text), per_page=100, page=page, mode="hybrid")
            hits += [(doc_id_of(h.id), h.score) for h in service.search(req, fold_copies=False).results]
        out.ranked[qid] = hits[:DEPTH]
    return out


def sentence_matrix(texts_by_id: dict[str, list[str]], embedder, cache, label: str) -> tuple[dict[str, np.ndarray], dict]:
    """Every id's sentence vectors (rows), embedded through the cache; and what it cost."""
    flat = [s for sents in texts_by_id.values() for s in sents]
    start = time.perf_counter()
    vecs = embed_texts(flat, embedder, cache, batch_size=64) if flat else np.zeros((0, 384), np.float32)
    spent = time.perf_counter() - start
    out, i = {}, 0
    for rid, sents in texts_by_id.items():
        out[rid] = vecs[i:i + len(sents)]
        i += len(sents)
    print(f"  {label}: {len(texts_by_id)} texts, {len(flat)} sentences, {spent:.1f}s", file=sys.stderr, flush=True)
    return out, {"texts": len(texts_by_id), "sentences": len(flat), "seconds": spent}


def sentence_sim(q: np.ndarray, c: np.ndarray) -> float:
    """Mean over the query's sentences of the best cosine to any candidate sentence."""
    if len(q) == 0 or len(c) == 0:
        return 0.0
    return float((q @ c.T).max(axis=1).mean())


def _minmax(x: np.ndarray) -> np.ndarray:
    lo, hi = float(x.min()), float(x.max())
    return (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)


def rerank(lists: Lists, sims: dict[str, dict[str, float]], n: int, w: float,
           one_line: Callable[[str, list[str]], bool] | None = None) -> dict[str, list[str]]:
    """Each query's list with its top ``n`` re-ranked by the fused score; the rest kept in order.
    ``one_line(query, head ids)``: True leaves that head as it is (the product's rule,
    ``search.sentence_match.adds_nothing``)."""
    out = {}
    for qid, ranked in lists.ranked.items():
        head, tail = ranked[:n], ranked[n:]
        if not head or w == 0 or (one_line and one_line(qid, [d for d, _ in head])):
            out[qid] = [d for d, _ in ranked]
            continue
        base = np.array([s for _, s in head], dtype=np.float64)
        if np.any(np.diff(base) > 1e-9):  # scores not in rank order: rank it is
            base = -np.arange(len(head), dtype=np.float64)
        sent = np.array([sims[qid].get(d, 0.0) for d, _ in head])
        fused = (1 - w) * _minmax(base) + w * _minmax(sent)
        order = sorted(range(len(head)), key=lambda i: (-fused[i], i))
        out[qid] = [head[i][0] for i in order] + [d for d, _ in tail]
    return out


def study_set(name: str, depths: list[int], weights: list[float], embedder, cache) -> dict:
    data, service = home_service(name)
    service.semantic._sentences.vectors_for = lambda ids: {}  # the baseline: no stored sentence re-rank
    t = time.perf_counter()
    ways = {"related": related_lists(service, data.queries), "hybrid": hybrid_lists(service, data.queries)}
    print(f"{name}: lists in {time.perf_counter() - t:.0f}s", file=sys.stderr, flush=True)
    pool = sorted({d for lists in ways.values() for r in lists.ranked.values() for d, _ in r})
    records = service.store.get_many([f"osti:{d}" for d in pool])
    doc_sents = {d: record_sentences(records[f"osti:{d}"].title, records[f"osti:{d}"].abstract) for d in pool}
    query_sents = {q: record_sentences("", text) for q, text in data.queries.items()}
    dvec, dcost = sentence_matrix(doc_sents, embedder, cache, f"{name} candidates")
    qvec, _ = sentence_matrix(query_sents, embedder, cache, f"{name} queries")
    sims = {q: {d: sentence_sim(qvec[q], dvec[d]) for lists in ways.values() for d, _ in lists.ranked[q]}
            for q in data.queries}
    def one_line(qid: str, head: list[str]) -> bool:
        return adds_nothing(len(query_sents[qid]), [len(doc_sents[d]) for d in head])

    table = {}
    for way, lists in ways.items():
        for n in depths:
            for w in weights:
                table[(way, n, w)] = evaluate(data.qrels, rerank(lists, sims, n, w))["ndcg@10"]
                table[(way, n, w, "rule")] = evaluate(data.qrels, rerank(lists, sims, n, w, one_line))["ndcg@10"]
    per_doc = dcost["sentences"] / max(1, dcost["texts"])
    return {"table": table, "sentences_per_doc": per_doc, "cost": dcost}


def print_tables(results: dict, depths: list[int], weights: list[float], tune: str) -> None:
    for way in ("related", "hybrid"):
        print(f"\n## {way}: nDCG@10 after re-ranking the top N (w = weight of the sentence similarity)")
        print("| set | N | " + " | ".join(f"w={w:g}" for w in weights) + " |")
        print("| --- | ---: | " + " | ".join("---:" for _ in weights) + " |")
        for name, res in results.items():
            for n in depths:
                cells = " | ".join(f"{res['table'][(way, n, w)]:.4f}" for w in weights)
                print(f"| {name} | {n} | {cells} |")
        best = max(((n, w) for n in depths for w in weights),
                   key=lambda nw: results[tune]["table"][(way, *nw)]) if tune in results else None
        if best:
            n, w = best
            print(f"\nchosen on {tune}: N={n}, w={w:g} ->", ", ".join(
                f"{name} {res['table'][(way, n, 0.0)]:.4f} -> {res['table'][(way, n, w)]:.4f}"
                for name, res in results.items()))
            print("  the same, a head of one-sentence seed and candidates left as is (adds_nothing):", ", ".join(
                f"{name} {res['table'][(way, n, w, 'rule')]:.4f}" for name, res in results.items()))
    for name, res in results.items():
        print(f"{name}: {res['sentences_per_doc']:.2f} sentences per candidate record "
              f"({res['cost']['texts']} records)")


def cost(docs: int, rounds: int) -> None:
    """Documents/s (title + abstract as one text) vs sentence vectors/s per backend, no cache;
    interleaved rounds so both backends see the same machine load. Projected to 4M records."""
    import gzip
    import statistics

    import orjson

    from searchnasa.ingest.sample import sample_path
    from searchnasa.semantic.embedder import Embedder
    from searchnasa.semantic.model import join_text

    recs = []
    with gzip.open(sample_path()) as fh:
        for line in fh:
            rec = orjson.loads(line)
            if rec.get("abstract"):
                recs.append((rec["title"], rec["abstract"]))
            if len(recs) >= docs:
                break
    texts = [join_text(t, a) for t, a in recs]
    sents = [s for t, a in recs for s in record_sentences(t, a)]
    print(f"{len(texts)} sample records with an abstract: {len(sents) / len(texts):.2f} sentences per record "
          f"(title included), mean {np.mean([len(s) for s in sents]):.0f} characters")
    backends = {}
    for name in ("torch", "onnx"):
        try:
            emb = Embedder(backend=name)
            emb.encode(texts[:4])
            backends[name] = emb
        except Exception as exc:  # ONNX may be unavailable here; say so and measure torch
            print(f"{name}: unavailable ({exc})")
    speed: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for name, emb in backends.items():
            for what, batch in (("documents", texts), ("sentences", sents)):
                start = time.perf_counter()
                emb.encode(batch, batch_size=32)
                speed.setdefault((name, what), []).append(len(batch) / (time.perf_counter() - start))
    per_record = len(sents) / len(texts)
    for name in backends:
        d = statistics.median(speed[(name, "documents")])
        s = statistics.median(speed[(name, "sentences")])
        extra = per_record / s
        print(f"{name}: {d:.1f} documents/s, {s:.1f} sentence vectors/s; per record: document "
              f"{1 / d * 1000:.0f} ms, its sentences {extra * 1000:.0f} ms ({extra * d:.2f}x); 4M records on "
              f"this machine: documents {4e6 / d / 3600:.0f} h, sentences {4e6 * extra / 3600:.0f} h more")


def latency(name: str, seeds: int) -> None:
    """``find_related`` p50 / p95 for stored seeds of one eval home, with its sentence vectors and
    without them (the same home with the table hidden), each seed asked of both, who goes first
    alternating (the first meets cold caches); the home gets its sentence vectors first (through
    the cache)."""
    import statistics

    from searchnasa.search.related import find_related
    from searchnasa.semantic.sentence_vectors import embed_sentences_pending

    data, service = home_service(name)
    settings = service.settings
    store = service.store
    cache = open_default_cache()
    embed_sentences_pending(settings.vectors_dir, store.iter_records(0), get_embedder(), cache, batch_size=256)
    ids = sorted(f"osti:{d}" for d in data.corpus)[::max(1, len(data.corpus) // seeds)][:seeds]
    with_s, without = make_service(settings, True), make_service(settings, True)
    without.semantic._sentences.vectors_for = lambda ids: {}  # as a home without the table
    times: dict[str, list[float]] = {"with sentence vectors": [], "without": []}
    pairs = [("with sentence vectors", with_s), ("without", without)]
    for n, rid in enumerate(ids):
        for label, svc in (pairs if n % 2 else pairs[::-1]):  # who goes first (cold caches) alternates
            start = time.perf_counter()
            find_related(svc, [rid], [], 20)
            times[label].append((time.perf_counter() - start) * 1000)
    for label, ms in times.items():
        ms = ms[1:]  # the first call warms the index
        print(f"{name}, find_related(limit=20), {len(ms)} stored seeds, {label}: p50 "
              f"{statistics.median(ms):.1f} ms, p95 {np.percentile(ms, 95):.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", default="scifact,npl,csfcube-related-dev")
    ap.add_argument("--tune", default="csfcube-related-dev")
    ap.add_argument("--depths", default="50,100,200")
    ap.add_argument("--weights", default="0,0.1,0.2,0.3,0.4,0.5,0.6")
    ap.add_argument("--cost", action="store_true")
    ap.add_argument("--latency", metavar="SET", help="time find_related on SET's home instead")
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--docs", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.cost:
        cost(args.docs, args.rounds)
        return
    if args.latency:
        latency(args.latency, args.seeds)
        return
    depths = [int(x) for x in args.depths.split(",")]
    weights = [float(x) for x in args.weights.split(",")]
    if 0.0 not in weights:
        weights = [0.0, *weights]
    embedder, cache = get_embedder(), open_default_cache()
    results = {name: study_set(name, depths, weights, embedder, cache) for name in args.sets.split(",")}
    print_tables(results, depths, weights, args.tune)


if __name__ == "__main__":
    main()
