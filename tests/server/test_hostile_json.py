"""Hostile JSON and URLs are 4xx naming the field, never 500, on SQLite and PostgreSQL:
nesting past the documented depth (JSON and JSON Lines), ``NaN``/``Infinity``, a
negative ``format_version``, lone surrogates, NUL in URL parameters and names. What the
library stores itself (a non-finite cost) is read back by every page."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx2
import pytest
from tests.server.conftest import make_run_log, run_log_json
from tests.server.test_api import VEVAL_TRACE

from scenarist._json_limits import MAX_DEPTH
from scenarist.model.record import TraceRecord
from scenarist.store.sql.store import SqlStore

pytestmark = pytest.mark.anyio

JSON = {"content-type": "application/json"}
NDJSON = {"content-type": "application/x-ndjson"}


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _error(response: httpx2.Response, status: int = 422) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error: dict[str, Any] = response.json()["error"]
    return error


def _lines(log: dict[str, Any]) -> list[dict[str, Any]]:
    header = {"record_type": "header", **log["header"]}
    scenarios = [{"record_type": "scenario", **s} for s in log["scenarios"]]
    return [header, *scenarios, {"record_type": "footer", **log["footer"]}]


async def _runs(client: httpx2.AsyncClient) -> list[str]:
    return [r["run_id"] for r in (await client.get("/api/runs")).json()["items"]]


async def test_deep_nesting_in_a_run_log_is_422_naming_where(
    app_client: httpx2.AsyncClient,
) -> None:
    log = run_log_json(make_run_log("deep"))
    raw = json.dumps(log).replace('"tags": []', f'"tags": {_nested(10_000)}', 1)
    error = _error(await app_client.post("/api/runs", content=raw, headers=JSON))
    assert f"nested deeper than {MAX_DEPTH} levels" in error["message"]
    lines = [json.dumps(record) for record in _lines(log)]
    lines[1] = lines[1].replace('"tags": []', f'"tags": {_nested(10_000)}', 1)
    error = _error(await app_client.post("/api/runs", content="\n".join(lines), headers=NDJSON))
    assert "line 2" in error["message"] and "nested deeper" in error["message"]
    assert error["fields"][0]["field"] == "line 2"
    lines[1] = lines[1].replace(_nested(10_000), _nested(300))  # parses, but too deep
    error = _error(await app_client.post("/api/runs", content="\n".join(lines), headers=NDJSON))
    assert error["fields"][0]["field"].startswith("scenarios.0.")
    assert error["fields"][0]["type"] == "too_deep"
    assert await _runs(app_client) == []


async def test_a_deep_trace_input_is_422_naming_the_field(app_client: httpx2.AsyncClient) -> None:
    for depth in (900, 10_000):
        raw = json.dumps({**VEVAL_TRACE, "trace_id": "deep"}).replace(
            '"input": "where is my refund?"', f'"input": {_nested(depth)}', 1
        )
        error = _error(await app_client.post("/v1/traces", content=raw, headers=JSON))
        assert "nested deeper" in error["message"], depth
        if depth == 900:
            assert error["fields"][0]["field"].startswith("input.0.0")
    ok = json.dumps({**VEVAL_TRACE, "trace_id": "ok", "input": json.loads(_nested(MAX_DEPTH - 1))})
    assert (await app_client.post("/v1/traces", content=ok, headers=JSON)).status_code == 201
    assert (await app_client.get("/v1/traces/deep")).status_code == 404
    for page in ("/traces/ok.json", "/traces/ok?format=html", "/v1/traces/ok"):
        assert (await app_client.get(page)).status_code == 200, page


# The cases of one test share its app (building an app and a database costs more than
# the requests): each case's failure names the case.


async def test_a_bad_format_version_is_422(app_client: httpx2.AsyncClient) -> None:
    for version in (-1, -1000, True, "2"):
        log = run_log_json(make_run_log("v"))
        log["header"]["format_version"] = version
        error = _error(await app_client.post("/api/runs", json=log))
        assert error["fields"][0]["field"] == "header.format_version", (version, error)
        assert repr(version) in error["message"], (version, error)
    assert await _runs(app_client) == []


async def test_non_finite_numbers_are_refused_at_ingest(app_client: httpx2.AsyncClient) -> None:
    for token in ("Infinity", "-Infinity", "NaN", "1e999"):
        await _refuses_non_finite(app_client, token)


async def _refuses_non_finite(app_client: httpx2.AsyncClient, token: str) -> None:
    log = run_log_json(make_run_log("inf"))
    raw = json.dumps(log).replace('"cost_usd": null', f'"cost_usd": {token}', 1)
    assert f'"cost_usd": {token}' in raw, token
    error = _error(await app_client.post("/api/runs", content=raw, headers=JSON))
    assert error["fields"][0]["field"].endswith("cost_usd"), token
    assert "not a JSON number" in error["message"], token
    lines = "\n".join(json.dumps(r) for r in _lines(log)).replace(
        '"cost_usd": null', f'"cost_usd": {token}', 1
    )
    error = _error(await app_client.post("/api/runs", content=lines, headers=NDJSON))
    assert error["fields"][0]["field"].endswith("cost_usd"), token
    trace = json.dumps({**VEVAL_TRACE, "trace_id": "inf"}).replace(
        '"cost_usd": 0.0004', f'"cost_usd": {token}', 1
    )
    error = _error(await app_client.post("/v1/traces", content=trace, headers=JSON))
    assert error["fields"][0]["field"] == "steps.0.cost_usd", token
    summary = f'{{"passed": true, "pass_count": 1, "fail_count": 0, "cost_usd": {token}}}'
    error = _error(await app_client.post("/v1/scenarios/s/runs", content=summary, headers=JSON))
    assert error["fields"][0]["field"] == "cost_usd", token
    assert await _runs(app_client) == [], token
    assert (await app_client.get("/v1/traces/inf")).status_code == 404, token


async def test_lone_surrogates_are_422_everywhere(app_client: httpx2.AsyncClient) -> None:
    log = run_log_json(make_run_log("lone"))
    raw = json.dumps(log).replace('"support"', '"supp\\udc00ort"', 1)
    error = _error(await app_client.post("/api/runs", content=raw, headers=JSON))
    assert "surrogate" in error["message"] and error["fields"][0]["field"] == "header.suite_name"
    key = json.dumps({**VEVAL_TRACE, "trace_id": "k", "metadata": {"\ud800": 1}})
    error = _error(await app_client.post("/v1/traces", content=key, headers=JSON))
    assert "surrogate" in error["message"]
    assert error["fields"][0]["field"] == "metadata.\\ud800"
    paired = json.dumps({**VEVAL_TRACE, "trace_id": "pair", "input": "\ud83d\ude00"})
    assert (await app_client.post("/v1/traces", content=paired, headers=JSON)).status_code == 201
    assert (await app_client.get("/v1/traces/pair")).json()["input"] == "\U0001f600"


READ_ENDPOINTS = [
    ("/api/runs/{x}", "run_id"),
    ("/api/runs/{x}/compare", "run_id"),
    ("/api/runs/r/compare?baseline={x}", "baseline"),
    ("/api/runs?name={x}", "name"),
    ("/api/scenarios/{x}/history", "name"),
    ("/api/traces?agent_name={x}", "agent_name"),
    ("/api/traces?status={x}", "status"),
    ("/v1/traces/{x}", "trace_id"),
    ("/v1/scenarios/{x}/items", "name"),
    ("/v1/scenarios/{x}/runs", "name"),
    ("/v1/snapshots/{x}", "name"),
    ("/runs/{x}", "run_id"),
    ("/runs/{x}/scenarios/0", "run_id"),
    ("/runs/{x}/compare", "run_id"),
    ("/traces/{x}", "trace_id"),
    ("/scenarios/{x}", "name"),
    ("/items/{x}", "name"),
]


async def test_nul_in_url_parameters_is_422_naming_the_parameter(
    app_client: httpx2.AsyncClient,
) -> None:
    for template, field in READ_ENDPOINTS:
        url = template.format(x="a%00b")
        answer = await app_client.get(url, headers={"Accept": "application/json"})
        assert answer.status_code == 422, (url, answer.text)
        error = answer.json()["error"]
        assert error["fields"][0]["field"].endswith(field), (url, error)
        assert "NUL" in error["message"], (url, error)


async def test_nul_in_names_sent_in_bodies_is_422(app_client: httpx2.AsyncClient) -> None:
    assert (await app_client.post("/v1/traces", json=VEVAL_TRACE)).status_code == 201
    trace_id = VEVAL_TRACE["trace_id"]
    for path, body in (
        ("/v1/snapshots", {"name": "snap\u0000shot", "trace_id": trace_id}),
        ("/v1/snapshots", {"name": "ok", "trace_id": "t\u0000"}),
        (f"/api/traces/{trace_id}/snapshot", {"name": "a\u0000"}),
        (f"/api/traces/{trace_id}/item", {"scenario_name": "s\u0000"}),
    ):
        error = _error(await app_client.post(path, json=body))
        assert "NUL" in error["message"], (path, error)
    assert (await app_client.get("/v1/snapshots")).json()["items"] == []


async def test_values_the_library_stored_itself_never_break_a_page(
    app_client: httpx2.AsyncClient,
) -> None:
    """The library writes to the database directly (no HTTP): a cost that came out as
    infinity is still a value every reader, page and API answer handles."""
    store: SqlStore = app_client.app.state.store  # type: ignore[attr-defined]
    await store.save_trace(TraceRecord(trace_id="lib-inf", cost_usd=math.inf, input="q"))
    log = make_run_log("lib-nan")
    log.scenarios[0].cost_usd = math.nan
    assert log.footer is not None
    log.footer.cost_usd = math.inf
    await store.ingest_run_log(log)
    for page in (
        "/v1/traces/lib-inf",
        "/traces/lib-inf.json",
        "/traces/lib-inf?format=html",
        "/api/traces",
        "/api/runs/lib-nan",
        "/runs/lib-nan.json",
        "/runs/lib-nan?format=html",
        "/runs/lib-nan/scenarios/0.json",
        "/index.json",
        "/?format=html",
        "/scenarios/refund.json",
    ):
        answer = await app_client.get(page)
        assert answer.status_code == 200, (page, answer.text[:300])


async def test_nul_in_free_text_and_step_ids_is_stored_as_sent(
    app_client: httpx2.AsyncClient,
) -> None:
    """Only ids and names that are looked up refuse NUL; text inside a document keeps it."""
    steps = [{**VEVAL_TRACE["steps"][0], "step_id": "s\u0000", "name": "n\u0000"}]
    trace = {**VEVAL_TRACE, "trace_id": "nul-text", "output": "a\u0000b", "steps": steps}
    assert (await app_client.post("/v1/traces", json=trace)).status_code == 201
    stored = (await app_client.get("/v1/traces/nul-text")).json()
    assert stored["output"] == "a\u0000b"
    assert stored["steps"][0]["name"] == "n\u0000"
    assert (await app_client.get("/traces/nul-text?format=html")).status_code == 200
