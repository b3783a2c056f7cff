"""Latency of the HTML pages over HTTP: results pages, record pages (with related papers) and
related-papers pages, through a real ``searchnasa serve`` on 127.0.0.1 (one keep-alive client).

    python bench/web_pages_latency.py                 # builds a temp home with the bundled sample
    python bench/web_pages_latency.py --home DIR      # an existing, indexed home

Each URL runs once to warm up, then once timed; prints p50/p95/max per page kind.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tests"))

import httpx  # noqa: E402

from server_util import running_server  # noqa: E402

QUERIES = ["wind tunnel", '"heat transfer"', "battery electrolyte", "rocket engine combustion",
           "turbine blade cooling", "solar cell", "hydrogen storage", "boundary layer transition",
           "lithium", "nuclear reactor fuel", "scramjet OR ramjet", "thermal protection -shuttle",
           "title:propulsion", "year:1960-1970 aerodynamics", "composite materials fatigue",
           "plasma", "superconducting magnet", "grid energy storage", "fuel cell membrane", "jet noise"]


def build_home(tmp: Path) -> Path:
    from searchnasa.ingest.importer import import_paths
    from searchnasa.index import build_index
    from searchnasa.ingest.sample import sample_path
    from searchnasa.settings import Settings
    from searchnasa.store import open_store

    store = open_store(tmp)
    import_paths(store, [sample_path()], "records-jsonl")
    build_index(store, Settings().with_home(tmp).index_dir)
    store.close()
    return tmp


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="an indexed home (default: a temp copy of the sample)")
    parser.add_argument("--records", type=int, default=40, help="record pages to time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = args.home or build_home(Path(tmp) / "home")
        with running_server(home, Path(tmp) / "server.log") as server, \
                httpx.Client(base_url=server.base_url, timeout=60, headers={"accept": "text/html"}) as client:
            urls: dict[str, list[str]] = {"results page": [], "results page 3, filtered": [],
                                          "record page (+10 related)": [], "related page (20)": []}
            for q in QUERIES:
                urls["results page"].append(f"/search?q={q}")
                urls["results page 3, filtered"].append(f"/search?q={q}&source=ntrs&page=3&year_from=1960")
            ids = [h["id"] for q in QUERIES[:10]
                   for h in client.get("/api/search", params={"q": q, "per_page": 10}).json()["results"]]
            random.Random(7).shuffle(ids)
            for rid in ids[: args.records]:
                urls["record page (+10 related)"].append(f"/records/{rid}")
                urls["related page (20)"].append(f"/records/{rid}/related")
            print(f"{'page':28} {'n':>4} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
            for kind, batch in urls.items():
                for url in batch:  # warm-up
                    client.get(url)
                times = []
                for url in batch:
                    started = time.perf_counter()
                    resp = client.get(url)
                    times.append((time.perf_counter() - started) * 1000)
                    assert resp.status_code == 200, (url, resp.status_code)
                print(f"{kind:28} {len(times):>4} {statistics.median(times):>8.1f} "
                      f"{percentile(times, 95):>8.1f} {max(times):>8.1f}")


if __name__ == "__main__":
    main()
