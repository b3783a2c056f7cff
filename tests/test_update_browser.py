"""The page of a home updated under ``energy-propulsion``, in Debian's chromium: the line under
"Results for" is the reference page's own (read from ``shared/reference``), and the footer says how
fresh each source is."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright
from replay.collections import ntrs_items, osti_items
from replay.server import ReplayServer

from server_util import running_server
from test_browser import ARGS, CHROMIUM
from test_update import env_for, update_json

pytestmark = pytest.mark.browser


def reference_line(shared_dir: Path) -> str:
    """The description line the reference results page shows after its "Results for" heading."""
    text = (shared_dir / "reference" / "000_992a534bd6ede5ad.txt").read_text(encoding="utf-8")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    heading = next(i for i, line in enumerate(lines) if line.startswith("Results for"))
    return lines[heading + 1]


def test_energy_propulsion_page_shows_the_reference_line(shared_dir, raw_dir, tmp_path, artifacts_dir):
    home = tmp_path / "home"
    with ReplayServer(ntrs_items(raw_dir)[:600], osti_items(raw_dir)[:300]) as server:
        report = update_json(env_for(home, server, tmp_path / "cache.sqlite3"), "--profile", "energy-propulsion",
                             "--no-semantic")
    assert report["profile"] == "energy-propulsion"
    expected = reference_line(shared_dir)
    assert expected.startswith("Search indexed NASA NTRS and DOE OSTI research on propulsion")
    with running_server(home, tmp_path / "server.log") as srv, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(base_url=srv.base_url)
        page.goto("/search?q=propulsion")
        intro = page.locator("h1.results-for + p.intro")
        assert intro.inner_text().strip() == expected
        footer = page.locator("footer .freshness").inner_text()
        status = json.loads(page.context.request.get("/api/status").text())
        ntrs = status["sources"]["ntrs"]
        assert re.fullmatch(rf"NASA NTRS: {ntrs['records']:,} records, updated \d{{4}}-\d{{2}}-\d{{2}} · "
                            rf"DOE OSTI: {status['sources']['osti']['records']:,} records, updated .*", footer), footer
        page.screenshot(path=str(artifacts_dir / "update-energy-propulsion.png"), full_page=True)
        browser.close()
