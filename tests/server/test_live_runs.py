"""A run that arrives while it runs (issue 31, item 8): the header, then scenario records in
parts (``POST /api/runs/{id}/records``), then the footer; the run page says running, then
complete; a run whose client stopped stays readable. On SQLite and PostgreSQL, and
``scenarist run`` streaming to a real server."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.helpers.limits import HANG_S
from typer.testing import CliRunner

from scenarist.cli.app import app
from scenarist.store.sql.store import SqlStore

from .conftest import LiveServer, make_run_log

RUN_ID = "live-run-1"
HTML = {"accept": "text/html"}


def parts(run_id: str = RUN_ID) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """A real run log of four scenarios (three pass, one fails), as header, records, footer."""
    log = make_run_log(
        run_id, outcomes={"alpha": True, "beta": False, "gamma": True, "delta": True}
    ).model_dump(mode="json")
    return log["header"], log["scenarios"], log["footer"]


@pytest.mark.anyio
async def test_a_run_streamed_in_three_parts(app_client: httpx2.AsyncClient) -> None:
    header, records, footer = parts()
    started = await app_client.post("/api/runs", json={"header": header})
    assert started.status_code == 201
    page = (await app_client.get(f"/runs/{RUN_ID}.json")).json()
    assert page["state"] == "running" and page["run"]["total_count"] == 0

    first = await app_client.post(f"/api/runs/{RUN_ID}/records", json={"scenarios": records[:2]})
    assert first.status_code == 200, first.text
    assert first.json() == {"run_id": RUN_ID, "added": 2, "scenario_count": 2, "complete": False}
    page = (await app_client.get(f"/runs/{RUN_ID}.json")).json()
    assert page["state"] == "running"
    assert (page["run"]["passed_count"], page["run"]["failed_count"]) == (1, 1)
    assert "running" in page["summary"]
    html = (await app_client.get(f"/runs/{RUN_ID}", headers=HTML)).text
    assert 'id="live-poll"' in html and 'hx-trigger="every 2s"' in html
    assert 'data-state="running"' in html

    again = await app_client.post(f"/api/runs/{RUN_ID}/records", json={"scenarios": records[1:2]})
    assert again.status_code == 422 and "already holds scenario index 1" in again.text

    last = await app_client.post(
        f"/api/runs/{RUN_ID}/records", json={"scenarios": records[2:], "footer": footer}
    )
    assert last.json() == {"run_id": RUN_ID, "added": 2, "scenario_count": 4, "complete": True}
    page = (await app_client.get(f"/runs/{RUN_ID}.json")).json()
    assert page["state"] == "complete" and page["run"]["complete"] is True
    assert page["run"]["total_count"] == 4 and page["run"]["duration_ms"] == footer["duration_ms"]
    assert [s["scenario_name"] for s in page["scenarios"]] == ["beta", "alpha", "gamma", "delta"]
    html = (await app_client.get(f"/runs/{RUN_ID}", headers=HTML)).text
    assert 'id="live-poll"' not in html  # complete: no polling
    poll = await app_client.get(
        f"/runs/{RUN_ID}", headers={"hx-request": "true", "hx-target": "live-poll"}
    )
    assert poll.headers["hx-refresh"] == "true"  # the poll that sees the end reloads once

    closed = await app_client.post(f"/api/runs/{RUN_ID}/records", json={"scenarios": []})
    assert closed.status_code == 409 and closed.json()["error"]["code"] == "run_complete"


@pytest.mark.anyio
async def test_bad_parts_are_client_errors(app_client: httpx2.AsyncClient) -> None:
    header, records, _ = parts()
    unknown = await app_client.post("/api/runs/nope/records", json={"scenarios": records})
    assert unknown.status_code == 404 and "post its header first" in unknown.text
    await app_client.post("/api/runs", json={"header": header})
    url = f"/api/runs/{RUN_ID}/records"
    assert (await app_client.post(url, content=b"{")).status_code == 400
    assert (await app_client.post(url, json={"scenarios": [], "extra": 1})).status_code == 422
    assert (await app_client.post(url, json={"scenarios": [{"index": "x"}]})).status_code == 422
    assert (await app_client.post(url, json={"scenarios": "no"})).status_code == 422
    other = await app_client.post(
        url, json={"scenarios": records}, headers={"x-scenarist-project": "other"}
    )
    assert other.status_code == 404  # another project's run is a free id there
    run = (await app_client.get(f"/api/runs/{RUN_ID}")).json()
    assert run["total_count"] == 0 and run["complete"] is False


@pytest.mark.anyio
async def test_an_interrupted_run_stays_readable(
    app_client: httpx2.AsyncClient, database_url: str
) -> None:
    header, records, _ = parts()
    await app_client.post("/api/runs", json={"header": header})
    await app_client.post(f"/api/runs/{RUN_ID}/records", json={"scenarios": records[:2]})
    store = SqlStore(database_url)  # the client went away an hour ago
    from sqlalchemy import update

    from scenarist.store.sql.models import RunRow

    async with store._write() as connection:
        await connection.execute(
            update(RunRow)
            .where(RunRow.run_id == RUN_ID)
            .values(ingested_at=datetime.now(UTC) - timedelta(hours=1))
        )
    await store.close()
    page = (await app_client.get(f"/runs/{RUN_ID}.json")).json()
    assert page["state"] == "incomplete" and len(page["scenarios"]) == 2
    html = (await app_client.get(f"/runs/{RUN_ID}", headers=HTML)).text
    assert 'data-state="incomplete"' in html and "stopped sending results" in html
    assert 'id="live-poll"' not in html
    scenario = await app_client.get(f"/runs/{RUN_ID}/scenarios/1.json")
    assert scenario.status_code == 200 and scenario.json()["scenario"]["status"] == "fail"
    # the whole log sent later completes it
    full = make_run_log(
        RUN_ID, outcomes={"alpha": True, "beta": False, "gamma": True, "delta": True}
    ).model_dump(mode="json")
    full["header"] = header
    assert (await app_client.post("/api/runs", json=full)).json()["created"] is True
    assert (await app_client.get(f"/runs/{RUN_ID}.json")).json()["state"] == "complete"


WAITS_FOR_ITSELF = """
import time, httpx2, os
from scenarist import Equals, Scenario, Suite

