"""Load test: N concurrent clients for S seconds against a real ``searchnasa serve`` on loopback.

Each client (an asyncio task with its own keep-alive connection, httpx async) loops over a fixed
mix of real requests until the time is up: JSON searches (words, phrases, operators, fields,
filters, date sorts, deep pages), HTML result pages, Atom feeds, record pages and the record API.
Nothing leaves 127.0.0.1. It prints requests, errors (anything not 2xx/3xx, any transport error,
any answer slower than the 10 s client deadline), p50/p95/p99 latency and requests per second.

    python bench/load_test.py                                  # bundled sample, 64 clients, 60 s
    python bench/load_test.py --index bench/out/home-corpus-1m/index   # SYNTHETIC 1M-record index
    python bench/load_test.py --url http://127.0.0.1:8000       # an already running server
    python bench/load_test.py --clients 16 --seconds 3 --json   # short, machine-readable
    python bench/load_test.py --mode lexical                     # keyword search only

The client runs in this process and the server in its own (``--workers`` uvicorn workers): on a
small machine they share the CPUs, so the figures are a floor for the server alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))  # server_util: starts `searchnasa serve` and waits for /readyz

DEADLINE_S = 10.0
OUT = ROOT / "bench" / "out"

# A fixed mix of the queries people type (words, phrases, operators, fields, filters, sorts, pages).
QUERIES = [
    "rocket engine", "heat transfer", "\"wind tunnel\"", "battery", "combustion instability",
    "turbine blade cooling", "thermal protection", "jet OR rocket nozzle", "plasma -fusion",
    "title:propulsion", "author:smith", "subject:aerodynamics", "year:1990-2005 solar",
    "source:osti reactor", "hydrogen storage", "composite materials fatigue", "lunar regolith",
    "\"heat shield\" ablation", "spacecraft (thermal OR power)", "cryogenic tank", "supersonic",
    "fuel cell", "lithium", "neutron", "orbit determination", "boundary layer transition",
]


@dataclass
class LoadReport:
    """What a run saw. ``errors`` counts every answer that was not 2xx/3xx (429s separately)."""

    target: str
    clients: int
    seconds: float
    mode: str = "default"
    requests: int = 0
    errors: int = 0
    rate_limited: int = 0
    p50_ms: float = 0.0
    p95_ms: float = 0.0
    p99_ms: float = 0.0
    max_ms: float = 0.0
    req_per_s: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    served_modes: dict[str, int] = field(default_factory=dict)  # API searches by the mode that answered
    error_samples: list[str] = field(default_factory=list)
    by_kind_p95_ms: dict[str, float] = field(default_factory=dict)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def request_mix(record_ids: list[str], seed: int, mode: str | None = None) -> list[tuple[str, str, dict]]:
    """(kind, path, params) in a fixed shuffled order; every client walks it from its own offset.

    ``mode`` (lexical, hybrid, semantic) is sent with every search; None sends none, so the
    server's default applies (hybrid, which embeds each new query on the CPU).
    """
    rng = random.Random(seed)
    extra = {"mode": mode} if mode else {}
    mix: list[tuple[str, str, dict]] = []
    for q in QUERIES:
        mix.append(("api_search", "/api/search", {"q": q, **extra}))
        mix.append(("api_search", "/api/search", {"q": q, "per_page": 50, **extra}))
        mix.append(("api_search", "/api/search", {"q": q, "sort": "newest", "page": rng.randint(2, 5), **extra}))
        mix.append(("page_search", "/search", {"q": q, **extra}))
    mix += [("feed", "/search.atom", {"q": q}) for q in QUERIES[:6]]
    mix += [("api_search", "/api/search", {"q": "", "source": s, "year_from": 1980, "year_to": 2000, **extra})
            for s in ("ntrs", "osti")]
    for rid in record_ids[:20]:
        mix.append(("record_page", f"/records/{rid}", {}))
        mix.append(("record_api", f"/api/records/{rid}", {}))
    rng.shuffle(mix)
    return mix


async def _discover_ids(client: httpx.AsyncClient) -> list[str]:
    """Real record ids to fetch, from one search (none when the store holds no records)."""
    ready = (await client.get("/readyz")).json()
    if not ready.get("records"):
        return []
    resp = await client.get("/api/search", params={"q": "engine", "per_page": 20, "mode": "lexical"})
    return [hit["id"] for hit in resp.json().get("results", [])]


async def wait_for_encoder(client: httpx.AsyncClient, in_a_row: int = 12, limit_s: float = 180.0) -> float:
    """Seconds until the server answers hybrid searches ``in_a_row`` times running (every worker
    loads the query encoder in the background after it starts, and answers lexically meanwhile).

    A served site is measured warm: the first ~20 s after a start, while each worker loads the
    model on the same cores, are a start-up cost, not the steady state the load test is about.
    Returns at once for a home without vectors (lexical answers that do not say the encoder is busy).
    """
    started = time.perf_counter()
    seen = 0
    while seen < in_a_row and time.perf_counter() - started < limit_s:
        body = (await client.get("/api/search", params={"q": f"warm up {seen}"})).json()
        if body.get("mode") == "hybrid":
            seen += 1
        elif not any("busy" in n for n in body.get("notices", [])):
            break  # lexical without a "busy" notice: this home has no vectors
        else:
            seen = 0
            await asyncio.sleep(0.5)
    return time.perf_counter() - started


async def run_load(base_url: str, clients: int, seconds: float, seed: int = 7,
                   mode: str | None = None, warm: bool = True) -> LoadReport:
    """Drive ``clients`` concurrent loops for ``seconds``; return what they saw."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    timeout = httpx.Timeout(DEADLINE_S)
    latencies: list[float] = []
    by_kind: dict[str, list[float]] = {}
    statuses: Counter[str] = Counter()
    modes: Counter[str] = Counter()
    samples: list[str] = []
    report = LoadReport(target=base_url, clients=clients, seconds=seconds, mode=mode or "default")
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=timeout,
                                 headers={"accept": "text/html,application/json"}) as client:
        if warm and mode != "lexical":
            print(f"query encoder ready after {await wait_for_encoder(client):.1f} s", file=sys.stderr)
        mix = request_mix(await _discover_ids(client), seed, mode)
        started = time.perf_counter()
        stop_at = started + seconds

        async def one_client(offset: int) -> None:
            i = offset
            while time.perf_counter() < stop_at:
                kind, path, params = mix[i % len(mix)]
                i += 1
                t0 = time.perf_counter()
                try:
                    async with asyncio.timeout(DEADLINE_S):  # the whole answer, not each read
                        resp = await client.get(path, params=params)
                        body = await resp.aread()
                    status = str(resp.status_code)
                    if kind == "api_search" and status == "200":  # which mode really answered
                        for served in (b'"mode":"hybrid"', b'"mode":"lexical"', b'"mode":"semantic"'):
                            if served in body:
                                modes[served.split(b'"')[3].decode()] += 1
                except (httpx.TimeoutException, TimeoutError):
                    status = "timeout"
                except httpx.TransportError as exc:
                    status = f"transport:{type(exc).__name__}"
                elapsed = (time.perf_counter() - t0) * 1000
                statuses[status] += 1
                if status == "429":
                    report.rate_limited += 1
                    continue
                latencies.append(elapsed)
                by_kind.setdefault(kind, []).append(elapsed)
                if not status.isdigit() or int(status) >= 400:
                    report.errors += 1
                    if len(samples) < 10:
                        samples.append(f"{status} {path} {params}")

        await asyncio.gather(*(one_client(n * 7) for n in range(clients)))
        wall = time.perf_counter() - started
    report.requests = sum(statuses.values())
    report.p50_ms = round(percentile(latencies, 50), 1)
    report.p95_ms = round(percentile(latencies, 95), 1)
    report.p99_ms = round(percentile(latencies, 99), 1)
    report.max_ms = round(max(latencies, default=0.0), 1)
    report.req_per_s = round(report.requests / wall, 1)
    report.statuses = dict(statuses)
    report.served_modes = dict(modes)
    report.error_samples = samples
    report.by_kind_p95_ms = {k: round(percentile(v, 95), 1) for k, v in sorted(by_kind.items())}
    return report


