"""Compare (``/api/runs/{id}/compare``, ``/runs/{id}/compare``, ``/compare``): the default
baseline follows the run's git branch (then its merge base, then main/master) and says why;
any two runs of the project can be compared; each changed scenario carries both outputs,
the failing checks' messages and the cost/duration/token deltas. Through the real app, on
SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from tests.server.compare_data import LONG_OUT, XSS_OUT, seed_branches, seed_desk

pytestmark = pytest.mark.anyio

HTML = {"accept": "text/html"}


async def _choice(client: httpx2.AsyncClient, run_id: str, query: str = "") -> dict[str, Any]:
    response = await client.get(f"/api/runs/{run_id}/compare{query}")
    assert response.status_code == 200, (run_id, response.text)
    body = response.json()
    return {"baseline": body["baseline"]["run_id"], **body["baseline_choice"]}


async def test_the_default_baseline_is_the_previous_run_on_the_same_branch(
    app_client: httpx2.AsyncClient,
) -> None:
    await seed_branches(app_client.app.state.store)  # type: ignore[attr-defined]
    cases = {
        "m2": ("m1", "same_branch", "previous run on main"),  # not f1 of feature/x
        "f2": ("f1", "same_branch", "previous run on feature/x"),
        "y1": ("m1", "merge_base", "no earlier run on feature/y: newest at its merge base "
                             + "c1" * 6),
        "z1": ("m2", "default_branch", "no earlier run on feature/z: newest on main"),
        "q1": ("l1", "default_branch", "no earlier run on feature/q: newest on master"),
        "s2": ("s1", "any_branch", "no earlier run on feature/b, its merge base or main/master: "
                             "previous run (on feature/a)"),
        "n2": ("n1", "no_branch", "previous run (this run records no git branch)"),
    }  # fmt: skip
    for run_id, (baseline, rule, reason) in cases.items():
        choice = await _choice(app_client, run_id)
        assert (choice["baseline"], choice["rule"], choice["reason"]) == (baseline, rule, reason)
    chosen = await _choice(app_client, "m2", "?baseline=f1")
    assert (chosen["baseline"], chosen["rule"]) == ("f1", "chosen")
    assert chosen["reason"] == "chosen baseline"
    first = await app_client.get("/api/runs/m1/compare")
    assert first.status_code == 404
    assert "no earlier run of suite 'shop'" in first.json()["error"]["message"]
    # the run page's link follows the same rule and says which run it is
    page = (await app_client.get("/runs/m2", headers=HTML)).text
    assert 'href="/runs/m2/compare?baseline=m1"' in page
    assert "compare with previous run on main" in page
    run_json = (await app_client.get("/runs/z1.json")).json()
    assert run_json["compare_baseline"]["run_id"] == "m2"
    html = (await app_client.get("/runs/y1/compare", headers=HTML)).text
    assert 'id="baseline-reason"' in html and "newest at its merge base c1c1c1c1c1c1" in html


async def test_any_two_runs_compare_and_bad_choices_are_4xx(app_client: httpx2.AsyncClient) -> None:
    store = app_client.app.state.store  # type: ignore[attr-defined]
    await seed_branches(store)
    await seed_desk(store)
    twin = (await app_client.get("/runs/z1/compare.json?baseline=f1")).json()
    picked = await app_client.get("/compare.json?run=z1&baseline=f1")
    assert picked.status_code == 200, picked.text
    assert picked.json() == twin
    assert (twin["run"]["run_id"], twin["baseline"]["run_id"]) == ("z1", "f1")
    typed = (await app_client.get("/compare.json?run=z1&baseline=m1&baseline_id=now")).json()
    assert typed["baseline"]["run_id"] == "now"  # a typed run id wins over the list
    default = await app_client.get("/compare?run=m2", headers={"accept": "application/json"})
    assert default.json()["baseline"]["run_id"] == "m1"
    html = (await app_client.get("/compare?run=z1&baseline=f1", headers=HTML)).text
    assert 'id="compare-pick"' in html and '<option value="f1" selected' in html
    # the suite's recent runs are offered on each side, newest first
    assert [r["run_id"] for r in twin["choices"]] == ["f2", "z1", "y1", "m2", "f1", "m1"]
    for url in (
        "/compare.json?run=nope",
        "/compare.json?run=z1&baseline=nope",
        "/compare.json?run=z1&baseline=elsewhere",  # another project's run
        "/runs/z1/compare.json?baseline=elsewhere",
        "/api/runs/z1/compare?baseline=elsewhere",
        "/api/runs/elsewhere/compare",
    ):
        response = await app_client.get(url)
        assert response.status_code == 404, url
        body = response.json()["error"]
        assert body["code"] == "not_found"
        assert "'elsewhere'" in body["message"] or "'nope'" in body["message"], url
    for url, field in (
        ("/compare.json", "run"),
        ("/compare.json?run=", "run"),
        ("/compare.json?run=z1&baseline=z1", "baseline"),
        ("/runs/z1/compare.json?baseline=z1", "baseline"),
        ("/api/runs/z1/compare?baseline=z1", "baseline"),
    ):
        response = await app_client.get(url)
        assert response.status_code == 422, (url, response.text)
        assert field in response.text, url
    missing_page = await app_client.get("/compare?run=z1&baseline=nope", headers=HTML)
    assert missing_page.status_code == 404 and "nope" in missing_page.text


def _by_name(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["scenario_name"]: r for r in rows}


async def test_changed_scenarios_carry_outputs_messages_and_deltas(
    app_client: httpx2.AsyncClient,
) -> None:
    await seed_desk(app_client.app.state.store)  # type: ignore[attr-defined]
    api = await app_client.get("/api/runs/now/compare")
    assert api.status_code == 200, api.text
    body = api.json()
    assert body["baseline"]["run_id"] == "base"  # not feat, the feature branch run between
    changed = _by_name(body["scenarios"])
    assert list(changed) == ["refund", "long", "fixme"]  # broken, then fixed
    refund = changed["refund"]
    assert (refund["bucket"], refund["before"], refund["after"]) == ("broken", "pass", "fail")
    assert refund["baseline_output"] == "Refund sent"
    assert refund["output"] == XSS_OUT
    assert refund["baseline_failures"] == []
    (failure,) = refund["failures"]
    assert failure["status"] == "fail" and failure["check_kind"] == "equals"
    assert "Refund sent" in failure["message"]
    deltas = refund["deltas"]
    assert deltas["cost_usd"]["before"] == pytest.approx(0.010)
    assert deltas["cost_usd"]["after"] == pytest.approx(0.015)
    assert deltas["cost_usd"]["change"] == pytest.approx(0.005)
    assert deltas["cost_usd"]["percent"] == pytest.approx(50.0)
    assert (deltas["duration_ms"]["change"], deltas["duration_ms"]["percent"]) == (500.0, 50.0)
    assert (deltas["tokens"]["before"], deltas["tokens"]["after"]) == (150, 300)
    assert deltas["tokens"]["percent"] == 100.0
    assert changed["long"]["output"] == LONG_OUT  # whole in JSON; the page cuts it
    fixme = changed["fixme"]
    assert fixme["bucket"] == "fixed" and fixme["failures"] == []
    assert "nope" in fixme["baseline_failures"][0]["message"]
    # unchanged scenarios: counted, with their deltas, and no document read for them
    (greet,) = body["unchanged"]
    assert greet["scenario_name"] == "greet" and greet["deltas"]["cost_usd"]["change"] == 0.0
    assert "output" not in greet
    assert body["comparison"]["unchanged_passing"] == 1
    totals = body["deltas"]
    assert totals["cost_usd"]["change"] == pytest.approx(0.005)
    # the page's JSON twin has the same fields; the page shows them
    page = (await app_client.get("/runs/now/compare.json")).json()
    assert {k: page[k] for k in body} == body
    html = (await app_client.get("/runs/now/compare", headers=HTML)).text
    assert XSS_OUT not in html and "&lt;b&gt;pending&lt;/b&gt;" in html
    assert 'id="unchanged"' in html and "1 unchanged" in html
    assert "+50.0%" in html and "previous run on main" in html


async def test_a_baseline_named_says_whether_it_is_the_default(
    app_client: httpx2.AsyncClient,
) -> None:
    await seed_desk(app_client.app.state.store)  # type: ignore[attr-defined]
    named = (await app_client.get("/api/runs/now/compare?baseline=base")).json()
    assert named["baseline_choice"]["reason"] == "previous run on main"  # the default, named
    body = (await app_client.get("/api/runs/now/compare?baseline=feat")).json()
    assert body["baseline_choice"]["rule"] == "chosen"
    assert [c["scenario_name"] for c in body["comparison"]["still_failing"]] == ["refund", "long"]
