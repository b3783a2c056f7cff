"""``searchnasa index`` and ``searchnasa search`` run as a user would (a real subprocess)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).with_name("searchnasa")


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([str(BIN), *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.fixture(scope="module")
def cli_home(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("cli_home")
    shutil.copy2(sample_home / "store.sqlite3", home / "store.sqlite3")
    return home


def test_index_then_search(cli_home: Path) -> None:
    built = cli(cli_home, "index")
    assert built.returncode == 0, built.stderr
    assert "6,514 records indexed" in built.stdout
    again = cli(cli_home, "index")
    assert again.returncode == 0 and "0 records indexed" in again.stdout

    out = cli(cli_home, "search", '"wind tunnel"', "--json", "--per-page", "5", "--source", "ntrs")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["total"] > 5 and len(data["results"]) == 5
    assert all(r["source"] == "ntrs" for r in data["results"])
    assert set(data["facets"]) >= {"source", "decade", "year", "document_type", "subject"}

    text = cli(cli_home, "search", "wind tunnel", "--page", "2", "--sort", "newest",
               "--year-from", "1960", "--year-to", "1970")
    assert text.returncode == 0, text.stderr
    assert "Page 2" in text.stdout and "NASA NTRS" in text.stdout

    typo = cli(cli_home, "search", "aerodynamcs", "--mode", "lexical")
    assert typo.returncode == 0 and "Did you mean: aerodynamics?" in typo.stdout

    # `index` mined the sample's acronyms (the second run read nothing new and said nothing)
    assert "acronyms in the lexicon" in built.stdout and "acronyms" not in again.stdout
    acronym = cli(cli_home, "search", "TBC", "--mode", "lexical")
    assert acronym.returncode == 0
    assert "acronym: TBC also searched as thermal barrier" in acronym.stdout
    assert "search only it: =TBC" in acronym.stdout


def test_rebuild(cli_home: Path) -> None:
    out = cli(cli_home, "index", "--rebuild")
    assert out.returncode == 0 and "full build" in out.stdout


def test_bad_input_is_one_line_not_a_traceback(cli_home: Path) -> None:
    bad_sort = cli(cli_home, "search", "x", "--sort", "sideways")
    assert bad_sort.returncode != 0 and "Traceback" not in bad_sort.stderr
    assert "sort" in bad_sort.stderr
    degraded = cli(cli_home, "search", '"unclosed (', "--json")
    assert degraded.returncode == 0 and json.loads(degraded.stdout)["notices"]


def test_search_without_index(tmp_path: Path) -> None:
    out = cli(tmp_path, "search", "x")
    assert out.returncode != 0 and "searchnasa index" in out.stderr and "Traceback" not in out.stderr
