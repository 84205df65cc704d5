"""Values the database cannot hold are 422s, not 500s (found by schemathesis): numbers
beyond an integer column's range (64 bits on SQLite, 32 on PostgreSQL) and text with an
unpaired UTF-16 surrogate (valid JSON, not UTF-8). Nothing is stored."""

from __future__ import annotations

import json

import httpx2
import pytest
from tests.server.conftest import make_run_log, run_log_json
from tests.server.test_api import VEVAL_TRACE

pytestmark = pytest.mark.anyio


async def test_scenario_run_counts_beyond_the_column_are_422(
    app_client: httpx2.AsyncClient,
) -> None:
    body = {"passed": False, "pass_count": 0, "fail_count": 82717041899656211070976}
    response = await app_client.post("/v1/scenarios/s/runs", json=body)
    assert response.status_code == 422
    assert response.json()["error"]["fields"][0]["field"] == "fail_count"
    assert (await app_client.get("/api/runs")).json()["items"] == []


@pytest.mark.parametrize("tokens", [2**40, 2**70])
async def test_run_log_numbers_too_large_to_store_are_422(
    app_client: httpx2.AsyncClient, tokens: int
) -> None:
    log = run_log_json(make_run_log("huge"))
    log["footer"]["tokens_in"] = tokens
    response = await app_client.post("/api/runs", json=log)
    if response.status_code == 201:  # SQLite's integers are 64-bit: 2**40 fits
        assert tokens < 2**63 and app_client.app.state.store.dialect == "sqlite"  # type: ignore[attr-defined]
        return
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == "invalid_payload"
    assert (await app_client.get("/api/runs/huge")).status_code == 404


async def test_unpaired_surrogates_are_422(app_client: httpx2.AsyncClient) -> None:
    raw = json.dumps({**VEVAL_TRACE, "trace_id": "lone"})
    raw = raw.replace('"input": "', '"input": "\\udac7', 1)  # Any, not str: pydantic keeps it
    response = await app_client.post(
        "/v1/traces", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert "surrogate" in response.json()["error"]["message"]
    assert (await app_client.get("/v1/traces/lone")).status_code == 404
