"""The dashboard's richer views through their JSON twins (SQLite and PostgreSQL) and
their HTML: a trace's verdict, waterfall and chat view; diffs of failed comparisons;
a big run (failures first, by check kind, search); the overview's filters and a suite's
page; money at its scale; hostile text escaped in every new view. The browser renders
them in ``tests/dashboard/test_views_browser.py``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx2
import pytest
from tests.server.dashboard_views_data import (
    BIG_RUN,
    BIG_SCENARIOS,
    BIG_SUITE,
    CHAT_TRACE,
    ITEM_SCENARIO,
    MAIN_RUN,
    ORPHAN_TRACE,
    VEVAL_RUN,
    XSS,
    XSS_SCRIPT,
    seed_views,
)

from scenarist.server.dashboard.pages import _distinct_labels

pytestmark = pytest.mark.anyio

HTML = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


@pytest.fixture
async def client(app_client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    await seed_views(app_client.app.state.store)  # type: ignore[attr-defined]
    return app_client


async def get_json(client: httpx2.AsyncClient, url: str) -> Any:
    response = await client.get(url)
    assert response.status_code == 200, response.text
    return response.json()


async def get_html(client: httpx2.AsyncClient, url: str) -> str:
    response = await client.get(url, headers=HTML)
    assert response.status_code == 200, response.text
    assert "script-src 'self'" in response.headers["content-security-policy"]
    return response.text


async def _scenario_position(client: httpx2.AsyncClient, needle: str) -> int:
    run = await get_json(client, f"/runs/{BIG_RUN}.json?q={needle}")
    (scenario,) = run["scenarios"]
    return int(scenario["position"])


async def test_dashboard_trace_shows_the_failed_item_verdict_not_success(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, f"/traces/{CHAT_TRACE}.json")
    assert page["status"] == "success"  # the agent finished...
    assert page["verdict"] == "fail"  # ...but the item that ran it failed
    (verdict,) = page["verdicts"]
    assert (verdict["run_id"], verdict["scenario_name"], verdict["passed"]) == (
        VEVAL_RUN,
        ITEM_SCENARIO,
        False,
    )
    assert verdict["failures"] == ["max_cost: spent $0.000073 > $0.00005 " + XSS_SCRIPT]
    named = await get_json(client, f"/traces/{CHAT_TRACE}.json?run={VEVAL_RUN}")
    assert named["verdicts"] == page["verdicts"]
    stale = await get_json(client, f"/traces/{CHAT_TRACE}.json?run=no-such-run")
    assert stale["verdicts"] == page["verdicts"]  # a wrong ?run= falls back to the window
    orphan = await get_json(client, f"/traces/{ORPHAN_TRACE}.json")
    assert (orphan["verdict"], orphan["verdicts"]) == (None, [])

    html = await get_html(client, f"/traces/{CHAT_TRACE}")
    assert 'data-status="success"' not in html.split("</h1>")[0]  # no success badge on top
    assert "item failed" in html
    assert f'href="/runs/{VEVAL_RUN}"' in html
    assert 'href="/scenarios/refunds%2Fchat?suite="' in html  # its history, encoded
    run = await get_html(client, f"/runs/{VEVAL_RUN}")
    assert f'href="/traces/{CHAT_TRACE}?run={VEVAL_RUN}"' in run


async def test_dashboard_trace_waterfall_places_spans_on_one_time_axis(
    client: httpx2.AsyncClient,
) -> None:
    chart = (await get_json(client, f"/traces/{CHAT_TRACE}.json"))["waterfall"]
    assert chart["total_ms"] == 1000.0
    rows = {r["name"]: r for r in chart["rows"]}
    assert [r["name"] for r in chart["rows"]] == [
        "agent",
        "plan",
        "lookup_refund",
        "answer",
        "policy guard",
    ]
    assert [r["depth"] for r in chart["rows"]] == [0, 1, 1, 1, 1]
    assert (rows["lookup_refund"]["offset_ms"], rows["lookup_refund"]["duration_ms"]) == (
        310.0,
        100.0,
    )
    assert (rows["answer"]["left_pct"], rows["answer"]["width_pct"]) == (42.0, 48.0)
    assert rows["policy guard"]["status"] == "error"
    assert rows["policy guard"]["error"] == "PolicyError: blocked: " + XSS
    assert all(r["timed"] for r in chart["rows"])
    assert chart["ticks"] == [0.0, 250.0, 500.0, 750.0, 1000.0]

    untimed = (await get_json(client, f"/traces/{ORPHAN_TRACE}.json"))["waterfall"]
    (row,) = untimed["rows"]
    assert (row["timed"], row["offset_ms"], row["width_pct"]) == (False, 0.0, 40.0)

    html = await get_html(client, f"/traces/{CHAT_TRACE}")
    assert '<rect class="bar" x="42.0%" y="2" width="48.0%"' in html
    assert "style=" not in html  # geometry is SVG attributes: the CSP forbids inline styles


async def test_dashboard_trace_chat_view_reads_messages_tool_calls_and_totals(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, f"/traces/{CHAT_TRACE}.json")
    first, second = page["chats"]
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][1]["text"] == "Where is my refund? " + XSS
    (call,) = first["reply"][0]["tool_calls"]
    assert (call["call_id"], call["name"]) == ("call_1", "lookup_refund")
    assert XSS_SCRIPT in call["arguments"]
    assert first["ttft_ms"] == 85.5
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    assert second["messages"][3] == {
        "role": "tool",
        "text": '{"status": "approved"}',
        "tool_calls": [],
        "tool_call_id": "call_1",
    }
    assert second["reply"][0]["text"] == "Approved: " + XSS_SCRIPT
    assert second["raw_input"]["messages"][3]["role"] == "tool"  # raw JSON kept
    assert (page["llm_calls"], page["tokens_in"], page["tokens_out"]) == (2, 280, 58)
    assert page["first_token_ms"] == 90.5  # the plan call starts at 5 ms, first token 85.5 later
    assert page["cost_usd"] == pytest.approx(0.000073)

    html = await get_html(client, f"/traces/{CHAT_TRACE}")
    for money in ("$0.000073", "$0.000032", "$0.000041"):
        assert money in html
    assert "$0.0000<" not in html
    assert "first token 86 ms" in html
    assert XSS not in html and XSS_SCRIPT not in html
    assert "&lt;img src=x onerror=window.__xss=1&gt;" in html


async def test_dashboard_scenario_page_diffs_failed_comparisons(
    client: httpx2.AsyncClient,
) -> None:
    long_page = await get_json(
        client, f"/runs/{BIG_RUN}/scenarios/{await _scenario_position(client, 'long')}.json"
    )
    (check,) = long_page["checks"]
    changed = [(s["op"], s["text"]) for s in check["diff"]["segments"] if s["op"] != "equal"]
    assert changed[:4] == [
        ("delete", "Monday"),
        ("insert", "Tuesday"),
        ("delete", "card"),
        ("insert", "bank account"),
    ]
    assert ("elided", changed[4][1]) == changed[4]  # the long unchanged rest is folded
    assert "unchanged characters" in changed[4][1]

    json_page = await get_json(
        client, f"/runs/{BIG_RUN}/scenarios/{await _scenario_position(client, 'json')}.json"
    )
    (check,) = json_page["checks"]
    assert check["diff"]["form"] == "json"
    changed = [(s["op"], s["text"]) for s in check["diff"]["segments"] if s["op"] != "equal"]
    assert changed == [("delete", "approved"), ("insert", "pending")]

    html = await get_html(
        client, f"/runs/{BIG_RUN}/scenarios/{await _scenario_position(client, 'json')}"
    )
    assert "<del>approved</del>" in html and "<ins>pending</ins>" in html
    assert XSS not in html
    passing = await get_json(client, f"/runs/{BIG_RUN}/scenarios/0.json")
    assert [c["diff"] for c in passing["checks"]] == [None]


async def test_dashboard_scenario_page_shows_llm_spans_as_chat(client: httpx2.AsyncClient) -> None:
    position = await _scenario_position(client, "traced")
    page = await get_json(client, f"/runs/{BIG_RUN}/scenarios/{position}.json")
    (interaction,) = page["interactions"]
    (chat,) = interaction["chats"]
    assert [(m["role"], m["text"]) for m in chat["messages"]] == [("user", XSS)]
    assert [(m["role"], m["text"]) for m in chat["reply"]] == [("assistant", "hello " + XSS_SCRIPT)]
    assert [r["name"] for r in interaction["waterfall"]["rows"]] == ["reply"]
    html = await get_html(client, f"/runs/{BIG_RUN}/scenarios/{position}")
    assert 'class="chat"' in html and XSS not in html and XSS_SCRIPT not in html


async def test_dashboard_big_run_puts_failures_first_with_kinds_and_search(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, f"/runs/{BIG_RUN}.json")
    statuses = [s["status"] for s in page["scenarios"]]
    assert len(statuses) == BIG_SCENARIOS
    assert statuses == sorted(statuses, key=["fail", "error", "skip", "pass"].index)
    assert page["status_counts"] == {"pass": 277, "fail": 17, "error": 6}
    kinds = {k["check_kind"]: (k["total"], k["failed"], k["errored"]) for k in page["check_kinds"]}
    assert kinds == {"string_matching": (292, 15, 0), "fn": (6, 0, 6), "equals": (2, 2, 0)}
    assert page["check_kinds"][0]["check_kind"] == "string_matching"  # most failing first
    found = await get_json(client, f"/runs/{BIG_RUN}.json?q=BROKEN")
    assert [s["scenario_name"] for s in found["scenarios"]][:2] == [
        "case 025 broken check",
        "case 075 broken check",
    ]
    assert {s["status"] for s in found["scenarios"]} == {"error"}
    assert found["search"] == "BROKEN"
    none = await get_json(client, f"/runs/{BIG_RUN}.json?q=nothing-like-this")
    assert none["scenarios"] == []

    html = await get_html(client, f"/runs/{BIG_RUN}")
    assert '<details class="fold" id="passing">' in html  # passes folded, closed
    assert "277 passing scenarios" in html
    assert html.index("case 003") < html.index("case 000")  # a failure before the passes
    assert XSS not in html
    items = await get_json(client, f"/runs/{VEVAL_RUN}.json?q=REFUND")
    assert len(items["items"]) == 1


async def test_dashboard_overview_filters_by_suite_branch_and_dates(
    client: httpx2.AsyncClient,
) -> None:
    everything = await get_json(client, "/index.json")
    assert [r["run_id"] for r in everything["runs"]] == [BIG_RUN, VEVAL_RUN, MAIN_RUN]
    assert everything["suites"] == [BIG_SUITE, ITEM_SCENARIO]
    assert everything["branches"] == ["feature/x", "main"]
    main = await get_json(client, "/index.json?branch=main")
    assert [r["run_id"] for r in main["runs"]] == [MAIN_RUN]
    assert main["filters"]["branch"] == "main"
    suite = await get_json(client, f"/index.json?suite={BIG_SUITE}")
    assert [r["run_id"] for r in suite["runs"]] == [BIG_RUN, MAIN_RUN]
    day = await get_json(client, "/index.json?since=2026-11-20&until=2026-11-20")
    assert [r["run_id"] for r in day["runs"]] == [BIG_RUN, VEVAL_RUN]
    before = await get_json(client, "/index.json?until=2026-11-19")
    assert [r["run_id"] for r in before["runs"]] == [MAIN_RUN]
    empty = await get_json(client, "/index.json?suite=&branch=&since=&until=")
    assert len(empty["runs"]) == 3  # an empty field is no filter

    bad = await client.get("/index.json?since=20/11/2026")
    assert bad.status_code == 422
    assert bad.json()["error"]["message"] == ("since='20/11/2026' is not a date: use YYYY-MM-DD")
    html = await get_html(client, "/?branch=main&since=2026-11-01&until=2026-11-30")
    assert '<option value="main" selected>' in html
    assert 'value="2026-11-30"' in html  # the inclusive end day shown back as typed


async def test_dashboard_suite_page_has_its_own_trend_in_money_and_percent(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, "/suites/big%20suite.json")
    assert page["suite_name"] == BIG_SUITE
    assert [r["run_id"] for r in page["runs"]] == [BIG_RUN, MAIN_RUN]
    chart = page["pass_rate_chart"]
    assert (chart["kind"], chart["y_unit"]) == ("line", "percent")
    assert chart["labels"] == ["2026-11-18 10:00", "2026-11-20 11:00"]
    (series,) = chart["series"]
    assert series["values"] == [83.33, 92.33]  # 25 of 30, then 277 of 300
    assert page["pass_rate"] == pytest.approx((25 + 277) / 330)
    assert page["cost_chart"]["y_unit"] == "usd"
    html = await get_html(client, "/suites/big%20suite")
    assert 'id="suite-pass-rate-chart"' in html
    other = await get_json(client, "/suites/refunds%2Fchat.json")
    assert [r["run_id"] for r in other["runs"]] == [VEVAL_RUN]
    first = await get_json(client, "/suites/big%20suite.json?limit=1")
    assert [r["run_id"] for r in first["runs"]] == [BIG_RUN]
    rest = await get_json(client, f"/suites/big%20suite.json?limit=1&cursor={first['next_cursor']}")
    assert ([r["run_id"] for r in rest["runs"]], rest["next_cursor"]) == ([MAIN_RUN], None)
    history = await get_json(client, "/scenarios/case%20000.json")
    assert history["chart"]["y_unit"] == "percent"


def test_dashboard_chart_labels_are_distinct_when_runs_share_a_minute() -> None:
    at = datetime(2026, 11, 20, 10, 0, 5, tzinfo=UTC)
    times = [at, at + timedelta(seconds=20), at + timedelta(seconds=20), at + timedelta(hours=1)]
    assert _distinct_labels(times) == [
        "2026-11-20 10:00:05",
        "2026-11-20 10:00:25",
        "2026-11-20 10:00:25 #2",
        "2026-11-20 11:00",
    ]


async def test_dashboard_settings_scopes_are_labelled_checkboxes(
    client: httpx2.AsyncClient,
) -> None:
    html = await get_html(client, "/settings")
    for scope in ("ingest", "read", "admin"):
        assert f'id="scope-{scope}"' in html
    assert "What the key may do (scopes)" in html
    assert "upload runs and traces" in html
