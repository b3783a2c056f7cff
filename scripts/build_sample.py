"""Build the bundled sample corpus from the real raw files in ``shared/data/raw``.

Every real record is imported with the product's own importers into a temporary store (so
records present in several files are stored once), then exported as gzip-compressed JSON Lines of
``Record`` into ``src/searchnasa/data/sample.jsonl.gz``. The raw files are not copied into the repo.

    python scripts/build_sample.py [--raw ../shared/data/raw]
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
from pathlib import Path

from searchnasa.ingest.importer import import_paths
from searchnasa.store import open_store

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "searchnasa" / "data" / "sample.jsonl.gz"


def raw_files(raw_dir: Path) -> list[Path]:
    return sorted(p for p in raw_dir.glob("*/*") if p.suffix in (".json", ".jsonl", ".csv"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    files = raw_files(args.raw)
    if not files:
        print(f"no raw files under {args.raw}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp))
        report = import_paths(store, files)
        for problem in report.problems:
            print("skipped", problem, file=sys.stderr)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        # mtime=0 keeps the gzip bytes identical when the records are identical.
        with open(args.out, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as out:
            for blob in store.iter_json():
                out.write(blob + b"\n")
        print(f"{store.count()} records ({report.summary()}) -> {args.out}")
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
