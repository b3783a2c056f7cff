"""The harvest stage of ``update``: every selection of the profile, each through ``run_harvest``.

Why one walk per selection: NTRS's ``subjectCategory`` takes one value per request, and a query
term is its own search on either API, so a profile's records of a source are the union of a few
walks. Each walk keeps its own checkpoint (``Selection.checkpoint``), so each is incremental and
resumable on its own, and a record two walks find is stored once (upserts are idempotent). What a
server-side filter lets through that the profile does not select (a full-text hit outside the
title and abstract, a date outside the bounds) is dropped on our side by ``Profile.excludes``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from searchnasa.ingest.harvest import HarvestOptions, HarvestReport, run_harvest
from searchnasa.ingest.harvest import checkpoint as checkpoints
from searchnasa.ingest.harvest.http import HarvestClient
from searchnasa.ingest.harvest.ntrs import validate_search
from searchnasa.ingest.harvest.osti import osti_date, validate_records
from searchnasa.ingest.harvest.runner import DEFAULT_PAGE_SIZE, DEFAULT_RATE
from searchnasa.profiles import Profile, Selection
from searchnasa.records import Record
from searchnasa.settings import Settings, env_value
from searchnasa.store import Store

SelectionProgress = Callable[[Selection, int, int, int | None], None]
"""Told (selection, its number from 1, records fetched by the stage so far, the stage's total as
far as the walks so far reported it, or None) after each page."""


@dataclass
class SourceTally:
    """One source's part of the summary: what its walks stored, and what they cost."""

    new: int = 0
    changed: int = 0
    unchanged: int = 0
    withdrawn: int = 0
    skipped: int = 0
    fetched: int = 0
    requests: int = 0
    retries: int = 0
    walks: int = 0
    modes: dict[str, int] = field(default_factory=dict)

    def add(self, report: HarvestReport) -> None:
        self.new += report.counts.new
        self.changed += report.counts.changed
        self.unchanged += report.counts.unchanged
        self.withdrawn += int(getattr(report, "withdrawn", 0) or 0)  # reported by a reconcile pass
        self.skipped += report.skipped_total
        self.fetched += report.fetched
        self.requests += report.requests
        self.retries += report.retries
        self.walks += 1
        self.modes[report.mode] = self.modes.get(report.mode, 0) + 1


def _keep(profile: Profile) -> Callable[[Record], str | None]:
    return lambda record: profile.excludes(record.model_dump(mode="json"))


def selection_options(profile: Profile, selection: Selection, rate: float | None,
                      page_size: int | None, reconcile: bool = False) -> HarvestOptions:
    """The ``run_harvest`` options of one selection (the index is the next stage's job)."""
    return HarvestOptions(query=selection.query, filters=dict(selection.filters), checkpoint=selection.checkpoint,
                          keep=_keep(profile), rate=rate, page_size=page_size, update_index=False,
                          reconcile=reconcile)


def harvest_source(source: str, profile: Profile, store: Store, settings: Settings, *,
                   rate: float | None = None, page_size: int | None = None,
                   on_progress: SelectionProgress | None = None, reconcile: bool = False) -> SourceTally:
    """Run every selection of ``source`` in turn; a HarvestError stops the stage (checkpoints kept).
    ``reconcile``: each selection is walked whole and its stored records missing upstream are
    marked withdrawn (harvest/reconcile.py)."""
    tally = SourceTally()
    for n, selection in enumerate(profile.selections(source), start=1):
        options = selection_options(profile, selection, rate, page_size, reconcile)
        before = tally.fetched  # the stage's progress counts every walk's records so far

        def progress(done: int, total: int | None, s: Selection = selection, k: int = n, b: int = before) -> None:
            if on_progress is not None:
                on_progress(s, k, b + done, None if total is None else b + total)

        tally.add(run_harvest(source, store, settings, options, on_progress=progress))
    return tally


@dataclass
class WalkEstimate:
    """What ``--dry-run`` says about one selection: its mode and, when the server told, its size."""

    selection: Selection
    mode: str
    records: int | None
    requests: int | None
    seconds: float | None


def _incremental_since(store: Store, selection: Selection) -> tuple[str, date | None]:
    """How the next walk of ``selection`` starts: resume, incremental (from when) or full."""
    resume = checkpoints.load(store, selection.checkpoint)
    if resume.unfinished:
        return "resume", None
    if resume.next_since is not None:
        overlap = HarvestOptions().resolved_overlap(selection.source)  # as the harvest will read it
        return "incremental", checkpoints.incremental_start(resume.next_since, overlap)
    return "full", None


def _count(client: HarvestClient, settings: Settings, selection: Selection, since: date | None) -> int:
    """One request: how many records the selection's next walk would read."""
    if selection.source == "ntrs":
        params = {"q": selection.query or "*", **selection.filters, "page.size": 1, "page.from": 0}
        if since is not None:
            params["modified.gte"] = since.isoformat()
        url = settings.ntrs_api.rstrip("/") + "/citations/search"
        return int(client.request("GET", url, params=params, validate=validate_search).data["stats"]["total"])
    params = {"rows": 1, "page": 1, **selection.filters}
    if selection.query:
        params["q"] = selection.query
    if since is not None:
        params["entry_date_start"] = osti_date(since)
    resp = client.request("GET", settings.osti_api.rstrip("/") + "/records", params=params,
                          validate=validate_records)
    total = resp.headers.get("x-total-count", "")
    return int(total) if total.strip().isdigit() else len(resp.data)


def estimate_walks(source: str, profile: Profile, store: Store, settings: Settings,
                   rate: float | None, page_size: int | None) -> list[WalkEstimate]:
    """Ask each selection's size (one polite request each) and turn it into requests and time."""
    rate = rate if rate is not None else float(env_value("HARVEST_RATE") or DEFAULT_RATE[source])
    size = page_size or int(env_value("HARVEST_PAGE_SIZE") or DEFAULT_PAGE_SIZE[source])
    window = int(env_value("HARVEST_WINDOW_LIMIT"))
    out = []
    with HarvestClient(source, rate=rate, contact=settings.contact, timeout=30.0) as client:
        for selection in profile.selections(source):
            mode, since = _incremental_since(store, selection)
            try:
                records: int | None = _count(client, settings, selection, since)
            except Exception:  # noqa: BLE001  an estimate that cannot be made says "unknown"
                records = None
            requests = None
            if records is not None:  # pages, plus NTRS's window counts and its undated-records pass
                requests = math.ceil(records / size) + 1
                if source == "ntrs":
                    requests += 2 * math.ceil(records / window) + 3
            seconds = requests / rate if requests is not None and rate > 0 else (0.0 if requests is not None else None)
            out.append(WalkEstimate(selection, mode, records, requests, seconds))
    return out
