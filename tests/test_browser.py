"""The pages in a real browser: Debian's chromium driven by Playwright against ``searchnasa serve``.

A person's path through the site: type a query, switch to the NASA NTRS tab, go to page 2, open a
record. Then the hostile SYNTHETIC record: its text must not run as script (a dialog would show it),
which a positive control proves the listener would catch.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect, sync_playwright

from server_util import HOSTILE_ID, HOSTILE_MARKER, Server, build_web_home, running_server

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def server(sample_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Server:
    home = build_web_home(tmp_path_factory.getbasetemp(), sample_home)
    with running_server(home, tmp_path_factory.mktemp("browser_server") / "server.log") as srv:
        yield srv


@pytest.fixture(scope="module")
def browser_page(server: Server):
    assert Path(CHROMIUM).exists(), "Debian chromium is required (make browser)"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, base_url=server.base_url)
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.dialogs = []  # type: ignore[attr-defined]
        page.requests = []  # type: ignore[attr-defined]
        page.console_errors = []  # type: ignore[attr-defined]

        def on_dialog(dialog) -> None:
            page.dialogs.append(dialog.message)  # type: ignore[attr-defined]
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("request", lambda r: page.requests.append(r.url))  # type: ignore[attr-defined]
        page.on("console", lambda m: m.type == "error" and page.console_errors.append(m.text))  # type: ignore[attr-defined]
        yield page
        context.close()
        browser.close()


def badges(page: Page) -> list[str]:
    return [t.strip() for t in page.locator("article.card .badge").all_inner_texts()]


def test_search_tab_page_record(browser_page: Page, server: Server, artifacts_dir: Path) -> None:
    page = browser_page
    page.goto("/")
    page.fill("#q", "wind tunnel")
    page.press("#q", "Enter")
    page.wait_for_url(re.compile(r"/search\?q=wind\+tunnel"))
    expect(page.locator("h1")).to_have_text("Results for “wind tunnel”")
    # the matches, then (data-dependent) how many more are close in meaning and the switch to hide them
    expect(page.locator("p.count")).to_have_text(re.compile(
        r"^[\d,]+ records( · [\d,]+ more close in meaning)? · Page 1( · Hide records close in meaning)?$"))
    assert page.locator("article.card").count() == 20
    page.screenshot(path=str(artifacts_dir / "browser_search.png"), full_page=False)

    page.click("nav.tabs a.tab:has-text('NASA NTRS')")
    page.wait_for_url(re.compile(r"source=ntrs"))
    expect(page.locator("nav.tabs a.tab.active")).to_contain_text("NASA NTRS")
    assert set(badges(page)) == {"NASA NTRS"}
    assert page.locator("#q").input_value() == "wind tunnel"

    page.click("nav.pagination a.next")
    page.wait_for_url(re.compile(r"page=2"))
    expect(page.locator("p.count")).to_have_text(re.compile(r"· Page 2( · Hide records close in meaning)?$"))
    assert set(badges(page)) == {"NASA NTRS"} and page.locator("article.card").count() > 0

    first = page.locator("article.card h2.title a").first
    title = first.inner_text().strip()
    first.click()
    page.wait_for_url(re.compile(r"/records/ntrs:"))
    expect(page.locator("h1.record-title")).to_have_text(title)
    expect(page.locator("dl.fields")).to_contain_text("Dates")
    expect(page.locator("section.rights")).to_contain_text("Source license links do not imply unrestricted reuse.")
    assert page.locator("section.related li.related-item").count() > 0
    page.screenshot(path=str(artifacts_dir / "browser_record.png"), full_page=True)

    page.click("a.more-related")
    page.wait_for_url(re.compile(r"/related(\?back=[^&]+)?$"))
    expect(page.locator("h1")).to_have_text(re.compile(r"^Related papers: "))
    outside = [u for u in page.requests if not u.startswith(server.base_url)]  # type: ignore[attr-defined]
    assert outside == [], outside
    assert page.console_errors == []  # type: ignore[attr-defined]  (no CSP violations, no 404s)


def test_record_text_never_runs_as_script(browser_page: Page, artifacts_dir: Path) -> None:
    page = browser_page
    page.dialogs.clear()  # type: ignore[attr-defined]
    page.goto(f"/search?q={HOSTILE_MARKER}")
    expect(page.locator("article.card h2.title")).to_contain_text("<script>alert(1)</script>")
    expect(page.locator("article.card .snippet")).to_contain_text("<img src=x onerror=alert(2)>")
    page.screenshot(path=str(artifacts_dir / "browser_hostile_search.png"))
    page.click("article.card h2.title a")
    page.wait_for_url(re.compile(re.escape(HOSTILE_ID)))
    expect(page.locator("ul.authors")).to_contain_text("<script>alert(5)</script>")
    page.screenshot(path=str(artifacts_dir / "browser_hostile_record.png"), full_page=True)
    page.hover("ul.chips li")  # an injected onmouseover would fire here
    page.goto(f"/records/{HOSTILE_ID}/related")
    page.goto("/search?q=%22%3E%3Cscript%3Ealert(13)%3C%2Fscript%3E%3Cimg+src%3Dx+onerror%3Dalert(14)%3E")
    page.wait_for_timeout(300)
    assert page.dialogs == []  # type: ignore[attr-defined]
    # the page's own script (static, same origin) and nothing else
    assert page.locator("script").count() == 1 and page.locator("script[src='/static/search.js']").count() == 1
    # Positive control: a dialog raised by script is seen by the listener above.
    page.evaluate("() => alert('control')")
    assert page.dialogs == ["control"]  # type: ignore[attr-defined]


def test_did_you_mean_link_keeps_the_filters(browser_page: Page) -> None:
    page = browser_page
    page.goto("/search?q=aerodynamcs&source=ntrs")
    link = page.locator("p.suggestion a.did-you-mean")
    expect(link).to_have_text("aerodynamics")
    link.click()
    page.wait_for_url(re.compile(r"q=aerodynamics.*source=ntrs|source=ntrs.*q=aerodynamics"))
    expect(page.locator("h1")).to_have_text("Results for “aerodynamics”")
    assert page.locator("p.suggestion").count() == 0
    assert set(badges(page)) == {"NASA NTRS"} and page.locator("article.card").count() > 0
    # the suggestion repeats the user's own text: it is shown as text, never as markup
    page.goto("/search?q=%3Cb%3Eaerodynamcs%3C%2Fb%3E")
    expect(page.locator("p.suggestion a.did-you-mean")).to_have_text("<b>aerodynamics</b>")
    assert page.locator("p.suggestion b").count() == 0


def test_one_card_per_work_and_its_copies(browser_page: Page, artifacts_dir: Path) -> None:
    page = browser_page
    page.goto("/")
    page.fill("#q", '"Askaryan effect in rock salt"')
    page.press("#q", "Enter")
    page.wait_for_url(re.compile(r"/search\?"))
    expect(page.locator("article.card")).to_have_count(1)
    also = page.locator("article.card .also-in")
    expect(also).to_have_text(re.compile(r"^Also in: (NASA NTRS|DOE OSTI)$"))
    page.screenshot(path=str(artifacts_dir / "browser_also_in.png"))
    also.locator("a").click()
    page.wait_for_url(re.compile(r"/records/(ntrs|osti):"))
    expect(page.locator("section.copies")).to_contain_text("same DOI 10.1103/physrevd.72.023002")
    expect(page.locator("h1.record-title")).to_contain_text("Askaryan effect")


def test_year_histogram_bars_link_and_count_like_the_api(browser_page: Page, server: Server,
                                                         artifacts_dir: Path) -> None:
    """The histogram as Chromium lays it out and exposes it: every bar is drawn, is a link whose
    accessible name is its year and count (what a screen reader reads), counts as the API does,
    and following one shows that year only."""
    import httpx

    page = browser_page
    page.goto("/search?q=engine&source=ntrs")
    bars = page.locator("svg.year-bars a.year-bar")
    drawn = {int(a.get_attribute("data-year")): int(a.get_attribute("data-count")) for a in bars.all()}
    api = httpx.get(server.base_url + "/api/search", params={"q": "engine", "source": "ntrs"}, timeout=30).json()
    assert drawn == {int(b["value"]): b["count"] for b in api["facets"]["year"]} and len(drawn) > 10
    names = [link.get_attribute("aria-label") for link in bars.all()]
    for year, count in drawn.items():
        name = f"{year}: {count:,} record{'' if count == 1 else 's'}"
        assert name in names
    # Chromium's accessibility tree: the chart is a group named by its caption, holding the links
    tree = page.locator("svg.year-bars").aria_snapshot()
    assert tree.startswith("- 'group \"Records per year, ") and tree.count('link "') == len(drawn)
    some = max(drawn, key=drawn.get)
    assert f'link "{some}: {drawn[some]:,} records"' in tree
    box = page.locator(f'a.year-bar[data-year="{some}"] rect.bar').bounding_box()
    assert box is not None and box["height"] > 20 and box["width"] > 0  # the tallest bar is drawn tall
    page.screenshot(path=str(artifacts_dir / "browser_year_histogram.png"))

    page.get_by_role("link", name=f"{some}: {drawn[some]:,} records").click()
    page.wait_for_url(re.compile(rf"year_from={some}&year_to={some}"))
    # hybrid mode may list records close in meaning after the matches: the matches are that year
    expect(page.locator("p.count")).to_have_text(re.compile(rf"^{drawn[some]:,} records? · Page 1( · .*)?$"))
    assert set(t.strip() for t in page.locator("article.card:not(.extra) .date").all_inner_texts()) == {str(some)}
    assert set(badges(page)) == {"NASA NTRS"}  # the source tab is kept
    expect(page.locator(f'a.year-bar[data-year="{some}"]')).to_have_attribute("aria-current", "true")
    page.click("a.all-years")
    page.wait_for_url(re.compile(r"/search\?q=engine&source=ntrs$"))


def test_acronym_notice_and_its_search_only_link(browser_page: Page, artifacts_dir: Path) -> None:
    """Typing an acronym: the page says it also searched the meaning, the results show the meaning
    marked, and "search only TBC" turns the expansion off for this query."""
    page = browser_page
    page.goto("/")
    page.fill("#q", "TBC")
    page.press("#q", "Enter")
    page.wait_for_url(re.compile(r"/search\?q=TBC"))
    notice = page.locator("p.acronym-notice")
    expect(notice).to_have_text(re.compile(r"^TBC also searched as thermal barrier \w+ · search only TBC$"))
    expanded = page.locator("article.card").count()
    expect(page.locator("article.card mark", has_text=re.compile(r"thermal barrier coatings", re.IGNORECASE))).not_to_have_count(0)
    page.screenshot(path=str(artifacts_dir / "browser_acronym.png"))
    notice.locator("a.acronym-only").click()
    page.wait_for_url(re.compile(r"q=%3DTBC"))
    assert page.locator("#q").input_value() == "=TBC"
    expect(page.locator("p.acronym-notice")).to_have_count(0)
    assert 0 < page.locator("article.card").count() < expanded
