"""A run the budget stopped, through the store and the dashboard's run page (asserted on
its JSON twin, on SQLite and PostgreSQL): the stopped scenarios are ``error`` for
giskard-style readers and carry ``outcome: "budget"``; the page shows the budget."""

from __future__ import annotations

import uuid
from typing import Any

import httpx2
import pytest
from tests.server.conftest import run_log_json

from scenarist import Scenario, Suite
from scenarist.checks import Equals
from scenarist.engine.budget import Budget, Estimate
from scenarist.formats.runlog import run_log_from_suite_result

pytestmark = pytest.mark.anyio


def _budget_run_log() -> Any:
    """Under a $0.50 budget, a scenario estimated at $0 runs and two at $1 do not."""
    scenarios = [
        Scenario(name)
        .interact("hello", lambda x: x)
        .check(Equals(expected_value="hello", target_key="trace.last.outputs"))
        for name in ("first", "second", "third")
    ]
    estimates = {"first": Estimate(0.0), "second": Estimate(1.0), "third": Estimate(1.0)}
    budget = Budget(0.5, estimates=estimates)
    result = Suite(name="paid", scenarios=scenarios).run_sync(budget=budget, verbose=False)
    return run_log_from_suite_result(result, run_id=uuid.uuid4().hex)


async def test_the_run_page_shows_budget_outcomes(app_client: httpx2.AsyncClient) -> None:
    log = _budget_run_log()
    posted = await app_client.post("/api/runs", json=run_log_json(log))
    assert posted.status_code in (200, 201), posted.text
    run_id = log.header.run_id
    response = await app_client.get(f"/runs/{run_id}.json", headers={"accept": "application/json"})
    assert response.status_code == 200, response.text
    page = response.json()
    rows = {s["scenario_name"]: s for s in page["scenarios"]}
    assert {n: (r["status"], r["outcome"]) for n, r in rows.items()} == {
        "first": ("pass", None),
        "second": ("error", "budget"),
        "third": ("error", "budget"),
    }
    assert page["budget"]["stopped"] == ["second", "third"]
    assert page["budget"]["limit_usd"] == 0.5
    assert page["budget"]["estimated_from"] == {"given": 3}
    html = (await app_client.get(f"/runs/{run_id}", headers={"accept": "text/html"})).text
    assert 'id="budget"' in html and "2 scenario(s) not started (BUDGET)" in html
    assert html.count('data-status="budget">BUDGET</span>') == 2
