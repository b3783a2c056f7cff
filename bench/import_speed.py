"""Import speed: records per second for importing the bundled sample into an empty store.

Measures the path ``searchnasa import`` and ``searchnasa load-sample`` take (read, map/validate,
hash, compress the raw payload, upsert in batches of 1,000 with a SQLite transaction each), on a
fresh store in a temporary directory, several times, and prints the median and best rates. Also
prints the rate for re-importing the same file (every record unchanged: the idempotent path), for
the raw source files in all their formats, and for the CLI end to end (process start included).

    .venv/bin/python bench/import_speed.py [--runs 5] [--raw ../shared/data/raw]

The target in issue 2 is at least 5,000 records/s on the 2-core build machine.
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

from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_path
from searchnasa.store import open_store

ROOT = Path(__file__).resolve().parents[1]
TARGET = 5000


def timed_import(paths: list[Path], fmt: str | None, home: Path) -> tuple[int, float, float]:
    """Records read, wall seconds, CPU seconds of this process (SQLite runs in-process too)."""
    store = open_store(home)
    started, cpu = time.perf_counter(), time.process_time()
    report = import_paths(store, paths, fmt)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    store.close()
    if report.skipped:
        raise SystemExit(f"benchmark input had problems: {report.problems[:3]}")
    return report.read, elapsed, cpu


def rates(paths: list[Path], fmt: str | None, runs: int, reimport: bool = False) -> tuple[list[float], list[float]]:
    """Per run: records per wall second, and records per CPU second (which the other processes on
    a shared machine disturb much less than the wall clock)."""
    wall, cpu = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            if reimport:
                timed_import(paths, fmt, home)
            n, elapsed, used = timed_import(paths, fmt, home)
            wall.append(n / elapsed)
            cpu.append(n / max(used, 1e-9))
    return wall, cpu


def line(label: str, values: tuple[list[float], list[float]]) -> str:
    wall, cpu = values
    return (f"{label:<44} wall median {statistics.median(wall):>7,.0f} rec/s, best {max(wall):>7,.0f}"
            f" | per CPU-second median {statistics.median(cpu):>7,.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    args = parser.parse_args()
    sample = [sample_path()]
    n_records = sum(1 for _ in __import__("gzip").open(sample[0]))
    print(f"input: bundled sample, {n_records:,} records ({sample[0].stat().st_size / 1e6:.1f} MB gzip); "
          f"{args.runs} runs each; {os.cpu_count()} CPUs visible")
    fresh = rates(sample, "records-jsonl", args.runs)
    print(line("sample -> empty store", fresh))
    print(line("sample -> store holding it (all unchanged)", rates(sample, "records-jsonl", args.runs, True)))
    raw = sorted(p for p in args.raw.glob("*/*") if p.suffix in (".json", ".jsonl", ".csv"))
    if raw:
        print(line(f"raw files ({len(raw)} files, 8 formats) -> empty", rates(raw, None, args.runs)))
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "SEARCHNASA_HOME": tmp}
        cli = Path(sys.executable).with_name("searchnasa")
        started = time.perf_counter()
        subprocess.run([str(cli), "import", str(sample[0])], env=env, check=True, capture_output=True)
        wall = time.perf_counter() - started
    print(f"{'CLI searchnasa import sample (wall, 1 run)':<44} {wall:>6.2f} s = {n_records / wall:,.0f} rec/s")
    median = statistics.median(fresh[0])
    print(f"load average while measuring: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    verdict = "meets" if median >= TARGET else "BELOW"
    print(f"result: {median:,.0f} records/s (wall, median) importing the sample into an empty store "
          f"({verdict} the {TARGET:,} records/s target); {statistics.median(fresh[1]):,.0f} per CPU-second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
