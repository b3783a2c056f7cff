"""Harvest checkpoints: names, and the small state shared by both harvesters.

The state itself lives in the store's ``checkpoints`` table and is written in the same transaction
as the records of the page it covers (``Store.upsert(items, checkpoint=...)``), so after a crash
the store never holds records the checkpoint does not know about, nor the reverse.
"""

from __future__ import annotations

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


def incremental_start(since: date, overlap_days: int) -> date:
    """The overlap window: re-read a few days before the checkpoint so boundary records are kept."""
    return since - timedelta(days=max(overlap_days, 0))
