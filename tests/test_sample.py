"""The bundled sample is exactly what ``scripts/build_sample.py`` makes from the raw files today,
and every record in it is real, unique and valid."""

from __future__ import annotations

import gzip
import subprocess
import sys
from collections import Counter
from pathlib import Path

import orjson

from searchnasa.records import Record, hash_json
from searchnasa.ingest.sample import sample_path

ROOT = Path(__file__).resolve().parents[1]


def by_id(data: bytes) -> dict[str, str]:
    """id -> content hash of each JSON line."""
    out: dict[str, str] = {}
    for line in gzip.decompress(data).splitlines():
        rec = Record.from_json(line)
        assert rec.id not in out, f"duplicate id {rec.id}"
        out[rec.id] = hash_json(rec.to_json())
    return out


def test_rebuilt_sample_equals_bundled(raw_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "sample.jsonl.gz"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_sample.py"), "--raw", str(raw_dir),
                             "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "0 skipped" in result.stdout
    rebuilt, bundled = by_id(out.read_bytes()), by_id(sample_path().read_bytes())
    assert rebuilt.keys() == bundled.keys()
    stale = sorted(rid for rid in bundled if bundled[rid] != rebuilt[rid])
    assert not stale, f"bundled sample is stale for {len(stale)} records ({stale[:5]}): run make sample"
    # Same order and bytes: the build is deterministic (gzip mtime 0), so git sees no spurious change.
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(sample_path().read_bytes())


def test_sample_records_unique_valid_and_from_both_sources() -> None:
    lines = gzip.decompress(sample_path().read_bytes()).splitlines()
    records = [Record.from_json(line) for line in lines]
    ids = [r.id for r in records]
    assert len(ids) == len(set(ids))
    assert all(r.id == f"{r.source}:{r.source_id}" for r in records)
    sources = Counter(r.source for r in records)
    assert 5000 < sources["ntrs"] < 5300 and 1300 < sources["osti"] < 1500
    # Stored JSON is the canonical form, so hashes computed on load equal hashes of the lines.
    assert all(orjson.loads(line) == orjson.loads(rec.to_json()) for line, rec in zip(lines[:500], records))
    # A year is only ever taken from a date; records without one keep year null.
    assert all((r.year is None) == (r.date is None) for r in records)
    assert all(r.year == int(r.date.value[:4]) for r in records if r.date)
    kinds = Counter(r.kind for r in records)
    assert kinds["export"] == 100 and kinds["citation"] == len(records) - 100
