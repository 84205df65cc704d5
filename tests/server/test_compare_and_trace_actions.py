"""Run comparison (``/api/runs/{id}/compare`` and the dashboard's compare page) and the
trace page's actions (make a trace-backed item, save a snapshot) through the API and the
CSRF-protected forms, on SQLite and PostgreSQL, over the dashboard's seeded store."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import httpx2
import pytest
from tests.server.dashboard_data import SUITE, TRACE_ID, VEVAL_SCENARIO, XSS_NAME, seed

from scenarist.model.comparison import ScenarioOutcome, compare_outcomes

pytestmark = pytest.mark.anyio

HTML = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
NEW_SCENARIO = "from prod/ünïcode"


@pytest.fixture
async def client(app_client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    await seed(app_client.app.state.store)  # type: ignore[attr-defined]
    return app_client


def names(changes: list[dict[str, Any]]) -> list[str]:
    return [c["scenario_name"] for c in changes]


async def test_compare_api_classifies_against_the_previous_run(client: httpx2.AsyncClient) -> None:
    response = await client.get("/api/runs/run-2/compare?baseline=previous")
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["run"]["run_id"], body["baseline"]["run_id"]) == ("run-2", "run-1")
    assert body["run"]["name"] == SUITE
    c = body["comparison"]
    assert names(c["fixed"]) == ["greeting"]
    assert c["fixed"][0] | {} == {"scenario_name": "greeting", "before": "fail", "after": "pass"}
    assert names(c["broken"]) == ["billing"]
    assert names(c["still_failing"]) == [XSS_NAME]
    assert (c["new"], c["removed"], c["skipped"], c["flaky_changes"]) == ([], [], [], [])
    assert c["unchanged_passing"] == 1
    assert (c["baseline_pass_rate"], c["pass_rate"]) == (0.5, 0.5)
    # billing broke on one run each side: a change, never a significant regression
    assert body["has_regressions"] is False
    assert names(c["changed_not_significant"]) == ["billing"]
    assert c["changed_not_significant"][0]["p_value"] == 0.5
    assert (c["regressed"], c["alpha"]) == ([], 0.05)
    default = await client.get("/api/runs/run-2/compare")  # baseline defaults to previous
    assert default.json() == body


async def test_compare_api_with_an_explicit_baseline_lists_new_and_removed(
    client: httpx2.AsyncClient,
) -> None:
    older = (await client.get("/api/runs/run-2/compare?baseline=run-0")).json()
    assert names(older["comparison"]["broken"]) == ["billing"]
    assert older["comparison"]["fixed"] == []
    assert older["comparison"]["baseline_pass_rate"] == 0.75
    other = (await client.get("/api/runs/run-2/compare?baseline=veval-1")).json()
    assert names(other["comparison"]["removed"]) == [VEVAL_SCENARIO]
    assert names(other["comparison"]["new"]) == ["refund", "greeting", "billing", XSS_NAME]


async def test_compare_api_missing_runs_are_404(client: httpx2.AsyncClient) -> None:
    for url in (
        "/api/runs/nope/compare",
        "/api/runs/run-2/compare?baseline=nope",
        "/api/runs/run-0/compare",  # the oldest run has no previous run
        "/api/runs/veval-1/compare?baseline=previous",
    ):
        response = await client.get(url)
        assert response.status_code == 404, url
        assert response.json()["error"]["code"] == "not_found"
    assert "no previous run" in (await client.get("/api/runs/run-0/compare")).text


def test_compare_outcomes_lists_flakiness_changes_and_skips() -> None:
    before = [
        ScenarioOutcome(scenario_name="a", status_text="pass"),
        ScenarioOutcome(scenario_name="b", status_text="pass"),
        ScenarioOutcome(scenario_name="c", status_text="error"),
    ]
    after = [
        ScenarioOutcome(scenario_name="a", status_text="pass", is_flaky=True),
        ScenarioOutcome(scenario_name="b", status_text="skip"),
        ScenarioOutcome(scenario_name="c", status_text="pass"),
    ]
    result = compare_outcomes(before, after)
    assert [c.scenario_name for c in result.flaky_changes] == ["a"]
    assert [c.scenario_name for c in result.skipped] == ["b"]
    assert [c.scenario_name for c in result.fixed] == ["c"]
    assert (result.baseline_pass_rate, result.pass_rate) == (2 / 3, 1.0)


async def test_compare_page_json_twins_and_html(client: httpx2.AsyncClient) -> None:
    api = (await client.get("/api/runs/run-2/compare")).json()
    for url, headers in (
        ("/runs/run-2/compare.json", {}),
        ("/runs/run-2/compare?format=json", HTML),
        ("/runs/run-2/compare?baseline=run-1", {"accept": "application/json"}),
    ):
        page = (await client.get(url, headers=headers)).json()
        assert {k: page[k] for k in api} == api, url
        assert page["summary"].startswith("1 fixed, 1 broken, 1 still failing, 0 new")
    html = await client.get("/runs/run-2/compare", headers=HTML)
    assert html.status_code == 200
    assert "content-security-policy" in html.headers
    assert XSS_NAME not in html.text  # escaped
    assert "&lt;img src=x" in html.text
    assert re.search(r'id="broken".*billing', html.text, re.S)
    run_page = await client.get("/runs/run-2", headers=HTML)
    assert 'href="/runs/run-2/compare?baseline=run-1"' in run_page.text
    assert "compare with previous run" in run_page.text
    missing = await client.get("/runs/run-0/compare", headers=HTML)
    assert missing.status_code == 404
    assert (await client.get("/runs/run-0/compare.json")).json()["error"]["code"] == "not_found"


async def test_trace_item_api_appends_a_trace_backed_item(client: httpx2.AsyncClient) -> None:
    response = await client.post(
        f"/api/traces/{TRACE_ID}/item",
        json={"scenario_name": NEW_SCENARIO, "name": "bad conversation"},
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["scenario_name"] == NEW_SCENARIO
    assert body["item"]["trace_id"] == TRACE_ID
    assert body["item"]["id"] == body["item_id"]
    listed = (await client.get(f"/v1/scenarios/{quote(NEW_SCENARIO, safe='')}/items")).json()
    assert [(i["id"], i["name"], i["trace_id"]) for i in listed["items"]] == [
        (body["item_id"], "bad conversation", TRACE_ID)
    ]
    unnamed = await client.post(f"/api/traces/{TRACE_ID}/item", json={"scenario_name": "x"})
    assert unnamed.status_code == 201
    assert unnamed.json()["item"]["name"] is None

    unknown = await client.post("/api/traces/nope/item", json={"scenario_name": "x"})
    assert unknown.status_code == 404
    for bad in ({}, {"scenario_name": ""}, {"scenario_name": "   "}, {"scenario_name": "a\x00b"}):
        refused = await client.post(f"/api/traces/{TRACE_ID}/item", json=bad)
        assert refused.status_code == 422, bad


async def test_trace_snapshot_api_saves_the_span_steps(client: httpx2.AsyncClient) -> None:
    response = await client.post(f"/api/traces/{TRACE_ID}/snapshot", json={"name": "golden"})
    assert response.status_code == 201, response.text
    assert response.json() == {"name": "golden", "trace_id": TRACE_ID, "step_count": 2}
    stored = (await client.get("/v1/snapshots/golden")).json()
    assert stored["trace_id"] == TRACE_ID
    assert [(s["name"], s["depth"]) for s in stored["steps"]] == [("answer", 0), ("search", 1)]
    again = await client.post(f"/api/traces/{TRACE_ID}/snapshot", json={"name": "golden"})
    assert again.status_code == 201
    listed = (await client.get("/v1/snapshots")).json()["items"]
    # saving again is a new version (the snapshot's created_at is part of it)
    assert [(s["name"], s["version"], s["trace_id"]) for s in listed] == [("golden", 2, TRACE_ID)]
    assert (await client.post("/api/traces/nope/snapshot", json={"name": "g"})).status_code == 404
    assert (await client.post(f"/api/traces/{TRACE_ID}/snapshot", json={})).status_code == 422


async def test_trace_actions_need_the_ingest_scope(client: httpx2.AsyncClient) -> None:
    store = client.app.state.store  # type: ignore[attr-defined]
    _, read_key = await store.create_api_key(["read"])
    auth = {"authorization": f"Bearer {read_key}"}
    for action, body in (("item", {"scenario_name": "x"}), ("snapshot", {"name": "x"})):
        denied = await client.post(f"/api/traces/{TRACE_ID}/{action}", json=body, headers=auth)
        assert denied.status_code == 403
        anonymous = await client.post(f"/api/traces/{TRACE_ID}/{action}", json=body)
        assert anonymous.status_code == 401
    assert (await client.get("/api/runs/run-2/compare", headers=auth)).status_code == 200


async def _trace_form_token(client: httpx2.AsyncClient) -> str:
    page = await client.get(f"/traces/{TRACE_ID}", headers=HTML)
    assert page.status_code == 200
    match = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
    assert match and "scenarist_csrf" in client.cookies
    return match.group(1)


async def test_trace_page_forms_make_an_item_and_a_snapshot(client: httpx2.AsyncClient) -> None:
    token = await _trace_form_token(client)
    created = await client.post(
        f"/traces/{TRACE_ID}/item",
        data={"csrf_token": token, "scenario_name": NEW_SCENARIO, "name": "from the page"},
    )
    assert created.status_code == 303
    assert created.headers["location"] == f"/items/{quote(NEW_SCENARIO, safe='')}"
    items = (await client.get(f"/items/{quote(NEW_SCENARIO, safe='')}.json")).json()["items"]
    assert [(i["name"], i["trace_id"]) for i in items] == [("from the page", TRACE_ID)]

    saved = await client.post(
        f"/traces/{TRACE_ID}/snapshot", data={"csrf_token": token, "name": "page snap"}
    )
    assert saved.status_code == 303
    location = saved.headers["location"]
    assert location == f"/traces/{TRACE_ID}?snapshot_saved=page%20snap"
    shown = await client.get(location, headers=HTML)
    assert re.search(r'id="snapshot-saved">Saved as snapshot <strong>page snap', shown.text)
    forged = await client.get(f"/traces/{TRACE_ID}?snapshot_saved=golden", headers=HTML)
    assert "snapshot-saved" not in forged.text  # no such snapshot of this trace
    assert (await client.get("/v1/snapshots/page%20snap")).json()["trace_id"] == TRACE_ID

    empty = await client.post(
        f"/traces/{TRACE_ID}/item", data={"csrf_token": token, "scenario_name": " "}
    )
    assert empty.status_code == 422
    assert "scenario name must not be empty" in empty.text
    gone = await client.post("/traces/nope/snapshot", data={"csrf_token": token, "name": "x"})
    assert gone.status_code == 404


async def test_trace_page_forms_refuse_forged_posts(client: httpx2.AsyncClient) -> None:
    token = await _trace_form_token(client)
    for action, form in (("item", {"scenario_name": "evil"}), ("snapshot", {"name": "evil"})):
        url = f"/traces/{TRACE_ID}/{action}"
        no_token = await client.post(url, data=form)
        wrong = await client.post(url, data={**form, "csrf_token": "0" * 64})
        other_origin = await client.post(
            url, data={**form, "csrf_token": token}, headers={"origin": "http://evil.example"}
        )
        for response in (no_token, wrong):
            assert response.status_code == 403
            assert response.json()["error"]["code"] == "csrf_failed"
        assert other_origin.status_code == 403  # refused before any form is read
        assert other_origin.json()["error"]["code"] == "cross_origin"
    assert (await client.get("/items/evil.json")).json()["items"] == []
    assert (await client.get("/v1/snapshots/evil")).status_code == 404
