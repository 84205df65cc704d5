"""The all-projects view in a real headless Chromium: an empty project's overview points
at the projects that hold runs, and ``/projects`` lists each with what it holds."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM, _seeded_server
from tests.server.conftest import LiveServer, make_run_log

from scenarist.store.sql.store import SqlStore

pytestmark = NO_CHROMIUM


async def _seed(store: SqlStore) -> None:
    for n in range(3):
        await store.scoped("support").ingest_run_log(make_run_log(f"support-run-{n}"))
    await store.scoped("billing").ingest_run_log(make_run_log("billing-run-0"))


@pytest.fixture(scope="module")
def projects_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from _seeded_server(tmp_path_factory, _seed)


def test_an_empty_default_project_leads_to_the_runs(
    page: Page, projects_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(projects_server.url + "/")
    note = page.locator("#runs-elsewhere")
    expect(note).to_contain_text("No runs in project default")
    expect(note).to_contain_text("support (3 runs)")
    expect(note).to_contain_text("billing (1 run)")
    page.screenshot(path=screenshots / "overview-runs-elsewhere.png", full_page=False)
    note.get_by_role("link", name="support").click()
    expect(page.locator("table.runs tbody tr")).to_have_count(3)
    expect(page.locator("#current-project")).to_have_text("support")

    page.get_by_role("link", name="Projects", exact=True).click()
    rows = page.locator("#projects tbody tr")
    expect(rows).to_have_count(3)
    expect(rows.first).to_have_attribute("data-project", "billing")  # newest run first
    expect(page.locator('tr[data-project="support"] td').nth(1)).to_have_text("3")
    expect(page.locator('tr[data-project="support"] .badge')).to_have_text("current")
    assert console_errors == []
    page.screenshot(path=screenshots / "projects.png", full_page=False)
