"""The store commands through the real ``searchnasa`` executable: stats, idempotent import,
renormalize, export, load-sample.

Expected counts for the bundled sample are computed here from the raw files with the standard
library (ids per source, records without a publication date), independently of the importers.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import zstandard

from searchnasa.records import Record
from searchnasa.store import open_store

CLI = str(Path(sys.executable).with_name("searchnasa"))


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=180)


def raw_files(raw_dir: Path) -> list[str]:
    return sorted(str(p) for p in raw_dir.glob("*/*") if p.suffix in (".json", ".jsonl", ".csv"))


def expected_from_raw(raw_dir: Path) -> tuple[dict[str, int], int]:
    """Distinct records per source and how many have no publication date, from the raw files."""
    dated: dict[str, bool] = {}  # id -> has a publication date
    ui = json.loads((raw_dir / "ntrs-nasa-ui" / "search-response.json").read_text(encoding="utf-8"))
    tacoma = json.loads((raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json").read_text(encoding="utf-8"))
    for item in ui["results"] + tacoma[0]:
        dates = [p.get("publicationDate") for p in item.get("publications") or []]
        dated[f"ntrs:{item['id']}"] = any(dates)
    with (raw_dir / "ntrs-word-space-explorer" / "ntrs_cdms_results.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            dated[f"ntrs:{row['document_id']}"] = bool(row["publicationDate"].strip())
    sti = (raw_dir / "ntrs-sti-sample100" / "STI_public_metadata_records_sample100.jsonl").read_text(encoding="utf-8")
    for line in sti.splitlines():
        if line.strip():
            rec = json.loads(line)  # no id, no date: one record per distinct title + abstract
            dated["ntrs:sti:" + rec.get("D245A (Title)", "") + "\x1f" + rec.get("D520B (Abstract)", "")] = False
    for path in [*sorted((raw_dir / "osti-hepcrawl").glob("*.json")), raw_dir / "osti-cmm-data" / "document_catalog.json",
                 raw_dir / "osti-dspace-pppl" / "osti_scrape.json"]:
        for item in json.loads(path.read_text(encoding="utf-8")):
            dated[f"osti:{item['osti_id']}"] = bool((item.get("publication_date") or "").strip())
    with (raw_dir / "osti-ostidatatutorial" / "osti_recs.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            if row.get("OstiID"):
                dated[f"osti:{row['OstiID'].strip()}"] = bool(row["Date"].strip())
    by_source = {"ntrs": 0, "osti": 0}
    for key in dated:
        by_source[key.split(":", 1)[0]] += 1
    return by_source, sum(1 for has in dated.values() if not has)


def test_stats_json_on_bundled_sample(sample_home: Path, raw_dir: Path) -> None:
    by_source, no_date = expected_from_raw(raw_dir)
    assert 5000 < by_source["ntrs"] < 5300 and 1300 < by_source["osti"] < 1500  # the "about"
    result = run_cli("stats", "--json", home=sample_home)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["by_source"] == by_source
    assert stats["total"] == sum(by_source.values())
    assert stats["year_null"] == no_date
    assert sum(stats["by_decade"].values()) == stats["total"]
    assert stats["by_decade"]["unknown"] == no_date


def test_stats_table_output(sample_home: Path) -> None:
    result = run_cli("stats", home=sample_home)
    assert result.returncode == 0, result.stderr
    for text in ("records", "ntrs", "osti", "1960s", "without a date (year null)", "without an abstract"):
        assert text in result.stdout


def test_import_twice_changes_nothing(raw_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = raw_files(raw_dir)
    first = run_cli("import", *files, home=home)
    assert first.returncode == 0, first.stderr
    total = open_store(home).count()
    assert f"{total} new, 0 changed" in first.stdout
    # The second time the directory is given: it stands for the same files (PROVENANCE.md left out).
    second = run_cli("import", str(raw_dir), home=home)
    assert second.returncode == 0, second.stderr
    assert f"0 new, 0 changed, {total} unchanged, 0 skipped" in second.stdout
    store = open_store(home)
    assert store.count() == total and store.max_seq() == total
    store.close()


def test_renormalize_restores_records_from_raw_payload(raw_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = [str(raw_dir / "osti-hepcrawl" / "sample_osti_record1.json"),
             str(raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json")]
    assert run_cli("import", *files, home=home).returncode == 0
    store = open_store(home)
    good = store.get("osti:1442851")
    # Simulate records stored by an older, buggy mapping: markup left in, a wrong DOI and title.
    old = good.model_copy(deep=True)
    old.abstract = "The scaling variable ν = xy = 2(E<sub>μ</sub>/M)"
    old.identifiers.doi = "https://doi.org/10.1103/PhysRevD.8.3207"
    old.title = "FLUX-INDEPENDENT MEASUREMENTS"
    with store.transaction() as conn:
        conn.execute("UPDATE records SET record = ?, content_hash = ? WHERE id = ?",
                     (old.to_json(), old.content_hash(), "osti:1442851"))
    assert store.get("osti:1442851").title == "FLUX-INDEPENDENT MEASUREMENTS"
    seq_before = store.max_seq()
    store.close()
    result = run_cli("renormalize", home=home)
    assert result.returncode == 0, result.stderr
    assert "1 changed, 2 unchanged, 0 could not be re-mapped" in result.stdout
    store = open_store(home)
    assert store.get("osti:1442851") == good
    assert store.max_seq() == seq_before + 1  # the index and embedder will pick up the fix
    assert [rec.id for _, rec in store.iter_records(since_seq=seq_before)] == ["osti:1442851"]
    store.close()


def test_renormalize_keeps_a_record_whose_raw_no_longer_maps(raw_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("import", str(raw_dir / "osti-hepcrawl" / "sample_osti_record2.json"), home=home).returncode == 0
    store = open_store(home)
    rid = store.conn.execute("SELECT id FROM records").fetchone()[0]
    kept = store.get(rid)
    bad_raw = zstandard.ZstdCompressor().compress(orjson.dumps({"title": "payload without an id"}))
    with store.transaction() as conn:
        conn.execute("UPDATE records SET raw = ? WHERE id = ?", (bad_raw, rid))
    store.close()
    result = run_cli("renormalize", home=home)
    assert result.returncode == 1
    assert f"kept as stored {rid}: OSTI record without osti_id" in result.stderr
    assert "Traceback" not in result.stderr
    assert open_store(home).get(rid) == kept


def test_export_jsonl_round_trip(sample_home: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.jsonl"
    result = run_cli("export", "--format", "jsonl", "-o", str(out), home=sample_home)
    assert result.returncode == 0, result.stderr
    lines = out.read_bytes().splitlines()
    source = open_store(sample_home, readonly=True)
    assert len(lines) == source.count()
    home = tmp_path / "copy"
    back = run_cli("import", str(out), home=home)
    assert back.returncode == 0 and f"{len(lines)} new, 0 changed, 0 unchanged, 0 skipped" in back.stdout
    again = run_cli("import", str(out), home=home)
    assert f"0 new, 0 changed, {len(lines)} unchanged" in again.stdout
    copy = open_store(home)
    sample_ids = [Record.from_json(line).id for line in lines[::97]]
    assert copy.get_many(sample_ids) == source.get_many(sample_ids)
    bad = run_cli("export", "--format", "csv", home=sample_home)
    assert bad.returncode == 2 and "only 'jsonl' is supported" in bad.stderr


def test_load_sample_into_empty_store_then_refuses_twice(tmp_path: Path, sample_home: Path) -> None:
    home = tmp_path / "home"
    first = run_cli("load-sample", home=home)
    assert first.returncode == 0, first.stderr
    expected = open_store(sample_home, readonly=True).count()
    assert f"bundled sample: {expected} new, 0 changed" in first.stdout
    second = run_cli("load-sample", home=home)
    assert second.returncode == 0 and "sample not loaded" in second.stdout
    assert open_store(home).count() == expected
    # Records from our own JSON Lines re-normalize from the stored record (their raw payload).
    renorm = run_cli("renormalize", home=home)
    assert renorm.returncode == 0, renorm.stderr
    assert f"0 changed, {expected} unchanged, 0 could not be re-mapped" in renorm.stdout


def test_commands_on_a_corrupt_store_give_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "store.sqlite3").write_bytes(b"not a database at all" * 200)
    result = run_cli("stats", "--json", home=home)
    assert result.returncode == 2
    assert "error:" in result.stderr and "store.sqlite3" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [("import",), ("import", "/no/such/file.json"), ("import", "EMPTY_DIR")])
def test_import_usage_errors(tmp_path: Path, args: tuple[str, ...]) -> None:
    empty_dir = tmp_path / "nothing_here"
    empty_dir.mkdir()
    (empty_dir / "PROVENANCE.md").write_text("not a record file\n", encoding="utf-8")
    args = tuple(str(empty_dir) if a == "EMPTY_DIR" else a for a in args)
    result = run_cli(*args, home=tmp_path / "home")
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    if "/no/such/file.json" in args:
        assert "/no/such/file.json: no such file" in result.stderr
    if str(empty_dir) in args:
        assert f"{empty_dir}: no importable files" in result.stderr


def test_home_option_overrides_environment(raw_dir: Path, tmp_path: Path) -> None:
    env_home, opt_home = tmp_path / "env", tmp_path / "opt"
    path = str(raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json")
    assert run_cli("import", path, "--home", str(opt_home), home=env_home).returncode == 0
    assert open_store(opt_home).count() == 2
    assert not (env_home / "store.sqlite3").exists() or open_store(env_home).count() == 0
    shutil.rmtree(opt_home)
