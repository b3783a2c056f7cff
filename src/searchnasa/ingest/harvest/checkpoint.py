"""Harvest checkpoints: names, and the small state shared by both harvesters.

The state itself lives in the store's ``checkpoints`` table and is written in the same transaction
as the records of the page it covers (``Store.upsert(items, checkpoint=...)``), so after a crash
the store never holds records the checkpoint does not know about, nor the reverse.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any

from searchnasa.store import Store

STATE_VERSION = 1


def checkpoint_name(source: str, query: str | None = None, since: date | None = None,
                    until: date | None = None) -> str:
    """One checkpoint per source for the whole collection. A ``--query`` harvest and an explicit
    ``--since``/``--until`` range keep their own, so a one-off run never clobbers (or skips) the
    unfinished or incremental state of the main harvest."""
    name = f"harvest:{source}"
    if query:
        name += f":q={query}"
    if since or until:
        name += f":range={since or ''}..{until or ''}"
    return name


def today_utc() -> date:
    return datetime.now(timezone.utc).date()


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class Resume:
    """What the store says about the previous run: unfinished state to resume, or where to start."""

    state: dict[str, Any] | None
    next_since: date | None

    @property
    def unfinished(self) -> bool:
        return bool(self.state) and self.state.get("phase") != "done"


def load(store: Store, name: str) -> Resume:
    """Read a checkpoint; an unknown version is treated as no checkpoint (start a full walk)."""
    state = store.get_checkpoint(name)
    if not state or state.get("version") != STATE_VERSION:
        return Resume(None, None)
    since = state.get("next_since")
    return Resume(state, date.fromisoformat(since) if since else None)


def new_run_id() -> str:
    """A run's own stamp: records a reconcile walk reads are marked with it (unique even for two
    runs in the same second)."""
    return f"{now_iso()}/{uuid.uuid4().hex[:8]}"


def incremental_start(since: date, overlap_days: int) -> date:
    """The overlap window: re-read ``overlap_days`` before the checkpoint's source date, so records
    the source releases late (dated before the last harvest saw its newest record) are still read."""
    return since - timedelta(days=max(overlap_days, 0))


def note_newest(state: dict[str, Any], days: Iterable[str | None]) -> None:
    """Remember the newest source date (``YYYY-MM-DD``: NTRS ``modified``, OSTI ``entry_date``)
    a walk has read: the next incremental run starts from it, not from our own clock."""
    newest = state.get("newest_seen")
    for day in days:
        if day and len(day) == 10 and (newest is None or day > newest):
            newest = day
    state["newest_seen"] = newest


def finish_since(state: dict[str, Any]) -> str:
    """The checkpoint date a finished walk leaves: the newest source date it read (or the previous
    checkpoint's, carried in ``newest_seen``), never later than the run's own day (a record dated
    in the future must not push the next start past records yet to come). Why the source's date:
    a source that lags (OSTI releases records days after their ``entry_date``) would otherwise have
    its late records fall before a start computed from our clock."""
    today = state["run_started_day"]
    newest = state.get("newest_seen")
    return min(newest, today) if newest else today
