"""Accessibility in a real browser (issue 19): axe-core finds no violation on any page type at a
desktop and a phone width; the keyboard reaches the first result through the skip link; on a
phone the first result is on the first screen; the sort and filters apply when changed.

axe-core comes from npm (``package-lock.json``; ``make browser`` installs it) and is injected into
Debian's chromium by Playwright, with the page's CSP bypassed for that one script only.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from server_util import Server, build_web_home, running_server

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[1]
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
RECORD = "osti:3002088"
PAGES = {
    "home": "/",
    "results": "/search?q=heat+transfer",
    "filtered results": "/search?q=battery&source=osti&sort=newest",
    "no results": "/search?q=zzznothingmatcheszzz",
    "record": f"/records/{RECORD}",
    "related": f"/records/{RECORD}/related",
    "error": "/records/osti:999999999999",
}
WIDTHS = {"desktop": 1280, "phone": 390}


@pytest.fixture(scope="module")
def server(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = build_web_home(tmp_path_factory.getbasetemp(), sample_home)
    with running_server(home, tmp_path_factory.mktemp("a11y_server") / "server.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert AXE.exists(), "axe-core is missing: run `make browser` (npm ci)"
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def open_page(browser: Browser, server: Server, width: int, javascript: bool = True) -> Page:
    context = browser.new_context(viewport={"width": width, "height": 900}, base_url=server.base_url,
                                  bypass_csp=True, java_script_enabled=javascript)
    page = context.new_page()
    page.set_default_timeout(20_000)
    return page


def axe_violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    return [f"{v['id']} ({v['impact']}): {v['help']} -> {[n['target'] for n in v['nodes'][:3]]}"
            for v in result["violations"]]


@pytest.mark.parametrize("width", WIDTHS.values(), ids=list(WIDTHS))
def test_axe_finds_no_violation_on_any_page_type(browser: Browser, server: Server, width: int) -> None:
    page = open_page(browser, server, width)
    found = {}
    for name, path in PAGES.items():
        page.goto(path)
        violations = axe_violations(page)
        if violations:
            found[name] = violations
    page.context.close()
    assert not found, found


def test_the_keyboard_reaches_the_first_result_through_the_skip_link(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, 1280)
    page.goto(PAGES["results"])
    first_result = page.locator("article.card h2 a").first
    presses = 0
    page.keyboard.press("Tab")
    presses += 1
    assert page.evaluate("document.activeElement.className") == "skip-link"
    assert page.evaluate("document.activeElement.textContent").strip().startswith("Skip to")
    page.keyboard.press("Enter")
    presses += 1
    while presses < 5:
        page.keyboard.press("Tab")
        presses += 1
        if first_result.evaluate("el => el === document.activeElement"):
            break
    assert first_result.evaluate("el => el === document.activeElement"), presses
    outline = first_result.evaluate("el => getComputedStyle(el).outlineStyle + ' ' + getComputedStyle(el).outlineWidth")
    assert outline.startswith("solid") and float(re.findall(r"[\d.]+", outline)[0]) >= 2, outline
    page.context.close()


def test_on_a_phone_the_first_result_is_on_the_first_screen(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, 390)
    page.goto(PAGES["results"])
    box = page.locator("article.card").first.bounding_box()
    assert box is not None and box["y"] < 900, box
    toggle = page.locator("details.filter-panel > summary")
    assert toggle.is_visible()  # the filters are one tap away
    toggle.click()
    assert page.locator("details.filter-panel select#sort").is_visible()
    page.context.close()


def test_links_say_which_record_they_open(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, 1280)
    page.goto(PAGES["results"])
    cards = page.locator("article.card")
    for i in range(3):
        card = cards.nth(i)
        title = card.locator("h2 a").inner_text().strip()
        for selector, prefix in (("a.record-link", "Record"), ("a.related-link", "Related papers")):
            name = card.locator(selector).get_attribute("aria-label") or ""
            assert name.startswith(f"{prefix}: ") and name[len(prefix) + 2:][:20] == title[:20], (name, title)
    page.context.close()


def test_sort_and_filters_apply_when_changed(browser: Browser, server: Server) -> None:
    page = open_page(browser, server, 1280)
    page.goto(PAGES["results"])
    with page.expect_navigation():
        page.select_option("select#sort", "newest")
    assert "sort=newest" in page.url
    first_facet = page.locator("fieldset.facet input[type=checkbox]").first
    value = first_facet.get_attribute("value")
    with page.expect_navigation():
        first_facet.check()
    assert page.locator(f"fieldset.facet input[type=checkbox][value='{value}']").is_checked()
    page.context.close()
    # without JavaScript the Apply button still does it
    page = open_page(browser, server, 1280, javascript=False)
    page.goto(PAGES["results"])
    page.select_option("select#sort", "oldest")
    assert "sort=oldest" not in page.url
    with page.expect_navigation():
        page.click("aside .filter-panel button[type=submit]")
    assert "sort=oldest" in page.url
    page.context.close()
