"""OSTI harvests against the replay server: Link paging, incremental by entry_date with the
fallback, rate limiting with Retry-After, faults and the retry budget."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import httpx
import pytest
from replay.collections import osti_items, synthetic_osti
from replay.server import ReplayServer

from searchnasa.errors import HarvestError
from searchnasa.ingest.harvest import HarvestOptions, run_harvest
from searchnasa.settings import Settings
from searchnasa.store import open_store


@pytest.fixture(scope="module")
def collection(raw_dir):
    return osti_items(raw_dir)


def fast(**kw) -> HarvestOptions:
    return HarvestOptions(**{"rate": 0, "backoff_base": 0.001, "timeout": 2.0, **kw})


def settings_for(home, server: ReplayServer) -> Settings:
    return Settings(home=home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)


def stored_ids(store) -> list[str]:
    return [row[0] for row in store.conn.execute("SELECT id FROM records WHERE source='osti'")]


def expected(items) -> set[str]:
    return {f"osti:{i['osti_id']}" for i in items}


def test_server_speaks_the_osti_rules(collection):
    with ReplayServer(osti_items=collection) as server:
        url = server.osti_api + "/records"
        resp = httpx.get(url, params={"rows": 50, "page": 2})
        assert resp.status_code == 200 and isinstance(resp.json(), list) and len(resp.json()) == 50
        assert resp.headers["X-Total-Count"] == str(len(collection))
        assert 'rel="next"' in resp.headers["Link"] and 'rel="last"' in resp.headers["Link"]
        assert "page=3" in resp.headers["Link"]
        bad = httpx.get(url, params={"entry_date_start": "2019-01-01"})
        assert bad.status_code == 400 and set(bad.json()) == {"statusCode", "statusMessage", "errorDescription"}
        dated = httpx.get(url, params={"entry_date_start": "04/01/2019", "sort": "entry_date desc", "rows": 500})
        days = [r["entry_date"][:10] for r in dated.json()]
        assert days and all(d >= "2019-04-01" for d in days) and days == sorted(days, reverse=True)
        one = httpx.get(server.osti_api + "/records/1442851").json()
        assert isinstance(one, list) and one[0]["osti_id"] == "1442851"
    with ReplayServer(osti_items=collection, osti_date_filters_fail=True) as server:
        failing = httpx.get(server.osti_api + "/records", params={"entry_date_start": "04/01/2019"})
        assert failing.status_code == 500 and failing.json()["statusCode"] == 500


def test_full_harvest_follows_link_headers_to_every_record_once(collection, tmp_home):
    with ReplayServer(osti_items=collection) as server:
        store = open_store(tmp_home)
        report = run_harvest("osti", store, settings_for(tmp_home, server), fast(page_size=100))
        ids = stored_ids(store)
        assert len(ids) == len(set(ids)) == len(collection)
        assert set(ids) == expected(collection)
        assert report.total == len(collection) and report.finished
        pages = [int(e.params.get("page", 1)) for e in server.log]
        assert pages == list(range(1, len(pages) + 1)) and len(pages) == -(-len(collection) // 100)
        assert all(e.params.get("sort") == "entry_date asc" for e in server.log)
        record = store.get("osti:1442851")
        assert record.identifiers.doi == "10.1103/physrevd.8.3207"


def test_a_server_without_link_headers_is_paged_by_page_number(collection, tmp_home):
    with ReplayServer(osti_items=collection[:450], osti_link_headers=False) as server:
        store = open_store(tmp_home)
        report = run_harvest("osti", store, settings_for(tmp_home, server), fast(page_size=100))
        assert set(stored_ids(store)) == expected(collection[:450]) and report.finished
        assert [int(e.params["page"]) for e in server.log] == [1, 2, 3, 4, 5]


def test_incremental_starts_from_the_sources_newest_entry_date_minus_the_overlap(collection, tmp_home):
    """The next start is the newest ``entry_date`` the last run read (the source's clock, not ours),
    minus the overlap; the overlap's records are read again (unchanged) with the new ones."""
    items = list(collection)
    newest = max(i["entry_date"][:10] for i in items if i.get("entry_date"))
    with ReplayServer(osti_items=items) as server:
        store = open_store(tmp_home)
        settings = settings_for(tmp_home, server)
        run_harvest("osti", store, settings, fast())
        assert store.get_checkpoint("harvest:osti")["next_since"] == newest
        server.osti_items.extend(synthetic_osti(4, newest + "T00:00:00Z"))
        before = len(server.log)
        report = run_harvest("osti", store, settings, fast(overlap_days=3))
        assert report.mode == "incremental" and report.finished
        params = server.log[before].params
        start = datetime.strptime(params["entry_date_start"], "%m/%d/%Y").date()
        assert (date.fromisoformat(newest) - start).days == 3  # the overlap window
        in_overlap = sum(1 for i in items if i.get("entry_date", "")[:10] >= start.isoformat())
        assert in_overlap > 0 and report.counts.new == 4 and report.counts.unchanged == in_overlap
        assert report.fetched == in_overlap + 4


def test_incremental_falls_back_to_walking_entry_date_desc(collection, tmp_home):
    with ReplayServer(osti_items=list(collection), osti_date_filters_fail=True) as server:
        store = open_store(tmp_home)
        settings = settings_for(tmp_home, server)
        run_harvest("osti", store, settings, fast(page_size=100))
        today = datetime.now(timezone.utc).strftime("%Y-%m-%dT00:00:00Z")
        server.osti_items.extend(synthetic_osti(130, today))
        before = len(server.log)
        report = run_harvest("osti", store, settings, fast(page_size=100))
        assert report.counts.new == 130 and report.finished
        walked = server.log[before:]
        assert walked[0].status == 500  # the date filter failed (few attempts), then the fallback
        desc = [e for e in walked if e.params.get("sort") == "entry_date desc"]
        assert desc and all(e.status == 200 for e in desc)
        # stopped at the first page older than the start (newest entry date - 30 days), not all 15
        newest = max(i["entry_date"][:10] for i in collection if i.get("entry_date"))
        start = (date.fromisoformat(newest) - timedelta(days=30)).isoformat()
        days_desc = sorted((i["entry_date"][:10] for i in server.osti_items if i.get("entry_date")), reverse=True)
        first_older = next(n for n, d in enumerate(days_desc) if d < start)
        assert len(desc) == first_older // 100 + 1 < 15
        assert set(stored_ids(store)) == expected(collection) | {f"osti:{99900001 + i}" for i in range(130)}


def test_server_rate_limit_429_retry_after_is_honoured(collection, tmp_home):
    """The server's limit runs on a fake clock that the client's sleep advances: no real waiting."""
    now = [0.0]
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    items = collection[:600]
    with ReplayServer(osti_items=items, rate_limit=(4, 10.0), clock=lambda: now[0]) as server:
        store = open_store(tmp_home)
        report = run_harvest("osti", store, settings_for(tmp_home, server), fast(page_size=100),
                             sleep=sleep)
        assert set(stored_ids(store)) == expected(items)
        assert server.statuses()[429] == 1  # 4 requests pass, the 5th is refused, then 3 more pass
        assert report.retry_reasons == {"rate limited (429)": 1}
        assert slept == [10.0]  # Retry-After: 10 was waited out, not the (tiny) computed backoff


def test_faults_then_budget_spent_then_resume(collection, tmp_home):
    with ReplayServer(osti_items=collection, stall=0.6) as server:
        store = open_store(tmp_home)
        settings = settings_for(tmp_home, server)
        server.schedule({2: "reset", 3: "truncated", 5: "timeout", 6: "html", 8: "502-html",
                         9: "short", 10: "500", 11: "500", 12: "500", 13: "500"})
        with pytest.raises(HarvestError) as info:
            run_harvest("osti", store, settings, fast(page_size=100, timeout=0.3, max_attempts=4))
        assert "giving up after 4 attempts" in info.value.message
        partial = store.count()
        assert 0 < partial < len(collection)
        state = store.get_checkpoint("harvest:osti")
        assert state["phase"] == "walk" and state["done"] == partial  # the checkpoint matches the store
        report = run_harvest("osti", store, settings, fast(page_size=100))
        ids = stored_ids(store)
        assert len(ids) == len(set(ids)) == len(collection)
        assert report.counts.new == len(collection) - partial


def test_query_harvest_keeps_its_own_checkpoint(collection, tmp_home):
    with ReplayServer(osti_items=collection) as server:
        store = open_store(tmp_home)
        report = run_harvest("osti", store, settings_for(tmp_home, server), fast(query="lithium"))
        ids = stored_ids(store)
        assert ids and report.finished
        assert all("lithium" in (store.get(i).title + (store.get(i).abstract or "")).lower() for i in ids)
        assert store.get_checkpoint("harvest:osti:q=lithium")["phase"] == "done"
        assert store.get_checkpoint("harvest:osti") is None
