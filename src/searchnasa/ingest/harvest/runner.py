"""Run one harvest: pick full / incremental / resume, map pages, upsert them with their checkpoint.

Why here and not in the CLI: tests, the benchmark and the CLI all run the same loop; the CLI only
adds the progress bar and the summary. Each page is mapped and committed together with the walk
state that follows it (one SQLite transaction), so SIGKILL at any moment loses at most the page in
flight, and the re-run starts from the last committed page. Upserts are idempotent, so a page read
twice stores each record once.

Every page also marks its records seen by the harvest's selection in this run (``store/withdrawn.py``),
in the same transaction. ``--reconcile`` is a full walk of the selection followed by a ``confirm``
phase (``reconcile.py``): stored records the walk did not see are asked for one by one, and those
the source no longer serves are marked withdrawn.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

from searchnasa.errors import BadInput, HarvestError
from searchnasa.records import Record
from searchnasa.settings import Settings, env_value
from searchnasa.index.update import update_index
from searchnasa.ingest.mapping import stored_items
from searchnasa.store import Store, UpsertCounts
from searchnasa.store.withdrawn import SeenMarker, ensure_tables
from searchnasa.ingest.harvest import checkpoint, ntrs, osti, reconcile
from searchnasa.ingest.harvest.http import HarvestClient, RetryPolicy

log = logging.getLogger(__name__)
T = TypeVar("T")

SOURCES = ("ntrs", "osti")
RAW_FORMAT = {"ntrs": "ntrs-api", "osti": "osti-api"}
# NTRS allows about 500 requests per 15 minutes: 0.5/s stays under it with room for downloads.
DEFAULT_RATE = {"ntrs": 0.5, "osti": 1.0}
DEFAULT_PAGE_SIZE = {"ntrs": 100, "osti": 100}
# Days before the source's newest date an incremental run re-reads. OSTI releases some records
# days or weeks after their entry_date; NTRS stamps `modified` when a record is released, so a
# week covers its lags. What the overlap costs in requests: bench/README.md, "Harvest overlap".
DEFAULT_OVERLAP_DAYS = {"ntrs": 7, "osti": 30}


def _env(name: str, default: str) -> str:
    """``SEARCHNASA_HARVEST_<name>`` (declared with its default in settings.VARIABLES)."""
    return env_value(f"HARVEST_{name}") or default


def _env_int_or_none(name: str) -> int | None:
    value = env_value(f"HARVEST_{name}").strip()
    return int(value) if value else None


@dataclass
class HarvestOptions:
    """Every knob of a harvest. Defaults come from ``SEARCHNASA_HARVEST_*``; CLI flags override.

    The tuning knobs (timeouts, backoff, window limit) are configurable so tests and mirrors can run
    in seconds; the defaults are the polite values for the real services.
    """

    since: date | None = None
    until: date | None = None
    max_records: int | None = None
    query: str | None = None
    rate: float | None = None
    full: bool = False
    title: str | None = None
    distribution: str | None = None
    page_size: int | None = None
    timeout: float = field(default_factory=lambda: float(_env("TIMEOUT", "60")))
    max_attempts: int = field(default_factory=lambda: int(_env("MAX_ATTEMPTS", "6")))
    retry_budget: int | None = field(default_factory=lambda: _env_int_or_none("RETRY_BUDGET"))
    backoff_base: float = field(default_factory=lambda: float(_env("BACKOFF", "2.0")))
    backoff_cap: float = field(default_factory=lambda: float(_env("BACKOFF_CAP", "120")))
    max_retry_after: float = field(default_factory=lambda: float(_env("MAX_RETRY_AFTER", "900")))
    window_limit: int = field(default_factory=lambda: int(_env("WINDOW_LIMIT", "10000")))
    overlap_days: int | None = field(default_factory=lambda: _env_int_or_none("OVERLAP_DAYS"))
    update_index: bool = True
    reconcile: bool = False
    failure_window: int = field(default_factory=lambda: int(_env("FAILURE_WINDOW", "100")))
    max_failure_ratio: float = field(default_factory=lambda: float(_env("MAX_FAILURE_RATIO", "0.5")))
    reconcile_max: int = field(default_factory=lambda: int(_env("RECONCILE_MAX", "1000")))
    # a collection profile's selection (searchnasa.profiles): extra server-side parameters
    # (NTRS subjectCategory, OSTI subject), the checkpoint it keeps, and the filter on our side
    # (the reason a mapped record is left out, None to keep it)
    filters: dict[str, str] = field(default_factory=dict)
    checkpoint: str | None = None
    keep: Callable[[Record], str | None] | None = None

    def resolved_overlap(self, source: str) -> int:
        """Days re-read before the checkpoint's source date: the option, else the source's default."""
        return self.overlap_days if self.overlap_days is not None else DEFAULT_OVERLAP_DAYS[source]

    def resolved_rate(self, source: str, settings: Settings) -> float:
        """``--rate`` wins, then ``SEARCHNASA_HARVEST_RATE``, then the source's polite default.
        (The web's ``SEARCHNASA_RATE_LIMIT_PER_MINUTE`` is the server's limit, not the harvest's.)"""
        if self.rate is not None:
            return self.rate
        env_rate = env_value("HARVEST_RATE")
        if env_rate:
            return float(env_rate)
        return DEFAULT_RATE[source]

    def resolved_page_size(self, source: str) -> int:
        size = self.page_size or int(_env("PAGE_SIZE", str(DEFAULT_PAGE_SIZE[source])))
        if size < 1:
            raise BadInput("page size must be at least 1")
        return size

    def check(self) -> None:
        if self.since and self.until and self.since > self.until:
            raise BadInput(f"--since {self.since} is after --until {self.until}")
        if self.max_records is not None and self.max_records < 1:
            raise BadInput("--max-records must be at least 1")
        if self.rate is not None and self.rate < 0:
            raise BadInput("--rate must be 0 (no limit) or a positive number of requests per second")
        if self.overlap_days is not None and self.overlap_days < 0:
            raise BadInput("--overlap-days must be 0 or more")
        if not 0 < self.max_failure_ratio <= 1 or self.failure_window < 1:
            raise BadInput("SEARCHNASA_HARVEST_MAX_FAILURE_RATIO must be in (0, 1] and "
                           "SEARCHNASA_HARVEST_FAILURE_WINDOW at least 1")


@dataclass
class HarvestReport:
    """What a run did, for the summary line and the tests."""

    source: str
    mode: str = "full"
    counts: UpsertCounts = field(default_factory=UpsertCounts)
    fetched: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    total: int | None = None
    requests: int = 0
    retries: int = 0
    retry_reasons: dict[str, int] = field(default_factory=dict)
    finished: bool = False
    index: str = "no index"
    elapsed: float = 0.0
    withdrawn: int = 0
    still_upstream: int = 0
    restored: int = 0
    notes: list[str] = field(default_factory=list)

    def skip(self, reason: str, n: int = 1) -> None:
        if n > 0:
            self.skipped[reason] = self.skipped.get(reason, 0) + n

    def skip_if(self, reason: str | None) -> bool:
        """Count ``reason`` as a skip when there is one; whether there was."""
        if reason is not None:
            self.skip(f"filtered out: {reason}")
        return reason is not None

    @property
    def skipped_total(self) -> int:
        return sum(self.skipped.values())

    def summary(self) -> str:
        c = self.counts
        text = (f"{self.source} {self.mode} harvest: {c.new} new, {c.changed} changed, "
                f"{c.unchanged} unchanged, {self.skipped_total} skipped")
        if c.kept_richer:
            text += f", {c.kept_richer} kept (a richer copy is stored)"
        if self.restored:
            text += f", {self.restored} back after a withdrawal"
        if self.mode == "reconcile" and self.finished:
            text += (f"; {self.withdrawn} withdrawn upstream, {self.still_upstream} missing from the "
                     "listing but still served")
        text += f"; {self.requests} requests, {self.retries} retries"
        text += "" if self.finished else "; stopped early, re-run to continue"
        return text


ProgressFn = Callable[[int, int | None], None]
_END = object()


class prefetch(Iterator[T]):  # noqa: N801  (used like a function)
    """Run a page generator one page ahead in a thread, so fetching overlaps mapping and storing.

    Pages still reach the caller in order, and only the caller writes to the store, so commit order
    and crash safety are those of the plain loop. An exception in the walker is re-raised here.
    """

    def __init__(self, source: Iterator[T], depth: int = 2) -> None:
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(source,), daemon=True)
        self._thread.start()

    def _run(self, source: Iterator[T]) -> None:
        try:
            for item in source:
                while not self._stop.is_set():
                    try:
                        self._queue.put(("item", item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if self._stop.is_set():
                    return
            self._queue.put(("end", _END))
        except BaseException as exc:  # noqa: BLE001  handed to the consumer
            self._queue.put(("error", exc))

    def __iter__(self) -> "prefetch[T]":
        return self

    def __next__(self) -> T:
        kind, value = self._queue.get()
        if kind == "item":
            return value
        if kind == "error":
            raise value
        raise StopIteration

    def close(self, wait: float = 2.0) -> None:
        """Stop the producer; wait briefly (a request in flight may take until its timeout, and the
        thread is a daemon, so an interrupted run never hangs on it)."""
        self._stop.set()
        deadline = time.monotonic() + wait
        while self._thread.is_alive() and time.monotonic() < deadline:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                self._thread.join(timeout=0.05)


def _client(source: str, settings: Settings, options: HarvestOptions,
            sleep: Callable[[float], None]) -> HarvestClient:
    policy = RetryPolicy(max_attempts=options.max_attempts, budget=options.retry_budget,
                         backoff_base=options.backoff_base, backoff_cap=options.backoff_cap,
                         max_retry_after=options.max_retry_after, failure_window=options.failure_window,
                         max_failure_ratio=options.max_failure_ratio)
    return HarvestClient(source, rate=options.resolved_rate(source, settings), contact=settings.contact,
                         timeout=options.timeout, policy=policy, sleep=sleep)


def _plan(source: str, store: Store, name: str, options: HarvestOptions) -> dict[str, Any]:
    """Resume an unfinished walk, else start incremental from the checkpoint's source date (minus
    the overlap), else a full walk; ``--reconcile`` starts a full walk of the selection unless a
    reconcile is already under way."""
    resume = checkpoint.load(store, name)
    if resume.unfinished and not options.full and (
            not options.reconcile or resume.state.get("reconcile")):  # type: ignore[union-attr]
        log.info("%s: resuming the unfinished %s walk", source, resume.state["mode"])  # type: ignore[index]
        resume.state.setdefault("run_id", checkpoint.new_run_id())  # type: ignore[union-attr]
        return resume.state  # type: ignore[return-value]
    today = checkpoint.today_utc()
    since = options.since
    if (since is None and options.until is None and not options.full and not options.reconcile
            and resume.next_since is not None):
        since = checkpoint.incremental_start(resume.next_since, options.resolved_overlap(source))
    mode = "incremental" if since is not None or options.until is not None else "full"
    state = _new_state(source, mode, since, options, today, resume.next_since)
    state["run_id"] = checkpoint.new_run_id()
    state["reconcile"] = options.reconcile
    return state


def _new_state(source: str, mode: str, since: date | None, options: HarvestOptions, today: date,
               prev_since: date | None) -> dict[str, Any]:
    size = options.resolved_page_size(source)
    if source == "ntrs":
        base: dict[str, str] = {"q": options.query or "*"}
        if since is not None:
            base["modified.gte"] = since.isoformat()
        if options.until is not None:
            base["modified.lte"] = options.until.isoformat()
        return ntrs.new_state(mode=mode, base={**base, **options.filters}, page_size=size,
                              window_limit=options.window_limit, today=today, prev_since=prev_since)
    state = osti.new_state(mode=mode, query=options.query, page_size=size, start=since,
                           until=options.until, today=today, prev_since=prev_since)
    state["params"].update(options.filters)
    return state


def _kept(item: dict[str, Any], options: HarvestOptions, report: HarvestReport) -> bool:
    """Whether ``item`` passes the client-side filters; a filtered-out item is counted as skipped."""
    reason = _client_side_filter(item, options)
    if reason:
        report.skip(reason)
    return reason is None


def _client_side_filter(item: dict[str, Any], options: HarvestOptions) -> str | None:
    """NTRS ignores ``title`` and ``distribution`` filters at times, so we apply them ourselves."""
    if options.title:
        title = str(item.get("title") or "")
        if options.title.casefold() not in title.casefold():
            return "filtered out: title does not match --title"
    if options.distribution:
        if str(item.get("distribution") or "").upper() != options.distribution.upper():
            return "filtered out: distribution does not match --distribution"
    return None


def _update_index(store: Store, settings: Settings, changed: int) -> str:
    """Bring an existing lexical index up to date with the records this harvest changed, with the
    lookups ``searchnasa index`` keeps beside it (:func:`update_index`): the identifier table, so
    a report number typed in the search box finds a newly harvested record, and the acronyms."""
    if not settings.index_dir.exists():
        return "no index (run `searchnasa index` to build one)"
    if changed == 0:
        return "index already current"
    try:
        result = update_index(store, settings.index_dir)
    except Exception as exc:  # noqa: BLE001  the harvest succeeded; report the index problem only
        log.warning("index update failed: %s", exc)
        return f"index update failed: {exc}"
    done = f"index updated ({result.build.indexed} records indexed)"
    problems = [f"{what} not updated: {problem}" for what, problem in
                (("identifier table", result.identifiers_problem), ("acronym lexicon", result.acronyms_problem))
                if problem is not None]
    for problem in problems:
        log.warning("%s", problem)
    return "; ".join([done, *problems])


def _after_walk(state: dict[str, Any]) -> dict[str, Any]:
    """A finished reconcile walk is not done: its withdrawals (``confirm``) come next."""
    if state.get("phase") == "done" and state.get("reconcile"):
        return {**state, "phase": "confirm"}
    return state


def _store_page(store: Store, name: str, items: list[dict[str, Any]], commit_state: dict[str, Any],
                options: HarvestOptions, report: HarvestReport, raw_format: str) -> None:
    """Map and upsert one page with its checkpoint, marking its records seen by this run."""
    batch = list(stored_items(((raw, raw_format, raw) for raw in items if _kept(raw, options, report)),
                              lambda _, exc: report.skip(f"cannot map: {exc.message}")))
    if options.keep is not None:  # a profile's filter on our side (what the server let through)
        batch = [b for b in batch if not report.skip_if(options.keep(b.record))]
    marker = SeenMarker(name, commit_state["run_id"], [item.record.id for item in batch])
    report.counts.add(store.upsert(batch, checkpoint=(name, commit_state), also=marker))
    report.restored += marker.restored


def _walk(walker: Any, store: Store, name: str, state: dict[str, Any], options: HarvestOptions,
          report: HarvestReport, raw_format: str, on_progress: ProgressFn | None) -> dict[str, Any]:
    """Read the walker's pages into the store; the last state committed."""
    last_state = dict(state)
    pages = prefetch(walker.pages())
    try:
        for page in pages:
            report.total = page.state.get("total")
            for reason, n in page.skipped.items():
                report.skip(reason, n)
            commit_state, items = _after_walk(page.state), page.items
            if options.max_records is not None and report.fetched + len(items) >= options.max_records:
                keep = options.max_records - report.fetched
                if keep < len(items):
                    items = items[:keep]
                    commit_state = last_state  # the page is only partly stored: re-read it next run
            _store_page(store, name, items, commit_state, options, report, raw_format)
            report.fetched += len(items)
            last_state = commit_state
            if on_progress:
                on_progress(report.fetched, report.total)
            if options.max_records is not None and report.fetched >= options.max_records:
                break
    finally:
        pages.close()
    return last_state


def run_harvest(source: str, store: Store, settings: Settings, options: HarvestOptions | None = None,
                on_progress: ProgressFn | None = None,
                sleep: Callable[[float], None] = time.sleep) -> HarvestReport:
    """Harvest ``source`` into ``store``; raises HarvestError (checkpoint kept) when it must stop."""
    if source not in SOURCES:
        raise BadInput(f"unknown source {source!r}; choose one of: {', '.join(SOURCES)}")
    options = options or HarvestOptions()
    options.check()
    ensure_tables(store)
    name = options.checkpoint or checkpoint.checkpoint_name(source, options.query, options.since, options.until)
    state = _plan(source, store, name, options)
    report = HarvestReport(source=source, mode="reconcile" if state.get("reconcile") else state["mode"])
    api = settings.ntrs_api if source == "ntrs" else settings.osti_api
    started = time.perf_counter()
    client = _client(source, settings, options, sleep)
    walker = (ntrs.NtrsWalker(client, api, state) if source == "ntrs"
              else osti.OstiWalker(client, api, state))
    try:
        last_state = _walk(walker, store, name, state, options, report, RAW_FORMAT[source], on_progress)
        report.notes = list(state.get("notes") or [])
        if last_state.get("phase") == "confirm":
            outcome = reconcile.withdraw_missing(store, client, api, source, name, last_state,
                                                 options.reconcile_max)
            report.withdrawn, report.still_upstream = outcome.withdrawn, outcome.still_upstream
            last_state = outcome.state
        report.finished = last_state.get("phase") == "done"
    except HarvestError as exc:
        exc.report = report  # type: ignore[attr-defined]  (the CLI prints what was stored before the stop)
        raise
    finally:
        report.requests = client.stats.requests
        report.retries = client.stats.retries
        report.retry_reasons = dict(client.stats.reasons)
        report.elapsed = time.perf_counter() - started
        client.close()
    if options.update_index:
        changed = report.counts.new + report.counts.changed + report.withdrawn + report.restored
        report.index = _update_index(store, settings, changed)
    return report


__all__ = ["HarvestError", "HarvestOptions", "HarvestReport", "run_harvest", "SOURCES"]
