"""The whole pipeline at N SYNTHETIC records: generate, import, index, vectors, serve, measure.

    .venv/bin/python bench/scale.py                       # 1,000,000 records
    .venv/bin/python bench/scale.py --records 4000000     # the full-collection size
    .venv/bin/python bench/scale.py --records 20000 --out bench/out/scale-20k   # a quick check
    .venv/bin/python bench/scale.py --records 4000000 --keep                     # keep the home, then:
    .venv/bin/python bench/scale.py --serve-only --home bench/out/scale-4m/home --memory-limit-gib 4 [--lexical-only]
    .venv/bin/python bench/scale.py --serve-only --home ... --vector-index ivfpq --memory-limit-gib 4 --read-ahead-kb 128

``--memory-limit-gib`` runs the search and http stages inside a memory cgroup with that hard limit
(root only; ``bench/memcap.py``), which says how much RAM serving *needs* rather than how much
page cache it *keeps* on a machine with memory to spare. ``--read-ahead-kb`` sets the home disk's
read-ahead window for those stages (root; restored after): a large window makes every page fault
on a mapped index read that much (bench/README.md, run D). ``--vector-index ivfpq`` builds and
serves the compact vector index instead of HNSW.

Everything it makes is SYNTHETIC and labelled so: the corpus comes from ``bench/make_corpus.py``
(titles start with ``[SYNTHETIC]``, ids ``ntrs:synthetic-*`` / ``osti:synthetic-*``), and the
vectors are synthetic too (each is a real sample embedding plus Gaussian noise, so they cluster the
way real embeddings do; their text keys are ``synthetic:<id>`` so a real ``searchnasa embed`` run
from checkpoint 0 would replace every one). Embedding 4M real texts takes days on 2 cores.

Each stage runs as its own process, so its peak RSS is its own (sampled with psutil over the
process tree every 0.2 s, and ``ru_maxrss`` of the stage process where there is one process):

1. generate  ``bench/make_corpus.py N`` (skipped when the corpus file already exists: deterministic)
2. import    ``searchnasa import CORPUS`` into a fresh home: records/s
3. index     ``searchnasa index``: records/s, index size on disk
   (``--pipelined``: one stage instead, ``searchnasa import CORPUS --index``, where the index writer
   follows the store while the import runs; reported as "import + index pipelined")
4. vectors   synthetic int8-ready vectors written through ``VectorStore.put_many``
5. ann       the vector index the server loads: usearch int8 HNSW (``semantic/ann.py``), or faiss
             IVF-PQ with ``--vector-index ivfpq`` (``semantic/ivfpq.py``)
6. search    one process serving lexical + vector search: ``SearchService.search`` latency
             p50/p95/p99 over ``bench/search_latency.py``'s 200-query set (facets and deep pages
             included), the same query texts through Tantivy's own parser (the cost of our layers),
             hybrid-mode latency, and the process's RSS
7. http      ``searchnasa serve --workers 2``: ``/api/search`` latency with 1 client, then
             queries/s with 8 and 32 concurrent clients, and the server processes' RSS

Results go to ``OUT/scale.json`` and a Markdown table on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "bench"))

from memcap import CapUnavailable, MemoryCap, evict  # noqa: E402

PY = sys.executable
CLI = str(Path(sys.executable).with_name("searchnasa"))
SYNTHETIC_NOISE = 0.032  # per-dimension sigma: cosine to the real vector it came from about 0.85


# -- measuring a stage ----------------------------------------------------------------------------

class TreeRss:
    """Peak resident memory of a process and its children, sampled in a thread."""

    def __init__(self, pid: int, every: float = 0.2) -> None:
        import psutil

        self.proc = psutil.Process(pid)
        self.peak = 0
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.is_set():
            try:
                procs = [self.proc, *self.proc.children(recursive=True)]
                total = 0
                for p in procs:
                    try:
                        total += p.memory_info().rss
                    except psutil.Error:
                        pass
                self.peak = max(self.peak, total)
            except psutil.Error:
                return
            self._stop.wait(self.every)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join(timeout=5)
        return self.peak


def in_cap(argv: list[str], cap: MemoryCap | None) -> list[str]:
    """``argv`` started inside ``cap``'s memory cgroup (the shell joins it, then becomes the command)."""
    if cap is None:
        return argv
    return ["sh", "-c", f'echo $$ > "{cap.procs}" && exec "$@"', "sh", *argv]


