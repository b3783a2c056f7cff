"""What the incremental overlap and ``--reconcile`` cost in requests, against the replay server.

Requests, not seconds, are what the real APIs ration (NTRS about 500 per 15 minutes, OSTI about
one a second), so this counts them; the replay server runs in this process, which is fine for
counting.

1. Overlap sweep: a SYNTHETIC collection entered at ``--per-day`` records a day for 120 days is
   harvested once; then the next day's records arrive together with late releases, records whose
   entry date lies 1 to 60 days before the newest one the first harvest saw (OSTI releases some
   records days or weeks after their ``entry_date``). For each overlap, the incremental run's
   requests, the records it re-read, and how many late releases it caught.
2. Reconcile: a full walk of each replay collection (the real records), its requests per 1,000
   records, plus one request per stored record missing from the listing.

Usage: ``.venv/bin/python bench/harvest_overlap.py [--per-day 300] [--page-size 100]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from replay.collections import ntrs_items, osti_items, synthetic_ntrs, synthetic_osti  # noqa: E402
from replay.server import ReplayServer  # noqa: E402

from searchnasa.ingest.harvest import HarvestOptions, run_harvest  # noqa: E402
from searchnasa.settings import Settings  # noqa: E402
from searchnasa.store import open_store  # noqa: E402

LATE_DAYS = (1, 3, 5, 10, 14, 20, 30, 45, 60)
OVERLAPS = (0, 2, 7, 14, 30, 60)


def fast(**kw) -> HarvestOptions:
    return HarvestOptions(**{"rate": 0, "backoff_base": 0.0, "update_index": False, **kw})


def day_items(source: str, day: date, n: int, start_id: int) -> list[dict]:
    """``n`` SYNTHETIC records entered (OSTI) / modified (NTRS) on ``day``."""
    if source == "osti":
        return synthetic_osti(n, f"{day}T00:00:00Z", start_id=start_id)
    return synthetic_ntrs(n, f"{day}T00:00:00.0000000+00:00", start_id=start_id)


def collection(source: str, newest: date, per_day: int) -> list[dict]:
    items: list[dict] = []
    for back in range(120, -1, -1):
        items += day_items(source, newest - timedelta(days=back), per_day, 10_000_000 + len(items))
    return items


def overlap_run(source: str, overlap: int, per_day: int, page_size: int) -> tuple[int, int, int]:
    """(requests, records read, late releases caught) of the incremental run after the first."""
    newest = date.today() - timedelta(days=1)
    base = collection(source, newest, per_day)
    late = [day_items(source, newest - timedelta(days=k), 1, 20_000_000 + k)[0] for k in LATE_DAYS]
    fresh = day_items(source, newest + timedelta(days=1), per_day, 30_000_000)
    server_args = {"osti_items": base} if source == "osti" else {"ntrs_items": base}
    with tempfile.TemporaryDirectory() as tmp, ReplayServer(**server_args) as server:
        home = Path(tmp)
        settings = Settings(home=home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)
        store = open_store(home)
        run_harvest(source, store, settings, fast(page_size=page_size))
        if source == "osti":
            server.osti_items.extend(late + fresh)
        else:
            server.add_ntrs(late + fresh)
        report = run_harvest(source, store, settings, fast(page_size=page_size, overlap_days=overlap))
        key = "osti_id" if source == "osti" else "id"
        caught = sum(store.exists(f"{source}:{item[key]}") for item in late)
        return report.requests, report.fetched, caught


def reconcile_cost(raw: Path, page_size: int) -> None:
    for source, items in (("ntrs", ntrs_items(raw)), ("osti", osti_items(raw))):
        server_args = {"osti_items": items} if source == "osti" else {"ntrs_items": items}
        with tempfile.TemporaryDirectory() as tmp, ReplayServer(**server_args) as server:
            home = Path(tmp)
            settings = Settings(home=home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)
            store = open_store(home)
            run_harvest(source, store, settings, fast(page_size=page_size))
            gone = items[:3]
            for item in gone:
                if source == "osti":
                    server.remove_osti(item["osti_id"])
                else:
                    server.remove_ntrs(item["id"])
            report = run_harvest(source, store, settings, fast(page_size=page_size, reconcile=True))
            walk = report.requests - report.withdrawn
            print(f"reconcile {source}: {len(items):,} records, {report.requests} requests "
                  f"({walk} walk + {report.withdrawn} confirmations of the {len(gone)} removed); "
                  f"{1000 * walk / len(items):.1f} walk requests per 1,000 records "
                  f"(ideal ceil(n/page) = {math.ceil(len(items) / page_size)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-day", type=int, default=300)
    parser.add_argument("--page-size", type=int, default=100)
    parser.add_argument("--raw", type=Path, default=ROOT.parent / "shared" / "data" / "raw")
    args = parser.parse_args()
    print(f"overlap sweep: {args.per_day} records a day, page size {args.page_size}, "
          f"late releases {LATE_DAYS} days before the newest seen")
    for source in ("osti", "ntrs"):
        for overlap in OVERLAPS:
            requests, read, caught = overlap_run(source, overlap, args.per_day, args.page_size)
            print(f"  {source} overlap {overlap:>2} days: {requests:>4} requests, {read:>6,} records read, "
                  f"late releases caught {caught}/{len(LATE_DAYS)}")
    reconcile_cost(args.raw, args.page_size)


if __name__ == "__main__":
    main()
