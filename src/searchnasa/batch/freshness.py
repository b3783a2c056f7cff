"""How fresh a home is: per source its records, last harvest and newest record date; what waits
for the index and the embeddings; the active profile. ``/api/status``, the pages' footer and
``searchnasa stats`` all show :func:`home_status`, so they never disagree.

Why this shape: everything is read cheaply from what the stages already keep (counts through the
primary key, the harvest checkpoints' times, the index generation's state, the vector store's
checkpoint), so a footer on every page costs microseconds once cached. The one thing no stage
keeps, the newest record date, is folded in by ``update`` (:func:`note_newest_dates`) over the
records it changed, and topped up here from the few records stored since.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from searchnasa.batch.lock import lock_holder
from searchnasa.index.layout import STATE, current_generation, read_state
from searchnasa.profiles import Profile, active_profile, everything
from searchnasa.records import SOURCE_LABELS
from searchnasa.semantic.vectors import embedded_upto
from searchnasa.settings import Settings
from searchnasa.store import Store

NEWEST_SEQ_KEY = "freshness:seq"
NEWEST_KEY = "freshness:newest:{source}"
TOP_UP_LIMIT = 20000  # records stored since the last update that a status read still looks at


@dataclass
class SourceStatus:
    label: str
    records: int
    last_harvest: str | None
    newest_record_date: str | None
    waiting_for_index: int
    waiting_for_embeddings: int | None  # None: this home has no vectors


@dataclass
class IndexStatus:
    generation: str
    updated_at: str
    age_seconds: float


@dataclass
class HomeStatus:
    profile: dict[str, str | None]
    sources: dict[str, SourceStatus]
    index: IndexStatus | None
    update_running: dict[str, Any] | None = None
    checked_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def as_json(self) -> dict[str, Any]:
        """The status as of now: a cached status still tells the index's age at this moment."""
        data = asdict(self)
        if self.index is not None:
            updated = datetime.fromisoformat(self.index.updated_at).timestamp()
            data["index"]["age_seconds"] = round(max(time.time() - updated, 0.0), 1)
        data["checked_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        return data

    def footer(self) -> str:
        """"NASA NTRS: 612,345 records, updated 2026-12-01 · DOE OSTI: ..." (sources holding records)."""
        parts = []
        for status in self.sources.values():
            if not status.records:
                continue
            when = f"updated {status.last_harvest[:10]}" if status.last_harvest else "no harvest yet"
            parts.append(f"{status.label}: {status.records:,} records, {when}")
        return " · ".join(parts)


def _source_counts(store: Store, after_seq: int | None = None) -> dict[str, int]:
    """Records per source (above ``after_seq`` when given), through the id and seq indexes."""
    out = {}
    with store.reading() as conn:
        for source in SOURCE_LABELS:
            if after_seq is None:
                sql, args = "SELECT COUNT(*) FROM records WHERE id >= ? AND id < ?", (f"{source}:", f"{source};")
            else:
                sql, args = "SELECT COUNT(*) FROM records WHERE seq > ? AND source = ?", (after_seq, source)
            out[source] = conn.execute(sql, args).fetchone()[0]
    return out


def _last_harvests(store: Store) -> dict[str, str]:
    """When each source's harvest last finished a walk (the newest finished checkpoint)."""
    out: dict[str, str] = {}
    with store.reading() as conn:
        rows = conn.execute("SELECT name, state, updated_at FROM checkpoints WHERE name LIKE 'harvest:%'").fetchall()
    for name, state, updated in rows:
        source = name.split(":")[1] if name.count(":") else ""
        if source in SOURCE_LABELS and orjson.loads(state).get("phase") == "done":
            out[source] = max(out.get(source, ""), updated)
    return out


def _record_day(blob: bytes) -> tuple[str, str | None]:
    data = orjson.loads(blob)
    value = (data.get("date") or {}).get("value")
    return str(data.get("source")), str(value)[:10] if value else None


def newest_dates(store: Store, after_seq: int, limit: int | None = None) -> tuple[dict[str, str], int]:
    """The newest record date per source among records stored after ``after_seq`` (dates past
    today are announcements, not news, and are left out), and the last seq looked at."""
    today = datetime.now(timezone.utc).date().isoformat()
    newest: dict[str, str] = {}
    last = after_seq
    for n, (seq, blob) in enumerate(store.iter_json_since(after_seq)):
        if limit is not None and n >= limit:
            break
        source, day = _record_day(blob)
        last = seq
        if day and day <= today and day > newest.get(source, ""):
            newest[source] = day
    return newest, last


def note_newest_dates(store: Store) -> None:
    """Fold the records stored since the last call into the kept newest dates (run by ``update``)."""
    since = int(store.get_meta(NEWEST_SEQ_KEY) or 0)
    found, last = newest_dates(store, since)
    if last == since:
        return  # nothing stored since: write nothing
    with store.transaction() as conn:
        for source, day in found.items():
            kept = store.get_meta(NEWEST_KEY.format(source=source)) or ""
            if day > kept:
                store.set_meta(NEWEST_KEY.format(source=source), day, conn)
        store.set_meta(NEWEST_SEQ_KEY, str(last), conn)


def _newest(store: Store) -> dict[str, str]:
    kept = {s: v for s in SOURCE_LABELS if (v := store.get_meta(NEWEST_KEY.format(source=s)))}
    fresh, _ = newest_dates(store, int(store.get_meta(NEWEST_SEQ_KEY) or 0), TOP_UP_LIMIT)
    return {s: max(kept.get(s, ""), fresh.get(s, "")) for s in SOURCE_LABELS if kept.get(s) or fresh.get(s)}


def _index_status(index_dir: Path) -> tuple[IndexStatus | None, int]:
    """The live generation, when it was last committed, and the store seq it holds."""
    generation = current_generation(index_dir)
    state = read_state(generation) if generation is not None else None
    if generation is None or state is None:
        return None, 0
    mtime = (generation / STATE).stat().st_mtime
    when = datetime.fromtimestamp(mtime, timezone.utc).isoformat(timespec="seconds")
    return IndexStatus(generation.name, when, round(time.time() - mtime, 1)), state.last_seq


def profile_json(profile: Profile | None) -> dict[str, str | None]:
    shown = profile or everything()
    return {"name": profile.name if profile else None, "display_name": shown.display_name,
            "description": shown.description}


def home_status(settings: Settings, store: Store) -> HomeStatus:
    """The whole freshness report of one home (see the module docstring)."""
    counts = _source_counts(store)
    harvests = _last_harvests(store)
    newest = _newest(store)
    index, index_seq = _index_status(settings.index_dir)
    unindexed = _source_counts(store, index_seq)
    embedded = embedded_upto(settings.vectors_dir)
    unembedded = _source_counts(store, embedded) if embedded is not None else {}
    sources = {s: SourceStatus(label, counts[s], harvests.get(s), newest.get(s), unindexed[s],
                               unembedded.get(s) if embedded is not None else None)
               for s, label in SOURCE_LABELS.items()}
    holder = lock_holder(settings.home)
    running = {"pid": holder.pid, "started": holder.started, "stage": holder.stage} if holder else None
    return HomeStatus(profile_json(active_profile(settings.home)), sources, index, running)


def outside_profile(store: Store, profile: Profile | None) -> dict[str, int]:
    """Records per source the profile does not select (kept and searchable: switching profiles
    never deletes data). Reads every record, so only ``searchnasa stats`` asks."""
    out = {s: 0 for s in SOURCE_LABELS}
    if profile is None:
        return out
    for blob in store.iter_json():
        record = orjson.loads(blob)
        if profile.excludes(record) is not None:
            out[str(record.get("source"))] = out.get(str(record.get("source")), 0) + 1
    return out