def sample_home() -> Path:
    """The bundled sample (6,514 real records) loaded and indexed once under ``bench/out``."""
    from searchnasa.ingest.importer import import_paths
    from searchnasa.index import build_index
    from searchnasa.ingest.sample import sample_path
    from searchnasa.settings import Settings
    from searchnasa.store import open_store

    home = OUT / "load-home-sample"
    if (home / ".built").exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    store = open_store(home)
    import_paths(store, [sample_path()], "records-jsonl")
    build_index(store, Settings().with_home(home).index_dir)
    store.close()
    (home / ".built").touch()
    return home


def index_home(index_dir: Path) -> Path:
    """A home serving an index built elsewhere (the SYNTHETIC 1M index has no store beside it):
    the index is linked, not copied, and an empty store is created so the server can start."""
    from searchnasa.store import open_store

    home = OUT / f"load-home-{index_dir.resolve().parent.name}"
    home.mkdir(parents=True, exist_ok=True)
    link = home / "index"
    if not link.exists():
        os.symlink(index_dir.resolve(), link)
    open_store(home).close()
    return home


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn workers of the served app")
    parser.add_argument("--url", help="load an already running server instead of starting one")
    parser.add_argument("--home", type=Path, help="serve this data home (default: the bundled sample)")
    parser.add_argument("--index", type=Path, help="serve this index directory (e.g. the 1M one)")
    parser.add_argument("--mode", choices=["lexical", "hybrid", "semantic"],
                        help="search mode sent with every search (default: none, the server's default)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--cold", action="store_true",
                        help="start the clock at once, while the workers still load the query encoder")
    args = parser.parse_args()
    if not 1 <= args.clients <= 1000 or not 0 < args.seconds <= 600:
        parser.error("--clients must be 1-1000 and --seconds 0-600")

    server = None
    if args.url:
        base_url = args.url.rstrip("/")
    else:
        from server_util import start_server

        home = index_home(args.index) if args.index else (args.home or sample_home())
        log_path = OUT / "load_test_server.log"
        server = start_server(home, log_path, workers=args.workers, timeout=180.0)
        base_url = server.base_url
        print(f"serving {home} with {args.workers} worker(s) at {base_url}", file=sys.stderr)
    try:
        report = asyncio.run(run_load(base_url, args.clients, args.seconds, mode=args.mode, warm=not args.cold))
    finally:
        if server is not None:
            server.stop()
    if args.json:
        print(json.dumps(asdict(report), indent=2))
        return
    print(f"target {report.target}: {report.clients} clients for {report.seconds:.0f} s, mode {report.mode} "
          f"(os.cpu_count()={os.cpu_count()}, load average {os.getloadavg()[0]:.1f})")
    print(f"requests {report.requests:,}  errors {report.errors}  rate-limited {report.rate_limited}  "
          f"req/s {report.req_per_s:,.1f}")
    print(f"latency ms  p50 {report.p50_ms}  p95 {report.p95_ms}  p99 {report.p99_ms}  max {report.max_ms}")
    print("p95 ms by kind: " + ", ".join(f"{k} {v}" for k, v in report.by_kind_p95_ms.items()))
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(report.statuses.items())))
    print("API searches answered in mode: " + ", ".join(f"{k}: {v}" for k, v in sorted(report.served_modes.items())))
    for line in report.error_samples:
        print("  error:", line)
    if report.errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
