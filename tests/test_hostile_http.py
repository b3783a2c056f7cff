"""Hostile and malformed input over HTTP against a real ``searchnasa serve``.

The home is the bundled sample plus one SYNTHETIC hostile record (``server_util.hostile_record``).
Every answer must be a 2xx/3xx or a 4xx (the API's 4xx always in the one JSON error shape), never a
500, never a stack trace, never a hang: each request has a 10 s client deadline. Paths are sent
byte for byte with ``http.client`` where a client library would normalise them (``../``).
"""

from __future__ import annotations

import csv
import http.client
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import quote, urlsplit

import httpx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from server_util import HOSTILE_ID, HOSTILE_MARKER, Server, build_web_home, copy_home, running_server

DEADLINE = 10.0  # seconds: an answer slower than this is a hang
HTML = {"accept": "text/html"}
TRACE_MARKERS = ("Traceback", 'File "/', "RecursionError", "tantivy.", "sqlite3.")


@pytest.fixture(scope="module")
def server(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    base = tmp_path_factory.mktemp("hostile")
    home = copy_home(build_web_home(tmp_path_factory.getbasetemp(), sample_home), base / "home")
    with running_server(home, base / "server.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> httpx.Client:
    with httpx.Client(base_url=server.base_url, timeout=DEADLINE) as c:
        yield c


def raw_get(server: Server, target: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    """GET ``target`` exactly as written (no normalisation of ``..`` or of percent escapes)."""
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=DEADLINE)
    try:
        conn.putrequest("GET", target, skip_accept_encoding=True)
        conn.putheader("Connection", "close")
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def assert_sane(status: int, headers: dict, body: bytes, path: str) -> None:
    """2xx/3xx/4xx only; API errors in the JSON shape; no internals in any answer."""
    text = body.decode("utf-8", "replace")
    assert 200 <= status < 500, (path, status, text[:300])
    for marker in TRACE_MARKERS:
        assert marker not in text, (path, marker, text[:300])
    assert headers.get("x-content-type-options") == "nosniff", path
    is_api = urlsplit(path).path.startswith("/api/")
    if status >= 400 and (is_api or headers.get("content-type", "").startswith("application/json")):
        assert headers.get("content-type", "").startswith("application/json"), (path, headers)
        payload = json.loads(body)
        assert set(payload) == {"error"} and set(payload["error"]) == {"code", "message"}, payload
        assert payload["error"]["message"]


def check(client: httpx.Client, path: str, **kwargs) -> httpx.Response:
    resp = client.get(path, **kwargs)
    assert_sane(resp.status_code, {k.lower(): v for k, v in resp.headers.items()}, resp.content,
                str(resp.request.url.raw_path, "ascii"))
    return resp


# -- hand-picked hostile input --------------------------------------------------------------------
HUGE = "rocket " * 15_000  # 105 KB
NASTY_QUERIES = [
    HUGE,
    "a" * 100_000,
    "\x00", "wind\x00tunnel", "\x00" * 500,
    "OR " * 333, "AND " * 250, "NOT " * 250, "- " * 499, "-" * 999 + "x",
    " OR ".join(["engine"] * 140),
    "(" * 999, ")" * 999, "(" * 499 + ")" * 499, ")(" * 499, "(" * 300 + "engine" + ")" * 300,
    "(-" * 333 + "engine", "title:(" * 140 + "engine", "NOT (" * 199 + "x",
    '"' * 999, '"unbalanced phrase', 'wind "tunnel', '"a" "b" "' * 100,
    "nosuch:field", "nosuch:", "title:", "title:" * 160, "year:", "year:abc", "year:9999999999999999999",
    "year:-", "year:2000-1000", "source:mars", "author:" + "x" * 900, "::::" * 200,
    "*", "?", "\\", "\\" * 999, "title:*", "*:*", "ntrs:", "osti:../../etc/passwd", "10.", "10./..",
    "\u202e\u200b\ufeff", "𝔰𝔭𝔞𝔠𝔢 🚀", "\U0010ffff", "ｆｕｌｌｗｉｄｔｈ", "İstanbul ǅ ß",
    "<script>alert(1)</script>", "{{7*7}}", "${jndi:ldap://x}", "'; DROP TABLE records; --",
]


@pytest.mark.parametrize("q", NASTY_QUERIES, ids=lambda q: repr(q[:24]))
def test_nasty_queries_answer_everywhere(server: Server, q: str) -> None:
    too_long = len(q) > 1000
    enc = encode(q)
    status, head, body = raw_get(server, f"/api/search?q={enc}")
    assert_sane(status, head, body, "/api/search")
    if too_long:  # refused with a reason the caller can act on
        assert status == 422, (status, body[:200])
        assert "at most 1000 characters" in json.loads(body)["error"]["message"]
    else:
        assert status == 200, body[:300]
        payload = json.loads(body)
        assert isinstance(payload["total"], int) and payload["total"] >= 0
    status, head, body = raw_get(server, f"/search?q={enc}", HTML)
    assert_sane(status, head, body, "/search")
    assert status in ((400,) if too_long else (200, 303)), status
    status, head, body = raw_get(server, f"/search.atom?q={enc}")
    assert_sane(status, head, body, "/search.atom")
    if status == 200:
        ET.fromstring(body)  # well-formed XML whatever the query held
    status, head, body = raw_get(server, f"/api/export?format=csv&limit=5&q={enc}")
    assert_sane(status, head, body, "/api/export")
    assert status == (422 if too_long else 200), status


def test_a_url_past_the_protocol_limit_is_refused_and_the_server_goes_on(server: Server) -> None:
    """Past 1 MiB the HTTP layer itself refuses the request head (a bare 400, connection closed)."""
    import socket

    url = urlsplit(server.base_url)
    with socket.create_connection((url.hostname, url.port), timeout=DEADLINE) as sock:
        try:
            sock.sendall(b"GET /api/search?q=" + b"a" * 2_000_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may close before reading it all: also a refusal
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    assert answer == b"" or answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    status, head, body = raw_get(server, "/readyz")
    assert status == 200 and json.loads(body)["status"] == "ready"


PAGE_VALUES = ["-1", "0", "1001", "99999999999999999999999999", "abc", "1e3", "", " ", "1.5", "0x10",
               "%00", "NaN", "-0", "１"]


@pytest.mark.parametrize("value", PAGE_VALUES)
def test_bad_page_numbers(client: httpx.Client, value: str) -> None:
    api = check(client, f"/api/search?q=engine&page={quote(value)}&per_page={quote(value)}")
    assert api.status_code in (200, 422)
    page = check(client, f"/search?q=engine&page={quote(value)}", headers=HTML)
    assert page.status_code == 200  # pages read typed nonsense sensibly and say so


def test_unknown_parameters_are_ignored(client: httpx.Client) -> None:
    plain = client.get("/api/search", params={"q": "engine"}).json()
    odd = check(client, "/api/search", params={"q": "engine", "nosuch": "1", "__proto__": "x",
                                               "q[]": "y", "debug": "true"})
    assert odd.status_code == 200 and odd.json()["total"] == plain["total"]
    assert check(client, "/search?q=engine&nosuch=%00&&&=&", headers=HTML).status_code == 200


def test_repeated_and_overlong_list_parameters(client: httpx.Client) -> None:
    many = "&".join(["subject=x"] * 25)
    assert check(client, f"/api/search?q=engine&{many}").status_code == 422
    assert check(client, f"/search?q=engine&{many}", headers=HTML).status_code == 200
    assert check(client, "/api/search?q=a&q=b&page=1&page=2").status_code in (200, 422)


TRAVERSALS = [
    "/api/records/../../etc/passwd",
    "/api/records/..%2F..%2Fetc%2Fpasswd",
    "/api/records/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
    "/api/records/%252e%252e%252fetc%252fpasswd",
    "/api/records/ntrs:..%2F..%2Fetc%2Fpasswd",
    "/api/records/osti:%2Fetc%2Fpasswd",
    "/api/records/ntrs:1%00.json",
    "/api/records/ntrs:1/../../../etc/passwd",
    "/api/records/..%5C..%5Cwindows%5Cwin.ini",
    "/api/records/%ED%A0%80",
    "/api/records/ntrs:%C0%AE%C0%AE",
    "/api/records/" + "9" * 5000,
    "/api/records/ntrs:1/related?limit=-1",
    "/api/export?format=csv&ids=../../etc/passwd",
    "/api/export?format=../../etc/passwd&ids=ntrs:1",
    "/records/../../etc/passwd",
    "/records/..%2F..%2Fetc%2Fpasswd",
    "/records/%2e%2e%2f%2e%2e%2fetc%2fpasswd/related",
    "/static/../../../../etc/passwd",
    "/static/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/static/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
    "/static/%2e%2e%2f%2e%2e%2fweb%2fapp.py",
    "/static/../app.py",
    "/static/..%2Fapp.py",
    "/..%2F..%2Fetc%2Fpasswd",
    "//etc/passwd",
]


@pytest.mark.parametrize("target", TRAVERSALS)
def test_path_traversal_and_invalid_ids(server: Server, target: str) -> None:
    for headers in ({"accept": "application/json"}, HTML):
        status, head, body = raw_get(server, target, headers)
        assert_sane(status, head, body, target)
        assert status in (400, 404, 405, 422), (target, status, body[:200])
        assert b"root:" not in body and b"create_app" not in body and b"[extensions]" not in body


def test_request_smuggling_shapes_do_not_500(server: Server) -> None:
    for target in ("/api/search?q=%", "/api/search?q=%zz", "/api/search?q=%ED%A0%80%ED%B0%80",
                   "/api/search?%00=%00", "/search?q=%FF%FE", "/api/search?" + "a=1&" * 2000):
        status, head, body = raw_get(server, target)
        assert_sane(status, head, body, target)


# -- arbitrary input (hypothesis) ----------------------------------------------------------------
# Any code point, lone surrogates included: encoded with "surrogatepass" they become the
# (invalid UTF-8) bytes a hostile client would send, percent-encoded into the URL.
ANY_TEXT = st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF), max_size=300)
OPERATORS = st.lists(st.sampled_from(["(", ")", '"', "OR ", "AND ", "NOT ", "-", "title:", "author:",
                                      "subject:", "year:", "source:", "nosuch:", "engine ", "*", "\\",
                                      "\x00", ":", " "]), min_size=50, max_size=400).map("".join)


def encode(text: str) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


@settings(max_examples=50, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(q=st.one_of(ANY_TEXT, OPERATORS), page=st.one_of(st.integers(), ANY_TEXT),
       source=st.one_of(st.none(), ANY_TEXT), year=st.one_of(st.integers(), ANY_TEXT))
def test_any_search_input(server: Server, q: str, page, source, year) -> None:
    params = f"q={encode(q)}&page={encode(str(page))}&year_from={encode(str(year))}"
    if source is not None:
        params += f"&source={encode(source)}"
    for path in ("/api/search", "/search", "/search.atom"):
        status, head, body = raw_get(server, f"{path}?{params}", HTML if path == "/search" else None)
        assert_sane(status, head, body, path)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(rid=ANY_TEXT, prefix=st.sampled_from(["", "ntrs:", "osti:", "../", "ntrs:../"]))
def test_any_record_id(server: Server, rid: str, prefix: str) -> None:
    ident = encode(prefix + rid)
    for target in (f"/api/records/{ident}", f"/api/records/{ident}/related", f"/records/{ident}",
                   f"/api/export?format=ris&ids={ident}"):
        status, head, body = raw_get(server, target)
        assert_sane(status, head, body, target)
        assert status in (200, 404, 422), (target, status)


# -- markup in records: every page and every export shows it as text ----------------------------
HOSTILE_TITLE = f"Synthetic {HOSTILE_MARKER} heat shield <script>alert(1)</script> test"


def test_atom_feed_carries_hostile_text_as_text(client: httpx.Client) -> None:
    resp = check(client, "/search.atom", params={"q": HOSTILE_MARKER})
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("application/atom+xml")
    assert b"<script" not in resp.content and b"<img" not in resp.content
    ns = {"a": "http://www.w3.org/2005/Atom"}
    root = ET.fromstring(resp.content)
    entries = root.findall("a:entry", ns)
    assert len(entries) == 1
    entry = entries[0]
    title = entry.find("a:title", ns)
    assert title.text == HOSTILE_TITLE and title.get("type") == "text"
    summary = entry.find("a:summary", ns)
    assert summary.get("type") == "text" and "<img src=x onerror=alert(2)>" in summary.text
    assert {el.tag.split("}")[1] for el in root.iter()} <= {
        "feed", "id", "title", "updated", "author", "name", "link", "generator", "entry", "summary",
        "category"}
    for link in root.iter("{http://www.w3.org/2005/Atom}link"):  # a feed reader follows these
        assert link.get("href", "").startswith(("http://", "https://")), link.attrib


def test_exports_carry_hostile_text_as_data(client: httpx.Client) -> None:
    import bibtexparser
    import rispy

    for fmt in ("bibtex", "ris", "csl-json", "csv"):
        for url, params in (("/api/export", {"format": fmt, "ids": HOSTILE_ID}),
                            ("/api/export", {"format": fmt, "q": HOSTILE_MARKER, "mode": "lexical"}),
                            (f"/api/records/{HOSTILE_ID}", {"format": fmt})):
            resp = check(client, url, params=params)
            assert resp.status_code == 200, (fmt, url, resp.text[:200])
            ctype = resp.headers["content-type"]
            assert "html" not in ctype and "xml" not in ctype, ctype  # never rendered as a page
            assert resp.headers["x-content-type-options"] == "nosniff"
            assert "script-src 'self'" in resp.headers["content-security-policy"]
            text = resp.text
            if fmt == "csl-json":
                [item] = json.loads(text)
                assert item["title"] == HOSTILE_TITLE
            elif fmt == "csv":
                [row] = list(csv.DictReader(io.StringIO(text)))
                assert HOSTILE_TITLE in row.values()
            elif fmt == "ris":
                [entry] = rispy.loads(text)
                assert HOSTILE_TITLE in (entry.get("title"), entry.get("primary_title"))
            else:
                [entry] = bibtexparser.parse_string(text).entries
                assert "alert(1)" in entry["title"] and HOSTILE_MARKER in entry["title"]


def test_api_json_keeps_hostile_text_verbatim_and_typed_json(client: httpx.Client) -> None:
    resp = check(client, f"/api/records/{HOSTILE_ID}")
    assert resp.headers["content-type"].startswith("application/json")
    assert resp.json()["title"] == HOSTILE_TITLE
    hits = check(client, "/api/search", params={"q": HOSTILE_MARKER, "mode": "lexical"}).json()["results"]
    assert [h["id"] for h in hits] == [HOSTILE_ID]
    assert "<script>" not in hits[0]["title_html"] and "&lt;script&gt;" in hits[0]["title_html"]
    assert "<img" not in hits[0]["snippet_html"]


def test_server_survived_without_a_stack_trace(server: Server, client: httpx.Client) -> None:
    """Last in the module: after everything above, the server answers and logged no traceback."""
    assert client.get("/readyz").json()["status"] == "ready"
    log = server.log()
    assert "Traceback" not in log and "unhandled error" not in log, log[-3000:]
