"""``searchnasa serve`` as an operator runs it: several workers over one index, and SIGTERM.

SIGTERM must let a request that is already being answered finish: the test holds a request open
(headers sent, body not yet) across the signal and checks it still gets its full answer.
"""

from __future__ import annotations

import json
import signal
import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from server_util import copy_home, start_server

# uvicorn finishes its graceful shutdown and then re-raises the signal it caught, so the process
# ends "killed by SIGTERM" (what service managers expect after a clean stop) or exits 0.
GRACEFUL_EXIT = (0, -signal.SIGTERM)


@pytest.fixture(scope="module")
def home(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_home(indexed_home, tmp_path_factory.mktemp("serve") / "home")


def test_workers_share_the_index_and_stop_on_sigterm(home: Path, tmp_path: Path) -> None:
    server = start_server(home, tmp_path / "server.log", workers=2)
    try:
        with httpx.Client(base_url=server.base_url, timeout=30.0) as client:
            totals = {client.get("/api/search", params={"q": "rocket engine"}).json()["total"]
                      for _ in range(12)}
            assert len(totals) == 1 and totals.pop() > 0
            assert client.get("/readyz").json()["records"] == 6514
    finally:
        code = server.stop()
    log = server.log()
    assert code in GRACEFUL_EXIT, log[-2000:]
    assert log.count("Started server process") == 2, log[-2000:]
    assert log.count("Application shutdown complete") == 2, log[-2000:]
    assert log.count('"event": "request"') + log.count('"event":"request"') >= 13
    assert "Traceback" not in log


def test_sigterm_lets_an_in_flight_request_finish(home: Path, tmp_path: Path) -> None:
    server = start_server(home, tmp_path / "server.log")
    url = urlsplit(server.base_url)
    body = json.dumps({"ids": ["ntrs:19770084252"], "limit": 10}).encode()
    head = (f"POST /api/related HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    try:
        with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
            sock.sendall(head + body[:5])  # the request has begun: headers in, body still coming
            time.sleep(0.5)
            server.process.send_signal(signal.SIGTERM)
            time.sleep(1.0)
            assert server.process.poll() is None, "the server quit with a request in flight"
            sock.sendall(body[5:])
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        response = b"".join(chunks)
        status_line, _, rest = response.partition(b"\r\n")
        assert status_line == b"HTTP/1.1 200 OK", response[:300]
        payload = json.loads(rest.partition(b"\r\n\r\n")[2])
        assert payload["seed_ids"] == ["ntrs:19770084252"] and payload["results"]
        server.process.wait(20)
        assert server.process.returncode in GRACEFUL_EXIT
        assert "Application shutdown complete" in server.log()
        with pytest.raises(httpx.TransportError):
            httpx.get(server.base_url + "/healthz", timeout=2.0)
    finally:
        server.stop()


def test_the_query_encoder_is_ready_before_the_first_search(home: Path, tmp_path: Path) -> None:
    """The server loads (and runs once) the query encoder when it starts, not on the first search:
    a first search made after that answers in hybrid mode, not "busy" with keyword matches."""
    server = start_server(home, tmp_path / "server.log")
    try:
        deadline = time.monotonic() + 120
        while "query encoder ready" not in server.log() and time.monotonic() < deadline:
            time.sleep(0.5)  # no request meanwhile: loading must not wait for one
        assert "query encoder ready" in server.log(), server.log()[-2000:]
        with httpx.Client(base_url=server.base_url, timeout=30.0) as client:
            body = client.get("/api/search", params={"q": "heat shield ablation"}).json()
        assert body["mode"] == "hybrid", body["notices"]
        assert "Semantic search is busy; showing keyword matches." not in body["notices"]
    finally:
        server.stop()
