"""NTRS harvests against the replay server: the whole collection exactly once, windows, faults,
incremental runs, client-side filters and journal metadata."""

from __future__ import annotations

import copy
from datetime import date, datetime, timedelta, timezone

import httpx
import pytest
from replay.collections import ntrs_items, synthetic_chorus, synthetic_ntrs
from replay.server import ReplayServer

from searchnasa.ingest.harvest import HarvestOptions, run_harvest
from searchnasa.settings import Settings
from searchnasa.store import open_store


@pytest.fixture(scope="module")
def collection(raw_dir):
    return ntrs_items(raw_dir)


def fast(**kw) -> HarvestOptions:
    """Tests run with the rate limit off and millisecond backoff."""
    return HarvestOptions(**{"rate": 0, "backoff_base": 0.001, "timeout": 2.0, **kw})


def settings_for(home, server: ReplayServer) -> Settings:
    return Settings(home=home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)


def stored_ids(store) -> list[str]:
    return [row[0] for row in store.conn.execute("SELECT id FROM records WHERE source='ntrs'")]


def expected_ids(items) -> set[str]:
    return {f"ntrs:{item['id']}" for item in items}


def test_server_speaks_the_ntrs_rules(collection):
    with ReplayServer(collection[:300], window=200) as server:
        url = server.ntrs_api + "/citations/search"
        everything = httpx.get(url, params={"q": "*", "page.size": 5}).json()
        assert set(everything) == {"stats", "results", "aggregations"}
        assert everything["stats"]["total"] == 300 and len(everything["results"]) == 5
        assert httpx.get(url, params={"q": "", "page.size": 5}).json()["stats"]["total"] == 0
        too_far = httpx.get(url, params={"q": "*", "page.from": 150, "page.size": 100})
        assert too_far.status_code == 400
        assert too_far.json()["error"]["type"] == "search_phase_execution_exception"
        assert httpx.get(url, params={"q": "*", "published.gte": "1965"}).status_code == 400
        window = {"q": "*", "published.gte": "1965-01-01", "published.lte": "1965-12-31",
                  "sort.field": "published", "sort.order": "asc", "page.size": 100}
        got = httpx.get(url, params=window).json()
        days = [r["publications"][0]["publicationDate"][:10] for r in got["results"]]
        assert days and days == sorted(days) and all(d.startswith("1965") for d in days)
        nested = {"q": "*", "published": {"gte": "1965-01-01", "lte": "1965-12-31"},
                  "sort": {"field": "published", "order": "asc"}, "page": {"size": 100}}
        posted = httpx.post(url, json=nested).json()
        assert [r["id"] for r in posted["results"]] == [r["id"] for r in got["results"]]
        ignored = httpx.get(url, params={"q": "*", "title": "no such title at all", "page.size": 1}).json()
        assert ignored["stats"]["total"] == 300  # the title filter is ignored, as on the real API


def test_full_harvest_every_record_exactly_once_with_windows_split(collection, tmp_home):
    with ReplayServer(collection, window=800) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server), fast(window_limit=800))
        ids = stored_ids(store)
        assert len(ids) == len(set(ids)) == len(collection)
        assert set(ids) == expected_ids(collection)
        assert report.counts.new == len(collection) and report.skipped == {}
        assert report.finished and report.total == len(collection)
        assert 400 not in server.statuses()  # the client never asked past the window
        windows = {(e.params.get("published.gte"), e.params.get("published.lte")) for e in server.log}
        assert len(windows) > 10  # the collection (5,027 records) was cut into many windows
        # the two records without a publication date were found by the gap pass
        undated = [i for i in collection if not i.get("publications")]
        assert undated and all(store.exists(f"ntrs:{i['id']}") for i in undated)
        assert store.get_checkpoint("harvest:ntrs")["phase"] == "done"
        raw = dict((rid, raw) for rid, fmt, raw in store.iter_raw() if fmt == "ntrs-api")
        assert len(raw) == len(collection)  # raw payloads archived


