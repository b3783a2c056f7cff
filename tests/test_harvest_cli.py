"""``searchnasa harvest`` as a user runs it: a real subprocess, SIGKILL mid-harvest, resume,
clear errors, and the index brought up to date afterwards."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path

import pytest
from replay.collections import ntrs_items, osti_items, synthetic_osti
from replay.server import ReplayServer

from searchnasa.ingest.harvest import HarvestOptions, run_harvest
from searchnasa.settings import Settings
from searchnasa.store import identifiers, open_store

CLI = str(Path(sys.executable).parent / "searchnasa")


def env_for(home: Path, server: ReplayServer, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "SEARCHNASA_HOME": str(home), "SEARCHNASA_NTRS_API": server.ntrs_api,
        "SEARCHNASA_OSTI_API": server.osti_api, "SEARCHNASA_HARVEST_BACKOFF": "0.001",
        "SEARCHNASA_HARVEST_TIMEOUT": "5", "COLUMNS": "200", **extra,
    })
    return env


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=120)


def _stored_records(home: Path) -> int:
    """Records committed so far, read without disturbing the writer (0 before the store exists)."""
    path = home / "store.sqlite3"
    if not path.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as conn:
            return conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
    except sqlite3.Error:  # schema not created yet
        return 0


def kill_after(args: list[str], env: dict[str, str], server: ReplayServer, requests: int) -> None:
    """Start a harvest and SIGKILL it once the server has answered ``requests`` more requests and
    at least one page more than before has been committed (so the kill lands mid-harvest, after
    the window planning, whatever the machine's speed)."""
    start = len(server.log)
    home = Path(env["SEARCHNASA_HOME"])
    stored_before = _stored_records(home)
    proc = subprocess.Popen([CLI, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while ((len(server.log) - start < requests or _stored_records(home) <= stored_before)
               and proc.poll() is None and time.monotonic() < deadline):
            time.sleep(0.01)
        assert proc.poll() is None, "the harvest finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("source", ["ntrs", "osti"])
def test_sigkill_mid_harvest_then_rerun_stores_every_record_once(raw_dir, tmp_home, source):
    items = ntrs_items(raw_dir)[:2500] if source == "ntrs" else osti_items(raw_dir)
    key = "id" if source == "ntrs" else "osti_id"
    server_args = {"ntrs_items": items} if source == "ntrs" else {"osti_items": items}
    with ReplayServer(**server_args, window=1000, latency=0.01) as server:
        env = env_for(tmp_home, server, SEARCHNASA_HARVEST_WINDOW_LIMIT="1000")
        args = ["harvest", source, "--rate", "0", "--page-size", "40"]
        for requests in (6, 11):
            kill_after(args, env, server, requests)
            store = open_store(tmp_home)
            state = store.get_checkpoint(f"harvest:{source}")
            assert state is not None and state["phase"] != "done"
            # records and checkpoint commit together: the checkpoint accounts for every stored record
            assert state["done"] == store.count() > 0
            store.close()
        done = run_cli([*args, "--json"], env)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["finished"] and summary["mode"] == "full"
        store = open_store(tmp_home)
        ids = [r[0] for r in store.conn.execute("SELECT id FROM records")]
        assert len(ids) == len(set(ids)) == len(items)
        assert set(ids) == {f"{source}:{i[key]}" for i in items}
        assert store.get_checkpoint(f"harvest:{source}")["phase"] == "done"


def test_cli_summary_and_progress(raw_dir, tmp_home):
    with ReplayServer(osti_items=osti_items(raw_dir)[:120]) as server:
        result = run_cli(["harvest", "osti", "--rate", "0", "--page-size", "50"], env_for(tmp_home, server))
        assert result.returncode == 0, result.stderr
        assert "osti full harvest: 120 new, 0 changed, 0 unchanged, 0 skipped" in result.stdout
        assert "harvesting osti" in result.stderr  # the progress bar
        again = run_cli(["harvest", "osti", "--rate", "0"], env_for(tmp_home, server))
        assert "osti incremental harvest" in again.stdout


def test_cli_retry_budget_spent_is_one_clear_error_then_resumes(raw_dir, tmp_home):
    items = osti_items(raw_dir)[:200]
    with ReplayServer(osti_items=items) as server:
        env = env_for(tmp_home, server, SEARCHNASA_HARVEST_MAX_ATTEMPTS="3")
        server.schedule({3: "500", 4: "500", 5: "500"})
        failed = run_cli(["harvest", "osti", "--rate", "0", "--page-size", "50"], env)
        assert failed.returncode != 0
        assert "Traceback" not in failed.stderr
        assert "giving up after 3 attempts" in failed.stderr and "resume" in failed.stderr
        assert "stored before the stop: osti full harvest: 100 new" in " ".join(failed.stderr.split())
        resumed = run_cli(["harvest", "osti", "--rate", "0", "--page-size", "50", "--json"], env)
        assert resumed.returncode == 0, resumed.stderr
        assert json.loads(resumed.stdout)["new"] == 100


@pytest.mark.parametrize("args, message", [
    (["--since", "2020-13-01"], "--since expects a date"),
    (["--since", "2021-01-01", "--until", "2020-01-01"], "is after --until"),
    (["--max-records", "0"], "--max-records must be at least 1"),
    (["--rate", "-1"], "--rate must be"),
])
def test_cli_bad_input_is_one_line(tmp_home, args, message):
    result = subprocess.run([CLI, "harvest", "osti", *args], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "SEARCHNASA_HOME": str(tmp_home), "COLUMNS": "200"})
    assert result.returncode != 0
    assert message in result.stderr and "Traceback" not in result.stderr


def test_unreachable_api_is_a_clear_error(tmp_home):
    env = {**os.environ, "SEARCHNASA_HOME": str(tmp_home), "SEARCHNASA_OSTI_API": "http://127.0.0.1:9/api",
           "SEARCHNASA_HARVEST_MAX_ATTEMPTS": "2", "SEARCHNASA_HARVEST_BACKOFF": "0.001", "COLUMNS": "200"}
    result = subprocess.run([CLI, "harvest", "osti", "--rate", "0"], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode != 0
    assert "connection error" in result.stderr and "Traceback" not in result.stderr


def test_existing_index_is_updated_after_a_harvest(raw_dir, tmp_home):
    from searchnasa.index import build_index
    from searchnasa.index.layout import current_generation, read_state

    items = osti_items(raw_dir)[:100]
    with ReplayServer(osti_items=items) as server:
        settings = Settings(home=tmp_home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)
        store = open_store(tmp_home)
        first = run_harvest("osti", store, settings, HarvestOptions(rate=0))
        assert first.index.startswith("no index")
        build_index(store, settings.index_dir)
        today = datetime.now(timezone.utc).strftime("%Y-%m-%dT00:00:00Z")
        new = synthetic_osti(3, today)
        new[0]["doi"] = "10.99999/synthetic.harvest.0001"  # SYNTHETIC DOI
        server.osti_items.extend(new)
        second = run_harvest("osti", store, settings, HarvestOptions(rate=0))
        assert second.counts.new == 3
        assert second.index == "index updated (3 records indexed)"
        state = read_state(current_generation(settings.index_dir))
        assert state.last_seq == store.max_seq() and state.documents == 103
        # the identifier table follows too: the new record's DOI typed in the box finds it
        found = identifiers.lookup(store, "10.99999/synthetic.harvest.0001")
        assert found is not None and found.record_ids == [f"osti:{new[0]['osti_id']}"]
