"""The dashboard's richer views in a real headless Chromium, asserted on what a user
sees: a trace's verdict, waterfall and chat; a big run's failures first with passes
folded and a search box; a failed comparison's diff; status colours; the overview's
filters and a suite's trend (0-100 %, money on the cost axis); the scope checkboxes.
Every view keeps hostile text as text under the CSP (no console error). Each test keeps
a screenshot (``screenshots`` fixture)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM, _seeded_server
from tests.dashboard.test_browser import DRAWN_PIXELS, assert_no_xss
from tests.server.conftest import LiveServer
from tests.server.dashboard_views_data import (
    BIG_RUN,
    CHAT_TRACE,
    CRM_DOWN,
    ERRORED_RUN,
    VEVAL_RUN,
    XSS,
    XSS_SCRIPT,
    crm_lookup,
    seed_errored,
)

pytestmark = NO_CHROMIUM

PASS_RGB = "rgb(21, 128, 61)"  # --pass
FAIL_RGB = "rgb(185, 28, 28)"  # --fail

COLOUR = "(el) => getComputedStyle(el).color"
BACKGROUND = "(el) => getComputedStyle(el).backgroundColor"


def test_dashboard_trace_page_leads_with_the_verdict_then_waterfall_and_chat(
    page: Page, views_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(views_server.url + f"/traces/{CHAT_TRACE}")
    badge = page.locator("h1 .status")
    expect(badge).to_have_text(["item failed"])  # one badge, and it is not "success"
    assert badge.evaluate(BACKGROUND) == FAIL_RGB
    verdict = page.locator(".verdict")
    expect(verdict).to_contain_text("max_cost: spent $0.000073 > $0.00005 " + XSS_SCRIPT)
    expect(verdict).to_contain_text("where is my refund " + XSS)
    expect(page.locator("#totals")).to_contain_text("$0.000073")
    expect(page.locator("#totals")).to_contain_text("first token")

    rows = page.locator("#waterfall tr[data-kind]")
    expect(rows).to_have_count(5)
    bars = {
        name: page.locator(f'#waterfall tr:has(td[title="{name}"]) rect.bar').bounding_box()
        for name in ("agent", "plan", "lookup_refund", "answer")
    }
    assert all(box is not None for box in bars.values())
    agent, plan, tool, answer = (bars[n] for n in ("agent", "plan", "lookup_refund", "answer"))
    assert agent and plan and tool and answer
    assert plan["x"] + plan["width"] <= tool["x"] + 1 <= answer["x"]  # one after the other
    assert answer["width"] == pytest.approx(agent["width"] * 0.48, rel=0.02)  # to scale
    expect(page.locator('#waterfall tr[data-status="error"]')).to_contain_text("✕ error")

    chats = page.locator("#chats .chat")
    expect(chats).to_have_count(2)
    first = chats.nth(0)
    expect(first.locator('.msg[data-role="system"]')).to_contain_text("refunds assistant")
    expect(first.locator('.msg[data-role="user"]')).to_contain_text("Where is my refund? " + XSS)
    expect(first.locator(".tool-call")).to_contain_text("→ lookup_refund(")
    expect(first.locator(".tool-call")).to_contain_text(XSS_SCRIPT)
    second = chats.nth(1)
    expect(second.locator('.msg[data-role="tool"]')).to_contain_text('{"status": "approved"}')
    expect(second.locator('.msg[data-role="assistant"] .text').last).to_have_text(
        "Approved: " + XSS_SCRIPT
    )
    raw = first.locator("details.raw pre.value").first
    expect(raw).to_be_hidden()
    first.locator("details.raw summary").click()  # the raw JSON, one click away
    expect(raw).to_be_visible()
    expect(raw).to_contain_text('"role": "system"')
    assert_no_xss(page)
    page.screenshot(path=screenshots / "trace-verdict-waterfall-chat.png", full_page=True)

    page.locator(".verdict a.verdict-run").click()
    page.wait_for_url(f"**/runs/{VEVAL_RUN}")
    page.locator("a.trace-link").click()  # and back, with the run named in the link
    page.wait_for_url(f"**/traces/{CHAT_TRACE}?run={VEVAL_RUN}")
    page.locator(".verdict a.verdict-history").click()
    page.wait_for_url("**/scenarios/refunds%2Fchat?suite=")
    expect(page.locator("#scenario-name")).to_have_text("refunds/chat")
    assert console_errors == []


def test_dashboard_big_run_shows_failures_first_folds_passes_and_searches(
    page: Page, views_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    # one row per failure here; failures folded by message: test_triage_browser.py
    page.goto(views_server.url + f"/runs/{BIG_RUN}?group=none")
    expect(page.locator("#summary")).to_contain_text("300 scenarios: 277 passed, 17 failed")
    attention = page.locator("#scenarios > table.scenarios > tbody > tr")
    expect(attention).to_have_count(23)
    expect(attention.first).to_have_attribute("data-status", "fail")
    expect(attention.last).to_have_attribute("data-status", "error")
    passing = page.locator("#passing")
    expect(passing.locator("summary")).to_have_text("277 passing scenarios")
    expect(passing.locator("tbody tr").first).to_be_hidden()  # folded
    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert height < 4000  # not ~10,000 px of mixed results
    kinds = page.locator("#by-check-kind tbody tr")
    expect(kinds.first).to_contain_text("string_matching")
    expect(page.locator('#by-check-kind tr[data-kind="fn"]')).to_contain_text("6")
    expect(page.locator("#by-tag")).to_contain_text("team:billing")
    page.screenshot(path=screenshots / "run-big.png", full_page=True)

    page.locator("input[name=q]").fill("broken")  # htmx swaps the table as you type
    expect(attention).to_have_count(6)
    page.wait_for_url("**q=broken**")
    expect(attention.first).to_contain_text("case 025 broken check")
    expect(page.locator("#passing")).to_have_count(0)
    page.locator("input[name=q]").fill("case 000")
    expect(page.locator("#passing")).to_have_attribute("open", "")  # only passes: unfolded
    expect(page.locator("#passing tbody tr")).to_have_count(1)
    expect(page.locator("#passing tbody tr").first).to_be_visible()
    assert_no_xss(page)
    assert console_errors == []


def test_dashboard_failed_comparison_shows_a_word_diff_in_status_colours(
    page: Page, views_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(views_server.url + f"/runs/{BIG_RUN}?q=long")
    page.locator("a.trace-link").click()
    page.wait_for_url(f"**/runs/{BIG_RUN}/scenarios/*")
    diff = page.locator(".diff")
    expect(diff.locator(".diff-expected del")).to_have_text(["Monday", "card"])
    expect(diff.locator(".diff-actual ins")).to_have_text(["Tuesday", "bank account"])
    expect(diff.locator(".elided").first).to_contain_text("unchanged characters")
    assert diff.locator("del").first.evaluate(BACKGROUND) != "rgba(0, 0, 0, 0)"
    message = page.locator('.checks .message[data-status="fail"]')
    assert message.evaluate(COLOUR) == FAIL_RGB
    page.locator(".checks").screenshot(path=screenshots / "scenario-diff.png")

    page.goto(views_server.url + f"/runs/{BIG_RUN}?q=json")
    page.locator("a.trace-link").click()
    page.wait_for_url(f"**/runs/{BIG_RUN}/scenarios/*")
    expect(page.locator(".diff-expected del")).to_have_text("approved")
    expect(page.locator(".diff-actual")).to_contain_text(XSS)  # hostile JSON stays text
    assert_no_xss(page)

    page.goto(views_server.url + f"/runs/{BIG_RUN}/scenarios/0")  # a pass message is green
    passed = page.locator('.checks .message[data-status="pass"]')
    expect(passed).to_contain_text("contains")
    assert passed.evaluate(COLOUR) == PASS_RGB
    assert page.locator(".checks .status").evaluate(BACKGROUND) == PASS_RGB
    assert console_errors == []


def test_dashboard_overview_filters_and_suite_page_draw_a_plain_trend(
    page: Page, views_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(views_server.url + "/")
    expect(page.locator("table.runs tbody tr")).to_have_count(3)
    page.wait_for_function("() => window.Chart && Chart.getChart('cost-chart')")
    ticks = page.evaluate("() => Chart.getChart('cost-chart').scales.y.ticks.map(t => t.label)")
    assert ticks and all(str(t).startswith("$") for t in ticks), ticks
    assert not any("E-" in str(t) or "e-" in str(t) for t in ticks)
    assert "$0.00007" in ticks  # the Veval run's $0.000073, at its scale
    page.locator(".charts").screenshot(path=screenshots / "overview-charts.png")
    page.select_option("select[name=branch]", "main")
    page.click("#run-filters button[type=submit]")
    page.wait_for_url("**branch=main**")
    expect(page.locator("table.runs tbody tr")).to_have_count(1)
    expect(page.locator("#clear-filters")).to_be_visible()
    page.select_option("select[name=branch]", "")
    page.select_option("select[name=suite]", "big suite")
    page.fill("input[name=since]", "2026-11-01")
    page.click("#run-filters button[type=submit]")
    page.wait_for_url("**suite=big+suite**")
    expect(page.locator("table.runs tbody tr")).to_have_count(2)
    page.screenshot(path=screenshots / "overview-filtered.png", full_page=True)

    page.locator("#suite-page").click()
    page.wait_for_url("**/suites/big%20suite")
    expect(page.locator("#suite-name")).to_have_text("big suite")
    page.wait_for_function("() => window.Chart && Chart.getChart('suite-pass-rate-chart')")
    chart = page.evaluate(
        """() => { const c = Chart.getChart('suite-pass-rate-chart');
        return {min: c.scales.y.min, max: c.scales.y.max, labels: c.data.labels,
                tension: c.data.datasets.map(d => d.tension),
                ticks: c.scales.y.ticks.map(t => t.label)}; }"""
    )
    assert (chart["min"], chart["max"]) == (0, 100)  # always 0-100 %
    assert set(chart["tension"]) == {0}  # a plain line: no overshoot
    assert len(set(chart["labels"])) == len(chart["labels"]) == 2
    assert chart["ticks"][-1] == "100 %"
    assert page.evaluate(DRAWN_PIXELS, "suite-pass-rate-chart") > 1000
    page.screenshot(path=screenshots / "suite-page.png", full_page=True)
    assert console_errors == []


def test_dashboard_settings_scope_checkboxes_sit_with_their_labels(
    page: Page, views_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(views_server.url + "/settings")
    for scope in ("ingest", "read", "admin"):
        label = page.locator(f"label.scope:has(#scope-{scope})")
        box = page.locator(f"#scope-{scope}").bounding_box()
        name = label.locator("strong").bounding_box()
        hint = label.locator(".hint").bounding_box()
        assert box and name and hint
        assert box["x"] + box["width"] <= name["x"]  # the box, then its name...
        assert abs((box["y"] + box["height"] / 2) - (name["y"] + name["height"] / 2)) < 8
        assert hint["y"] >= name["y"] + name["height"] - 1  # ...and what it allows below
        assert hint["x"] == pytest.approx(name["x"], abs=1)
    admin = page.locator("#scope-admin")
    expect(admin).not_to_be_checked()
    page.locator("label.scope:has(#scope-admin) strong").click()  # the name toggles it
    expect(admin).to_be_checked()
    page.locator("form.add-key").screenshot(path=screenshots / "settings-scopes.png")
    assert console_errors == []


@pytest.mark.parametrize(
    "path",
    [
        f"/traces/{CHAT_TRACE}",
        f"/runs/{BIG_RUN}",
        f"/runs/{BIG_RUN}?q=json",
        f"/runs/{BIG_RUN}/scenarios/13",
        f"/runs/{VEVAL_RUN}",
        "/?suite=big+suite",
        "/suites/big%20suite",
    ],
)
def test_dashboard_new_views_keep_hostile_text_as_text(
    page: Page, views_server: LiveServer, console_errors: list[str], path: str
) -> None:
    page.goto(views_server.url + path)
    page.wait_for_load_state("load")
    if "suite" not in path:
        assert XSS in page.locator("body").inner_text()
    assert_no_xss(page)
    assert console_errors == []


@pytest.fixture(scope="module")
def errored_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """The dashboard over one run whose agent raised."""
    yield from _seeded_server(tmp_path_factory, seed_errored)


def test_an_errored_scenario_shows_what_raised_where_and_its_traceback(
    page: Page, errored_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    import inspect

    source, start = inspect.getsourcelines(crm_lookup)
    line = start + next(i for i, text in enumerate(source) if "raise ConnectionError" in text)
    where = f"tests/server/dashboard_views_data.py:{line} in crm_lookup"
    page.goto(errored_server.url + f"/runs/{ERRORED_RUN}")
    row = page.locator('tr[data-scenario="greets_customer"]')
    expect(row.locator(".step-error")).to_contain_text(
        f"ConnectionError in the agent call: {CRM_DOWN}"
    )
    expect(row.locator(".step-error")).to_contain_text(f"at {where}")
    expect(row).not_to_contain_text("1 checks")
    page.screenshot(path=screenshots / "run-errored-scenario.png", full_page=True)

    page.goto(errored_server.url + f"/runs/{ERRORED_RUN}/scenarios/0")
    error = page.locator("#step-error-1")
    expect(error).to_contain_text("ConnectionError in the agent call")
    expect(error.locator(".message")).to_have_text(CRM_DOWN)
    expect(error.locator("code.location")).to_have_text(where)
    traceback = error.locator("details.traceback pre")
    expect(traceback).to_be_visible()  # open: the reason is the point of the page
    expect(traceback).to_contain_text("Traceback (most recent call last)")
    expect(traceback).to_contain_text(f"line {line}, in crm_lookup")
    assert_no_xss(page)
    assert console_errors == []
    page.screenshot(path=screenshots / "scenario-errored-traceback.png", full_page=True)
    twin = page.request.get(errored_server.url + f"/runs/{ERRORED_RUN}/scenarios/0.json").json()
    assert twin["errors"][0]["what"] == "the agent call"
    assert twin["errors"][0]["location"] == where
