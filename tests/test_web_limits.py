"""Edge limits of the web server, on a real ``searchnasa serve`` (issue 18): the request body limit
for every method, by ``Content-Length`` up front and counted for chunked bodies."""

from __future__ import annotations

import json
import select
import xml.etree.ElementTree as ET
import socket
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from server_util import Server, copy_home, running_server

DEADLINE = 10.0
MiB = 1 << 20


@pytest.fixture(scope="module")
def server(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    base = tmp_path_factory.mktemp("limits")
    home = copy_home(indexed_home, base / "home")
    with running_server(home, base / "server.log") as srv:
        yield srv


def exchange(server: Server, head: bytes, body: Iterable[bytes]) -> bytes:
    """Send ``head`` then the body pieces, stopping as soon as the server answers (or hangs up);
    return everything the server said until it closed or the answer was whole."""
    url = urlsplit(server.base_url)
    answer = b""
    with socket.create_connection((url.hostname, url.port), timeout=DEADLINE) as sock:
        sock.sendall(head)
        for piece in body:
            if select.select([sock], [], [], 0)[0]:
                break  # the server has answered (or closed): stop sending
            try:
                sock.sendall(piece)
            except (BrokenPipeError, ConnectionResetError):
                break
        try:
            while chunk := sock.recv(65536):
                answer += chunk
                head_end = answer.find(b"\r\n\r\n")
                if head_end != -1:
                    length = next((int(line.split(b":", 1)[1]) for line in answer[:head_end].split(b"\r\n")
                                   if line.lower().startswith(b"content-length:")), None)
                    if length is not None and len(answer) - head_end - 4 >= length:
                        break
        except ConnectionResetError:
            pass
    return answer


def status_and_json(answer: bytes) -> tuple[int, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body)


def assert_healthy(server: Server) -> None:
    assert httpx.get(server.base_url + "/healthz", timeout=DEADLINE).status_code == 200
    related = httpx.post(server.base_url + "/api/related", json={"ids": ["osti:3002493"]}, timeout=DEADLINE)
    assert related.status_code == 200, related.text  # a small body is still read and answered


@pytest.mark.parametrize("method,path", [("POST", "/api/related"), ("PUT", "/api/search"), ("GET", "/healthz")])
def test_a_10_mb_body_with_content_length_is_refused_up_front(server: Server, method: str, path: str) -> None:
    size = 10 * MiB
    head = (f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {size}\r\n\r\n").encode()
    # Only the first 64 KiB are ever sent: the answer comes on the length alone.
    answer = exchange(server, head, [b"[" + b" " * 65535])
    status, body = status_and_json(answer)
    assert status == 413
    assert body["error"]["code"] == "too_large" and "1,048,576 bytes" in body["error"]["message"]
    assert_healthy(server)


def test_a_10_mb_chunked_body_is_counted_and_refused(server: Server) -> None:
    head = (b"POST /api/related HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    piece = b"%x\r\n%s\r\n" % (65536, b" " * 65536)
    answer = exchange(server, head, [b"1\r\n[\r\n"] + [piece] * 160)  # 10 MiB, never finished
    status, body = status_and_json(answer)
    assert status == 413 and body["error"]["code"] == "too_large"
    assert_healthy(server)


def test_a_body_under_the_limit_is_read_whole(server: Server) -> None:
    """A chunked body just under 1 MiB reaches the route intact (padding, then the ids)."""
    payload = b" " * (MiB - 100) + b'{"ids": ["osti:3002493"]}'
    head = (b"POST /api/related HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
    chunks = [b"%x\r\n%s\r\n" % (len(payload[i:i + 65536]), payload[i:i + 65536])
              for i in range(0, len(payload), 65536)] + [b"0\r\n\r\n"]
    status, body = status_and_json(exchange(server, head, chunks))
    assert status == 200, body
    assert body["seed_ids"] == ["osti:3002493"] and body["results"]


# -- links that leave the page (the Atom feed) never follow a forged Host header ----------------


def test_atom_links_ignore_a_forged_host_header(server: Server) -> None:
    resp = httpx.get(server.base_url + "/search.atom", params={"q": "wing"},
                     headers={"Host": "evil.example"}, timeout=DEADLINE)
    assert resp.status_code == 200
    assert "evil.example" not in resp.text
    self_link = ET.fromstring(resp.content).find("{http://www.w3.org/2005/Atom}link[@rel='self']")
    assert self_link is not None and self_link.get("href") == server.base_url + "/search.atom?q=wing"


def test_the_public_url_setting_names_the_site(monkeypatch: pytest.MonkeyPatch) -> None:
    from starlette.requests import Request

    from searchnasa.web.urls import public_base_url, public_url

    scope = {"type": "http", "scheme": "http", "server": ("10.0.0.5", 8000), "path": "/search.atom",
             "query_string": b"q=x", "headers": [(b"host", b"evil.example")], "root_path": ""}
    monkeypatch.delenv("SEARCHNASA_PUBLIC_URL", raising=False)
    assert public_url(Request(scope)) == "http://10.0.0.5:8000/search.atom?q=x"
    monkeypatch.setenv("SEARCHNASA_PUBLIC_URL", "https://search.example.org/")
    assert public_base_url(Request(scope)) == "https://search.example.org"
    assert public_url(Request(scope)) == "https://search.example.org/search.atom?q=x"


# -- the rate limit spares health checks and static files, and answers pages with a page --------


def test_rate_limit_spares_health_and_static_and_pages_get_an_html_429(
        indexed_home: Path, tmp_path: Path) -> None:
    home = copy_home(indexed_home, tmp_path / "home")
    env = {"SEARCHNASA_RATE_LIMIT_PER_MINUTE": "3"}
    with running_server(home, tmp_path / "server.log", extra_env=env) as srv, \
            httpx.Client(base_url=srv.base_url, timeout=DEADLINE) as client:
        codes = [client.get("/api/search", params={"q": "wing", "mode": "lexical"}).status_code
                 for _ in range(6)]
        assert codes[0] == 200 and codes[-1] == 429, codes  # the bucket of this address is spent
        for path in ("/healthz", "/readyz", "/static/style.css", "/static/favicon.svg"):
            assert {client.get(path).status_code for _ in range(10)} == {200}, path
        page = client.get("/search", params={"q": "wing"}, headers={"accept": "text/html"})
        assert page.status_code == 429 and int(page.headers["retry-after"]) >= 1
        assert page.headers["content-type"].startswith("text/html")
        assert "<h1>Too many requests</h1>" in page.text and "retry after" in page.text
        api = client.get("/api/search", params={"q": "wing"}, headers={"accept": "text/html"})
        assert api.status_code == 429 and api.json()["error"]["code"] == "rate_limited"


# -- control characters from record text never reach the HTML ----------------------------------


def test_control_characters_in_record_text_do_not_reach_the_page(indexed_home: Path, tmp_path: Path) -> None:
    from searchnasa.records import Author, Record
    from searchnasa.store import StoredItem, open_store

    home = copy_home(indexed_home, tmp_path / "home")
    record = Record(id="osti:9990000002", source="osti", source_id="9990000002",
                    title="Synthetic bell\x07 and escape\x1b[31m title", keywords=["null\x00byte"],
                    abstract="Synthetic tab\tand newline\nkept; form feed\x0c, DEL\x7f and \x01 gone.",
                    authors=[Author(name="Back\x08space, A.")])
    store = open_store(home)
    store.upsert([StoredItem(record=record, raw_format="synthetic", raw=record.model_dump(mode="json"))])
    store.close()
    with running_server(home, tmp_path / "server.log") as srv:
        page = httpx.get(srv.base_url + "/records/osti:9990000002", headers={"accept": "text/html"},
                         timeout=DEADLINE)
    assert page.status_code == 200
    text = page.text
    assert not any(ch in text for ch in "\x00\x01\x07\x08\x0b\x0c\x1b\x7f")
    assert "Synthetic bell and escape[31m title" in text and "Backspace, A." in text
    assert "form feed, DEL and  gone." in text


# -- HEAD answers like GET, without a body ------------------------------------------------------


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/", "/search?q=wing", "/records/osti:3002493",
                                  "/api/search?q=wing&mode=lexical", "/api/records/osti:3002493",
                                  "/search.atom?q=wing", "/static/style.css", "/openapi.json", "/no/such/page"])
def test_head_answers_like_get_without_a_body(server: Server, path: str) -> None:
    with httpx.Client(base_url=server.base_url, timeout=DEADLINE) as client:
        got = client.get(path)
        head = client.head(path)
    assert head.status_code == got.status_code
    assert head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]


# -- the rate limit counts work, not requests ----------------------------------------------------


def test_request_cost_weighs_exports_by_rows_and_truncated_words() -> None:
    from searchnasa.web.cost import request_cost

    assert request_cost("/api/search", b"q=wing") == 1.0
    assert request_cost("/api/search", b"q=turbo*+OR+comb*") == 2.0
    assert request_cost("/api/export", b"q=wing&format=csv&limit=1000") == 11.0
    assert request_cost("/api/export", b"format=csv&ids=osti:1&ids=osti:2") == 1.02
    assert request_cost("/api/export", b"q=wing&format=csv") == 2.0  # the default 100 rows
    prefixes = "+OR+".join(f"a{n}*" for n in range(90)).encode()
    assert request_cost("/api/export", b"format=csv&limit=1000&q=" + prefixes) == 56.0


def test_an_expensive_export_spends_the_rate_limit_as_the_searches_it_costs(
        indexed_home: Path, tmp_path: Path) -> None:
    home = copy_home(indexed_home, tmp_path / "home")
    env = {"SEARCHNASA_RATE_LIMIT_PER_MINUTE": "30"}
    with running_server(home, tmp_path / "server.log", extra_env=env) as srv, \
            httpx.Client(base_url=srv.base_url, timeout=DEADLINE) as client:
        wildcard = " OR ".join(f"{p}*" for p in ("turb", "comb", "therm", "batt", "prop", "heat"))
        export = client.get("/api/export", params={"q": wildcard, "format": "csv", "limit": 1000})
        assert export.status_code == 200  # 1 + 6 × 0.5 + 10 = 14 of the 30 tokens
        export = client.get("/api/export", params={"q": wildcard, "format": "csv", "limit": 1000})
        assert export.status_code == 200  # 28 spent
        refused = client.get("/api/export", params={"q": wildcard, "format": "csv", "limit": 1000})
        assert refused.status_code == 429 and refused.json()["error"]["code"] == "rate_limited"
        # It waits for the tokens it costs (a one-token request never waits more than 2 s here).
        assert int(refused.headers["retry-after"]) > 2
        cheap = client.get("/api/search", params={"q": "wing", "mode": "lexical"})
        assert cheap.status_code == 200, "the two tokens left still pay for a plain search"
