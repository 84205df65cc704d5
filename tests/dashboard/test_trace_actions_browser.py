"""The trace page's actions in a real headless Chromium: "make this a trace-backed item"
lands on the scenario's items page with the new item, "save as snapshot" comes back
saying so, the run page links to the compare view, and a replayed trace and its replay
link each other."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM, _seeded_server
from tests.dashboard.test_browser import assert_no_xss
from tests.server.conftest import LiveServer
from tests.server.dashboard_data import TRACE_ID, XSS_NAME

from scenarist import ScenarioItem
from scenarist.store.sql.store import SqlStore
from scenarist.tracing import RunContext
from scenarist.veval.client import Client

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


ORIGINAL = "tr_" + "0a" * 16


def _lookup(ctx: RunContext) -> str:
    found = ctx.track_step("lookup", "A1", lambda: {"status": "late"})
    return f"order A1 is {found['status']}"


async def _replayed_trace(store: SqlStore) -> None:
    """A recorded trace, made an item of ``regressions``, replayed once by a run."""
    ctx = RunContext(input="where is A1?", agent_name="support")
    ctx.trace_id = ORIGINAL
    client = Client(store=store)
    await client._execute(ctx, _lookup)
    await store.add_item("regressions", ScenarioItem(name="late order", trace_id=ORIGINAL))
    assert (await client.run_scenario_async("regressions", _lookup)).passed


@pytest.fixture(scope="module")
def replay_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from _seeded_server(tmp_path_factory, _replayed_trace)


def test_trace_page_links_its_replay_and_the_replay_links_back(
    page: Page, replay_server: LiveServer, console_errors: list[str]
) -> None:
    page.goto(replay_server.url + f"/traces/{ORIGINAL}")
    expect(page.locator("#no-verdict")).to_have_count(0)
    items = page.locator("#items-from-trace tbody tr")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("late order")
    expect(items.first.locator("[data-status=pass]")).to_have_count(1)
    page.locator("#replays tbody tr a").first.click()
    expect(page.locator("#replay-of a")).to_have_text(ORIGINAL)
    page.locator("#replay-of a").click()
    expect(page.locator("#trace-id")).to_have_text(ORIGINAL)
    assert console_errors == []
