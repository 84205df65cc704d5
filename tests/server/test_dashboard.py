"""The dashboard's JSON twins on SQLite and PostgreSQL: what each page shows (counts, pass
rates, ordering, pagination), content negotiation, escaping in the HTML, the item forms
and their CSRF protection, and auth. The rendering itself is checked in a real browser
in ``tests/dashboard/``."""

from __future__ import annotations

import re
from typing import Any

import httpx2
import pytest
from tests.server.dashboard_data import (
    SUITE,
    TRACE_ID,
    VEVAL_SCENARIO,
    XSS_NAME,
    XSS_OUTPUT,
    seed,
)

from scenarist.server.dashboard._render import script_json

pytestmark = pytest.mark.anyio

JSON = {"accept": "application/json"}
HTML = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
SLASHED = "refund%20flow%2Fv2"


@pytest.fixture
async def client(app_client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    await seed(app_client.app.state.store)  # type: ignore[attr-defined]
    return app_client


async def get_json(client: httpx2.AsyncClient, url: str) -> Any:
    response = await client.get(url)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


async def test_dashboard_overview_lists_runs_newest_first_with_charts(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, "/index.json")
    assert [r["run_id"] for r in page["runs"]] == ["veval-1", "run-2", "run-1", "run-0"]
    assert page["openapi"] == "/openapi.json"  # the old landing keys stay
    chart = page["pass_rate_chart"]
    assert len(chart["labels"]) == 4
    series = {s["label"]: s["values"] for s in chart["series"]}
    assert series == {SUITE: [75.0, 50.0, 50.0, None], VEVAL_SCENARIO: [None, None, None, 50.0]}
    assert page["cost_chart"]["kind"] == "bar"


async def test_dashboard_overview_finds_broken_and_flaky_scenarios(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, "/index.json")
    assert [(b["scenario_name"], b["run_id"]) for b in page["broken"]] == [
        ("billing", "run-2"),
        ("greeting", "run-1"),
    ]
    assert [(f["scenario_name"], f["flips"], f["passed"]) for f in page["flaky"]] == [
        ("greeting", 2, 2)
    ]


async def test_dashboard_overview_pages_with_cursors(client: httpx2.AsyncClient) -> None:
    first = await get_json(client, "/index.json?limit=3")
    assert [r["run_id"] for r in first["runs"]] == ["veval-1", "run-2", "run-1"]
    assert first["next_cursor"]
    second = await get_json(client, f"/index.json?limit=3&cursor={first['next_cursor']}")
    assert [r["run_id"] for r in second["runs"]] == ["run-0"]
    assert second["next_cursor"] is None
    bad = await client.get("/index.json?cursor=nonsense")
    assert bad.status_code == 422


async def test_dashboard_root_negotiates_html_for_browsers_json_otherwise(
    client: httpx2.AsyncClient,
) -> None:
    assert (await client.get("/")).json()["name"] == "scenarist"
    html = await client.get("/", headers=HTML)
    assert html.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in html.headers["content-security-policy"]
    forced = await client.get("/runs/run-2?format=json", headers=HTML)
    assert forced.json()["run"]["run_id"] == "run-2"
    suffixed = await client.get("/runs/run-2.json", headers=HTML)
    assert suffixed.json()["run"]["run_id"] == "run-2"
    htmx = await client.get("/runs/run-2", headers={"hx-request": "true", "accept": "*/*"})
    assert htmx.headers["content-type"].startswith("text/html")


async def test_dashboard_run_page_counts_filters_and_links_previous_run(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, "/runs/run-2.json")
    assert page["run"]["passed_count"] == 2
    assert page["run"]["failed_count"] == 2
    assert page["summary"].startswith("4 scenarios: 2 passed, 2 failed")
    assert page["status_counts"] == {"pass": 2, "fail": 2}
    # failures and errors first, each group in run order
    assert [s["scenario_name"] for s in page["scenarios"]] == [
        "billing",
        XSS_NAME,
        "refund",
        "greeting",
    ]
    assert page["previous_run_id"] == "run-1"
    tags = {t["tag"]: (t["total"], t["passed"], t["pass_rate"]) for t in page["tags"]}
    assert tags == {"team:support": (4, 2, 0.5), "smoke": (3, 2, 2 / 3), "slow": (1, 0, 0.0)}

    failing = await get_json(client, "/runs/run-2.json?status=fail")
    assert [s["scenario_name"] for s in failing["scenarios"]] == ["billing", XSS_NAME]
    assert failing["scenarios"][0]["checks"][0]["message"]
    slow = await get_json(client, "/runs/run-2.json?tag=slow&status=")
    assert [s["scenario_name"] for s in slow["scenarios"]] == ["billing"]
    oldest = await get_json(client, "/runs/run-0.json")
    assert oldest["previous_run_id"] is None


async def test_dashboard_veval_run_page_lists_items_with_trace_ids(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, "/runs/veval-1.json")
    assert [(i["name"], i["passed"], i["trace_id"]) for i in page["items"]] == [
        ("bad", False, TRACE_ID),  # failed items first
        ("ok", True, None),
    ]


async def test_dashboard_unknown_pages_are_404(client: httpx2.AsyncClient) -> None:
    for url in ("/runs/nope.json", "/runs/run-2/scenarios/99.json", "/traces/nope.json"):
        response = await client.get(url)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert (await client.get("/runs/run-2/scenarios/x", headers=HTML)).status_code == 404


async def test_dashboard_scenario_in_run_shows_checks_and_interactions(
    client: httpx2.AsyncClient,
) -> None:
    page = await get_json(client, "/runs/run-2/scenarios/3.json")
    assert page["scenario"]["scenario_name"] == XSS_NAME
    assert page["scenario"]["status"] == "fail"
    assert page["interactions"][0]["outputs"] == XSS_OUTPUT
    assert page["scenario"]["checks"][0]["status"] == "fail"


async def test_dashboard_trace_page_has_the_span_tree(client: httpx2.AsyncClient) -> None:
    page = await get_json(client, f"/traces/{TRACE_ID}.json")
    assert page["span_count"] == 2
    (root,) = page["spans"]
    assert (root["name"], root["kind"], root["tokens_in"], root["model"]) == (
        "answer",
        "llm",
        12,
        "gpt-4o-mini",
    )
    assert [c["name"] for c in root["children"]] == ["search"]
    assert (page["tokens_in"], page["tokens_out"], page["cost_usd"]) == (12, 5, 0.0004)
    assert page["output"] == XSS_OUTPUT


async def test_dashboard_history_rolls_pass_rate_and_pages(client: httpx2.AsyncClient) -> None:
    page = await get_json(client, "/scenarios/greeting.json")
    assert [p["run_id"] for p in page["points"]] == ["run-2", "run-1", "run-0"]
    assert page["pass_rate"] == pytest.approx(2 / 3)
    assert page["flips"] == 2
    assert page["chart"]["series"][0]["values"] == [100.0, 50.0, 66.67]
    assert page["last_failures"][0]["run_id"] == "run-1"

    first = await get_json(client, "/scenarios/greeting.json?limit=2")
    assert [p["run_id"] for p in first["points"]] == ["run-2", "run-1"]
    rest = await get_json(client, f"/scenarios/greeting.json?limit=2&cursor={first['next_cursor']}")
    assert [p["run_id"] for p in rest["points"]] == ["run-0"]
    assert rest["next_cursor"] is None

    slashed = await get_json(client, f"/scenarios/{SLASHED}.json")
    assert (slashed["scenario_name"], slashed["item_count"]) == (VEVAL_SCENARIO, 2)


async def test_dashboard_html_escapes_untrusted_text(client: httpx2.AsyncClient) -> None:
    run = (await client.get("/runs/run-2", headers=HTML)).text
    assert XSS_NAME not in run
    assert "&lt;img src=x onerror=window.__xss=1&gt;" in run
    trace = (await client.get(f"/traces/{TRACE_ID}", headers=HTML)).text
    assert XSS_OUTPUT not in trace
    overview = (await client.get("/", headers=HTML)).text
    blocks = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', overview, re.S)
    assert len(blocks) == 1  # the pass-rate chart (no run here has a cost to chart)
    assert all("<" not in block for block in blocks)


def test_dashboard_script_json_cannot_close_its_block() -> None:
    text = script_json({"x": "</script><!-- \u2028 & >"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert text == '{"x":"\\u003c/script\\u003e\\u003c!-- \\u2028 \\u0026 \\u003e"}'


async def _form_token(client: httpx2.AsyncClient) -> str:
    page = await client.get(f"/items/{SLASHED}", headers=HTML)
    assert page.status_code == 200
    match = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
    assert match and "scenarist_csrf" in client.cookies
    return match.group(1)


async def test_dashboard_item_forms_create_and_delete_with_csrf(
    client: httpx2.AsyncClient,
) -> None:
    token = await _form_token(client)
    created = await client.post(
        f"/items/{SLASHED}",
        data={
            "csrf_token": token,
            "action": "create",
            "name": "new",
            "input": "hi",
            "tags": "a, b",
        },
    )
    assert created.status_code == 303
    assert created.headers["location"] == f"/items/{SLASHED}"
    items = (await get_json(client, f"/items/{SLASHED}.json"))["items"]
    assert [(i["name"], i["input"], i["tags"]) for i in items][-1] == ("new", "hi", ["a", "b"])

    missing = await client.post(
        f"/items/{SLASHED}", data={"csrf_token": token, "action": "create", "name": "x"}
    )
    assert missing.status_code == 422
    assert "trace_id or input" in missing.text

    deleted = await client.post(
        f"/items/{SLASHED}",
        data={"csrf_token": token, "action": "delete", "item_id": items[-1]["item_id"]},
    )
    assert deleted.status_code == 303
    assert len((await get_json(client, f"/items/{SLASHED}.json"))["items"]) == 2


async def test_dashboard_item_forms_refuse_forged_posts(client: httpx2.AsyncClient) -> None:
    token = await _form_token(client)
    form = {"action": "create", "name": "evil", "input": "x"}
    no_token = await client.post(f"/items/{SLASHED}", data=form)
    wrong = await client.post(f"/items/{SLASHED}", data={**form, "csrf_token": "0" * 64})
    other_origin = await client.post(
        f"/items/{SLASHED}",
        data={**form, "csrf_token": token},
        headers={"origin": "http://evil.example"},
    )
    client.cookies.clear()
    no_cookie = await client.post(f"/items/{SLASHED}", data={**form, "csrf_token": token})
    for response in (no_token, wrong, no_cookie):
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "csrf_failed"
    assert other_origin.status_code == 403  # refused before any form is read
    assert other_origin.json()["error"]["code"] == "cross_origin"
    assert len((await get_json(client, f"/items/{SLASHED}.json"))["items"]) == 2


async def test_dashboard_pages_need_the_read_scope_once_keys_exist(
    client: httpx2.AsyncClient,
) -> None:
    store = client.app.state.store  # type: ignore[attr-defined]
    _, read_key = await store.create_api_key(["read"])
    _, ingest_key = await store.create_api_key(["ingest"])
    to_login = await client.get("/", headers=HTML)  # a browser is sent to the login form
    assert (to_login.status_code, to_login.headers["location"]) == (303, "/login?next=%2F")
    assert (await client.get("/runs/run-2.json")).status_code == 401
    ok = await client.get("/runs/run-2.json", headers={"authorization": f"Bearer {read_key}"})
    assert ok.status_code == 200
    denied = await client.get("/index.json", headers={"authorization": f"Bearer {ingest_key}"})
    assert denied.status_code == 403


def test_dashboard_assets_are_package_data_with_licences() -> None:
    from importlib.resources import files

    package = files("scenarist.server")
    for name in ("base.html", "overview.html", "run.html", "trace.html", "items.html"):
        assert (package / "templates" / name).is_file()
    vendor = package / "static" / "vendor"
    for name in ("htmx-2.0.11.min.js", "htmx-2.0.11.LICENSE", "chart-4.6.1.umd.min.js"):
        assert (vendor / name).is_file()
    assert "MIT" in (vendor / "chart-4.6.1.LICENSE.md").read_text()


def test_dashboard_templates_never_mark_text_safe() -> None:
    from importlib.resources import files

    for template in (files("scenarist.server") / "templates").iterdir():
        text = template.read_text()
        assert "|safe" not in text.replace(" ", ""), template.name
        assert "<script>" not in text, template.name  # no inline scripts (CSP)
        assert "http://" not in text and "https://" not in text, template.name  # no CDN
