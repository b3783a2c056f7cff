"""Passage embeddings (MaxP) offline: does scoring a document by its best window beat one vector?

all-MiniLM-L6-v2 reads the first 256 word pieces of a text; 3,681 of SciFact's 5,183 documents
are longer (median 316), while only 4 of NPL's 11,426 are. This study splits each long document
(title + text, as the product embeds it) into overlapping windows of the model's word pieces
(``--window`` pieces, ``--stride`` apart, the title repeated in front of every window after the
first), embeds the windows through the shared embedding cache (``embed_texts``: a rerun costs
nothing) and ranks documents by

* ``whole``: the product's one vector per document (the first window);
* ``maxp``: the best cosine over the whole-document vector and every window;
* ``mix a``: ``(1-a) * whole + a * maxp``.

Each is scored alone (semantic) and fused with the product's lexical top 200 the way the product
fuses (min-max weighted sum, the cosine of every candidate, semantic weight of ``search/service.py``).
Nothing in the product changes; the numbers decide whether a product change is worth making.

    python bench/passage_study.py ../shared/data/eval/scifact --home /tmp/q5/scifact
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fusion_study import fuse, lexical_lists

from searchnasa.eval.beir import load_beir
from searchnasa.eval.metrics import evaluate
from searchnasa.eval.runner import EVAL_SOURCE, as_any_words, build_eval_home, doc_id_of
from searchnasa.search.query import parse
from searchnasa.search.query_tree import positive_texts
from searchnasa.search.fusion import SEMANTIC_WEIGHT
from searchnasa.search.service import SearchService
from searchnasa.semantic.cache import open_default_cache
from searchnasa.semantic.model import model_dir
from searchnasa.semantic.provider import VectorProvider
from searchnasa.semantic.vectors import embed_texts
from searchnasa.settings import Settings

MODEL_PIECES = 256  # all-MiniLM-L6-v2's max_seq_length, [CLS] and [SEP] included


def windows(tokenizer, title: str, text: str, window: int, stride: int) -> list[str]:
    """The texts of a long document's windows after the first (the first is the whole-doc vector)."""
    full = "\n".join(p.strip() for p in (title, text) if p and p.strip())  # join_text, uncapped
    enc = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True, truncation=False)
    offsets = enc["offset_mapping"]
    if len(offsets) + 2 <= MODEL_PIECES:
        return []
    head = title.strip()
    head_pieces = len(tokenizer(head, add_special_tokens=False)["input_ids"]) + 1 if head else 0
    body_start = len(head) + 1 if head else 0  # join_text puts "\n" between title and text
    body = [(s, e) for s, e in offsets if s >= body_start]
    size = max(32, min(window, MODEL_PIECES - 2) - head_pieces)
    out: list[str] = []
    start = stride
    while start < len(body):
        while start < len(body) and body[start][0] > 0 and not full[body[start][0] - 1].isspace():
            start += 1  # begin at a word, not inside one
        if start >= len(body):
            break
        chunk = body[start:start + size]
        passage = full[chunk[0][0]:chunk[-1][1]]
        out.append(f"{head}\n{passage}" if head else passage)
        if start + size >= len(body):
            break
        start += stride
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder", type=Path)
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--window", type=int, default=256)
    ap.add_argument("--stride", type=int, default=128)
    ap.add_argument("--mix", type=float, nargs="+", default=[0.3, 0.5, 0.7])
    args = ap.parse_args()
    data = load_beir(args.folder)
    if not (args.home / "vectors").exists():
        args.home.mkdir(parents=True, exist_ok=True)
        build_eval_home(data, args.home, need_vectors=True)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir()))
    doc_windows = {f"{EVAL_SOURCE}:{d.id}": windows(tokenizer, d.title, d.text, args.window, args.stride)
                   for d in data.corpus.values()}
    flat = [(rid, w) for rid, ws in doc_windows.items() for w in ws]
    long_docs = sum(1 for ws in doc_windows.values() if ws)
    print(f"# {data.name}: {len(data.corpus)} docs, {long_docs} longer than {MODEL_PIECES} pieces, "
          f"{len(flat)} extra windows (window {args.window}, stride {args.stride})", flush=True)
    cache = open_default_cache()
    vecs = np.zeros((len(flat), 384), dtype=np.float32)
    t = time.perf_counter()
    step = 512
    for i in range(0, len(flat), step):
        vecs[i:i + step] = embed_texts([w for _, w in flat[i:i + step]], None, cache)
        print(f"  windows {min(i + step, len(flat))}/{len(flat)} ({time.perf_counter() - t:.0f}s)",
              file=sys.stderr, flush=True)
    cache.close()

    settings = Settings().with_home(args.home)
    provider = VectorProvider(settings.vectors_dir)
    assert provider.available(), "no vectors in the eval home"
    ids, mat, pos = provider._ids, provider._matrix, provider._pos
    owner = np.array([pos[rid] for rid, _ in flat], dtype=np.int64)
    texts = {q: " ".join(positive_texts(parse(as_any_words(t)).tree)) for q, t in data.queries.items()}
    qvec = {q: provider.embed_text(t) for q, t in texts.items()}
    lex = lexical_lists(SearchService(settings), data.queries)

    def doc_scores(q: str) -> tuple[np.ndarray, np.ndarray]:
        whole = mat @ qvec[q]
        best = whole.copy()
        if len(flat):
            np.maximum.at(best, owner, vecs @ qvec[q])
        return whole, best

    def ndcg(rank: dict[str, list[str]]) -> dict[str, float]:
        return evaluate(data.qrels, {q: [doc_id_of(d) for d in r] for q, r in rank.items()})

    variants: dict[str, dict[str, np.ndarray]] = {"whole": {}, "maxp": {}}
    for a in args.mix:
        variants[f"mix {a}"] = {}
    for q in data.queries:
        whole, best = doc_scores(q)
        variants["whole"][q] = whole
        variants["maxp"][q] = best
        for a in args.mix:
            variants[f"mix {a}"][q] = (1 - a) * whole + a * best
    for name, scores in variants.items():
        sem_rank, hybrid = {}, {}
        for q in data.queries:
            s = scores[q]
            top = np.argpartition(-s, 200)[:200]
            sem = {ids[i]: float(s[i]) for i in top}
            sem_rank[q] = sorted(sem, key=lambda d: -sem[d])[:100]
            sem.update({d: float(s[pos[d]]) for d, _ in lex[q] if d in pos})
            hybrid[q] = fuse(lex[q], sem, "minmax", SEMANTIC_WEIGHT)
        s_m, h_m = ndcg(sem_rank), ndcg(hybrid)
        print(f"{name:9s} semantic nDCG@10 {s_m['ndcg@10']:.4f} R@100 {s_m['recall@100']:.4f} | "
              f"hybrid nDCG@10 {h_m['ndcg@10']:.4f} R@100 {h_m['recall@100']:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
