"""Concurrent load on a real ``searchnasa serve``, and the per-client rate limit under it.

Uses the same driver as ``bench/load_test.py`` (short here: 16 clients for 3 s); the figures it
prints belong in ``bench/``, the test only asserts what must hold: zero errors, and, with the limit
configured, 429s that carry ``Retry-After`` while another client address is still served.
Searches here are keyword searches (``mode=lexical``): the default hybrid mode embeds every new
query on the CPU, whose capacity on the shared 2-core machine is measured in ``bench/README.md``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import time
import sys
from pathlib import Path

import httpx
import pytest

from server_util import copy_home, running_server

ROOT = Path(__file__).resolve().parents[1]


def load_driver():
    spec = importlib.util.spec_from_file_location("load_test", ROOT / "bench" / "load_test.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["load_test"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def home(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_home(indexed_home, tmp_path_factory.mktemp("load") / "home")


def test_sixteen_clients_see_no_errors_and_hybrid_sheds_load(home: Path, tmp_path: Path) -> None:
    """Keyword searches first; then the default mode, which embeds each new query on the CPU:
    while the model loads, or while the encoder is busy past a short wait, a search answers with
    keyword matches and says so, rather than queue past the client's deadline; once idle,
    searches are hybrid again."""
    driver = load_driver()
    with running_server(home, tmp_path / "server.log", workers=2) as server:
        report = asyncio.run(driver.run_load(server.base_url, clients=16, seconds=3.0, mode="lexical"))
        assert report.requests >= 16, report
        assert report.errors == 0, report.error_samples
        assert report.rate_limited == 0  # the limit is off by default
        assert set(report.statuses) == {"200"}, report.statuses
        assert {"api_search", "page_search"} <= set(report.by_kind_p95_ms), report.by_kind_p95_ms

        hybrid = asyncio.run(driver.run_load(server.base_url, clients=16, seconds=3.0))
        assert hybrid.errors == 0, (hybrid.statuses, hybrid.error_samples)
        assert sum(hybrid.served_modes.values()) > 0
        with httpx.Client(base_url=server.base_url, timeout=10.0) as client:
            deadline = time.monotonic() + 90
            body: dict = {}
            while time.monotonic() < deadline:
                body = client.get("/api/search", params={"q": "heat shield ablation"}).json()
                if body["mode"] == "hybrid":
                    break
                assert "Semantic search is busy; showing keyword matches." in body["notices"], body["notices"]
                time.sleep(1.0)
            assert body["mode"] == "hybrid", body["notices"]
        log = server.log()
    assert "Traceback" not in log


def test_rate_limit_answers_429_with_retry_after_per_client(home: Path, tmp_path: Path) -> None:
    per_minute = 30
    env = {"SEARCHNASA_RATE_LIMIT_PER_MINUTE": str(per_minute)}
    with running_server(home, tmp_path / "server.log", extra_env=env) as server:
        # one address bursts past its allowance ...
        with httpx.Client(base_url=server.base_url, timeout=10.0) as greedy:
            codes = [greedy.get("/api/search", params={"q": "engine", "per_page": 1}).status_code
                     for _ in range(per_minute + 10)]
            limited = greedy.get("/api/search", params={"q": "engine"})
        assert codes[:per_minute - 2].count(200) == per_minute - 2  # (a bucket refills a little meanwhile)
        assert 429 in codes and set(codes) == {200, 429}, codes
        assert limited.status_code == 429
        retry = int(limited.headers["retry-after"])
        assert 1 <= retry <= 60 // per_minute + 1
        assert limited.json() == {"error": {"code": "rate_limited",
                                            "message": f"too many requests; retry after {retry} s"}}
        assert limited.headers["x-content-type-options"] == "nosniff"
        assert limited.headers["x-request-id"]
        # ... while another client address (loopback 127.0.0.2) is still answered
        transport = httpx.HTTPTransport(local_address="127.0.0.2")
        with httpx.Client(base_url=server.base_url, timeout=10.0, transport=transport) as other:
            assert other.get("/api/search", params={"q": "engine"}).status_code == 200
        # concurrent clients from one address: the excess is refused, nothing errors
        driver = load_driver()
        report = asyncio.run(driver.run_load(server.base_url, clients=8, seconds=2.0, mode="lexical"))
        log = server.log()
    assert report.rate_limited > 0 and report.errors == 0, report
    lines = [json.loads(line[line.index("{"):]) for line in log.splitlines() if '"event":"request"' in line]
    assert any(entry["status"] == 429 for entry in lines)
    assert "Traceback" not in log

