"""The trace page's actions in a real headless Chromium: "make this a trace-backed item"
lands on the scenario's items page with the new item, "save as snapshot" comes back
saying so, and the run page links to the compare view."""

from __future__ import annotations

from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM
from tests.dashboard.test_browser import assert_no_xss
from tests.server.conftest import LiveServer
from tests.server.dashboard_data import TRACE_ID, XSS_NAME

pytestmark = NO_CHROMIUM

SCENARIO = "from prod/ünïcode"


def test_trace_page_makes_a_trace_backed_item(
    page: Page, server: LiveServer, console_errors: list[str]
) -> None:
    page.goto(server.url + f"/traces/{TRACE_ID}")
    form = page.locator("form.trace-item")
    form.locator("input[name=scenario_name]").fill(SCENARIO)
    form.locator("input[name=name]").fill(XSS_NAME)
    form.locator("button[type=submit]").click()
    expect(page.locator("h1")).to_contain_text(SCENARIO)  # the items page of that scenario
    rows = page.locator("table.items tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text(XSS_NAME)
    expect(rows.first).to_contain_text(TRACE_ID)
    assert_no_xss(page)

    page.goto(server.url + f"/traces/{TRACE_ID}")
    snapshot = page.locator("form.trace-snapshot")
    snapshot.locator("input[name=name]").fill("golden run")
    snapshot.locator("button[type=submit]").click()
    expect(page.locator("#snapshot-saved")).to_contain_text("golden run")
    assert console_errors == []


def test_run_page_links_to_the_compare_view(
    page: Page, server: LiveServer, console_errors: list[str]
) -> None:
    page.goto(server.url + "/runs/run-2")
    page.click("#compare-previous")
    expect(page.locator("#compare-summary")).to_contain_text("1 fixed, 1 broken")
    expect(page.locator("#broken")).to_contain_text("billing")
    expect(page.locator("#fixed")).to_contain_text("greeting")
    expect(page.locator("#still-failing")).to_contain_text(XSS_NAME)
    assert_no_xss(page)
    assert console_errors == []
