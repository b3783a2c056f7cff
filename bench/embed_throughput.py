"""Embedding throughput (documents per second) of all-MiniLM-L6-v2 on this machine's CPU.

Embeds real sample records (title + abstract, as ``searchnasa embed`` does) at a few batch sizes,
and measures single-query latency (what hybrid search pays per new query).

    python bench/embed_throughput.py [--docs 256] [--threads 0]
"""

from __future__ import annotations

import argparse
import gzip
import os
import time

import numpy as np
import orjson

from searchnasa.sample import sample_path
from searchnasa.semantic.embedder import Embedder, join_text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=256)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    texts = []
    with gzip.open(sample_path()) as fh:
        for line in fh:
            rec = orjson.loads(line)
            if rec.get("abstract"):
                texts.append(join_text(rec["title"], rec["abstract"]))
            if len(texts) >= args.docs:
                break
    emb = Embedder(threads=args.threads or None)
    emb.encode(texts[:8])  # warm up
    import torch

    print(f"cpus: {os.cpu_count()}, torch threads: {torch.get_num_threads()}, docs: {len(texts)}, "
          f"mean chars {np.mean([len(t) for t in texts]):.0f}")
    for bs in (16, 32, 64):
        t = time.perf_counter()
        emb.encode(texts, batch_size=bs)
        dt = time.perf_counter() - t
        print(f"batch {bs:3d}: {len(texts) / dt:6.1f} docs/s")
    lat = []
    for q in ("battery thermal runaway", "cell venting during overcharge", "hypersonic boundary layer transition"):
        for _ in range(5):
            t = time.perf_counter()
            emb.encode_query(q)
            lat.append((time.perf_counter() - t) * 1000)
    print(f"query embedding: p50 {np.percentile(lat, 50):.1f} ms, p95 {np.percentile(lat, 95):.1f} ms")


if __name__ == "__main__":
    main()