def run_stage(name: str, argv: list[str], log_dir: Path, env: dict[str, str] | None = None,
              cap: MemoryCap | None = None) -> dict[str, Any]:
    """Run one stage to completion; wall time, peak RSS, exit status, its log file (and, under a
    memory cap, the cgroup's peak usage and limit hits)."""
    log_path = log_dir / f"{name}.log"
    argv = in_cap(argv, cap)
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {' '.join(argv)}", file=sys.stderr, flush=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, "COLUMNS": "160", **(env or {})})
        sampler = TreeRss(proc.pid)
        rc = proc.wait()
    peak_tree = sampler.stop()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = {"wall_s": round(wall, 1), "rc": rc, "peak_rss_mb": round(peak_tree / 2**20),
              "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 1),
              "log": str(log_path)}
    if after.ru_maxrss > before.ru_maxrss:  # the largest child so far: exact when it is this stage's
        result["ru_maxrss_mb"] = round(after.ru_maxrss / 1024)
    if cap is not None:
        result["memory_cap"] = cap.report()
    print(f"[{time.strftime('%H:%M:%S')}] {name}: {result}", file=sys.stderr, flush=True)
    if rc != 0:
        tail = log_path.read_text(errors="replace")[-3000:]
        raise SystemExit(f"stage {name} failed (exit {rc}); end of {log_path}:\n{tail}")
    return result


def du_mb(path: Path) -> float:
    if path.is_file():
        return round(path.stat().st_size / 2**20, 1)
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20, 1)


def pct(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if len(ordered) < 2:
        return {"p50": round(ordered[0], 2) if ordered else 0.0}
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": round(q[49], 2), "p95": round(q[94], 2), "p99": round(q[98], 2),
            "mean": round(statistics.fmean(ordered), 2)}


# -- stage: synthetic vectors ---------------------------------------------------------------------

def real_embeddings(limit: int = 20000):
    """Real all-MiniLM-L6-v2 vectors of real texts, to shape the synthetic ones: the bundled
    sample vectors, else the shared embedding cache, else the first 512 sample records embedded now."""
    import gzip

    import numpy as np
    import orjson

    from searchnasa.semantic.bundle import load_bundle
    from searchnasa.semantic.locations import default_cache_path
    from searchnasa.semantic.vectors import EmbeddingCache

    bundle = load_bundle()
    if bundle is not None and len(bundle) >= 100:
        return bundle.matrix[:limit], "bundled sample vectors"
    path = default_cache_path()
    if path.is_file():
        cache = EmbeddingCache(path)
        rows = cache.conn.execute("SELECT vec FROM cache LIMIT ?", (limit,)).fetchall()
        cache.close()
        if len(rows) >= 100:
            mat = np.frombuffer(b"".join(r[0] for r in rows), dtype=np.float16).reshape(len(rows), -1)
            return mat.astype(np.float32), f"shared embedding cache ({path})"
    from searchnasa.ingest.sample import sample_path
    from searchnasa.semantic.embedder import get_embedder
    from searchnasa.semantic.model import join_text

    texts = []
    with gzip.open(sample_path(), "rb") as fh:
        for line in fh:
            rec = orjson.loads(line)
            if rec.get("abstract"):
                texts.append(join_text(rec["title"], rec["abstract"]))
            if len(texts) == 512:
                break
    return get_embedder().encode(texts), "512 sample records embedded now"


