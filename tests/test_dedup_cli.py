"""The ``searchnasa dedup`` and ``searchnasa cite`` commands, run as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import rispy

from searchnasa.ingest.importer import import_paths
from searchnasa.store import open_store

FIXTURE = Path(__file__).parent / "fixtures" / "crosslisted"
CLI = [sys.executable, "-c", "from searchnasa.cli import main; main()"]


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, SEARCHNASA_HOME=str(home), COLUMNS="200")
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=120)


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    store = open_store(home)
    import_paths(store, [FIXTURE / "osti_api.json"], "osti-api")
    import_paths(store, [FIXTURE / "ntrs_api_copies.json"], "ntrs-api")
    store.close()
    return home


def test_dedup_command_with_split_config(tmp_path: Path) -> None:
    home = _home(tmp_path)
    out = _run(home, "dedup", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["clusters"] == 3 and report["scanned"] == 6
    config = tmp_path / "split.toml"
    config.write_text('[[split]]\nids = ["osti:9893", "ntrs:99000000002"]\n')
    out = _run(home, "dedup", "--config", str(config))
    assert out.returncode == 0, out.stderr
    assert "2 clusters hold 4 records" in out.stdout and "2 links blocked" in out.stdout  # report and title links


def test_dedup_bad_config_is_one_line_error(tmp_path: Path) -> None:
    home = _home(tmp_path)
    bad = tmp_path / "bad.toml"
    bad.write_text("[[split]]\nids = 3\n")
    out = _run(home, "dedup", "--config", str(bad))
    assert out.returncode != 0
    assert "error:" in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1


def test_cite_command(tmp_path: Path) -> None:
    home = _home(tmp_path)
    out = _run(home, "cite", "osti:9893", "ntrs:99000000002", "--format", "ris")
    assert out.returncode == 0, out.stderr
    entries = rispy.loads(out.stdout)
    assert [e["id"] for e in entries] == ["osti:9893", "ntrs:99000000002"]
    missing = _run(home, "cite", "osti:0")
    assert missing.returncode != 0 and "no record 'osti:0'" in missing.stderr and "Traceback" not in missing.stderr
    bad = _run(home, "cite", "osti:9893", "--format", "word")
    assert bad.returncode != 0 and "unknown citation format" in bad.stderr


def test_cite_a_query_result_set(indexed_home: Path) -> None:
    out = _run(indexed_home, "cite", "--query", "wind", "--limit", "120", "--format", "csl-json")  # 235 matches
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)
    assert len(items) == 120 and len({i["id"] for i in items}) == 120  # two search pages, no repeats
    both = _run(indexed_home, "cite", "osti:9893", "--query", "x")
    assert both.returncode != 0 and "not both" in both.stderr
    too_many = _run(indexed_home, "cite", "--query", "x", "--limit", "5000")
    assert too_many.returncode != 0 and "between 1 and 1000" in too_many.stderr


def test_cli_search_shows_each_work_once(tmp_path: Path) -> None:
    """The shell search folds copies the way the page does: one card, and an "also in" line."""
    home = _home(tmp_path)
    assert _run(home, "dedup").returncode == 0
    assert _run(home, "index").returncode == 0
    out = _run(home, "search", "Askaryan rock salt")
    assert out.returncode == 0, out.stderr
    cards = [line for line in out.stdout.splitlines() if "Askaryan effect" in line]
    assert len(cards) == 1, out.stdout
    assert "2 records" in out.stdout  # the count still counts records
    first = "ntrs:99000000001" if "· ntrs:99000000001" in out.stdout else "osti:1442457"
    other = "osti:1442457" if first == "ntrs:99000000001" else "ntrs:99000000001"
    assert f"also in DOE OSTI: {other}" in out.stdout or f"also in NASA NTRS: {other}" in out.stdout
    raw = _run(home, "search", "Askaryan rock salt", "--json")
    hits = json.loads(raw.stdout)["results"]
    assert [h["id"] for h in hits] == [first] and hits[0]["also_in"][0]["id"] == other
