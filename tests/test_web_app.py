"""App behaviour that needs a particular state: no index yet, a failing component, a rate limit.

These build the app in-process (Starlette's TestClient) because the state is set up per test; the
real-server tests are in test_api.py, test_web_pages.py and test_browser.py.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from searchnasa.cli import app as cli_app
from searchnasa.settings import Settings
from searchnasa.web.app import create_app
from searchnasa.web.pages import page_numbers
from searchnasa.search.text import shorten_at_word as truncate
from searchnasa.web.render import safe_url


def test_ready_is_503_until_an_index_exists(tmp_home: Path) -> None:
    client = TestClient(create_app(Settings().with_home(tmp_home)))
    assert client.get("/healthz").status_code == 200
    ready = client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["error"]["code"] == "index_missing"
    resp = client.get("/api/search", params={"q": "engine"})
    assert resp.status_code == 503 and resp.json()["error"]["code"] == "index_missing"
    page = client.get("/search", params={"q": "engine"}, headers={"accept": "text/html"})
    assert page.status_code == 503 and "searchnasa index" in page.text
    assert "Search NASA" in client.get("/", headers={"accept": "text/html"}).text


class ExplodingService:
    """A fault injected on purpose: every call fails the way a bug would."""

    def search(self, req):
        raise RuntimeError("secret internal detail /etc/passwd")

    def get(self, record_id):
        raise KeyError("secret internal detail")


def test_unexpected_errors_are_500_json_without_details(indexed_home: Path,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    app = create_app(Settings().with_home(indexed_home), service=ExplodingService())
    client = TestClient(app, raise_server_exceptions=False)
    with caplog.at_level(logging.ERROR, logger="searchnasa.web"):
        resp = client.get("/api/search", params={"q": "engine"})
    assert resp.status_code == 500
    assert resp.json()["error"]["code"] == "internal_error"
    assert "secret" not in resp.text and "Traceback" not in resp.text
    assert resp.headers["x-content-type-options"] == "nosniff"
    assert resp.headers["x-request-id"] in resp.json()["error"]["message"]
    assert any("secret internal detail" in (r.exc_text or "") for r in caplog.records)  # logged
    page = client.get("/records/ntrs:19770084252", headers={"accept": "text/html"})
    assert page.status_code == 500 and "secret" not in page.text
    assert page.headers["content-type"].startswith("text/html")


def test_rate_limit_answers_429_with_retry_after(indexed_home: Path) -> None:
    settings = dataclasses.replace(Settings().with_home(indexed_home), rate_limit_per_minute=3)
    client = TestClient(create_app(settings))
    codes = [client.get("/openapi.json").status_code for _ in range(4)]  # (health checks are never throttled)
    assert codes == [200, 200, 200, 429]
    resp = client.get("/openapi.json")
    assert resp.status_code == 429 and int(resp.headers["retry-after"]) >= 1
    assert resp.json()["error"]["code"] == "rate_limited"


def test_rate_limit_is_off_by_default(indexed_home: Path) -> None:
    client = TestClient(create_app(Settings().with_home(indexed_home)))
    assert {client.get("/healthz").status_code for _ in range(50)} == {200}


def test_serve_refuses_bad_options(tmp_home: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli_app, ["serve", "--port", "70000"])
    assert result.exit_code != 0
    result = runner.invoke(cli_app, ["serve", "--workers", "0"])
    assert result.exit_code != 0


@pytest.mark.parametrize("url, expected", [
    ("https://ntrs.nasa.gov/citations/1", "https://ntrs.nasa.gov/citations/1"),
    ("http://example.org/a", "http://example.org/a"),
    ("javascript:alert(1)", None),
    (" JaVaScRiPt:alert(1)", None),
    ("data:text/html,<script>", None),
    ("//evil.example/x", None),
    ("", None),
    (None, None),
])
def test_safe_url(url, expected) -> None:
    assert safe_url(url) == expected


def test_truncate_and_page_numbers() -> None:
    assert truncate("short", 10) == "short"
    cut = truncate("word " * 100, 240)
    assert cut.endswith("…") and len(cut) <= 241
    assert page_numbers(1, 1) == [1]
    assert page_numbers(6, 20) == [1, None, 4, 5, 6, 7, 8, None, 20]
    assert page_numbers(2, 4) == [1, 2, 3, 4]


def test_a_started_worker_runs_one_blas_thread_and_a_few_request_threads(indexed_home: Path, monkeypatch) -> None:
    """Each worker's vector products run on one BLAS thread once the app has started (its idle
    OpenBLAS threads spun under load: web/app.py ``one_blas_thread``), and it computes at most
    ``SEARCHNASA_REQUEST_THREADS`` requests at once."""
    import anyio.to_thread
    from threadpoolctl import threadpool_info, threadpool_limits

    monkeypatch.setenv("SEARCHNASA_REQUEST_THREADS", "3")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)  # the app sets it; put back afterwards

    def threads_of(library: str) -> set[int]:
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas" and library in p["filepath"]}

    with threadpool_limits(limits=None):  # whatever the test process had is restored afterwards
        assert threads_of("numpy"), "NumPy's BLAS should be visible to threadpoolctl"
        with TestClient(create_app(Settings().with_home(indexed_home))) as client:
            assert client.get("/healthz").status_code == 200
            assert threads_of("numpy") == {1}  # loaded before the start: limited at the start
            import scipy.linalg  # noqa: F401  loaded now, or before the start, as the model loads it
            assert threads_of("scipy") == {1}
            threads = client.portal.call(lambda: anyio.to_thread.current_default_thread_limiter().total_tokens)
            assert threads == 3
