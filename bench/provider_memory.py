"""Memory and speed of the semantic provider at scale, on SYNTHETIC vectors.

    .venv/bin/python bench/provider_memory.py setup --home H --corpus bench/out/corpus-1m.jsonl.gz
    .venv/bin/python bench/scale.py --stage ann --home H          # the int8 HNSW + its id array
    .venv/bin/python bench/scale.py --stage search --home H --out H/search.json
    .venv/bin/python bench/provider_memory.py rerank --home H     # SQLite rows vs the graph's int8 vectors

``setup`` writes one synthetic vector per record id of a (synthetic) corpus into ``H/vectors``
(a real sample embedding plus Gaussian noise, as ``bench/scale.py``'s vectors stage does; text keys
``synthetic:<id>``), for a home whose lexical index was built from that corpus. ``rerank`` times
reading the vectors of 1,000 and 3,000 random candidates from ``vectors.sqlite3`` (one
``select_in`` lookup by id) against the int8 vectors of the memory-mapped graph, which is where the
provider reads them (the cosines of fused candidates, the seeds of related papers).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))


def corpus_ids(corpus: Path) -> list[str]:
    """Record ids of a JSON Lines corpus whose lines start with ``{"id":"...``, without parsing."""
    ids: list[str] = []
    with gzip.open(corpus, "rb") as fh:
        for line in fh:
            if line.startswith(b'{"id":"'):
                ids.append(line[7:line.index(b'"', 7)].decode())
    return ids


def setup(home: Path, corpus: Path, seed: int) -> None:
    from scale import SYNTHETIC_NOISE, real_embeddings

    from searchnasa.semantic.vectors import VectorStore

    real, origin = real_embeddings()
    real = real / np.linalg.norm(real, axis=1, keepdims=True)
    rng = np.random.default_rng(seed)
    ids = corpus_ids(corpus)
    vs = VectorStore(home / "vectors")
    for start in range(0, len(ids), 20000):
        chunk = ids[start:start + 20000]
        base = real[rng.integers(0, len(real), size=len(chunk))]
        vecs = base + rng.standard_normal(base.shape, dtype=np.float32) * SYNTHETIC_NOISE
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        vs.put_many([(rid, f"synthetic:{rid}", vecs[i]) for i, rid in enumerate(chunk)])
    vs.set_meta("synthetic_vectors", f"real vectors from {origin} + N(0, {SYNTHETIC_NOISE}^2) noise")
    print(json.dumps({"vectors": vs.count(), "shaped_by": origin}))
    vs.close()


def pct(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {"p50": round(statistics.median(xs), 2), "p95": round(xs[int(0.95 * (len(xs) - 1))], 2)}


def rerank(home: Path, rounds: int, seed: int) -> None:
    from searchnasa.semantic.provider import VectorProvider
    from searchnasa.semantic.vectors import VectorStore

    provider = VectorProvider(home / "vectors")
    n = provider.count()
    index = provider._ann
    vs = VectorStore(home / "vectors")
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(384).astype(np.float32)
    q /= np.linalg.norm(q)
    out: dict[str, object] = {"vectors": n}
    for size in (1000, 3000):
        sql_ms, mm_ms = [], []
        for _ in range(rounds):
            keys = np.sort(rng.choice(n, size, replace=False)).astype(np.uint64)
            ids = index.ids_of(keys)
            t0 = time.perf_counter()
            got = vs.get_many(ids)
            mat = np.stack([got[i] for i in ids])
            sims_sql = mat @ q
            sql_ms.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            sims_mm = index.vectors_at(keys) @ q
            mm_ms.append((time.perf_counter() - t0) * 1000)
            assert np.allclose(sims_sql, sims_mm, atol=0.01)
        out[f"{size}_rows"] = {"sqlite_select_in_ms": pct(sql_ms), "graph_int8_ms": pct(mm_ms)}
    vs.close()
    print(json.dumps(out, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["setup", "rerank"])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, default=ROOT / "bench/out/corpus-1m.jsonl.gz")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    if args.what == "setup":
        setup(args.home, args.corpus, args.seed)
    else:
        rerank(args.home, args.rounds, args.seed)


if __name__ == "__main__":
    main()
