"""A process killed mid-import leaves the store consistent, and a re-run completes the import with
no loss and no duplicates.

The input is large enough to take seconds: the bundled sample's real records written several times
over, each copy with distinct **synthetic** ids (``<source_id>-synthetic<k>``) and titles marked
``[synthetic copy k]``, so every line is a distinct record and the expected ids are known.
"""

from __future__ import annotations

import gzip
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson

from searchnasa.records import Record, hash_json
from searchnasa.ingest.sample import sample_path
from searchnasa.store import open_store

CLI = str(Path(sys.executable).with_name("searchnasa"))
COPIES = 3
BATCH = 1000  # importer.BATCH_SIZE: the unit a crash may lose, never split


def synthetic_input(path: Path) -> set[str]:
    """Write COPIES relabelled copies of the sample as JSON Lines; return the ids written."""
    ids: set[str] = set()
    lines = gzip.decompress(sample_path().read_bytes()).splitlines()
    with path.open("wb") as out:
        for k in range(COPIES):
            for line in lines:
                rec = orjson.loads(line)
                rec["source_id"] = f"{rec['source_id']}-synthetic{k}"
                rec["id"] = f"{rec['source']}:{rec['source_id']}"
                rec["title"] = f"{rec['title']} [synthetic copy {k}]"
                ids.add(rec["id"])
                out.write(orjson.dumps(rec) + b"\n")
    return ids


def stored_count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError:  # file or schema not created yet
        return 0


def test_kill_mid_import_then_resume(tmp_path: Path) -> None:
    source = tmp_path / "big.jsonl"
    expected = synthetic_input(source)
    assert len(expected) == COPIES * 6514
    home = tmp_path / "home"
    db = home / "store.sqlite3"
    env = {**os.environ, "SEARCHNASA_HOME": str(home)}

    proc = subprocess.Popen([CLI, "import", str(source)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while stored_count(db) < 2 * BATCH and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert proc.poll() is None, "the import finished before it could be killed; make the input larger"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == -signal.SIGKILL

    # The store opens, passes SQLite's own check, and holds whole batches only.
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    store = open_store(home)
    before = store.count()
    assert 0 < before < len(expected)
    assert before % BATCH == 0, f"{before} rows: a partial batch was committed"
    assert store.max_seq() == before
    for blob, digest in store.conn.execute("SELECT record, content_hash FROM records"):
        assert hash_json(Record.from_json(blob).to_json()) == digest
    store.close()

    # Re-running completes it: the committed rows are unchanged, the rest are new, nothing twice.
    rerun = subprocess.run([CLI, "import", str(source)], env=env, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"{len(expected) - before} new, 0 changed, {before} unchanged, 0 skipped" in rerun.stdout
    store = open_store(home)
    ids = [row[0] for row in store.conn.execute("SELECT id FROM records")]
    assert len(ids) == len(set(ids)) == len(expected)
    assert set(ids) == expected
    seqs = [row[0] for row in store.conn.execute("SELECT seq FROM records ORDER BY seq")]
    assert seqs == list(range(1, len(expected) + 1))
    store.close()
