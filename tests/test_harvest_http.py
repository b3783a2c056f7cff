"""The harvest HTTP client against the real replay server: every fault retried, budgets, Retry-After."""

from __future__ import annotations

import pytest
from replay.collections import osti_items
from replay.server import ReplayServer

from searchnasa.errors import HarvestError
from searchnasa.ingest.harvest.http import (
    ClientError,
    HarvestClient,
    RetryPolicy,
    TokenBucket,
    parse_retry_after,
)
from searchnasa.ingest.harvest.osti import next_link, validate_records


@pytest.fixture(scope="module")
def server(raw_dir):
    with ReplayServer(osti_items=osti_items(raw_dir)[:50], stall=1.0) as srv:
        yield srv


@pytest.fixture
def sleeps():
    return []


def make_client(sleeps, **policy) -> HarvestClient:
    return HarvestClient("osti", rate=0, contact="ops@example.org", timeout=0.3,
                         policy=RetryPolicy(**{"backoff_base": 0.5, **policy}), sleep=sleeps.append, seed=1)


def get_page(client: HarvestClient, server: ReplayServer):
    return client.request("GET", server.osti_api + "/records", params={"rows": 10, "page": 1},
                          validate=validate_records)


@pytest.mark.parametrize("fault", ["429", "500", "502-html", "html", "timeout", "truncated", "short", "reset"])
def test_each_fault_is_retried_then_the_page_is_returned(server, sleeps, fault):
    server.faults.clear()
    server.inject(fault, fault)
    with make_client(sleeps) as client:
        resp = get_page(client, server)
    assert [r["osti_id"] for r in resp.data] == [r["osti_id"] for r in server.osti_items[:10]]
    assert client.stats.retries == 2
    assert client.stats.requests == 3
    assert len(sleeps) == 2
    assert all(0 <= s <= 0.5 * 2 ** i for i, s in enumerate(sleeps))  # full jitter under the cap


def test_retry_after_from_the_server_is_honoured(server, sleeps):
    server.inject("429:7")
    with make_client(sleeps) as client:
        get_page(client, server)
    assert sleeps == [7.0]


def test_retry_after_is_capped(server, sleeps):
    server.inject("429:5000")
    with make_client(sleeps, max_retry_after=30) as client:
        get_page(client, server)
    assert sleeps == [30]


def test_attempts_spent_raise_a_clear_resumable_error(server, sleeps):
    server.inject(*["html"] * 4)
    with make_client(sleeps, max_attempts=3) as client, pytest.raises(HarvestError) as info:
        get_page(client, server)
    server.faults.clear()
    message = info.value.message
    assert "giving up after 3 attempts" in message
    assert "Scheduled Maintenance" in message  # the HTML page is reported by its title
    assert "resume" in message


def test_run_wide_retry_budget(server, sleeps):
    with make_client(sleeps, budget=2, max_attempts=10) as client:
        server.inject("500")
        get_page(client, server)
        server.inject("500")
        get_page(client, server)
        server.inject("500")
        with pytest.raises(HarvestError, match="retry budget of 2 spent"):
            get_page(client, server)


def test_client_errors_are_not_retried(server, sleeps):
    with make_client(sleeps) as client, pytest.raises(ClientError) as info:
        client.request("GET", server.osti_api + "/records", params={"rows": "x"}, validate=validate_records)
    assert info.value.status == 400
    assert "rows" in info.value.body or "paging" in info.value.body
    assert client.stats.requests == 1


def test_user_agent_names_a_contact(server, sleeps):
    with make_client(sleeps) as client:
        get_page(client, server)
    assert "mailto:ops@example.org" in server.log[-1].user_agent
    assert server.log[-1].user_agent.startswith("searchnasa/")


def test_link_header_next(server, sleeps):
    with make_client(sleeps) as client:
        resp = get_page(client, server)
    assert resp.headers["X-Total-Count"] == "50"
    nxt = next_link(resp.headers, resp.url)
    assert nxt is not None and "page=2" in nxt and "rows=10" in nxt


def test_token_bucket_paces_requests():
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    bucket = TokenBucket(2.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(5):
        bucket.acquire()
    assert sum(slept) == pytest.approx(2.0)  # 5 requests at 2/s: the first is free, 4 wait 0.5 s
    assert TokenBucket(0, clock=lambda: 0.0, sleep=sleep).acquire() == 0.0


def test_parse_retry_after():
    assert parse_retry_after("12") == 12.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == pytest.approx(10.0)
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None
