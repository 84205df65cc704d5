"""Issue 31, item 8 in a real headless Chromium over the real server: a run streamed in
three parts shows partial on its page, which follows it (htmx polling, no inline script)
until it is complete; an interrupted run stays readable; the scenario page's review forms
override a verdict and comment with hostile text shown as text."""

from __future__ import annotations

from pathlib import Path

import httpx2
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM
from tests.dashboard.test_browser import assert_no_xss
from tests.server.conftest import LiveServer, make_run_log

pytestmark = NO_CHROMIUM

HOSTILE = '<img src=x onerror=window.__xss=4> known flake & "quotes"'
OUTCOMES = {"alpha": True, "beta": False, "gamma": True, "delta": True}


def test_a_streamed_run_fills_in_then_completes(
    page: Page, server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    log = make_run_log("live-browser", outcomes=OUTCOMES).model_dump(mode="json")
    records = log["scenarios"]
    parts = f"{server.url}/api/runs/live-browser/records"
    assert httpx2.post(f"{server.url}/api/runs", json={"header": log["header"]}).status_code == 201
    assert httpx2.post(parts, json={"scenarios": records[:2]}).status_code == 200

    page.goto(server.url + "/runs/live-browser")
    expect(page.locator("#run-state")).to_have_attribute("data-state", "running")
    expect(page.locator("#run-state")).to_contain_text("2 scenarios so far")
    expect(page.locator("#scenarios tr[data-scenario]")).to_have_count(2)
    page.screenshot(path=str(screenshots / "live-run-partial.png"), full_page=True)

    assert httpx2.post(parts, json={"scenarios": records[2:3]}).status_code == 200
    expect(page.locator("#scenarios tr[data-scenario]")).to_have_count(3)  # polled in
    expect(page.locator("#run-state")).to_contain_text("3 scenarios so far")

    done = httpx2.post(parts, json={"scenarios": records[3:], "footer": log["footer"]})
    assert done.json()["complete"] is True
    expect(page.locator("#run-state")).to_have_attribute("data-state", "complete")
    expect(page.locator("#scenarios tr[data-scenario]")).to_have_count(4)
    expect(page.locator("#summary")).not_to_contain_text("running")
    expect(page.locator("#live-poll")).to_have_count(0)  # no more polling
    page.screenshot(path=str(screenshots / "live-run-complete.png"), full_page=True)
    assert console_errors == []  # the CSP allowed everything the page did


def test_an_interrupted_run_stays_readable(
    page: Page, server: LiveServer, console_errors: list[str]
) -> None:
    log = make_run_log("live-cut", outcomes=OUTCOMES).model_dump(mode="json")
    httpx2.post(f"{server.url}/api/runs", json={"header": log["header"]})
    httpx2.post(f"{server.url}/api/runs/live-cut/records", json={"scenarios": log["scenarios"][:1]})
    page.goto(server.url + "/runs/live-cut")
    expect(page.locator("#scenarios tr[data-scenario]")).to_have_count(1)
    page.locator("#scenarios a.trace-link").first.click()
    expect(page.locator("#scenario-name")).to_have_text("alpha")
    assert console_errors == []


def test_the_review_forms_override_and_comment(
    page: Page, server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(server.url + "/runs/run-2/scenarios/2")  # billing broke in run-2
    expect(page.locator("#scenario-name")).to_have_text("billing")
    override = page.locator("form.review-override")
    override.locator("select[name=verdict]").select_option("pass")
    override.locator("input[name=reason]").fill(HOSTILE)
    override.locator("button[type=submit]").click()
    expect(page.locator("#review-badge")).to_contain_text("overridden by local on ")
    expect(page.locator("#review-badge")).to_contain_text(HOSTILE)  # as text
    expect(page.locator("h1 .original-status")).to_contain_text("was fail")

    comment = page.locator("form.review-comment")
    comment.locator("textarea[name=reason]").fill(HOSTILE)
    comment.locator("button[type=submit]").click()
    expect(page.locator("#review-comments .comment-text")).to_have_text(HOSTILE)
    page.locator("#review-history summary").click()
    expect(page.locator("#review-history tbody tr")).to_have_count(2)
    page.screenshot(path=str(screenshots / "review-scenario.png"), full_page=True)
    assert_no_xss(page)

    page.goto(server.url + "/runs/run-2")
    expect(page.locator("#reviewed-summary")).to_contain_text("after review")
    expect(page.locator(".review-badge")).to_contain_text(HOSTILE)
    page.goto(server.url + "/")
    expect(page.locator("body")).to_be_visible()
    assert_no_xss(page)
    assert console_errors == []
