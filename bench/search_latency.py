"""Search latency: p50/p95 of ``SearchService.search`` and of ``GET /api/search`` over HTTP.

A fixed set of 200 queries (words, multi-word, phrases, operators and field prefixes, filters,
date sorts, deep pages; every request also computes all facets), drawn deterministically from the
bundled sample's vocabulary, runs once to warm up and then timed. Every timed search is cold: the
service's facet cache is cleared before it (and turned off for the HTTP server), so repeating a
query measures its work, not the cache.

    python bench/search_latency.py --sample                       # the bundled sample (6,514 real records)
    python bench/make_corpus.py 1000000 -o bench/out/corpus-1m.jsonl.gz
    python bench/search_latency.py --corpus bench/out/corpus-1m.jsonl.gz   # SYNTHETIC 1M corpus

Indexes are built once under ``bench/out/`` and reused. ``--no-http`` skips the HTTP half; it is
skipped (and said so) when the web app is not importable.

A second set, ``acronym_ms``, times 40 lexical requests that type an acronym in capitals (20
alone, 20 with a common word), drawn the same way from the acronyms the sample writes in
parentheses: with the acronym lexicon in the home (built from the corpus here, as ``searchnasa
index`` builds it from the store; ``--no-acronyms`` leaves it out) they are expanded to their
meanings. The set depends only on the sample, so a build without acronym expansion times the same
requests (``acronyms_expanded`` says how many were expanded).
"""

from __future__ import annotations

import argparse
import collections
import gzip
import os
import random
import re
import socket
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

import orjson  # noqa: E402

from _common import print_and_save  # noqa: E402

from searchnasa.index import build_index  # noqa: E402
from searchnasa.records import Record  # noqa: E402
from searchnasa.ingest.sample import sample_path  # noqa: E402
from searchnasa.search.schemas import SearchRequest  # noqa: E402
from searchnasa.search.service import SearchService  # noqa: E402
from searchnasa.settings import Settings  # noqa: E402
from searchnasa.store import open_store  # noqa: E402

OUT = ROOT / "bench" / "out"
STOP = set("""a an and are as at be by for from has have in into is it its of on or that the this to
was were which with we our these those their than then there been can also using use used based
two one new not""".split())
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")


# -- corpora ------------------------------------------------------------------------------------

