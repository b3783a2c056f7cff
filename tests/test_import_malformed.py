"""Malformed input: a clear message with path and line, the rest imports, a non-zero exit, and no
partial corruption of the store.

Each bad file is a real raw file damaged by the test in one known place (truncated, a broken quote,
a latin-1 byte, a cut line), so the expected message and the expected survivors are known exactly.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from searchnasa.errors import FormatError
from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_path
from searchnasa.ingest.formats import read_file
from searchnasa.store import Store, open_store

CLI = str(Path(sys.executable).with_name("searchnasa"))


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "300"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def osti_csv_ids(path: Path) -> list[str]:
    with path.open(encoding="utf-8", newline="") as fh:
        return [f"osti:{r['OstiID'].strip()}" for r in csv.DictReader(fh) if r.get("OstiID")]


def integrity_ok(home: Path) -> bool:
    conn = sqlite3.connect(home / "store.sqlite3")
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def sample_lines(n: int) -> list[bytes]:
    """Real records from the middle of the bundled sample (NTRS CSV ones, in no other test file)."""
    return gzip.decompress(sample_path().read_bytes()).splitlines()[3000 : 3000 + n]


@pytest.fixture
def osti_csv(raw_dir: Path) -> Path:
    return raw_dir / "osti-ostidatatutorial" / "osti_recs.csv"


def test_truncated_json_reported_with_line_and_skipped(raw_dir: Path, tmp_path: Path, tmp_store: Store) -> None:
    data = (raw_dir / "ntrs-nasa-ui" / "search-response.json").read_bytes()
    bad = tmp_path / "search-response.json"
    bad.write_bytes(data[: len(data) // 2])
    cut_line = data[: len(data) // 2].count(b"\n") + 1
    report = import_paths(tmp_store, [bad, raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json"])
    assert report.problems == [f"{bad}:{cut_line}: invalid JSON (unexpected end of data)"]
    assert tmp_store.count() == 2  # the other file imported; nothing from the cut one


def test_bad_csv_row_costs_only_that_row(osti_csv: Path, tmp_path: Path, tmp_store: Store) -> None:
    lines = osti_csv.read_bytes().split(b"\n")
    ids = osti_csv_ids(osti_csv)
    # Line 3 is the second data row; give it an unbalanced quote that would swallow later rows.
    assert lines[2].startswith(b"Emissions Benefits of Distributed Generation")
    lines[2] = lines[2].replace(b"Emissions Benefits", b'"Emissions Benefits', 1)
    bad = tmp_path / "osti_recs.csv"
    bad.write_bytes(b"\n".join(lines))
    report = import_paths(tmp_store, [bad])
    assert len(report.problems) == 1
    assert report.problems[0].startswith(f"{bad}:3: bad CSV row")
    stored = {r[0] for r in tmp_store.conn.execute("SELECT id FROM records")}
    assert stored == set(ids) - {ids[1]}  # every other row imported, none lost to the stray quote


def test_csv_row_with_too_many_fields(osti_csv: Path, tmp_path: Path, tmp_store: Store) -> None:
    lines = osti_csv.read_bytes().split(b"\n")
    lines[4] = lines[4].rstrip(b"\r") + b",extra,cells\r\r"
    bad = tmp_path / "wide.csv"
    bad.write_bytes(b"\n".join(lines))
    report = import_paths(tmp_store, [bad])
    assert report.problems == [f"{bad}:5: bad CSV row: 12 fields, header has 10"]
    assert tmp_store.count() == 59


def test_latin1_bytes_in_utf8_csv(osti_csv: Path, tmp_path: Path, tmp_store: Store) -> None:
    data = osti_csv.read_bytes()
    assert data.count("Universite de Lille".encode()) == 1
    bad = tmp_path / "latin1.csv"
    bad.write_bytes(data.replace("Universite de Lille".encode(), "Université de Lille".encode("latin-1")))
    report = import_paths(tmp_store, [bad])
    assert report.problems == [f"{bad}:2: not UTF-8 text (byte 0xe9); re-save the file as UTF-8"]
    assert tmp_store.count() == 59
    assert not tmp_store.exists(osti_csv_ids(osti_csv)[0])


def test_latin1_bytes_in_jsonl_line(tmp_path: Path, tmp_store: Store) -> None:
    lines = sample_lines(20)
    lines[6] = lines[6].replace(b'"title":"', b'"title":"\xe9', 1)
    bad = tmp_path / "records.jsonl"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    report = import_paths(tmp_store, [bad])
    assert report.problems == [f"{bad}:7: not UTF-8 text (byte 0xe9); re-save the file as UTF-8"]
    assert tmp_store.count() == 19


def test_latin1_in_json_document_skips_file_with_line(raw_dir: Path, tmp_path: Path, tmp_store: Store) -> None:
    data = (raw_dir / "osti-hepcrawl" / "sample_osti_record1.json").read_bytes()
    bad = tmp_path / "record.json"
    bad.write_bytes(data.replace("Univ. of Wisconsin".encode(), "Univ. of Wisconsin \xe9".encode("latin-1")))
    line = data.split("Univ. of Wisconsin".encode())[0].count(b"\n") + 1
    report = import_paths(tmp_store, [bad])
    assert report.problems == [f"{bad}:{line}: not UTF-8 text (byte 0xe9); re-save the file as UTF-8"]
    assert tmp_store.count() == 0


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf"])
def test_empty_files(tmp_path: Path, tmp_store: Store, content: bytes) -> None:
    paths = []
    for name in ("empty.json", "empty.csv", "empty.jsonl"):
        paths.append(tmp_path / name)
        paths[-1].write_bytes(content)
    report = import_paths(tmp_store, paths)
    assert report.problems == [f"{p}: empty file" for p in paths]
    assert tmp_store.count() == 0


@pytest.mark.parametrize("bad_line", [1, 11])
def test_jsonl_with_one_cut_line(tmp_path: Path, tmp_store: Store, bad_line: int) -> None:
    lines = sample_lines(50)
    lines[bad_line - 1] = lines[bad_line - 1][:40]
    bad = tmp_path / "records.jsonl"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    report = import_paths(tmp_store, [bad])
    assert report.problems == [f"{bad}:{bad_line}: invalid JSON (unexpected end of data)"]
    assert tmp_store.count() == 49


def test_jsonl_line_that_is_not_a_record(tmp_path: Path, tmp_store: Store) -> None:
    lines = sample_lines(10)
    broken = orjson.loads(lines[3])
    del broken["title"]
    lines[3] = orjson.dumps(broken)
    bad = tmp_path / "records.jsonl"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    report = import_paths(tmp_store, [bad])
    assert report.problems == [f"{bad}:4: cannot map record: title: Field required"]
    assert tmp_store.count() == 9


def test_corrupt_gzip_and_missing_file(tmp_path: Path, tmp_store: Store) -> None:
    bad = tmp_path / "sample.jsonl.gz"
    bad.write_bytes(sample_path().read_bytes()[:5000])
    missing = tmp_path / "nope.json"
    report = import_paths(tmp_store, [bad, missing])
    assert report.problems[0].startswith(f"{bad}: corrupt gzip file")
    assert report.problems[1] == f"{missing}: no such file"
    assert tmp_store.count() == 0


def test_read_file_yields_errors_and_goes_on(osti_csv: Path, tmp_path: Path) -> None:
    lines = osti_csv.read_bytes().split(b"\n")
    lines[6] = b'broken,"row\r\r'
    bad = tmp_path / "x.csv"
    bad.write_bytes(b"\n".join(lines))
    items = list(read_file(bad))
    errors = [i for i in items if isinstance(i, FormatError)]
    assert [(e.path, e.line) for e in errors] == [(str(bad), 7)]
    assert sum(1 for i in items if not isinstance(i, FormatError)) == 59


def test_cli_reports_every_problem_and_exits_non_zero(raw_dir: Path, osti_csv: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    good = raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json"
    truncated = tmp_path / "cut.json"
    truncated.write_bytes((raw_dir / "osti-cmm-data" / "document_catalog.json").read_bytes()[:100_000])
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    lines = sample_lines(30)
    lines[9] = b"{not json"
    jsonl = tmp_path / "records.jsonl"
    jsonl.write_bytes(b"\n".join(lines))
    latin = tmp_path / "latin1.csv"
    latin.write_bytes(osti_csv.read_bytes().replace(b"Universite", "Universit\xe9".encode("latin-1")))
    result = run_cli("import", str(good), str(truncated), str(empty), str(jsonl), str(latin), home=home)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    err = result.stderr
    assert f"{truncated}:" in err and "invalid JSON" in err
    assert f"{empty}: empty file" in err
    assert f"{jsonl}:10: invalid JSON" in err
    assert f"{latin}:2: not UTF-8 text (byte 0xe9)" in err
    assert "4 skipped" in result.stdout
    assert f"{2 + 29 + 59} new" in result.stdout
    assert integrity_ok(home)
    store = open_store(home)
    assert store.count() == 2 + 29 + 59
    assert store.stats()["by_format"] == {"ntrs-api": 2, "records-jsonl": 29, "osti-csv": 59}
    # Every stored row is whole: its JSON parses as a Record and its hash matches.
    from searchnasa.records import Record, hash_json

    for blob, digest in store.conn.execute("SELECT record, content_hash FROM records"):
        assert hash_json(Record.from_json(blob).to_json()) == digest
    store.close()
    # Fixing the files and re-running completes the import without duplicates.
    fixed = run_cli("import", str(good), str(osti_csv), home=home)
    assert fixed.returncode == 0 and "1 new, 0 changed, 61 unchanged" in fixed.stdout


def test_whole_file_error_message_is_one_clear_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"stats": {}, "results": [{"id": 1,', encoding="utf-8")
    result = run_cli("import", str(bad), home=tmp_path / "home")
    assert result.returncode == 1
    assert f"skipped {bad}:1: invalid JSON" in result.stderr
    assert json.loads(run_cli("stats", "--json", home=tmp_path / "home").stdout)["total"] == 0
