"""The dashboard's run page flags vacuous passes (from the run log's footer, no migration)
and shows judges' reasons for their passes, not only for failures."""

from __future__ import annotations

import httpx2
import pytest
from tests.judges.conftest import FakeProvider, verdict

from scenarist import Conformity, Scenario, StringMatching, Suite
from scenarist.formats.runlog import run_log_from_suite_result

pytestmark = pytest.mark.anyio

REASON = "The reply thanks the customer warmly."


@pytest.fixture
async def client(app_client: httpx2.AsyncClient) -> httpx2.AsyncClient:
    judge = FakeProvider(verdict(True, REASON), name="fake/judge")
    suite = Suite(
        name="judged",
        scenarios=[
            Scenario("empty"),
            Scenario("judged")
            .interact("hi", outputs="Thank you!")
            .check(Conformity(rule="Be warm.", judge=judge)),
            Scenario("plain").interact("hi", outputs="hi").check(StringMatching(keyword="hi")),
            Scenario("silent")
            .interact(inputs=(line for line in ()), outputs="o")  # an input generator: none
            .interact("hi", outputs="hi")
            .check(StringMatching(keyword="hi")),
        ],
    )
    result = await suite.run(verbose=False)
    log = run_log_from_suite_result(result, run_id="run-judged")
    await app_client.app.state.store.ingest_run_log(log)  # type: ignore[attr-defined]
    return app_client


async def test_the_run_page_flags_vacuous_passes(client: httpx2.AsyncClient) -> None:
    page = (await client.get("/runs/run-judged.json")).json()
    assert page["vacuous"] == [0, 3]
    assert page["status_counts"] == {"pass": 4}  # giskard's PASS is kept
    html = (await client.get("/runs/run-judged", headers={"accept": "text/html"})).text
    row = html.split('data-scenario="empty"', 1)[1].split("</tr>", 1)[0]
    assert ">vacuous</span>" in row
    other = html.split('data-scenario="plain"', 1)[1].split("</tr>", 1)[0]
    assert "vacuous" not in other
    one = (await client.get("/runs/run-judged/scenarios/0", headers={"accept": "text/html"})).text
    assert ">vacuous</span>" in one.split("</h1>", 1)[0]
    plain = (await client.get("/runs/run-judged/scenarios/2", headers={"accept": "text/html"})).text
    assert "vacuous" not in plain.split("</h1>", 1)[0]
    silent = await client.get("/runs/run-judged/scenarios/3", headers={"accept": "text/html"})
    heading = silent.text.split("</h1>", 1)[0]
    assert "of step 1 yielded no input" in heading and ">vacuous</span>" in heading


async def test_the_run_page_shows_a_judges_reason_for_a_pass(client: httpx2.AsyncClient) -> None:
    html = (await client.get("/runs/run-judged", headers={"accept": "text/html"})).text
    judged = html.split('data-scenario="judged"', 1)[1].split("</tr>", 1)[0]
    assert REASON in judged and "judge-reason" in judged
    plain = html.split('data-scenario="plain"', 1)[1].split("</tr>", 1)[0]
    assert "judge-reason" not in plain  # a deterministic check's message stays out
