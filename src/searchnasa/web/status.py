"""What every page says about the collection: the active profile's description line and the
freshness footer ("NASA NTRS: 612,345 records, updated 2026-12-01"), and ``/api/status``.

Why a cache keyed by what changes: the status reads counts through indexes and a few files, cheap
but not free at millions of records, and it only changes when a stage writes. The key (the store's
highest ``seq``, the index generation's state file, the vector checkpoint file and the profile
file, by modification time) is a few microseconds to read, so a page pays for the status only
after an ``update`` changed something, and a running server shows a new profile or new counts
without a restart.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from searchnasa.batch.freshness import HomeStatus, home_status
from searchnasa.index.layout import STATE, current_generation
from searchnasa.profiles import ACTIVE_FILE, DEFAULT_DESCRIPTION
from searchnasa.web.deps import Services, services

log = logging.getLogger("searchnasa.web")


def _mtime(path: Path | None) -> float:
    try:
        return path.stat().st_mtime_ns if path is not None else 0.0
    except OSError:
        return 0.0


def _wal_mtime(path: Path) -> float:
    """A write-ahead log's modification time while it holds writes, else 0.

    SQLite creates an empty ``-wal`` file when a connection opens and deletes it when the last one
    closes; the search side opens and closes the vector store every second or so to look for new
    vectors, so the bare file's time flipped with every check and every page recomputed the status.
    An empty log holds nothing new; a written one keeps its time until its writer closes, which
    moves the database file's own time instead.
    """
    try:
        stat = path.stat()
    except OSError:
        return 0.0
    return stat.st_mtime_ns if stat.st_size else 0.0


class StatusCache:
    """One home's :class:`HomeStatus`, recomputed when its key changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: tuple[Any, ...] | None = None
        self._status: HomeStatus | None = None

    def _key_of(self, holder: Services) -> tuple[Any, ...]:
        settings = holder.settings
        generation = current_generation(settings.index_dir)
        return (holder.store().max_seq(), _mtime(generation / STATE if generation else None),
                _wal_mtime(settings.vectors_dir / "vectors.sqlite3-wal"), _mtime(settings.vectors_dir / "vectors.sqlite3"),
                _mtime(settings.home / ACTIVE_FILE), _mtime(settings.home / "update.lock"))

    def get(self, holder: Services) -> HomeStatus:
        key = self._key_of(holder)
        with self._lock:
            if key != self._key or self._status is None:
                self._status = home_status(holder.settings, holder.store())
                self._key = key
            return self._status


def status_of(request: Request) -> HomeStatus:
    """The home's status (raises the store's error when there is no store yet)."""
    holder = services(request)
    if not isinstance(holder.status_cache, StatusCache):
        holder.status_cache = StatusCache()
    return holder.status_cache.get(holder)


@dataclass
class SiteInfo:
    """What the layout shows on every page."""

    description: str
    footer: str


def site_info(request: Request | None) -> SiteInfo:
    """The description line and the footer; a page never fails for them (before anything is
    loaded, or on a status error, it shows today's description and no footer)."""
    if request is None:
        return SiteInfo(DEFAULT_DESCRIPTION, "")
    try:
        status = status_of(request)
    except Exception as exc:  # noqa: BLE001  see the docstring
        log.debug("no status for the footer: %s", exc)
        return SiteInfo(DEFAULT_DESCRIPTION, "")
    return SiteInfo(str(status.profile.get("description") or DEFAULT_DESCRIPTION), status.footer())


class SourceFreshness(BaseModel):
    """One source's share of the home: how many records, how fresh, what still waits."""

    label: str = Field(description="How the pages name the source")
    records: int = Field(description="Records this home holds from the source")
    last_harvest: str | None = Field(description="When a harvest of the source last finished (UTC, ISO 8601); "
                                                 "null: never harvested here (imported records only)")
    newest_record_date: str | None = Field(description="The newest record date (YYYY, YYYY-MM or YYYY-MM-DD) "
                                                       "up to today")
    waiting_for_index: int = Field(description="Records stored but not yet in the lexical index")
    waiting_for_embeddings: int | None = Field(description="Records stored but not yet embedded; "
                                                           "null: this home has no vectors")


class IndexFreshness(BaseModel):
    """The live lexical index: which generation serves and how old its last commit is."""

    generation: str = Field(description="The live index generation folder")
    updated_at: str = Field(description="Its last commit (UTC, ISO 8601)")
    age_seconds: float = Field(description="Seconds since that commit")


class ProfileInfo(BaseModel):
    """The active collection profile: which records this mirror holds (docs/operations.md)."""

    name: str | None = Field(description="The active collection profile; null: none chosen (everything)")
    display_name: str = Field(description="The profile's name for people")
    description: str = Field(description="The line the pages show under the search heading")


class RunningUpdate(BaseModel):
    """A `searchnasa update` running in this home now (it holds the home's lock)."""

    pid: int | None = Field(description="Its process id")
    started: str | None = Field(description="When it started (UTC, ISO 8601)")
    stage: str | None = Field(description="The stage it is in (harvest:ntrs, index, embed, ...)")


class StatusResponse(BaseModel):
    """How fresh the collection is: per source, the index, a running update, the profile."""

    profile: ProfileInfo = Field(description="The active collection profile")
    sources: dict[str, SourceFreshness] = Field(description="Per source (`ntrs`, `osti`): records and freshness")
    index: IndexFreshness | None = Field(description="The live lexical index; null: none built yet")
    update_running: RunningUpdate | None = Field(description="A running `searchnasa update`; null: none")
    checked_at: str = Field(description="When this status was computed (UTC, ISO 8601)")


router = APIRouter(prefix="/api", tags=["api"])


@router.get("/status", response_model=StatusResponse, summary="Freshness: per source records, last "
            "harvest, newest record date, records waiting for the index and embeddings; the active profile.",
            responses={503: {"description": "No store yet: `{\"error\": {\"code\", \"message\"}}`"}})
def api_status(request: Request) -> dict[str, Any]:
    return status_of(request).as_json()
