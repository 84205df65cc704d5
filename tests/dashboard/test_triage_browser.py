"""Triage in a real headless Chromium (issue 31, items 5 and 7): a big run's failures
folded into groups by message that expand to their scenarios, the sort control, the
overview's "and N more", the full broken list, an old history link listing the suites,
and the suite trend without its subset runs. Hostile names and messages stay text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM, _seeded_server
from tests.dashboard.test_browser import assert_no_xss
from tests.server.conftest import LiveServer
from tests.server.triage_data import (
    BIG_FAILING,
    BIG_HOSTILE,
    BIG_RUN,
    BROKEN,
    SUPPORT,
    XSS,
    seed_triage,
)

pytestmark = NO_CHROMIUM


@pytest.fixture(scope="module")
def triage_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from _seeded_server(tmp_path_factory, seed_triage)


def test_big_run_folds_failures_by_message_and_sorts(
    page: Page, triage_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(triage_server.url + f"/runs/{BIG_RUN}")
    groups = page.locator("#failure-groups details.failure-group")
    expect(groups).to_have_count(2)
    first = groups.first
    expect(first.locator("summary")).to_contain_text(f"{BIG_FAILING} ×")
    expect(first.locator("summary")).to_contain_text("refund # for order <id> approved")
    expect(first.locator("tbody tr").first).to_be_hidden()  # folded
    expect(groups.nth(1).locator("summary")).to_contain_text(f"{BIG_HOSTILE} ×")
    expect(groups.nth(1).locator("summary .message")).to_contain_text("<img src")  # as text
    expect(page.locator("#passing tbody tr").first).to_be_hidden()  # passes stay folded
    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert height < 1500  # not 79 rows of one message
    page.screenshot(path=screenshots / "triage-run-grouped.png", full_page=True)
    first.locator("summary").click()
    expect(first.locator("tbody tr")).to_have_count(BIG_FAILING)
    expect(first.locator('tr[data-scenario="case_000"]')).to_be_visible()
    page.screenshot(path=screenshots / "triage-run-group-open.png", full_page=True)

    page.select_option("select[name=sort]", "duration")  # htmx swaps the scenarios
    page.wait_for_url("**sort=duration**")
    names = page.evaluate(
        "() => [...document.querySelectorAll('#passing tbody tr')].map(tr => tr.dataset.scenario)"
    )
    assert names == [f"zz_pass_{i}" for i in (4, 1, 6, 3, 0, 5, 2)]  # longest first
    page.select_option("select[name=group]", "none")
    page.wait_for_url("**group=none**")
    expect(page.locator("#failure-groups")).to_have_count(0)
    attention = page.locator("#scenarios > table.scenarios > tbody > tr")
    expect(attention).to_have_count(BIG_FAILING + BIG_HOSTILE)
    assert_no_xss(page)
    assert console_errors == []


def test_overview_says_and_n_more_and_lists_every_broken_scenario(
    page: Page, triage_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(triage_server.url + "/")
    expect(page.locator("#broken li")).to_have_count(10)
    more = page.locator("#broken-more")
    expect(more).to_have_text(f"and {BROKEN - 10} more")
    page.screenshot(path=screenshots / "triage-overview.png", full_page=True)
    more.click()
    page.wait_for_url("**/broken")
    expect(page.locator("#recent tbody tr")).to_have_count(BROKEN)
    expect(page.locator("#recent")).to_contain_text(f"flow {XSS}")  # beyond the ten: as text
    assert_no_xss(page)
    page.screenshot(path=screenshots / "triage-broken.png", full_page=True)
    page.locator("#recent a", has_text="flow_00").click()
    page.wait_for_url("**/scenarios/flow_00?suite=many")
    expect(page.locator("#scenario-suite")).to_contain_text("many")
    assert_no_xss(page)
    assert console_errors == []


def test_old_history_link_lists_the_suites_and_trend_leaves_out_subsets(
    page: Page, triage_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(triage_server.url + "/scenarios/refund_status")
    expect(page.locator("#choose-suite")).to_contain_text("2 suites")
    expect(page.locator("#suites a")).to_have_text(["pytest", SUPPORT])
    page.screenshot(path=screenshots / "triage-history-choose.png", full_page=True)
    page.locator("#suites a", has_text=SUPPORT).click()
    page.wait_for_url(f"**/scenarios/refund_status?suite={SUPPORT}")
    expect(page.locator("#scenario-suite")).to_contain_text("also in pytest")
    expect(page.locator(".strip .cell[data-status=pass]")).to_have_count(0)
    page.screenshot(path=screenshots / "triage-history-suite.png", full_page=True)

    page.goto(triage_server.url + f"/suites/{SUPPORT}")
    page.wait_for_function("() => window.Chart && Chart.getChart('suite-pass-rate-chart')")
    drawn = page.evaluate(
        "() => Chart.getChart('suite-pass-rate-chart').data.datasets"
        ".map(d => d.data.filter(v => v !== null))"
    )
    assert len(drawn) == 1 and len(drawn[0]) == 4 and 0 not in drawn[0]
    expect(page.locator("#suite-pass-rate-chart-note")).to_contain_text("2 subset runs")
    expect(page.locator("table.runs .badge.subset")).to_have_count(2)
    page.screenshot(path=screenshots / "triage-suite-trend.png", full_page=True)

    hostile = f"odd {XSS}"  # a support scenario: its page, its runs
    page.goto(triage_server.url + "/scenarios/" + quote(hostile, safe="") + "?suite=support")
    expect(page.locator("#scenario-name")).to_have_text(hostile)
    expect(page.locator(".strip .cell[data-status=pass]")).to_have_count(5)
    assert_no_xss(page)
    assert console_errors == []
