"""The trace browser (``/traces``) in a real headless Chromium: reached from the nav, rows
with previews and a replay badge linking the original, the text filter, paging that keeps
the filters; hostile input stays text."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.dashboard.conftest import NO_CHROMIUM, _seeded_server
from tests.dashboard.test_browser import assert_no_xss
from tests.server.conftest import LiveServer
from tests.server.dashboard_views_data import XSS, XSS_SCRIPT

from scenarist.model.record import TraceRecord
from scenarist.store.sql.store import SqlStore

pytestmark = NO_CHROMIUM

T0 = datetime(2026, 11, 3, 8, tzinfo=UTC)


async def _seed(store: SqlStore) -> None:
    for n in range(60):  # more than a page of plain ones
        await store.save_trace(
            TraceRecord(trace_id=f"tr_{n:03d}", agent_name="faq", input=f"faq {n}",
                        output="ok", status="success", started_at=T0 + timedelta(minutes=n))
        )  # fmt: skip
    await store.save_trace(
        TraceRecord(trace_id="tr_refund", agent_name="support", input=f"Where is my refund? {XSS}",
                    output=f"It left on Monday {XSS_SCRIPT}", status="error",
                    started_at=T0 + timedelta(hours=3))
    )  # fmt: skip
    await store.save_trace(
        TraceRecord(trace_id="tr_refund_replay", agent_name="support", input="Where is my refund?",
                    output="It left on Monday", status="success", is_replay=True,
                    metadata={"replay_of": "tr_refund"}, started_at=T0 + timedelta(hours=4))
    )  # fmt: skip


@pytest.fixture(scope="module")
def traces_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    yield from _seeded_server(tmp_path_factory, _seed)


def test_the_trace_browser_lists_filters_and_pages(
    page: Page, traces_server: LiveServer, console_errors: list[str], screenshots: Path
) -> None:
    page.goto(traces_server.url + "/")
    page.get_by_role("link", name="Traces", exact=True).click()
    expect(page).to_have_url(traces_server.url + "/traces")
    rows = page.locator("#traces tbody tr")
    expect(rows).to_have_count(50)
    replay = page.locator('tr[data-trace="tr_refund_replay"]')
    expect(replay.locator(".badge.replay")).to_contain_text("replay of tr_refund")
    hostile = page.locator('tr[data-trace="tr_refund"]')
    expect(hostile.locator("td.preview").first).to_have_text(f"Where is my refund? {XSS}")
    expect(hostile.locator("td.preview").last).to_have_text(f"It left on Monday {XSS_SCRIPT}")
    assert_no_xss(page)
    page.screenshot(path=screenshots / "trace-list.png", full_page=False)

    page.fill('#trace-filters input[name="q"]', "REFUND")
    page.click('#trace-filters button[type="submit"]')
    expect(rows).to_have_count(2)
    page.select_option('#trace-filters select[name="replay"]', "none")
    page.click('#trace-filters button[type="submit"]')
    expect(rows).to_have_count(1)
    expect(rows.first).to_have_attribute("data-trace", "tr_refund")
    replay_link = page.goto(traces_server.url + "/traces?replay=only")
    assert replay_link is not None and replay_link.ok
    page.locator('tr[data-trace="tr_refund_replay"] .badge.replay a').click()
    expect(page).to_have_url(traces_server.url + "/traces/tr_refund")

    page.goto(traces_server.url + "/traces?agent=faq&limit=25")
    expect(rows).to_have_count(25)
    older = page.locator("#older-traces")
    assert "agent=faq" in (older.get_attribute("href") or "")
    older.click()
    expect(rows).to_have_count(25)
    expect(rows.first).to_have_attribute("data-trace", "tr_034")
    twin = page.request.get(traces_server.url + "/traces.json?q=refund").json()
    assert [t["trace_id"] for t in twin["traces"]] == ["tr_refund_replay", "tr_refund"]
    assert twin["filters"]["q"] == "refund"
    bad = page.request.get(traces_server.url + "/traces.json?min_cost=cheap")
    assert bad.status == 422 and "min_cost" in bad.text()
    assert console_errors == []


def test_a_text_search_says_how_far_back_it_looked_and_goes_on(
    page: Page,
    traces_server: LiveServer,
    console_errors: list[str],
    screenshots: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The search's window (2,000 traces; 20 here) ran out: the page says so and "Search
    older traces →" searches the next window with the same filters."""
    from scenarist.server.dashboard import trace_list

    monkeypatch.setattr(trace_list, "TEXT_SEARCH_WINDOW", 20)
    page.goto(traces_server.url + "/traces?q=refund")
    rows = page.locator("#traces tbody tr[data-trace]")
    expect(rows).to_have_count(2)
    expect(page.locator("#search-window")).to_contain_text("Searched the 20 newest traces")
    expect(page.locator("#search-window")).to_contain_text("older ones are not searched yet")
    page.screenshot(path=screenshots / "trace-list-search-window.png", full_page=False)
    page.locator("#search-older").click()
    expect(page).to_have_url(re.compile(r"/traces\?q=refund&cursor="))
    expect(rows).to_have_count(0)
    expect(page.locator("#traces tbody")).to_contain_text("No trace matches these filters.")
    expect(page.locator("#search-older")).to_be_visible()  # 40 faq traces left: one more window
    assert console_errors == []
