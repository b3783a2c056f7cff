"""``searchnasa update`` as cron runs it: real subprocesses against the replay servers (real NTRS and
OSTI records), a real store, index and vectors on disk; SIGKILL at every stage, two runs at once,
and a real ``serve`` answering while an update runs."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path

import httpx
import pytest
from replay.collections import ntrs_items, osti_items, synthetic_ntrs
from replay.server import ReplayServer

from server_util import running_server

CLI = str(Path(sys.executable).parent / "searchnasa")
STAGE_ORDER = ["harvest:ntrs", "harvest:osti", "index", "embed", "vectors", "dedup", "identifiers"]

PROFILE = """
name = "test-heat"
display_name = "Heat and storage (test)"
description = "A test collection of heat transfer and energy storage records"
[ntrs]
subject_categories = ["FLUID MECHANICS AND HEAT TRANSFER"]
query_terms = ["battery"]
[osti]
subject_categories = ["25 ENERGY STORAGE"]
"""


def env_for(home: Path, server: ReplayServer, cache: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "SEARCHNASA_HOME": str(home), "SEARCHNASA_NTRS_API": server.ntrs_api,
            "SEARCHNASA_OSTI_API": server.osti_api, "SEARCHNASA_HARVEST_BACKOFF": "0.001",
            "SEARCHNASA_HARVEST_TIMEOUT": "5", "SEARCHNASA_HARVEST_RATE": "0",
            "SEARCHNASA_EMBED_CACHE": str(cache), "COLUMNS": "200", **extra}


def run_cli(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=timeout)


def update_json(env: dict[str, str], *args: str) -> dict:
    done = run_cli(["update", "--json", *args], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    return json.loads(done.stdout)


def query(home: Path, sql: str) -> list[tuple]:
    with closing(sqlite3.connect(f"file:{home / 'store.sqlite3'}?mode=ro", uri=True)) as conn:
        return conn.execute(sql).fetchall()


def fingerprint(home: Path) -> dict[str, object]:
    """Everything a run leaves that a later search reads: records, finished walks, the index,
    vectors, duplicate clusters, the identifier table (times and seq numbers left out)."""
    from searchnasa.index.layout import current_generation, read_state

    state = read_state(current_generation(home / "index"))
    with closing(sqlite3.connect(f"file:{home / 'vectors' / 'vectors.sqlite3'}?mode=ro", uri=True)) as conn:
        vectors = sorted(conn.execute("SELECT id, key FROM vectors"))
    return {
        "records": sorted(query(home, "SELECT id, content_hash FROM records")),
        "walks": sorted((n, json.loads(s)["phase"]) for n, s in query(home, "SELECT name, state FROM checkpoints")),
        "indexed": (state.documents, state.last_seq == query(home, "SELECT MAX(seq) FROM records")[0][0]),
        "vectors": vectors,
        "clusters": sorted(query(home, "SELECT record_id, cluster_id FROM clusters")),
        "identifiers": sorted(query(home, "SELECT * FROM identifiers")),
    }


@pytest.fixture(scope="module")
def collections(raw_dir: Path) -> tuple[list[dict], list[dict]]:
    return ntrs_items(raw_dir)[:1500], osti_items(raw_dir)[:500]


def test_update_twice_then_nothing_changes_and_few_requests(collections, tmp_path):
    ntrs, osti = collections
    home = tmp_path / "home"
    with ReplayServer(ntrs, osti) as server:
        env = env_for(home, server, tmp_path / "cache.sqlite3")
        first = update_json(env)
        assert first["profile"] is None  # none chosen: everything, today's page text
        assert first["sources"]["ntrs"]["new"] == len(ntrs) and first["sources"]["osti"]["new"] == len(osti)
        assert [s["name"] for s in first["stages"]] == STAGE_ORDER
        assert all(s["records"] > 0 for s in first["stages"] if s["name"] not in ("identifiers",))
        before = fingerprint(home)
        requests_before = len(server.log)
        second = update_json(env)
        requests = len(server.log) - requests_before
    for source in ("ntrs", "osti"):
        tally = second["sources"][source]
        assert (tally["new"], tally["changed"], tally["modes"]) == (0, 0, {"incremental": 1})
    assert requests <= 8, f"an update with nothing new upstream made {requests} requests"
    assert fingerprint(home) == before
    skipped = {s["name"]: (s["records"], s["skipped"]) for s in second["stages"]}
    assert skipped["index"][0] == 0 and skipped["embed"][0] == 0 and skipped["dedup"][1]
    assert second["seconds"] < first["seconds"]


def _expected_profile_ids(ntrs: list[dict], osti: list[dict]) -> set[str]:
    """The test profile's records, found from the raw items by hand (not by the product's code)."""
    ids = {f"ntrs:{i['id']}" for i in ntrs
           if "FLUID MECHANICS AND HEAT TRANSFER" in (i.get("subjectCategories") or [])
           or "battery" in f"{i.get('title', '')} {i.get('abstract', '')} {' '.join(i.get('keywords') or [])}".lower()}
    ids |= {f"osti:{i['osti_id']}" for i in osti
            if any(re.match(r"^25\b", s) for s in i.get("subjects") or [])}
    return ids


def test_profile_selects_exactly_its_records_and_switching_keeps_data(collections, tmp_path):
    ntrs, osti = collections
    home, profile = tmp_path / "home", tmp_path / "heat.toml"
    profile.write_text(PROFILE)
    expected = _expected_profile_ids(ntrs, osti)
    assert 20 < len(expected) < len(ntrs) // 4
    with ReplayServer(ntrs, osti) as server:
        env = env_for(home, server, tmp_path / "cache.sqlite3")
        report = update_json(env, "--profile", str(profile))
        assert report["profile"] == "test-heat"
        # nothing was asked for unfiltered: every request carries the profile's server-side filter
        for entry in server.log:
            params = entry.params
            assert params.get("subjectCategory") or params.get("subject") or params.get("q") not in (None, "", "*"), params
        stored = {r[0] for r in query(home, "SELECT id FROM records")}
        assert stored == expected
        outside = next(i for i in ntrs if f"ntrs:{i['id']}" not in expected and len(i["title"].split()) > 4)
        found = run_cli(["search", f'"{outside["title"]}"', "--json"], env)
        assert found.returncode == 0 and f"ntrs:{outside['id']}" not in found.stdout
        # the active profile is kept in the home; switching to everything keeps these records
        assert (home / "profile.toml").read_text() == PROFILE
        update_json(env, "--profile", "all", "--sources", "osti", "--no-semantic")
        stats = json.loads(run_cli(["stats", "--json"], env).stdout)
    assert stats["status"]["profile"]["name"] == "all"
    assert stats["outside_profile"]["ntrs"] == 0  # the all profile holds every NTRS record too
    assert stats["by_source"]["ntrs"] == len([i for i in expected if i.startswith("ntrs:")])
    assert stats["by_source"]["osti"] == len(osti)
    stats_heat = run_cli(["stats"], {**env, "SEARCHNASA_HOME": str(home)})
    assert "profile: all" in stats_heat.stdout


def test_profile_outside_count_after_switching(collections, tmp_path):
    ntrs, osti = collections
    home, profile = tmp_path / "home", tmp_path / "heat.toml"
    profile.write_text(PROFILE)
    with ReplayServer(ntrs[:300], osti[:200]) as server:
        env = env_for(home, server, tmp_path / "cache.sqlite3")
        update_json(env, "--no-semantic")  # everything
        update_json(env, "--profile", str(profile), "--no-semantic")
        stats = json.loads(run_cli(["stats", "--json"], env).stdout)
    selected = _expected_profile_ids(ntrs[:300], osti[:200])
    assert stats["total"] == 500  # nothing deleted
    assert sum(stats["outside_profile"].values()) == 500 - len(selected)


def _stage_of(home: Path) -> str | None:
    try:
        return json.loads((home / "update.lock").read_text() or "{}").get("stage")
    except (OSError, ValueError):
        return None


def _kill_at(env: dict[str, str], home: Path, stage: str) -> str:
    """Start an update and SIGKILL it as soon as the lock says ``stage`` (or a later one) runs;
    returns the stage it was in."""
    proc = subprocess.Popen([CLI, "update"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    target = STAGE_ORDER.index(stage)
    seen = None
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            seen = _stage_of(home)
            if seen in STAGE_ORDER and STAGE_ORDER.index(seen) >= target:
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.002)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, f"the update finished before it reached {stage}"
    return seen or ""


def test_sigkill_at_every_stage_then_rerun_ends_identical(collections, tmp_path):
    ntrs, osti = collections
    with ReplayServer(ntrs, osti, latency=0.01) as server:
        reference = tmp_path / "reference"
        update_json(env_for(reference, server, tmp_path / "cache-ref.sqlite3"))
        home = tmp_path / "killed"
        env = env_for(home, server, tmp_path / "cache.sqlite3", SEARCHNASA_HARVEST_PAGE_SIZE="50")
        killed_in = [_kill_at(env, home, stage) for stage in STAGE_ORDER]
        final = run_cli(["update", "--json"], env)
    assert final.returncode == 0, final.stderr[-3000:]
    assert "took over the lock" in final.stderr
    assert json.loads(final.stdout)["took_over_lock"]["stage"] == killed_in[-1]
    assert len(set(killed_in)) >= 4, killed_in  # the kills landed in different stages
    assert fingerprint(home) == fingerprint(reference)


def test_two_updates_at_once_one_refuses(collections, tmp_path):
    ntrs, osti = collections
    home = tmp_path / "home"
    with ReplayServer(ntrs[:400], osti[:100], latency=0.3) as server:
        env = env_for(home, server, tmp_path / "cache.sqlite3", SEARCHNASA_HARVEST_PAGE_SIZE="20")
        first = subprocess.Popen([CLI, "update", "--no-semantic"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while _stage_of(home) != "harvest:ntrs" and time.monotonic() < deadline:
                time.sleep(0.01)
            status = run_cli(["stats", "--json"], env)
            second = run_cli(["update", "--no-semantic"], env)
            assert first.poll() is None, "the first update finished too early for this test"
        finally:
            out, err = first.communicate(timeout=300)
    assert second.returncode == 3, second.stderr
    assert "another update is running" in second.stderr and f"pid {first.pid}" in second.stderr
    assert "Traceback" not in second.stderr
    assert json.loads(status.stdout)["status"]["update_running"]["pid"] == first.pid
    assert first.returncode == 0, err[-2000:]


def test_dry_run_prints_the_plan_and_writes_nothing(collections, tmp_path):
    ntrs, osti = collections
    home = tmp_path / "home"
    with ReplayServer(ntrs, osti) as server:
        env = env_for(home, server, tmp_path / "cache.sqlite3")
        plan = run_cli(["update", "--dry-run", "--json", "--profile", "energy-propulsion"], env)
        text = run_cli(["update", "--dry-run", "--sources", "osti"], env)
    assert plan.returncode == 0, plan.stderr
    data = json.loads(plan.stdout)
    assert data["profile"] == "energy-propulsion" and data["becomes_active"]
    names = [s["name"] for s in data["stages"]]
    assert names[:3] == ["harvest:ntrs", "harvest:osti", "index"] and names[-1] == "identifiers"
    harvest = data["stages"][0]
    selected = sum(1 for i in ntrs if "PROPULSION SYSTEMS" in (i.get("subjectCategories") or []))
    walk = next(w for w in harvest["walks"] if w["selection"] == "subjectCategory=PROPULSION SYSTEMS")
    assert walk["records"] == selected and walk["mode"] == "full" and walk["requests"] >= 1
    assert data["requests"] >= sum(w["requests"] for w in harvest["walks"])
    assert text.returncode == 0 and "harvest:osti" in text.stdout and "harvest:ntrs" not in text.stdout
    assert not home.exists() or not any(home.iterdir())


def test_bad_profile_and_sources_are_one_line_errors(tmp_path, tmp_home):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\ndescription = "d"\n[ntrs]\nsubject_categories = "not a list"\n')
    env = {**os.environ, "SEARCHNASA_HOME": str(tmp_home)}
    for args, needle in ((["--profile", str(bad)], "must be a list"), (["--profile", "nope"], "no profile 'nope'"),
                         (["--sources", "arxiv"], "unknown source(s) arxiv")):
        done = run_cli(["update", *args], env)
        assert done.returncode == 2 and needle in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_serve_answers_every_request_during_an_update(collections, tmp_path):
    ntrs, osti = collections
    home = tmp_path / "home"
    with ReplayServer(ntrs[:800], osti[:300], latency=0.01) as server:
        env = env_for(home, server, tmp_path / "cache.sqlite3", SEARCHNASA_HARVEST_PAGE_SIZE="25")
        update_json(env, "--profile", "energy-propulsion")
        with running_server(home, tmp_path / "server.log") as srv:
            before = httpx.get(srv.base_url + "/api/status", timeout=10).json()
            today = time.strftime("%Y-%m-%dT00:00:00.0000000+00:00", time.gmtime())
            server.add_ntrs([dict(i, subjectCategories=["PROPULSION SYSTEMS"]) for i in synthetic_ntrs(60, today)])
            failures: list[str] = []
            answered = 0
            stop = threading.Event()

            def hammer() -> None:
                nonlocal answered
                with httpx.Client(base_url=srv.base_url, timeout=30) as client:
                    while not stop.is_set():
                        for path in ("/search?q=propulsion", "/api/search?q=heat+transfer", "/"):
                            r = client.get(path, headers={"accept": "text/html"})
                            answered += 1
                            if r.status_code != 200 or ("/api/" in path and not r.json()["results"]) \
                                    or ("/search" in path and "article" not in r.text):
                                failures.append(f"{path}: {r.status_code}")

            thread = threading.Thread(target=hammer)
            thread.start()
            try:
                report = update_json(env)
            finally:
                stop.set()
                thread.join(60)
            after = httpx.get(srv.base_url + "/api/status", timeout=10).json()
            page = httpx.get(srv.base_url + "/search?q=SYNTHETIC", timeout=10).text
    assert not failures, failures[:5]
    assert answered > 10
    assert report["sources"]["ntrs"]["new"] == 60
    assert after["sources"]["ntrs"]["records"] == before["sources"]["ntrs"]["records"] + 60
    assert after["sources"]["ntrs"]["waiting_for_index"] == 0
    assert after["profile"]["name"] == "energy-propulsion"
    assert f"NASA NTRS: {after['sources']['ntrs']['records']:,} records, updated " in page
    assert re.search(r"ntrs(:|%3A)990000000\d\d", page)  # the new records are searchable without a restart


def test_update_reconcile_hides_a_record_withdrawn_upstream(collections, tmp_path):
    ntrs, osti = collections
    home = tmp_path / "home"
    gone = osti[7]["osti_id"]
    with ReplayServer(ntrs, osti) as server:
        env = env_for(home, server, tmp_path / "cache.sqlite3")
        update_json(env, "--no-semantic")
        server.remove_osti(gone)
        plain = update_json(env, "--no-semantic")
        assert plain["sources"]["osti"]["withdrawn"] == 0  # an incremental run cannot tell
        reconciled = update_json(env, "--no-semantic", "--reconcile")
    assert reconciled["sources"]["osti"]["withdrawn"] == 1 and reconciled["sources"]["ntrs"]["withdrawn"] == 0
    assert query(home, f"SELECT id FROM withdrawn WHERE id = 'osti:{gone}'") == [(f"osti:{gone}",)]
    assert query(home, f"SELECT id FROM records WHERE id = 'osti:{gone}'")  # kept in the store
    title = next(i["title"] for i in osti if i["osti_id"] == gone)
    found = json.loads(run_cli(["search", f'"{title}"', "--mode", "lexical", "--json"], env).stdout)
    assert f"osti:{gone}" not in {hit["id"] for hit in found["results"]}