def test_client_learns_a_smaller_window_from_the_400(collection, tmp_home):
    with ReplayServer(collection[:1500], window=300) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server), fast(page_size=100))
        assert set(stored_ids(store)) == expected_ids(collection[:1500])
        assert report.counts.new == 1500
        assert server.statuses()[400] == 1  # one refusal, then the client split under 300
        assert store.get_checkpoint("harvest:ntrs")["limit"] == 300


def test_estimated_totals_are_treated_as_lower_bounds(collection, tmp_home):
    """When totals are capped at the window (``estimate: true``), windows are split anyway."""
    with ReplayServer(collection[:1500], window=300, total_cap=300) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server), fast(window_limit=300))
        assert set(stored_ids(store)) == expected_ids(collection[:1500])
        assert report.counts.new == 1500 and report.total is None
        assert 400 not in server.statuses()


def test_items_that_cannot_be_mapped_are_skipped_with_a_reason(collection, tmp_home):
    broken = {"title": "SYNTHETIC citation without an id (generated by the test suite)",
              "publications": [{"publicationDate": "1970-01-01T00:00:00.0000000+00:00"}]}
    with ReplayServer(collection[:100] + [broken]) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server), fast())
        assert store.count() == 100 and report.finished
        assert report.skipped == {"cannot map: NTRS citation without an id": 1}


def test_single_day_over_the_window_is_cut_by_created_date_or_reported(collection, tmp_home):
    """1965-01-01 alone holds 187 records: with a 100-record window the day is split on created."""
    year_1965 = [i for i in collection
                 if (i.get("publications") or [{}])[0].get("publicationDate", "").startswith("1965")]
    assert len(year_1965) > 700
    collection = year_1965
    with ReplayServer(collection, window=100) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server),
                             fast(window_limit=100, page_size=100))
        assert any("created.gte" in e.params for e in server.log)
        ids = stored_ids(store)
        assert len(ids) == len(set(ids))
        # nothing vanishes silently: what the window cannot reach is counted with its reason
        assert len(ids) + report.skipped_total == len(collection)
        assert all("result window" in reason for reason in report.skipped)
        assert store.exists("ntrs:" + str(next(i["id"] for i in collection
                                               if (i.get("publications") or [{}])[0]
                                               .get("publicationDate", "").startswith("1965-01-01"))))


def test_faults_during_a_harvest_lose_and_duplicate_nothing(collection, tmp_home):
    with ReplayServer(collection[:2000], window=10000, stall=0.6) as server:
        server.schedule({2: "429", 3: "500", 5: "timeout", 8: "truncated", 9: "html", 12: "reset",
                         13: "short", 15: "502-html", 16: "429", 17: "429"})
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server), fast(timeout=0.3))
        ids = stored_ids(store)
        assert len(ids) == len(set(ids)) == 2000
        assert set(ids) == expected_ids(collection[:2000])
        # one retry per injected fault; only timeouts may add more, when a loaded machine (the 2
        # cores shared with other jobs) answers an ordinary request slower than the 0.3 s timeout
        timeouts = sum(n for reason, n in report.retry_reasons.items() if "timeout" in reason)
        assert report.retries - timeouts == 9 and timeouts >= 1, report.retry_reasons
        reasons = " ".join(report.retry_reasons)
        for word in ("429", "500", "timeout", "unexpected body", "connection error", "502"):
            assert word in reasons


