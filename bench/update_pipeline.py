"""``searchnasa update`` end to end over the replay server: records/s per stage of a full run, then
seconds and requests of an incremental run with nothing new upstream.

The replay server (tests/replay, every real NTRS and OSTI record in shared/data/raw: 5,027 +
1,327) runs in its own process, the rate limit is off (``--rate 0``), and ``update`` runs as a user
runs it (a subprocess of the CLI) on a fresh home. The embedding stage finds these records' vectors
in the bundled sample vectors (the same real records), so its figure is the cache path, not the
model's throughput (that is bench/embed_throughput.py). Requests are counted by the update itself
(its ``--json`` summary).

Usage: ``.venv/bin/python bench/update_pipeline.py [--profile all] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = str(Path(sys.executable).parent / "searchnasa")


def start_server(raw: Path) -> tuple[subprocess.Popen, str, str]:
    proc = subprocess.Popen([sys.executable, "-m", "replay.server", "--raw", str(raw)],
                            cwd=ROOT / "tests", stdout=subprocess.PIPE, text=True)
    ntrs = proc.stdout.readline().split()[1]  # type: ignore[union-attr]
    osti = proc.stdout.readline().split()[1]  # type: ignore[union-attr]
    return proc, ntrs, osti


def run_update(env: dict[str, str], profile: str) -> tuple[dict, float]:
    started = time.perf_counter()
    done = subprocess.run([CLI, "update", "--json", "--rate", "0", "--profile", profile], env=env,
                          capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"update failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout), wall


def describe(report: dict, wall: float, label: str) -> None:
    requests = sum(t["requests"] for t in report["sources"].values())
    fetched = sum(t["fetched"] for t in report["sources"].values())
    print(f"{label}: {wall:.2f} s wall (pipeline {report['seconds']:.2f} s), {requests} requests, "
          f"{fetched} records fetched")
    for stage in report["stages"]:
        rate = f"{stage['records_per_second']:,.0f} rec/s" if stage["records_per_second"] else "-"
        print(f"  {stage['name']:<13} {stage['seconds']:7.2f} s {stage['records']:7,} records  {rate}"
              + (f"  (skipped: {stage['skipped']})" if stage["skipped"] else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    parser.add_argument("--profile", default="all")
    parser.add_argument("--rounds", type=int, default=1, help="full + incremental pairs, each on a fresh home")
    args = parser.parse_args()
    proc, ntrs, osti = start_server(args.raw)
    try:
        for n in range(args.rounds):
            tmp = Path(tempfile.mkdtemp(prefix="bench-update-"))
            env = {**os.environ, "SEARCHNASA_HOME": str(tmp / "home"), "SEARCHNASA_NTRS_API": ntrs,
                   "SEARCHNASA_OSTI_API": osti, "SEARCHNASA_EMBED_CACHE": str(tmp / "cache.sqlite3")}
            try:
                describe(*run_update(env, args.profile), f"round {n + 1}, full update ({args.profile})")
                describe(*run_update(env, args.profile), f"round {n + 1}, nothing new upstream")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
