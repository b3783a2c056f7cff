"""``searchnasa embed`` on a real Dask ``LocalCluster`` (2 worker processes) gives exactly the
vectors of the in-process run, also when a worker process is killed mid-job.

The store holds 64 real records of the bundled sample. The bundled sample vectors are switched
off (``load_bundle`` -> None) and the shared cache is not used, so every vector really comes from
the model: in this process for the reference run, in the Dask workers for the others. Vectors are
stored as float16, so two runs whose float32 results differ by summation order (1 torch thread
per worker vs 2 in-process) can differ by one float16 step (<= 2.5e-4); the cosine between them
must still be 1 within 1e-5.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import searchnasa.cli  # noqa: F401  (registers every command on the app)
import searchnasa.semantic.bundle as bundle
from searchnasa.cli.app import app
from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_lines_with_abstract
from searchnasa.semantic.vectors import VectorStore
from searchnasa.settings import Settings
from searchnasa.store import open_store

pytestmark = pytest.mark.slow

N_RECORDS = 64
PARTITION = 8


def _small_home(root: Path, name: str) -> Path:
    """A home with the first N_RECORDS sample records that have an abstract (real records)."""
    home = root / name
    home.mkdir()
    src = root / "small.jsonl"
    if not src.exists():
        src.write_bytes(b"".join(sample_lines_with_abstract(N_RECORDS)))
    store = open_store(home)
    report = import_paths(store, [src], "records-jsonl")
    assert report.counts.new == N_RECORDS, report.summary()
    store.close()
    return home


def _embed(home: Path, *args: str) -> str:
    result = CliRunner().invoke(app, ["embed", "--no-cache", "--batch-size", str(PARTITION),
                                      "--home", str(home), *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _vectors(home: Path) -> tuple[list[str], np.ndarray, int]:
    vs = VectorStore(Settings().with_home(home).vectors_dir)
    try:
        ids, matrix = vs.load_all()
        return ids, matrix, vs.checkpoint_seq
    finally:
        vs.close()


def _assert_same(reference: tuple[list[str], np.ndarray, int], other: tuple[list[str], np.ndarray, int]) -> None:
    ref_ids, ref, ref_seq = reference
    ids, mat, seq = other
    assert ids == ref_ids  # every record exactly once (ids are the primary key; order is by id)
    assert len(ids) == N_RECORDS
    assert seq == ref_seq == N_RECORDS  # the resume checkpoint reached the end of the store
    assert np.abs(mat - ref).max() < 5e-4
    cos = np.sum(mat * ref, axis=1) / (np.linalg.norm(mat, axis=1) * np.linalg.norm(ref, axis=1))
    assert cos.min() > 1 - 1e-5


@pytest.fixture
def no_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bundle, "load_bundle", lambda: None)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], np.ndarray, int]:
    """The in-process run (``--scheduler local``, the original path)."""
    mp = pytest.MonkeyPatch()
    mp.setattr(bundle, "load_bundle", lambda: None)
    try:
        home = _small_home(tmp_path_factory.mktemp("dask_ref"), "local")
        out = _embed(home)
        assert f"{N_RECORDS} embedded" in out
        return _vectors(home)
    finally:
        mp.undo()


def _kill_a_busy_worker_after_first_partition(vectors_db: Path, state: dict) -> None:
    """Watch the vector store; once the first partition is written, SIGKILL a worker process that
    has tasks in hand (what a crashed node looks like to Dask). The job's own client (the default
    client of this process, created by ``searchnasa embed``) tells which worker is busy."""
    from distributed import default_client

    deadline = time.monotonic() + 150
    while time.monotonic() < deadline and not state.get("killed"):
        written = 0
        if vectors_db.exists():
            try:
                with closing(sqlite3.connect(f"file:{vectors_db}?mode=ro", uri=True, timeout=1)) as conn:
                    written = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
            except sqlite3.OperationalError:
                written = 0
        if written >= PARTITION:
            try:
                client = default_client()
            except ValueError:  # no client yet
                client = None
            busy = [w for w, keys in client.processing().items() if keys] if client else []
            if busy:
                pids = client.run(os.getpid, workers=[busy[0]])
                os.kill(pids[busy[0]], signal.SIGKILL)
                state.update(killed=True, written_at_kill=written)
                return
        time.sleep(0.05)


def test_local_cluster_matches_in_process_even_when_a_worker_dies(reference, no_bundle, tmp_path: Path) -> None:
    home = _small_home(tmp_path, "processes")
    vectors_db = Settings().with_home(home).vectors_dir / VectorStore.FILENAME
    state: dict = {}
    watcher = threading.Thread(target=_kill_a_busy_worker_after_first_partition, args=(vectors_db, state),
                               daemon=True)
    watcher.start()
    out = _embed(home, "--scheduler", "processes", "--workers", "2")
    watcher.join(timeout=30)
    assert "local Dask cluster of 2 worker" in out
    assert state.get("killed"), "the watcher never saw a busy worker after the first partition"
    assert PARTITION <= state["written_at_kill"] < N_RECORDS  # killed mid-job
    assert f"{N_RECORDS} records seen: {N_RECORDS} embedded" in out
    _assert_same(reference, _vectors(home))
    # Idempotent and resumable: a second run (here in-process) finds every vector current.
    out = _embed(home)
    assert "0 records seen" in out
    _assert_same(reference, _vectors(home))


def test_bad_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    import dask.config

    home = _small_home(tmp_path, "bad")
    result = CliRunner().invoke(app, ["embed", "--scheduler", "nowhere", "--home", str(home)])
    assert result.exit_code != 0
    assert "--scheduler must be 'local', 'processes' or a scheduler address" in str(result.exception)
    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):
        result = CliRunner().invoke(app, ["embed", "--scheduler", "tcp://127.0.0.1:9", "--home", str(home)])
    assert result.exit_code != 0
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in str(result.exception)
