"""Embedding throughput (documents per second) of all-MiniLM-L6-v2 on this machine's CPU, per backend.

Embeds the same real sample records (title + abstract, as ``searchnasa embed`` does) with the
torch fp32 backend and the ONNX Runtime int8 backend, in interleaved rounds (torch, onnx, torch,
onnx, ...) so both see the same machine load; reports docs/s per round and the median, the
cosine of every ONNX vector to its torch fp32 vector (mean / min), and single-query latency
(what hybrid search pays per new query). ONNX runs each text alone (see
``semantic/onnx_backend.py``); ``--onnx-run-batch 32`` also measures batched ONNX runs for
comparison.

    python bench/embed_throughput.py [--docs 256] [--rounds 3] [--batch-size 32] [--threads 0]
"""

from __future__ import annotations

import argparse
import gzip
import os
import statistics
import time

import numpy as np
import orjson

from searchnasa.ingest.sample import sample_path
from searchnasa.semantic.embedder import Embedder
from searchnasa.semantic.model import join_text

QUERIES = ("battery thermal runaway", "cell venting during overcharge", "hypersonic boundary layer transition")


def sample_texts(n: int) -> list[str]:
    texts = []
    with gzip.open(sample_path()) as fh:
        for line in fh:
            rec = orjson.loads(line)
            if rec.get("abstract"):
                texts.append(join_text(rec["title"], rec["abstract"]))
            if len(texts) >= n:
                break
    return texts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32, help="the batch searchnasa embed uses (32)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--onnx-run-batch", type=int, default=0,
                    help="also time ONNX with this many texts per run (the backend runs 1)")
    args = ap.parse_args()
    texts = sample_texts(args.docs)
    threads = args.threads or None
    started = time.perf_counter()
    torch_emb = Embedder(threads=threads, backend="torch")
    onnx_emb = Embedder(threads=threads, backend="onnx", announce=print)
    print(f"models loaded in {time.perf_counter() - started:.1f}s")
    for emb in (torch_emb, onnx_emb):
        emb.encode(texts[:8])  # warm up

    def onnx_batched(batch: list[str], batch_size: int) -> np.ndarray:
        return onnx_emb._impl.encode(batch, batch_size=batch_size, small=False,
                                     run_batch=args.onnx_run_batch)

    runs: dict[str, tuple] = {
        "torch fp32": (torch_emb.encode,),
        "onnx int8": (onnx_emb.encode,),
    }
    if args.onnx_run_batch:
        runs[f"onnx int8, {args.onnx_run_batch} per run"] = (onnx_batched,)

    import torch

    print(f"cpus: {os.cpu_count()}, torch threads: {torch.get_num_threads()}, docs: {len(texts)}, "
          f"mean chars {np.mean([len(t) for t in texts]):.0f}, batch {args.batch_size}, "
          f"load average at start {os.getloadavg()[0]:.1f}")
    rates: dict[str, list[float]] = {name: [] for name in runs}
    vectors: dict[str, np.ndarray] = {}
    for rnd in range(args.rounds):
        line = []
        for name, (fn,) in runs.items():
            t = time.perf_counter()
            vectors[name] = fn(texts, batch_size=args.batch_size)
            rate = len(texts) / (time.perf_counter() - t)
            rates[name].append(rate)
            line.append(f"{name} {rate:6.1f}")
        print(f"round {rnd + 1}: " + " | ".join(line) + f" docs/s (load {os.getloadavg()[0]:.1f})")
    ref = vectors["torch fp32"]
    print(f"\n{'backend':32s} {'median docs/s':>13s} {'vs torch':>8s} {'cos mean':>8s} {'cos min':>8s}")
    base = statistics.median(rates["torch fp32"])
    for name in runs:
        cos = (vectors[name] * ref).sum(axis=1)
        med = statistics.median(rates[name])
        print(f"{name:32s} {med:13.1f} {med / base:7.2f}x {cos.mean():8.4f} {cos.min():8.4f}")
    for name, emb in (("torch fp32", torch_emb), ("onnx int8", onnx_emb)):
        lat = []
        for q in QUERIES:
            for _ in range(5):
                t = time.perf_counter()
                emb.encode_query(q)
                lat.append((time.perf_counter() - t) * 1000)
        qcos = [float(onnx_emb.encode_query(q) @ torch_emb.encode_query(q)) for q in QUERIES]
        print(f"query embedding {name}: p50 {np.percentile(lat, 50):.1f} ms, "
              f"p95 {np.percentile(lat, 95):.1f} ms" + ("" if name.startswith("torch") else
                                                        f"; query cosine to torch min {min(qcos):.4f}"))
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
