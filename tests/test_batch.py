"""The batch runner's parts: store partitions, the out-of-order checkpoint, and
``searchnasa renormalize`` on a real Dask LocalCluster (the real executable, 2 worker processes)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from searchnasa.batch.partitions import ContiguousCheckpoint, SeqRange, seq_partitions
from searchnasa.store import open_store

CLI = str(Path(sys.executable).with_name("searchnasa"))


def _seq_table(seqs: list[int]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE records (seq INTEGER NOT NULL)")
    conn.execute("CREATE INDEX records_seq ON records(seq)")
    conn.executemany("INSERT INTO records (seq) VALUES (?)", [(s,) for s in seqs])
    return conn


@settings(max_examples=60, deadline=None)
@given(seqs=st.sets(st.integers(1, 500), max_size=120), since=st.integers(0, 520), size=st.integers(1, 40))
def test_partitions_cover_every_changed_record_once(seqs: set[int], since: int, size: int) -> None:
    conn = _seq_table(sorted(seqs))
    parts = list(seq_partitions(conn, since, size))
    covered = [s for p in parts for s in sorted(seqs) if p.lo < s <= p.hi]
    assert covered == sorted(s for s in seqs if s > since)  # each once, in order, nothing else
    assert [p.index for p in parts] == list(range(len(parts)))
    for p in parts[:-1]:
        assert p.count == size
    if parts:
        assert parts[0].lo == since and 1 <= parts[-1].count <= size
        assert parts[-1].count == sum(1 for s in seqs if parts[-1].lo < s <= parts[-1].hi)


@settings(max_examples=60, deadline=None)
@given(order=st.permutations(list(range(8))))
def test_checkpoint_moves_only_past_a_gapless_prefix(order: list[int]) -> None:
    parts = [SeqRange(i, 10 * i, 10 * (i + 1), 10) for i in range(8)]
    checkpoint = ContiguousCheckpoint(0)
    finished: set[int] = set()
    for i in order:
        checkpoint.done(parts[i])
        finished.add(i)
        prefix = 0
        while prefix in finished:
            prefix += 1
        assert checkpoint.value == 10 * prefix  # never past an unfinished partition
    assert checkpoint.value == 80


def run_cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([CLI, *args], capture_output=True, text=True, env=env, timeout=240)


def test_renormalize_on_local_cluster_restores_records(raw_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    files = [str(raw_dir / "osti-hepcrawl" / "sample_osti_record1.json"),
             str(raw_dir / "ntrs-spaceapps-tacoma" / "query-result.json")]
    assert run_cli("import", *files, home=home).returncode == 0
    store = open_store(home)
    total = store.count()
    good = store.get("osti:1442851")
    old = good.model_copy(deep=True)  # as an older, buggy mapping stored it
    old.title = "FLUX-INDEPENDENT MEASUREMENTS"
    with store.transaction() as conn:
        conn.execute("UPDATE records SET record = ?, content_hash = ? WHERE id = ?",
                     (old.to_json(), old.content_hash(), "osti:1442851"))
    seq_before = store.max_seq()
    store.close()
    result = run_cli("renormalize", "--scheduler", "processes", "--workers", "2", home=home)
    assert result.returncode == 0, result.stderr
    assert f"1 changed, {total - 1} unchanged, 0 could not be re-mapped" in result.stdout
    store = open_store(home)
    assert store.get("osti:1442851") == good
    assert store.max_seq() == seq_before + 1
    store.close()
    # The same job again changes nothing (idempotent), the in-process path agrees.
    again = run_cli("renormalize", home=home)
    assert f"0 changed, {total} unchanged" in again.stdout


def test_renormalize_rejects_a_bad_scheduler(tmp_path: Path) -> None:
    result = run_cli("renormalize", "--scheduler", "somewhere", home=tmp_path / "home")
    assert result.returncode != 0
    assert "--scheduler must be 'local', 'processes' or a scheduler address" in result.stderr
    assert "Traceback" not in result.stderr
