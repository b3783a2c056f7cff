"""The ``searchnasa dedup`` and ``searchnasa cite`` commands, run as real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import rispy

from searchnasa.importer import import_paths
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
