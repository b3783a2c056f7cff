"""Shared fixtures: where the real raw files are, and fresh data homes on disk.

The real records live in ``shared/data/raw`` beside the repository (a copy sits beside every CI
clone); a clone made somewhere else (``git clone . /tmp/x``) finds the ``shared/`` beside the
repository it was cloned from; ``SEARCHNASA_SHARED`` overrides both.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from searchnasa.ingest.importer import import_paths
from searchnasa.ingest.sample import sample_path
from searchnasa.settings import Settings
from searchnasa.store import Store, open_store

ROOT = Path(__file__).resolve().parents[1]


def find_shared() -> Path:
    """``SEARCHNASA_SHARED``, else ``shared/`` beside this checkout, else beside the local
    repository this checkout was cloned from (its ``origin`` is a path on this machine)."""
    if "SEARCHNASA_SHARED" in os.environ:
        return Path(os.environ["SEARCHNASA_SHARED"])
    beside = ROOT.parent / "shared"
    if beside.is_dir():
        return beside
    try:
        origin = subprocess.run(["git", "-C", str(ROOT), "config", "--get", "remote.origin.url"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return beside
    origin = origin.removeprefix("file://")
    if origin.startswith("/") and (Path(origin).parent / "shared").is_dir():
        return Path(origin).parent / "shared"
    return beside


SHARED = find_shared()
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    assert SHARED.is_dir(), f"shared/ not found at {SHARED} (set SEARCHNASA_SHARED)"
    return SHARED


@pytest.fixture(scope="session")
def raw_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "raw"


@pytest.fixture(scope="session")
def eval_dir(shared_dir: Path) -> Path:
    return shared_dir / "data" / "eval"


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def tmp_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty data home, also exported as SEARCHNASA_HOME for code and subprocesses."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("SEARCHNASA_HOME", str(home))
    return home


@pytest.fixture
def tmp_store(tmp_home: Path) -> Store:
    store = open_store(tmp_home)
    yield store
    store.close()


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home holding the bundled sample, built once per session. Treat it as read-only."""
    home = tmp_path_factory.mktemp("sample_home")
    store = open_store(home)
    report = import_paths(store, [sample_path()], "records-jsonl")
    assert report.skipped == 0, report.problems
    store.close()
    return home


@pytest.fixture(scope="session")
def indexed_home(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample home with its lexical index built (read-only for tests)."""
    from searchnasa.index import build_index

    home = tmp_path_factory.mktemp("indexed_home")
    shutil.copy2(sample_home / "store.sqlite3", home / "store.sqlite3")
    settings = Settings().with_home(home)
    store = open_store(home)
    build_index(store, settings.index_dir)
    store.close()
    return home