def test_incremental_run_picks_up_added_and_modified_records(collection, tmp_home):
    items = copy.deepcopy(collection[:1000])
    with ReplayServer(items) as server:
        store = open_store(tmp_home)
        settings = settings_for(tmp_home, server)
        first = run_harvest("ntrs", store, settings, fast())
        assert first.mode == "full" and first.counts.new == 1000
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.0000000+00:00")
        added = synthetic_ntrs(3, now) + synthetic_chorus(2, now)
        edited = server.ntrs_items[10]
        modified = server.update_ntrs(
            edited["id"], modified=now,
            abstract=(edited.get("abstract") or "") + " [SYNTHETIC EDIT by the test suite]")
        server.add_ntrs(added)
        before = len(server.log)
        second = run_harvest("ntrs", store, settings, fast())
        assert second.mode == "incremental" and second.finished
        assert (second.counts.new, second.counts.changed) == (5, 1)
        # only what changed was read, and what the overlap re-reads (modified within 7 days of the
        # newest `modified` the first run saw), not the whole collection
        newest = max((i.get("modified") or "")[:10] for i in collection[:1000])
        start = (date.fromisoformat(newest) - timedelta(days=7)).isoformat()
        assert all("modified.gte" not in e.params or e.params["modified.gte"] == start
                   for e in server.log[before:])
        in_overlap = sum(1 for i in server.ntrs_items if (i.get("modified") or "")[:10] >= start)
        assert second.fetched == in_overlap < 20
        assert len(server.log) - before < 10
        assert all("modified.gte" in e.params for e in server.log[before:])
        assert "SYNTHETIC EDIT" in store.get(f"ntrs:{modified['id']}").abstract
        chorus = store.get("ntrs:20990000000000")
        assert chorus.kind == "journal_metadata" and chorus.links.pdf is None
        third = run_harvest("ntrs", store, settings, fast())
        assert (third.counts.new, third.counts.changed, third.counts.unchanged) == (0, 0, 6)


def test_since_and_until_bound_the_modified_date_and_keep_their_own_checkpoint(collection, tmp_home):
    items = copy.deepcopy(collection[:50])
    with ReplayServer(items) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server),
                             fast(since=date(2016, 1, 1), until=date(2017, 12, 31)))
        assert report.mode == "incremental"
        expected = {f"ntrs:{i['id']}" for i in items
                    if "2016-01-01" <= (i.get("modified") or "")[:10] <= "2017-12-31"}
        assert expected and set(stored_ids(store)) == expected
        assert store.get_checkpoint("harvest:ntrs") is None  # the main harvest is untouched
        assert store.get_checkpoint("harvest:ntrs:range=2016-01-01..2017-12-31")["phase"] == "done"


def test_title_and_distribution_are_filtered_on_our_side(collection, tmp_home):
    with ReplayServer(collection[:500]) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server), fast(title="wing"))
        ids = stored_ids(store)
        assert ids and all("wing" in store.get(i).title.lower() for i in ids)
        assert len(ids) + report.skipped_total == 500
        assert list(report.skipped) == ["filtered out: title does not match --title"]


def test_distribution_is_filtered_on_our_side(collection, tmp_home):
    items = collection[:200]  # the 27 saved API items carry "distribution": "PUBLIC"; CSV rows carry none
    public = {f"ntrs:{i['id']}" for i in items if i.get("distribution") == "PUBLIC"}
    with ReplayServer(items) as server:
        store = open_store(tmp_home)
        report = run_harvest("ntrs", store, settings_for(tmp_home, server), fast(distribution="public"))
        assert public and set(stored_ids(store)) == public
        assert report.skipped == {"filtered out: distribution does not match --distribution":
                                  len(items) - len(public)}


def test_max_records_stops_and_the_next_run_continues(collection, tmp_home):
    with ReplayServer(collection[:700]) as server:
        store = open_store(tmp_home)
        settings = settings_for(tmp_home, server)
        first = run_harvest("ntrs", store, settings, fast(max_records=250))
        assert first.fetched == 250 and not first.finished
        assert store.count() == 250
        second = run_harvest("ntrs", store, settings, fast())
        assert second.finished and second.mode == "full"
        assert set(stored_ids(store)) == expected_ids(collection[:700])
        assert second.counts.new == 450
