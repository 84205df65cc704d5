"""The dashboard in a real headless Chromium: pages render, charts draw their data, a
failing scenario links to its trace, the item form works, and hostile names and outputs
stay text (``window.__xss`` is never set)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM
from tests.server.conftest import LiveServer
from tests.server.dashboard_data import TRACE_ID, XSS_NAME, XSS_OUTPUT

pytestmark = NO_CHROMIUM

SLASHED = "refund%20flow%2Fv2"
XSS_URL = "%3Cimg%20src%3Dx%20onerror%3Dwindow.__xss%3D1%3E"

DRAWN_PIXELS = """(id) => {
    const canvas = document.getElementById(id);
    const ctx = canvas.getContext("2d");
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    let drawn = 0;
    for (let i = 3; i < data.length; i += 4) { if (data[i] > 0) drawn++; }
    return drawn;
}"""


def assert_no_xss(page: Page) -> None:
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page.locator('img[src="x"]').count() == 0


def test_dashboard_overview_draws_charts_with_data(
    page: Page, server: LiveServer, console_errors: list[str], tmp_path: Path
) -> None:
    page.goto(server.url + "/")
    expect(page.locator("h1")).to_have_text("Overview")
    expect(page.locator("#pass-rate-chart")).to_be_visible()
    # no run of this store recorded a cost: a note, not an empty $0-$1 axis
    expect(page.locator(".no-costs")).to_contain_text("No run shown here recorded a cost.")
    expect(page.locator("#cost-chart")).to_have_count(0)
    page.wait_for_function("() => window.Chart && Chart.getChart('pass-rate-chart')")
    points = page.evaluate(
        "() => Chart.getChart('pass-rate-chart').data.datasets"
        ".map(d => [d.label, d.data.filter(v => v !== null)])"
    )
    assert dict(points) == {"support": [75, 50, 50], "refund flow/v2": [50]}
    assert page.evaluate(DRAWN_PIXELS, "pass-rate-chart") > 1000  # the chart is on screen
    page.locator(".charts").screenshot(path=tmp_path / "charts.png")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    expect(page.locator("#flaky")).to_contain_text("greeting")
    assert console_errors == []


def test_dashboard_failing_scenario_links_to_its_trace(
    page: Page, server: LiveServer, console_errors: list[str]
) -> None:
    page.goto(server.url + "/runs/run-2")
    expect(page.locator("#summary")).to_contain_text("2 passed, 2 failed")
    page.select_option("select[name=status]", "fail")  # htmx swaps the table in place
    rows = page.locator("#scenarios tbody tr")
    expect(rows).to_have_count(2)
    assert "status=fail" in page.url
    billing = page.locator('tr[data-scenario="billing"]')
    expect(billing).to_contain_text("Expected value equal to")
    billing.locator("a.trace-link").click()
    page.wait_for_url("**/runs/run-2/scenarios/2")
    expect(page.locator("#scenario-name")).to_have_text("billing")
    expect(page.locator(".checks")).to_contain_text("fail")
    expect(page.locator(".interaction pre.value").first).to_have_text("hello")

    page.goto(server.url + "/runs/veval-1")
    page.locator("a.trace-link").click()
    page.wait_for_url(f"**/traces/{TRACE_ID}?run=veval-1")  # the link names its run
    expect(page.locator("#trace-id")).to_have_text(TRACE_ID)
    page.locator("li.span summary").first.click()  # expand the root span
    expect(page.locator("li.span").first).to_contain_text("gpt-4o-mini")
    expect(page.locator("li.span li.span .span-name")).to_have_text("search")
    assert console_errors == []


@pytest.mark.parametrize(
    "path",
    [
        "/runs/run-2",
        "/runs/run-2/scenarios/3",
        "/runs/veval-1",
        f"/traces/{TRACE_ID}",
        f"/scenarios/{XSS_URL}",
        f"/items/{SLASHED}",
    ],
)
def test_dashboard_shows_hostile_text_as_text(page: Page, server: LiveServer, path: str) -> None:
    page.goto(server.url + path)
    page.wait_for_load_state("load")
    body = page.locator("body").inner_text()
    assert XSS_NAME in body or XSS_OUTPUT in body
    assert_no_xss(page)


def test_dashboard_trace_output_with_script_tags_is_text(page: Page, server: LiveServer) -> None:
    page.goto(server.url + f"/traces/{TRACE_ID}")
    expect(page.locator(".io pre.value").nth(1)).to_have_text(XSS_OUTPUT)
    expect(page.locator("h1")).to_contain_text(XSS_NAME)
    assert_no_xss(page)


def test_dashboard_item_form_adds_and_deletes(
    page: Page, server: LiveServer, console_errors: list[str]
) -> None:
    page.goto(server.url + f"/items/{SLASHED}")
    rows = page.locator("table.items tbody tr")
    expect(rows).to_have_count(2)
    page.fill("input[name=name]", XSS_NAME + " 2")
    page.fill("textarea[name=input]", XSS_OUTPUT)
    page.fill("input[name=tags]", "smoke, new")
    page.click("form.add-item button[type=submit]")
    expect(rows).to_have_count(3)
    expect(rows.nth(2)).to_contain_text(XSS_OUTPUT)
    assert_no_xss(page)
    rows.nth(2).locator("button.danger").click()
    expect(rows).to_have_count(2)
    assert console_errors == []
