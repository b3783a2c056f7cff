"""Start a real ``searchnasa serve`` (uvicorn) on a free loopback port for tests and benchmarks.

The server runs in its own process, exactly as users run it, so tests exercise the real CLI,
uvicorn, the middleware and the index on disk; :func:`running_server` stops it with SIGTERM (the
graceful path) and kills it only if it does not stop.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx

SEARCHNASA = Path(sys.executable).with_name("searchnasa")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Server:
    base_url: str
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def stop(self, timeout: float = 20.0) -> int:
        """SIGTERM, then wait; returns the exit code (SIGKILL only if it hangs)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        return self.process.returncode


def start_server(home: Path, log_path: Path, workers: int = 1, timeout: float = 60.0,
                 extra_env: dict[str, str] | None = None) -> Server:
    """Start ``searchnasa serve`` against ``home`` and wait until ``/readyz`` says ready."""
    port = free_port()
    env = {**os.environ, "SEARCHNASA_HOME": str(home), **(extra_env or {})}
    cmd = [str(SEARCHNASA), "serve", "--host", "127.0.0.1", "--port", str(port),
           "--workers", str(workers), "--log-level", "info"]
    log_file = open(log_path, "wb")
    process = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=env)
    log_file.close()
    server = Server(f"http://127.0.0.1:{port}", process, log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{server.log()[-3000:]}")
        try:
            if httpx.get(server.base_url + "/readyz", timeout=2.0).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.stop()
    raise RuntimeError(f"server not ready after {timeout:.0f} s:\n{server.log()[-3000:]}")


@contextmanager
def running_server(home: Path, log_path: Path, **kwargs) -> Iterator[Server]:
    server = start_server(home, log_path, **kwargs)
    try:
        yield server
    finally:
        server.stop()


# -- a home with hostile record text (synthetic) -------------------------------------------------
HOSTILE_ID = "osti:9990000001"
HOSTILE_MARKER = "zzhostilesynthetic"


def hostile_record():
    """A SYNTHETIC record (made here, not harvested) whose text tries to inject markup and script.

    It carries the word ``zzhostilesynthetic`` so tests can find it, and says it is synthetic.
    """
    from searchnasa.records import Author, Identifiers, Links, Organization, Record, RecordDate

    return Record(
        id=HOSTILE_ID,
        source="osti",
        source_id=HOSTILE_ID.split(":")[1],
        title=f"Synthetic {HOSTILE_MARKER} heat shield <script>alert(1)</script> test",
        abstract=(f"SYNTHETIC test record ({HOSTILE_MARKER}), not a real report. Heat shield ablation "
                  "<img src=x onerror=alert(2)> and <script>alert(3)</script> and "
                  "<a href=\"javascript:alert(4)\">click</a> and broken <b><i>markup"),
        authors=[Author(name="<script>alert(5)</script> Synthetic, Author",
                        affiliation="<img src=x onerror=alert(6)>", orcid="0000-0000-0000-0000")],
        date=RecordDate(value="2020-01-01", kind="published", precision="day"),
        dates=[RecordDate(value="2020-01-01", kind="published", precision="day")],
        year=2020,
        subjects=["<b onmouseover=alert(7)>synthetic subject</b>"],
        keywords=["<svg onload=alert(8)>"],
        document_type="Technical Report",
        document_type_label="Technical Report",
        organizations=[Organization(name="<script>alert(9)</script> Synthetic Lab", role="research")],
        identifiers=Identifiers(doi="10.0000/synthetic\"><script>alert(10)</script>",
                                report_numbers=["SYN-<i>1</i>"]),
        links=Links(landing="javascript:alert(11)", pdf="data:text/html,<script>alert(12)</script>"),
    )


CROSSLISTED = Path(__file__).parent / "fixtures" / "crosslisted"


def build_web_home(base: Path, sample_home: Path) -> Path:
    """The bundled sample, plus :func:`hostile_record` (synthetic), plus the cross-listed fixture
    (real OSTI works and synthetic NTRS copies of them, see ``tests/fixtures/crosslisted``), with
    duplicate clusters computed, the index built and the acronyms mined (as ``searchnasa index``
    leaves a home); built once per test session."""
    import shutil

    from searchnasa.dedup import run_dedup
    from searchnasa.index.acronym_table import update_acronyms
    from searchnasa.ingest.importer import import_paths
    from searchnasa.index import build_index
    from searchnasa.settings import Settings
    from searchnasa.store import StoredItem, open_store

    home = base / "web_home"
    done = home / ".built"
    if done.exists():
        return home
    if home.exists():
        shutil.rmtree(home)  # a half-built home from an interrupted run
    home.mkdir(parents=True)
    shutil.copy2(sample_home / "store.sqlite3", home / "store.sqlite3")
    store = open_store(home)
    record = hostile_record()
    store.upsert([StoredItem(record=record, raw_format="synthetic", raw=record.model_dump(mode="json"))])
    for name, fmt in (("osti_api.json", "osti-api"), ("ntrs_api_copies.json", "ntrs-api")):
        report = import_paths(store, [CROSSLISTED / name], fmt)
        assert report.skipped == 0, report.problems
    run_dedup(store)
    build_index(store, Settings().with_home(home).index_dir)
    update_acronyms(store, Settings().with_home(home).index_dir)
    store.close()
    done.touch()
    return home


def copy_home(src: Path, dst: Path) -> Path:
    """A private copy of a shared fixture home: a server may write beside its index (vectors it
    seeds, caches), and shared session fixtures must stay as other tests expect them."""
    import shutil

    if not dst.exists():
        shutil.copytree(src, dst)
    return dst
