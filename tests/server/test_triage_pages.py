"""Triage pages through the app (issue 31, items 5 and 7), on SQLite and PostgreSQL: the
history page of one suite's scenario (and old links listing the suites), subset runs off
the trend, failures grouped by message, sorting, and "and N more" with the full lists."""

from __future__ import annotations

import httpx2
import pytest
from tests.server.triage_data import (
    BIG_FAILING,
    BIG_HOSTILE,
    BIG_RUN,
    BROKEN,
    SUPPORT,
    XSS,
    seed_triage,
)

from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio
HTML = {"Accept": "text/html"}


@pytest.fixture
async def triage(database_url: str, app_client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    store = SqlStore(database_url)
    try:
        await seed_triage(store)
    finally:
        await store.close()
    return app_client


def test_failure_pattern_masks_numbers_and_ids() -> None:
    from scenarist.server.dashboard.pages import failure_pattern

    assert failure_pattern("refund 1042 for order 7f3a0042c9e1 approved") == (
        "refund # for order <id> approved"
    )
    assert failure_pattern("run 3f2b8c1e-0a4d-4e5f-9a6b-1c2d3e4f5a6b took 12.5 s\n  twice") == (
        "run <id> took # s twice"
    )
    assert failure_pattern("deadbeef stays a word") == "deadbeef stays a word"


async def test_history_page_is_one_suites_scenario(triage: httpx2.AsyncClient) -> None:
    old_link = (await triage.get("/scenarios/refund_status.json")).json()
    assert old_link["choose"] is True
    assert old_link["suites"] == ["pytest", SUPPORT]
    assert old_link["points"] == []
    html = (await triage.get("/scenarios/refund_status", headers=HTML)).text
    assert 'href="/scenarios/refund_status?suite=support"' in html
    assert 'href="/scenarios/refund_status?suite=pytest"' in html
    page = (await triage.get("/scenarios/refund_status.json", params={"suite": "pytest"})).json()
    assert page["suite_name"] == "pytest"
    assert [p["status"] for p in page["points"]] == ["pass"] * 4
    assert page["flips"] == 0
    assert page["last_failures"] == []
    support = (await triage.get("/scenarios/refund_status.json", params={"suite": SUPPORT})).json()
    assert {p["status"] for p in support["points"]} == {"fail"}
    assert support["flips"] == 0
    one_suite = (await triage.get("/scenarios/greeting.json")).json()  # only support has it
    assert one_suite["choose"] is False
    assert one_suite["suite_name"] == SUPPORT


async def test_subset_runs_are_not_drawn_on_the_suite_trend(triage: httpx2.AsyncClient) -> None:
    suite = (await triage.get(f"/suites/{SUPPORT}.json")).json()
    subsets = {run["run_id"] for run in suite["runs"] if run["subset"]}
    assert subsets == {"support-subset", "support-selected"}
    chart = suite["pass_rate_chart"]
    (series,) = chart["series"]
    assert len(series["values"]) == 4  # the four full runs, no drop to 0 %
    assert 0 not in series["values"]
    assert "2 subset runs are not drawn" in chart["note"]
    assert len(suite["cost_chart"]["labels"]) == 6  # costs are still every run's
    full = [r for r in suite["runs"] if not r["subset"]]
    decided = sum(r["passed_count"] + r["failed_count"] + r["errored_count"] for r in full)
    assert suite["pass_rate"] == sum(r["passed_count"] for r in full) / decided
    html = (await triage.get(f"/suites/{SUPPORT}", headers=HTML)).text
    assert "subset runs are not drawn" in html
    assert html.count('class="badge subset"') == 2
    overview = (await triage.get("/index.json")).json()
    assert overview["pass_rate_chart"]["note"].startswith("2 subset runs")


async def test_run_page_groups_failures_by_message(triage: httpx2.AsyncClient) -> None:
    page = (await triage.get(f"/runs/{BIG_RUN}.json")).json()
    groups = page["failure_groups"]
    assert [g["count"] for g in groups] == [BIG_FAILING, BIG_HOSTILE]
    assert "refund # for order <id> approved" in groups[0]["pattern"]
    assert groups[0]["check"] == "equals"
    assert len(groups[0]["positions"]) == BIG_FAILING
    assert groups[0]["scenario_names"][0] == "case_000"
    assert XSS.split("=")[0] in groups[1]["example"]
    html = (await triage.get(f"/runs/{BIG_RUN}", headers=HTML)).text
    assert html.count('<details class="failure-group"') == 2
    assert f'<span class="group-count">{BIG_FAILING} ×</span>' in html
    assert "<img src=x" not in html  # hostile messages stay text
    flat = (await triage.get(f"/runs/{BIG_RUN}", params={"group": "none"}, headers=HTML)).text
    assert 'class="failure-group"' not in flat


async def test_run_page_sorts_by_status_name_duration_and_cost(triage: httpx2.AsyncClient) -> None:
    def order(page: dict[str, object]) -> list[str]:
        return [s["scenario_name"] for s in page["scenarios"]]  # type: ignore[attr-defined, index]

    async def sorted_by(key: str) -> dict[str, object]:
        answer = await triage.get(f"/runs/{BIG_RUN}.json", params={"sort": key})
        assert answer.status_code == 200
        page: dict[str, object] = answer.json()
        assert page["sort"] == key
        return page

    by_status = await sorted_by("status")
    assert order(by_status)[-1].startswith("zz_pass")
    by_name = order(await sorted_by("name"))
    assert by_name == sorted(by_name, key=str.casefold)
    durations = [s["duration_ms"] for s in (await sorted_by("duration"))["scenarios"]]  # type: ignore[attr-defined]
    assert durations == sorted(durations, reverse=True) and durations[0] > durations[-1]
    costs = [s["cost_usd"] for s in (await sorted_by("cost"))["scenarios"]]  # type: ignore[attr-defined]
    assert costs == sorted(costs, reverse=True) and costs[0] > costs[-1]
    bad = await triage.get(f"/runs/{BIG_RUN}.json", params={"sort": "colour"})
    assert bad.status_code == 422
    assert "sort='colour' is not one of status, name, duration, cost" in bad.text
    bad = await triage.get(f"/runs/{BIG_RUN}.json", params={"group": "check"})
    assert bad.status_code == 422
    assert "group=" in bad.text


async def test_broken_and_flaky_say_and_n_more_and_link_the_full_list(
    triage: httpx2.AsyncClient,
) -> None:
    overview = (await triage.get("/index.json")).json()
    assert len(overview["broken"]) == 10
    assert overview["broken_total"] == BROKEN
    html = (await triage.get("/", headers=HTML)).text
    assert f'<a id="broken-more" href="/broken">and {BROKEN - 10} more</a>' in html
    assert 'id="flaky-more"' not in html  # nothing hidden: no link
    full = (await triage.get("/broken.json")).json()
    assert full["kind"] == "broken"
    assert full["total"] == BROKEN
    assert len(full["broken"]) == BROKEN
    listed = (await triage.get("/broken", headers=HTML)).text
    assert listed.count("?suite=many") == 12
    flaky = (await triage.get("/flaky.json")).json()
    assert flaky == {"kind": "flaky", "broken": [], "flaky": [], "total": 0}