def stage_vectors(home: Path, seed: int) -> None:
    """Synthetic vectors for every record, written through the single writer's ``put_many``."""
    import numpy as np

    from searchnasa.semantic.vectors import VectorStore
    from searchnasa.store import open_store

    real, origin = real_embeddings()
    real = real / np.linalg.norm(real, axis=1, keepdims=True)
    rng = np.random.default_rng(seed)
    store = open_store(home, readonly=True)
    vs = VectorStore(home / "vectors")
    last, written, cos_to_base = 0, 0, []
    while True:
        rows = store.conn.execute("SELECT seq, id FROM records WHERE seq > ? ORDER BY seq LIMIT 20000",
                                  (last,)).fetchall()
        if not rows:
            break
        base = real[rng.integers(0, len(real), size=len(rows))]
        vecs = base + rng.standard_normal(base.shape, dtype=np.float32) * SYNTHETIC_NOISE
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        if len(cos_to_base) < 50:
            cos_to_base.append(float(np.mean(np.sum(vecs * base, axis=1))))
        vs.put_many([(rid, f"synthetic:{rid}", vecs[i]) for i, (_, rid) in enumerate(rows)])
        written += len(rows)
        last = rows[-1][0]
    vs.set_meta("synthetic_vectors", f"real vectors from {origin} + N(0, {SYNTHETIC_NOISE}^2) noise")
    vs.put_many([], store_seq=store.max_seq())
    sample = rng.integers(0, len(real), size=(2000, 2))
    print(json.dumps({"vectors": written, "shaped_by": origin, "real_vectors": len(real),
                      "mean_cos_to_source_vector": round(statistics.fmean(cos_to_base), 3),
                      "mean_cos_random_real_pairs": round(float(np.mean(np.sum(
                          real[sample[:, 0]] * real[sample[:, 1]], axis=1))), 3)}))
    vs.close()
    store.close()


def stage_ann(home: Path) -> None:
    """The vector index the provider loads (built from the store's snapshot, streaming, with the
    store's version and identity, so it is served, not rebuilt): HNSW, or the kind named by
    ``--vector-index`` (``$SEARCHNASA_VECTOR_INDEX``)."""
    from searchnasa.semantic.ann import build_from_store
    from searchnasa.semantic.vectors import VectorStore
    from searchnasa.settings import Settings

    kind = Settings().vector_index or "hnsw"
    vs = VectorStore(home / "vectors")
    started = time.perf_counter()
    index = build_from_store(vs.conn, home / "vectors", uid=vs.uid(), kind=kind)
    built = time.perf_counter() - started
    vs.close()
    files = sum(f.stat().st_size for f in index.path.iterdir()) if index.path else 0
    print(json.dumps({"kind": kind, "vectors": len(index), "build_s": round(built, 1),
                      "vectors_per_s": round(len(index) / max(built, 1e-9)),
                      "index_mb": round(files / 1e6), "params": index.params.__dict__}))


# -- stage: search function ------------------------------------------------------------------------

def stage_search(home: Path, out: Path, rounds: int, lexical_only: bool = False) -> None:
    """One process serving lexical + vector search, as a web worker does (``lexical_only``: no
    vectors opened, no hybrid timings)."""
    import tantivy

    from search_latency import query_set, time_function
    from searchnasa.search.schemas import SearchRequest
    from searchnasa.search.service import SearchService
    from searchnasa.semantic.provider import open_provider
    from searchnasa.settings import Settings

    settings = Settings().with_home(home)
    provider = None if lexical_only else open_provider(settings)
    started = time.perf_counter()
    vectors = provider.count() if provider is not None else 0  # loads the saved HNSW index
    load_s = time.perf_counter() - started
    service = SearchService(settings, semantic=provider)
    queries = query_set()
    first, wall, cpu, totals = time_function(service, queries, rounds=rounds)
    rss_lexical = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # The same query texts through Tantivy's own parser on the same index: search, exact count and
    # the page's stored documents, no facets, no identifier lookup, no snippets.
    index = service.reader.index
    searcher = service.reader.searcher()
    raw_ms: list[float] = []
    ours_ms: list[float] = []
    for q, ours in zip(queries, wall):
        try:
            parsed = index.parse_query(q["q"], ["all"])
        except ValueError:
            continue
        offset = (q.get("page", 1) - 1) * q.get("per_page", 20)
        best = float("inf")
        for _ in range(rounds + 1):
            t0 = time.perf_counter()
            hits = searcher.search(parsed, limit=q.get("per_page", 20), offset=offset, count=True)
            for _, addr in hits.hits:
                searcher.doc(addr)
            best = min(best, (time.perf_counter() - t0) * 1000)
        raw_ms.append(best)
        ours_ms.append(ours)

    # Hybrid: the query embedded by the model, nearest vectors from the HNSW index, fused.
    hybrid_ms: list[float] = []
    reqs = [SearchRequest(mode="hybrid", **{k: v for k, v in q.items() if k != "kind"}) for q in queries]
    for req in reqs if provider is not None else []:
        service.search(req)  # warm: embeds each query once (the provider memoizes query vectors)
    for req in reqs if provider is not None else []:
        service.clear_caches()  # cold facets, like the lexical timings (search_latency.time_function)
        t0 = time.perf_counter()
        service.search(req)
        hybrid_ms.append((time.perf_counter() - t0) * 1000)
    modes = {r.mode for r in [service.search(reqs[0])]}
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    import psutil

    result = {
        "documents": searcher.num_docs, "vectors": vectors, "vector_load_s": round(load_s, 1),
        "queries": len(queries), "rounds": rounds,
        "function_ms": pct(wall), "function_ms_first_round": pct(first), "function_cpu_ms": pct(cpu),
        "raw_tantivy_queries": len(raw_ms), "raw_tantivy_ms": pct(raw_ms),
        "ours_on_same_queries_ms": pct(ours_ms),
        "ratio_p50": round(pct(ours_ms)["p50"] / max(pct(raw_ms)["p50"], 1e-6), 2),
        "ratio_p95": round(pct(ours_ms)["p95"] / max(pct(raw_ms)["p95"], 1e-6), 2),
        "hybrid_ms": pct(hybrid_ms) if hybrid_ms else None, "hybrid_mode_seen": sorted(modes),
        "median_total_hits": int(statistics.median(totals)),
        "rss_mb_after_lexical": round(rss_lexical), "peak_rss_mb": round(rss),
        "rss_mb_now": round(psutil.Process().memory_info().rss / 2**20),
        **rss_parts(),
        "tantivy": getattr(tantivy, "__version__", "?"),
    }
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


