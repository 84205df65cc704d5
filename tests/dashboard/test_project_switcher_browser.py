"""The project switcher in the page header, as a user sees it in Chromium."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page, expect
from tests.server.conftest import LiveServer

ARTEFACTS = Path(__file__).parent / "artefacts"


def test_the_header_switches_project_and_the_pages_follow(
    page: Page, server: LiveServer, console_errors: list[str]
) -> None:
    page.goto(server.url + "/")
    expect(page.locator("#current-project")).to_have_text("default")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)  # the seeded runs
    page.goto(server.url + "/?project=empty-team")
    expect(page.locator("#current-project")).to_have_text("empty-team")
    expect(page.locator("table.runs tbody")).to_contain_text("No runs yet")  # its own runs
    page.locator(".project-switcher summary").click()
    ARTEFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / "project-switcher.png"))
    page.locator('.project-switcher a[href="/?project=default"]').click()
    expect(page.locator("#current-project")).to_have_text("default")
    expect(page.locator("table.runs tbody tr")).to_have_count(4)
    page.goto(server.url + "/settings")  # the cookie keeps the choice on other pages
    expect(page.locator("#current-project")).to_have_text("default")
    assert console_errors == []
