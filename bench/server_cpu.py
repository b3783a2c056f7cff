"""Server CPU per request: the load test's mix against one ``serve`` worker, CPU time over answers.

Wall-clock latency on a shared 2-core machine swings with whatever else runs; the CPU the server
process spends per answered request does not, so it is the figure to compare versions by (how the
hybrid load test's shortfall was traced, bench/README.md).

    python bench/server_cpu.py                          # every kind of request in the mix
    python bench/server_cpu.py --kinds record_page      # one kind (api_search, page_search, feed,
                                                        # record_page, record_api)

It waits until the worker answers hybrid searches, runs a 5 s warm-up (caches), then measures
``--seconds`` with ``--clients`` concurrent clients. CPU is read from ``/proc`` for the server
process and its children (Linux).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

import load_test
from server_util import start_server


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its direct children."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    total = 0.0
    for p in [pid, *map(int, children)]:
        fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kinds", default="", help="comma-separated request kinds (default: all)")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=4)
    args = ap.parse_args()
    kinds = set(args.kinds.split(",")) if args.kinds else None
    whole_mix = load_test.request_mix

    def mix(ids: list[str], seed: int, mode: str | None = None) -> list[tuple[str, str, dict]]:
        return [m for m in whole_mix(ids, seed, mode) if kinds is None or m[0] in kinds]

    load_test.request_mix = mix
    server = start_server(load_test.sample_home(), load_test.OUT / "server_cpu.log", workers=1, timeout=180)
    try:
        async def warm() -> None:
            async with httpx.AsyncClient(base_url=server.base_url, timeout=30) as client:
                await load_test.wait_for_encoder(client)

        asyncio.run(warm())
        asyncio.run(load_test.run_load(server.base_url, args.clients, 5, warm=False))
        before = cpu_seconds(server.process.pid)
        report = asyncio.run(load_test.run_load(server.base_url, args.clients, args.seconds, warm=False))
        spent = cpu_seconds(server.process.pid) - before
    finally:
        server.stop()
    print(json.dumps({"kinds": sorted(kinds) if kinds else "all", "requests": report.requests,
                      "errors": report.errors, "cpu_s": round(spent, 2),
                      "cpu_ms_per_request": round(1000 * spent / max(1, report.requests), 1),
                      "load_average": round(os.getloadavg()[0], 1)}))


if __name__ == "__main__":
    main()
