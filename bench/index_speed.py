"""Import + lexical index throughput, end to end, through the real CLI (each stage its own process).

Two ways to get from a corpus file to a searchable home, timed on the same input:

- ``separate``:  ``searchnasa import CORPUS`` then ``searchnasa index`` (what bench/scale.py runs);
- ``pipelined``: ``searchnasa import CORPUS --index`` (the index writer follows the store's seq
  while the import runs, so Tantivy's threads use the second core).

Prints wall seconds, records/s and CPU-seconds per record (user + system of the child processes,
Tantivy's threads included) for each, ``--rounds`` times, alternating the modes so both see the
same machine load. ``--src DIR`` runs the CLI from another source tree (e.g. an unpacked older
commit) for before/after comparisons. The corpus is SYNTHETIC (``bench/make_corpus.py``); the
first ``--records`` lines are used.

    .venv/bin/python bench/index_speed.py --records 100000 --rounds 2
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI = [sys.executable, "-c", "from searchnasa.cli import main; main()"]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run(args: list[str], home: Path, src: Path | None) -> tuple[float, float]:
    """Wall and CPU seconds of one CLI command."""
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "160"}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    started, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return time.perf_counter() - started, children_cpu() - cpu


def one(mode: str, corpus: Path, n: int, src: Path | None, work: Path) -> dict:
    home = work / f"home-{mode}"
    shutil.rmtree(home, ignore_errors=True)
    if mode == "pipelined":
        wall, cpu = run(["import", str(corpus), "--format", "records-jsonl", "--index"], home, src)
        parts = {}
    else:
        w1, c1 = run(["import", str(corpus), "--format", "records-jsonl"], home, src)
        w2, c2 = run(["index"], home, src)
        wall, cpu = w1 + w2, c1 + c2
        parts = {"import_rec_s": round(n / w1), "index_rec_s": round(n / w2),
                 "import_cpu_us": round(c1 * 1e6 / n), "index_cpu_us": round(c2 * 1e6 / n)}
    shutil.rmtree(home, ignore_errors=True)
    return {"mode": mode, "src": str(src or "current"), "wall_s": round(wall, 1), "rec_s": round(n / wall),
            "cpu_us_per_record": round(cpu * 1e6 / n), "load": [round(x, 1) for x in os.getloadavg()], **parts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=ROOT / "bench" / "out" / "corpus-100k.jsonl.gz")
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--modes", default="separate,pipelined")
    parser.add_argument("--src", type=Path, action="append",
                        help="also run the CLI from this source tree (repeatable); 'current' is always run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=ROOT / "bench" / "out") as tmp:
        work = Path(tmp)
        corpus = work / "corpus.jsonl"
        with gzip.open(args.corpus, "rb") as fin, open(corpus, "wb") as fout:
            for i, line in enumerate(fin):
                if i >= args.records:
                    break
                fout.write(line)
        with open(corpus, "rb") as fh:
            n = sum(1 for _ in fh)
        print(f"{n:,} SYNTHETIC records from {args.corpus.name}; {os.cpu_count()} CPUs", flush=True)
        trees: list[Path | None] = [None, *(args.src or [])]
        for _ in range(args.rounds):
            for src in trees:
                for mode in args.modes.split(","):
                    if src is not None and mode == "pipelined":
                        continue  # older trees have no --index on import
                    print(json.dumps(one(mode, corpus, n, src, work)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
