"""Harvest robustness against the replay server: a steady few percent of transient failures over a
10,000-request harvest, a server failing most requests, a server that ignores the NTRS ``created``
filter, and OSTI records released days after their ``entry_date``."""

from __future__ import annotations

import random
from datetime import date, timedelta

import pytest
from replay.collections import ntrs_items, osti_items, synthetic_osti
from replay.server import ReplayServer

from searchnasa.errors import HarvestError
from searchnasa.ingest.harvest import HarvestOptions, run_harvest
from searchnasa.ingest.harvest.http import FailureWindow
from searchnasa.settings import Settings
from searchnasa.store import open_store


def fast(**kw) -> HarvestOptions:
    """No rate limit, no backoff: the faults cost no waiting."""
    return HarvestOptions(**{"rate": 0, "backoff_base": 0.0, "timeout": 5.0, **kw})


def settings_for(home, server: ReplayServer) -> Settings:
    return Settings(home=home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)


def stored(store, source: str) -> list[str]:
    return [r[0] for r in store.conn.execute("SELECT id FROM records WHERE source = ?", (source,))]


def flaky_schedule(requests: int, share: float, seed: int) -> dict[int, str]:
    """Request number -> a transient fault (429 or 500), for about ``share`` of the requests."""
    rng = random.Random(seed)
    return {n: rng.choice(["429", "500"]) for n in range(1, requests + 1) if rng.random() < share}


def test_failure_window_counts_only_the_last_attempts():
    window = FailureWindow(4)
    for failed in (True, True, False, False, False, False):
        window.add(failed)
    assert (window.seen, window.failures, window.ratio()) == (4, 0, 0.0)
    window.add(True)
    assert window.failures == 1 and window.ratio() == 0.25


def test_10000_request_harvest_with_9_percent_transient_failures_completes(raw_dir, tmp_home):
    """One record a page, so 9,200 pages and about 10,100 requests; a run-wide budget of 200
    retries (the old rule) would have stopped it after about 2,200 requests."""
    real = osti_items(raw_dir)
    items = real + synthetic_osti(9200 - len(real), "2024-01-02T00:00:00Z")
    with ReplayServer(osti_items=items) as server:
        server.schedule(flaky_schedule(11000, 0.09, seed=7))
        store = open_store(tmp_home)
        report = run_harvest("osti", store, settings_for(tmp_home, server), fast(page_size=1))
        assert report.finished and report.mode == "full"
        assert report.requests >= 10000
        assert 0.07 < report.retries / report.requests < 0.11, report.retry_reasons
        assert set(report.retry_reasons) == {"rate limited (429)", "server error (500)"}
        ids = stored(store, "osti")
        assert len(ids) == len(set(ids)) == len(items)


def test_a_server_failing_most_requests_stops_the_harvest_resumably(raw_dir, tmp_home):
    items = osti_items(raw_dir)[:300]
    with ReplayServer(osti_items=items) as server:
        store = open_store(tmp_home)
        settings = settings_for(tmp_home, server)
        # healthy for 20 requests, then 4 of every 5 fail: no one request fails 6 times running,
        # but most of the last 100 fail
        server.schedule({n: "500" for n in range(21, 400) if n % 5})
        with pytest.raises(HarvestError) as info:
            run_harvest("osti", store, settings, fast(page_size=5, max_attempts=6))
        message = info.value.message
        assert "the server failed" in message and "of the last" in message and "resume" in message
        stopped_at = len(server.log)
        assert stopped_at < 200  # it stopped on the failure share, well before the schedule ran out
        partial = store.count()
        assert 0 < partial < len(items)
        server.scheduled.clear()
        resumed = run_harvest("osti", store, settings, fast(page_size=5))
        assert resumed.finished and set(stored(store, "osti")) == {f"osti:{i['osti_id']}" for i in items}


@pytest.mark.parametrize("total_cap", [None, 100], ids=["exact totals", "estimated totals"])
def test_a_server_ignoring_the_created_filter_is_noticed_not_walked_day_by_day(raw_dir, tmp_home, total_cap):
    """1965-01-01 alone holds 187 records, over a 100-record window: the walk splits the day by
    ``created``, sees the halves report the whole day (and records created outside them), stops
    splitting that way, reads the day as far as the window allows and says why the rest is
    skipped. Without the check, estimated totals split every day since 1900 (tens of thousands of
    requests); exact ones cost a needless split per level."""
    year_1965 = [i for i in ntrs_items(raw_dir)
                 if (i.get("publications") or [{}])[0].get("publicationDate", "").startswith("1965")]
    with ReplayServer(year_1965, window=100, total_cap=total_cap, ntrs_ignored_filters=("created",)) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server),
                             fast(window_limit=100, page_size=100))
        assert report.finished
        created_requests = [e for e in server.log if "created.gte" in e.params]
        assert 0 < len(created_requests) <= 4, len(created_requests)
        assert len(server.log) < 100
        assert any("ignores the created filter" in note for note in report.notes)
        ids = stored(store, "ntrs")
        assert len(ids) == len(set(ids))
        over = {reason: n for reason, n in report.skipped.items() if "1965-01-01" in reason}
        assert over and all("the server ignores the created filter" in reason for reason in over)
        if total_cap is None:  # exact totals: every record is stored or counted, with its reason
            assert len(ids) + report.skipped_total == len(year_1965)
        state = store.get_checkpoint("harvest:ntrs")
        assert state["ignored"] == ["created"] and state["phase"] == "done"


def test_records_released_after_a_harvest_with_older_entry_dates_are_caught(raw_dir, tmp_home):
    """OSTI releases some records days or weeks after their ``entry_date``. The next start is the
    source's newest entry date minus the overlap (30 days by default), so a record released late
    with an entry date 10 days before the last harvest's newest is read; one 45 days older is past
    the overlap, and ``--reconcile`` (a full walk) catches it."""
    items = osti_items(raw_dir)
    newest = date.fromisoformat(max(i["entry_date"][:10] for i in items if i.get("entry_date")))
    with ReplayServer(osti_items=items) as server:
        store = open_store(tmp_home)
        settings = settings_for(tmp_home, server)
        run_harvest("osti", store, settings, fast())
        late = synthetic_osti(1, f"{newest - timedelta(days=10)}T00:00:00Z", start_id=99910001)
        later = synthetic_osti(1, f"{newest - timedelta(days=45)}T00:00:00Z", start_id=99920001)
        server.osti_items.extend(late + later)
        incremental = run_harvest("osti", store, settings, fast())
        assert incremental.mode == "incremental" and incremental.counts.new == 1
        assert store.exists("osti:99910001") and not store.exists("osti:99920001")
        reconciled = run_harvest("osti", store, settings, fast(reconcile=True))
        assert reconciled.mode == "reconcile" and reconciled.finished
        assert reconciled.counts.new == 1 and store.exists("osti:99920001")
        assert reconciled.withdrawn == 0