def rss_parts() -> dict[str, int]:
    """Resident memory now, split as Linux reports it: anonymous (heap: this process's own) and
    file-backed (memory-mapped index files: page cache, shared by processes, reclaimable)."""
    parts: dict[str, int] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                name, value = line.split(":", 1)
                parts[f"rss_{name[3:].lower()}_mb_now"] = round(int(value.split()[0]) / 1024)
    except OSError:
        pass
    return parts


# -- stage: HTTP -----------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _load(base: str, params: list[dict[str, Any]], clients: int, seconds: float) -> dict[str, Any]:
    import httpx

    times: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as client:
        async def one(worker: int) -> None:
            nonlocal errors
            i = worker
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                resp = await client.get("/api/search", params=params[i % len(params)])
                if resp.status_code != 200:
                    errors += 1
                times.append((time.perf_counter() - t0) * 1000)
                i += clients

        started = time.perf_counter()
        await asyncio.gather(*(one(w) for w in range(clients)))
        elapsed = time.perf_counter() - started
    return {"clients": clients, "requests": len(times), "errors": errors,
            "qps": round(len(times) / elapsed, 1), "latency_ms": pct(times)}


def stage_http(home: Path, log_dir: Path, seconds: float, workers: int,
               cap: MemoryCap | None = None, lexical_only: bool = False) -> dict[str, Any]:
    import httpx

    from search_latency import query_set

    port = _free_port()
    log = open(log_dir / "serve.log", "wb")
    server = subprocess.Popen(in_cap([CLI, "serve", "--workers", str(workers), "--port", str(port),
                                      "--log-level", "warning", "--home", str(home)], cap),
                              stdout=log, stderr=subprocess.STDOUT,
                              env={**os.environ, "SEARCHNASA_FACET_CACHE": "0"})  # cold searches
    sampler = TreeRss(server.pid)
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base, timeout=120) as client:
            for _ in range(600):
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.2)
            params = [{**{k: v for k, v in q.items() if k != "kind"}, "mode": "lexical"} for q in query_set()]
            for _ in range(2 * workers):  # warm every worker (the OS spreads connections)
                for p in params:
                    client.get("/api/search", params=p).raise_for_status()
            sequential: list[float] = []
            for p in params:
                t0 = time.perf_counter()
                client.get("/api/search", params=p).raise_for_status()
                sequential.append((time.perf_counter() - t0) * 1000)
            hybrid: list[float] = []
            for p in params if not lexical_only else []:
                client.get("/api/search", params={**p, "mode": "hybrid"}).raise_for_status()
            for p in params if not lexical_only else []:
                t0 = time.perf_counter()
                client.get("/api/search", params={**p, "mode": "hybrid"}).raise_for_status()
                hybrid.append((time.perf_counter() - t0) * 1000)
        concurrent = [asyncio.run(_load(base, params, c, seconds)) for c in (8, 32)]
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
    return {"workers": workers, "api_search_ms_1_client": pct(sequential),
            "api_search_hybrid_ms_1_client": pct(hybrid) if hybrid else None, "concurrent": concurrent,
            "server_peak_rss_mb_all_processes": round(sampler.stop() / 2**20),
            **({"memory_cap": cap.report()} if cap is not None else {})}


