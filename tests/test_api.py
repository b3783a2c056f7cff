"""The JSON API over a real ``searchnasa serve`` (uvicorn in its own process) on the sample index."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from server_util import Server, copy_home, running_server

SECURITY = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "strict-origin-when-cross-origin",
}


@pytest.fixture(scope="module")
def server(indexed_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    base = tmp_path_factory.mktemp("api_server")
    home = copy_home(indexed_home, base / "home")
    with running_server(home, base / "server.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> httpx.Client:
    with httpx.Client(base_url=server.base_url, timeout=30.0) as c:
        yield c


def assert_error(resp: httpx.Response, status: int | tuple[int, ...], code: str | None = None) -> dict:
    statuses = status if isinstance(status, tuple) else (status,)
    assert resp.status_code in statuses, (resp.status_code, resp.text[:300])
    assert resp.headers["content-type"].startswith("application/json")
    body = resp.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["message"]
    assert "Traceback" not in resp.text and 'File "' not in resp.text
    if code:
        assert body["error"]["code"] == code
    return body


# -- search ---------------------------------------------------------------------------------------
def test_search_shape(client: httpx.Client) -> None:
    resp = client.get("/api/search", params={"q": "wind tunnel", "per_page": 5})
    assert resp.status_code == 200
    body = resp.json()
    for key in ("query", "total", "total_is_lower_bound", "page", "per_page", "results", "facets",
                "interpreted", "notices", "mode", "count_unit"):
        assert key in body, key
    assert body["count_unit"] == "records"
    assert body["query"] == "wind tunnel" and body["page"] == 1 and body["per_page"] == 5
    assert body["total"] > 5 and len(body["results"]) == 5
    for hit in body["results"]:
        for key in ("id", "source", "title", "abstract", "year", "url"):
            assert key in hit, key
        assert re.match(r"^(ntrs|osti):\S+$", hit["id"])
        assert hit["year"] is None or isinstance(hit["year"], int)
    buckets = {b["value"]: b["count"] for b in body["facets"]["source"]}
    assert sum(buckets.values()) == body["total"]


def test_search_offers_a_correction(client: httpx.Client) -> None:
    body = client.get("/api/search", params={"q": "aerodynamcs", "mode": "lexical"}).json()
    assert body["total"] == 0 and body["suggestion"] == "aerodynamics"
    fixed = client.get("/api/search", params={"q": body["suggestion"], "mode": "lexical"}).json()
    assert fixed["total"] > 0 and fixed["suggestion"] is None
    schema = client.get("/openapi.json").json()["components"]["schemas"]["SearchResponse"]
    assert "suggestion" in schema["properties"]


def test_search_source_filter_and_pages(client: httpx.Client) -> None:
    first = client.get("/api/search", params={"q": "engine", "source": "ntrs", "per_page": 10}).json()
    second = client.get("/api/search", params={"q": "engine", "source": "ntrs", "per_page": 10,
                                               "page": 2}).json()
    assert first["total"] == second["total"] > 20
    assert {h["source"] for h in first["results"] + second["results"]} == {"ntrs"}
    assert not {h["id"] for h in first["results"]} & {h["id"] for h in second["results"]}


def test_search_year_filter(client: httpx.Client) -> None:
    body = client.get("/api/search", params={"q": "heat", "year_from": 1980, "year_to": 1989,
                                             "per_page": 50}).json()
    assert body["results"]
    assert all(h["year"] is not None and 1980 <= h["year"] <= 1989 for h in body["results"])


@pytest.mark.parametrize("params", [
    {"q": "x" * 1001},
    {"q": "engine", "per_page": 101},
    {"q": "engine", "per_page": 0},
    {"q": "engine", "page": 1001},
    {"q": "engine", "page": 0},
    {"q": "engine", "page": -3},
    {"q": "engine", "page": "two"},
    {"q": "engine", "page": "9" * 40},
    {"q": "engine", "source": "arxiv"},
    {"q": "engine", "sort": "random"},
    {"q": "engine", "mode": "magic"},
    {"q": "engine", "year_from": "nineteen"},
])
def test_search_limits_are_422_json(client: httpx.Client, params: dict) -> None:
    assert_error(client.get("/api/search", params=params), 422, "invalid_request")


def test_search_at_the_limits_answers(client: httpx.Client) -> None:
    resp = client.get("/api/search", params={"q": "engine " * 142, "per_page": 100, "page": 1000})
    assert resp.status_code == 200, resp.text[:300]
    assert resp.json()["results"] == []


def test_hostile_query_text_never_500(client: httpx.Client) -> None:
    for q in ['"unbalanced', "((((", "NOT", "title:", "nosuchfield:value", "-", "a\x00b", "\u202e\ufeff",
              "year:abcd", "OR OR AND", ")" * 300]:
        resp = client.get("/api/search", params={"q": q})
        assert resp.status_code == 200, (q, resp.status_code, resp.text[:200])


# -- records --------------------------------------------------------------------------------------
def test_record_json(client: httpx.Client) -> None:
    body = client.get("/api/records/ntrs:19770084252").json()
    assert body["id"] == "ntrs:19770084252"
    assert body["title"].startswith("Supercritical Wing Technology")
    assert body["url"] == "https://ntrs.nasa.gov/citations/19770084252"
    assert body["rights"]["copyright_determination"] == "GOV_PUBLIC_USE_PERMITTED"


@pytest.mark.parametrize("path", [
    "/api/records/ntrs:00000000000",
    "/api/records/osti:0",
    "/api/records/nothing",
    "/api/records/ntrs:..%2F..%2Fetc%2Fpasswd",
    "/api/records/%3Cscript%3E",
    "/api/records/ntrs:00000000000/related",
])
def test_unknown_or_malformed_ids_are_404_json(client: httpx.Client, path: str) -> None:
    assert_error(client.get(path), 404, "not_found")


def test_unknown_route_and_method_are_json(client: httpx.Client) -> None:
    assert_error(client.get("/api/nothing-here"), 404)
    assert_error(client.delete("/api/search"), 405)


# -- related --------------------------------------------------------------------------------------
def test_related_for_a_record(client: httpx.Client) -> None:
    body = client.get("/api/records/ntrs:19770084252/related", params={"limit": 10}).json()
    assert body["seed_ids"] == ["ntrs:19770084252"]
    assert 0 < len(body["results"]) <= 10
    ids = [r["id"] for r in body["results"]]
    assert "ntrs:19770084252" not in ids and len(set(ids)) == len(ids)
    for item in body["results"]:
        assert item["reasons"] and item["explanation"] == " · ".join(item["reasons"])
        assert item["title"] and "abstract_truncated" in item


@pytest.mark.parametrize("limit", [0, 51, "ten"])
def test_related_limit_bounds(client: httpx.Client, limit) -> None:
    assert_error(client.get("/api/records/ntrs:19770084252/related", params={"limit": limit}), 422)


@pytest.mark.parametrize("limit", [1, 3])
def test_related_small_limits(client: httpx.Client, limit: int) -> None:
    """A short list is a fair request (a sidebar of three): from 1, not from 10."""
    body = client.get("/api/records/ntrs:19770084252/related", params={"limit": limit}).json()
    assert len(body["results"]) == limit
    posted = client.post("/api/related", json={"ids": ["ntrs:19770084252"], "limit": limit}).json()
    assert [r["id"] for r in posted["results"]] == [r["id"] for r in body["results"]]


def test_bare_ids_are_accepted_wherever_a_record_id_is(client: httpx.Client) -> None:
    """The number the search box resolves (19810053652) names the same record on every endpoint."""
    whole = client.get("/api/records/ntrs:19810053652").json()
    bare = client.get("/api/records/19810053652")
    assert bare.status_code == 200 and bare.json() == whole
    assert client.get("/api/records/3002088").json()["id"] == "osti:3002088"
    assert client.get("/api/records/NTRS:19810053652").json()["id"] == "ntrs:19810053652"
    related = client.get("/api/records/19810053652/related", params={"limit": 3}).json()
    assert related["seed_ids"] == ["ntrs:19810053652"]
    assert related == client.get("/api/records/ntrs:19810053652/related", params={"limit": 3}).json()
    posted = client.post("/api/related", json={"ids": ["19810053652"], "negative_ids": ["3002088"],
                                               "limit": 3}).json()
    assert posted["seed_ids"] == ["ntrs:19810053652"] and posted["negative_ids"] == ["osti:3002088"]
    bib = client.get("/api/records/19810053652", params={"format": "bibtex"}).text
    assert bib.startswith("@techreport{ntrs:19810053652,")
    export = client.get("/api/export", params={"format": "ris", "ids": ["19810053652", "osti:3002088"]}).text
    assert "ID  - ntrs:19810053652" in export and "ID  - osti:3002088" in export
    page = client.get("/records/19810053652", follow_redirects=False)
    assert page.status_code == 301 and page.headers["location"] == "/records/ntrs:19810053652"
    missing = assert_error(client.get("/api/records/98765432101"), 404, "not_found")
    assert "98765432101" in missing["error"]["message"]


def test_record_response_has_its_schema_and_one_author_shape(client: httpx.Client) -> None:
    """The record is what its schema says; authors are objects in every response."""
    spec = client.get("/openapi.json").json()
    ok = spec["paths"]["/api/records/{record_id}"]["get"]["responses"]["200"]["content"]["application/json"]
    assert ok["schema"] == {"$ref": "#/components/schemas/RecordResponse"}
    props = spec["components"]["schemas"]["RecordResponse"]["properties"]
    record = client.get("/api/records/osti:3002088").json()
    assert set(record) == set(props)
    assert record["url"] == "https://www.osti.gov/biblio/3002088" and record["source_label"] == "DOE OSTI"
    hit = client.get("/api/search", params={"q": "rare-earth silicates thermal conductivity",
                                            "per_page": 5}).json()["results"]
    with_authors = [h for h in hit if h["authors"]]
    assert with_authors
    for h in with_authors:
        assert all(set(a) == {"name", "affiliation", "orcid"} for a in h["authors"])
    assert set(record["authors"][0]) == {"name", "affiliation", "orcid"}
    card = next(h for h in hit if h["id"] == "osti:3002088")
    assert [a["name"] for a in card["authors"]] == [a["name"] for a in record["authors"]][:10]


def test_date_label_means_the_same_in_search_and_related(client: httpx.Client) -> None:
    related = client.get("/api/records/ntrs:19810053652/related", params={"limit": 10}).json()["results"]
    for item in related:
        hits = client.get("/api/search", params={"q": item["id"], "mode": "lexical"}).json()["results"]
        assert hits and hits[0]["id"] == item["id"]
        assert hits[0]["date_label"] == item["date_label"]
        assert item["date_label"] == (str(item["year"]) if item["year"] is not None else "Date not supplied")


def test_post_related_with_negatives(client: httpx.Client) -> None:
    seeds = client.get("/api/search", params={"q": "battery electrolyte", "per_page": 3}).json()["results"]
    assert len(seeds) == 3
    body = {"ids": [seeds[0]["id"], seeds[1]["id"]], "negative_ids": [seeds[2]["id"]], "limit": 12}
    resp = client.post("/api/related", json=body)
    assert resp.status_code == 200, resp.text[:300]
    out = resp.json()
    assert out["seed_ids"] == body["ids"] and out["negative_ids"] == body["negative_ids"]
    ids = {r["id"] for r in out["results"]}
    assert 0 < len(ids) <= 12 and not ids & {s["id"] for s in seeds}


@pytest.mark.parametrize("payload", [
    {"ids": []},
    {"ids": "ntrs:19770084252"},
    {"ids": ["ntrs:19770084252"], "limit": 0},
    {"ids": ["ntrs:19770084252"], "limit": 1000},
    {},
])
def test_post_related_invalid_body(client: httpx.Client, payload: dict) -> None:
    assert_error(client.post("/api/related", json=payload), 422, "invalid_request")


def test_post_related_errors(client: httpx.Client) -> None:
    assert_error(client.post("/api/related", content=b"{not json",
                             headers={"content-type": "application/json"}), 422)
    assert_error(client.post("/api/related", json={"ids": ["ntrs:00000000000"]}), 404, "not_found")
    assert_error(client.post("/api/related", json={"ids": ["ntrs:19770084252"],
                                                   "negative_ids": ["ntrs:19770084252"]}), 400)
    many = [f"ntrs:{19770084252 + i}" for i in range(21)]
    assert_error(client.post("/api/related", json={"ids": many}), (400, 422))


# -- spec, health, headers, logs ------------------------------------------------------------------
def test_openapi_lists_the_endpoints(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path in ("/api/search", "/api/records/{record_id}", "/api/records/{record_id}/related",
                 "/api/related", "/healthz", "/readyz"):
        assert path in paths, path
    params = {p["name"]: p for p in paths["/api/search"]["get"]["parameters"]}
    assert params["q"]["schema"]["maxLength"] == 1000
    assert params["per_page"]["schema"]["maximum"] == 100
    assert params["page"]["schema"]["maximum"] == 1000
    assert not any(p.startswith("/search") or p.startswith("/records") for p in paths)


def test_health_and_ready(client: httpx.Client) -> None:
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready == {"status": "ready", "records": 6514}


@pytest.mark.parametrize("path", ["/", "/search?q=engine", "/api/search?q=engine", "/api/records/x",
                                  "/api/search?per_page=500", "/static/style.css", "/openapi.json",
                                  "/records/ntrs:19770084252", "/no/such/page"])
def test_security_headers_everywhere(client: httpx.Client, path: str) -> None:
    resp = client.get(path)
    for name, value in SECURITY.items():
        assert resp.headers.get(name) == value, (path, name)
    assert re.fullmatch(r"[0-9a-f]{32}", resp.headers["x-request-id"])


def test_request_id_is_kept_and_logged(client: httpx.Client, server: Server) -> None:
    resp = client.get("/api/search", params={"q": "rocket"}, headers={"X-Request-ID": "test-req-4711"})
    assert resp.headers["x-request-id"] == "test-req-4711"
    evil = client.get("/healthz", headers={"X-Request-ID": "bad id\u00e9<script>".encode("latin-1")})
    assert re.fullmatch(r"[0-9a-f]{32}", evil.headers["x-request-id"])
    lines = [line for line in server.log().splitlines() if "test-req-4711" in line]
    assert lines, server.log()[-2000:]
    entry = json.loads(lines[-1][lines[-1].index("{"):])
    assert entry["path"] == "/api/search" and entry["status"] == 200 and entry["method"] == "GET"
    assert "Traceback" not in server.log()


# -- arbitrary input over HTTP --------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
from urllib.parse import quote  # noqa: E402

ANY_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=200)
RAW_BYTES = st.binary(max_size=120).map(lambda b: "".join(f"%{x:02X}" for x in b))
QUERY_WORDS = st.lists(st.sampled_from(['"', "(", ")", "OR", "AND", "NOT", "-", "title:", "author:",
                                        "year:", "source:", "year:1990-", "wind", "*", ":", "\\", "\x00",
                                        "ntrs:", "10.", "nosuch:field", "  "]), max_size=40).map("".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(q=st.one_of(ANY_TEXT, QUERY_WORDS), page=st.one_of(st.integers(-5, 1005), ANY_TEXT))
def test_any_query_answers_2xx_or_4xx_json(client: httpx.Client, q: str, page) -> None:
    resp = client.get("/api/search", params={"q": q, "page": page})
    assert resp.status_code in (200, 422), (q, page, resp.status_code, resp.text[:200])
    if resp.status_code == 422:
        assert_error(resp, 422)
    else:
        assert isinstance(resp.json()["total"], int)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=RAW_BYTES, rid=ANY_TEXT)
def test_raw_bytes_and_odd_ids_never_500(client: httpx.Client, raw: str, rid: str) -> None:
    resp = client.get(f"/api/search?q={raw}&source={raw[:9]}")
    assert resp.status_code in (200, 422), (raw, resp.text[:200])
    page = client.get(f"/search?q={raw}", headers={"accept": "text/html"})
    assert page.status_code == 200, (raw, page.status_code)
    record = client.get("/api/records/" + quote(rid, safe=""))
    assert record.status_code in (404, 422) or (record.status_code == 200 and record.json()["id"] == rid)
    if record.status_code != 200:
        assert_error(record, (404, 422))


def test_large_answers_are_compressed(client: httpx.Client) -> None:
    resp = client.get("/search", params={"q": "engine"}, headers={"accept-encoding": "gzip"})
    assert resp.headers["content-encoding"] == "gzip" and "Results for" in resp.text
    assert resp.headers["x-content-type-options"] == "nosniff"


OPENAPI_SNAPSHOT = Path(__file__).resolve().parent / "fixtures" / "api" / "openapi.json"


def canonical_openapi(spec: dict) -> str:
    """The form the committed copy is written in: sorted keys, two-space indent, UTF-8."""
    return json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_served_openapi_document_equals_the_committed_copy(client: httpx.Client) -> None:
    """The API's contract does not drift by accident: a deliberate change rewrites
    ``tests/fixtures/api/openapi.json`` (``canonical_openapi(create_app().openapi())``) in the same
    commit, so the diff shows it."""
    served = client.get("/openapi.json")
    assert served.status_code == 200
    assert canonical_openapi(served.json()) == OPENAPI_SNAPSHOT.read_text(encoding="utf-8")