class JsonlRecords:
    """A record source for ``build_index`` straight from JSON Lines (no SQLite store needed)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._count: int | None = None

    def _open(self):
        return gzip.open(self.path, "rb") if self.path.suffix == ".gz" else open(self.path, "rb")

    def iter_records(self, since_seq: int = 0) -> Iterator[tuple[int, Record]]:
        with self._open() as fh:
            for seq, line in enumerate(fh, start=1):
                if seq > since_seq and line.strip():
                    yield seq, Record.model_validate(orjson.loads(line))

    def iter_json_since(self, since_seq: int = 0) -> Iterator[tuple[int, bytes]]:
        """The records' JSON as stored: ``build_index`` then takes its fast path (no model per
        record), as it does from a store."""
        with self._open() as fh:
            for seq, line in enumerate(fh, start=1):
                if seq > since_seq and line.strip():
                    yield seq, line

    def count_since(self, since_seq: int) -> int:
        if self._count is None:
            with self._open() as fh:
                self._count = sum(1 for _ in fh)
        return max(0, self._count - since_seq)

    def max_seq(self) -> int:
        return self.count_since(0)


def ensure_index(source_path: Path, home: Path) -> float:
    """Build the index for ``source_path`` into ``home`` unless already built; seconds spent."""
    settings = Settings().with_home(home)
    # the web app opens the store of its home; the benchmark's index is built from JSON Lines, so
    # its store is an empty file (search pages are served from the index alone)
    open_store(home).close()
    if (settings.index_dir / "CURRENT").exists():
        return 0.0
    source = JsonlRecords(source_path)
    total = source.count_since(0)
    started = time.perf_counter()
    last = [started]

    def progress(done: int, _total: int | None) -> None:
        now = time.perf_counter()
        if now - last[0] > 15 or done == total:
            last[0] = now
            print(f"  indexed {done:,}/{total:,} ({done / (now - started):,.0f} rec/s)", file=sys.stderr)

    build_index(source, settings.index_dir, progress=progress)
    return time.perf_counter() - started


# -- the query set ------------------------------------------------------------------------------

def query_set(seed: int = 7, n: int = 200) -> list[dict[str, Any]]:
    """200 fixed requests drawn from the sample's vocabulary (same seed, same set)."""
    rng = random.Random(seed)
    with gzip.open(sample_path(), "rb") as fh:
        sample = [orjson.loads(line) for line in fh if line.strip()]
    df: collections.Counter[str] = collections.Counter()
    bigrams: collections.Counter[tuple[str, str]] = collections.Counter()
    for rec in sample:
        words = [w.lower() for w in _WORD.findall(f"{rec['title']} {rec.get('abstract') or ''}")]
        # dict.fromkeys, not set(): ties in most_common keep insertion order, and a set's order
        # changes with each process's string hash seed, which made the set differ between runs
        df.update(dict.fromkeys((w for w in words if w not in STOP), 1))
        bigrams.update((a, b) for a, b in zip(words, words[1:]) if a not in STOP and b not in STOP)
    common = [w for w, _ in df.most_common(300)]
    middle = [w for w, _ in df.most_common(3000)[300:]]
    phrases = [f"{a} {b}" for (a, b), _ in bigrams.most_common(150)]
    dtypes = [d for d, _ in collections.Counter(r.get("document_type_label") or r.get("document_type")
                                               for r in sample if r.get("document_type")).most_common(5)]
    queries: list[dict[str, Any]] = []

    def add(kind: str, **req: Any) -> None:
        queries.append({"kind": kind, **req})

    for _ in range(30):
        add("word", q=rng.choice(common))
    for _ in range(20):
        add("rare word", q=rng.choice(middle))
    for _ in range(30):
        add("words", q=" ".join(rng.sample(common, rng.choice([2, 3]))))
    for _ in range(30):
        add("phrase", q=f'"{rng.choice(phrases)}"')
    for _ in range(20):
        a, b, c = rng.sample(common, 3)
        form = rng.choice([f"{a} OR {b}", f"{a} -{b}", f"title:{a} {b}", f"({a} OR {b}) {c}",
                           f"{a} year:1990-2010", f"subject:{a}", f"{a} source:osti"])
        add("operators", q=form)
    for _ in range(30):
        q = rng.choice(common)
        form = rng.choice(["source", "years", "type"])
        if form == "source":
            add("filter", q=q, source=rng.choice(["ntrs", "osti"]))
        elif form == "years":
            lo = rng.choice([1960, 1970, 1980, 1990, 2000, 2010])
            add("filter", q=q, year_from=lo, year_to=lo + rng.choice([5, 10, 20]))
        else:
            add("filter", q=q, document_type=[rng.choice(dtypes)])
    for _ in range(20):
        add("sort", q=rng.choice(common), sort=rng.choice(["newest", "oldest"]))
    for _ in range(20):
        add("deep page", q=rng.choice(common[:50]), page=rng.choice([10, 20, 50]), per_page=20)
    assert len(queries) == n, len(queries)
    return queries


_PAREN_ACRONYM = re.compile(r"\(([A-Za-z][A-Za-z0-9&-]{1,9})\)")


