"""A calibrated judge's verdict shows its badge on the dashboard's scenario page (and its
JSON twin), as in the console, JUnit and the run log."""

from __future__ import annotations

import httpx2
import pytest
from tests.server.conftest import run_log_json

from scenarist import Scenario, StringMatching, Suite
from scenarist.formats.runlog import run_log_from_suite_result
from scenarist.model.results import CheckResult

pytestmark = pytest.mark.anyio

BADGE = {"kappa": 0.5833, "agreement": 0.8, "n": 10, "date": "2026-12-05"}


async def test_the_scenario_page_shows_the_calibration_badge(
    app_client: httpx2.AsyncClient,
) -> None:
    suite = Suite(name="judged")
    suite.append(Scenario("polite").interact("q", outputs="yes").check(StringMatching(keyword="y")))
    result = suite.run_sync()
    result.results[0].steps[0].results[0] = CheckResult.success(
        "Polite and short.", details={"calibration": BADGE}
    )
    log = run_log_from_suite_result(result, run_id="run-calibrated")
    posted = await app_client.post("/api/runs", json=run_log_json(log))
    assert posted.status_code in (200, 201), posted.text
    twin = (await app_client.get("/runs/run-calibrated/scenarios/0.json")).json()
    shown = "calibrated κ 0.58, agreement 80.0%, n=10, 2026-12-05"
    assert twin["checks"][0]["calibration"] == shown
    page = await app_client.get("/runs/run-calibrated/scenarios/0", headers={"accept": "text/html"})
    assert '<span class="badge calibration"' in page.text and shown in page.text
