"""Where index generations live on disk, and the pointer that says which one is live.

``index_dir/CURRENT`` names the live generation folder (``gen-<n>``). An incremental build commits
into the live generation (a Tantivy commit is atomic: readers see the old or the new state, never a
mix). A full rebuild, or a schema change, writes a new generation beside it and then swaps
``CURRENT`` with an atomic rename, so readers keep serving the previous index until the new one is
complete.

A full build killed midway leaves its unpublished generation behind; each folder names the process
that builds it (``building.pid``), and the next build of any kind removes the ones whose builder
is gone (:func:`remove_abandoned_generations`).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from searchnasa.index.schema import SCHEMA_VERSION
from searchnasa.topics import crosswalk

CURRENT = "CURRENT"
STATE = "searchnasa-state.json"
GEN_PREFIX = "gen-"
BUILDER = "building.pid"


@dataclass
class GenerationState:
    """What a generation holds: written after each commit so the next build knows where to resume."""

    schema_version: int
    last_seq: int = 0
    documents: int = 0
    # the digest of the topic crosswalk the documents' ``topic`` values were computed with
    # (searchnasa/data/topics.toml): a generation built with another crosswalk is outdated
    topics: str = ""


def fresh_state() -> GenerationState:
    """The state of a generation this version is about to build."""
    return GenerationState(schema_version=SCHEMA_VERSION, topics=crosswalk().digest)


def stale_reason(state: GenerationState) -> str | None:
    """Why a generation built with ``state`` must be rebuilt before this version serves it (another
    index schema, or topics from another crosswalk); None when it is current."""
    if state.schema_version != SCHEMA_VERSION:
        return f"built with index schema {state.schema_version}, this version reads schema {SCHEMA_VERSION}"
    if state.topics != crosswalk().digest:
        return (f"its topics were computed with another topic crosswalk ({state.topics or 'none'}; "
                f"this version's is {crosswalk().digest})")
    return None


def current_generation(index_dir: Path) -> Path | None:
    """The live generation folder, or None when no index has been committed."""
    pointer = Path(index_dir) / CURRENT
    try:
        name = pointer.read_text().strip()
    except FileNotFoundError:
        return None
    path = Path(index_dir) / name
    return path if name and path.is_dir() else None


def new_generation(index_dir: Path) -> Path:
    """A fresh, empty generation folder numbered after every existing one."""
    index_dir = Path(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    numbers = [int(p.name[len(GEN_PREFIX):]) for p in index_dir.glob(f"{GEN_PREFIX}*")
               if p.name[len(GEN_PREFIX):].isdigit()]
    path = index_dir / f"{GEN_PREFIX}{max(numbers, default=0) + 1}"
    path.mkdir()
    (path / BUILDER).write_text(str(os.getpid()))
    return path


def _number(path: Path) -> int:
    suffix = path.name[len(GEN_PREFIX):]
    return int(suffix) if suffix.isdigit() else -1


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def remove_abandoned_generations(index_dir: Path) -> list[str]:
    """Remove the unpublished generations (newer than the live one) whose builder has exited
    without publishing them (a rebuild killed midway); the names removed.

    A generation being built by a live process is left alone, so a rebuild running beside an
    incremental update keeps its folder.
    """
    index_dir = Path(index_dir)
    live = current_generation(index_dir)
    floor = _number(live) if live else 0
    removed = []
    for path in index_dir.glob(f"{GEN_PREFIX}*"):
        if _number(path) <= floor or not path.is_dir():
            continue
        try:
            pid = int((path / BUILDER).read_text().strip() or 0)
        except (FileNotFoundError, ValueError):
            pid = 0
        if pid and _alive(pid):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path.name)
    return removed


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def publish(index_dir: Path, generation: Path) -> None:
    """Make ``generation`` the live one (atomic rename), then drop all but it and its predecessor."""
    index_dir = Path(index_dir)
    previous = current_generation(index_dir)
    _atomic_write(index_dir / CURRENT, generation.name.encode())
    keep = {generation.name} | ({previous.name} if previous else set())
    for path in index_dir.glob(f"{GEN_PREFIX}*"):
        if path.name not in keep:
            # readers that still hold files open keep them (POSIX), new readers open CURRENT
            shutil.rmtree(path, ignore_errors=True)


def read_state(generation: Path) -> GenerationState | None:
    try:
        return GenerationState(**orjson.loads((generation / STATE).read_bytes()))
    except (FileNotFoundError, ValueError, TypeError):
        return None


def write_state(generation: Path, state: GenerationState) -> None:
    _atomic_write(generation / STATE, orjson.dumps(asdict(state)))
