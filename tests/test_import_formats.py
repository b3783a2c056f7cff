"""Every importer and format, on the real raw files: detection, counts, ids, ``--format``.

Expected counts and ids are computed here from the raw files with the standard library, not taken
from the importer, so a reader that drops or duplicates records fails.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from searchnasa.errors import FormatError
from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.formats import FORMATS, detect_format, read_file
from searchnasa.store import Store

CLI = str(Path(sys.executable).with_name("searchnasa"))

RAW_FILES = {
    "ntrs-nasa-ui/search-response.json": "ntrs-api",
    "ntrs-spaceapps-tacoma/query-result.json": "ntrs-api",
    "ntrs-word-space-explorer/ntrs_cdms_results.csv": "ntrs-csv",
    "ntrs-sti-sample100/STI_public_metadata_records_sample100.jsonl": "sti-jsonl",
    "osti-hepcrawl/sample_osti_record1.json": "osti-api",
    "osti-hepcrawl/sample_osti_record5.json": "osti-api",
    "osti-cmm-data/document_catalog.json": "osti-api",
    "osti-dspace-pppl/osti_scrape.json": "osti-dataexplorer",
    "osti-ostidatatutorial/osti_recs.csv": "osti-csv",
}


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def stored_ids(store: Store) -> set[str]:
    return {row[0] for row in store.conn.execute("SELECT id FROM records")}


@pytest.mark.parametrize(("rel", "fmt"), sorted(RAW_FILES.items()))
def test_format_detection(raw_dir: Path, rel: str, fmt: str) -> None:
    path = raw_dir / rel
    assert detect_format(path, path.read_bytes()[:65536]) == fmt


def test_detection_of_our_own_jsonl_and_gzip(tmp_path: Path) -> None:
    from searchnasa.ingest.sample import sample_path

    items = list(read_file(sample_path()))
    assert items and all(not isinstance(i, FormatError) and i.format == "records-jsonl" for i in items)


def test_undetectable_file_asks_for_format(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some words\nand more\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"notes\.txt: cannot tell the format: pass --format"):
        list(read_file(path))


def test_ntrs_api_full_envelope(raw_dir: Path, tmp_store: Store) -> None:
    path = raw_dir / "ntrs-nasa-ui" / "search-response.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert set(doc) == {"stats", "results", "aggregations"}
    expected = {f"ntrs:{item['id']}" for item in doc["results"]}
    report = import_paths(tmp_store, [path])
    assert report.skipped == 0 and report.read == 25
    assert (report.counts.new, report.counts.changed) == (25, 0)
    assert stored_ids(tmp_store) == expected
    assert tmp_store.stats()["by_format"] == {"ntrs-api": 25}


def test_ntrs_bare_nested_results_list(raw_dir: Path, tmp_store: Store) -> None:
    path = raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(doc, list) and isinstance(doc[0], list)  # an outer list wrapping results[]
    report = import_paths(tmp_store, [path])
    assert report.skipped == 0
    assert stored_ids(tmp_store) == {"ntrs:19840031406", "ntrs:19870036046"}
    assert tmp_store.get("ntrs:19840031406").title == "Io"


def test_ntrs_citations_as_json_lines(raw_dir: Path, tmp_path: Path, tmp_store: Store) -> None:
    # The same 25 real citations written one per line (how a harvester may dump them).
    doc = json.loads((raw_dir / "ntrs-nasa-ui" / "search-response.json").read_text(encoding="utf-8"))
    path = tmp_path / "citations.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(item) for item in doc["results"]) + b"\n")
    assert detect_format(path, path.read_bytes()) == "ntrs-api"
    report = import_paths(tmp_store, [path])
    assert report.skipped == 0 and report.counts.new == 25
    again = import_paths(tmp_store, [raw_dir / "ntrs-nasa-ui" / "search-response.json"])
    assert again.counts.unchanged == 25 and again.counts.new == again.counts.changed == 0


def test_ntrs_flattened_csv(raw_dir: Path, tmp_store: Store) -> None:
    path = raw_dir / "ntrs-word-space-explorer" / "ntrs_cdms_results.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    expected = {f"ntrs:{r['document_id']}" for r in rows}
    assert len(expected) == 5000
    report = import_paths(tmp_store, [path])
    assert report.skipped == 0 and report.read == 5000
    assert stored_ids(tmp_store) == expected
    with_abstract = sum(1 for r in rows if r["abstract"].strip())
    assert tmp_store.count() - tmp_store.stats()["without_abstract"] == with_abstract
    # CSV line numbers are kept with each item (header is line 1, no multi-line rows here).
    items = list(read_file(path))
    assert items[0].line == 2 and items[-1].line == 5001


def test_sti_export_derived_ids_stable_across_imports(raw_dir: Path, tmp_store: Store) -> None:
    path = raw_dir / "ntrs-sti-sample100" / "STI_public_metadata_records_sample100.jsonl"
    first = import_paths(tmp_store, [path])
    assert first.skipped == 0 and first.counts.new == 100
    ids = stored_ids(tmp_store)
    assert all(i.startswith("ntrs:sti-") for i in ids)
    assert {r.kind for r in tmp_store.get_many(sorted(ids)).values()} == {"export"}
    second = import_paths(tmp_store, [path])
    assert (second.counts.new, second.counts.changed, second.counts.unchanged) == (0, 0, 100)
    assert stored_ids(tmp_store) == ids


def test_osti_api_arrays(raw_dir: Path, tmp_store: Store) -> None:
    paths = sorted((raw_dir / "osti-hepcrawl").glob("*.json"))
    expected = {f"osti:{json.loads(p.read_text(encoding='utf-8'))[0]['osti_id']}" for p in paths}
    assert expected == {"osti:1442851", "osti:9893", "osti:1442479", "osti:1442457", "osti:1502988"}
    report = import_paths(tmp_store, paths)
    assert report.skipped == 0
    assert stored_ids(tmp_store) == expected


def test_osti_dataexplorer_duplicates_stored_once(raw_dir: Path, tmp_store: Store) -> None:
    path = raw_dir / "osti-dspace-pppl" / "osti_scrape.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    assert len(items) == 209
    unique = {f"osti:{i['osti_id']}" for i in items}
    assert len(unique) == 189
    report = import_paths(tmp_store, [path], batch_size=50)  # repeats fall in different batches too
    assert report.skipped == 0 and report.read == 209
    assert report.counts.new == 189 and report.counts.changed == 0
    assert tmp_store.count() == 189 and stored_ids(tmp_store) == unique
    assert tmp_store.max_seq() == 189


def test_osti_cmm_catalog(raw_dir: Path, tmp_store: Store) -> None:
    path = raw_dir / "osti-cmm-data" / "document_catalog.json"
    items = json.loads(path.read_text(encoding="utf-8"))
    report = import_paths(tmp_store, [path])
    assert report.skipped == 0
    assert stored_ids(tmp_store) == {f"osti:{i['osti_id']}" for i in items}
    assert tmp_store.count() == 1133
    descriptions = [(i.get("description") or "").strip() for i in items]
    assert sum(1 for d in descriptions if d) == 1051  # as PROVENANCE.md counts them
    real = sum(1 for d in descriptions if d and d != "Not provided.")  # 7 are OSTI's placeholder
    assert tmp_store.count() - tmp_store.stats()["without_abstract"] == real == 1044


def test_osti_legacy_csv(raw_dir: Path, tmp_store: Store) -> None:
    path = raw_dir / "osti-ostidatatutorial" / "osti_recs.csv"
    with path.open(encoding="utf-8", newline="") as fh:
        expected = {f"osti:{r['OstiID'].strip()}" for r in csv.DictReader(fh) if r.get("OstiID")}
    assert len(expected) == 60
    report = import_paths(tmp_store, [path])
    assert report.skipped == 0 and stored_ids(tmp_store) == expected
    # This file ends its lines with \r\r\n; numbers still count \n lines (what an editor shows).
    lines = [i.line for i in read_file(path)]
    raw_lines = path.read_bytes().split(b"\n")
    for line_no, item in zip(lines[:5], list(read_file(path))[:5]):
        assert item.payload["Title"][:20].encode() in raw_lines[line_no - 1]


def test_records_jsonl_round_trip_every_format(raw_dir: Path, tmp_path: Path) -> None:
    """Records from every mapper, exported as JSON Lines and imported again, come back identical
    and a second import reports "0 new, 0 changed" (the CLI path is in test_cli_store.py)."""
    from searchnasa.store import open_store

    a, b = open_store(tmp_path / "a"), open_store(tmp_path / "b")
    first = import_paths(a, [raw_dir / rel for rel in RAW_FILES])
    assert first.skipped == 0
    out = tmp_path / "export.jsonl.gz"
    with gzip.open(out, "wb") as fh:
        for blob in a.iter_json():
            fh.write(blob + b"\n")
    back = import_paths(b, [out])
    assert back.skipped == 0 and back.counts.new == a.count() and back.counts.changed == 0
    again = import_paths(b, [out])
    assert (again.counts.new, again.counts.changed, again.counts.unchanged) == (0, 0, a.count())
    ids = sorted(stored_ids(a))
    assert ids == sorted(stored_ids(b))
    assert b.get_many(ids) == a.get_many(ids)
    assert b.stats()["by_format"] == {"records-jsonl": a.count()}
    a.close()
    b.close()


def test_format_override(raw_dir: Path, tmp_path: Path) -> None:
    src = raw_dir / "osti-dspace-pppl" / "osti_scrape.json"
    forced = run_cli("import", "--format", "osti-api", str(src), home=tmp_path / "h1")
    assert forced.returncode == 0, forced.stderr
    stats = json.loads(run_cli("stats", "--json", home=tmp_path / "h1").stdout)
    assert stats["by_format"] == {"osti-api": 189}
    # Forcing the wrong format is obeyed too: every item is reported by position, none is stored.
    envelope = raw_dir / "ntrs-nasa-ui" / "search-response.json"
    wrong = run_cli("import", "-f", "osti-api", str(envelope), home=tmp_path / "h2")
    assert wrong.returncode == 1
    assert "0 new, 0 changed, 0 unchanged, 25 skipped" in wrong.stdout
    assert f"{envelope} item 25: OSTI record without osti_id" in wrong.stderr.replace("\n", "")
    odd = tmp_path / "odd.dat"
    odd.write_text("nothing to see\n", encoding="utf-8")
    bad = run_cli("import", "--format", "marc21", str(odd), home=tmp_path / "h2")
    assert bad.returncode != 0
    assert "unknown format 'marc21'" in bad.stderr and "Traceback" not in bad.stderr
    assert all(name in bad.stderr for name in FORMATS)
