"""Harvest throughput: records/s from the local replay server with the rate limit off.

What it shows: the harvest client (HTTP + JSON parse + normalize + store) is not the bottleneck;
the real APIs' rate limits are. The replay server runs in its own process so its work is not
charged to the client. Three numbers per source:

- end-to-end: records/s of ``run_harvest`` (HTTP, parse, map, upsert with checkpoint), wall clock;
- client CPU: records per CPU-second of the harvesting process alone;
- parse + normalize + store: the same pages pre-fetched as bytes, no network (upper bound).

Usage: ``.venv/bin/python bench/harvest_throughput.py [--rounds 3]``. Target: >= 2,000 records/s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from searchnasa.ingest.harvest import HarvestOptions, run_harvest  # noqa: E402
from searchnasa.settings import Settings  # noqa: E402
from searchnasa.ingest.formats import map_item  # noqa: E402
from searchnasa.store import StoredItem, open_store  # noqa: E402


def start_server(raw: Path) -> tuple[subprocess.Popen, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "replay.server", "--raw", str(raw)],
                            cwd=ROOT / "tests", stdout=subprocess.PIPE, text=True)
    ntrs = proc.stdout.readline().split()[1]  # type: ignore[union-attr]
    osti = proc.stdout.readline().split()[1]  # type: ignore[union-attr]
    return proc, ntrs, osti


def end_to_end(source: str, settings: Settings) -> tuple[int, float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        store = open_store(home)
        wall, cpu = time.perf_counter(), time.process_time()
        report = run_harvest(source, store, Settings(home=home, ntrs_api=settings.ntrs_api,
                                                     osti_api=settings.osti_api),
                             HarvestOptions(rate=0, page_size=100, update_index=False))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert report.finished and report.counts.new == report.fetched, report.summary()
        store.close()
    return report.fetched, wall, cpu


def fetch_pages(source: str, settings: Settings) -> list[bytes]:
    """Raw page bodies, fetched once, for the no-network measurement."""
    pages = []
    with httpx.Client(timeout=60) as client:
        if source == "ntrs":
            url = settings.ntrs_api + "/citations/search"
            total = client.get(url, params={"q": "*", "page.size": 1}).json()["stats"]["total"]
            for start in range(0, total, 100):
                pages.append(client.get(url, params={"q": "*", "page.size": 100, "page.from": start}).content)
        else:
            url: str | None = settings.osti_api + "/records?rows=100&page=1"
            while url:
                resp = client.get(url)
                pages.append(resp.content)
                url = resp.links.get("next", {}).get("url")
    return pages


def parse_normalize_store(source: str, pages: list[bytes]) -> tuple[int, float]:
    fmt = "ntrs-api" if source == "ntrs" else "osti-api"
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp))
        n = 0
        started = time.perf_counter()
        for i, body in enumerate(pages):
            data = orjson.loads(body)
            items = data["results"] if source == "ntrs" else data
            batch = [StoredItem(map_item(fmt, raw), fmt, raw) for raw in items]
            store.upsert(batch, checkpoint=(f"bench:{source}", {"page": i}))
            n += len(batch)
        elapsed = time.perf_counter() - started
        store.close()
    return n, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description="Harvest throughput against the local replay server.")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    args = parser.parse_args()
    proc, ntrs_api, osti_api = start_server(args.raw)
    settings = Settings(ntrs_api=ntrs_api, osti_api=osti_api)
    try:
        print("load average before: %.2f %.2f %.2f (2 cores shared; wall-clock rates fall with load)"
              % os.getloadavg())
        print(f"{'source':6} {'records':>8} {'end-to-end rec/s':>17} {'client CPU rec/s':>17} "
              f"{'parse+normalize+store rec/s':>28}")
        for source in ("ntrs", "osti"):
            e2e, cpu_rates, pns = [], [], []
            pages = fetch_pages(source, settings)
            for _ in range(args.rounds):
                n, wall, cpu = end_to_end(source, settings)
                e2e.append(n / wall)
                cpu_rates.append(n / max(cpu, 1e-9))
                m, elapsed = parse_normalize_store(source, pages)
                pns.append(m / elapsed)
            print(f"{source:6} {n:>8,} {statistics.median(e2e):>17,.0f} {statistics.median(cpu_rates):>17,.0f} "
                  f"{statistics.median(pns):>28,.0f}")
        print("load average after: %.2f %.2f %.2f" % os.getloadavg())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