# -- the driver ------------------------------------------------------------------------------------

def table(r: dict[str, Any]) -> str:
    n = r["records"]
    s = r["stages"]
    search, http = r["search"], r["http"]
    rows = [
        ("records (SYNTHETIC)", f"{n:,}"),
        ("corpus", f"{r['corpus']} ({'reused' if s['generate'].get('reused') else 'generated'})"),
    ]
    if "import_index" in s:  # --pipelined: one stage
        imp = idx = s["import_index"]
        rows.append(("import + index pipelined (`searchnasa import --index`): records/s",
                     f"{n / imp['wall_s']:,.0f} ({imp['wall_s']:,.0f} s, {imp['cpu_s']:,.0f} CPU-s)"))
    else:
        imp, idx = s["import"], s["index"]
        rows += [
            ("import: records/s (`searchnasa import`)", f"{n / imp['wall_s']:,.0f} ({imp['wall_s']:,.0f} s)"),
            ("index: records/s (`searchnasa index`)", f"{n / idx['wall_s']:,.0f} ({idx['wall_s']:,.0f} s)"),
            ("import + index end to end: records/s", f"{n / (imp['wall_s'] + idx['wall_s']):,.0f}"),
        ]
    rows += [
        ("store / lexical index / vectors / HNSW on disk (MB)",
         f"{r['disk_mb']['store']:,} / {r['disk_mb']['index']:,} / {r['disk_mb']['vectors_sqlite']:,} / "
         f"{r['disk_mb']['hnsw']:,}"),
        ("synthetic vectors: write / HNSW build (s)", f"{s['vectors']['wall_s']:,} / {s['ann']['wall_s']:,}"),
        ("peak RSS MB: import / index / vectors / HNSW build",
         f"{imp['peak_rss_mb']:,} / {idx['peak_rss_mb']:,} / {s['vectors']['peak_rss_mb']:,} / "
         f"{s['ann']['peak_rss_mb']:,}"),
        ("search process peak RSS MB (lexical + vector search, model loaded)", f"{search['peak_rss_mb']:,}"),
        ("search function ms p50 / p95 / p99 (lexical, 200 queries)",
         f"{search['function_ms']['p50']} / {search['function_ms']['p95']} / {search['function_ms']['p99']}"),
        ("search function hybrid ms p50 / p95 / p99",
         f"{search['hybrid_ms']['p50']} / {search['hybrid_ms']['p95']} / {search['hybrid_ms']['p99']}"),
        ("raw Tantivy ms p50 / p95 (same texts, Tantivy's parser)",
         f"{search['raw_tantivy_ms']['p50']} / {search['raw_tantivy_ms']['p95']} "
         f"({search['raw_tantivy_queries']} queries)"),
        ("ours / raw Tantivy, p50 and p95", f"{search['ratio_p50']}x / {search['ratio_p95']}x"),
        ("/api/search ms p50 / p95 / p99 (1 client, lexical)",
         " / ".join(str(http["api_search_ms_1_client"][k]) for k in ("p50", "p95", "p99"))),
        ("/api/search ms p50 / p95 (1 client, hybrid)",
         " / ".join(str(http["api_search_hybrid_ms_1_client"][k]) for k in ("p50", "p95"))),
    ]
    for c in http["concurrent"]:
        rows.append((f"queries/s with {c['clients']} concurrent clients (serve --workers {http['workers']})",
                     f"{c['qps']:,} (p50 {c['latency_ms']['p50']} ms, p95 {c['latency_ms']['p95']} ms, "
                     f"{c['errors']} errors)"))
    rows.append(("server RSS MB, all processes", f"{http['server_peak_rss_mb_all_processes']:,}"))
    return "| measure | value |\n| --- | ---: |\n" + "\n".join(f"| {a} | {b} |" for a, b in rows)


