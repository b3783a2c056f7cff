"""Faults, with real concurrent processes: a server keeps answering while ``searchnasa index
--rebuild`` runs and while ``searchnasa harvest`` writes; a SIGKILL mid-build leaves the previous
index serving; a full disk (a real, small tmpfs) during import or indexing is one clear error and
loses nothing already stored; a corrupt index is detected at start and rebuilt from the store.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from server_util import Server, copy_home, running_server
from searchnasa.index.health import check_index
from searchnasa.index.layout import CURRENT, current_generation
from searchnasa.settings import Settings

CLI = str(Path(sys.executable).with_name("searchnasa"))
QUERY = {"q": "heat transfer", "mode": "lexical", "per_page": 5}


def cli(args: list[str], home: Path, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "SEARCHNASA_HOME": str(home), "COLUMNS": "200", **env}
    return subprocess.run([CLI, *args], env=full_env, capture_output=True, text=True, timeout=timeout)


class Prober:
    """Searches in a loop from its own thread while a fault happens; keeps every answer."""

    def __init__(self, base_url: str, params: dict | None = None) -> None:
        self.base_url = base_url
        self.params = params or QUERY
        self.answers: list[tuple[int | str, int | None]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx.Client(base_url=self.base_url, timeout=10.0) as client:
            while not self._stop.is_set():
                try:
                    resp = client.get("/api/search", params=self.params)
                    total = resp.json().get("total") if resp.status_code == 200 else None
                    self.answers.append((resp.status_code, total))
                except httpx.HTTPError as exc:
                    self.answers.append((type(exc).__name__, None))
                time.sleep(0.02)

    def __enter__(self) -> "Prober":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(20)

    @property
    def statuses(self) -> set:
        return {status for status, _ in self.answers}

    @property
    def totals(self) -> set:
        return {total for _, total in self.answers}


@pytest.fixture
def home(indexed_home: Path, tmp_path: Path) -> Path:
    return copy_home(indexed_home, tmp_path / "home")


def total_of(server: Server, params: dict | None = None) -> int:
    resp = httpx.get(server.base_url + "/api/search", params=params or QUERY, timeout=10.0)
    assert resp.status_code == 200, resp.text[:300]
    return resp.json()["total"]


# -- searches go on while the index is rebuilt and while a harvest writes -----------------------
def test_searches_keep_answering_during_rebuilds(home: Path, tmp_path: Path) -> None:
    with running_server(home, tmp_path / "server.log", workers=2) as server:
        expected = total_of(server)
        with Prober(server.base_url) as prober:
            done = cli(["index", "--rebuild"], home)
            assert done.returncode == 0, done.stderr[-2000:]
            during = len(prober.answers)
            time.sleep(0.5)  # answers after the last swap come from the new generation
        assert during >= 10, prober.answers
        assert prober.statuses == {200}, prober.answers
        assert prober.totals == {expected}
        assert current_generation(home / "index").name == "gen-2"
        assert total_of(server) == expected
        assert "Traceback" not in server.log()


def test_searches_keep_answering_while_a_harvest_writes(home: Path, tmp_path: Path, raw_dir: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from replay.collections import osti_items, synthetic_osti
    from replay.server import ReplayServer

    today = datetime.now(timezone.utc).strftime("%Y-%m-%dT00:00:00Z")
    items = osti_items(raw_dir) + synthetic_osti(300, today)
    with ReplayServer(osti_items=items, latency=0.005) as replay, \
            running_server(home, tmp_path / "server.log") as server:
        before = httpx.get(server.base_url + "/readyz", timeout=10).json()["records"]
        with Prober(server.base_url) as prober:
            done = cli(["harvest", "osti", "--rate", "0", "--page-size", "50"], home,
                       SEARCHNASA_OSTI_API=replay.osti_api, SEARCHNASA_HARVEST_BACKOFF="0.001")
            assert done.returncode == 0, done.stderr[-2000:]
        assert len(prober.answers) >= 5, prober.answers
        assert prober.statuses == {200}, prober.answers
        after = httpx.get(server.base_url + "/readyz", timeout=10).json()["records"]
        assert after >= before + 300  # the synthetic records at least are new
        # the harvest updated the live index: the server finds the new records without a restart
        found = httpx.get(server.base_url + "/api/search", timeout=10,
                          params={"q": '"generated by the test suite"', "mode": "lexical"}).json()
        assert found["total"] == 300, found["total"]
        assert "Traceback" not in server.log()


# -- SIGKILL during indexing ---------------------------------------------------------------------
def test_sigkill_mid_rebuild_keeps_the_previous_index_serving(home: Path, tmp_path: Path) -> None:
    index_dir = home / "index"
    with running_server(home, tmp_path / "server.log") as server:
        expected = total_of(server)
        env = {**os.environ, "SEARCHNASA_HOME": str(home)}
        with Prober(server.base_url) as prober:
            proc = subprocess.Popen([CLI, "index", "--rebuild"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                deadline = time.monotonic() + 120
                new_gen = index_dir / "gen-2"
                # wait until the new generation holds written data (the writer is busy), then kill
                while time.monotonic() < deadline and proc.poll() is None and \
                        not any(p.suffix not in (".json", ".lock") for p in new_gen.glob("*")):
                    time.sleep(0.01)
                assert proc.poll() is None, "the rebuild finished before it could be killed"
                os.kill(proc.pid, signal.SIGKILL)
            finally:
                proc.wait(30)
            assert proc.returncode == -signal.SIGKILL
            time.sleep(0.3)
        assert (index_dir / CURRENT).read_text().strip() == "gen-1"  # never swapped
        assert prober.statuses == {200} and prober.totals == {expected}, prober.answers
        assert check_index(index_dir).ok
        assert (index_dir / "gen-2").is_dir()  # the killed build's partial generation

        caught_up = cli(["index"], home)  # any next build, not only --rebuild, removes it
        assert caught_up.returncode == 0, caught_up.stderr[-2000:]
        assert not (index_dir / "gen-2").exists()
        assert "removed gen-2, a rebuild that was stopped before it finished" in caught_up.stderr

        done = cli(["index", "--rebuild"], home)  # the next rebuild completes and swaps
        assert done.returncode == 0, done.stderr[-2000:]
        assert (index_dir / CURRENT).read_text().strip() == "gen-2"
        assert total_of(server) == expected
        assert "Traceback" not in server.log()


# -- a full disk ---------------------------------------------------------------------------------
@contextmanager
def small_disk(path: Path, size_kb: int) -> Iterator[Path]:
    """A real tmpfs of ``size_kb`` mounted at ``path`` (the tests run as root in the dev container
    and CI; a full disk is then the kernel's own ENOSPC, not a simulation)."""
    path.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"cannot mount a tmpfs (needs root): {done.stderr}"
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def synthetic_jsonl(path: Path, n: int, start: int) -> list[str]:
    """SYNTHETIC records (made here, labelled so), each ~3 KB, as our JSON Lines import format."""
    from searchnasa.records import Record, RecordDate

    ids = []
    with open(path, "wb") as fh:
        for i in range(start, start + n):
            rid = f"osti:97{i:08d}"
            record = Record(
                id=rid, source="osti", source_id=rid.split(":")[1],
                title=f"SYNTHETIC disk-fill record {i} (generated by tests/test_faults.py)",
                abstract=("Synthetic abstract for a full-disk test. " * 70) + str(i),
                date=RecordDate(value="2001-01-01", kind="published", precision="day"), year=2001)
            fh.write(record.to_json() + b"\n")
            ids.append(rid)
    return ids


def stored_ids(home: Path) -> set[str]:
    conn = sqlite3.connect(f"file:{home / 'store.sqlite3'}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {row[0] for row in conn.execute("SELECT id FROM records")}
    finally:
        conn.close()


def test_full_disk_during_import_is_one_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk", 6 * 1024) as disk:
        home = disk / "home"
        home.mkdir()
        first = synthetic_jsonl(tmp_path / "first.jsonl", 200, 0)
        done = cli(["import", str(tmp_path / "first.jsonl"), "--format", "records-jsonl"], home)
        assert done.returncode == 0, done.stderr
        assert stored_ids(home) == set(first)

        synthetic_jsonl(tmp_path / "big.jsonl", 6000, 1000)  # ~18 MB of records: cannot fit
        done = cli(["import", str(tmp_path / "big.jsonl"), "--format", "records-jsonl"], home)
        assert done.returncode != 0
        assert "Traceback" not in done.stderr and "disk full" in done.stderr, done.stderr[-1500:]
        assert len([line for line in done.stderr.splitlines() if "error" in line.lower()]) == 1, done.stderr
        kept = stored_ids(home)  # the store opens, passes integrity_check, and lost nothing
        assert set(first) <= kept
        big_stored = len(kept) - len(first)
        assert 0 <= big_stored < 6000

        # space comes back (a file is removed): the same import runs to the end
        shutil.rmtree(home / "index", ignore_errors=True)
        subprocess.run(["mount", "-o", "remount,size=64m", str(disk)], check=True)
        done = cli(["import", str(tmp_path / "big.jsonl"), "--format", "records-jsonl"], home)
        assert done.returncode == 0, done.stderr[-1500:]
        assert len(stored_ids(home)) == 6200


def test_full_disk_during_indexing_keeps_the_previous_index(indexed_home: Path, tmp_path: Path) -> None:
    used_kb = sum(p.stat().st_size for p in indexed_home.rglob("*") if p.is_file()) // 1024
    with small_disk(tmp_path / "disk", used_kb + 3 * 1024) as disk:  # room for a few MB, not an index
        home = copy_home(indexed_home, disk / "home")
        before = check_index(home / "index")
        assert before.ok
        done = cli(["index", "--rebuild"], home)
        assert done.returncode != 0
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        assert "disk" in done.stderr.lower() or "space" in done.stderr.lower(), done.stderr[-1500:]
        after = check_index(home / "index")
        assert after.ok and after.generation == before.generation and after.documents == before.documents
        assert len(stored_ids(home)) == before.documents
        with running_server(home, tmp_path / "server.log") as server:
            assert total_of(server) > 0


# -- a corrupt index -----------------------------------------------------------------------------
def _scribble(path: Path, keep_tail: int = 4096, step: int = 31) -> None:
    """Overwrite every ``step``-th byte except the footer: damage that opening alone does not see."""
    data = bytearray(path.read_bytes())
    for i in range(0, max(0, len(data) - keep_tail), step):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


CORRUPTIONS = {
    "meta.json garbled": lambda gen: (gen / "meta.json").write_text("{not json"),
    "segment file missing": lambda gen: next(gen.glob("*.idx")).unlink(),
    "segment truncated": lambda gen: os.truncate(next(gen.glob("*.store")), 1000),
    "postings scribbled": lambda gen: [_scribble(p) for p in gen.glob("*.idx")],
    "terms scribbled": lambda gen: [_scribble(p) for p in gen.glob("*.term")],
    "fast fields scribbled": lambda gen: [_scribble(p) for p in gen.glob("*.fast")],
    "stored cards scribbled": lambda gen: [_scribble(p) for p in gen.glob("*.store")],
    "CURRENT names nothing": lambda gen: (gen.parent / CURRENT).write_text("gen-77"),
    "build state lost": lambda gen: (gen / "searchnasa-state.json").unlink(),
}


@pytest.mark.parametrize("damage", CORRUPTIONS, ids=list(CORRUPTIONS))
def test_check_index_finds_the_damage(indexed_home: Path, tmp_path: Path, damage: str) -> None:
    home = copy_home(indexed_home, tmp_path / "home")
    # healthy before the damage, checked in another process: a file truncated or rewritten while
    # this process still maps it (Tantivy memory-maps segments; its threads may outlive the check)
    # would crash the test run with SIGBUS, a hazard of the test, not of the check (a live index's
    # files are never changed in place: generations are written once and swapped)
    before = subprocess.run([sys.executable, "-c", "import sys; from searchnasa.index.health import "
                             "check_index; print(check_index(sys.argv[1]).state)", str(home / "index")],
                            capture_output=True, text=True, timeout=120)
    assert before.stdout.strip() == "ok", before.stderr[-2000:]
    CORRUPTIONS[damage](current_generation(home / "index"))
    health = check_index(home / "index")
    assert health.state == "corrupt" and health.problem, health


def lexical_total(home: Path, q: str = "heat transfer") -> int:
    from searchnasa.search.schemas import SearchRequest
    from searchnasa.search.service import SearchService

    return SearchService(Settings().with_home(home)).search(SearchRequest(q=q, mode="lexical")).total


@pytest.mark.parametrize("damage", ["postings scribbled", "CURRENT names nothing"])
def test_corrupt_index_is_rebuilt_from_the_store_at_start(indexed_home: Path, tmp_path: Path,
                                                          damage: str) -> None:
    expected = lexical_total(indexed_home)
    home = copy_home(indexed_home, tmp_path / "home")
    CORRUPTIONS[damage](current_generation(home / "index"))
    with running_server(home, tmp_path / "server.log") as server:
        assert total_of(server) == expected
        ready = httpx.get(server.base_url + "/readyz", timeout=10).json()
        assert ready == {"status": "ready", "records": 6514}
        log = server.log()
    assert "is corrupt" in log and "rebuilt from the store: 6514 records" in log, log[-3000:]
    health = check_index(home / "index")
    assert health.ok and health.documents == 6514 and health.generation == "gen-2"


def test_a_corrupt_index_without_a_store_is_reported_not_crashed(indexed_home: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(indexed_home / "index", home / "index")
    CORRUPTIONS["meta.json garbled"](current_generation(home / "index"))
    from server_util import SEARCHNASA, free_port

    port = free_port()
    env = {**os.environ, "SEARCHNASA_HOME": str(home)}
    with open(tmp_path / "server.log", "wb") as log_file:
        proc = subprocess.Popen([str(SEARCHNASA), "serve", "--port", str(port)], env=env,
                                stdout=log_file, stderr=subprocess.STDOUT)
    server = Server(f"http://127.0.0.1:{port}", proc, tmp_path / "server.log")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(server.base_url + "/healthz", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.2)
        ready = httpx.get(server.base_url + "/readyz", timeout=10)
        assert ready.status_code == 503, ready.text
        assert ready.json()["status"] == "unavailable" and ready.json()["error"]["message"]
        search = httpx.get(server.base_url + "/api/search", params={"q": "engine"}, timeout=10)
        assert search.status_code == 503, search.text
        assert set(search.json()) == {"error"}
    finally:
        server.stop()
    assert "no store" in server.log() and "Traceback" not in server.log()


def test_an_index_on_a_read_only_mount_is_reported_not_rebuilt(indexed_home: Path, tmp_path: Path) -> None:
    """Tantivy takes a lock file even to read, so an index on a read-only mount cannot be opened:
    the server says so (503 with the reason, one log line) instead of "repairing" sound files.
    The home holds vectors too (read-only, the vector store cannot open): the server still starts."""
    from searchnasa.semantic import seed_from_bundle
    from searchnasa.settings import Settings

    src = copy_home(indexed_home, tmp_path / "src")
    assert seed_from_bundle(Settings().with_home(src)) > 0
    ro = tmp_path / "ro"
    ro.mkdir()
    subprocess.run(["mount", "--bind", str(src), str(ro)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True)
        assert check_index(ro / "index").state == "unavailable"
        from server_util import SEARCHNASA, free_port

        port = free_port()
        env = {**os.environ, "SEARCHNASA_HOME": str(ro)}
        with open(tmp_path / "server.log", "wb") as log_file:
            proc = subprocess.Popen([str(SEARCHNASA), "serve", "--port", str(port)], env=env,
                                    stdout=log_file, stderr=subprocess.STDOUT)
        server = Server(f"http://127.0.0.1:{port}", proc, tmp_path / "server.log")
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                try:
                    if httpx.get(server.base_url + "/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            ready = httpx.get(server.base_url + "/readyz", timeout=10)
            assert ready.status_code == 503 and "cannot be opened" in ready.json()["error"]["message"]
        finally:
            server.stop()
        log = server.log()
        assert "cannot be opened here" in log and "rebuilding" not in log and "Traceback" not in log
        assert not list((src / "index").glob("gen-2"))
    finally:
        subprocess.run(["umount", "-l", str(ro)], check=False)


def test_an_index_built_for_another_schema_is_rebuilt_at_start(indexed_home: Path, tmp_path: Path) -> None:
    """After an upgrade that changes the index schema, the old index would fail queries that name
    new fields: ``serve`` sees the recorded schema version and rebuilds from the store first."""
    from searchnasa.index.layout import read_state, write_state

    home = copy_home(indexed_home, tmp_path / "home")
    gen = current_generation(home / "index")
    state = read_state(gen)
    state.schema_version -= 1
    write_state(gen, state)
    assert check_index(home / "index").state == "outdated"
    with running_server(home, tmp_path / "server.log") as server:
        assert total_of(server, {"q": '"heat transfer"', "mode": "lexical"}) > 0
        log = server.log()
    assert "is outdated" in log and "rebuilt from the store: 6514 records" in log
    assert check_index(home / "index").ok


def test_index_update_on_a_corrupt_index_rebuilds_it(indexed_home: Path, tmp_path: Path) -> None:
    home = copy_home(indexed_home, tmp_path / "home")
    CORRUPTIONS["meta.json garbled"](current_generation(home / "index"))
    done = cli(["index"], home)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "corrupt" in done.stderr and "Traceback" not in done.stderr
    health = check_index(home / "index")
    assert health.ok and health.documents == 6514 and health.generation == "gen-2"
