"""``harvest --reconcile`` against the replay server: a record withdrawn upstream is hidden from
search and related papers, kept in the store with the day it disappeared, and shown as withdrawn
on its record page and in its JSON; records that merely left a query's selection stay; a listing
that lost too much marks nothing."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest
from replay.collections import ntrs_items, osti_items
from replay.server import ReplayServer
from semantic_util import semantic_home_from
from server_util import running_server
from test_harvest_cli import env_for, run_cli

from searchnasa.errors import HarvestError
from searchnasa.ingest.harvest import HarvestOptions, run_harvest
from searchnasa.search.related import find_related
from searchnasa.search.schemas import SearchRequest
from searchnasa.search.service import SearchService
from searchnasa.semantic.provider import VectorProvider
from searchnasa.settings import Settings
from searchnasa.store import open_store
from searchnasa.store.withdrawn import withdrawn_among, withdrawn_on


def fast(**kw) -> HarvestOptions:
    return HarvestOptions(**{"rate": 0, "backoff_base": 0.0, "timeout": 5.0, **kw})


def today() -> str:
    return datetime.now(timezone.utc).date().isoformat()


def service_for(settings: Settings) -> SearchService:
    return SearchService(settings, semantic=VectorProvider(settings.vectors_dir))


def search_ids(service: SearchService, query: str) -> list[str]:
    return [hit.id for hit in service.search(SearchRequest(q=query, per_page=50), fold_copies=False).results]


def pick_withdrawn_pair(service: SearchService, served: set[str]) -> tuple[str, str]:
    """A served OSTI record X and a seed Y whose related papers list X and whose nearest vectors
    hold X: after the withdrawal the vector is still there, so only the withdrawal can hide X."""
    for rid in sorted(served):
        record = service.get(rid)
        if not record.abstract or rid not in search_ids(service, f'"{record.title}"'):
            continue
        for seed in find_related(service, [rid], limit=3):
            vector = service.semantic.vectors_for([seed.id]).get(seed.id)
            near = {n for n, _ in service.semantic.nearest(vector, 60)} if vector is not None else set()
            if rid in near and rid in {r.id for r in find_related(service, [seed.id], limit=20)}:
                return rid, seed.id
    raise AssertionError("no related pair found in the sample")


@pytest.fixture
def home(indexed_home: Path, tmp_path: Path) -> Path:
    target = tmp_path / "home"
    target.mkdir()
    return semantic_home_from(indexed_home, target)


def test_reconcile_hides_a_withdrawn_record_from_search_and_related_and_keeps_it(
        home: Path, raw_dir: Path, tmp_path: Path) -> None:
    items = osti_items(raw_dir)
    served = {f"osti:{i['osti_id']}" for i in items}
    settings = Settings().with_home(home)
    before = service_for(settings)
    gone, seed = pick_withdrawn_pair(before, served)
    with ReplayServer(osti_items=items) as server:
        settings = Settings(home=home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)
        server.remove_osti(gone.split(":", 1)[1])
        store = open_store(home)
        sample_osti = {r[0] for r in store.conn.execute("SELECT id FROM records WHERE source='osti'")}
        report = run_harvest("osti", store, settings, fast(reconcile=True))
        # every stored OSTI record the source does not serve: the removed one, and the sample's
        # records from dumps the replay does not hold
        assert report.mode == "reconcile" and report.finished
        assert report.withdrawn == len(sample_osti - (served - {gone})) and report.still_upstream == 0
        assert report.index.startswith("index updated")
        assert withdrawn_on(store, gone) == today()
        assert store.exists(gone) and store.get(gone).title == before.get(gone).title  # kept

        after = service_for(settings)
        title = after.get(gone).title
        assert gone not in search_ids(after, f'"{title}"')
        assert gone not in search_ids(after, gone)  # nor as an identifier typed alone
        vector = after.semantic.vectors_for([seed]).get(seed)
        assert gone in {n for n, _ in after.semantic.nearest(vector, 60)}  # its vector remains...
        assert gone not in {r.id for r in find_related(after, [seed], limit=20)}  # ...yet it is not listed
        assert after.withdrawn_on(gone) == today() and after.withdrawn_on(seed) is None

        with running_server(home, tmp_path / "server.log") as web:
            page = httpx.get(f"{web.base_url}/records/{gone}")
            assert page.status_code == 200
            assert f"Withdrawn upstream on {today()}" in page.text and title[:40] in page.text
            record = httpx.get(f"{web.base_url}/api/records/{gone}").json()
            assert record["withdrawn_on"] == today() and record["id"] == gone
            assert httpx.get(f"{web.base_url}/api/records/{seed}").json()["withdrawn_on"] is None
            found = httpx.get(f"{web.base_url}/api/search", params={"q": f'"{title}"'}).json()
            assert gone not in [r["id"] for r in found["results"]]
            related = httpx.get(f"{web.base_url}/api/records/{seed}/related", params={"limit": 20}).json()
            assert related["results"] and gone not in [r["id"] for r in related["results"]]
            assert "Withdrawn upstream" not in httpx.get(f"{web.base_url}/records/{seed}").text

        # it comes back upstream: the next reconcile reads it again and restores it
        server.osti_items.append(next(i for i in items if f"osti:{i['osti_id']}" == gone))
        again = run_harvest("osti", store, settings, fast(reconcile=True))
        assert again.restored == 1 and again.withdrawn == 0
        assert withdrawn_on(store, gone) is None
        assert gone in search_ids(service_for(settings), f'"{title}"')


def test_reconcile_of_a_query_keeps_records_that_only_left_the_selection(raw_dir: Path, tmp_home: Path) -> None:
    items = [i for i in ntrs_items(raw_dir)[:1500] if "wing" in (i.get("title") or "").lower()]
    others = ntrs_items(raw_dir)[1500:1600]
    assert len(items) >= 5
    with ReplayServer(items + others) as server:
        settings = Settings(home=tmp_home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)
        store = open_store(tmp_home)
        run_harvest("ntrs", store, settings, fast(query="wing"))
        run_harvest("ntrs", store, settings, fast())  # the main selection stores the others too
        removed, edited = items[0], items[1]
        server.remove_ntrs(removed["id"])
        server.update_ntrs(edited["id"], title="SYNTHETIC EDIT: a title without the query word",
                           abstract="SYNTHETIC EDIT by the test suite")
        report = run_harvest("ntrs", store, settings, fast(query="wing", reconcile=True))
        assert report.mode == "reconcile" and report.finished
        assert (report.withdrawn, report.still_upstream) == (1, 1)  # the edited one is still served
        hidden = withdrawn_among(store, [f"ntrs:{i['id']}" for i in items + others])
        assert hidden == {f"ntrs:{removed['id']}": today()}
        assert store.get_checkpoint("harvest:ntrs:q=wing")["phase"] == "done"


def test_a_listing_that_lost_too_much_marks_nothing_then_resumes(raw_dir: Path, tmp_home: Path) -> None:
    items = ntrs_items(raw_dir)[:200]
    with ReplayServer(items) as server:
        settings = Settings(home=tmp_home, ntrs_api=server.ntrs_api, osti_api=server.osti_api)
        store = open_store(tmp_home)
        run_harvest("ntrs", store, settings, fast())
        for item in items[:5]:
            server.remove_ntrs(item["id"])
        with pytest.raises(HarvestError, match="5 stored records are missing from the listing"):
            run_harvest("ntrs", store, settings, fast(reconcile=True, reconcile_max=2))
        assert withdrawn_among(store, [f"ntrs:{i['id']}" for i in items]) == {}
        assert store.get_checkpoint("harvest:ntrs")["phase"] == "confirm"
        before = len(server.log)
        resumed = run_harvest("ntrs", store, settings, fast(reconcile_max=10))
        assert resumed.mode == "reconcile" and resumed.withdrawn == 5
        assert len(server.log) - before == 5  # no new walk: one confirmation per missing record


def test_cli_reconcile_reports_withdrawals(raw_dir: Path, tmp_home: Path) -> None:
    items = osti_items(raw_dir)[:150]
    with ReplayServer(osti_items=items) as server:
        env = env_for(tmp_home, server)
        assert run_cli(["harvest", "osti", "--rate", "0"], env).returncode == 0
        server.remove_osti(items[3]["osti_id"])
        result = run_cli(["harvest", "osti", "--rate", "0", "--reconcile", "--json"], env)
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["mode"] == "reconcile" and summary["finished"]
        assert (summary["withdrawn"], summary["still_upstream"]) == (1, 0)
        text = run_cli(["harvest", "osti", "--rate", "0", "--reconcile"], env)
        assert "0 withdrawn upstream" in text.stdout  # already marked: nothing new
        assert withdrawn_on(open_store(tmp_home), f"osti:{items[3]['osti_id']}") == today()