def _suffix(args: argparse.Namespace) -> str:
    """What names a result file: lexical only, the vector index kind when not HNSW, the memory cap."""
    return (f"{'-lexical' if args.lexical_only else ''}"
            f"{f'-ra{args.read_ahead_kb}' if args.read_ahead_kb is not None else ''}"
            f"{f'-{args.vector_index}' if args.vector_index not in (None, 'hnsw') else ''}"
            f"{f'-{args.memory_limit_gib:g}gib' if args.memory_limit_gib else ''}")


def serving(result: dict[str, Any], home: Path, out: Path, args: argparse.Namespace) -> None:
    """The search and http stages (each under its own memory cap when one is asked for), and the
    home's sizes on disk, into ``result``; with ``--read-ahead-kb``, run with the disk's
    read-ahead window set to that (and put back after)."""
    from searchnasa.web.readahead import read_ahead_file

    ra_file = read_ahead_file(home)
    before = ra_file.read_text().strip() if ra_file is not None else None
    if args.read_ahead_kb is not None:
        if ra_file is None:
            raise SystemExit(f"--read-ahead-kb: no block device read-ahead setting found for {home}")
        ra_file.write_text(str(args.read_ahead_kb))
    result["read_ahead_kb"] = int(ra_file.read_text()) if ra_file is not None else None
    try:
        _serving(result, home, out, args)
    finally:
        if args.read_ahead_kb is not None and ra_file is not None and before is not None:
            ra_file.write_text(before)


def _serving(result: dict[str, Any], home: Path, out: Path, args: argparse.Namespace) -> None:
    me = [PY, str(Path(__file__).resolve())]
    search_json = out / f"search{_suffix(args)}.json"
    limit = int(args.memory_limit_gib * 2**30) if args.memory_limit_gib else None
    caps: list[MemoryCap] = []

    def new_cap(name: str) -> MemoryCap | None:
        if limit is None:
            return None
        try:
            cap = MemoryCap(name, limit)
        except CapUnavailable as exc:
            raise SystemExit(f"--memory-limit-gib: {exc}") from exc
        dropped = evict(home / "index", home / "vectors")
        print(f"[{time.strftime('%H:%M:%S')}] {name}: memory cap {limit / 2**30:g} GiB; "
              f"{dropped / 2**20:,.0f} MB of index/vector files dropped from the page cache",
              file=sys.stderr, flush=True)
        caps.append(cap)
        return cap

    try:
        result["stages"]["search"] = run_stage(
            "search", [*me, "--stage", "search", "--home", str(home), "--out", str(search_json),
                       "--rounds", str(args.rounds), *(["--lexical-only"] if args.lexical_only else [])],
            out, cap=new_cap("search"))
        result["search"] = json.loads(search_json.read_text())
        result["disk_mb"] = {"store": du_mb(home / "store.sqlite3"), "index": du_mb(home / "index"),
                             "vectors_sqlite": du_mb(home / "vectors" / "vectors.sqlite3"),
                             "hnsw": sum(du_mb(p) for p in (home / "vectors").glob("ann-*"))}
        print(f"[{time.strftime('%H:%M:%S')}] http: serve --workers {args.serve_workers}",
              file=sys.stderr, flush=True)
        result["http"] = stage_http(home, out, args.http_seconds, args.serve_workers, cap=new_cap("http"),
                                    lexical_only=args.lexical_only)
    finally:
        for cap in caps:
            cap.close()