def seen(inputs):
    # the run is on the server while it runs: this scenario waits to see the first one
    url = os.environ["LIVE_CHECK_URL"]
    for _ in range(600):
        runs = httpx2.get(url + "/api/runs").json()["items"]
        if any(not r["complete"] and r["total_count"] >= 1 for r in runs):
            return "seen"
        time.sleep(0.1)
    return "never seen"

suite = Suite(name="live", scenarios=[
    Scenario("first", target=lambda i: "ok").interact("q").check(Equals(expected_value="ok")),
    Scenario("second", target=seen).interact("q").check(Equals(expected_value="seen")),
])
"""


def test_scenarist_run_streams_to_the_server_while_it_runs(
    live_server: LiveServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = tmp_path / "live_suite.py"
    suite.write_text(WAITS_FOR_ITSELF)
    monkeypatch.setenv("SCENARIST_URL", live_server.url)
    monkeypatch.setenv("LIVE_CHECK_URL", live_server.url)
    result = CliRunner().invoke(app, ["run", str(suite)])
    assert result.exit_code == 0, result.output  # "second" saw the run mid-way
    (run,) = httpx2.get(f"{live_server.url}/api/runs").json()["items"]
    assert run["complete"] is True and run["total_count"] == 2


INTERRUPTS = """
import asyncio, os, signal
from scenarist import Equals, Scenario, Suite

async def interrupts(inputs):
    os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
    await asyncio.Event().wait()
    return "never"

suite = Suite(name="interrupted", scenarios=[
    Scenario("ok_1", target=lambda i: "good").interact("q").check(Equals(expected_value="good")),
    Scenario("ok_2", target=lambda i: "good").interact("q").check(Equals(expected_value="good")),
    Scenario("interrupts", target=interrupts).interact("q").check(Equals(expected_value="x")),
])
"""


def test_an_interrupted_scenarist_run_leaves_what_finished_on_the_server(
    live_server: LiveServer, tmp_path: Path
) -> None:
    (tmp_path / "interrupts.py").write_text(textwrap.dedent(INTERRUPTS), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCENARIST_")}
    env.update(SCENARIST_HOME=str(tmp_path / "home"), SCENARIST_URL=live_server.url)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "scenarist"), "run", "interrupts.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=HANG_S,
        check=False,
    )
    assert done.returncode == 130, done.stdout
    (run,) = httpx2.get(f"{live_server.url}/api/runs").json()["items"]
    assert run["complete"] is False and run["total_count"] == 2
    page = httpx2.get(f"{live_server.url}/runs/{run['run_id']}.json").json()
    assert [s["scenario_name"] for s in page["scenarios"]] == ["ok_1", "ok_2"]
