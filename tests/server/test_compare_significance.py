"""The stored comparison (API and dashboard compare page) tests each scenario's repeats:
regressed only when Fisher's exact test says so; the run and scenario pages carry the
repeats' statistics. Through the real app, on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from scenarist import Equals, Scenario, Suite
from scenarist.formats.runlog import run_log_from_suite_result
from scenarist.model.stats import fisher_less

pytestmark = pytest.mark.anyio

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _log(run_id: str, hour: int, patterns: dict[str, list[str]]) -> object:
    suite = Suite(name="sig", min_pass_rate=0.8)
    for name, pattern in patterns.items():
        answers = itertools.cycle(pattern)
        suite.append(
            Scenario(name)
            .interact("q", lambda inputs, a=answers: next(a))
            .check(Equals(expected_value="ok"))
        )
    result = suite.run_sync(repeat=20, verbose=False)
    result.started_at = T0 + timedelta(hours=hour)
    return run_log_from_suite_result(result, run_id=run_id)


async def test_compare_api_tests_the_repeats(app_client: httpx2.AsyncClient) -> None:
    store = app_client.app.state.store  # type: ignore[attr-defined]
    nine = ["ok"] * 9 + ["bad"]
    await store.ingest_run_log(_log("base", 0, {"dropped": nine, "noisy": nine, "same": ["ok"]}))
    current = {"dropped": ["ok", "bad"], "noisy": ["ok"] * 4 + ["bad"], "same": ["ok"]}
    await store.ingest_run_log(_log("now", 1, current))
    response = await app_client.get("/api/runs/now/compare?baseline=base")
    assert response.status_code == 200, response.text
    body = response.json()
    c = body["comparison"]
    (dropped,) = c["regressed"]
    assert (dropped["scenario_name"], dropped["baseline_passed"], dropped["passed"]) == (
        "dropped",
        18,
        10,
    )
    assert dropped["p_value"] == pytest.approx(fisher_less(20, 18, 20, 10))
    assert [d["scenario_name"] for d in c["changed_not_significant"]] == ["noisy"]
    assert body["has_regressions"] is True
    loose = (await app_client.get("/api/runs/now/compare?baseline=base&alpha=0.5")).json()
    assert len(loose["comparison"]["regressed"]) == 2
    bad = await app_client.get("/api/runs/now/compare?baseline=base&alpha=2")
    assert bad.status_code == 422  # a client's mistake, named
    assert "alpha" in bad.text
    page = await app_client.get("/runs/now/compare.json?baseline=base")
    assert page.status_code == 200
    assert "1 regressed, 1 changed, not significant" in page.json()["summary"]
    html = await app_client.get("/runs/now/compare?baseline=base", headers={"accept": "text/html"})
    assert 'id="regressed"' in html.text and "18/20" in html.text and "10/20" in html.text


async def test_run_and_scenario_pages_show_the_repeats(app_client: httpx2.AsyncClient) -> None:
    store = app_client.app.state.store  # type: ignore[attr-defined]
    nine = ["ok"] * 9 + ["bad"]
    await store.ingest_run_log(_log("r1", 0, {"coin": ["ok", "bad"], "nine": nine}))
    run = (await app_client.get("/runs/r1.json")).json()
    rows = {s["scenario_name"]: s for s in run["scenarios"]}
    assert (rows["coin"]["repeats_passed"], rows["coin"]["repeats_total"]) == (10, 20)
    assert rows["coin"]["rate_verdict"] == "fail"  # 50% against the suite's 80%
    assert rows["nine"]["rate_verdict"] == "inconclusive"  # 90%, CI 69.9%-97.2%
    assert rows["nine"]["repeat_interval"][0] == pytest.approx(0.699, abs=1e-3)
    html = (await app_client.get("/runs/r1", headers={"accept": "text/html"})).text
    assert 'data-rate-verdict="inconclusive"' in html and "18/20" in html
    history = (await app_client.get("/scenarios/coin.json")).json()
    (point,) = history["points"]
    assert (point["repeats_passed"], point["rate_verdict"]) == (10, "fail")
    page = (await app_client.get("/scenarios/coin", headers={"accept": "text/html"})).text
    assert 'data-rate-verdict="fail"' in page and "10/20" in page
