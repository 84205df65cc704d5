"""The compare page in a real headless Chromium: reached from the run page's link (which
names the baseline and why), both outputs of each changed scenario (hostile text stays
text, a long output is cut with a way to see all), the failing checks' messages, the
deltas, the unchanged scenarios folded, and the pickers comparing any two runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM, _seeded_server
from tests.dashboard.test_browser import assert_no_xss
from tests.server.compare_data import LONG_OUT, XSS_OUT, seed_desk
from tests.server.conftest import LiveServer

pytestmark = NO_CHROMIUM


@pytest.fixture(scope="module")
def compare_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from _seeded_server(tmp_path_factory, seed_desk)


def test_compare_page_shows_outputs_messages_deltas_and_picks_runs(
    page: Page, compare_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(compare_server.url + "/runs/now")
    link = page.locator("#compare-previous")
    expect(link).to_have_text("compare with previous run on main")  # not the feature run
    link.click()
    expect(page).to_have_url(compare_server.url + "/runs/now/compare?baseline=base")
    expect(page.locator("#baseline-reason")).to_contain_text("previous run on main")

    refund = page.locator('article.scenario-diff[data-scenario="refund"]')
    expect(refund).to_have_attribute("data-bucket", "broken")
    expect(refund.locator('[data-side="baseline"] pre.output')).to_have_text("Refund sent")
    expect(refund.locator('[data-side="current"] pre.output')).to_have_text(XSS_OUT)
    expect(refund.locator('[data-side="current"] .failures .message')).to_contain_text(
        "Refund sent"
    )
    expect(refund.locator('[data-side="baseline"]')).to_contain_text("No failing check.")
    expect(refund.locator('.delta[data-field="cost"]')).to_contain_text("+50.0%")
    expect(refund.locator('.delta[data-field="duration"]')).to_contain_text("+500 ms, +50.0%")
    expect(refund.locator('.delta[data-field="tokens"]')).to_contain_text("150 → 300 (+150")
    assert_no_xss(page)

    long = page.locator('article.scenario-diff[data-scenario="long"] [data-side="current"]')
    cut = long.locator("pre.output")
    assert len(cut.inner_text()) < 700  # cut on the page
    full = long.locator("pre.output-full")
    expect(full).to_be_hidden()
    long.locator("details.output-more summary").click()
    expect(full).to_be_visible()
    assert full.inner_text().rstrip("\n") == LONG_OUT.rstrip("\n")

    message = long.locator(".failures .message")
    assert len(message.inner_text()) < 700  # the check's message quotes it all: cut too
    expect(long.locator("pre.message-full")).to_be_hidden()

    fixme = page.locator('article.scenario-diff[data-scenario="fixme"]')
    expect(fixme).to_have_attribute("data-bucket", "fixed")
    expect(fixme.locator('[data-side="baseline"] .message')).to_contain_text("nope")

    unchanged = page.locator("#unchanged")
    expect(unchanged.locator("summary")).to_have_text("1 unchanged (passed in both runs)")
    expect(unchanged.locator('tr[data-scenario="greet"]')).to_be_hidden()
    expect(page.locator("#regressed")).to_be_visible()  # the statistics stay
    page.screenshot(path=screenshots / "compare.png", full_page=True)

    # any two runs: the feature branch run against the base
    page.select_option('#compare-pick select[name="run"]', "feat")
    page.select_option('#compare-pick select[name="baseline"]', "base")
    page.click('#compare-pick button[type="submit"]')
    reason = page.locator("#baseline-reason")
    expect(reason).to_contain_text("no earlier run on feature/x: newest on main")
    expect(page.locator('#compare-pick select[name="run"]')).to_have_value("feat")
    page.select_option('#compare-pick select[name="run"]', "now")
    page.select_option('#compare-pick select[name="baseline"]', "feat")
    page.click('#compare-pick button[type="submit"]')
    expect(reason).to_contain_text("chosen baseline")
    still = page.locator('article.scenario-diff[data-scenario="refund"]')
    expect(still).to_have_attribute("data-bucket", "still_failing")  # failing on both sides
    assert console_errors == []
    # a run id typed that does not exist: a clear 404 page (the browser logs the 404)
    page.fill('#compare-pick input[name="baseline_id"]', "no-such-run")
    page.click('#compare-pick button[type="submit"]')
    expect(page.locator("body")).to_contain_text("no run 'no-such-run'")
