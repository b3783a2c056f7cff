"""The API's reference, over a real ``searchnasa serve``: ``/docs`` answers offline (its HTML, script
and style sheet all from this server, no address elsewhere, nothing the site's CSP refuses, checked
in Debian's Chromium), every parameter and response field of the spec is described, and a bare
number both sources hold is refused with a 409 that names both records.

The home is the sample plus one SYNTHETIC OSTI record whose number is an NTRS record's number
(``osti:19810053652`` beside the real ``ntrs:19810053652``), to make a bare id ambiguous.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from selectolax.lexbor import LexborHTMLParser as HTMLParser

from searchnasa.index import build_index
from searchnasa.records import Record, RecordDate
from searchnasa.store import StoredItem, open_store
from server_util import Server, running_server
from test_api import SECURITY, assert_error

AMBIGUOUS = "19810053652"
CHROMIUM = "/usr/bin/chromium"


def synthetic_twin_number() -> Record:
    """SYNTHETIC: an OSTI record (not a real one) that has the NTRS record's number as its id."""
    return Record(id=f"osti:{AMBIGUOUS}", source="osti", source_id=AMBIGUOUS,
                  title="SYNTHETIC record whose OSTI number equals an NTRS number",
                  date=RecordDate(value="2001", kind="published", precision="year"), year=2001)


@pytest.fixture(scope="module")
def server(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    base = tmp_path_factory.mktemp("api_docs")
    home = base / "home"
    home.mkdir()
    shutil.copy2(sample_home / "store.sqlite3", home / "store.sqlite3")
    store = open_store(home)
    twin = synthetic_twin_number()
    store.upsert([StoredItem(twin, "records-jsonl", twin.model_dump(mode="json"))])
    build_index(store, home / "index")
    store.close()
    with running_server(home, base / "server.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def client(server: Server) -> httpx.Client:
    with httpx.Client(base_url=server.base_url, timeout=30.0) as c:
        yield c


# -- /docs without a network ----------------------------------------------------------------------
def test_docs_page_and_its_assets_come_from_this_server(client: httpx.Client) -> None:
    resp = client.get("/docs")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/html")
    for name, value in SECURITY.items():  # the site's own policy, not a relaxed one
        assert resp.headers[name] == value, name
    assert not re.search(r"(?i)(https?:)?//[a-z0-9.-]+\.[a-z]", resp.text), "an address off this server"
    tree = HTMLParser(resp.text)
    refs = [n.attributes.get("src") or n.attributes.get("href") for n in tree.css("script[src], link[href]")]
    assert len(refs) >= 3 and not any(n.text(strip=True) for n in tree.css("script"))  # no inline script
    expected = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"}
    for ref in refs:
        assert ref and ref.startswith("/") and not ref.startswith("//"), ref
        asset = client.get(ref)
        assert asset.status_code == 200, ref
        assert asset.headers["content-type"].startswith(expected[Path(ref).suffix]), ref
        assert len(asset.content) > 100, ref
    bundle = next(r for r in refs if r.endswith("swagger-ui-bundle.js"))
    assert "SwaggerUIBundle" in client.get(bundle).text


@pytest.mark.browser
def test_docs_render_in_a_browser_with_no_request_elsewhere(server: Server, artifacts_dir: Path) -> None:
    """Chromium with every request off this server refused: the reference renders every operation,
    "Try it out" reaches the API (a bare id, limit 3), and no CSP violation or console error occurs."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Debian chromium is required (make browser)"
    spec_paths = sorted(httpx.get(server.base_url + "/openapi.json").json()["paths"])
    here = urlsplit(server.base_url).netloc
    elsewhere: list[str] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--headless", "--disable-gpu"])
        context = browser.new_context(base_url=server.base_url, viewport={"width": 1280, "height": 1000})

        def route(r) -> None:
            if urlsplit(r.request.url).netloc == here:
                r.continue_()
            else:
                elsewhere.append(r.request.url)
                r.abort()

        context.route("**/*", route)
        context.add_init_script(
            "document.addEventListener('securitypolicyviolation',"
            " e => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));")
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto("/docs")
        page.wait_for_selector(".swagger-ui .opblock")
        assert page.locator(".swagger-ui .info .title").inner_text().startswith("Search NASA")
        assert sorted(set(page.locator(".opblock-summary-path").all_inner_texts())) == spec_paths
        page.locator(".opblock-summary-path", has_text="/api/records/{record_id}/related").first.click()
        page.get_by_role("button", name="Try it out").click()
        page.locator("input[placeholder='record_id']").fill("3002088")
        page.locator("input[placeholder='limit']").fill("3")
        page.get_by_role("button", name="Execute").click()
        page.wait_for_selector(".live-responses-table tr.response .response-col_status")
        status = page.locator(".live-responses-table tr.response .response-col_status").first.inner_text().strip()
        page.screenshot(path=str(artifacts_dir / "api_docs.png"))
        context.close()
        browser.close()
    assert status == "200"
    assert elsewhere == [] and errors == [], (elsewhere, errors)


# -- the spec explains itself ---------------------------------------------------------------------
def test_every_parameter_and_response_field_is_described(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    undescribed = []
    for name, schema in spec["components"]["schemas"].items():
        if not schema.get("description"):
            undescribed.append(name)
        undescribed += [f"{name}.{field}" for field, prop in schema.get("properties", {}).items()
                        if not prop.get("description")]
    for path, operations in spec["paths"].items():
        for method, op in operations.items():
            undescribed += [f"{method} {path} {p['name']}" for p in op.get("parameters", [])
                            if not p.get("description")]
            for status, answer in op["responses"].items():
                if status.startswith("4") and path.startswith("/api/"):
                    schema = answer["content"]["application/json"]["schema"]
                    assert schema == {"$ref": "#/components/schemas/ErrorResponse"}, (path, status)
    assert undescribed == []
    search = spec["components"]["schemas"]["SearchResponse"]["properties"]
    for field in ("count_unit", "facets_estimated", "total_is_lower_bound"):
        assert len(search[field]["description"]) > 60, field
    assert "ranking" in spec["components"]["schemas"]["SearchHit"]["properties"]["score"]["description"]


# -- bare ids: one rule ----------------------------------------------------------------------------
def test_a_bare_number_both_sources_hold_is_a_409_naming_both(client: httpx.Client) -> None:
    for path in (f"/api/records/{AMBIGUOUS}", f"/api/records/{AMBIGUOUS}/related?limit=3"):
        body = assert_error(client.get(path), 409, "ambiguous_id")
        assert f"ntrs:{AMBIGUOUS}" in body["error"]["message"] and f"osti:{AMBIGUOUS}" in body["error"]["message"]
    assert_error(client.post("/api/related", json={"ids": [AMBIGUOUS]}), 409, "ambiguous_id")
    assert client.get(f"/api/records/ntrs:{AMBIGUOUS}").json()["id"] == f"ntrs:{AMBIGUOUS}"
    assert client.get(f"/api/records/osti:{AMBIGUOUS}").json()["title"].startswith("SYNTHETIC")
    page = client.get(f"/records/{AMBIGUOUS}", headers={"accept": "text/html"})
    assert page.status_code == 409 and f"osti:{AMBIGUOUS}" in page.text