def acronym_set(seed: int = 11, n: int = 40) -> list[dict[str, Any]]:
    """40 fixed requests typing an acronym the sample defines in parentheses (same seed, same set)."""
    rng = random.Random(seed)
    with gzip.open(sample_path(), "rb") as fh:
        sample = [orjson.loads(line) for line in fh if line.strip()]
    seen: collections.Counter[str] = collections.Counter()
    common: collections.Counter[str] = collections.Counter()
    for rec in sample:
        text = f"{rec['title']} {rec.get('abstract') or ''}"
        for m in _PAREN_ACRONYM.finditer(text):
            word = m.group(1).removesuffix("s") if m.group(1)[:-1].isupper() else m.group(1)
            if sum(ch.isupper() for ch in word) >= 2:
                seen[word] += 1
        common.update(dict.fromkeys((w.lower() for w in _WORD.findall(text) if w.lower() not in STOP), 1))
    acronyms = [a for a, _ in seen.most_common(80)]
    words = [w for w, _ in common.most_common(300)]
    queries = [{"kind": "acronym", "q": rng.choice(acronyms)} for _ in range(n // 2)]
    queries += [{"kind": "acronym + word", "q": f"{rng.choice(acronyms)} {rng.choice(words)}"}
                for _ in range(n - n // 2)]
    return queries


def ensure_acronyms(source_path: Path, home: Path) -> dict[str, Any] | str:
    """The acronym lexicon of ``source_path`` beside the home's index, as ``searchnasa index``
    writes it from the store (the definitions of each record counted once, the same rule)."""
    try:
        from searchnasa.index.acronym_lexicon import build_lexicon, lexicon_path, write_lexicon
        from searchnasa.index.acronym_table import definitions_of
    except ImportError:
        return "skipped: this build has no acronym lexicon"
    index_dir = Settings().with_home(home).index_dir
    if lexicon_path(index_dir).exists():
        return {"lexicon": "kept from an earlier run"}
    counts: collections.Counter[tuple[str, str, str]] = collections.Counter()
    records = 0
    started = time.perf_counter()
    opener = gzip.open if source_path.suffix == ".gz" else open
    with opener(source_path, "rb") as fh:
        for line in fh:
            if line.strip():
                records += 1
                counts.update(definitions_of(line)[1])
    mined_s = time.perf_counter() - started
    lexicon = build_lexicon(((a, k, f, n) for (a, k, f), n in counts.items()), records)
    write_lexicon(index_dir, lexicon)
    return {"records": records, "mining_s": round(mined_s, 1), "records_per_s": round(records / mined_s),
            "lexicon_acronyms": len(lexicon)}


# -- timing -------------------------------------------------------------------------------------

def percentiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": round(q[49], 2), "p95": round(q[94], 2), "max": round(ordered[-1], 2),
            "mean": round(statistics.fmean(ordered), 2)}


def time_function(service: SearchService, queries: list[dict[str, Any]],
                  rounds: int = 3) -> tuple[list[float], list[float], list[int]]:
    """Per query: the best wall time of ``rounds`` timed runs (after one warm-up), and the CPU
    time of this process (the search's own thread and the facet threads working beside it), which
    other jobs on a shared machine disturb far less than the wall clock."""
    reqs = [SearchRequest(mode="lexical", **{k: v for k, v in q.items() if k != "kind"}) for q in queries]
    for req in reqs:  # warm-up: page cache, reader, first-use costs
        service.search(req)
    clear = getattr(service, "clear_caches", lambda: None)
    wall = [float("inf")] * len(reqs)
    first: list[float] = []
    cpu = [float("inf")] * len(reqs)
    totals = [0] * len(reqs)
    for round_ in range(rounds):
        for i, req in enumerate(reqs):
            clear()  # every timed search is cold: no facet counts remembered from the last round
            c0, w0 = time.process_time(), time.perf_counter()
            resp = service.search(req)
            elapsed = (time.perf_counter() - w0) * 1000
            if round_ == 0:
                first.append(elapsed)
            wall[i] = min(wall[i], elapsed)
            cpu[i] = min(cpu[i], (time.process_time() - c0) * 1000)
            totals[i] = resp.total
    return first, wall, cpu, totals


def time_cards(service: SearchService, queries: list[dict[str, Any]]) -> dict[str, Any] | str:
    """Render a page of 20 cards from the index's stored card vs from the SQLite store by id."""
    from searchnasa.index.documents import card_from_bytes
    from searchnasa.search.lexical import compile_node
    from searchnasa.search.query import parse

    if not service.settings.store_path.exists() or service.store.count() == 0:
        return "skipped: no records in the store"
    searcher = service.reader.searcher()
    schema = service.reader.index.schema
    pages = []
    for q in queries:
        hits = searcher.search(compile_node(schema, parse(q.get("q", "")).tree), limit=20).hits
        if hits:
            pages.append([addr for _, addr in hits])
    index_ms, store_ms = [], []
    for addrs in pages * 2:
        t0 = time.perf_counter()
        cards = [card_from_bytes(searcher.doc(a).get_first("card")) for a in addrs]
        index_ms.append((time.perf_counter() - t0) * 1000)
        ids = [c["id"] for c in cards]
        t0 = time.perf_counter()
        service.store.get_many(ids)
        store_ms.append((time.perf_counter() - t0) * 1000)
    return {"pages_of_20": len(pages), "index_stored_card_ms": percentiles(index_ms[len(pages):]),
            "store_get_many_ms": percentiles(store_ms[len(pages):])}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def time_http(home: Path, queries: list[dict[str, Any]], rounds: int = 3) -> list[float] | str:
    """Latency of GET /api/search through uvicorn on 127.0.0.1 (one keep-alive client)."""
    try:
        import httpx
        import uvicorn

        from searchnasa.web.app import create_app
    except ImportError as exc:
        return f"skipped: web app not importable ({exc})"
    os.environ["SEARCHNASA_FACET_CACHE"] = "0"  # cold searches, as in the function timings
    app = create_app(Settings().with_home(home))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            for _ in range(200):
                try:
                    client.get("/healthz")
                    break
                except httpx.TransportError:
                    time.sleep(0.05)
            params = [{**{k: v for k, v in q.items() if k != "kind"}, "mode": "lexical"} for q in queries]
            for p in params:
                client.get("/api/search", params=p).raise_for_status()
            times = [float("inf")] * len(params)
            for _ in range(rounds):
                for i, p in enumerate(params):
                    started = time.perf_counter()
                    client.get("/api/search", params=p).raise_for_status()
                    times[i] = min(times[i], (time.perf_counter() - started) * 1000)
        return times
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--sample", action="store_true", help="the bundled sample (real records)")
    which.add_argument("--corpus", type=Path, help="a JSON Lines corpus (e.g. from make_corpus.py)")
    which.add_argument("--home", type=Path, help="an existing data home with an index")
    parser.add_argument("--no-http", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds; each query's best is kept")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    parser.add_argument("--no-acronyms", action="store_true", help="do not build the acronym lexicon")
    args = parser.parse_args()

    build_s = 0.0
    if args.sample:
        home, label = OUT / "home-sample", "bundled sample (6,514 real records)"
        build_s = ensure_index(sample_path(), home)
    elif args.corpus:
        name = args.corpus.name.split(".")[0]
        home, label = OUT / f"home-{name}", f"{args.corpus.name} (SYNTHETIC)"
        build_s = ensure_index(args.corpus, home)
    else:
        home, label = args.home, str(args.home)
    acronyms: dict[str, Any] | str = "not built (--no-acronyms or --home)"
    if not args.no_acronyms and (args.sample or args.corpus):
        acronyms = ensure_acronyms(sample_path() if args.sample else args.corpus, home)
    service = SearchService(Settings().with_home(home))
    docs = service.reader.searcher().num_docs
    queries = query_set()
    first, times, cpu, totals = time_function(service, queries, rounds=args.rounds)
    result: dict[str, Any] = {"corpus": label, "documents": docs, "queries": len(queries),
                              "index_build_s": round(build_s, 1),
                              "function_ms_single_run": percentiles(first),
                              "function_ms": percentiles(times),
                              "function_cpu_ms": percentiles(cpu),
                              "median_total_hits": int(statistics.median(totals)),
                              "load_average": [round(x, 1) for x in os.getloadavg()]}
    by_kind: dict[str, list[float]] = collections.defaultdict(list)  # best-of-rounds wall
    for q, t in zip(queries, times):
        by_kind[q["kind"]].append(t)
    result["function_ms_by_kind"] = {k: percentiles(v) for k, v in by_kind.items() if len(v) > 1}
    acronym_queries = acronym_set()
    _, a_times, a_cpu, _ = time_function(service, acronym_queries, rounds=args.rounds)
    expanded = sum(any(note.expanded_to for note in getattr(
        service.search(SearchRequest(q=q["q"], mode="lexical")), "acronyms", [])) for q in acronym_queries)
    result.update({"acronym_lexicon": acronyms, "acronym_ms": percentiles(a_times),
                   "acronym_cpu_ms": percentiles(a_cpu), "acronyms_expanded": expanded})
    if args.sample:
        # the sample's store holds the records: compare the two ways of filling a page of cards
        from searchnasa.ingest.importer import import_paths
        from searchnasa.store import open_store as _open

        store = _open(home)
        if store.count() == 0:
            import_paths(store, [sample_path()], "records-jsonl")
        store.close()
        result["cards"] = time_cards(service, queries)
    if not args.no_http:
        http = time_http(home, queries, rounds=args.rounds)
        result["http_ms"] = percentiles(http) if isinstance(http, list) else http
    print_and_save(result, args.json)


if __name__ == "__main__":
    main()