def serve_only(args: argparse.Namespace) -> None:
    """``--serve-only``: measure serving on a home an earlier ``--keep`` run left (no rebuild)."""
    if args.home is None or not (args.home / "index").is_dir():
        raise SystemExit("--serve-only needs --home HOME with an index (a home kept by --keep)")
    out = args.out or args.home.parent
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"home": str(args.home), "date": time.strftime("%Y-%m-%d %H:%M"),
                              "cpus": os.cpu_count(), "load_average_start": os.getloadavg(), "stages": {},
                              "memory_limit_gib": args.memory_limit_gib}
    serving(result, args.home, out, args)
    result["load_average_end"] = os.getloadavg()
    (out / f"serve{_suffix(args)}.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--out", type=Path, help="working folder (default bench/out/scale-<N>)")
    parser.add_argument("--corpus", type=Path, help="corpus file (default bench/out/corpus-<N>.jsonl.gz; "
                                                     "reused when it exists)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds of the query set")
    parser.add_argument("--http-seconds", type=float, default=20.0, help="seconds per concurrency level")
    parser.add_argument("--serve-workers", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the home (store, index, vectors)")
    parser.add_argument("--pipelined", action="store_true",
                        help="import and index in one stage (`searchnasa import --index`)")
    parser.add_argument("--memory-limit-gib", type=float,
                        help="run the search and http stages under this hard memory limit (a memory "
                             "cgroup: needs root); their files are dropped from the page cache first")
    parser.add_argument("--lexical-only", action="store_true",
                        help="search and http stages without vector search (no HNSW opened, no hybrid timings)")
    parser.add_argument("--serve-only", action="store_true",
                        help="only the search and http stages, on the existing home given by --home")
    parser.add_argument("--vector-index", choices=("hnsw", "ivfpq"),
                        help="the vector index to build and serve (default $SEARCHNASA_VECTOR_INDEX, else hnsw); "
                             "passed to every stage as SEARCHNASA_VECTOR_INDEX")
    parser.add_argument("--read-ahead-kb", type=int,
                        help="run the serving stages with the home's disk read-ahead set to this many KB "
                             "(root; restored after). Large windows make every page fault on a mapped "
                             "index read that much: see docs/operations.md")
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help="the home to reuse with --serve-only")
    args = parser.parse_args()
    if args.vector_index:
        os.environ["SEARCHNASA_VECTOR_INDEX"] = args.vector_index  # every stage's process inherits it

    if args.stage == "vectors":
        return stage_vectors(args.home, args.seed)
    if args.stage == "ann":
        return stage_ann(args.home)
    if args.stage == "search":
        return stage_search(args.home, args.out, args.rounds, args.lexical_only)

    if args.serve_only:
        return serve_only(args)

    n = args.records
    label = f"{n // 1_000_000}m" if n % 1_000_000 == 0 else (f"{n // 1000}k" if n % 1000 == 0 else str(n))
    out = args.out or ROOT / "bench" / "out" / f"scale-{label}"
    corpus = args.corpus or ROOT / "bench" / "out" / f"corpus-{label}.jsonl.gz"
    home = out / "home"
    if home.exists():
        shutil.rmtree(home)
    out.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"records": n, "corpus": str(corpus), "date": time.strftime("%Y-%m-%d %H:%M"),
                              "cpus": os.cpu_count(), "load_average_start": os.getloadavg(), "stages": {}}
    stages = result["stages"]
    me = [PY, str(Path(__file__).resolve())]
    if corpus.exists():
        stages["generate"] = {"reused": True}
    else:
        stages["generate"] = run_stage("generate", [PY, str(ROOT / "bench" / "make_corpus.py"), str(n), "-o",
                                                     str(corpus), "--seed", str(args.seed)], out)
    if args.pipelined:
        stages["import_index"] = run_stage("import_index", [CLI, "import", str(corpus), "--format",
                                                            "records-jsonl", "--index", "--home", str(home)], out)
    else:
        stages["import"] = run_stage("import", [CLI, "import", str(corpus), "--format", "records-jsonl",
                                                "--home", str(home)], out)
        stages["index"] = run_stage("index", [CLI, "index", "--home", str(home)], out)
    stages["vectors"] = run_stage("vectors", [*me, "--stage", "vectors", "--home", str(home),
                                              "--seed", str(args.seed)], out)
    stages["ann"] = run_stage("ann", [*me, "--stage", "ann", "--home", str(home)], out)
    serving(result, home, out, args)
    result["load_average_end"] = os.getloadavg()
    for name in ("vectors", "ann"):
        lines = Path(stages[name]["log"]).read_text().strip().splitlines()
        stages[name]["report"] = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else None
    (out / "scale.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    print()
    print(table(result))
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
