"""Small CLI refusals through the real ``searchnasa`` executable (issue 18, finding 7): one line on
stderr, no traceback, a non-zero exit, and nothing created on the way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CLI = str(Path(sys.executable).with_name("searchnasa"))


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "300"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=180)


def assert_one_line_refusal(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr and "Error:" not in done.stdout
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error:") and all(w in lines[0] for w in words), lines[0]


def test_export_into_a_missing_folder_is_one_line(sample_home: Path, tmp_path: Path) -> None:
    target = tmp_path / "nonexistent" / "dir" / "x.jsonl"
    done = run_cli("export", "-o", str(target), home=sample_home)
    assert_one_line_refusal(done, "cannot write", str(target.parent), "does not exist")
    assert not target.parent.exists()
    done = run_cli("export", "-o", str(tmp_path), home=sample_home)  # a folder, not a file
    assert_one_line_refusal(done, "cannot write")


def test_stats_on_a_missing_home_does_not_create_it(tmp_path: Path) -> None:
    home = tmp_path / "no" / "such" / "home"
    done = run_cli("stats", home=home)
    assert_one_line_refusal(done, "no data home", str(home))
    assert not (tmp_path / "no").exists()
    done = run_cli("export", home=home)
    assert_one_line_refusal(done, "no data home")
    assert not (tmp_path / "no").exists()


def test_related_refuses_a_record_both_seed_and_negative(indexed_home: Path, tmp_path: Path) -> None:
    from server_util import copy_home

    rid = "osti:3002493"  # a private copy: the command seeds vectors into the home it opens
    done = run_cli("related", rid, "--not", rid, home=copy_home(indexed_home, tmp_path / "home"))
    assert_one_line_refusal(done, "cannot be both a seed and a negative", rid)
